"""The lesson notebooks as stored: executed, deterministic, exercises that check, facts right.

nbval (configured in pyproject.toml) re-runs every lesson and compares its outputs; these
tests check what nbval cannot: that every code cell was executed top to bottom in one
fresh kernel, that each exercise's check rejects the stub and accepts the library's
answer, that the functions a lesson derives step by step agree with the library, and that
the lessons' stored numbers are the ones the course promises.
"""

from __future__ import annotations

import ast
import itertools
import re
import sys
from pathlib import Path

import matplotlib
import nbformat
import numpy as np
import pytest

import course_lib as cl
from course_lib import checks, heads, online_softmax, padding, projections
from course_lib.checks import predictions as guesses
from course_lib.checks import reasoning as reasoning_checks
from course_lib.experiments import scaling
from course_lib.explore.plots import NBVAL_SANITIZE

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
sys.path.insert(0, str(NOTEBOOKS.parent / "scripts"))

import lesson_index  # noqa: E402  (scripts/lesson_index.py: the notebooks, by their metadata)

INDEX = lesson_index.read_index(NOTEBOOKS)
LESSONS = [n.path for n in INDEX]  # the contents page too
LESSON_IDS = [p.stem for p in LESSONS]
#: What a student works through: the lessons and the self-study checkpoint.
CODE_LESSONS = [n.path for n in
                lesson_index.select(INDEX, kind=("lesson", "self-study checkpoint"))]

# What a correct student answer is, for each check a lesson calls: the library's function.
LIBRARY_ANSWERS = {
    "check_shapes": lambda n_q, n_k, d_k, d_v: ((n_q, n_k), (n_q, d_v)),
    "check_scores": cl.scores,
    "check_scaled_scores": cl.scaled_scores,
    "check_softmax": cl.softmax,
    "check_blend": cl.blend,
    "check_attention_weights": cl.attention_weights,
    "check_attention": lambda Q, K, V: cl.attention(Q, K, V)[0],
    "check_masked_attention": lambda Q, K, V, mask: cl.attention(Q, K, V, mask=mask)[0],
    "check_sat_output": lambda: cl.blend(cl.attention_weights(cl.the_cat_sat().Q,
                                                              cl.the_cat_sat().K),
                                         cl.the_cat_sat().V)[2],
    # lessons 08 to 11 (issue 13)
    "check_projections": projections.project,
    "check_batched_scores": cl.scaled_scores,
    "check_cross_attention": lambda Q, K, V: cl.attention(Q, K, V)[0],
    "check_model_weights": cl.attention_weights,
    "check_padded_weights": lambda Q, K, lengths: cl.attention_weights(
        Q, K, mask=padding.key_mask(lengths, heads=True)),
    # the exercises that are not fill-ins (issue 30): the answer computed, where it can be
    "check_table_sizes": lambda: [100 * 100, 100 * 8],
    "check_which_is_qkt": lambda: "A",
    "check_spread_by_hand": lambda: [2 * 3 * np.sqrt(16), 2 * 3],  # sd 2 and 3, d_k = 16
    "check_breaks_global_max": lambda: [[0.0, 1.0], [-2000.0, -2001.0]],
    "check_weights_for_point": lambda: np.linalg.solve(
        np.vstack([cl.the_cat_sat().V.T, np.ones(3)]), [0.6, 1.4, 1.0]),
    "check_sat_by_hand": lambda: [*cl.attention_weights(cl.the_cat_sat().Q,
                                                         cl.the_cat_sat().K)[2],
                                  *cl.attention(cl.the_cat_sat().Q, cl.the_cat_sat().K,
                                                cl.the_cat_sat().V)[0][2]],
    "check_own_the_output": lambda: cl.attention(cl.the_cat_sat_own_keys().Q,
                                                 cl.the_cat_sat_own_keys().K,
                                                 cl.the_cat_sat_own_keys().V)[0][0],
    "check_rows_the_bug_changes": lambda: ["the", "cat"],
    "check_mat_key": lambda: (np.array([0.6, 0.3, 0.2])
                              @ projections.embedded_example().W_K),
    "check_head_table_sizes": lambda: [8 * 100 * 100, 100 * 100],
    "check_table_bytes": lambda: [8 * 3000**2, 12 * 8 * 3000**2],
    "check_buggy_line": lambda: 2,
    # lesson 12 (issue 31)
    "check_attention_backward": cl.attention_backward,
    "check_numerical_gradient": cl.backward.numerical_gradient,
    "check_weight_gradient": lambda X, dQ: np.einsum("nqm,nqd->md", X, dQ),
    "check_terms_with_the_scale": lambda: ["dQ", "dK"],
    "check_what_went_wrong": lambda: "C",
    # lesson 14 (issue 35)
    "check_third_block": lambda: [reasoning_checks.online_example_state(3).running_sum[0],
                                  reasoning_checks.online_example_state(3).partial_output[0, 0]],
    "check_online_softmax_step": online_softmax.online_softmax_step,
    # lesson 15 (issue 35)
    "check_generate_with_cache": lambda Q, K, V: cl.attention(Q, K, V,
                                                              mask=cl.causal_mask(len(Q)))[0],
    "check_multiply_adds": lambda: [2 * 1500 * 64, 2 * 1500**2 * 64],
    # lesson 16 (issue 46): your attention in the trained model; the circuit by hand, its
    # letters read from the exercise's sequence
    "check_attend_in_model": lambda Q, K, V, mask: cl.attention(Q, K, V, mask=mask)[0],
    "check_induction_by_hand": lambda: _induction_letters(),
}


def _induction_letters() -> list[str]:
    """At the last letter of lesson 16's sequence: the letter after its earlier occurrence
    (where an induction head looks) and the letter itself (what layer 0 wrote there)."""
    from course_lib.tiny_gpt import circuit, letters

    seq = letters(circuit.exercise_sequence())
    return [seq[seq.index(seq[-1]) + 1], seq[-1]]


