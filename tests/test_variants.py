"""Variants fill the hand-written quiz source with numbers; each hidden check isolates a mistake."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import numpy as np
import pytest

from course_grading import variants
from course_grading.check_calls import QuizSourceError, check_calls
from course_grading.mistakes import CORRECT_ANSWER, MISTAKES, answer_function, hidden_test_id
from course_grading.variants import (
    DEFAULT_SEED,
    HIDDEN_WEIGHT_CHECKS,
    fill,
    isolation_table,
    make_variant,
    quiz_facts,
)
from course_lib import attention_weights
from course_lib.checkpoint_checks import answer_as_data, judge
from course_lib.checkpoint_spec import CHECKPOINT

ROOT = Path(__file__).resolve().parents[1]
PUBLIC = nbformat.read(ROOT / variants.SOURCE_PATH, as_version=4)
SEEDS = [DEFAULT_SEED, "x", "spring 2027, section B", "42"]


def _cells(nb) -> dict[str, nbformat.NotebookNode]:
    return {c.metadata["nbgrader"]["grade_id"]: c for c in nb.cells if "nbgrader" in c.metadata}


def _inputs(nb, grade_id: str) -> dict:
    """A check's inputs as the grader reads them (the hidden call's literals)."""
    from course_grading.verdicts import plan_checks

    return next(p.inputs for p in plan_checks(nb, CHECKPOINT).values()
                if p.grade_id == grade_id)


def test_the_committed_source_is_the_public_variant_exactly():
    """Filling the public notebook with the public seed changes nothing: one source."""
    assert PUBLIC.metadata["course_variant"] == "public"
    assert nbformat.writes(fill(PUBLIC, make_variant(DEFAULT_SEED))) == nbformat.writes(PUBLIC)


def test_the_default_seed_keeps_the_lessons_worked_example():
    v = make_variant(DEFAULT_SEED)
    assert v.Q.tolist() == [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
    assert v.V.tolist() == [[1.0, 0.0], [0.0, 2.0], [2.0, 2.0]]
    assert np.allclose(v.sat_output, [1.2553, 1.5036], atol=1e-4)
    facts = quiz_facts(PUBLIC)
    assert facts.right == {"mc_why_scale": "C", "mc_causal_mask": "A"}


def test_a_seed_is_deterministic_and_another_seed_changes_only_numbers_and_order():
    a, b = fill(PUBLIC, make_variant("x")), fill(PUBLIC, make_variant("x"))
    assert nbformat.writes(a) == nbformat.writes(b)
    other = fill(PUBLIC, make_variant("y"))
    assert [c.id for c in a.cells] == [c.id for c in other.cells] == [c.id for c in PUBLIC.cells]
    assert _cells(a)["attention_weights"].source == _cells(PUBLIC)["attention_weights"].source
    assert not np.array_equal(quiz_facts(a).Q, quiz_facts(PUBLIC).Q)
    for test_id in HIDDEN_WEIGHT_CHECKS:
        assert _inputs(a, test_id)["Q"] != _inputs(PUBLIC, test_id)["Q"], test_id
    assert a.metadata["course_variant"] not in ("public", "x")  # a hash, not the seed


@pytest.mark.parametrize("seed", ["", None])
def test_a_bad_seed_is_refused_with_a_clear_message(seed):
    with pytest.raises(ValueError, match="seed must be a non-empty string"):
        make_variant(seed)


def test_a_variant_is_never_made_from_another_variant():
    with pytest.raises(QuizSourceError, match="not the public one"):
        fill(fill(PUBLIC, make_variant("x")), make_variant("y"))


@pytest.mark.parametrize("seed", SEEDS)
def test_grade_ids_and_points_are_the_specs(seed):
    nb = fill(PUBLIC, make_variant(seed))
    graded = {gid: c.metadata["nbgrader"]["points"] for gid, c in _cells(nb).items()
              if c.metadata["nbgrader"]["grade"]}
    assert graded == CHECKPOINT.grade_ids
    answers = {gid for gid, c in _cells(nb).items() if c.metadata["nbgrader"]["solution"]}
    assert answers == {q.id for q in CHECKPOINT.questions}
    assert nb.metadata.kernelspec.name == "python3"


@pytest.mark.parametrize("seed", SEEDS)
def test_every_test_cell_calls_check_for_itself_and_opens_with_a_docstring(seed):
    """A bare value would be taken as a score; each test cell says what it checks."""
    for gid, cell in _cells(fill(PUBLIC, make_variant(seed))).items():
        meta = cell.metadata["nbgrader"]
        if not meta["grade"] or meta["solution"]:
            continue
        calls = check_calls(cell.source)
        assert calls and all(c.grade_id == gid for c in calls), gid
        assert calls[-1].answer == CHECKPOINT.check(gid).answer
        assert '"""' in cell.source, gid
        assert cell.source.rstrip().endswith((")", "### END HIDDEN TESTS")), gid


