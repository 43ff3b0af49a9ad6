"""A student who pre-writes the grader's metadata gets none of it into the report or feedback.

``lost_points``/``repeated_mistakes`` (:mod:`course_grading.gradetable`) read
``metadata["course"]["verdict"]`` and grade ids from the autograded notebook. A submission
can carry both, forged: verdicts that say a passing check failed "to the same mistake",
messages with HTML, ``|`` and newlines (table cells of the report), ids of other types.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from course_grading.gradetable import build_grade_table, lost_points, repeated_mistakes
from course_grading.pipeline import ASSIGNMENT, copy_course, open_api, place_submission
from course_grading.report import write_report
from course_grading.submissions import made_up_submission

ROOT = Path(__file__).resolve().parents[2]
MARK = "FORGED<b onmouseover=x>|bad\n| row"
FORGED = {"passed": False, "reason": MARK, "mistake": "missing_scale", "message": MARK,
          "detail": MARK}


def _forge(files: dict[str, bytes]) -> dict[str, bytes]:
    nb = nbformat.reads(files["checkpoint.ipynb"].decode(), as_version=4)
    for cell in nb.cells:
        cell.metadata["course"] = {"verdict": dict(FORGED)}
    nb.metadata["course"] = {"stopped": MARK, "course_lib_used_in": [MARK]}
    return {**files, "checkpoint.ipynb": nbformat.writes(nb).encode()}


@pytest.mark.slow
def test_forged_verdicts_do_not_reach_the_report_or_the_feedback(tmp_path):
    course = copy_course(ROOT / "quiz", tmp_path / "quiz")
    api = open_api(course, **{"ManualGradesFirst.allow_pending": True})
    assert api.generate_assignment(ASSIGNMENT)["success"]
    place_submission(course, "eve", _forge(made_up_submission(course, "correct")))
    assert api.autograde(ASSIGNMENT, "eve")["success"]
    assert api.generate_feedback(ASSIGNMENT, "eve")["success"]

    graded = nbformat.read(course / "autograded" / "eve" / ASSIGNMENT / "checkpoint.ipynb", 4)
    assert lost_points(graded) == {} and repeated_mistakes(graded) == {}
    row = next(r for r in build_grade_table(course, ASSIGNMENT).rows if r.student == "eve")
    assert row.lost == {}
    write_report(course, tmp_path / "report", ASSIGNMENT)
    for page in ("report.md", "report.html"):
        assert "FORGED" not in (tmp_path / "report" / page).read_text()
    feedback = (course / "feedback" / "eve" / ASSIGNMENT / "checkpoint.html").read_text()
    assert "FORGED" not in feedback and "Same mistake" not in feedback


@pytest.mark.parametrize("gid", [["test_missing_scale"], {"a": 1}, 3.0, None, "x" * 10**6])
@pytest.mark.parametrize("verdict", [FORGED, [FORGED], "failed", {"passed": False,
                                                                    "mistake": ["x"]}])
def test_wrong_types_in_a_notebook_give_no_words_of_its_own(gid, verdict):
    """A notebook not made inert (graded by plain nbgrader, or edited by hand) with ids and
    verdicts of any JSON type: only the spec's words and grade ids come back, no crash."""
    cells = [{"cell_type": "code", "metadata": {"nbgrader": {"grade_id": g},
                                                 "course": {"verdict": verdict}}}
             for g in (gid, "test_weights_visible", "test_missing_scale")]
    lost = lost_points({"cells": cells})
    repeated = repeated_mistakes({"cells": cells})
    assert set(lost) <= {"test_weights_visible", "test_missing_scale"}
    assert "FORGED" not in repr(lost) + repr(repeated)
