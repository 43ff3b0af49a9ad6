"""What the lessons say must be true: facts a teacher found wrong or misleading (issue 13).

Each test reads the stored lessons (text and outputs), so a lesson or a library sentence
that brings a fixed mistake back fails here.
"""

from __future__ import annotations

import functools
import itertools
import re
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import lesson_index  # noqa: E402  (scripts/lesson_index.py: the notebooks, by their metadata)

NOTEBOOKS = ROOT / "notebooks"
INDEX = lesson_index.read_index(NOTEBOOKS)
LESSONS = [n.path for n in INDEX]  # every notebook: a fact must hold wherever it is written
SELF_STUDY = lesson_index.the_one(NOTEBOOKS, kind=lesson_index.CHECKPOINT).path


def text_of(path: Path) -> str:
    """Every cell's source and every text output of a stored lesson."""
    parts = []
    for cell in nbformat.read(path, as_version=4).cells:
        parts.append(cell.source)
        for out in cell.get("outputs", []):
            parts.append(out.get("text", ""))
            parts.append(out.get("data", {}).get("text/plain", ""))
    return "\n".join(parts)


@pytest.mark.parametrize("path", LESSONS, ids=[p.stem for p in LESSONS])
def test_a_sum_written_out_adds_up(path: Path) -> None:
    """0.25·[1,0] + 0.25·[0,2] + 0.50·[2,2] is [1.25, 1.50], never [1.26, 1.50]."""
    for m in re.finditer(r"((?:\d\.\d\d·\[-?\d\.\d\d, -?\d\.\d\d\](?: \+ )?)+) = "
                         r"\[(-?\d\.\d\d), (-?\d\.\d\d)\]", text_of(path)):
        terms = re.findall(r"(\d\.\d\d)·\[(-?\d\.\d\d), (-?\d\.\d\d)\]", m.group(1))
        x = sum(float(w) * float(a) for w, a, _ in terms)
        y = sum(float(w) * float(b) for w, _, b in terms)
        assert (f"{x:.2f}", f"{y:.2f}") == (m.group(2), m.group(3)), m.group(0)


def test_the_blend_sums_are_checked_somewhere() -> None:
    """The test above must find a blend's sum written out (lesson 05's second row)."""
    text = text_of(NOTEBOOKS / "05_blend.ipynb")
    assert "0.10·[1.00, 0.00] + 0.40·[0.00, 2.00] + 0.50·[2.00, 2.00] = [1.10, 1.80]" in text


def test_02_says_the_diagonal_is_highest_only_because_k_is_q() -> None:
    text = text_of(NOTEBOOKS / "02_scores.ipynb")
    assert "($K = Q$)" in text and "not a law of attention" in text


def test_04_says_why_softmax_and_its_budget_uses_the_scaled_scores() -> None:
    text = text_of(NOTEBOOKS / "04_softmax.ipynb")
    assert "### Why softmax, and not something simpler?" in text
    assert "argmax, cat +0.1: [0. 0. 1.]" in text  # the argmax does not move
    assert "Softmax turns barked's scaled scores 0.50, 2.00, 1.00" in text
    assert "0.21 to the" not in text  # the raw scores' weights, once called attention's


def test_07_gives_the_training_reason_and_shows_renormalising_agrees() -> None:
    nb = nbformat.read(NOTEBOOKS / "07_causal_masking.ipynb", as_version=4)
    text = text_of(NOTEBOOKS / "07_causal_masking.ipynb")
    assert "predict\nthe next token at every position at once" in text
    [cell] = [c for c in nb.cells if c.source.startswith("renormalised = ")]
    assert cell.outputs[0]["data"]["text/plain"] == "True"


def test_03_names_weights_as_weights() -> None:
    from course_lib.explore.widgets import scaling_explorer

    assert "Histogram of each row's largest weight: 256 weights with" in (
        scaling_explorer().description)


# ------------------------------------------------------------------ issue 30: content errors

def outputs_of(path: Path) -> str:
    """Every text output of a stored lesson."""
    return "\n".join(out.get("text", "") + out.get("data", {}).get("text/plain", "")
                     for cell in nbformat.read(path, as_version=4).cells
                     for out in cell.get("outputs", []))


def markdown_of(path: Path) -> str:
    return "\n".join(c.source for c in nbformat.read(path, as_version=4).cells
                     if c.cell_type == "markdown")


def sentences(text: str) -> list[str]:
    return [" ".join(s.split()) for s in re.split(r"(?<=[.:;!?])\s+|\n\n|\n- ", text)]


def lesson(prefix: str) -> Path:
    return next(p for p in LESSONS if p.name.startswith(prefix))


def test_10_bag_of_words_only_without_a_mask() -> None:
    """Issue 30, error 1: with a causal mask, 'sat cat the' is not 'the cat sat' reordered."""
    from course_lib import attention, causal_mask, order, the_cat_sat

    ex = the_cat_sat()
    new_order = [2, 1, 0]
    (reordered,) = order.permute_rows(new_order, attention(ex.Q, ex.K, ex.V)[0])
    masked, _ = attention(*order.permute_rows(new_order, ex.Q, ex.K, ex.V),
                          mask=causal_mask(3))
    assert not np.allclose(masked, reordered)  # the claim the lesson must not make
    path = lesson("10_")
    assert str(masked.round(2).tolist()) in outputs_of(path)  # and the lesson shows it
    for s in sentences(markdown_of(path)):
        if "bag of words" in s or "every input and every order" in s:
            assert "unmasked" in s or "without a mask" in s.lower(), s
    assert "a causal mask already carries order" in " ".join(markdown_of(path).split())


def test_09_says_what_more_heads_cost() -> None:
    """Issue 30, error 4: same parameters and QKᵀ multiply-adds, h tables, h softmaxes,
    scale 1/sqrt(d_model/h), each computed by course_lib."""
    from course_lib import heads

    ex = heads.heads_example()
    n, d_model = ex.X.shape
    path = lesson("09_")
    shown = outputs_of(path)
    for h in (1, 2, 4):
        _, w = heads.multi_head_attention(ex.X, ex.W_Q, ex.W_K, ex.W_V, ex.W_O, h=h)
        assert w.shape == (h, n, n)
        d_head = d_model // h
        assert (f"h = {h}: QKᵀ multiply-adds {h} × {n}² × {d_head} = {n * n * d_model}, "
                f"weights stored {w.size} ({h} × {n}²), softmaxes over {h * n} rows, "
                f"scale 1/√{d_head}") in shown
    text = " ".join(markdown_of(path).split())
    assert "cost no more than one big head" not in text
    assert "runs its own softmax" in text and r"\sqrt{d_\text{model}/h}" in text


def test_04_shifts_the_row_it_computed() -> None:
    """Issue 30, error 5: the "only differences matter" demo ran on the loops' last row; it
    shifts the row whose softmax section 1 computed step by step."""
    from course_lib import softmax

    row = np.array([0.5, 2.0, 1.0])
    shown = outputs_of(lesson("04_"))
    assert "array([0.14, 0.63, 0.23])" in shown  # section 1's weights of that row
    for shift in (0.0, 10.0, -100.0):
        assert f"shift {shift:+7.1f}: {softmax(row + shift).round(4)}" in shown


# "length" is the Euclidean norm (02, 08); the number of entries d_k, d_v is a dimension.
_LENGTH_AS_DIMENSION = re.compile(
    r"(?:of|same|vector|each|one query) length\W{0,3}(?:\$?d_[kv]|\d)|"
    r"length of (?:each|one) (?:query|key)|keys? of length|values of length|"
    r"square root of the vector length", re.IGNORECASE)


@pytest.mark.parametrize("path", [n.path for n in lesson_index.select(INDEX, kind="lesson")
                                  if n.path.name != "03_scaling.ipynb"],
                         ids=lambda p: p.stem)
def test_d_k_is_a_dimension_not_a_length(path: Path) -> None:
    """Issue 30, error 6 (lessons 03 and 14 are checked with their own issue)."""
    assert not _LENGTH_AS_DIMENSION.findall(text_of(path))


def test_checks_call_d_k_a_dimension() -> None:
    from course_lib import checks

    for module in sorted(Path(checks.__file__).parent.glob("*.py")):
        assert not _LENGTH_AS_DIMENSION.findall(module.read_text()), module.name
        assert "d_k is the length" not in module.read_text(), module.name


def test_08_says_where_x_comes_from_and_that_there_is_no_bias() -> None:
    """Issue 30, error 7: X is the embeddings only in layer 1; Q = XW_Q has no bias here."""
    text = " ".join(markdown_of(lesson("08_")).split())
    assert "Only in layer 1 is $X$ the embeddings." in text
    assert "previous block's output" in text
    assert "$Q = XW_Q + b_Q$" in text and "lesson 11 has them" in text


def test_10_says_its_positions_touch_queries_and_keys_only() -> None:
    """Issue 30, error 8: the toy adds positions to Q and K, not to the values."""
    from course_lib import attention, order, the_cat_sat

    ex = the_cat_sat()
    words = ["sat", "cat"]
    queries, weights, out = order.attention_in_order(words, positions=True)
    rows = [ex.tokens.index(w) for w in words]
    assert np.allclose(out, weights @ ex.V[rows])  # the values carry no position
    assert np.allclose(out, attention(queries, queries, ex.V[rows])[0])
    text = " ".join(markdown_of(lesson("10_")).split())
    assert "adds $p_t$ to the queries and keys only; the values stay as they are" in text
    assert "queries, keys **and values** all carry the place" in text
    assert "rotary positions (RoPE)" in text


def test_11_hedges_the_no_op_reading_with_the_measured_sep_head() -> None:
    """Issue 30, error 10: Clark et al. argued the no-op reading mainly for [SEP]."""
    from course_lib import real_model

    shown = outputs_of(lesson("11_"))
    for pattern in real_model.PATTERNS:
        layer_no, head, weight = real_model.strongest_heads(pattern, top=1)[0]
        assert (f"{pattern:>14}: layer {layer_no}, head {head}: {weight:.2f} of a word's "
                "weight") in shown
    text = " ".join(markdown_of(lesson("11_")).split())
    [clark] = [" ".join(p.split()) for p in markdown_of(lesson("11_")).split("\n\n")
               if "Clark et al." in p]
    assert "mainly for heads that attend to `[SEP]`" in clark and "may be" in clark
    assert "0.17" not in text and "0.18" not in text  # numbers come from the table


def test_11_summarises_the_heads_explorer_in_code() -> None:
    """Issue 34 item 3: `heads_widget.set(...)` printed all 144 weights as one paragraph."""
    from course_lib import real_model

    nb = nbformat.read(lesson("11_"), as_version=4)
    [cell] = [c for c in nb.cells if c.cell_type == "code" and "heads_widget.set(" in c.source]
    shown = "".join(o.get("text", "") + o.get("data", {}).get("text/plain", "")
                    for o in cell.outputs)
    lines = shown.splitlines()
    assert len(lines) <= 16 and max(map(len, lines)) <= 130, shown
    layer = real_model.load_model_attention().layer(sentence=1, layer=5)
    w, tokens = layer.probabilities[11], list(layer.tokens)
    it = w[tokens.index("it")]
    top2 = np.argsort(-it)[:2]
    assert (f"'it'        '{tokens[top2[0]]}' {it[top2[0]]:.2f}, "
            f"'{tokens[top2[1]]}' {it[top2[1]]:.2f}") in lines


def test_a_k_not_q_example_stands_beside_the_seeds_from_lesson_02() -> None:
    """Issue 30: with K = Q only, students read "sat attends most to itself" as a law."""
    from course_lib import projections, scores, the_cat_sat, the_cat_sat_own_keys
    from course_lib.explore import describe, plots

    own, seed = the_cat_sat_own_keys(), the_cat_sat()
    emb = projections.embedded_example()
    np.testing.assert_array_equal(own.K, emb.X @ emb.W_K)  # one source: lesson 08's keys
    np.testing.assert_array_equal(own.Q, seed.Q)
    np.testing.assert_array_equal(own.V, seed.V)
    table = scores(own.Q, own.K)
    assert not np.array_equal(table, table.T)
    assert own.tokens[int(np.argmax(table[2]))] == "cat"  # sat, not itself
    path = lesson("02_")
    shown = outputs_of(path)
    assert plots.attention_heatmap(table, own.tokens, kind="scores").description in shown
    assert describe.asymmetry(table, own.tokens) in shown
    cells = nbformat.read(path, as_version=4).cells
    [ask] = [i for i, c in enumerate(cells) if "predict" in c.metadata.get("tags", [])]
    assert "the_cat_sat_own_keys()" in cells[ask + 1].source  # the guess comes before the run


def test_the_side_example_has_its_places_and_is_not_repeated() -> None:
    """Issue 44: the keys of their own recurred in 02 and 04-08. In part 1 they stand beside
    the main example where it is introduced (02) and where it is worked by hand (06); lesson
    08 (part 2) shows where they come from."""
    using = {n.name for n in lesson_index.lessons(NOTEBOOKS, part=1)
             if "the_cat_sat_own_keys()" in "\n".join(
                 c.source for c in nbformat.read(n.path, as_version=4).cells
                 if c.cell_type == "code")}
    assert using == {"scores", "worked_example"}, using


