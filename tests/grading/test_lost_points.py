"""Issue 33, item 12: one mistake may cost several points, and each says why it was lost.

A submission whose only mistake is the missing 1/sqrt(d_k) loses the visible check's point
and test_missing_scale's (the weighting the spec decides, ``course_quiz.checkpoint_spec``).
The feedback and the class report name the mistake the visible check saw; the hidden check
says only that it failed (which mistake the function showed on hidden inputs is the
function's choice, issue 42), what it is built to catch, and that the visible check failed
too.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from course_grading.gradetable import build_grade_table
from course_grading.pipeline import ASSIGNMENT, copy_course, open_api, place_submission
from course_grading.report import write_report
from course_grading.submissions import made_up_submission
from course_quiz.checkpoint_spec import CHECKPOINT

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
WORDS = CHECKPOINT.mistake("missing_scale").words
HINT = CHECKPOINT.mistake("missing_scale").hint.capitalize()
CHECK_HINT = CHECKPOINT.check("test_missing_scale").hint
HIDDEN_WORDS = (f"failed on its hidden inputs, built to catch: {WORDS} (only pass or fail is "
                "recorded); test_weights_visible failed too")
LOST = ["test_weights_visible", "test_missing_scale"]


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> Path:
    course = copy_course(ROOT / "quiz", tmp_path_factory.mktemp("lost") / "quiz")
    api = open_api(course, **{"ManualGradesFirst.allow_pending": True})
    assert api.generate_assignment(ASSIGNMENT)["success"]
    for student, kind in (("sam", "mistake_missing_scale"), ("ada", "correct")):
        place_submission(course, student, made_up_submission(course, kind))
    assert api.autograde(ASSIGNMENT, "*")["success"]
    assert api.generate_feedback(ASSIGNMENT, "*")["success"]
    return course


def test_one_mistake_costs_what_the_spec_says():
    """The weighting of the spec's docstring, measured on the public variant's inputs: a
    mistake the setup example shows costs the visible check and its own hidden check (2 of
    5); a naive exp, which the example's small scores cannot show, costs 1."""
    from course_grading.variants import isolation_table, make_variant

    table = isolation_table(make_variant("public"))
    cost = {m: sum(table[m].values()) for m in ("missing_scale", "wrong_axis",
                                                 "dk_from_wrong_axis", "naive_exp_overflow")}
    assert cost == {"missing_scale": 2, "wrong_axis": 2, "dk_from_wrong_axis": 2,
                    "naive_exp_overflow": 1}
    import course_quiz.checkpoint_spec as spec

    assert "costs 2 of the function's 5 points" in " ".join(spec.__doc__.split())


def test_the_feedback_names_the_mistake_for_each_lost_point(course):
    page = (course / "feedback" / "sam" / ASSIGNMENT / "checkpoint.html").read_text()
    text = html.unescape(re.sub(r"<[^>]+>", " ", page))
    text = re.sub(r"\s+", " ", text)
    failed = re.findall(r"Check (\w+) failed", text)
    assert failed == LOST
    first, second = (text.split(f"Check {gid} failed", 1)[1].split("Check ", 1)[0]
                     for gid in LOST)
    assert HINT in first
    # the host decided these checks: the student's code raised nothing in either
    assert "Your code raised" not in first + second
    assert "test_weights_visible failed too" in second and CHECK_HINT in second
    assert HINT not in second  # the mistake the function showed there is not told


def test_the_report_says_why_each_point_was_lost(course, tmp_path):
    rows = {r.student: r for r in build_grade_table(course, ASSIGNMENT).rows}
    assert rows["ada"].lost == {}
    assert rows["sam"].lost == {
        "test_weights_visible": WORDS,
        "test_missing_scale": HIDDEN_WORDS,
    }
    write_report(course, tmp_path / "report", ASSIGNMENT)
    md = (tmp_path / "report" / "report.md").read_text()
    section = md.split("## Why points were lost", 1)[1].split("\n## ", 1)[0]
    assert f"| sam | test_weights_visible | 1 | {WORDS} |" in section
    assert f"| sam | test_missing_scale | 1 | {HIDDEN_WORDS} |" in section
    assert "| ada |" not in section
    assert "Why points were lost" in (tmp_path / "report" / "report.html").read_text()
