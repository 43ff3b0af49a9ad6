"""The quiz source is generated from a seed, and every hidden test diagnoses one mistake."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import nbformat
import numpy as np
import pytest

from course_grading import variants
from course_grading.mistakes import CORRECT_ANSWER, MISTAKES, answer_function, hidden_test_id
from course_grading.variants import (
    DEFAULT_SEED,
    GRADE_IDS,
    HIDDEN_TEST_IDS,
    build_notebook,
    isolation_table,
    make_variant,
    notebook_text,
)
from course_lib import attention_weights

ROOT = Path(__file__).resolve().parents[1]
SEEDS = [DEFAULT_SEED, "x", "spring 2027, section B", "42"]


def _cells(nb) -> dict[str, nbformat.NotebookNode]:
    return {c.metadata["nbgrader"]["grade_id"]: c for c in nb.cells if "nbgrader" in c.metadata}


def test_committed_source_is_what_the_default_seed_makes():
    """quiz/source is generated: editing it by hand (or the generator) breaks this test."""
    committed = (ROOT / variants.SOURCE_PATH).read_text(encoding="utf-8")
    assert committed == notebook_text(DEFAULT_SEED), (
        "quiz/source/checkpoint/checkpoint.ipynb differs from the generator's output; "
        "run: python -m course_grading.variants"
    )


def test_the_default_seed_keeps_the_lessons_worked_example():
    v = make_variant(DEFAULT_SEED)
    assert v.Q.tolist() == [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
    assert v.V.tolist() == [[1.0, 0.0], [0.0, 2.0], [2.0, 2.0]]
    assert np.allclose(v.sat_output, [1.2553, 1.5036], atol=1e-4)


def test_a_seed_is_deterministic_and_another_seed_changes_the_numbers():
    assert notebook_text("x") == notebook_text("x")
    a, b = make_variant(DEFAULT_SEED), make_variant("x")
    assert not np.array_equal(a.Q, b.Q) or not np.array_equal(a.V, b.V)
    for test_id in HIDDEN_TEST_IDS:
        qa, _ = a.hidden_inputs[test_id]
        qb, _ = b.hidden_inputs[test_id]
        assert not np.array_equal(qa, qb), test_id
    assert not np.allclose(a.sat_output, b.sat_output)
    # same questions: the same cells, in the same order, with the same points
    na, nb_ = build_notebook(a), build_notebook(b)
    assert [c.id for c in na.cells] == [c.id for c in nb_.cells]
    assert na.cells[2].source == nb_.cells[2].source  # question 1's text


@pytest.mark.parametrize("seed", ["", None])
def test_a_bad_seed_is_refused_with_a_clear_message(seed):
    with pytest.raises(ValueError, match="seed must be a non-empty string"):
        make_variant(seed)


@pytest.mark.parametrize("seed", SEEDS)
def test_grade_ids_points_and_kernelspec(seed):
    nb = build_notebook(make_variant(seed))
    cells = _cells(nb)
    graded = {
        gid: c.metadata["nbgrader"]["points"]
        for gid, c in cells.items()
        if c.metadata["nbgrader"]["grade"]
    }
    assert graded == GRADE_IDS
    answers = {gid for gid, c in cells.items() if c.metadata["nbgrader"]["solution"]}
    assert answers == {
        "attention_weights",
        "sat_output",
        "mc_why_scale",
        "mc_causal_mask",
        "written_scaling",
    }
    assert nb.metadata.kernelspec.name == "python3"
    assert cells["written_scaling"].cell_type == "markdown"


@pytest.mark.parametrize("seed", SEEDS)
def test_every_test_cell_opens_with_a_docstring_and_asserts(seed):
    """Test cells assert (a bare value is taken as a score) and say what they check."""
    for gid, cell in _cells(build_notebook(make_variant(seed))).items():
        meta = cell.metadata["nbgrader"]
        if not meta["grade"] or meta["solution"]:
            continue
        code = [ln for ln in cell.source.splitlines() if ln.strip() and not ln.startswith("#")]
        assert re.fullmatch(r'"""[^"\n]+"""', code[0]), (gid, code[0])
        assert "assert " in cell.source, gid
        assert code[-1].strip().startswith(("assert ", ")")), (gid, code[-1])
        assert "print(" not in cell.source and "warn" not in cell.source, gid


def _run_test_cell(source: str, answer_source: str, v) -> bool:
    """Run the answer cell, then a test cell, like a kernel would; True if the test passes."""
    ns: dict[str, object] = {"np": np, "__name__": "__main__", "Q": v.Q, "K": v.K, "V": v.V}
    exec(answer_source, ns)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nbgrader scores a test cell that warns (stderr) 0
        try:
            exec(source, ns)
        except (AssertionError, ArithmeticError, RuntimeWarning):
            return False
    return True


@pytest.mark.parametrize("seed", SEEDS)
def test_each_hidden_test_in_the_notebook_fails_for_exactly_its_own_mistake(seed):
    """The hidden cells' own code, run on each answer: the diagonal, and nothing else."""
    v = make_variant(seed)
    cells = _cells(build_notebook(v))
    for answer, source in {"correct": CORRECT_ANSWER, **MISTAKES}.items():
        for test_id in HIDDEN_TEST_IDS:
            passed = _run_test_cell(cells[test_id].source, source, v)
            should_fail = answer != "correct" and test_id == hidden_test_id(answer)
            assert passed != should_fail, (seed, answer, test_id)


@pytest.mark.parametrize("seed", SEEDS)
def test_isolation_table_and_unsaturated_inputs(seed):
    v = make_variant(seed)
    table = isolation_table(v)
    assert not any(table["correct"].values())
    for mistake in MISTAKES:
        assert [t for t, bad in table[mistake].items() if bad] == [hidden_test_id(mistake)]
    for test_id, (Q, K) in v.hidden_inputs.items():
        w = attention_weights(Q, K)
        assert w.max() <= 0.9 and w.min() >= 0.01, test_id


def test_the_overflow_test_really_overflows_a_naive_exp():
    Q, K = make_variant(DEFAULT_SEED).hidden_inputs["test_naive_exp_overflow"]
    assert (Q @ K.T / np.sqrt(Q.shape[1])).min() > np.log(np.finfo(float).max)
    with np.errstate(all="ignore"):
        got = answer_function(MISTAKES["naive_exp_overflow"])(Q, K)
    assert np.isnan(got).all()


@pytest.mark.parametrize("seed", SEEDS)
def test_solutions_pass_every_check_and_mc_answers_follow_the_option_order(seed):
    v = make_variant(seed)
    cells = _cells(build_notebook(v))
    ns: dict[str, object] = {"__name__": "__main__"}
    exec(cells["setup"].source, ns)
    for gid in (
        "attention_weights",
        "test_attention_weights_visible",
        *HIDDEN_TEST_IDS,
        "sat_output",
        "test_sat_output",
        "mc_why_scale",
        "test_mc_why_scale",
        "mc_causal_mask",
        "test_mc_causal_mask",
    ):
        exec(cells[gid].source, ns)
    for q in ("why_scale", "causal_mask"):
        letter = v.mc_answer(q)
        assert ns[f"answer_{q}"] == letter
        # the right option (index 0 of MC_OPTIONS) is printed next to that letter
        text = cells[f"mc_{q}"].source
        assert letter in text
    md = {c.id: c.source for c in build_notebook(v).cells}
    for q, qid in (("why_scale", "q3"), ("causal_mask", "q4")):
        right = variants.MC_OPTIONS[q][0]
        assert f"**{v.mc_answer(q)}.** {right}" in md[qid]


def test_a_wrong_mc_letter_fails_its_hidden_check():
    v = make_variant(DEFAULT_SEED)
    cells = _cells(build_notebook(v))
    wrong = next(x for x in "ABCD" if x != v.mc_answer("why_scale"))
    ns = {"answer_why_scale": wrong}
    with pytest.raises(AssertionError):
        exec(cells["test_mc_why_scale"].source, ns)
    with pytest.raises(AssertionError, match="must be one of the strings"):
        exec(cells["test_mc_why_scale"].source, {"answer_why_scale": "E"})


def test_command_line_writes_the_variant(tmp_path, capsys):
    out = tmp_path / "deep" / "checkpoint.ipynb"
    assert variants.main(["--seed", "my secret", "--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == notebook_text("my secret")
    assert "my secret" not in out.read_text(encoding="utf-8")  # the seed stays private
    json.loads(out.read_text(encoding="utf-8"))
    assert "wrote" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        variants.main(["--seed", ""])


@pytest.mark.parametrize("seed", [DEFAULT_SEED, "x"])
def test_graded_checks_resist_a_submission_that_monkeypatches_the_kernel(seed):
    """np.allclose, np.isclose, course_lib's reference, abs: replaced; mistakes still fail.

    (In-process stand-in for the kernel; tests/grading runs the real attack with nbgrader.)
    """
    from unittest import mock

    import course_lib

    v = make_variant(seed)
    cells = _cells(build_notebook(v))
    always = lambda *args, **kwargs: True  # noqa: E731
    for mistake, source in MISTAKES.items():
        func = answer_function(source)
        with (
            mock.patch.object(np, "allclose", always),
            mock.patch.object(np, "isclose", always),
            mock.patch.object(course_lib, "attention_weights", func),
        ):
            ns = {
                "np": np,
                "__name__": "__main__",
                "attention_weights": func,
                "abs": lambda x: 0.0,
                "sat_output": np.array([9.0, 9.0]),
                "Q": v.Q,
                "K": v.K,
                "V": v.V,
            }
            test_id = hidden_test_id(mistake)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with pytest.raises(AssertionError):
                    exec(cells[test_id].source, ns)
                with pytest.raises(AssertionError):
                    exec(cells["test_sat_output"].source, ns)


def test_a_str_subclass_that_equals_everything_does_not_pass_a_mc_check():
    class Sly(str):
        def __eq__(self, other):
            return True

        __hash__ = str.__hash__

        def strip(self, *args):
            return self

        def upper(self):
            return self

    v = make_variant(DEFAULT_SEED)
    cells = _cells(build_notebook(v))
    wrong = next(x for x in "ABCD" if x != v.mc_answer("why_scale"))
    with pytest.raises(AssertionError):
        exec(cells["test_mc_why_scale"].source, {"answer_why_scale": Sly(wrong)})
