"""Tests for course_lib.explore.plots: the figures, their descriptions (alt text) and captions."""

from __future__ import annotations

import base64
import html
import re
import subprocess
import sys
from pathlib import Path

import matplotlib
import numpy as np
import pytest

from course_lib import AttentionInputError, attention_weights, causal_mask, the_cat_sat
from course_lib.explore import plots
from course_lib.explore.plots import DescribedFigure, attention_heatmap

ROOT = Path(__file__).resolve().parents[2]

SEED_DESCRIPTION = (
    "A 3 by 3 heatmap of attention weights. Rows are the querying tokens the, cat, sat; "
    "columns are the attended tokens. Row values: the attends 0.40 to the, 0.20 to cat, "
    "0.40 to sat; cat attends 0.20, 0.40, 0.40; sat attends 0.25, 0.25, 0.50. Every row "
    "sums to 1; the strongest cell is sat attending to itself at 0.50."
)


@pytest.fixture
def cat_sat_weights():
    ex = the_cat_sat()
    return attention_weights(ex.Q, ex.K), ex.tokens


def cell_texts(fig: DescribedFigure) -> list[str]:
    return [t.get_text() for ax in fig.figure.axes for t in ax.texts]


def test_heatmap_description_is_the_seed_lessons(cat_sat_weights):
    w, tokens = cat_sat_weights
    fig = attention_heatmap(w, tokens)
    assert fig.description == SEED_DESCRIPTION


def test_heatmap_description_follows_the_data(cat_sat_weights):
    w, tokens = cat_sat_weights
    reordered = attention_heatmap(w[::-1, ::-1], tokens[::-1]).description
    assert "Rows are the querying tokens sat, cat, the" in reordered
    assert "sat attends 0.50 to sat, 0.25 to cat, 0.25 to the" in reordered
    w = w.copy()
    w[0] = [0.1, 0.7, 0.2]
    d = attention_heatmap(w, tokens).description
    assert "the attends 0.10 to the, 0.70 to cat, 0.20 to sat" in d
    assert d.endswith("the strongest cell is the attending to cat at 0.70.")


def test_heatmap_writes_each_value_in_its_cell_with_labels(cat_sat_weights):
    w, tokens = cat_sat_weights
    fig = attention_heatmap(w, tokens)
    assert cell_texts(fig) == [f"{x:.2f}" for x in w.round(2).ravel()]
    ax = fig.figure.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == list(tokens)
    assert [t.get_text() for t in ax.get_yticklabels()] == list(tokens)


def test_values_stay_legible_on_dark_and_light_cells():
    fig = attention_heatmap([[0.0, 1.0], [1.0, 0.0]], ["a", "b"])
    colours = {t.get_text(): t.get_color() for t in fig.figure.axes[0].texts}
    # magma is near black at 0 and pale yellow at 1
    assert colours["0.00"] == "white"
    assert colours["1.00"] == "black"


def test_every_weights_figure_uses_one_0_to_1_scale(cat_sat_weights):
    """Issue 30: 0.50 was the top of the scale in 01 and 06 (it looked like "all
    attention") and half of it in 07 and 09. Every weights figure and widget table now
    draws 0 … 1, whatever its largest weight."""
    from course_lib import real_model
    from course_lib.explore.plots import causal_mask_pair
    from course_lib.explore.render import heatmap_html

    w, tokens = cat_sat_weights
    ex = the_cat_sat()
    images = [attention_heatmap(w, tokens).figure.axes[0].images[0],
              *[ax.images[0] for ax in causal_mask_pair(ex.Q, ex.K, tokens).figure.axes
                if ax.images],
              *[ax.images[0] for ax in plots.head_maps(np.stack([w, w]), tokens).figure.axes
                if ax.images],
              real_model.head_heatmap(sentence=0, layer=0, head=0).figure.axes[0].images[0]]
    assert len(images) >= 5
    for image in images:
        assert image.get_clim() == (0.0, 1.0)
        assert image.get_cmap().name.startswith("magma")
    # a widget's HTML table: 0.50 is drawn in the middle of the scale, not at its top
    page = heatmap_html([[0.5, 0.5]], ["a"], ["a", "b"])
    assert heatmap_html([[0.5, 0.5]], ["a"], ["a", "b"], vmin=0.0, vmax=1.0) == page