def test_06_shows_the_k_not_q_example_beside_the_seeds() -> None:
    """The worked example's weights, with keys of their own beside (issue 30)."""
    from course_lib import attention_weights, the_cat_sat, the_cat_sat_own_keys
    from course_lib.explore import plots

    own, seed = the_cat_sat_own_keys(), the_cat_sat()
    w_seed, w_own = attention_weights(seed.Q, seed.K), attention_weights(own.Q, own.K)
    # what 06 says of the seed: every token gives itself at least as much as any other
    assert all(w_seed[i, i] >= w_seed[i].max() - 1e-12 for i in range(3))
    # and of the second example: 'the' evenly, 'cat' and 'sat' most to 'cat'
    np.testing.assert_allclose(w_own[0], 1 / 3)
    assert [own.tokens[int(np.argmax(r))] for r in w_own[1:]] == ["cat", "cat"]
    assert plots.attention_heatmap(w_own, own.tokens).description in outputs_of(lesson("06_"))
    cells = nbformat.read(lesson("06_"), as_version=4).cells
    [i] = [k for k, c in enumerate(cells) if "predict" in c.metadata.get("tags", [])
           and "their own" in cells[k - 1].source + c.source]
    assert "the_cat_sat_own_keys()" in cells[i + 1].source  # a guess right before the run


# ------------------------------------------------------------------ lesson 03 (issue 31)


def test_03_claims_nothing_about_learning_that_it_does_not_measure() -> None:
    """Lesson 03 measures saturation and gradients, not training: no claim about learning."""
    text = text_of(NOTEBOOKS / "03_scaling.ipynb")
    assert "could hardly learn" not in text
    assert "gradient vanishes" not in text and "gradient → 0" not in text
    assert "frozen" not in text  # "The rows become one-hot and frozen"
    # the training is measured elsewhere, and the lesson says where to run it
    assert "python -m course_lib.experiments.training" in text
    assert "[lesson 13](13_training.ipynb) measures" in text


def test_03_reports_the_query_gradient_beside_the_jacobian_from_its_own_measurement() -> None:
    """The |dw/dq| column is stored, and the text's reading of it matches the numbers."""
    nb = nbformat.read(NOTEBOOKS / "03_scaling.ipynb", as_version=4)
    text = text_of(NOTEBOOKS / "03_scaling.ipynb")
    [table] = [c for c in nb.cells if c.source.startswith("measured = ")]
    out = table.outputs[0]["text"]
    assert "|dw/ds|   |dw/dq|" in out.splitlines()[0]
    rows = {int(line.split()[0]): [float(x) for x in line.replace("|", " ").split()[1:]]
            for line in out.splitlines()[1:] if line.strip()}
    assert sorted(rows) == [2, 8, 32, 128, 512, 4096]
    more = [d for d, r in rows.items() if r[3] > r[7]]  # unscaled |dw/dq| > scaled
    assert more == [2, 8, 32, 128]
    assert ("at the sizes of real attention heads (32 to 128) the unscaled query gets a *larger*"
            in text)
    assert "only at 512 and 4096" in text
    assert "attention_backward" in text


def test_03_meets_softmax_before_using_it() -> None:
    """Softmax is introduced (a black box, one-line definition) before any cell uses it."""
    nb = nbformat.read(NOTEBOOKS / "03_scaling.ipynb", as_version=4)
    intro = next(i for i, c in enumerate(nb.cells)
                 if c.source.startswith("## 2. The next term, softmax, used here as a black box"))
    assert r"\mathrm{softmax}(x)_j = \frac{e^{x_j}}{\sum_l e^{x_l}}" in nb.cells[intro].source
    for cell in nb.cells[:intro]:
        if cell.cell_type == "code" and "setup" not in cell.metadata.get("tags", []):
            outputs = "".join(o.get("text", "") + o.get("data", {}).get("text/plain", "")
                              for o in cell.outputs)
            assert "softmax" not in cell.source and "weight" not in outputs, cell.source


def test_03_calls_d_k_a_dimension_not_a_length() -> None:
    """Issue 30, error 6: d_k is the dimension of the vectors."""
    text = text_of(NOTEBOOKS / "03_scaling.ipynb")
    assert "length" not in text
    assert "d_k is the dimension of each query vector" in text


def _before_and_after_the_guess(path: Path) -> tuple[str, str]:
    """What a student sees above a lesson's first predict-first cell, and its reveal."""
    cells = nbformat.read(path, as_version=4).cells
    i = next(k for k, c in enumerate(cells) if "predict" in c.metadata.get("tags", []))
    above = []
    for cell in cells[:i]:
        above.append(cell.source)
        above += [o.get("text", "") + o.get("data", {}).get("text/plain", "")
                  for o in cell.get("outputs", [])]
    told = next(c for c in cells[i + 1:] if "reveal" in c.metadata.get("tags", []))
    return "\n".join(above), told.source


def _predicted_numbers() -> dict[str, str]:
    """The number each predict-first question is about, computed with the library."""
    from course_lib import attention_weights, heads, real_model, scores, softmax, the_cat_sat
    from course_lib.experiments import scaling

    ex = the_cat_sat()
    the_row = attention_weights(ex.Q, ex.K)[0]
    hx = heads.heads_example()
    _, one_head = heads.multi_head_attention(hx.X, hx.W_Q, hx.W_K, hx.W_V, hx.W_O, h=1)
    unscaled = real_model.compare_with_model(lambda Q, K: softmax(scores(Q, K)))
    [at_32] = scaling.scaling_sweep([32])["unscaled"]  # lesson 03's table, d_k = 32
    return {"01_": f"{the_row[0]:.2f}", "03_": f"{at_32.median_max_weight:.2f}",
            "09_": f"{one_head[0, 2].max():.2f}", "11_": f"{unscaled.largest_difference:.2f}"}


@pytest.mark.parametrize("prefix", ["01_", "03_", "09_", "11_"])
def test_a_predicted_number_is_told_after_the_guess_and_not_above_it(prefix: str) -> None:
    """Issue 30: no answer printed above a predict-first question; the reveal states it."""
    number = _predicted_numbers()[prefix]
    above, told = _before_and_after_the_guess(lesson(prefix))
    assert number in told, (prefix, number, told)
    assert not re.search(rf"(?<![\d.]){re.escape(number)}(?!\d)", above), (prefix, number)


# --- issue 30: lesson 12's self-study -------------------------------------------------

_COUNTS = {"five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11,
           "twelve": 12}


def _self_study_counts(text: str) -> list[int]:
    """The numbers of self-study questions a text promises ('seven questions ...')."""
    return [_COUNTS[m] if m in _COUNTS else int(m) for m in re.findall(
        r"\b(\d+|five|six|seven|eight|nine|ten|eleven|twelve) (?:multiple-choice )?questions\b",
        text)]