CHECK_CALL = re.compile(r"^checks\.(check_\w+)\((\w+)\)$")


def read(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


def code_cells(nb):
    return [c for c in nb.cells if c.cell_type == "code"]


def tags(cell) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


_NAMESPACES: dict[str, dict] = {}


def run_in_process(path: Path) -> dict:
    """Execute a lesson's code cells, in order, in one namespace (cached per module)."""
    if path.name not in _NAMESPACES:
        matplotlib.use("Agg")
        ns: dict = {"__name__": f"lesson_{path.stem}"}
        for cell in code_cells(read(path)):
            exec(compile(cell.source, f"{path.name}:{cell.get('id')}", "exec"), ns)
        _NAMESPACES[path.name] = ns
    return _NAMESPACES[path.name]


# ------------------------------------------------------------------------------ structure


def test_every_notebook_says_its_kind_and_part_and_the_parts_run_in_order():
    """scripts/lesson_index.py read every notebook (names NN_name.ipynb numbered from 00,
    the contents page first, each one's kind, part and summary); the lessons of a part
    follow each other, and every part has lessons."""
    assert INDEX[0].kind == "contents" and len(CODE_LESSONS) >= 7
    parts = [n.part for n in lesson_index.select(INDEX, kind="lesson")]
    assert parts == sorted(parts), parts
    assert set(parts) == set(lesson_index.PARTS)
    assert len(lesson_index.select(INDEX, kind="self-study checkpoint")) == 1


@pytest.mark.parametrize("path", LESSONS, ids=LESSON_IDS)
def test_kernelspec_is_python3(path):
    assert read(path).metadata["kernelspec"]["name"] == "python3"


@pytest.mark.parametrize("path", CODE_LESSONS, ids=[p.stem for p in CODE_LESSONS])
def test_executed_top_to_bottom_in_one_fresh_kernel(path):
    counts = [c.execution_count for c in code_cells(read(path))]
    assert counts == list(range(1, len(counts) + 1)), (
        f"{path.name}: execution counts {counts}; re-run it with Restart & Run All "
        "(jupyter nbconvert --to notebook --execute --inplace)"
    )


@pytest.mark.parametrize("path", CODE_LESSONS, ids=[p.stem for p in CODE_LESSONS])
def test_outputs_are_clean_and_deterministic(path):
    for cell in code_cells(read(path)):
        for out in cell.outputs:
            assert out.output_type != "error", f"{path.name}: a cell raised: {cell.source}"
            assert not (out.output_type == "stream" and out.name == "stderr"), (
                f"{path.name}: stderr output (warnings carry paths): {out.text}")
            text = out.get("text", "") + "".join(
                v for k, v in out.get("data", {}).items() if k.startswith("text/"))
            assert not re.search(r"0x[0-9a-f]{6,}", text), f"{path.name}: memory address"
            assert not re.search(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d", text), f"{path.name}: time"


@pytest.mark.parametrize("path", CODE_LESSONS, ids=[p.stem for p in CODE_LESSONS])
def test_lesson_skeleton(path):
    nb = read(path)
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert nb.cells[0].source.startswith("# "), "title first"
    assert "you will" in nb.cells[0].source and "Time:" in nb.cells[0].source
    assert next(n for n in INDEX if n.path == path).minutes, (
        "the time reads '**Time:** about N minutes' (the parts' times add them up)")
    setup = [c for c in code_cells(nb) if "setup" in tags(c)]
    assert len(setup) == 1 and code_cells(nb)[0] is setup[0], "one setup cell, first"
    assert setup[0].source.count("from course_lib import") == 1
    assert "## Summary" in markdown
    assert [c for c in code_cells(nb) if "exercise" in tags(c)], "exercises"
    assert [c for c in nb.cells if "nav" in tags(c)], "navigation cells"


@pytest.mark.parametrize("path", CODE_LESSONS, ids=[p.stem for p in CODE_LESSONS])
def test_ignore_output_only_on_live_widgets_each_driven_in_code(path):
    cells = code_cells(read(path))
    for i, cell in enumerate(cells):
        if "nbval-ignore-output" not in tags(cell):
            continue
        if "measurement" in tags(cell):  # a timing (lesson 10): its facts asserted next
            follower = next(c for c in cells[i + 1:] if "measurement" not in tags(c))
            assert "cost." in cell.source, f"{path.name}: a measurement cell measures"
            assert "nbval-ignore-output" not in tags(follower)
            assert "assert " in follower.source and follower.outputs, (
                f"{path.name}: the cell after a measurement asserts what is deterministic")
            continue
        assert "widgets." in cell.source, f"{path.name}: ignore tag on a non-widget cell"
        name = cell.source.strip().splitlines()[-1].strip()
        assert name.isidentifier(), f"{path.name}: a widget cell ends by showing its widget"
        follower = cells[i + 1]
        assert "nbval-ignore-output" not in tags(follower)
        assert name in follower.source and follower.outputs, (
            f"{path.name}: the cell after widget `{name}` must set its controls and print")


@pytest.mark.parametrize("path", CODE_LESSONS, ids=[p.stem for p in CODE_LESSONS])
def test_figures_carry_their_description(path):
    for cell in code_cells(read(path)):
        for out in cell.outputs:
            html = out.get("data", {}).get("text/html", "")
            for img in re.findall(r"<img[^>]*>", html):
                alt = re.search(r'alt="([^"]+)"', img)
                assert alt and len(alt.group(1)) > 40, f"{path.name}: figure without alt text"


def test_nbval_uses_the_libraries_sanitize_file():
    """pytest runs the lessons with the one sanitize file that blanks figure PNGs only."""
    root = NOTEBOOKS.parent
    assert "--nbval-sanitize-with tests/nbval_sanitize.cfg" in (
        root / "pyproject.toml").read_text(encoding="utf-8")
    assert (root / "tests" / "nbval_sanitize.cfg").read_text(encoding="utf-8") == NBVAL_SANITIZE


# ------------------------------------------------------------------------------ exercises


def exercise_pairs(path: Path):
    cells = code_cells(read(path))
    for stub, check in itertools.pairwise(cells):
        if "exercise" in tags(stub):
            assert "check" in tags(check), f"{path.name}: exercise without a check after it"
            yield stub, check


def test_every_lesson_has_exercises_with_checks():
    for path in CODE_LESSONS:
        pairs = list(exercise_pairs(path))
        assert pairs, f"{path.name} has no exercise"
        for stub, check in pairs:
            assert "raise NotImplementedError(\"Student exercise:" in stub.source
            assert "..." in stub.source
            assert CHECK_CALL.match(check.source.strip()), check.source


#: The kinds of exercise that are not a fill-in (issue 30), as tags on the exercise cell.
NOT_FILL_IN = {"by-hand", "find-the-bug", "choose", "explain"}
#: Every lesson; the self-study checkpoint (its questions are the thinking) is not held to it.
THINKING_LESSONS = [n.path for n in lesson_index.select(INDEX, kind="lesson")]


GUESS = re.compile(r"^(my_\w+) = \.\.\.", flags=re.M)

def predictions(path: Path):
    """Each predict cell of a lesson: (its index, the variables it asks for, the index of
    the cell that reads them back, tagged `compare`)."""
    cells = read(path).cells
    for i, cell in enumerate(cells):
        if "predict" in tags(cell):
            compare = next((k for k in range(i + 1, len(cells)) if "compare" in tags(cells[k])),
                           None)
            yield i, GUESS.findall(cell.source), compare


@pytest.mark.parametrize("path", THINKING_LESSONS, ids=[p.stem for p in THINKING_LESSONS])
def test_a_prediction_first_and_an_exercise_that_is_not_a_fill_in(path):
    """Issue 30: the student writes a guess in code before a run, then the lesson says what
    happened; and at least one exercise derives, chooses or finds a bug. Issue 44: the guess
    is read back after the run (a cell tagged `compare`, stored with its nudge), and the
    reveal is folded, so that it cannot be read before the guess."""
    cells = read(path).cells
    found = list(predictions(path))
    assert found, f"{path.name}: no predict-first cell (a code cell tagged `predict`)"
    for i, names, compare in found:
        guess = cells[i]
        assert guess.cell_type == "code" and not guess.outputs, path.name
        assert names, f"{path.name}: the guess is written in code, `my_... = ...`"
        assert compare is not None, f"{path.name}: no cell tagged `compare` after cell {i}"
        assert not [c for c in cells[i + 1:compare] if "predict" in tags(c)], path.name
        run = [c for c in cells[i + 1:compare] if c.cell_type == "code"]
        assert run and any(c.outputs for c in run), f"{path.name}: a run follows the guess"
        reading = cells[compare]
        assert "checks.compare_guess(" in reading.source and all(
            n in reading.source for n in names), f"{path.name}: cell {compare} reads {names}"
        stored = "".join(o.get("data", {}).get("text/plain", "") for o in reading.outputs)
        assert stored.startswith("No guess yet: write it in `"), (
            f"{path.name}: stored as Run All leaves it, the comparison is only its nudge")
        told = cells[compare + 1]
        assert told.cell_type == "markdown" and "reveal" in tags(told), (
            f"{path.name}: the cell after the comparison (tagged `reveal`) says what "
            "happened and why")
        assert told.source.startswith("<details>") and "</details>" in told.source, (
            f"{path.name}: the reveal is folded, not readable before the guess")
    kinds = [k for stub, _ in exercise_pairs(path) for k in tags(stub) if k in NOT_FILL_IN]
    assert kinds, (f"{path.name}: no exercise that is not a fill-in (an exercise tagged "
                   f"one of {sorted(NOT_FILL_IN)})")


def _value_of_cell(source: str, ns: dict):
    """Run a cell's code in ``ns`` and return the value of its last expression."""
    tree = ast.parse(source)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(compile(tree, "<cell>", "exec"), ns)
    return eval(compile(ast.Expression(last.value), "<cell>", "eval"), ns) if last else None


def _parts_of(source: str, ns: dict) -> tuple:
    """The parts a comparison cell measures: run it with compare_guess recorded."""
    seen: list = []

    class Recorder:
        def __getattr__(self, name):
            if name == "compare_guess":
                return lambda guess, *parts, **kw: seen.extend(parts)
            return getattr(checks, name)

    _value_of_cell(source, {**ns, "checks": Recorder()})
    return tuple(seen)


@pytest.mark.parametrize("path", THINKING_LESSONS, ids=[p.stem for p in THINKING_LESSONS])
def test_every_guess_is_read_back_beside_the_measurement(path):
    """Fill each predict cell's guess and run its comparison: the guess is shown beside
    what the run measured, each part said in words to hold or not (no grade); over the
    guesses each part can read, each part holds for one and not for another."""
    ns = run_in_process(path)
    cells = read(path).cells
    for _, names, compare in predictions(path):
        source = cells[compare].source
        parts = _parts_of(source, ns)
        assert parts and all(p.examples for p in parts), f"{path.name}: cell {compare}"
        outcomes = [set() for _ in parts]
        for guess in itertools.product(*(p.examples for p in parts)):
            filled = dict(ns)
            if len(names) == 1:
                filled[names[0]] = guess[0] if len(parts) == 1 else guess
            else:
                assert len(names) == len(parts), path.name
                filled.update(zip(names, guess, strict=True))
            shown = _value_of_cell(source, filled)
            assert shown.answered and "could not be read" not in shown.outcomes, str(shown)
            text = str(shown)
            for part, g, outcome, seen in zip(parts, guess, shown.outcomes, outcomes,
                                              strict=True):
                assert guesses._shown(g) in text, (path.name, g, text)
                assert part.said in text, (path.name, part.said, text)
                seen.add(outcome)
            assert re.search(r"\b(Held|held|Partly held|Did not hold|did not hold)\b", text)
            for word in ("score:", "points", "grade:", "correct"):
                assert word not in text
        for part, seen in zip(parts, outcomes, strict=True):
            assert "held" in seen and seen - {"held"}, (path.name, part.about, seen)


@pytest.mark.parametrize("path", THINKING_LESSONS, ids=[p.stem for p in THINKING_LESSONS])
def test_every_say_why_prompt_keeps_a_place_and_a_self_check(path):
    """A prompt to say why in a sentence has a cell the student writes in (`my_reason`,
    tagged `say-why`), stored with its nudge; once written, the self-check names what a
    good answer mentions."""
    cells = read(path).cells
    asking = [i for i, c in enumerate(cells) if c.cell_type == "markdown" and re.search(
        r"(say|write) in a sentence", " ".join(c.source.split()))]
    places = [i for i, c in enumerate(cells) if "say-why" in tags(c)]
    assert len(places) == len(asking), (path.name, asking, places)
    ns = run_in_process(path)
    for ask, place in zip(asking, places, strict=True):
        assert ask < place, path.name
        cell = cells[place]
        assert re.search(r"^my_reason = \.\.\.$", cell.source, flags=re.M), path.name
        stored = "".join(o.get("data", {}).get("text/plain", "") for o in cell.outputs)
        assert stored.startswith("No sentence yet"), path.name
        exercise = re.search(r'compare_reason\(my_reason, "(\w+)"\)', cell.source).group(1)
        written = _value_of_cell(cell.source.replace("my_reason = ...",
                                                     'my_reason = "a sentence of mine"'),
                                 dict(ns))
        assert written.answered
        for point in reasoning_points(exercise):
            assert point in str(written)


def reasoning_points(exercise: str) -> list[str]:
    return [p.text for p in guesses.REASONS[exercise]]


@pytest.mark.parametrize("path", CODE_LESSONS, ids=[p.stem for p in CODE_LESSONS])
def test_each_check_rejects_the_stub_and_accepts_the_library_answer(path):
    ns = run_in_process(path)
    for stub, check in exercise_pairs(path):
        check_name, student_name = CHECK_CALL.match(check.source.strip()).groups()
        defined = {n.name for n in ast.parse(stub.source).body if isinstance(n, ast.FunctionDef)}
        assert student_name in defined
        verdict = getattr(checks, check_name)(ns[student_name])
        assert not verdict and verdict.mistake == "not_written", verdict.message
        stored = "".join(o.get("data", {}).get("text/plain", "") for o in check.outputs)
        assert stored == verdict.message, "the stored check output is the stub's verdict"
        answer = LIBRARY_ANSWERS[check_name]
        assert getattr(checks, check_name)(answer), f"{check_name} rejects the library"


# ------------------------------------------------------------------------------ derivations


def _lesson(prefix: str) -> dict:
    return run_in_process(next(p for p in LESSONS if p.name.startswith(prefix)))


def test_lesson_02_scores_by_loops_is_the_library_scores():
    ns = _lesson("02_")
    rng = np.random.default_rng(7)
    Q, K = rng.normal(size=(3, 5)), rng.normal(size=(6, 5))
    np.testing.assert_allclose(ns["scores_by_loops"](Q, K), cl.scores(Q, K))


def test_lesson_03_saturation_numbers_are_the_library_experiment():
    ns = _lesson("03_")
    for d_k in (2, 64, 4096):
        for scale in (False, True):
            mine = ns["saturation_numbers"](d_k, scale)
            lib = scaling.scaling_stats(d_k, scale=scale)
            np.testing.assert_allclose(
                mine,
                (lib.median_max_weight, lib.median_entropy, lib.median_jacobian_norm,
                 lib.median_query_gradient_norm),
                rtol=1e-9, atol=1e-12)


def test_lesson_03_measures_what_it_claims():
    ns = _lesson("03_")
    low_raw, high_raw = (ns["saturation_numbers"](d, False) for d in (2, 4096))
    low, high = (ns["saturation_numbers"](d, True) for d in (2, 4096))
    assert high_raw[0] > 0.99 and high_raw[1] < 0.01 and high_raw[2] < 1e-3  # saturated
    assert low_raw[0] < 0.5
    for a, b in zip(low, high, strict=True):  # flat with scaling
        assert abs(a - b) / a < 0.2
    # |dw/dq|: more for the unscaled query at head sizes 32-128, collapsed at 512 and 4096
    for d_k, (raw, fixed) in ns["measured"].items():
        assert (raw[3] > fixed[3]) == (d_k <= 128), d_k
    assert ns["measured"][512][0][3] < ns["measured"][512][1][3] / 10


def test_lesson_04_shift_by_the_max_is_the_library_softmax():
    """04 §4 shows the shift on one row; the row-wise function is the exercise (issue 30)."""
    ns = _lesson("04_")
    np.testing.assert_array_equal(ns["shifted"], ns["big"] - ns["big"].max())
    np.testing.assert_allclose(np.exp(ns["shifted"]) / np.exp(ns["shifted"]).sum(),
                               cl.softmax(ns["big"]))
    assert "stable_softmax" not in ns


def test_lesson_05_blend_by_hand_is_the_library_blend():
    ns = _lesson("05_")
    rng = np.random.default_rng(4)
    w, V = rng.dirichlet(np.ones(4), size=3), rng.normal(size=(4, 6))
    np.testing.assert_allclose(ns["blend_by_hand"](w, V), cl.blend(w, V))


def test_lesson_05_inside_triangle_can_say_no():
    inside = _lesson("05_")["inside_triangle"]
    a, b, c = cl.the_cat_sat().V
    assert inside(np.array([1.0, 1.0]), a, b, c)
    assert not inside(np.array([3.0, 3.0]), a, b, c)


# ------------------------------------------------------------------------------ the numbers


def stored_text(prefix: str) -> str:
    nb = read(next(p for p in LESSONS if p.name.startswith(prefix)))
    return "\n".join(
        o.get("text", "") + o.get("data", {}).get("text/plain", "")
        for c in code_cells(nb) for o in c.outputs)


def test_lesson_06_shows_the_seed_numbers():
    text = stored_text("06_")
    assert "array([[0.4 , 0.2 , 0.4 ],\n       [0.2 , 0.4 , 0.4 ],\n       [0.25, 0.25, 0.5 ]])" \
        in text
    assert "array([0.71, 0.71, 1.41])" in text or "[0.71, 0.71, 1.41]]" in text
    assert "exponentials: [2.03 2.03 4.11]  total: 8.17" in text


def test_lesson_07_shows_mask_facts():
    text = stored_text("07_")
    assert "[0.33, 0.67, 0.  ]" in text  # 'cat' shares its budget with 'the'
    assert "array([1., 1., 1.])" in text  # rows still sum to 1
    assert "[ nan  nan  nan]" in text  # the fully hidden row, naive numpy
    assert "AttentionInputError: mask hides every key from query row 1" in text


def test_lesson_04_overflow_lab():
    text = stored_text("04_")
    assert "naive weights: [nan nan nan]" in text
    assert "weights      : [0.6652 0.2447 0.09  ]" in text


def test_lesson_03_stored_table_shows_std_growing_like_sqrt_dk():
    text = stored_text("03_")
    rows = re.findall(r"^\s*(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)$", text, flags=re.M)
    d_ks = [int(r[0]) for r in rows]
    assert d_ks[0] == 2 and d_ks[-1] == 4096, rows
    for _, std, root, ratio in rows:
        assert 0.9 < float(ratio) < 1.1 and abs(float(std) / float(root) - float(ratio)) < 0.01


def solutions(path: Path):
    """(exercise stub cell, solution code) for each exercise; the solution follows its check."""
    cells = read(path).cells
    for i, cell in enumerate(cells):
        if cell.cell_type == "code" and "exercise" in tags(cell):
            solution = cells[i + 2]
            assert "solution" in tags(solution), f"{path.name}: exercise without a solution"
            code = re.search(r"```python\n(.*?)```", solution.source, flags=re.S)
            assert code and "<details>" in solution.source, "solution folded in <details>"
            yield cell, code.group(1)


@pytest.mark.parametrize("path", CODE_LESSONS, ids=[p.stem for p in CODE_LESSONS])
def test_each_shown_solution_passes_its_check(path):
    """Like NeuromatchAcademy's CI: the solution shown to students still passes the check."""
    ns = dict(run_in_process(path))
    cells = code_cells(read(path))
    for stub, code in solutions(path):
        check = cells[cells.index(stub) + 1]
        check_name, student_name = CHECK_CALL.match(check.source.strip()).groups()
        assert f"def {student_name}(" in code, "the solution defines the stub's function"
        exec(code, ns)
        verdict = getattr(checks, check_name)(ns[student_name])
        assert verdict, f"{path.name}: the solution of {student_name} fails: {verdict}"


# ------------------------------------------------------------------------------ as stored


@pytest.mark.parametrize("path", LESSONS, ids=LESSON_IDS)
def test_stored_lessons_hold_no_widget_state_or_random_ids(path):
    """Re-running a lesson must change nothing in git: no model ids, no widget state."""
    text = path.read_text(encoding="utf-8")
    nb = read(path)
    assert "widgets" not in nb.metadata
    assert "application/vnd.jupyter.widget-view+json" not in text and "model_id" not in text
    for cell in code_cells(nb):
        kinds = [o.output_type for o in cell.outputs]
        assert not any(a == b == "stream" for a, b in itertools.pairwise(kinds)), (
            f"{path.name}: split stream outputs (run scripts/run_lessons.py)")


@pytest.mark.parametrize("path", CODE_LESSONS, ids=[p.stem for p in CODE_LESSONS])
def test_check_cells_are_nbgrader_test_cells(path):
    """nbgrader's Validate button checks the exercises (see course_lib.checks)."""
    for stub, check in exercise_pairs(path):
        meta = check.metadata.get("nbgrader", {})
        student = CHECK_CALL.match(check.source.strip()).group(2)
        number = lesson_index.NAME.match(path.name).group(1)
        assert meta == {"grade": True, "grade_id": f"check-{number}-{student}",
                        "locked": False, "points": 1, "schema_version": 3,
                        "solution": False, "task": False}, path.name
        assert "nbgrader" not in stub.metadata


def _section_before(cells, index):
    """The markdown of the section that holds cell ``index``, up to that cell."""
    start = max((i for i in range(index) if cells[i].cell_type == "markdown"
                 and cells[i].source.lstrip().startswith("#")), default=0)
    return "\n".join(c.source for c in cells[start:index] if c.cell_type == "markdown")


@pytest.mark.parametrize("path", CODE_LESSONS, ids=[p.stem for p in CODE_LESSONS])
def test_no_answer_is_given_right_above_its_exercise(path):
    """06 once printed [1.25, 1.5] in the markdown just above the exercise asking for it."""
    cells = read(path).cells
    for stub, solution in solutions(path):
        above = _section_before(cells, cells.index(stub))
        answer = solution.strip().splitlines()[-1].strip().removeprefix("return ").strip()
        if "choose" not in tags(stub):  # a choice's question names every option
            assert answer not in above, (path.name, answer)
        for number in re.findall(r"\d+\.\d+", answer):
            assert not re.search(rf"(?<![\d.]){re.escape(number)}(?!\d)", above), (
                path.name, number, above)


def _solved(path: Path) -> nbformat.NotebookNode:
    nb = read(path)
    answers = {stub.id: code for stub, code in solutions(path)}
    for cell in nb.cells:
        cell.source = answers.get(cell.get("id"), cell.source)
    return nb


@pytest.mark.slow
@pytest.mark.parametrize("path", CODE_LESSONS, ids=[p.stem for p in CODE_LESSONS])
def test_nbgrader_validate_is_honest_on_a_lesson(path, tmp_path):
    """Validate on a lesson: each unfinished exercise is named; "Success" only when all done.

    Before, Validate said "Success!" on a lesson whose exercises were not even started.
    """
    from nbgrader.validator import Validator

    exercises = [CHECK_CALL.match(c.source.strip()).group(2) for _, c in exercise_pairs(path)]
    fresh = tmp_path / path.name
    fresh.write_bytes(path.read_bytes())
    failed = Validator().validate(str(fresh)).get("failed", [])
    assert [CHECK_CALL.match(f["source"]).group(2) for f in failed] == exercises
    for f, name in zip(failed, exercises, strict=True):
        error = re.sub(r"\x1b\[[0-9;]*m", "", f["raw_error"])
        assert f"ExerciseNotDone: Not yet: `{name}` is not written yet" in error
        assert not re.search(r"checks(/\w+)?\.py", error), "the verdict, not the check's insides"
    done = tmp_path / "solved" / path.name
    done.parent.mkdir()
    nbformat.write(_solved(path), done)
    assert Validator().validate(str(done)) == {}


# ------------------------------------------------------------------ lessons 08 and 09 (issue 13)


def test_lesson_08_projections_by_hand_are_the_library_projections():
    ns = _lesson("08_")
    ex = projections.embedded_example()
    for mine, lib in zip((ns["Q"], ns["K"], ns["V"]),
                         projections.project(ex.X, ex.W_Q, ex.W_K, ex.W_V), strict=True):
        np.testing.assert_array_equal(mine, lib)
    assert not np.array_equal(ns["S"], ns["S"].T)  # the lesson's point: not symmetric
    np.testing.assert_array_equal(ns["w"], ns["w_other"])  # W_V moves outputs, not weights


def test_lesson_08_shows_the_asymmetric_table():
    text = stored_text("08_")
    assert "array([[1., 1., 1.],\n       [0., 1., 0.],\n       [1., 2., 1.]])" in text
    assert "symmetric: False" in text
    assert "sat's query · cat's key = 2.00" in text
    assert "weights unchanged: True" in text
    assert "library agrees: [True, True, True]" in text


def test_lesson_09_steps_are_the_library_multi_head_attention():
    ns = _lesson("09_")
    ex = heads.heads_example()
    out, w = heads.multi_head_attention(ex.X, ex.W_Q, ex.W_K, ex.W_V, ex.W_O, h=2)
    np.testing.assert_allclose(ns["output"], out)
    np.testing.assert_allclose(ns["weights"], w)
    np.testing.assert_array_equal(ns["Q_heads"], heads.split_heads(ns["Q"], 2))


def test_lesson_09_shows_shapes_and_the_dot_t_trap():
    text = stored_text("09_")
    assert "(3, 4) -> (2, 3, 2) = (heads, n, d_k)" in text
    assert "Q_batch: (2, 2, 3, 2) = (batch, heads, n, d_k)" in text
    assert "K_batch: (2, 2, 3, 2)  K_batch.T: (2, 3, 2, 2)" in text
    assert "K_two.T has K_two's shape: True" in text
    wrong, right = re.search(r"with \.T: +(.*)\nper head, 2-D: (.*)\n", text).groups()
    assert wrong != right


# ------------------------------------------------------------------------ lesson 10 (issue 13)


def test_lesson_10_shows_order_and_cost_facts():
    text = stored_text("10_")
    assert "largest difference below 1e-12: True" in text  # the law, on random vectors
    assert ("positions off: cat's output in 'cat sat': [1. 2.]  in 'sat cat': [1. 2.]"
            in text)
    assert "positions on : cat's output in 'cat sat': [0.69 2.  ]  in 'sat cat': [1.29 2.  ]" \
        in text
    markdown = [c.source for c in read(next(p for p in LESSONS if p.name.startswith("10_"))).cells
                if c.cell_type == "markdown"]
    assert any("permutation-equivariant" in m for m in markdown)  # and the explorer's text
    assert "n = 2048: 2048 × 2048 × 8 bytes =   32 MiB" in text
    assert "memory slope: 2.00" in text
    assert "weights (2, 3)  row sums: [1. 1.]" in text
    assert "AttentionInputError: V has 2 rows but K has n_k=3" in text


def test_lesson_10_cat_outputs_are_the_library_order_helpers():
    ns = _lesson("10_")
    np.testing.assert_allclose(ns["shuffled_outputs"], ns["old_outputs_reordered"])
    assert ns["measured"].table_bytes == tuple(8 * n * n for n in ns["measured"].sizes)


# ------------------------------------------------------------------------ lesson 14 (issue 35)


def test_lesson_14_row_is_the_checks_row_and_streams_to_softmax():
    """The row worked by hand is the by-hand check's row; streamed, it is softmax · V."""
    ns = _lesson("14_")
    blocks = reasoning_checks.ONLINE_BLOCKS[:2]
    np.testing.assert_array_equal(ns["scores"], [[s for b in blocks for s in b[0]]])
    np.testing.assert_array_equal(ns["values"][:, 0], [v for b in blocks for v in b[1]])
    np.testing.assert_array_equal(ns["state"].partial_output,
                                  reasoning_checks.online_example_state(2).partial_output)
    np.testing.assert_allclose(online_softmax.online_softmax_finish(ns["state"]),
                               cl.softmax(ns["scores"]) @ ns["values"], rtol=1e-14)


def test_lesson_14_measurement_is_what_the_lesson_rounds():
    """The slopes the lesson prints rounded are those of its own measurement, and not near
    a rounding edge (so a machine with other small allocations prints the same)."""
    ns = _lesson("14_")
    measured = ns["measured"]
    assert measured.sizes == (128, 256, 512, 1024) and measured.names == (
        "attention", "tiled_attention")
    attention_slope, tiled_slope = measured.memory_slopes(min_n=512)
    assert abs(attention_slope - 2) < 0.2 and abs(tiled_slope - 1) < 0.25, (
        attention_slope, tiled_slope)
    # the table is nearly all of attention's peak, the output most of the tiled one's growth
    assert 8 * 1024**2 <= measured.peak_bytes[0][-1] < 1.2 * 8 * 1024**2 + 8 * 1024 * 32 * 2
    assert measured.peak_bytes[1][-1] < 8 * 1024**2 / 10


# ------------------------------------------------------------------ the parts (issue 44)

#: Part 1, the equation with its checkpoint, fits two class sessions of 75 minutes.
PART_ONE_MINUTES = 150


def test_part_one_fits_two_class_sessions():
    """The sum of the Time: lines of part 1's lessons and checkpoint (it was 180)."""
    minutes = lesson_index.part_minutes(INDEX, 1)
    assert minutes <= PART_ONE_MINUTES, (
        f"part 1 states {minutes} minutes; it must fit {PART_ONE_MINUTES}: "
        + ", ".join(f"{n.number} {n.minutes}" for n in lesson_index.select(
            INDEX, kind=("lesson", "self-study checkpoint"), part=1)))


def _shown_numbers(cell) -> list[list[float]]:
    """The numbers a student reads in a cell, row by row of each text (its source if
    markdown, its outputs), in order; a folded solution is left out (it is the answer,
    opened on request)."""
    texts = [] if "solution" in tags(cell) else (
        [cell.source] if cell.cell_type == "markdown" else [])
    texts += [o.get("text", "") + o.get("data", {}).get("text/plain", "")
              for o in cell.get("outputs", [])]
    number = r"(?<![\w.])-?\d+\.\d+|(?<![\w.])\d+(?![\w.])"
    # a row of a printed table ends at "]", a row of a figure's description at ";"
    return [[float(x) for x in re.findall(number, row)]
            for t in texts for row in re.split(r"[\];]", t)]


def _the_sat_row(numbers: list[float]) -> bool:
    """The worked example's row of 'sat' in a run of numbers: its weights 0.25, 0.25, 0.50
    one after the other, or its output [1.26, 1.50] (1.25 with the weights rounded)."""
    triples = zip(numbers, numbers[1:], numbers[2:], strict=False)
    return (any((a, b, c) == (0.25, 0.25, 0.5) for a, b, c in triples)
            or any(a in (1.25, 1.26) and b == 1.5 for a, b in itertools.pairwise(numbers)))


def shows_the_sat_row(path: Path) -> bool:
    """Whether a lesson shows the worked example's row of 'sat' (:func:`_the_sat_row`)."""
    return any(_the_sat_row(numbers) for cell in read(path).cells
               for numbers in _shown_numbers(cell))


def test_the_worked_example_is_computed_in_at_most_two_lessons():
    """Issue 44: 'sat's weights and output were computed in six lessons of part 1, so the
    lesson "by hand" met them for the fifth time; now in its own place and one more."""
    showing = [p.name for p in (n.path for n in lesson_index.lessons(NOTEBOOKS, part=1))
               if shows_the_sat_row(p)]
    assert len(showing) <= 2, showing
    worked = next(n for n in lesson_index.lessons(NOTEBOOKS, part=1)
                  if n.name == "worked_example")
    assert worked.path.name in showing, "the worked example computes it"


def test_the_detector_finds_the_sat_row_as_lessons_print_it():
    for text in ("array([[0.4 , 0.2 , 0.4 ],\n       [0.25, 0.25, 0.5 ]])",
                 "sat attends 0.25, 0.25, 0.50.", "mixed by hand : [1.26 1.5 ]",
                 "= [1.25, 1.50] with these rounded weights"):
        assert any(_the_sat_row(n) for n in _shown_numbers(nbformat.v4.new_markdown_cell(text)))
    for text in ("0.25 to the, 0.5 to sat", "[1.2 1.5]", "1.26 then 2.5",
                 "array([[0.25, 0.5 , 0.25],\n       [0.25, 0.5 , 0.25]])",
                 "cat attends 0.25, 0.50, 0.25; sat attends 0.25, 0.50, 0.25."):
        assert not any(_the_sat_row(n) for n in _shown_numbers(
            nbformat.v4.new_markdown_cell(text))), text


# a stable softmax written out: a row's maximum subtracted before exp ("s - s.max(",
# "np.exp(x - x.max(...))"), whatever the names
_MAX_SHIFT = re.compile(r"\b(\w+)\s*-\s*\1\.max\(|np\.exp\([^\n]*-\s*\w+\.max\(")


def lessons_computing_the_max_shift() -> list[str]:
    """The notebooks whose running code (a code cell that is neither an exercise nor a
    solution) subtracts a row's maximum before exp: lesson 04 teaches the stable softmax,
    every other lesson calls the library's `softmax`. An exercise may still ask for it (the
    checkpoint's "from memory"), and a classmate's code in a find-the-bug may show it as a
    suspect to clear (lesson 11): neither runs it as the lesson's own computation."""
    return [p.name for p in LESSONS for cell in code_cells(read(p))
            if not {"exercise", "solution"} & set(tags(cell)) and _MAX_SHIFT.search(cell.source)]


def test_the_stable_softmax_is_computed_in_its_own_lesson_only():
    """Issue 44: the max-shift was written out in lessons 04 and 07 (07's all-hidden row)."""
    softmax_lesson = next(n.path.name for n in INDEX if n.name == "softmax")
    assert set(lessons_computing_the_max_shift()) == {softmax_lesson}


def test_the_max_shift_detector_finds_it_as_lessons_write_it():
    for line in ("exps = np.exp(hidden_scores - hidden_scores.max(axis=-1, keepdims=True))",
                 "shifted = big - big.max()", "s = s - s.max(axis=-1, keepdims=True)"):
        assert _MAX_SHIFT.search(line), line
    for line in ("exps = np.exp(hidden_scores)", "np.median(w.max(axis=-1))",
                 "new_max = np.maximum(running_max, block_scores.max(axis=-1))"):
        assert not _MAX_SHIFT.search(line), line


def _prose(cell) -> str:
    """A markdown cell's words outside fenced code, or "" for a code cell or a solution."""
    if cell.cell_type != "markdown" or "solution" in tags(cell):
        return ""
    return re.sub(r"```.*?```", "", cell.source, flags=re.S)


def teaches_why_not_dot_t(cell) -> bool:
    """Whether a cell's prose explains `.T` against `swapaxes`: it names both and says that
    `.T` reverses the axes."""
    words = _prose(cell)
    return ".T" in words and "swapaxes" in words and "revers" in words


def test_why_not_dot_t_is_taught_in_the_heads_lesson_only():
    """Issue 44: lessons 09, 11 and 16 each explained that `K.T` reverses every axis; lesson
    09 teaches it and the others point to it."""
    teaching = {p.name for p in LESSONS for c in read(p).cells if teaches_why_not_dot_t(c)}
    heads_lesson = next(n.path.name for n in INDEX if n.name == "heads")
    assert teaching == {heads_lesson}, teaching


def test_the_dot_t_detector_reads_prose_only():
    cell = nbformat.v4.new_markdown_cell
    assert teaches_why_not_dot_t(cell(
        "transpose only the last two axes of `K`\n(`np.swapaxes(K, -1, -2)`; `K.T` would "
        "reverse all three)"))
    assert not teaches_why_not_dot_t(cell("as lesson 09 did (its section *Why not `K.T`?*)"))
    fenced = cell("```python\ns = Q @ np.swapaxes(K, -1, -2)  # .T reverses\n```")
    assert not teaches_why_not_dot_t(fenced)


_NUMBER = re.compile(r"(?<![\w.])-?\d+\.\d*|(?<![\w.])\d+(?![\w.])|\bnan\b|-?\binf\b")


def printed_rows(cell) -> set[tuple[str, ...]]:
    """The rows of numbers a code cell prints (three or more numbers, to 2 decimals): the
    rows of an array, or a labelled line such as "weights     : [0.25 0.25 0.5 ]"; a
    sentence with numbers in it is not a row."""
    rows = set()
    for out in cell.get("outputs", []):
        text = out.get("text", "") + out.get("data", {}).get("text/plain", "")
        for row in re.split(r"[\];\n]", text):
            row = re.sub(r"^[^\[\d-]*:", "", row.strip()).replace("array(", "")
            if re.search(r"[a-zA-Z]", re.sub(r"\bnan\b|\binf\b", "", row)):
                continue
            numbers = tuple(x if x.endswith(("nan", "inf")) else f"{float(x):.2f}"
                            for x in _NUMBER.findall(row))
            if len(numbers) >= 3:
                rows.add(numbers)
    return rows


def cells_printing_nothing_new(path: Path) -> list[int]:
    """The code cells of a lesson whose printed rows were all printed by earlier cells
    (a figure's or an explorer's words, and a guess read back, aside: they describe)."""
    seen: set[tuple[str, ...]] = set()
    repeated = []
    for i, cell in enumerate(read(path).cells):
        if cell.cell_type != "code" or re.search(
                r"\b(plots|widgets)\.|compare_guess|\.set\(", cell.source):
            continue
        rows = printed_rows(cell)
        if rows and rows <= seen:
            repeated.append(i)
        seen |= rows
    return repeated


PART_ONE = [n.path for n in lesson_index.lessons(NOTEBOOKS, part=1)]


@pytest.mark.parametrize("path", PART_ONE, ids=[p.stem for p in PART_ONE])
def test_a_part_one_cell_prints_something_new(path):
    """Issue 44: each number printed only where it is new. Lesson 02 printed the score
    table by loops and then the same table again by the matrix product."""
    assert not cells_printing_nothing_new(path)


def test_the_repeat_detector_reads_tables_not_sentences():
    cell = nbformat.v4.new_code_cell
    out = nbformat.v4.new_output
    table = cell(outputs=[out("execute_result", data={
        "text/plain": "array([[1., 0., 1.],\n       [1., 1., 2.]])"})])
    assert printed_rows(table) == {("1.00", "0.00", "1.00"), ("1.00", "1.00", "2.00")}
    labelled = cell(outputs=[out("stream", text="weights     : [0.25 0.25 0.5 ]\n")])
    assert printed_rows(labelled) == {("0.25", "0.25", "0.50")}
    sentence = cell(outputs=[out("stream", text="query row 1 (all False): 0/0 = NaN\n")])
    assert printed_rows(sentence) == set()
    nan_row = cell(outputs=[out("stream", text="[[1. 0. 0.]\n [ nan  nan  nan]]\n")])
    assert ("nan", "nan", "nan") in printed_rows(nan_row)


OPTIONAL_LESSONS = [n.path for n in lesson_index.select(INDEX, kind="lesson")
                    if n.part in lesson_index.OPTIONAL_PARTS]


@pytest.mark.parametrize("path", OPTIONAL_LESSONS, ids=[p.stem for p in OPTIONAL_LESSONS])
def test_parts_two_and_three_build_on_part_one_only(path):
    """A lesson of an optional part names, on its Before: line, lessons of part 1 or of its
    own part only, so that a class can take either optional part after part 1."""
    by_number = {n.number: n for n in INDEX}
    lesson = next(n for n in INDEX if n.path == path)
    first = " ".join(read(path).cells[0].source.split())
    before = re.search(r"\*\*Before:\*\* (.*)", first)
    named = re.findall(r"\b(\d\d)\b", before.group(1)) if before else []
    wrong = [f"{m} (part {by_number[m].part})" for m in named
             if by_number[m].part not in (1, lesson.part)]
    assert not wrong, f"{path.name} needs {wrong} before it"
