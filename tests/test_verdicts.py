"""course_grading.verdicts without a kernel: what a hidden check may tell the student.

Every reply a student's function can make to a hidden check (the right weights, each named
mistake's weights, each exception the grader can name, anything else) is judged and worded
as the student sees it; a check that sent hidden inputs must be told in exactly two ways,
passed or failed (issue 42, item 2). ``benchmarks/hidden_check_bits.py`` prints the counts:
84 or 85 verdicts per check (about 6.4 bits) before, 2 now. The sandboxed, end-to-end form of
the same claim is ``tests/sandbox/test_hidden_bits.py``.
"""

from __future__ import annotations

import nbformat
import pytest
from benchmark_scripts import load_benchmark

from course_grading.checkpoint_answers import expected
from course_grading.verdicts import (
    DecideOnHost,
    answer_cell_trouble,
    plan_checks,
    sends_hidden_inputs,
)
from course_quiz.checkpoint_checks import Verdict, judge
from course_quiz.checkpoint_spec import CHECKPOINT

bits = load_benchmark("hidden_check_bits")
PLAN = plan_checks(nbformat.read(bits.SOURCE, as_version=4), CHECKPOINT)
HIDDEN = [p for p in PLAN.values() if p.deferred and sends_hidden_inputs(p)]


def _grader(visible_failed: bool = False) -> DecideOnHost:
    grader = DecideOnHost()
    grader._spec = CHECKPOINT
    grader._verdicts = {}
    if visible_failed:
        grader._verdicts[0] = Verdict("test_weights_visible", False, "Row 0 ...", "wrong")
    return grader


def test_the_public_variant_has_the_four_hidden_weights_checks():
    assert [p.grade_id for p in HIDDEN] == [
        "test_missing_scale", "test_wrong_axis", "test_naive_exp_overflow",
        "test_dk_from_wrong_axis"]


def test_the_examples_graded_call_sends_nothing_hidden():
    """test_weights_visible's graded call (its expected weights hidden, its inputs the setup
    cell's own Q and K) is decided before any hidden input reaches the kernel, and may name
    the mistake it sees: the function knew nothing the student does not."""
    (example,) = [p for p in PLAN.values() if p.grade_id == "test_weights_visible"]
    assert example.deferred and example.kind == "weights"
    assert not sends_hidden_inputs(example)
    # the spec says the same of every check (the grade table reads the spec)
    for planned in PLAN.values():
        check = CHECKPOINT.check(planned.grade_id)
        assert sends_hidden_inputs(planned) == (check.kind == "weights"
                                                and not check.on_own_inputs), check.grade_id


@pytest.mark.parametrize("planned", HIDDEN, ids=lambda p: p.grade_id)
@pytest.mark.parametrize("visible_failed", [False, True], ids=["visible-passed",
                                                                "visible-failed"])
def test_a_hidden_check_is_told_in_exactly_two_ways(planned, visible_failed):
    grader = _grader(visible_failed)
    facts = expected(planned.grade_id, planned.inputs, CHECKPOINT)
    kinds = bits.replies(facts["want"], facts.get("mistaken") or {})
    judged = {judge(planned.grade_id, r, planned.inputs, CHECKPOINT, facts).mistake
              for r in kinds["imitates a named mistake"]}
    assert len(judged - {None}) >= 4  # what the grader saw: the channel this closes
    told = {kind: {bits.shown(grader, planned, r) for r in rs} for kind, rs in kinds.items()}
    assert len(set().union(*told.values())) == 2
    (passed,) = told["passed"]
    failed = set().union(*told.values()) - {passed}
    (record,) = failed
    _, message, reason, mistake, detail, ename, _, _ = record
    assert (reason, mistake, detail, ename) == ("hidden", None, None, "CheckFailed")
    assert CHECKPOINT.check(planned.grade_id).hint in message
    assert ("test_weights_visible failed too" in message) is visible_failed


@pytest.mark.parametrize("why", [
    "the kernel died (it crashed, or the student's code ended it)",
    "it used more than 2304 MB of memory", "the notebook used up its 30 s time budget",
    "it sent more than 32,000,000 characters of output"])
def test_a_hidden_check_that_could_not_run_is_told_like_any_failure(why):
    grader = _grader()
    planned = HIDDEN[1]
    wrong = bits.shown(grader, planned, {"value": [[0.5]]})
    verdict = Verdict(planned.grade_id, False, f"This check could not run: {why}.", "not_run")
    assert grader._hidden_verdict(planned, verdict) == grader._hidden_verdict(
        planned, Verdict(planned.grade_id, False, "x", "wrong", "no_mask"))
    assert grader._hidden_verdict(planned, verdict).message == wrong[1]


