"""Fixtures of the grading tests: nbgrader's real pipeline, run once per session.

``graded_course`` copies quiz/ (config and source) to a temporary directory, generates the
release, places one submission of every kind in ``course_grading.submissions.KINDS``
under ``submitted/<kind>/checkpoint/``, autogrades them all in one call (as
``nbgrader autograde checkpoint`` does), generates feedback and exports the grades, all
through ``nbgrader.apps.NbGraderAPI`` in this process.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat
import pytest

from course_grading.pipeline import (
    ASSIGNMENT,
    copy_course,
    export_csv,
    open_api,
    place_submission,
)
from course_grading.submissions import KINDS, make_submission
from course_grading.variants import QuizFacts, quiz_facts

ROOT = Path(__file__).resolve().parents[2]
QUIZ = ROOT / "quiz"


@dataclass
class GradedCourse:
    """A temporary course directory after the whole pipeline ran."""

    course: Path
    api: Any
    variant: QuizFacts
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
    variant = quiz_facts(nbformat.read(course / "source" / ASSIGNMENT / "checkpoint.ipynb", 4))
    for kind in KINDS:
        place_submission(course, kind, make_submission(kind, released_text, variant))
    seconds = {"generate_assignment": time.perf_counter() - start}
    t = time.perf_counter()
    autograde_result = api.autograde(ASSIGNMENT, "*")
    seconds["autograde"] = time.perf_counter() - t
    t = time.perf_counter()
    # the written answers wait for a human: feedback with them at 0, as the instructor says
    feedback_result = open_api(course, **{"ManualGradesFirst.allow_pending": True}
                               ).generate_feedback(ASSIGNMENT)
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

# --------------------------------------------------------------------------------------
# The mini course of tests/grading/mini_course.py (grade table and class report): a small
# checkpoint with the same grade ids, whose students cover what the grade table must tell
# apart (missing notebook, dying kernel, written answers waiting for or given a manual
# grade, a student without a submission) with scores these tests control exactly.
# --------------------------------------------------------------------------------------

sys.path.insert(0, str(Path(__file__).parent))
import mini_course as mc  # noqa: E402

# name -> answers (by grade id) that the student typed into the release; None = special
GOOD = {
    "weights_without_self": mc.CORRECT_CODE,
    "shifted_key": "shifted_weights = np.array([0.1, 0.2, 0.3, 0.4])",
    "mc_read_table": 'answer_read_table = "B"',
    "mc_duplicate_key": 'answer_duplicate_key = "C"',
}
STUDENTS: dict[str, dict[str, str]] = {
    "s01_correct": GOOD,
    "s02_missing_scale": {**GOOD, "weights_without_self": mc.MISTAKES["missing_scale"]},
    "s03_wrong_axis": {**GOOD, "weights_without_self": mc.MISTAKES["wrong_axis"]},
    "s04_naive_exp": {**GOOD, "weights_without_self": mc.MISTAKES["naive_exp_overflow"]},
    "s05_dk_wrong_axis": {**GOOD, "weights_without_self": mc.MISTAKES["dk_from_wrong_axis"]},
    "s06_blank": {},
    "s07_wrong_mc": {**GOOD, "mc_read_table": 'answer_read_table = "A"',
                     "mc_duplicate_key": 'answer_duplicate_key = "A"'},
    "s08_written": {**GOOD, "written_shift_or_scale": "A shift changes nothing."},
    "s09_written_graded": {**GOOD, "written_shift_or_scale": "Shift, not scale."},
    "s10_two_mistakes": {
        **GOOD,
        "weights_without_self": mc.MISTAKES["missing_scale"].replace("axis=-1", "axis=0"),
    },
}
BROKEN = ["s11_corrupt", "s12_renamed", "s13_missing", "s14_kernel_dies"]
NO_SUBMISSION = "s15_absent"


@dataclass
class MiniGradedCourse:
    """The mini course after autograde, and which autogrades nbgrader reported as ok."""

    root: Path
    autograde_ok: dict[str, bool]


def _submit(root: Path, release: nbformat.NotebookNode, student: str) -> None:
    folder = root / "submitted" / student / mc.ASSIGNMENT
    folder.mkdir(parents=True)
    good = mc.fill(release, GOOD)
    if student in STUDENTS:
        nbformat.write(mc.fill(release, STUDENTS[student]), folder / "checkpoint.ipynb")
    elif student == "s11_corrupt":
        text = nbformat.writes(good)
        (folder / "checkpoint.ipynb").write_text(text[: len(text) // 2])  # cut mid-JSON
    elif student == "s12_renamed":
        nbformat.write(good, folder / "checkpoint (1).ipynb")
    elif student == "s13_missing":
        (folder / "notes.txt").write_text("I forgot to attach the notebook")
    elif student == "s14_kernel_dies":  # the kernel dies mid-run: nbgrader gives up
        answers = {**GOOD, "weights_without_self": "import os\n\nos._exit(1)"}
        nbformat.write(mc.fill(release, answers), folder / "checkpoint.ipynb")
    else:  # pragma: no cover - a typo in the lists above
        raise ValueError(student)


@pytest.fixture(scope="session")
def mini_graded_course(tmp_path_factory: pytest.TempPathFactory) -> MiniGradedCourse:
    """Generate, submit, autograde (and grade one written answer by hand), for real."""
    from nbgrader.apps import NbGraderAPI
    from traitlets.config import Config

    # nbgrader runs the `alembic` command when it creates a gradebook: it must be on PATH
    bindir = str(Path(sys.executable).parent)
    old_path = os.environ.get("PATH", "")
    os.environ["PATH"] = bindir + os.pathsep + old_path
    root = mc.write_course(tmp_path_factory.mktemp("course") / "quiz")
    cwd = os.getcwd()
    os.chdir(root)
    try:
        config = Config()
        config.CourseDirectory.root = str(root)
        config.CourseDirectory.course_id = mc.COURSE_ID
        config.ExecutePreprocessor.timeout = 30
        api = NbGraderAPI(config=config)
        result = api.generate_assignment(mc.ASSIGNMENT)
        assert result["success"], result.get("error") or result["log"]
        release = nbformat.read(root / "release" / mc.ASSIGNMENT / "checkpoint.ipynb", 4)
        for student in [*STUDENTS, *BROKEN]:
            _submit(root, release, student)
        ok = {}
        for student in [*STUDENTS, *BROKEN]:
            ok[student] = api.autograde(mc.ASSIGNMENT, student)["success"]
        with api.gradebook as gb:
            gb.add_student(NO_SUBMISSION)
            grade = gb.find_grade("written_shift_or_scale", "checkpoint", mc.ASSIGNMENT,
                                  "s09_written_graded")
            grade.manual_score = 1.5
            gb.db.commit()
    finally:
        os.chdir(cwd)
        os.environ["PATH"] = old_path
    return MiniGradedCourse(root, ok)
