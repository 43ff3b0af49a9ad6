"""Fixtures of the grading tests: nbgrader's real pipeline, run once per session.

``graded_course`` copies quiz/ (config and source) to a temporary directory, generates the
release, places one submission of every kind in ``course_lib.grading.submissions.KINDS``
under ``submitted/<kind>/checkpoint/``, autogrades them all in one call (as
``nbgrader autograde checkpoint`` does), generates feedback and exports the grades, all
through ``nbgrader.apps.NbGraderAPI`` in this process.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from course_lib.grading.pipeline import (
    ASSIGNMENT,
    copy_course,
    export_csv,
    open_api,
    place_submission,
)
from course_lib.grading.submissions import KINDS, make_submission
from course_lib.grading.variants import DEFAULT_SEED, Variant, make_variant

ROOT = Path(__file__).resolve().parents[2]
QUIZ = ROOT / "quiz"


@dataclass
class GradedCourse:
    """A temporary course directory after the whole pipeline ran."""

    course: Path
    api: Any
    variant: Variant
    released_text: str
    autograde_result: dict[str, Any]
    feedback_result: dict[str, Any]
    grades_csv: Path
    seconds: dict[str, float] = field(default_factory=dict)

    def autograded(self, student: str) -> Path:
        return self.course / "autograded" / student / ASSIGNMENT / "checkpoint.ipynb"

    def feedback(self, student: str) -> Path:
        return self.course / "feedback" / student / ASSIGNMENT / "checkpoint.html"


@pytest.fixture(scope="session")
def graded_course(tmp_path_factory) -> GradedCourse:
    start = time.perf_counter()
    course = copy_course(QUIZ, tmp_path_factory.mktemp("course") / "quiz")
    api = open_api(course)
    result = api.generate_assignment(ASSIGNMENT)
    assert result["success"], result.get("log", "") + str(result.get("error"))
    released_text = (course / "release" / ASSIGNMENT / "checkpoint.ipynb").read_text()
    variant = make_variant(DEFAULT_SEED)
    for kind in KINDS:
        place_submission(course, kind, make_submission(kind, released_text, variant))
    seconds = {"generate_assignment": time.perf_counter() - start}
    t = time.perf_counter()
    autograde_result = api.autograde(ASSIGNMENT, "*")
    seconds["autograde"] = time.perf_counter() - t
    t = time.perf_counter()
    feedback_result = api.generate_feedback(ASSIGNMENT)
    seconds["generate_feedback"] = time.perf_counter() - t
    grades_csv = export_csv(api, course / "grades.csv")
    seconds["total"] = time.perf_counter() - start
    print(
        f"\n[grading pipeline] {len(KINDS)} submissions, seconds: "
        + ", ".join(f"{k} {v:.1f}" for k, v in seconds.items())
    )
    return GradedCourse(
        course, api, variant, released_text, autograde_result, feedback_result, grades_csv, seconds
    )
