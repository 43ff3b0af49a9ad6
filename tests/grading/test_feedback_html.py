"""The feedback HTML students receive: checks explained in words, no hidden test shown."""

from __future__ import annotations

import html
import re

import nbformat
import pytest
from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
from nbgrader.preprocessors import GetGrades

from course_grading.feedback import hidden_lines
from course_grading.pipeline import open_api
from course_grading.submissions import KINDS
from course_grading.variants import HIDDEN_WEIGHT_CHECKS as HIDDEN_TEST_IDS
from course_quiz.checkpoint_spec import CHECKPOINT

pytestmark = pytest.mark.slow


def secrets(course) -> list[str]:
    """What students must never see: the source's hidden lines and nbgrader's markers."""
    nb = nbformat.read(course / "source" / "checkpoint" / "checkpoint.ipynb", as_version=4)
    found = hidden_lines(nb)
    assert len(found) >= 12  # the detector has something to look for
    return [*found, "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"]


def page_text(path) -> str:
    """The page's text as a reader sees it: tags (e.g. syntax highlighting) removed."""
    return html.unescape(re.sub(r"<[^>]+>", "", path.read_text(encoding="utf-8")))


def leaks(path, course) -> list[str]:
    text = page_text(path)
    return [s for s in secrets(course) if s in text]


GRADED = sorted(set(KINDS) - {"renamed", "corrupt_json"})


@pytest.mark.parametrize("kind", GRADED)
def test_feedback_shows_no_hidden_test(graded_course, kind):
    path = graded_course.feedback(kind)
    assert path.exists()
    assert leaks(path, graded_course.course) == []
    assert "Traceback" not in _hidden_cells_html(path.read_text(encoding="utf-8"))


def _hidden_cells_html(page: str) -> str:
    """The HTML of the cells that hold a hidden test (each names its grade id)."""
    cells = page.split('<div class="cell ')[1:]
    hidden = [c for c in cells if any(t in c for t in HIDDEN_TEST_IDS)]
    assert len(hidden) == len(HIDDEN_TEST_IDS), len(hidden)
    return "".join(hidden)


def test_plain_nbgrader_feedback_would_leak_which_is_why_we_configure_it(graded_course, tmp_path):
    """The control: without ExplainChecks the same detector finds the hidden tests."""
    api = open_api(
        graded_course.course,
        **{
            "GenerateFeedback.preprocessors": [GetGrades, CSSHTMLHeaderPreprocessor],
            "CourseDirectory.feedback_directory": "feedback_plain",
        },
    )
    result = api.generate_feedback("checkpoint", "mistake_missing_scale")
    assert result["success"], result.get("error")
    plain = (
        graded_course.course
        / "feedback_plain"
        / "mistake_missing_scale"
        / "checkpoint"
        / "checkpoint.html"
    )
    found = leaks(plain, graded_course.course)
    assert len(found) >= 12, found  # the hidden checks' source, inputs included


@pytest.mark.parametrize("mistake", [t.removeprefix("test_") for t in HIDDEN_TEST_IDS])
def test_each_mistake_is_named_in_words(graded_course, mistake):
    """The hidden check built for a mistake says, in its own fixed words, what such a
    failure usually means; which mistake the function showed on the hidden inputs is not
    told (the function chose it knowing them, issue 42). The visible check names the
    mistake when the setup cell's example shows it (all but the naive exp)."""
    text = page_text(graded_course.feedback(f"mistake_{mistake}"))
    test_id = f"test_{mistake}"
    assert f"Check {test_id} failed (0 / 1 point)." in text
    block = text.split(f"Check {test_id} failed", 1)[1].split("Check ", 1)[0]
    assert "failed on this check's hidden inputs. What such a failure usually means: " \
        f"{CHECKPOINT.check(test_id).hint}." in block
    hint = CHECKPOINT.diagnosed[test_id].hint
    named = f"What the grader found: {hint[0].upper()}{hint[1:]}." in text
    assert named is (mistake != "naive_exp_overflow")  # by the visible check, if at all
    assert hint not in block
    for other in set(HIDDEN_TEST_IDS) - {test_id}:
        assert f"Check {other} passed (1 / 1 point)." in text


def test_a_correct_submission_passes_every_check_in_words(graded_course):
    text = page_text(graded_course.feedback("correct"))
    for check in CHECKPOINT.checks:
        assert f"Check {check.grade_id} passed" in text
    assert "failed" not in text


def test_code_that_raised_is_named_by_its_exception_class_only(graded_course):
    text = page_text(graded_course.feedback("raises"))
    assert "`weights_without_self` raised RuntimeError when the check called it" in text
    hidden = html.unescape(_hidden_cells_html(graded_course.feedback("raises").read_text()))
    assert "I ran out of time" not in hidden


def test_printing_every_cell_run_so_far_shows_no_hidden_check(graded_course):
    """Hidden checks never run in the student's kernel: IPython's In holds none of them."""
    nb = nbformat.read(graded_course.autograded("peeks_at_hidden_tests"), as_version=4)
    [cell] = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") ==
              "mc_duplicate_key"]
    printed = "".join(o.get("text", "") for o in cell.outputs)
    assert "def weights_without_self" in printed  # the print really ran ...
    assert "BEGIN HIDDEN TESTS" not in printed and "check(" not in printed  # ... saw no check
    assert leaks(graded_course.feedback("peeks_at_hidden_tests"), graded_course.course) == []


def test_megabytes_of_output_do_not_reach_the_feedback(graded_course):
    size = graded_course.feedback("prints_megabytes").stat().st_size
    baseline = graded_course.feedback("correct").stat().st_size
    assert size < baseline + 100_000, (size, baseline)