def _answer_nb(source: str, grade_id: str, ename: str | None) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["nbgrader"] = {"solution": True, "grade": False, "grade_id": grade_id}
    if ename:
        cell.outputs = [nbformat.v4.new_output("error", ename=ename, evalue="", traceback=[])]
    return nbformat.v4.new_notebook(cells=[cell])


@pytest.mark.parametrize("ename, words", [
    ("SyntaxError", "its cell does not parse (SyntaxError)"),
    ("IndentationError", "its cell does not parse (IndentationError)"),
    ("CellTimeoutError", "its cell was stopped by the cell time limit (10 s)")])
def test_a_missing_answer_says_why_its_cell_did_not_define_it(ename, words):
    """Issue 41: the feedback said "`weights_without_self` is not defined: run its cell"
    where the grade table said "does not parse" or "stopped by the cell time limit"."""
    broken = _answer_nb("def weights_without_self(Q, K:\n    return Q",
                        "weights_without_self", ename)
    assert words in answer_cell_trouble(broken, "weights_without_self",
                                        "weights_without_self", 10)
    # found by the answer cell's grade id when the name is never written
    loop = _answer_nb("while True:\n    pass", "shifted_key", ename)
    assert words in answer_cell_trouble(loop, "shifted_weights", "shifted_key", 10)


def test_a_missing_answer_with_no_stopped_cell_keeps_the_plain_words():
    assert answer_cell_trouble(_answer_nb("x = 1", "shifted_key", None), "shifted_weights",
                               "shifted_key", 10) is None
    # an error of the student's own (not a stop) is not read as one
    assert answer_cell_trouble(_answer_nb("shifted_weights = 1/0", "shifted_key",
                                          "ZeroDivisionError"), "shifted_weights",
                               "shifted_key", 10) is None
    # another question's broken cell is not this answer's
    assert answer_cell_trouble(_answer_nb("def f(:", "mc_read_table", "SyntaxError"),
                               "shifted_weights", "shifted_key", 10) is None


@pytest.mark.parametrize(("recorded", "covers"), [(None, (1, 2, 3)), ("1", (1,)),
                                                  ("1, 3", (1, 3))])
def test_the_grader_judges_with_the_spec_of_the_recorded_parts(tmp_path, recorded, covers):
    """--parts (issue 41): the grader reads the class's choice beside the secret source, so
    a test cell of a part the class does not cover is no check of its quiz (plan_checks
    refuses the notebook) and the totals are the choice's; no choice recorded: every part."""
    from traitlets.config import Config

    from course_grading.check_calls import QuizSourceError
    from course_grading.variants import PARTS_FILE, fill, make_variant

    if recorded is not None:
        (tmp_path / "secret_source").mkdir()
        (tmp_path / "secret_source" / PARTS_FILE).write_text(recorded + "\n")
    config = Config()
    config.CourseDirectory.root = str(tmp_path)
    spec = DecideOnHost(config=config)._spec_for({"nbgrader": {"assignment": "checkpoint"}})
    assert spec.covers == covers
    assert spec.total_points == CHECKPOINT.for_parts(covers).total_points
    every = fill(nbformat.read(bits.SOURCE, as_version=4), make_variant("s"))
    left_out = [c for q in CHECKPOINT.dropped_by(covers) for c in q.checks]
    if left_out:  # the first test cell of a left-out part stops it
        with pytest.raises(QuizSourceError, match=f"test cell '{left_out[0]}' has no host"):
            plan_checks(every, spec)
    else:
        assert {p.grade_id for p in plan_checks(every, spec).values()} == set(spec.autograded)


def test_a_recorded_choice_that_is_not_parts_stops_the_grader_by_name(tmp_path):
    from traitlets.config import Config

    from course_grading.check_calls import QuizSourceError
    from course_grading.variants import PARTS_FILE

    (tmp_path / "secret_source").mkdir()
    (tmp_path / "secret_source" / PARTS_FILE).write_text("all\n")
    config = Config()
    config.CourseDirectory.root = str(tmp_path)
    with pytest.raises(QuizSourceError, match=r"variant_parts: parts must be .*\(got 'all'\)"):
        DecideOnHost(config=config)._spec_for({"nbgrader": {"assignment": "checkpoint"}})