@pytest.mark.parametrize("seed", SEEDS)
def test_each_hidden_check_fails_for_exactly_its_own_mistake(seed):
    """The notebook's own inputs, judged as the grader judges them: the diagonal only."""
    nb = fill(PUBLIC, make_variant(seed))
    for answer, source in {"correct": CORRECT_ANSWER, **MISTAKES}.items():
        func = answer_function(source)
        for test_id in HIDDEN_WEIGHT_CHECKS:
            inputs = _inputs(nb, test_id)
            verdict = judge(test_id, json.loads(json.dumps(answer_as_data(
                "weights", func, (inputs["Q"], inputs["K"])))), inputs)
            should_fail = answer != "correct" and test_id == hidden_test_id(answer)
            assert verdict.passed != should_fail, (seed, answer, test_id, verdict)
            if should_fail:
                assert verdict.mistake == answer, verdict


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


def test_the_overflow_check_really_overflows_a_naive_exp():
    Q, K = make_variant(DEFAULT_SEED).hidden_inputs["test_naive_exp_overflow"]
    assert (Q @ K.T / np.sqrt(Q.shape[1])).min() > np.log(np.finfo(float).max)
    with np.errstate(all="ignore"):
        got = answer_function(MISTAKES["naive_exp_overflow"])(Q, K)
    assert np.isnan(got).all()


@pytest.mark.parametrize("seed", SEEDS)
def test_mc_options_move_with_their_right_letter(seed):
    nb = fill(PUBLIC, make_variant(seed))
    public_md = {c.id: c.source for c in PUBLIC.cells}
    md = {c.id: c.source for c in nb.cells}
    facts, public = quiz_facts(nb), quiz_facts(PUBLIC)
    for question, cell_id in (("mc_why_scale", "q3"), ("mc_causal_mask", "q4")):
        right_text = next(line.split("** ", 1)[1] for line in public_md[cell_id].splitlines()
                          if line.startswith(f"- **{public.right[question]}.**"))
        assert f"- **{facts.right[question]}.** {right_text}" in md[cell_id]
        assert f'= "{facts.right[question]}"' in _cells(nb)[question].source  # the solution
        def options(text):
            return sorted(line[9:] for line in text.splitlines() if line.startswith("- **"))

        assert options(md[cell_id]) == options(public_md[cell_id])  # the same four options


def test_command_line_writes_a_variant_and_keeps_the_seed_private(tmp_path, capsys):
    out = tmp_path / "deep" / "checkpoint.ipynb"
    assert variants.main(["--seed", "my secret", "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert text == nbformat.writes(fill(PUBLIC, make_variant("my secret"))) + "\n"
    assert "my secret" not in text
    assert "wrote" in capsys.readouterr().out
    assert variants.main(["--seed", "other", "--template", str(out), "--out",
                          str(tmp_path / "again.ipynb")]) == 2
    assert "not the public one" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        variants.main(["--seed", ""])
