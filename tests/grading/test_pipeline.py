"""nbgrader's whole pipeline on submissions made by code: exact scores, nothing stops it."""

from __future__ import annotations

import csv
import json

import nbformat
import pytest

from course_grading.gradetable import build_grade_table
from course_grading.pipeline import ASSIGNMENT, grades
from course_grading.submissions import KINDS
from course_grading.variants import HIDDEN_WEIGHT_CHECKS as HIDDEN_TEST_IDS
from course_quiz.checkpoint_spec import CHECKPOINT

GRADE_IDS = CHECKPOINT.grade_ids

pytestmark = pytest.mark.slow

VISIBLE = "test_weights_visible"
SHIFT = "test_shifted_key"
WRITTEN = "written_shift_or_scale"
AUTO = [g for g in GRADE_IDS if g != WRITTEN]

# kind -> the autograded checks it fails (everything else scores full points); the
# written answer waits for a human (0 until graded by hand).
FAILS = {
    "correct": set(),
    "mistake_missing_scale": {VISIBLE, "test_missing_scale"},
    "mistake_wrong_axis": {VISIBLE, "test_wrong_axis"},
    "mistake_naive_exp_overflow": {"test_naive_exp_overflow"},
    "mistake_dk_from_wrong_axis": {VISIBLE, "test_dk_from_wrong_axis"},
    "blank": set(AUTO),
    "raises": {VISIBLE, *HIDDEN_TEST_IDS},
    "infinite_loop": {SHIFT, "test_shift_factors"},  # both checks read the looping cell
    "prints_megabytes": set(),
    "edited_tests": {VISIBLE, "test_missing_scale"},  # restored from the source
    "deleted_test_cells": set(),  # the deleted cells are put back and graded
    "other_kernelspec": set(),  # graded with the source's python3 kernel
    "peeks_at_hidden_tests": set(),
    # replacing np.allclose, course_lib's checks etc. in the kernel changes nothing
    "monkeypatches_checks": {VISIBLE, "test_missing_scale"},
    # course_lib cannot be imported where the quiz is graded: no function at all
    "uses_course_lib": {VISIBLE, *HIDDEN_TEST_IDS},
    # every answer lifted from a lesson or the self-study (issue 30): nothing scores
    "copies_lessons": set(AUTO),
    # answers that never read Q and K (issue 42: uniform weights passed two hidden checks)
    "knows_nothing": set(AUTO),
}
UNGRADABLE = {"renamed", "corrupt_json"}  # autograde refuses them; the gradebook holds 0s

# the exact totals (out of 14 autograded points) that the table above implies
TOTALS = {
    "correct": 14,
    "mistake_missing_scale": 12,
    "mistake_wrong_axis": 12,
    "mistake_naive_exp_overflow": 13,
    "mistake_dk_from_wrong_axis": 12,
    "blank": 0,
    "raises": 9,
    "infinite_loop": 12,
    "prints_megabytes": 14,
    "edited_tests": 12,
    "deleted_test_cells": 14,
    "other_kernelspec": 14,
    "peeks_at_hidden_tests": 14,
    "monkeypatches_checks": 12,
    "uses_course_lib": 9,
    "copies_lessons": 0,
    "knows_nothing": 0,
    "renamed": 0,
    "corrupt_json": 0,
}


def test_every_kind_of_submission_is_covered():
    assert set(FAILS) | UNGRADABLE == set(KINDS) == set(TOTALS)


@pytest.mark.parametrize("kind", sorted(FAILS))
def test_exact_score_of_each_submission(graded_course, kind):
    got = grades(graded_course.course, kind)
    want = {
        g: (0.0 if g in FAILS[kind] or g == WRITTEN else float(GRADE_IDS[g]))
        for g in GRADE_IDS
    }
    assert got == want
    assert sum(got.values()) == TOTALS[kind]


def test_copying_the_lessons_scores_no_more_than_knowing_nothing(graded_course):
    """Issue 30, graded by nbgrader autograde: every answer lifted from a lesson or the
    self-study earns no more autograded points than the blank notebook, and the verdicts
    name what the copy shows where the inputs are public (a hidden check of the function
    says only that it failed, issue 42; the grade table reads it with the visible one)."""
    auto = {g: p for g, p in grades(graded_course.course, "copies_lessons").items()
            if g in AUTO}
    blank = {g: p for g, p in grades(graded_course.course, "blank").items() if g in AUTO}
    assert sum(auto.values()) <= sum(blank.values())
    nb = nbformat.read(graded_course.autograded("copies_lessons"), as_version=4)
    named = {c.metadata["nbgrader"]["grade_id"]: c.metadata["course"]["verdict"]["mistake"]
             for c in nb.cells if "verdict" in c.metadata.get("course", {})}
    assert named[VISIBLE] == "no_mask" and named[SHIFT] == "row_shift_rule"
    assert all(named[t] is None for t in HIDDEN_TEST_IDS)
    row = next(r for r in build_grade_table(graded_course.course, ASSIGNMENT).rows
               if r.student == "copies_lessons")
    assert row.crashed_checks == {t: "no_mask" for t in HIDDEN_TEST_IDS}