def test_ties_and_non_normalised_rows_are_described():
    fig = attention_heatmap([[0.5, 0.5], [0.5, 0.5]], ["a", "b"])
    assert "4 cells" not in fig.description
    assert "tied at 0.50" in fig.description
    fig = attention_heatmap([[1.0, 2.0], [0.0, -1.0]], ["a", "b"], kind="scores")
    assert "heatmap of attention scores" in fig.description
    assert "a scores 1.00 against a, 2.00 against b" in fig.description
    assert "the strongest cell is a scored against b at 2.00" in fig.description.lower()
    assert "sums to 1" not in fig.description


def test_masked_heatmap_says_what_is_hidden():
    ex = the_cat_sat()
    m = causal_mask(3)
    fig = attention_heatmap(attention_weights(ex.Q, ex.K, mask=m), ex.tokens, mask=m)
    d = fig.description
    assert "the attends 1.00 to the, cat masked, sat masked" in d
    assert "3 cells above the diagonal are masked" in d
    assert cell_texts(fig).count("masked") == 3


def test_large_heatmap_summarises_instead_of_listing():
    x = np.random.default_rng(0).normal(size=(64, 8))
    fig = attention_heatmap(attention_weights(x, x))
    d = fig.description
    assert d.startswith("A 64 by 64 heatmap")
    assert "token 0, token 1, … token 63 (64 in all)" in d
    assert "Row values" not in d and "Values range from" in d
    assert cell_texts(fig) == []  # no 4096 numbers crammed into cells
    assert len(d) < 400


def test_repr_and_mimebundle_carry_the_description(cat_sat_weights):
    w, tokens = cat_sat_weights
    fig = attention_heatmap(w, tokens)
    assert repr(fig) == str(fig) == SEED_DESCRIPTION
    bundle = fig._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html"}
    assert bundle["text/plain"] == SEED_DESCRIPTION
    page = bundle["text/html"]
    alt = re.search(r'<img src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)" alt="([^"]*)"',
                    page)
    assert alt is not None
    assert html.unescape(alt.group(2)) == SEED_DESCRIPTION
    assert b"<svg" in base64.b64decode(alt.group(1))
    caption = re.search(r"<figcaption[^>]*>(.*)</figcaption>", page)
    assert caption is not None
    assert html.unescape(caption.group(1)) == (
        "Every row sums to 1; the strongest cell is sat attending to itself at 0.50.")


def all_figures() -> dict[str, DescribedFigure]:
    from course_lib.experiments.scaling import scaling_sweep

    ex = the_cat_sat()
    w = attention_weights(ex.Q, ex.K)
    return {
        "heatmap": attention_heatmap(w, ex.tokens),
        "scores heatmap": attention_heatmap(ex.Q @ ex.K.T, ex.tokens, kind="scores"),
        "score bars": plots.score_bars([1.0, 1.0, 2.0], ex.tokens, query="sat"),
        "weight bars": plots.weight_bars(w[2], ex.tokens, query="sat"),
        "budget bars": plots.budget_bars([0.71, 0.71, 1.41], ex.tokens, query="sat"),
        "histograms": plots.dot_product_histograms(512),
        "curves": plots.scaling_curves(scaling_sweep([2, 64, 4096])),
        "blend": plots.blend_triangle(w[2], ex.V, ex.tokens, query="sat"),
        "causal pair": plots.causal_mask_pair(ex.Q, ex.K, ex.tokens),
    }


def test_caption_is_a_one_line_takeaway_and_the_numbers_stay_in_the_alt_text():
    """A screen reader reads alt text and caption in turn: they must not be the same."""
    for name, fig in all_figures().items():
        page = fig.html()
        alt = html.unescape(re.search(r' alt="([^"]*)"', page).group(1))
        caption = html.unescape(re.search(r"<figcaption[^>]*>(.*)</figcaption>", page).group(1))
        assert alt == fig.description, name
        assert caption == fig.caption and caption != alt, name
        assert len(caption) <= 150 and len(caption) * 2 < len(alt), (name, caption)
        assert caption.count(". ") == 0 and caption.endswith("."), (name, caption)


def test_figures_are_sharp_vectors_of_a_modest_size():
    """SVG (sharp at any zoom, on HiDPI screens) no bigger than a 100-dpi PNG was."""
    for name, fig in all_figures().items():
        page = fig.html()
        assert "data:image/svg+xml;base64," in page and "image/png" not in page, name
        svg = fig.svg()
        assert b"<text" in svg, f"{name}: text should stay text in the SVG"
        assert len(page) < 75_000, f"{name}: {len(page)} bytes of HTML"
        assert svg == fig.svg(), f"{name}: the SVG must be reproducible"