def test_12_and_the_readme_promise_the_questions_the_widget_has() -> None:
    """Issue 30 (3): both said 5 while the widget had 7."""
    from course_quiz.self_study import load_questions

    n = len(load_questions())
    lesson = text_of(SELF_STUDY)
    readme = (NOTEBOOKS.parent / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Self-study: the checkpoint without an instructor", 1)[1]
    section = section.split("\n## ", 1)[0]
    for where, text in (("the self-study checkpoint", lesson), ("README", section)):
        counts = _self_study_counts(text)
        assert counts and set(counts) == {n}, (where, counts, n)
    assert "three more on the worked example" not in lesson + section
    nb = nbformat.read(SELF_STUDY, as_version=4)
    [listing] = [c.source for c in nb.cells if c.source.startswith("## No widgets?")]
    listed = re.findall(r'`"(\w+)"`', listing)
    assert listed == [q.id for q in load_questions()]


def test_every_self_study_question_names_the_lesson_that_teaches_it() -> None:
    """Issue 30 (3): each question is about what a lesson taught, and says which."""
    from course_quiz.self_study import SelfStudyQuiz, load_questions

    quiz_text = " ".join(SelfStudyQuiz().as_text().split())
    for q in load_questions():
        [lesson] = [n for n in INDEX if n.number == q.lesson]
        assert lesson.kind == lesson_index.LESSON, q.id  # not the self-study itself
        assert f"(lesson {q.lesson})" in quiz_text, q.id


def test_self_study_q6_says_the_embeddings_feed_only_the_first_layer() -> None:
    """Issue 30 (7): Q, K, V come from the embeddings only in layer 1."""
    from course_quiz.self_study import load_questions

    q = {q.id: q for q in load_questions()}["projections"]
    [right] = [text for letter, text in q.choices if q.check(letter).correct]
    assert "first layer" in right and "previous" in right, right
    [letter] = [lt for lt in q.letters if q.check(lt).correct]
    assert "bias" in q.check(letter).text  # lesson 11's model adds one


# --- issue 30: lesson 12 gives no answer away ----------------------------------------

def _lesson_12() -> nbformat.NotebookNode:
    return nbformat.read(SELF_STUDY, as_version=4)


def test_12_prints_no_feedback_on_run_all() -> None:
    """Issue 30: the "No widgets?" cells printed "Not this one" for Q1-D and Q2-C."""
    from course_quiz.self_study import load_questions

    feedback = [q.check(letter).text for q in load_questions() for letter in q.letters]
    for cell in _lesson_12().cells:
        for out in cell.get("outputs", []):
            shown = out.get("text", "") + out.get("data", {}).get("text/plain", "")
            assert "Not this one" not in shown and "Right." not in shown, cell.source
            for text in feedback:
                assert text[:60] not in " ".join(shown.split()), cell.source


def _shingles(text: str, n: int = 4) -> set[tuple[str, ...]]:
    words = re.findall(r"[a-z0-9_.'()-]+", text.lower().replace("*", ""))
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


def test_12_summary_states_no_answer() -> None:
    """Issue 30: the Summary stated the answers to Q1-Q3 (the scale, the mask, sat's row)."""
    from course_quiz.self_study import load_questions

    [summary] = [c.source for c in _lesson_12().cells if c.source.startswith("## Summary")]
    said = _shingles(summary.replace("$\\sqrt{d_k}$", "sqrt(d_k)"))
    for q in load_questions():
        for letter, text in q.choices:
            fb = q.check(letter)
            if fb.correct:
                assert not said & (_shingles(text) | _shingles(fb.text)), (q.id, said & (
                    _shingles(text) | _shingles(fb.text)))
                for numbers in re.findall(r"\[[-\d., ]+\]", text):
                    assert numbers not in summary, (q.id, numbers)


def test_12_exercise_template_holds_no_line_of_its_solution() -> None:
    """Issue 30: the template held `Q @ K.T / np.sqrt(d_k)`, so the scale could not be missed."""
    cells = _lesson_12().cells
    [i] = [i for i, c in enumerate(cells) if "Student exercise" in c.source]
    [solution] = [c.source for c in cells[i:] if "Stuck? Show one solution" in c.source]
    code = solution.split("```python", 1)[1].split("```", 1)[0]
    template = {line.strip() for line in cells[i].source.splitlines()}
    for line in code.strip().splitlines()[1:]:  # every line but the `def`
        assert line.strip() not in template, line


# ------------------------------------------------------------------- lessons 12 and 13 (issue 31)


def test_12_hand_numbers_are_the_librarys() -> None:
    """Lesson 12's numbers by hand (Jacobian, dS, dq of 'sat', the masked row) are course_lib's."""
    import course_lib as cl

    text = text_of(NOTEBOOKS / "12_backward_pass.ipynb")
    ex = cl.the_cat_sat()
    p = cl.attention_weights(ex.Q, ex.K)[2]
    J = cl.softmax_jacobian(cl.scaled_scores(ex.Q, ex.K)[2])
    assert f"about ${p[0]:.3f}, {p[1]:.3f}, {p[2]:.3f}$" in text
    r = p.round(3)  # the lesson multiplies p to three decimals by hand
    for a, b, entry in ((r[0], 1 - r[0], J[0, 0]), (r[2], 1 - r[2], J[2, 2]),
                        (-r[0], r[1], J[0, 1]), (-r[0], r[2], J[0, 2])):
        assert f"{a:.3f} \\times {b:.3f} \\approx {a * b:.3f}" in text
        assert abs(a * b - entry) < 1e-3
    np.testing.assert_allclose(J.sum(axis=1), 0.0, atol=1e-15)
    assert "row sums: [0. 0. 0.]" in text and "Every row sums to 0" in text
    dO = np.zeros((3, 2))
    dO[2, 0] = 1.0
    dQ, dK, _ = cl.attention_backward(ex.Q, ex.K, ex.V, dO)
    dP = (dO @ ex.V.T)[2]
    total = r[0] * dP[0] + r[1] * dP[1] + r[2] * dP[2]  # by hand, p to three decimals
    by_hand = r * (dP - round(total, 3))
    assert f"\\approx\n{total:.3f}$" in text or f"\\approx {total:.3f}$" in text
    assert f"\\approx ({by_hand[0]:.3f}, {by_hand[1]:.3f}, {by_hand[2]:.3f}).$$" in text
    dS = p * (dP - (dP * p).sum())
    np.testing.assert_allclose(by_hand, dS, atol=2e-3)
    assert dS[1] < 0 < dS[2], "'raising the score for cat lowers the loss'"
    assert f"sat's dq : {np.array2string(dQ[2].round(3))}" in text
    assert np.all(dQ[:2] == 0) and np.all(np.abs(dK).sum(axis=1) > 0), "only sat's query"
    mask = cl.causal_mask(3)
    p_cat = cl.attention_weights(ex.Q, ex.K, mask)[1]
    J_cat = np.diag(p_cat) - np.outer(p_cat, p_cat)
    assert p_cat[2] == 0 and np.all(J_cat[2] == 0) and np.all(J_cat[:, 2] == 0)
    # sat's key, hidden from 'the' and 'cat', gets its gradient from sat's query only
    dK_m = cl.attention_backward(ex.Q, ex.K, ex.V, np.ones((3, 2)), mask)[1]
    only_sat = np.ones((3, 2))
    only_sat[:2] = 0.0
    np.testing.assert_allclose(
        dK_m[2], cl.attention_backward(ex.Q, ex.K, ex.V, only_sat, mask)[1][2])
    assert f"dK of 'sat' = {np.array2string(dK_m[2].round(3))}" in text


def _step0(d_k: int, scale: bool, loss: str = "output_error"):
    """Lesson 13's step-0 rows: 512 examples, the start of seed 0."""
    from course_lib.experiments import training

    return training.row_gradients(*training.initial_weights(d_k), training.sample_batch(n=512),
                                  scale=scale, loss=loss)


def test_13_step_0_claims_hold_for_rows_computed_here() -> None:
    """Issue 40: lesson 13 read the gradient's batch mean only. Each sentence about the
    rows at the start holds on the rows the library computes."""
    text = " ".join(text_of(lesson("13_")).split())
    rows = {(d, s): _step0(d, s) for d in (16, 64, 256) for s in (True, False)}
    # "Scaled, every d_k looks alike: scores spread about 1, no row near 0"
    assert all(0.9 < rows[d, True].scores.std() < 1.1 and rows[d, True].near_zero == 0
               for d in (16, 64, 256))
    # "Unscaled, the scores spread like sqrt(d_k) (4, 8, 16)"
    assert [round(float(rows[d, False].scores.std())) for d in (16, 64, 256)] == [4, 8, 16]
    assert "the scores spread like $\\sqrt{d_k}$ (4, 8, 16)" in text
    big = rows[256, False]
    # "about half of them get a gradient below 0.001, most of those with their weight on a
    # wrong key; the median ... several times *smaller* ... the *mean* several times *larger*"
    assert "about half of them get a gradient below 0.001, most of those" in text
    assert 0.4 < big.near_zero < 0.6 and big.stuck > big.near_zero / 2
    assert np.median(big.wq_grad) * 3 < np.median(rows[256, True].wq_grad)
    assert big.wq_grad.mean() > 3 * rows[256, True].wq_grad.mean()
    # "At 16, a few rows are near 0" (at 64: test_13_says_a_fifth_to_a_quarter_at_64_...)
    assert "At 16, a few rows are near 0" in text
    assert 0 < rows[16, False].near_zero < 0.1
    # "the 10 % quantile at d_k = 16 is ten times smaller unscaled"
    low = [np.quantile(rows[16, s].score_grad, 0.1) for s in (True, False)]
    assert "10 % quantile at $d_k = 16$ is ten times smaller unscaled" in text
    assert 8 < low[0] / low[1] < 13
    # section 4: cross-entropy leaves no row stuck; a stuck row gets sqrt 2 from it
    ce = _step0(256, False, "cross_entropy")
    assert ce.stuck == 0 and ce.near_zero < 0.1
    assert "the *right* key are near 0, and they have nothing left to learn" in text
    # the answer to "more to think about" 1(c) quotes these
    assert (f"{big.stuck:.0%}".replace("%", " %") + " of the rows were stuck with the output "
            "error and none with cross-entropy") in text


def test_13_training_claims_hold_for_runs_computed_here() -> None:
    """Sections 5 and 6: the live runs, the first step and the fold, recomputed."""
    from course_lib.experiments import training

    text = " ".join(text_of(lesson("13_")).split())
    scaled, unscaled = (training.train(64, scale=s, steps=120) for s in (True, False))
    windows = [r.stuck.reshape(-1, 30).mean(axis=1) for r in (scaled, unscaled)]
    accuracy = [r.accuracy.reshape(-1, 30).mean(axis=1) for r in (scaled, unscaled)]
    moves = [r.score_move.reshape(-1, 30).mean(axis=1) for r in (scaled, unscaled)]
    # "Scaled, no row is ever stuck and the accuracy climbs."
    assert scaled.stuck.max() == 0 and accuracy[0][-1] > accuracy[0][0] + 0.1
    # "Unscaled, the stuck fraction ... *grows*, and the accuracy stays near chance (1/8)"
    assert np.all(np.diff(windows[1]) > 0) and unscaled.final_accuracy < 0.2
    assert abs(accuracy[1][-1] - 1 / 8) < 0.05
    # "every step moves the unscaled scores further than the scaled ones (the last panel)"
    assert np.all(moves[1] > moves[0])
    assert "it *grows*, and the accuracy stays near chance (1/8)" in text
    # section 6: Adam's step on W_Q is the same size; the scores move "several times as far"
    # but less than sqrt(d_k); SGD's step is larger
    first = training.sample_batch()
    for d_k in (64, 256):
        W_Q, W_K = training.initial_weights(d_k)
        moved, size = {}, {}
        for s in (True, False):
            before = training.row_gradients(W_Q, W_K, first, scale=s).scores
            _, dW_Q, dW_K = training.loss_and_gradients(W_Q, W_K, first, scale=s)
            dq, dk = (0.003 * g / (np.abs(g) + 1e-8) for g in (dW_Q, dW_K))
            after = training.row_gradients(W_Q - dq, W_K - dk, first, scale=s).scores
            moved[s], size[s] = np.abs(after - before).mean(), np.linalg.norm(dW_Q)
        assert 3 < moved[False] / moved[True] < np.sqrt(d_k)
        assert size[False] > 2 * size[True]
    assert "yet it moves the unscaled scores several times as far" in text
    # the fold: unscaled with start and rate times d_k^(-1/4) is the scaled run
    f = 64 ** -0.25
    folded = training.train(64, scale=False, start_scale=f, learning_rate=0.003 * f, steps=20)
    assert np.abs(folded.loss - training.train(64, steps=20).loss).max() < 1e-4


def test_13_table_claims_hold_on_the_stored_table() -> None:
    """Sections 7 and the exercise: each number the prose reads off the stored table."""
    from course_lib.experiments import training

    text = " ".join(text_of(lesson("13_")).split())
    _, table = training.load_table()
    row = {(r.task, r.loss, r.d_k, r.scale): r for r in table}

    def acc(task, loss, d_k, scale):
        return f"{row[task, loss, d_k, scale].accuracy()[0]:.2f}"

    sweep = {(d, s): row["match", "output_error", d, s].sweep for d in (256,) for s in (1, 0)}
    # "On `match`, scaled, the best rate of the grid is 0.003 at every d_k, for both losses."
    assert {r.learning_rate for r in table if r.task == "match" and r.scale} == {0.003}
    assert "On `match`, scaled, the best rate of the grid is 0.003 at every $d_k$" in text
    # "Unscaled ... at d_k = 256 the rule picked 0.001" (how narrowly, and what the accuracy
    # says: test_13_reads_no_direction_into_the_unscaled_rate_at_256)
    assert row["match", "output_error", 256, False].learning_rate == 0.001
    # "At d_k = 64 the best rate is 0.003, and with cross-entropy it is 0.003 at every d_k"
    assert row["match", "output_error", 64, False].learning_rate == 0.003
    assert {row["match", "cross_entropy", d, False].learning_rate
            for d in (16, 64, 256)} == {0.003}
    assert ("At $d_k = 64$ the best rate is 0.003, and with cross-entropy it is 0.003 at every "
            "$d_k$. So `match`'s grid does not show the fold of section 6") in text
    assert "as the fold of section 6 predicts" not in text
    # section 1: the start is a choice; GPT-2's (std 0.02, d_model 768) by the same arithmetic
    variance = 768 * 0.02**2
    assert f"768 \\cdot 0.02^2 \\approx {variance:.2f}" in text
    assert f"\\sqrt{{64}} \\cdot {variance:.2f} \\approx {np.sqrt(64) * variance:.1f}" in text
    # "at d_k = 256 its accuracy is 0.13 to 0.19 at every rate, against 0.76 scaled"
    unscaled = [a for _, _, a in sweep[256, 0]]
    assert f"{min(unscaled):.2f} to {max(unscaled):.2f} at every rate" in text
    assert f"against {max(a for _, _, a in sweep[256, 1]):.2f} scaled at 0.003" in text
    assert max(unscaled) < max(a for _, _, a in sweep[256, 1]) - 0.3
    ce = [max(a for _, _, a in row["match", "cross_entropy", 256, s].sweep) for s in (0, 1)]
    assert f"({ce[0]:.2f} against {ce[1]:.2f} at the best)" in text
    # "... much closer to the scaled one, at every rate at most 0.17 behind"
    ce_gaps = [s - u for (_, _, s), (_, _, u) in
               zip(*(row["match", "cross_entropy", 256, sc].sweep for sc in (1, 0)), strict=True)]
    assert f"at every rate at most {max(ce_gaps):.2f} behind" in text
    oe_gaps = [s - u for (_, _, s), (_, _, u) in zip(sweep[256, 1], sweep[256, 0], strict=True)]
    assert max(ce_gaps) < max(oe_gaps) / 3
    # the tuned table's readings
    assert (f"On `match` {acc('match', 'output_error', 16, 0)}, "
            f"{acc('match', 'output_error', 64, 0)} and {acc('match', 'output_error', 256, 0)}"
            f" against {acc('match', 'output_error', 16, 1)}, "
            f"{acc('match', 'output_error', 64, 1)} and "
            f"{acc('match', 'output_error', 256, 1)}") in text
    argmax_unscaled = [row["argmax", "output_error", d, False].accuracy()[0] for d in
                       (16, 64, 256)]
    singles = [x[2] for d in (16, 64, 256)
               for x in row["argmax", "output_error", d, False].runs]
    assert (f"near chance (seed means {min(argmax_unscaled):.2f} to {max(argmax_unscaled):.2f}, "
            f"single seeds {min(singles):.2f} to {max(singles):.2f}; chance is 1/16, about "
            f"{1 / 16:.2f})") in text
    assert max(argmax_unscaled) < 0.1  # chance is 1/16
    for task in ("match", "argmax"):
        for d in (16, 64, 256):
            s, u = row[task, "output_error", d, True], row[task, "output_error", d, False]
            assert u.accuracy()[2] < s.accuracy()[1] - 0.1, (task, d)  # beyond the spread
    stuck = {d: [x[3] for x in row["match", "output_error", d, False].runs] for d in (64, 256)}
    assert (f"{min(stuck[256]):.1%} to {max(stuck[256]):.1%} of the held-out rows of "
            f"`match` are stuck at $d_k = 256$ and {min(stuck[64]):.1%} to {max(stuck[64]):.1%}"
            " at 64").replace("%", " %") in text
    assert min(stuck[256]) > _step0(256, False).stuck and min(stuck[64]) > _step0(64, False).stuck
    most = max(x[3] for r in table if r.scale for x in r.runs)
    assert f"Scaled, at most {most:.1%}".replace("%", " %") in text
    assert most * 1024 == 2 and "(2 rows of 1024)" in text
    # "on argmax at d_k = 16 almost no row ends stuck (at most 0.1 %) and the unscaled head is
    # still near chance"
    few = max(x[3] for x in row["argmax", "output_error", 16, False].runs)
    assert f"almost no row ends stuck (at most {few:.1%})".replace("%", " %") in text
    assert row["argmax", "output_error", 16, False].accuracy()[0] < 0.1
    # cross-entropy: no row stuck; match's gap small, argmax's at 256 large
    assert all(x[3] == 0 for r in table if r.loss == "cross_entropy" for x in r.runs)
    # match's two gaps: test_13_cross_entropy_on_match_leaves_a_gap_at_256; argmax's at the
    # same rate: test_13_quotes_the_same_rate_where_the_rule_picked_different_ones
    assert (f"the table's {acc('argmax', 'cross_entropy', 256, 1)} against "
            f"{acc('argmax', 'cross_entropy', 256, 0)} compares two rates") in text
    gap = {loss: row["match", loss, 256, True].accuracy()[0]
           - row["match", loss, 256, False].accuracy()[0] for loss in training.LOSSES}
    assert gap["cross_entropy"] < gap["output_error"] / 4
    assert (row["argmax", "cross_entropy", 256, True].accuracy()[0]
            - row["argmax", "cross_entropy", 256, False].accuracy()[0]) > 0.3


# ------------------------------------------- the self-study on lessons 12 and 13 (issue 31)


def test_the_self_study_asks_about_the_backward_pass_and_the_training_run() -> None:
    """One question each on lessons 12 and 13, and what they state is what those lessons show."""
    from course_quiz import self_study as quiz

    by_lesson = {q.lesson: q for q in quiz.SelfStudyQuiz().questions}
    assert {"12", "13"} <= set(by_lesson)
    # lesson 12's question: the Jacobian of a one-hot row is all zeros
    assert "p = [0, 1, 0]" in by_lesson["12"].prompt
    p = np.array([0.0, 1.0, 0.0])
    assert np.all(np.diag(p) - np.outer(p, p) == 0)  # J = diag(p) - p p^T, as lesson 12
    assert "diag(p) - p p^T" in by_lesson["12"].prompt
    # lesson 13's question quotes the first step lesson 13 prints: Adam's step on W_Q, and
    # how far it moved the scores
    printed = text_of(NOTEBOOKS / "13_training.ipynb")
    found = re.search(r"d_k = 256, unscaled / scaled: step on W_Q: SGD \d+\.\dx, Adam "
                      r"(\d\.\d\d)x; scores moved: SGD \d+x, Adam (\d+\.\d)x", printed)
    assert found, "lesson 13 no longer prints its first-step ratios"
    prompt = by_lesson["13"].prompt
    assert f"exactly as large ({found.group(1)} times)" in prompt
    assert f"moved the scores {found.group(2)} times as far" in prompt



def test_self_study_q9_feedback_says_what_lesson_13_measured() -> None:
    """Issue 40: the feedback of the question on lesson 13 said the unscaled gradient is 'not
    vanishing' (the batch mean) and that the run 'started one-hot'. Each feedback now states
    what the lesson's rows show, and each of those statements is recomputed here."""
    from course_quiz import self_study as quiz

    [q] = [q for q in quiz.SelfStudyQuiz().questions if q.lesson == "13"]
    said = {letter: " ".join(str(q.check(letter)).split()) for letter in q.letters}
    found = re.search(r"d_k = 256, unscaled / scaled: .*?scores moved: SGD \d+x, "
                      r"Adam (\d+\.\d)x",
                      text_of(NOTEBOOKS / "13_training.ipynb"))
    assert found, "lesson 13 no longer prints its first-step ratios"
    unscaled, scaled = _step0(256, False), _step0(256, True)
    # A: "the unscaled scores moved 8.0 times as far (lesson 13)", as the lesson prints
    assert f"the unscaled scores moved {found.group(1)} times as far" in said["A"]
    # B: "about half the rows saturated at d_k = 256"
    assert "about half the rows saturated at d_k = 256" in said["B"]
    assert 0.4 < unscaled.near_zero < 0.6
    # D: the mean is larger unscaled, the gradient is near 0 row by row for saturated rows
    assert ("The mean gradient on W_Q is larger unscaled, not vanishing; it is near 0 row by "
            "row, for the saturated rows") in said["D"]
    assert unscaled.wq_grad.mean() > scaled.wq_grad.mean()
    assert np.median(unscaled.wq_grad) < np.median(scaled.wq_grad)
    assert not any("one-hot from step 0" in s or "started one-hot" in s for s in said.values())

# ------------------------------------------------------------------------ lesson 14 (issue 35)


def _hand(x: float) -> float:
    """A number as lesson 14 writes it by hand: three decimals."""
    return round(x, 3)


def test_14_hand_numbers_are_the_online_softmax_of_course_lib() -> None:
    """Every number lesson 14 works by hand is course_lib's state, rounded as it says."""
    from course_lib import softmax
    from course_lib.checks.reasoning import ONLINE_BLOCKS, online_example_state

    text = text_of(lesson("14_"))
    one, two, three = (online_example_state(k) for k in (1, 2, 3))
    (s1, v1), (s2, v2), (s3, v3) = ONLINE_BLOCKS
    p = np.exp(np.array(s1) - one.running_max[0])
    assert f"\\approx (1, {_hand(p[1]):.3f})" in text and p[0] == 1.0
    assert f"running sum is $\\ell \\approx {_hand(one.running_sum[0]):.3f}$" in text
    o1 = one.partial_output[0, 0]
    by_hand = _hand(p[1]) * v1[1] + v1[0]
    assert f"0.135 \\times 8 \\approx {by_hand:.2f}$" in text and abs(by_hand - o1) < 5e-3
    assert f"partial output [[{o1:.3f}]]" in text  # what block 2's hand sum starts from
    c = np.exp(one.running_max[0] - two.running_max[0])
    assert two.running_max[0] == max(s2) > one.running_max[0]
    assert f"e^{{-1}} \\approx {_hand(c):.3f}$" in text
    # block 2 by hand, with the three-decimal numbers the lesson writes
    ell = _hand(c) * _hand(one.running_sum[0]) + 1 + _hand(p[1])
    o = _hand(c) * _hand(o1) + v2[0] + _hand(p[1]) * v2[1]
    assert f"0.135 \\approx {ell:.3f}" in text and f"\\times 6 \\approx {o:.3f}" in text
    assert abs(ell - two.running_sum[0]) < 2e-3 and abs(o - two.partial_output[0, 0]) < 2e-3
    ratio = two.partial_output[0, 0] / two.running_sum[0]
    whole = softmax(np.array(s1 + s2)) @ np.array(v1 + v2)
    assert f"$o / \\ell \\approx {ratio:.2f}$" in text and abs(ratio - whole) < 1e-12
    assert f"softmax · V of the whole row: [[{whole:.3f}]]" in text
    # the exercise starts from the state the cell printed
    assert (f"(maximum 3, sum ≈ {two.running_sum[0]:.3f}, partial output ≈ "
            f"{two.partial_output[0, 0]:.3f})") in text
    # the folded derivation: its rounded correction, and its sums to 2 decimals
    c3 = np.exp(two.running_max[0] - max(s3))
    assert f"e^{{-1.5}} \\approx {_hand(c3):.3f}$" in text
    ell3 = _hand(c3) * _hand(two.running_sum[0]) + 1 + _hand(np.exp(-2.0))
    o3 = _hand(c3) * _hand(two.partial_output[0, 0]) + v3[0] + _hand(np.exp(-2.0)) * v3[1]
    assert f"return [{ell3:.2f}, {o3:.2f}]" in text
    assert (round(ell3, 2), round(o3, 2)) == (round(three.running_sum[0], 2),
                                              round(three.partial_output[0, 0], 2))


def test_14_tile_counts_are_computed_tiles() -> None:
    """The grid, '10 of 16', the counts at n = 1024 and 4096 ('about half') and '1024 tiles'."""
    from course_lib.tiled import computed_tiles

    text = text_of(lesson("14_"))
    grid = computed_tiles(100, 100, block_q=32, block_k=32, causal=True)
    assert str(grid.astype(int)) in text and f"{grid.sum()} of {grid.size} tiles" in text
    for n in (1024, 4096):
        g = computed_tiles(n, n, block_q=64, block_k=64, causal=True)
        assert f"n = {n}, tiles of 64 × 64: {g.sum()} of {g.size} computed ({g.mean():.0%})" \
            in text
    assert "about half of them once there are many" in text and abs(g.mean() - 0.5) < 0.02
    full = computed_tiles(1024, 1024, block_q=32, block_k=32)
    assert "1024 tiles\nat $n = 1024$" in text and full.size == 1024 and full.all()


def test_14_tiled_output_is_attentions_as_printed() -> None:
    """The largest differences are below 1e-14, for block sizes that do not divide 100; the
    lesson prints that, not their last digits, which depend on the CPU's BLAS kernel (issue
    40: 3.3e-16 stored, 4.4e-16 printed under OPENBLAS_CORETYPE=Sandybridge)."""
    from course_lib import attention, causal_mask, tiled_attention

    text = text_of(lesson("14_"))
    found = re.findall(r"blocks +(\d+) × (\d+) *: largest difference below 1e-14: (\w+), "
                       r"causal: (\w+)", text)
    assert len(found) == 4 and any(100 % int(b) for _, b, _, _ in found)
    assert all(a == b == "True" for _, _, a, b in found)
    Q, K, V = np.random.default_rng(0).normal(size=(3, 100, 8))
    whole, causal = attention(Q, K, V)[0], attention(Q, K, V, mask=causal_mask(100))[0]
    for bq, bk, _, _ in found:
        for mask, want in ((False, whole), (True, causal)):
            got = tiled_attention(Q, K, V, block_q=int(bq), block_k=int(bk), causal=mask)
            assert np.abs(got - want).max() < 1e-14


def test_14_memory_claims_hold_for_a_measurement_made_here() -> None:
    """The reveal's '3 to 4 times' and '1.5 to 2 times', each nearer its top the larger n,
    and 'nearly all of it is the table'."""
    from course_lib.experiments.memory_cost import measure_tiled_cost

    text = text_of(lesson("14_"))
    flat = " ".join(text.split())
    assert "peak 3 to 4 times as large, nearer 4 the larger $n$" in flat
    assert "peak grew 1.5 to 2 times, nearer 2 the larger $n$" in flat
    c = measure_tiled_cost((128, 256, 512, 1024), d=32, block=32, repeats=1,
                           min_sample_seconds=0)
    whole, tiles = (np.array(p, dtype=float) for p in c.peak_bytes)
    assert np.all((whole[1:] / whole[:-1] > 2.9) & (whole[1:] / whole[:-1] < 4.2))
    assert np.all((tiles[1:] / tiles[:-1] > 1.45) & (tiles[1:] / tiles[:-1] < 2.1))
    for peaks in (whole, tiles):  # "nearer the top the larger n"
        assert np.all(np.diff(peaks[1:] / peaks[:-1]) > -0.02)
    table, output = 8 * 1024**2, 8 * 1024 * 32
    assert table <= whole[-1] < 1.1 * (table + output)  # nearly all of it is the table
    assert "the 1024 × 1024 table alone: 8 MiB   the output: 256 KiB" in text
    # the printed, rounded slopes are far from a rounding edge
    a, t = c.memory_slopes(min_n=512)
    assert abs(a - 2) < 0.2 and abs(t - 1) < 0.25
    assert "attention ≈ 2, tiled_attention ≈ 1" in text


def test_the_self_study_asks_about_the_online_softmax_and_its_right_option_is_exact() -> None:
    """Lesson 14's question: only option B's update streams lesson 14's row to softmax · V."""
    from course_lib import softmax
    from course_lib.checks.reasoning import ONLINE_BLOCKS
    from course_quiz import self_study as quiz

    [q] = [q for q in quiz.SelfStudyQuiz().questions if q.lesson == "14"]
    scores = np.array([s for b in ONLINE_BLOCKS for s in b[0]])
    values = np.array([v for b in ONLINE_BLOCKS for v in b[1]])
    want = softmax(scores) @ values

    def stream(rescale_sum: bool, rescale_output: bool, inverted: bool) -> float:
        m, total, out = -np.inf, 0.0, 0.0
        for s, v in ONLINE_BLOCKS:
            new_m = max(m, max(s))
            c = np.exp(new_m - m) if inverted and m > -np.inf else np.exp(m - new_m)
            p = np.exp(np.array(s) - new_m)
            total = (c * total if rescale_sum else total) + p.sum()
            out = (c * out if rescale_output else out) + p @ np.array(v)
            m = new_m
        return out / total

    by_option = {"A": stream(True, False, False), "B": stream(True, True, False),
                 "C": stream(False, False, False), "D": stream(True, True, True)}
    right = [letter for letter in q.letters if q.check(letter).correct]
    assert right == ["B"]
    assert [k for k, got in by_option.items() if abs(got - want) < 1e-12] == right
    assert "e^(m - m')" in dict(q.choices)["B"] and "e^(m' - m)" in dict(q.choices)["D"]
# ------------------------------------------------------------------ lesson 15 (issue 35)


def test_15_a_new_token_changes_no_earlier_row_and_the_cache_equals_attention() -> None:
    """Lesson 15's printed rows are course_lib's: exactly 0 for earlier rows with the mask,
    every row without it; the cache's rows equal causal attention's."""
    import course_lib as cl

    text = text_of(lesson("15_"))
    rng = np.random.default_rng(0)  # the lesson's own numbers, recomputed here
    Q, K, V = rng.normal(size=(3, 6, 4))
    Q2, K2, V2 = Q.copy(), K.copy(), V.copy()
    Q2[5], K2[5], V2[5] = rng.normal(size=(3, 4))
    causal = np.abs(cl.attention(Q2, K2, V2, mask=cl.causal_mask(6))[0]
                    - cl.attention(Q, K, V, mask=cl.causal_mask(6))[0]).max(axis=1)
    unmasked = np.abs(cl.attention(Q2, K2, V2)[0] - cl.attention(Q, K, V)[0]).max(axis=1)
    assert np.all(causal[:5] == 0.0) and causal[5] > 0.01  # "exactly 0, not rounding"
    assert np.all(unmasked > 0.01)  # "every row changes"
    assert f"causal, change of each row:   {causal.round(2)}" in text
    assert f"no mask, change of each row:  {unmasked.round(2)}" in text
    assert "rows 0 to 4 change by exactly 0" in text
    cache = cl.KVCache()
    rows = np.array([cache.step(Q[i], K[i], V[i]) for i in range(6)])
    assert np.abs(rows - cl.attention(Q, K, V, mask=cl.causal_mask(6))[0]).max() < 1e-12
    assert "row by row, below 1e-12: True" in text


def test_15_counts_and_measured_memory_are_what_it_says() -> None:
    from course_lib.experiments import cost, memory_cost

    text = text_of(lesson("15_"))
    sizes, d = (128, 256, 512, 1024), 32
    for n in sizes:
        assert (f"n = {n:>4}: recompute {2 * n * n * d:>11,}   KV cache {2 * n * d:>7,}   "
                f"ratio {n:>4}") in text
    assert "slopes (log-log): recompute 2.00, KV cache 1.00" in text
    assert round(cost.loglog_slope(sizes, [2 * n * n * d for n in sizes]), 2) == 2.0
    measured = memory_cost.measure_kv_cache_cost(sizes, d=d, repeats=1, min_sample_seconds=0)
    slopes = measured.memory_slopes(min_n=256)
    assert f"recompute {slopes[0]:.1f}, KV cache {slopes[1]:.1f}" in text
    assert all(r >= 8 * n * n for r, n in zip(measured.peak_bytes[0], sizes, strict=True))
    assert all(c < r / 20 for r, c in zip(*measured.peak_bytes, strict=True))  # one row
    # The stored run (made on a quiet machine) shows the factor the text quotes; no cell
    # asserts a time, since a busy machine can slow every sample of one call.
    stored = re.search(r"recompute's time / the cache's time: ((?:\d+×\s*){4})", text)
    assert stored, "lesson 15 no longer prints the time factors"
    factors = [int(x) for x in re.findall(r"(\d+)×", stored.group(1))]
    assert all(f > 1 for f in factors) and factors == sorted(factors)
    assert 3 <= factors[0] <= 12 and 100 <= factors[-1] <= 300  # "about 6", "150 to 200"


def _blocks():
    from course_lib import AttentionInputError, block
    from course_lib.real_model import model_forward

    found = [block.random_block(seed=0), block.random_block(64, 4, 128, seed=3)]
    try:
        found.append(model_forward.load_block(layer=0))
    except AttentionInputError:  # the weights are optional (lesson 11, section 7)
        pass
    return found


def test_15_only_attention_mixes_tokens_in_every_block() -> None:
    """What lesson 15 prints holds for MiniLM's block (where installed) and random ones."""
    from course_lib import block

    text = text_of(lesson("15_"))
    for w in _blocks():
        x = np.random.default_rng(1).normal(size=(6, w.d_model))
        for token in range(6):
            for causal in (False, True):
                changed = block.rows_each_step_changes(x, w, token=token, causal=causal)
                assert changed["attention"] == tuple(range(token if causal else 0, 6))
                assert all(changed[s] == (token,) for s in block.STEPS[1:]), (w, changed)
    w = block.random_block(seed=0)
    x = np.random.default_rng(1).normal(size=(6, 384))
    for causal, label in ((False, "no mask (MiniLM):"), (True, "with the causal mask:")):
        changed = block.rows_each_step_changes(x, w, token=2, causal=causal)
        lines = "\n".join(f"  {name:>12}: rows {list(rows)}" for name, rows in changed.items())
        assert f"{label}\n{lines}" in text
    assert "Only **attention** spreads a change" in text


def test_15_a_decoder_block_keeps_every_earlier_row() -> None:
    from course_lib import block

    text = text_of(lesson("15_"))
    for w in _blocks():
        x = np.random.default_rng(1).normal(size=(6, w.d_model))
        other = x.copy()
        other[5] = np.random.default_rng(2).normal(size=w.d_model)
        before = block.block_steps(x, w, causal=True)
        after = block.block_steps(other, w, causal=True)
        for name in block.STEPS:
            assert np.all(after.steps[name][:5] == before.steps[name][:5]), name
            assert np.any(after.steps[name][5] != before.steps[name][5]), name
            assert f"{name:>12}: rows 0-4 change by 0.0, row 5 changes: True" in text


def test_the_self_study_asks_what_the_kv_cache_computes() -> None:
    """Lesson 15's question: the right option is what KVCache.attend computes, one row."""
    import course_lib as cl
    from course_quiz import self_study as quiz

    [q] = [q for q in quiz.SelfStudyQuiz().questions if q.lesson == "15"]
    [right] = [text for letter, text in q.choices if q.check(letter).correct]
    assert "One row of 1001 scores" in right and "its own included" in right
    rng = np.random.default_rng(5)
    Q, K, V = rng.normal(size=(3, 1001, 8))
    cache = cl.KVCache()
    cache.extend(K, V)  # 1000 earlier tokens and the new one, cached
    row = cache.attend(Q[-1])
    np.testing.assert_allclose(row, cl.attention(Q, K, V, mask=cl.causal_mask(1001))[0][-1],
                               atol=1e-12)
    assert "exactly 0" in text_of(lesson("15_"))  # what the wrong options' feedback quotes


# ------------------------------------------------------------------ issue 35 review


def test_14_says_its_memory_measurement_leaves_q_k_v_out() -> None:
    """'Memory O(n)' is the memory beyond Q, K, V: tracemalloc's peak does not see them."""
    from course_lib import tiled_attention
    from course_lib.experiments import cost
    from course_lib.experiments.memory_cost import peak_bytes

    text = text_of(lesson("14_"))
    n, d = 1024, 32
    Q, K, V = np.random.default_rng(0).standard_normal((3, n, d))
    inputs = 3 * 8 * n * d
    tiled = peak_bytes(lambda: tiled_attention(Q, K, V, block_q=32, block_k=32))
    assert 8 * n * d <= tiled < inputs  # the output counts, the inputs do not
    assert "neither count includes $Q$" in " ".join(text.split())
    assert f"({cost.format_bytes(inputs)} at\n$n = 1024$, $d = 32$)" in text
    assert "beyond its inputs $Q$, $K$, $V$ grows like $n^2$" in text
    assert "peak memory grows like $n^2$ with the table" not in text


def test_15_the_cache_itself_is_its_memory_and_the_peak_leaves_it_out() -> None:
    """The cache's price is its 2nd numbers per head and layer, not one row of scores."""
    from course_lib import KVCache
    from course_lib.experiments import cost
    from course_lib.experiments.memory_cost import peak_bytes

    text = text_of(lesson("15_"))
    n, d = 1024, 32
    rng = np.random.default_rng(0)
    cache = KVCache()
    cache.extend(*rng.standard_normal((2, n, d)))
    held = cache.keys.nbytes + cache.values.nbytes
    assert held == 2 * 8 * n * d
    assert peak_bytes(lambda: cache.attend(rng.standard_normal(d))) < held / 10
    assert f"the cache of one head, {n} tokens, d = {d}: {cost.format_bytes(held)}" in text
    assert f"6 layers × 12 heads: {cost.format_bytes(72 * held)}" in text
    flat = " ".join(text.split())
    assert "Neither peak counts the keys and values themselves" in flat
    assert "holds one row of $n$ scores" not in flat


def test_15_says_minilm_is_post_ln_and_the_block_runs_it_so() -> None:
    """LayerNorm after each residual in course_lib.block, as the lesson says (post-LN)."""
    from course_lib import block

    text = text_of(lesson("15_"))
    assert "after* each residual (post-LN)" in text and "(pre-LN)" in text
    w = block.random_block(64, 4, 128, seed=3)
    x = np.random.default_rng(1).normal(size=(5, 64))
    s = block.block_steps(x, w).steps
    np.testing.assert_allclose(s["residual"], x + s["W_O"])
    np.testing.assert_allclose(s["LayerNorm"],
                               block.layer_norm(s["residual"], w.ln1_gain, w.ln1_bias, w.eps))
    np.testing.assert_allclose(s["residual 2"], s["LayerNorm"] + s["MLP"])


def test_15_an_encoder_cache_goes_stale_from_the_second_layer_on() -> None:
    """Not 'nothing can be cached': without a mask, layer 1's keys of earlier tokens stay,
    layer 2's change when a token is added."""
    from course_lib import block

    text = " ".join(text_of(lesson("15_")).split())
    assert "nothing can be cached" not in text
    assert "from the second layer on the earlier tokens' keys and values change too" in text
    w1, w2 = block.random_block(64, 4, 128, seed=3), block.random_block(64, 4, 128, seed=4)
    x = np.random.default_rng(1).normal(size=(6, 64))
    longer = np.vstack([x, np.random.default_rng(2).normal(size=(1, 64))])
    short, long = block.block_steps(x, w1), block.block_steps(longer, w1)
    assert np.array_equal(long.k[:, :6], short.k)  # layer 1: its own projections
    assert np.all(np.abs(long.output[:6] - short.output).max(axis=1) > 1e-6)
    k2_short, k2_long = block.block_steps(short.output, w2).k, block.block_steps(long.output, w2).k
    assert np.all(np.abs(k2_long[:, :6] - k2_short).max(axis=(0, 2)) > 1e-6)
    # the lesson measures "add a token and every row changes" on its own block and rows
    w, rows = block.random_block(seed=0), np.random.default_rng(1).normal(size=(6, 384))
    added = block.block_steps(rows, w).output[:5] != block.block_steps(rows[:5], w).output
    assert np.all(added.any(axis=1))
    assert "rows of tokens 0-4 that change when token 5 is added: [0, 1, 2, 3, 4]" in text


def test_14_beside_the_output_the_tiled_peak_is_a_constant() -> None:
    """Why the tiled slope is below 1 at small n, measured: peak = 8nd + the same rest."""
    from course_lib.experiments.memory_cost import measure_tiled_cost

    text = " ".join(text_of(lesson("14_")).split())
    c = measure_tiled_cost((128, 256, 512, 1024), d=32, block=32, repeats=1,
                           min_sample_seconds=0)
    rest = [p - 8 * n * 32 for n, p in zip(c.sizes, c.peak_bytes[1], strict=True)]
    assert max(rest) - min(rest) < 4096 and 8 * 32 * 32 < min(rest) < 8 * 128 * 32
    assert "the rest of `tiled_attention`'s peak is the same at every $n$" in text
    assert "its peak is $8nd$ bytes plus a constant" in text


# ------------------------------------------------------------ lesson 11: two masks (issue 44)


def test_11_padding_and_dropout_say_what_their_cells_measure() -> None:
    """The padded batch moves the short sentence's weights without the mask and leaves them
    with it; dropout keeps the average output (0.3% off over 10,000 draws) while one draw's
    row sum scatters. Recomputed here, as the lesson computes them."""
    from course_lib import attention_weights, dropout, padding, real_model

    shown = outputs_of(lesson("11_"))
    text = " ".join(markdown_of(lesson("11_")).split())
    batch, data = real_model.load_padded_batch(), real_model.load_model_attention()
    Q, K = batch.Q.astype(np.float64), batch.K.astype(np.float64)
    n = batch.lengths[1]
    alone = data.layer(sentence=batch.indices[1], layer=0).probabilities
    change = np.abs(attention_weights(Q, K)[1, :, :n, :n] - alone).max()
    assert f"without a mask, its real weights move by up to {change:.2f}" in shown
    assert change > 0.1 and "**What happened.** They move" in text
    masked = attention_weights(Q, K, mask=padding.key_mask(batch.lengths, heads=True))
    assert np.abs(masked[1, :, :n, :n] - alone).max() < 1e-5
    assert "as alone, to float32 rounding: True;  weight on [PAD]: 0.0" in shown
    # dropout, as the lesson draws it
    head_0 = data.layer(sentence=0, layer=0)
    row, V = head_0.probabilities[0, 3].astype(np.float64), head_0.V[0].astype(np.float64)
    rng = np.random.default_rng(0)
    dropout.attention_dropout(row, 0.1, rng)
    draws = dropout.attention_dropout(np.tile(row, (10_000, 1)), 0.1, rng)
    off = np.abs((draws @ V).mean(axis=0) - row @ V).max() / np.abs(row @ V).max()
    assert off < 0.02 and f"off by {off:.1%} at most" in shown
    assert "**What happened.** The same, to within the spread of 10,000 draws" in text
    sums = draws.sum(axis=1)
    assert f"mean {sums.mean():.3f}, from {sums.min():.2f} to {sums.max():.2f}" in shown
    assert np.mean(np.abs(sums - 1) < 0.01) < 0.5  # most draws' rows do not sum to 1


# ------------------------------------------------------- a teacher's corrections (issue 40)


@pytest.mark.parametrize("path", LESSONS, ids=[p.stem for p in LESSONS])
def test_a_colon_introduces_the_cell_below_it(path: Path) -> None:
    """A markdown line ending in ':' introduces what follows; a heading after it in the same
    cell means the next section has been glued on (lesson 09: "Counted on this example...:"
    then "## 5. Shapes" in one cell, the count in the code cell after both)."""
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type != "markdown":
            continue
        lines = [line for line in cell.source.splitlines() if line.strip()]
        for before, after in itertools.pairwise(lines):
            assert not (before.rstrip().endswith(":") and after.startswith("#")), (
                f"{path.name}: {before!r} is followed by the heading {after!r} in one cell")


def test_09_the_count_follows_its_sentence_and_section_5_starts_a_cell() -> None:
    cells = nbformat.read(lesson("09_"), as_version=4).cells
    [i] = [i for i, c in enumerate(cells) if "multiply_adds = " in c.source]
    assert cells[i - 1].source.rstrip().endswith(
        "Counted on this example, $n = 3$ tokens and $d_\\text{model} = 4$:")
    assert cells[i + 1].cell_type == "markdown"
    assert cells[i + 1].source.startswith("## 5. Shapes: `(batch, heads, n, d_k)`")
    assert "X_batch = " in cells[i + 2].source


def test_03_calls_what_it_measured_dw_dq_not_gradient() -> None:
    """Lesson 03 measured the median Jacobian |dw/dq|, not a loss's gradient."""
    text = " ".join(text_of(lesson("03_")).split())
    assert "more gradient" not in text and "has the gradient collapsed" not in text
    assert ("the unscaled query gets a *larger* median |dw/dq| than the scaled one") in text
    assert "It is not the gradient of a loss" in text
    assert "unscaled at $d_k = 256$, about half of the rows get next to none" in text
    assert 0.4 < _step0(256, False).near_zero < 0.6  # lesson 13's measurement


def test_10_bert_has_a_padding_mask() -> None:
    text = " ".join(text_of(lesson("10_")).split())
    assert "BERT use no mask at all" not in text
    assert "BERT use no causal mask (only a padding mask" in text


def test_12_derives_dp_and_dv_as_it_derives_dq_and_dk() -> None:
    """dP = dO V^T and dV = P^T dO, entry by entry from O = PV, checked on numbers."""
    import course_lib as cl

    text = text_of(lesson("12_"))
    assert "$\\partial O_{il}/\\partial P_{ij} = V_{jl}$" in text
    assert "$dP_{ij} = \\sum_l dO_{il}\\, V_{jl}$, which is\n$dP = dO\\,V^T$" in text
    assert "$dV_{jl} = \\sum_i P_{ij}\\, dO_{il}$, which is $dV = P^T dO$" in text
    rng = np.random.default_rng(0)
    Q, K, V, dO = (rng.normal(size=s) for s in ((3, 2), (4, 2), (4, 3), (3, 3)))
    P = cl.attention_weights(Q, K)
    dV_entries = np.array([[sum(P[i, j] * dO[i, col] for i in range(3)) for col in range(3)]
                           for j in range(4)])
    np.testing.assert_allclose(dV_entries, cl.attention_backward(Q, K, V, dO)[2])


def test_14_says_the_causal_tiles_skip_arithmetic() -> None:
    """'Neither saves time' was wrong for the causal case: hidden tiles are never computed."""
    from course_lib import tiled

    text = " ".join(text_of(lesson("14_")).split())
    assert "neither saves time" not in text
    grid = tiled.computed_tiles(4096, 4096, block_q=64, block_k=64, causal=True)
    skipped = grid.size - int(grid.sum())
    assert f"skips every tile the mask hides ({skipped} of the {grid.size} tiles at $n = 4096$" \
        in text
    assert f"n = 4096, tiles of 64 × 64: {int(grid.sum())} of {grid.size} computed" in text


def test_checkpoint_q1_does_not_say_masked_models_hide_a_token_from_itself() -> None:
    nb = nbformat.read(NOTEBOOKS.parent / "quiz" / "source" / "checkpoint" / "checkpoint.ipynb",
                       as_version=4)
    text = " ".join("\n".join(c.source for c in nb.cells).split())
    assert "a model must not let a token read its own value" not in text
    assert "BERT does not need it, because it replaces a token it predicts by [MASK]" in text


def test_checkpoint_q5_makes_no_claim_in_public() -> None:
    """Issue 40: the rubric withheld credit from 'the gradient vanishes' and said rows at d_k
    32-128 are 'peaked but not one-hot' (lesson 03: median largest weight 0.970 at 128).
    Issue 41 then moved the written question's model answer and rubric into the instructor's
    private source (``python -m course_grading.variants --written FILE``): neither the spec
    nor the public quiz says anything about the gradient or how peaked the rows are, so no
    public sentence of question 5 can be false, or answer it."""
    from course_lib.experiments.scaling import scaling_stats
    from course_quiz.checkpoint_spec import CHECKPOINT

    written = CHECKPOINT.question("written_shift_or_scale")
    assert not hasattr(written, "rubric")
    nb = nbformat.read(ROOT / "quiz" / "source" / "checkpoint" / "checkpoint.ipynb", 4)
    [cell] = [c for c in nb.cells
              if c.metadata.get("nbgrader", {}).get("grade_id") == "written_shift_or_scale"]
    text = " ".join(cell.source.split())
    assert "No model answer or rubric here" in text
    for claim in ("gradient", "peaked but not one-hot", "one-hot", "no credit"):
        assert claim not in text, claim
    assert f"{scaling_stats(128, scale=False).median_max_weight:.2f}" == "0.97"  # lesson 03


# -------------------------------- stored timings that agree with their text (issue 40)

_UNITS = {"ns": 1e-9, "µs": 1e-6, "ms": 1e-3, "s": 1.0}


def _seconds(text: str) -> float:
    number, unit = text.split()
    return float(number) * _UNITS[unit]


def _measurement_output(prefix: str, call: str) -> str:
    [cell] = [c for c in nbformat.read(lesson(prefix), as_version=4).cells
              if c.cell_type == "code" and call in c.source
              and "measurement" in c.metadata.get("tags", [])]
    return "".join(o.get("text", "") for o in cell.outputs)


def test_10_stored_timing_has_the_shape_its_text_states() -> None:
    """Lesson 10 once stored 584 µs at n = 64, 93 ms at 128, 70 ms at 256 and a fitted
    slope of 0.65 beside 'slope close to 2'. Its fastest times grow with n, and the slope
    lies in the range the text states."""
    from course_lib.experiments.cost import QUADRATIC_SLOPES

    text = " ".join(text_of(lesson("10_")).split())
    low, high = QUADRATIC_SLOPES
    assert f"the fastest times' slope lies between {low} and {high:g}" in text
    assert f"a slope between {low} and {high:g} for $n \\ge 256$" in text
    rows = [line.split() for line in _measurement_output("10_", "measure_attention").splitlines()
            if line.split() and line.split()[0].isdigit()]
    times = [_seconds(" ".join(r[1:3])) for r in rows]
    assert len(times) == 6 and all(a < b for a, b in itertools.pairwise(times)), times
    slope = float(re.search(r"fitted slope (\d\.\d\d) for n >= 256", text).group(1))
    assert low <= slope <= high
    assert "slope of the count: 2.00" in text


def test_14_and_15_stored_timings_grow_with_n_and_the_cache_is_faster() -> None:
    """Lesson 15 once stored 36 ms at n = 256 and 26.7 ms at 1024 for the recomputation."""
    for prefix, call in (("14_", "measure_tiled_cost"), ("15_", "measure_kv_cache_cost")):
        rows = [line.split() for line in _measurement_output(prefix, call).splitlines()
                if line.split() and line.split()[0].isdigit()]
        assert len(rows) == 4
        # n, peak (2 words), time (2 words), peak (2 words), time (2 words)
        first = [_seconds(" ".join(r[3:5])) for r in rows]
        second = [_seconds(" ".join(r[7:9])) for r in rows]
        assert all(a < b for a, b in itertools.pairwise(first)), (prefix, first)
        if prefix == "14_":
            assert all(a < b for a, b in itertools.pairwise(second)), (prefix, second)
        else:
            assert all(c < r for r, c in zip(first, second, strict=True))


def test_13_stuck_rows_are_not_said_to_stay_stuck_one_by_one() -> None:
    """A teacher's run (issue 40): the stuck *fraction* grows, but row by row the stuck set
    changes: of the held-out rows stuck at the start of lesson 13's unscaled d_k = 64 run,
    about half are no longer stuck after it, and most rows stuck at the end were not stuck
    at the start. The lesson said "nothing frees it" and "the stuck rows stay stuck"."""
    from course_lib.experiments import training

    text = " ".join(text_of(lesson("13_")).split())
    run = training.train(64, scale=False, steps=120)
    held = training.sample_batch(n=1024, seed=0)
    start = training.row_gradients(*training.initial_weights(64), held, scale=False)
    end = training.row_gradients(run.W_Q, run.W_K, held, scale=False)
    stuck0 = (start.score_grad < training.NEAR_ZERO) & ~start.correct
    stuck1 = (end.score_grad < training.NEAR_ZERO) & ~end.correct
    assert stuck1.mean() > stuck0.mean()  # the fraction grows
    assert stuck1[stuck0].mean() < 0.8 and (~stuck0[stuck1]).mean() > 0.3  # the set churns
    assert "nothing frees it" not in text and "stay stuck" not in text
    assert "those free some stuck rows and stick others" in text
    assert "**On `match` at $d_k$ = 64 and 256 the stuck fraction grows.**" in text


# ------------------------------------------------------------------ part 1, read again (issue 44)

def test_02_backs_its_claim_that_scores_checks_its_inputs() -> None:
    """Lesson 02 said `scores` "checks its inputs first" and that "the error message says so"
    with no cell showing either: the printed line was the lesson's own words, not numpy's.
    Now a cell hands `scores` a transposed K and prints the library's message."""
    import course_lib as cl

    nb = nbformat.read(NOTEBOOKS / "02_scores.ipynb", as_version=4)
    text = text_of(NOTEBOOKS / "02_scores.ipynb")
    assert "the error\nmessage says so" not in text
    rng = np.random.default_rng(0)
    Q2, K4 = rng.normal(size=(2, 3)), rng.normal(size=(4, 3))
    with pytest.raises(cl.AttentionInputError) as refused:
        cl.scores(Q2, K4.T)
    [cell] = [c for c in nb.cells if c.cell_type == "code" and "scores(Q2, K4.T)" in c.source]
    assert cell.outputs[0]["text"] == f"AttentionInputError: {refused.value}\n"
    assert "K has d_k=4 columns but Q has d_k=3" in str(refused.value)


def test_06_does_not_credit_k_equals_q_alone_for_the_self_weight() -> None:
    """Lesson 06 said every token gives itself the most "because its keys are its queries".
    K = Q is not enough: a longer key in the same direction beats a query's own. In the
    example no token gives another more than itself, and the one longer key (sat's) ties."""
    import course_lib as cl

    longer = np.array([[1.0, 0.0], [2.0, 0.0]])
    w = cl.attention_weights(longer, longer)
    assert w[0, 1] > w[0, 0]  # K = Q, and 'the' of this pair attends most to the other
    ex = cl.the_cat_sat()
    w = cl.attention_weights(ex.Q, ex.K)
    assert all(w[i, i] >= w[i].max() - 1e-12 for i in range(3))
    assert np.isclose(w[0, 0], w[0, 2]) and np.isclose(w[1, 1], w[1, 2])  # sat's key ties
    text = " ".join(text_of(NOTEBOOKS / "06_worked_example.ipynb").split())
    assert "because its keys are its queries" not in text
    # sat's weights are printed by the table of every row, not also on a line before it
    assert "weights :" not in text and "Rows 'the' and 'cat' come out as" not in text
    assert ("the one longer key here, the key of 'sat', $[1, 1]$, only ties with the keys of "
            "'the' and 'cat'") in text


def test_07_shows_the_all_hidden_row_without_rewriting_the_stable_softmax() -> None:
    """Lesson 07's NaN row is the textbook formula's (lesson 04 teaches the shift), and the
    lesson says why the shift would not save it; the printed NaN row is what numpy gives."""
    nb = nbformat.read(NOTEBOOKS / "07_causal_masking.ipynb", as_version=4)
    [cell] = [c for c in nb.cells if c.source.startswith("all_hidden = ")]
    assert ".max(" not in cell.source
    scores = np.array([[0.71, -np.inf, -np.inf], [-np.inf] * 3, [0.71, 0.71, 1.41]])
    with np.errstate(invalid="ignore"):
        rows = np.exp(scores) / np.exp(scores).sum(axis=-1, keepdims=True)
    assert np.isnan(rows[1]).all() and not np.isnan(rows[[0, 2]]).any()
    assert "[ nan  nan  nan]" in cell.outputs[0]["text"]
    text = " ".join(text_of(NOTEBOOKS / "07_causal_masking.ipynb").split())
    assert "04's stable softmax does not save it" in text


# ------------------------------------------- lesson 13, a teacher's review (issue 40, again)

def _lesson_13_text() -> str:
    return " ".join(text_of(lesson("13_")).split())


def _pct(x: float, digits: int = 0) -> str:
    """A fraction as the lesson writes it: 0.24 -> '24 %'."""
    return f"{x:.{digits}%}".replace("%", " %")


@functools.cache
def _at_rate(task: str, loss: str, d_k: int, scale: bool, learning_rate: float,
             seeds: tuple[int, ...] = (0, 1, 2)) -> tuple[float, ...]:
    """Held-out accuracy of 400-step runs at one learning rate, one per seed (the table's
    budget and seeds, at a rate the table's rule may not have picked)."""
    from course_lib.experiments import training

    return tuple(training.train(d_k, scale=scale, task=task, loss=loss,
                                learning_rate=learning_rate, seed=s).final_accuracy
                 for s in seeds)


def _span(values) -> str:
    return f"{min(values):.2f} to {max(values):.2f}"


def test_13_quotes_the_same_rate_where_the_rule_picked_different_ones() -> None:
    """The table picks each condition's rate by held-out *loss*. On `argmax` with
    cross-entropy at d_k 256 that gave 0.003 scaled and 0.001 unscaled, and the lesson set
    0.57 against 0.20 side by side; at the same rate, 0.003, the unscaled head reaches about
    0.42. With the output error, the loss's rate (0.001) gives the scaled head 0.20, while
    0.003 gives it about 0.30. Each number the lesson quotes beside the table's is measured
    here, at the table's budget and seeds."""
    from course_lib.experiments import training

    text = _lesson_13_text()
    _, table = training.load_table()
    row = {(r.task, r.loss, r.d_k, r.scale): r for r in table}
    assert "the one of a grid with the lowest held-out loss" in text
    # argmax, cross-entropy, d_k 256: different rates; at the scaled head's rate the gap
    scaled, unscaled = row["argmax", "cross_entropy", 256, True], \
        row["argmax", "cross_entropy", 256, False]
    assert scaled.learning_rate == 0.003 != unscaled.learning_rate
    same = _at_rate("argmax", "cross_entropy", 256, False, 0.003)
    gap = scaled.accuracy()[0] - float(np.mean(same))
    assert max(same) < scaled.accuracy()[1] and gap > 0.1  # beyond the seeds' spread
    assert (f"at the same rate, 0.003, the unscaled head reaches {_span(same)}, and a gap of "
            f"{gap:.2f} remains") in text
    assert "0.57 against 0.20. Cross-entropy hides" not in text
    # argmax, output error, d_k 256, scaled: the loss's rate is not the accuracy's
    oe = row["argmax", "output_error", 256, True]
    assert oe.learning_rate == 0.001
    better = _at_rate("argmax", "output_error", 256, True, 0.003)
    assert min(better) > oe.accuracy()[2]  # every seed better at 0.003 than any at 0.001
    assert f"at 0.003 it reaches {_span(better)}" in text
    # where the rule picked another rate for an unscaled output-error head, 0.003 does no
    # better: still far behind the scaled heads
    others = {(task, d): _at_rate(task, "output_error", d, False, 0.003)
              for task, d in (("match", 256), ("argmax", 64), ("argmax", 256))}
    for task, d in others:
        assert row[task, "output_error", d, False].learning_rate != 0.003
        assert max(others[task, d]) < row[task, "output_error", d, True].accuracy()[1] - 0.1
    argmax = others["argmax", 64] + others["argmax", 256]
    # on `match` at 256 every seed is a little better at 0.003 than any at the table's rate
    # (a re-review measured it: "does no better" was false as worded); hardly better
    chosen = row["match", "output_error", 256, False]
    _, low, high = chosen.accuracy()
    assert min(others["match", 256]) > high
    assert float(np.mean(others["match", 256])) - chosen.accuracy()[0] < 0.05
    assert "it does no better" not in text
    assert (f"at 0.003 it does hardly better: {_span(others['match', 256])} on `match` at "
            f"256 ({low:.2f} to {high:.2f} at {chosen.learning_rate:g}), {_span(argmax)} on "
            "`argmax`") in text


def test_13_reads_no_direction_into_the_unscaled_rate_at_256() -> None:
    """The lesson said the unscaled rate 'moves down to 0.001, the direction the fold
    points'. The rule's margin for 0.001 over 0.003 (held-out loss, match, output error,
    d_k 256) is a few per cent on the tuning seed and reverses on another, and the accuracy
    is higher at 0.003 on every tuning seed measured here."""
    from course_lib.experiments import training

    text = _lesson_13_text()
    _, table = training.load_table()
    [row] = [r for r in table if (r.task, r.loss, r.d_k, r.scale)
             == ("match", "output_error", 256, False)]
    assert row.learning_rate == 0.001
    sweep = {lr: (loss, acc) for lr, loss, acc in row.sweep}
    by_seed = {1000: (sweep[0.001], sweep[0.003])}
    for seed in (1001, 1002, 1003):
        runs = [training.train(256, scale=False, learning_rate=lr, seed=seed)
                for lr in (0.001, 0.003)]
        by_seed[seed] = tuple((r.final_loss, r.final_accuracy) for r in runs)
    margin = {s: (b[0] - a[0]) / b[0] for s, (a, b) in by_seed.items()}  # 0.003's loss above
    reversed_on = [s for s in by_seed if margin[s] <= 0]
    assert reversed_on == [1003] and max(margin.values()) < 0.03
    assert all(b[1] > a[1] for a, b in by_seed.values())  # accuracy: 0.003 on every seed
    assert (f"at most {_pct(max(margin.values()), 1)} lower than at 0.003 on tuning seeds 1000 "
            "to 1002, and on seed 1003 not lower at all, while the accuracy is higher at 0.003 on "
            "all four") in text
    assert "the direction the fold" not in text
    assert "The grid shows the direction" not in text


def test_13_says_a_fifth_to_a_quarter_at_64_and_its_median_is_larger_unscaled() -> None:
    """At d_k 64, unscaled, 19 % to 24 % of 512 rows start near 0 over seeds 0 to 4 (the
    lesson said 'about a quarter'), and the median gradient on W_Q is larger unscaled on
    every one of those seeds (only at 256 is it smaller)."""
    from course_lib.experiments import training

    text = _lesson_13_text()
    near, medians = [], []
    for seed in range(5):
        batch = training.sample_batch(n=512, seed=seed)
        W_Q, W_K = training.initial_weights(64, seed=seed)
        rows = [training.row_gradients(W_Q, W_K, batch, scale=s) for s in (False, True)]
        near.append(rows[0].near_zero)
        medians.append([float(np.median(r.wq_grad)) for r in rows])
    assert 0.18 < min(near) and max(near) < 0.26  # between a fifth and a quarter
    assert all(unscaled > scaled for unscaled, scaled in medians)
    assert "about a quarter" not in text
    assert (f"a fifth to a quarter of the rows are near 0 ({_pct(near[0])} in this batch; "
            f"{_pct(min(near))} to {_pct(max(near))} over seeds 0 to 4)") in text
    assert (f"the median gradient on $W_Q$ is *larger* unscaled ({medians[0][0]:.2f} against "
            f"{medians[0][1]:.2f}; larger on each of those seeds)") in text
    assert "a fifth to a quarter at 64 at the start" in text


def test_13_cross_entropy_on_match_leaves_a_gap_at_256() -> None:
    """The lesson said the gap 'nearly closes' on `match` with cross-entropy, quoting 0.81
    against 0.73 at d_k 256, where the three seeds' ranges do not even overlap. It nearly
    closes at d_k 16; at 256 a gap remains, measured on the stored table."""
    from course_lib.experiments import training

    text = _lesson_13_text()
    _, table = training.load_table()
    acc = {(r.d_k, r.scale): r.accuracy() for r in table
           if (r.task, r.loss) == ("match", "cross_entropy")}
    small = acc[16, True][0] - acc[16, False][0]
    gap = acc[256, True][0] - acc[256, False][0]
    assert small < 0.03 and acc[16, False][2] >= acc[16, True][1]  # ranges meet at 16
    assert acc[256, False][2] < acc[256, True][1] and gap > 0.05  # apart at 256
    assert (f"On `match` the gap nearly closes at $d_k = 16$ ({acc[16, True][0]:.2f} against "
            f"{acc[16, False][0]:.2f}), and a gap of {gap:.2f} remains at 256 "
            f"({acc[256, True][0]:.2f} against {acc[256, False][0]:.2f}; the seeds' ranges, "
            f"{acc[256, True][1]:.2f}-{acc[256, True][2]:.2f} and "
            f"{acc[256, False][1]:.2f}-{acc[256, False][2]:.2f}, do not meet)") in text


def test_13_adams_same_size_is_said_of_the_first_step_only() -> None:
    """Adam's step is the same size scaled and unscaled by construction on its first step
    only (its running averages then differ); every sentence of lesson 13 and of its check's
    feedback that says 'same size' says 'first'."""
    from course_lib import checks

    said = [" ".join(str(checks.check_what_went_wrong(lambda: "C")).split())]
    text = " ".join(markdown_of(lesson("13_")).split()) + " " + said[0]
    found = [s for s in re.split(r"(?<=[.!?])\s+", text) if "same size" in s]
    assert len(found) >= 3, found  # section 6, its reading, the solution (and the feedback)
    for s in found:
        assert "first" in s, s


def test_13_the_right_statement_says_most_stuck_rows_are_still_stuck() -> None:
    """Statement B said the saturated rows 'stay wrong'; section 5 says the updates 'free some
    stuck rows and stick others'. Measured on the exercise's run (match, output error, d_k
    256, unscaled, the table's rate and seeds), of the held-out rows stuck at the start more
    than half, not all, are still stuck after training."""
    from course_lib.experiments import training

    text = _lesson_13_text()
    still = []
    for seed in range(3):
        run = training.train(256, scale=False, learning_rate=0.001, seed=seed)
        held = training.held_out_batch(task="match", seed=seed)
        start = training.row_gradients(*training.initial_weights(256, seed=seed), held,
                                       scale=False)
        end = training.row_gradients(run.W_Q, run.W_K, held, scale=False)
        stuck0 = (start.score_grad < training.NEAR_ZERO) & ~start.correct
        stuck1 = (end.score_grad < training.NEAR_ZERO) & ~end.correct
        still.append(float(stuck1[stuck0].mean()))
    assert 0.5 < min(still) and max(still) < 0.9
    assert "stay wrong" not in text
    # the right statement (now C) claims only what the lesson prints above it: the table's
    # stuck fraction at the end against the same rows' at the start (section 7); the
    # row-by-row share is the solution's
    assert "training did not free them" not in text  # row by row it frees 42-44 %
    assert ("and training did not bring their share down: on each of the table's seeds, more "
            "of the same held-out rows were stuck after 400 steps than at the start") in text
    assert "most of them are still stuck after training" not in text
    cells = nbformat.read(lesson("13_"), as_version=4).cells
    printed = "".join(o.get("text", "") for c in cells if c.cell_type == "code"
                      for o in c.get("outputs", []))
    start = re.search(r"256 unscaled .*?(\d+)%\s*$", printed, flags=re.M)
    end = re.search(r"match\s+output_error d_k = 256 unscaled: held-out rows stuck after "
                    r"training\s+([\d.]+)% to\s+([\d.]+)%", printed)
    assert start and end and float(end[1]) > float(start[1]), (start, end)
    assert (f"{_pct(min(still))} to {_pct(max(still))} are still stuck after the table's 400 "
            "steps") in text
    still_64 = []
    for seed in range(3):  # the table's rate at 64 is 0.003
        run = training.train(64, scale=False, learning_rate=0.003, seed=seed)
        held = training.held_out_batch(seed=seed)
        ends = [training.row_gradients(W_Q, W_K, held, scale=False) for W_Q, W_K in
                (training.initial_weights(64, seed=seed), (run.W_Q, run.W_K))]
        stuck0, stuck1 = ((r.score_grad < training.NEAR_ZERO) & ~r.correct for r in ends)
        still_64.append(float(stuck1[stuck0].mean()))
    assert (f"at 256, of the rows stuck at the start, {_pct(min(still))} to {_pct(max(still))} "
            f"are still stuck at the end (at 64, {_pct(min(still_64))} to {_pct(max(still_64))})"
            ) in text
    assert "those free some stuck rows and stick others" in text


def test_13_the_seeds_sentence_is_read_after_the_exercise_not_above_it() -> None:
    """The paragraph that reads the seed's sentence against the measurements answers the
    exercise 'what went wrong at d_k = 256?': it stood right above it. It now follows the
    exercise's check and solution."""
    cells = nbformat.read(lesson("13_"), as_version=4).cells
    [check] = [i for i, c in enumerate(cells) if "check_what_went_wrong" in c.source]
    [exercise] = [i for i, c in enumerate(cells) if c.source.startswith("## Exercise: what went")]
    found = [i for i, c in enumerate(cells) if "So the seed's sentence" in c.source]
    assert found and all(i > check for i in found)
    solution = next(i for i in range(check, len(cells)) if "solution" in
                    cells[i].metadata.get("tags", []))
    assert all(i > solution for i in found)
    assert not any("does not hold for the batch's mean gradient" in c.source
                   for c in cells[:exercise])


def test_13_says_what_adam_and_the_stuck_growth_hold_for() -> None:
    """A re-review with its own runs: Adam is blind to one constant factor on every gradient
    (its update m/sqrt(v) is), not to the gradients' sizes relative to each other; and the
    stuck fraction grows through training on `match` (the table: 46-48 % at 256 after, 40 %
    at the start) but not on `argmax`, where one seed's shrinks. Measured here: Adam's first
    steps on a gradient and on 1000 times it agree to its epsilon, and not on the same
    gradient with one entry scaled."""
    text = _lesson_13_text()
    rng = np.random.default_rng(0)
    grads = [rng.normal(size=(4, 3)) for _ in range(5)]

    def adam_steps(gs):
        m = v = np.zeros((4, 3))
        out = []
        for t, g in enumerate(gs, 1):
            m, v = 0.9 * m + 0.1 * g, 0.999 * v + 0.001 * g * g
            out.append((m / (1 - 0.9 ** t)) / (np.sqrt(v / (1 - 0.999 ** t)) + 1e-8))
        return np.array(out)

    assert np.allclose(adam_steps(grads), adam_steps([1000 * g for g in grads]), atol=1e-6)
    bent = [g.copy() for g in grads]
    for g in bent[2:]:
        g[0, 0] *= 1000
    assert not np.allclose(adam_steps(grads), adam_steps(bent), atol=1e-3)
    for said in ("size of the gradient no longer matters at all",
                 "Adam makes the gradient's size irrelevant"):
        assert said not in text
    assert "With Adam a constant factor on every gradient no longer matters" in text
    assert "Adam makes a constant factor on the gradient irrelevant" in text
    assert "more of them stuck by the end" not in text  # row by row training frees some
    assert ("and on `match`, at 64 and 256, a larger share of the rows stuck by the end (on the "
            "table's seeds; row by row training frees some and sticks others)") in text


def _held_out_stuck(d_k: int, seed: int, W_Q=None, W_K=None) -> float:
    """The stuck fraction of the held-out rows of the table's run (match, output error,
    unscaled) at the start, or with the weights given."""
    from course_lib.experiments import training

    if W_Q is None:
        W_Q, W_K = training.initial_weights(d_k, seed=seed)
    held = training.held_out_batch(task="match", seed=seed)
    return training.row_gradients(W_Q, W_K, held, scale=False).stuck


def test_13_the_batch_gradient_is_a_mean_of_matrices_not_of_their_sizes() -> None:
    """A re-review: section 3 said 'the batch's gradient is the mean of these', of the
    examples' gradient *sizes*. It is the mean of the matrices, whose size is far smaller
    than the mean of theirs (they point different ways): at d_k 256 unscaled/scaled 8.2x
    for the batch's against 4.3x for the mean size. Section 3 now prints the batch's."""
    from course_lib.experiments import training

    text = _lesson_13_text()
    assert "The batch's gradient is the mean of these" not in text
    assert ("The batch's gradient, the one a step follows, is the mean of the examples' "
            "gradients: a mean of matrices") in text
    start = training.sample_batch(n=512)
    W_Q, W_K = training.initial_weights(256)
    # the batch's gradient is the mean of the examples' own (a few of them, one by one)
    _, dW_Q, _ = training.loss_and_gradients(W_Q, W_K, training.sample_batch(n=8), scale=False)
    few = training.sample_batch(n=8)
    one_by_one = [training.loss_and_gradients(
        W_Q, W_K, training.Batch(few.task, few.queries[i:i + 1], few.keys[i:i + 1],
                                 few.target[i:i + 1]), scale=False)[1] for i in range(8)]
    np.testing.assert_allclose(np.mean(one_by_one, axis=0), dW_Q, rtol=1e-10, atol=1e-14)
    size, mean_size = {}, {}
    for s in (True, False):
        size[s] = np.linalg.norm(training.loss_and_gradients(W_Q, W_K, start, scale=s)[1])
        mean_size[s] = training.row_gradients(W_Q, W_K, start, scale=s).wq_grad.mean()
        assert size[s] < mean_size[s] / 5
    assert size[False] / size[True] > 1.5 * mean_size[False] / mean_size[True]
    printed = "".join(o.get("text", "") for c in nbformat.read(lesson("13_"), 4).cells
                      if c.cell_type == "code" for o in c.get("outputs", []))
    line = re.search(r"^256 unscaled\s+[\d.]+\s+([\d.]+)\s+([\d.]+)", printed, flags=re.M)
    assert line and line[1] == f"{size[False]:.2f}" and line[2] == f"{mean_size[False]:.2f}"
    assert f"({size[False]:.2f} against {size[True]:.2f}; not A)" in text


def test_13_compares_the_stuck_fraction_on_the_same_held_out_rows() -> None:
    """A re-review: 'more than at the start (section 3: 40 % and 18 %)' set the table's
    held-out rows after training beside section 3's training batch at the start. Section 7
    now prints the same held-out rows at the start, seed by seed; every seed of the table
    ends with more stuck at 64 and 256, by 17-22 points at 64 and about 4 at 256."""
    from course_lib.experiments import training

    text = _lesson_13_text()
    _, table = training.load_table()
    row = {r.d_k: r for r in table if (r.task, r.loss, r.scale) == ("match", "output_error",
                                                                      False)}
    start = {d: [_held_out_stuck(d, seed) for seed in range(3)] for d in (64, 256)}
    end = {d: [run[3] for run in row[d].runs] for d in (64, 256)}
    assert [run[0] for run in row[256].runs] == [0, 1, 2]
    rise = {d: [e - s for s, e in zip(start[d], end[d], strict=True)] for d in (64, 256)}
    assert min(rise[64]) > 0.1 and 0.02 < min(rise[256]) and max(rise[256]) < 0.06
    assert "(section 3: 40 % and 18 %)" not in text
    assert (f"by {100 * min(rise[64]):.0f} to {100 * max(rise[64]):.0f} points at 64 but only "
            f"{100 * np.mean(rise[256]):.0f} at 256") in text
    printed = "".join(o.get("text", "") for c in nbformat.read(lesson("13_"), 4).cells
                      if c.cell_type == "code" for o in c.get("outputs", []))
    for d in (64, 256):
        line = re.search(rf"^  d_k = {d:3d}:  (.*)$", printed, flags=re.M)
        assert line and line[1] == ",  ".join(
            f"seed {k}: {s:5.1%} -> {e:5.1%}" for k, (s, e) in
            enumerate(zip(start[d], end[d], strict=True))), line
    assert (f"{_pct(min(end[256]))} to {_pct(max(end[256]))} of the held-out rows stuck after "
            f"400 steps, against {_pct(min(start[256]))} to {_pct(max(start[256]))} of the "
            "same rows at the start (not B)") in text


def test_13_the_peaked_rows_candidate_is_said_of_match_only() -> None:
    """A re-review: the candidate 'merely peaked rows' for argmax at d_k 16 was backed by
    section 3's 10 % quantile, ten times smaller unscaled: that is match, seed 0 (4-13x over
    seeds 0-4); on argmax at d_k 16 the start's ratio is 1.1-1.5x."""
    from course_lib.experiments import training

    text = _lesson_13_text()
    ratio = {}
    for task in training.TASKS:
        ratio[task] = []
        for seed in range(5):
            W = training.initial_weights(16, seed=seed)
            batch = training.sample_batch(task=task, n=512, seed=seed)
            low = [np.quantile(training.row_gradients(*W, batch, scale=s).score_grad, 0.1)
                   for s in (True, False)]
            ratio[task].append(low[0] / low[1])
    assert 8 < ratio["match"][0] < 13 and max(ratio["argmax"]) < 2
    assert (f"ten times smaller unscaled ({min(ratio['match']):.0f} to "
            f"{max(ratio['match']):.0f} times over seeds 0 to 4), but on `argmax` at $d_k = 16$ "
            f"only {min(ratio['argmax']):.1f} to {max(ratio['argmax']):.1f} times at the start "
            "(seeds 0 to 4), so this lesson has no evidence for that candidate there") in text


def test_13_the_exercise_is_decided_by_printed_numbers_not_by_the_reveal() -> None:
    """A re-review: the exercise's right statement restated section 3's reveal, so it tested
    recall. Now two statements share the start that the reveal describes and differ in what
    training did, which only section 7's numbers decide; each wrong letter is contradicted
    by a number measured here."""
    from course_lib.experiments import training

    cells = nbformat.read(lesson("13_"), as_version=4).cells
    [ex] = [i for i, c in enumerate(cells) if c.source.startswith("## Exercise: what went")]
    statements = dict(re.findall(r"- \*\*([A-E])\.\*\* (.*?)(?=\n- \*\*|\n\nReturn)",
                                 cells[ex].source, flags=re.S))
    statements = {k: " ".join(v.split()) for k, v in statements.items()}
    assert sorted(statements) == list("ABCDE")
    start_claim = "(about half of the rows sent back less than 0.001 through softmax)"
    assert start_claim in statements["B"] and start_claim in statements["C"]
    assert "training freed most of them" in statements["B"]
    assert ("training did not bring their share down: on each of the table's seeds, more of "
            "the same held-out rows were stuck after 400 steps than at the start"
            ) in statements["C"]
    above = " ".join(" ".join(c.source.split()) for c in cells[:ex] if c.cell_type == "markdown")
    table = next(i for i, c in enumerate(cells) if "format_table(table)" in c.source)
    reveal = [c.source for c in cells[:table] if "reveal" in c.metadata.get("tags", [])]
    assert not any("after training" in r or "400 steps" in r for r in reveal)
    assert "the stuck fraction grows.**" in above  # section 7 reads the table (after it)
    # the numbers: B and C differ by the held-out rows; A by the batch's gradient; E by
    # cross-entropy at the start
    _, rows = training.load_table()
    [run] = [r for r in rows if (r.task, r.loss, r.d_k, r.scale)
             == ("match", "output_error", 256, False)]
    assert all(end[3] > _held_out_stuck(256, seed) for seed, end in enumerate(run.runs))
    W_Q, W_K = training.initial_weights(256)
    start = training.sample_batch(n=512)
    sizes = [np.linalg.norm(training.loss_and_gradients(W_Q, W_K, start, scale=s)[1])
             for s in (True, False)]
    assert sizes[1] > sizes[0]  # not A
    assert training.row_gradients(W_Q, W_K, start, scale=False,
                                  loss="cross_entropy").stuck == 0  # not E
    from course_lib import checks

    assert checks.check_what_went_wrong(lambda: "C")
    assert not any(checks.check_what_went_wrong(lambda x=x: x) for x in "ABDE")


def test_13_a_stuck_row_is_not_said_to_be_unmovable() -> None:
    """A re-review: section 3 defined stuck rows as rows 'no signal will move'; of the
    held-out rows stuck at the start of the table's d_k 256 run (seed 0), 42 % are free after
    it. A stuck row sends back almost no gradient of its own (below NEAR_ZERO on its
    scores, not 0); others' updates can move it."""
    from course_lib.experiments import training

    text = _lesson_13_text()
    run = training.train(256, scale=False, learning_rate=0.001, seed=0)
    held = training.held_out_batch(seed=0)
    rows = [training.row_gradients(W_Q, W_K, held, scale=False)
            for W_Q, W_K in (training.initial_weights(256), (run.W_Q, run.W_K))]
    stuck = [(r.score_grad < training.NEAR_ZERO) & ~r.correct for r in rows]
    assert (~stuck[1][stuck[0]]).mean() > 0.3  # freed by the updates of other rows
    for said in (text, training.__doc__):
        assert "no signal will move" not in said
    assert 0 < rows[0].score_grad[stuck[0]].max() < training.NEAR_ZERO  # small, not none
    assert "no gradient of its own" not in text.replace("almost no gradient of its own", "")
    assert ("(*stuck*: it sends back almost no gradient of its own, below 0.001 on its scores; "
            "only the updates that other rows drive can move it)") in text


def test_13_at_256_the_share_need_not_rise() -> None:
    """A re-review: at d_k 256 the stuck share rises by about 4 points on the table's seeds,
    and on seed 4 it stays level (44.6 % -> 44.3 % here); the lesson says so, and names the
    task where the summary says the share grows (on argmax at 256 seed 1's shrinks)."""
    from course_lib.experiments import training

    text = _lesson_13_text()
    run = training.train(256, scale=False, learning_rate=0.001, seed=4)
    assert abs(run.final_stuck - _held_out_stuck(256, 4)) < 0.005
    assert "on seed 4, not in the table, it stays level (within half a point)" in text
    assert "At 256 the rise is small: on seed 4 the share stays level." in text
    _, table = training.load_table()
    [argmax] = [r for r in table if (r.task, r.loss, r.d_k, r.scale)
                == ("argmax", "output_error", 256, False)]
    seed, _, _, after = argmax.runs[1]
    at_start = training.row_gradients(*training.initial_weights(256, seed=seed),
                                      training.held_out_batch(task="argmax", seed=seed),
                                      scale=False).stuck
    assert after < at_start  # so "the stuck fraction grows" needs its task
    [summary] = [c.source for c in nbformat.read(lesson("13_"), 4).cells
                 if c.source.startswith("## Summary")]
    summary = " ".join(summary.split())
    assert "the stuck fraction grows with training" not in summary.replace(
        "on `match` the stuck fraction grows with training", "")
    assert "on `match` the stuck fraction grows with training (by 4 points at 256" in summary


def test_13_section_4_does_not_answer_question_3_above_it() -> None:
    """A re-review: question 3 asks whether cross-entropy leaves 'the same' rows near 0 or
    'near 0'; section 4's heading above it said 'The loss decides what saturation costs' and
    the learning goals 'why the loss matters ... what each does to the saturated rows'."""
    cells = nbformat.read(lesson("13_"), as_version=4).cells
    [ask] = [i for i, c in enumerate(cells) if "my_loss_guess = ..." in c.source]
    above = " ".join(" ".join(c.source.split()) for c in cells[:ask] if c.cell_type == "markdown")
    for said in ("The loss decides", "why the loss matters", "what each does to the saturated"):
        assert said not in above
    assert "## 4. The same rows, another loss" in above


def test_13_says_the_scores_move_further_not_the_steps_on_the_weights() -> None:
    """A re-review: 'the larger steps of section 6' (read as steps on W_Q, statement D) where
    section 6 measured equal first steps on W_Q and larger moves of the scores; and the
    table trained the unscaled head at a third of the scaled one's rate, which the check's
    hint for D and the solution now name."""
    from course_lib import checks
    from course_lib.experiments import training

    text = _lesson_13_text()
    _, table = training.load_table()
    rate = {r.scale: r.learning_rate for r in table
            if (r.task, r.loss, r.d_k) == ("match", "output_error", 256)}
    assert rate == {True: 0.003, False: 0.001}
    assert "the larger steps of section 6" not in text
    assert "the larger moves of the scores per step (section 6)" in text
    assert ("the table trained the unscaled head at a third of the scaled one's rate "
            f"({rate[False]:g} against {rate[True]:g})") in text
    hint = str(checks.check_what_went_wrong(lambda: "D"))
    assert "at which learning rate did the table train each head" in hint


def test_13_reads_the_argmax_rates_with_their_margins() -> None:
    """A re-review: 'the grid does not show the fold' holds of `match`, whose grid is printed;
    on `argmax` the rule picked the next lower rate for the unscaled head at 64 and 256 with
    the output error and at 256 with cross-entropy, the fold's direction, but each time by a
    held-out loss 1-4 % lower than at the second-best rate (the tuning seed's sweep)."""
    from course_lib.experiments import training

    text = _lesson_13_text()
    _, table = training.load_table()
    row = {(r.loss, r.d_k, r.scale): r for r in table if r.task == "argmax"}
    lower = sorted((loss, d) for (loss, d, s), r in row.items() if not s
                   and r.learning_rate < row[loss, d, True].learning_rate)
    assert lower == [("cross_entropy", 256), ("output_error", 64), ("output_error", 256)]
    margins = []
    for loss, d in lower:
        (best, _, _), (second, _, _) = sorted((held, lr, a) for lr, held, a in
                                              row[loss, d, False].sweep)[:2]
        margins.append((second - best) / second)
    assert 0.01 <= min(margins) and max(margins) < 0.04
    # at 64 with the output error the second-best is the lower 0.0003; 0.003 is far worse
    at_64 = {lr: held for lr, held, _ in row["output_error", 64, False].sweep}
    assert sorted(at_64, key=at_64.get)[:2] == [0.001, 0.0003]
    below = 1 - at_64[0.001] / at_64[0.003]
    assert below > 0.05
    assert (f"(at 64 with the output error the second-best is the lower 0.0003, and against 0.003 "
            f"the loss is {100 * below:.0f} % lower;") in text
    ce = {lr: a for lr, _, a in row["cross_entropy", 256, False].sweep}
    assert ("the next lower rate of the grid for the unscaled head than for the scaled one at 64 "
            "and 256 with the output error and at 256 with cross-entropy, the fold's direction, "
            f"but each time by a held-out loss only {100 * min(margins):.0f} % to "
            f"{100 * max(margins):.0f} % lower than at the second-best rate (at 64 with the "
            "output error the second-best is the lower 0.0003, and against 0.003 the loss is "
            f"{100 * below:.0f} % lower; and with cross-entropy at 256 the accuracy is higher "
            f"at 0.003: {ce[0.003]:.2f} against {ce[0.001]:.2f} on the tuning seed)") in text