@pytest.mark.parametrize("kind", sorted(UNGRADABLE))
def test_ungradable_submissions_fail_alone_and_leave_no_autograded_notebook(graded_course, kind):
    log = graded_course.autograde_result["log"]
    assert f"There was an error processing assignment 'checkpoint' for student '{kind}'" in log
    assert not graded_course.autograded(kind).exists()
    assert not graded_course.feedback(kind).exists()
    assert sum(grades(graded_course.course, kind).values()) == TOTALS[kind]


def test_one_broken_submission_never_stops_the_others(graded_course):
    result = graded_course.autograde_result
    assert result["success"] is False  # nbgrader reports the two broken ones at the end ...
    failed = {
        line.split("for student '")[1].rstrip("'")
        for line in result["log"].splitlines()
        if "There was an error processing assignment" in line and "for student" in line
    }
    assert failed == UNGRADABLE
    # ... after grading every other one: "corrupt_json" sorts before most of them
    for kind in FAILS:
        assert graded_course.autograded(kind).exists(), kind
    assert graded_course.feedback_result["success"], graded_course.feedback_result.get("error")


def test_the_infinite_loop_was_stopped_by_the_per_cell_timeout(graded_course):
    nb = nbformat.read(graded_course.autograded("infinite_loop"), as_version=4)
    cell = next(
        c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "shifted_key"
    )
    errors = [o for o in cell.outputs if o.output_type == "error"]
    assert errors and errors[-1].ename in {"CellTimeoutError", "KeyboardInterrupt"}, errors


def test_deleted_and_edited_test_cells_are_restored_from_the_source(graded_course):
    source = nbformat.read(
        graded_course.course / "source" / "checkpoint" / "checkpoint.ipynb", as_version=4
    )
    tests = {
        c.metadata["nbgrader"]["grade_id"]: c.source
        for c in source.cells
        if c.metadata.get("nbgrader", {}).get("grade") and not c.metadata["nbgrader"]["solution"]
    }
    for kind in ("edited_tests", "deleted_test_cells"):
        nb = nbformat.read(graded_course.autograded(kind), as_version=4)
        got = {
            c.metadata["nbgrader"]["grade_id"]: c.source
            for c in nb.cells
            if c.metadata.get("nbgrader", {}).get("grade_id") in tests
        }
        assert set(got) == set(tests), kind
        for gid, src in tests.items():
            assert src in got[gid], (kind, gid)  # a re-added cell carries a note first


def test_a_different_kernelspec_is_graded_with_the_sources_kernel(graded_course):
    nb = json.loads(graded_course.autograded("other_kernelspec").read_text())
    assert nb["metadata"]["kernelspec"]["name"] == "python3"


def test_megabytes_of_output_are_cut_in_the_autograded_notebook(graded_course):
    size = graded_course.autograded("prints_megabytes").stat().st_size
    assert size < 300_000, size  # the grader keeps 100,000 characters per cell of the ~6 MB
    assert "output cut by the grader" in graded_course.autograded("prints_megabytes").read_text()


def test_export_has_one_row_per_submission_with_the_exact_score(graded_course):
    rows = {r["student_id"]: r for r in csv.DictReader(graded_course.grades_csv.open())}
    assert set(rows) == set(KINDS)
    for kind, total in TOTALS.items():
        assert float(rows[kind]["score"]) == total, kind
        assert float(rows[kind]["max_score"]) == 17.0


def test_zz_the_gradebook_keeps_every_other_grade(graded_course):
    """Regrading (and failing to grade) some students changes nobody else's grades.

    Named zz_ to run last in this file: it adds a manual grade and regrades.
    """
    from nbgrader.api import Gradebook

    course, api = graded_course.course, graded_course.api
    db = f"sqlite:///{course / 'gradebook.db'}"
    with Gradebook(db) as gb:  # the instructor grades a written answer by hand
        grade = gb.find_grade(WRITTEN, "checkpoint", "checkpoint", "correct")
        grade.manual_score = 2.0
        gb.db.commit()
    before = {kind: grades(course, kind) for kind in KINDS}
    assert before["correct"][WRITTEN] == 2.0
    for kind in ("corrupt_json", "renamed", "blank"):
        result = api.autograde("checkpoint", kind)
        assert result["success"] is (kind == "blank"), (kind, result.get("error"))
    after = {kind: grades(course, kind) for kind in KINDS}
    assert after == before
    assert sum(after["correct"].values()) == 16.0  # 14 autograded + the 2 given by hand