def test_figures_are_saved_whole_and_nothing_lies_outside_them():
    """svg() saves the figure at its own size, drawn once (no crop to a tight box, which
    measured every label once more: 40-70% of a figure's time in the site's Pyodide); so
    every figure must fit inside its own size, labels and titles included."""
    from course_lib import tiny_gpt
    from course_lib.experiments.training import train
    from course_lib.explore import tiny_gpt_figures

    figures = all_figures()
    figures["training curves"] = plots.training_curves(
        [train(8, scale=s, steps=20) for s in (True, False)], window=10)
    loaded = tiny_gpt.load_model()
    figures["tiny_gpt curve"] = tiny_gpt_figures.training_curve(loaded)
    figures["head maps"] = tiny_gpt_figures.head_maps(loaded.model, tiny_gpt.make_batch(1, seed=6))
    for name, fig in figures.items():
        svg = fig.svg().decode()
        width, height = (float(re.search(rf'<svg[^>]* {side}="([0-9.]+)pt"', svg).group(1))
                         for side in ("width", "height"))
        inches = fig.figure.get_size_inches()
        assert (width, height) == pytest.approx(tuple(72 * inches), abs=0.01), name
        box = fig.figure.get_tightbbox()
        assert box.x0 >= 0 and box.y0 >= 0, f"{name}: {box} starts outside the figure"
        assert box.x1 <= inches[0] and box.y1 <= inches[1], f"{name}: {box} ends outside"


def test_sanitize_pattern_leaves_only_the_description(cat_sat_weights):
    w, tokens = cat_sat_weights
    lines = plots.NBVAL_SANITIZE.splitlines()
    regex = lines[1].removeprefix("regex: ")
    replace = lines[2].removeprefix("replace: ")
    page = re.sub(regex, replace, attention_heatmap(w, tokens).html())
    assert "data:image/svg+xml;base64,FIGURE\"" in page
    assert len(page) < 2 * len(html.escape(SEED_DESCRIPTION)) + 500
    other = re.sub(regex, replace, attention_heatmap(w.T, tokens).html())
    assert other != page  # a changed figure still shows as a changed output


def test_png_is_reproducible_across_processes(cat_sat_weights):
    w, tokens = cat_sat_weights
    code = (
        "from course_lib import attention_weights, the_cat_sat\n"
        "from course_lib.explore.plots import attention_heatmap\n"
        "import sys, hashlib\n"
        "ex = the_cat_sat()\n"
        "png = attention_heatmap(attention_weights(ex.Q, ex.K), ex.tokens).png()\n"
        "sys.stdout.write(hashlib.sha256(png).hexdigest())\n"
    )
    import hashlib

    here = hashlib.sha256(attention_heatmap(w, tokens).png()).hexdigest()
    there = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert here == there
    assert b"Matplotlib" not in attention_heatmap(w, tokens).png()


def test_import_changes_no_global_state_and_registers_no_pyplot_figure(cat_sat_weights):
    code = (
        "import matplotlib, numpy as np\n"
        "before = dict(matplotlib.rcParams); state = np.random.get_state()[1].copy()\n"
        "import course_lib.explore.plots as p, course_lib.explore.widgets\n"
        "import course_lib.experiments.scaling\n"
        "from course_lib import the_cat_sat, attention_weights\n"
        "ex = the_cat_sat(); p.attention_heatmap(attention_weights(ex.Q, ex.K), ex.tokens)\n"
        "import matplotlib.pyplot as plt\n"
        "assert dict(matplotlib.rcParams) == before, 'rcParams changed'\n"
        "assert (np.random.get_state()[1] == state).all(), 'global seed touched'\n"
        "assert plt.get_fignums() == [], plt.get_fignums()\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    assert matplotlib.get_backend()  # this process is untouched too


@pytest.mark.parametrize(
    ("bad", "kwargs", "message"),
    [
        ([1.0, 0.0], {}, r"must be a non-empty 2-D array, shape \(n_q, n_k\) \(got shape \(2,\)\)"),
        ([[np.nan, 1.0]], {}, r"weights must hold finite numbers \(got nan at index \(0, 0\)\)"),
        ([[0.5, 0.5]], {"tokens": ["a", "b"]}, r"tokens must name each of the 1 rows/col"),
        ([[0.5, 0.5]], {"mask": [[True]]}, r"mask must have the weights' shape \(1, 2\) \(got"),
    ],
)
def test_bad_input_gets_a_clear_error(bad, kwargs, message):
    with pytest.raises(AttentionInputError, match=message):
        attention_heatmap(bad, **kwargs)


# --------------------------------------------------------------------------------------
# the other figures
# --------------------------------------------------------------------------------------


def bar_heights(fig: DescribedFigure, axis: int = 0) -> list[float]:
    return [round(p.get_height(), 6) for p in fig.figure.axes[axis].patches]


def test_score_and_weight_bars_draw_and_describe_the_row():
    fig = plots.score_bars([1.0, -0.5, 2.0], ["the", "cat", "sat"], query="sat")
    assert bar_heights(fig) == [1.0, -0.5, 2.0]
    assert fig.description == (
        "sat's scores: 1.00 against the, -0.50 against cat, 2.00 against sat. "
        "The largest is sat at 2.00."
    )
    fig = plots.weight_bars([0.4, 0.2, 0.4], ["the", "cat", "sat"], query="the")
    assert bar_heights(fig) == [0.4, 0.2, 0.4]
    assert fig.description.endswith("They sum to 1.00; the largest, tied at 0.40, are the, sat.")
    assert cell_texts(fig) == ["0.40", "0.20", "0.40"]


def test_budget_bars_show_softmax_of_the_scores_at_a_temperature():
    from course_lib import softmax

    fig = plots.budget_bars([1.0, 1.0, 2.0], ["the", "cat", "sat"], query="sat",
                            temperature=2 ** 0.5)
    assert bar_heights(fig, 0) == [1.0, 1.0, 2.0]
    np.testing.assert_allclose(bar_heights(fig, 1), softmax([1.0, 1.0, 2.0],
                                                            temperature=2 ** 0.5), atol=1e-6)
    assert "into weights 0.25, 0.25, 0.50 at temperature 1.41421" in fig.description


def test_dot_product_histograms_same_samples_scaled_and_not():
    fig = plots.dot_product_histograms(256)
    counts = [sum(p.get_height() for p in ax.patches) for ax in fig.figure.axes]
    assert counts == [256 * 16, 256 * 16]
    # one x-axis for both: the scaled scores are a spike 16 times narrower than the others
    left, right = (ax.get_xlim() for ax in fig.figure.axes)
    assert left == right
    widths = [ax.patches[-1].get_x() + ax.patches[-1].get_width() - ax.patches[0].get_x()
              for ax in fig.figure.axes]
    assert widths[0] / widths[1] == pytest.approx(16, rel=0.1)
    assert fig.caption.startswith("Unscaled, q·k spreads 16")
    assert "Unscaled: 4096 scores with standard deviation 16" in fig.description
    assert "Scaled by 1/sqrt(256) = 1/16: 4096 scores with standard deviation 1" in (
        fig.description)
    # the scores only: softmax is not drawn, so its weights are not described (lesson 03
    # shows these histograms before it introduces softmax)
    assert "weight" not in fig.description
    # a Generator passed in is used (and advanced); the global seed is not
    gen = np.random.default_rng(3)
    a = plots.dot_product_histograms(8, rng=gen).description
    b = plots.dot_product_histograms(8, rng=gen).description
    assert a != b


def test_scaling_curves_plot_the_sweep():
    from course_lib.experiments.scaling import scaling_sweep

    sweep = scaling_sweep([2, 64, 4096])
    fig = plots.scaling_curves(sweep)
    first = fig.figure.axes[0].lines
    assert list(first[0].get_ydata()) == [s.median_max_weight for s in sweep["unscaled"]]
    assert list(first[1].get_ydata()) == [s.median_max_weight for s in sweep["scaled"]]
    assert "Median max weight: unscaled 0.28, 0.91, 1.00; scaled 0.21, 0.22, 0.22." in (
        fig.description)
    assert "Softmax-Jacobian size |dw/ds|: unscaled" in fig.description
    assert "so these two lines are derivatives by different variables" in fig.description
    assert "Query gradient |dw/dq|: unscaled 0.42, 1.1, 5.8e-08; scaled" in fig.description
    fourth = fig.figure.axes[3].lines
    assert list(fourth[0].get_ydata()) == [
        s.median_query_gradient_norm for s in sweep["unscaled"]]
    # the description reads the comparison off the numbers, in both directions
    assert fig.description.endswith("is larger unscaled than scaled at d_k = 2, 64; smaller at "
                                "d_k = 4096 (unscaled, down to 5.8e-08 at d_k = 4096).")
    for ax in fig.figure.axes:  # the d_k ticks sit where the data is, and only there
        assert list(ax.get_xticks()) == [2, 64, 4096]
        assert [t.get_text() for t in ax.get_xticklabels()] == ["2", "64", "4096"]
        assert list(ax.xaxis.get_minorticklocs()) == []
    with pytest.raises(AttentionInputError, match="sweep must be the dict returned by"):
        plots.scaling_curves([])


def test_blend_triangle_places_the_output_inside():
    ex = the_cat_sat()
    fig = plots.blend_triangle([0.25, 0.25, 0.5], ex.V, ex.tokens, query="sat")
    star = [c for c in fig.figure.axes[0].collections if c.get_offsets().shape == (1, 2)][-1]
    np.testing.assert_allclose(star.get_offsets()[0], [1.25, 1.5])
    assert "= [1.25, 1.50], a point inside the triangle of the values" in fig.description
    odd = plots.blend_triangle([1.5, -0.5, 0.0], ex.V, ex.tokens)
    assert "[1.50, -1.00], a point OUTSIDE the values' convex hull" in odd.description
    assert "some are negative, so this is not a weighted average" in odd.description
    with pytest.raises(AttentionInputError, match=r"shape \(3, 2\) \(got shape \(3, 3\)\)"):
        plots.blend_triangle([0.2, 0.3, 0.5], np.ones((3, 3)))


def test_causal_mask_pair_before_and_after():
    ex = the_cat_sat()
    fig = plots.causal_mask_pair(ex.Q, ex.K, ex.tokens)
    before, after = fig.figure.axes[:2]  # then the two colour bars
    assert [t.get_text() for t in before.texts][:3] == ["0.40", "0.20", "0.40"]
    assert [t.get_text() for t in after.texts][:3] == ["1.00", "masked", "masked"]
    d = fig.description
    assert d.startswith("Two 3 by 3 heatmaps of attention weights, before and after a causal")
    assert "Before: Rows are the querying tokens" in d
    assert "After: Rows are the querying tokens the, cat, sat; columns are the attended " in d
    assert "cat attends 0.33, 0.67, sat masked" in d
    with pytest.raises(AttentionInputError, match="needs one sequence"):
        plots.causal_mask_pair(np.ones((2, 2)), np.ones((3, 2)))


def test_no_lesson_setup_cell_imports_matplotlib() -> None:
    """matplotlib comes with a lesson's first figure (plots._figure), not with its setup cell
    (the first code cell, which a student waits for before anything shows)."""
    import json

    setups = []
    for lesson in sorted((ROOT / "notebooks").glob("*.ipynb")):
        code = [c for c in json.loads(lesson.read_text())["cells"] if c["cell_type"] == "code"]
        if code:
            setups.append("".join(code[0]["source"]))
    probe = "\n".join([*setups, "import sys",
                       "print(sorted(m for m in sys.modules if m.split('.')[0] == 'matplotlib'))"])
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True, cwd=ROOT, timeout=300).stdout
    assert len(setups) > 10 and out.strip() == "[]", out


def test_training_curves_describe_every_run_from_its_numbers():
    from course_lib.experiments.training import train

    runs = [train(d, scale=s, steps=40, seed=0) for d in (4, 8) for s in (True, False)]
    fig = plots.training_curves(runs, window=10)
    text = str(fig)
    for run in runs:
        label = "scaled" if run.scale else "unscaled"
        for attr in ("accuracy", "entropy", "stuck", "score_move"):
            first, last = getattr(run, attr)[:10].mean(), getattr(run, attr)[-10:].mean()
            assert f"{label} {first:.2f} -> {last:.2f}" in text
        assert f"d_k = {run.d_k}: accuracy" in text
        assert f"d_k = {run.d_k} {label} {run.final_accuracy:.2f}" in fig.caption
    assert "log 8 = 2.08 nats" in text
    with pytest.raises(AttentionInputError, match="non-empty list of TrainingRun"):
        plots.training_curves([])
    with pytest.raises(AttentionInputError, match="same number of steps"):
        plots.training_curves([runs[0], train(4, steps=50)], window=10)
    with pytest.raises(AttentionInputError, match="share one task, loss and optimiser"):
        plots.training_curves([runs[0], train(4, steps=40, loss="cross_entropy")], window=10)
