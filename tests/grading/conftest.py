"""Fixtures for tests/grading: a real nbgrader course, autograded once per session.

The course is the small checkpoint of ``mini_course.py`` (same grade ids as the real
quiz). Students are made by code from the generated release; every nbgrader step runs
through :class:`nbgrader.apps.NbGraderAPI` in this process (one start-up, not one per
command).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import mini_course as mc

# name -> answers (by grade id) that the student typed into the release; None = special
GOOD = {
    "attention_weights": mc.CORRECT_CODE,
    "sat_output": "sat_output = np.array([1.26, 1.5])",
    "mc_why_scale": 'mc_why_scale = "B"',
    "mc_causal_mask": 'mc_causal_mask = "C"',
}
STUDENTS: dict[str, dict[str, str]] = {
    "s01_correct": GOOD,
    "s02_missing_scale": {**GOOD, "attention_weights": mc.MISTAKES["missing_scale"]},
    "s03_wrong_axis": {**GOOD, "attention_weights": mc.MISTAKES["wrong_axis"]},
    "s04_naive_exp": {**GOOD, "attention_weights": mc.MISTAKES["naive_exp_overflow"]},
    "s05_dk_wrong_axis": {**GOOD, "attention_weights": mc.MISTAKES["dk_from_wrong_axis"]},
    "s06_blank": {},
    "s07_wrong_mc": {**GOOD, "mc_why_scale": 'mc_why_scale = "A"',
                     "mc_causal_mask": 'mc_causal_mask = "A"'},
    "s08_written": {**GOOD, "written_scaling": "Dot products grow like sqrt(d_k)."},
    "s09_written_graded": {**GOOD, "written_scaling": "Softmax saturates without it."},
    "s10_two_mistakes": {
        **GOOD,
        "attention_weights": mc.MISTAKES["missing_scale"].replace("axis=-1", "axis=0"),
    },
}
BROKEN = ["s11_corrupt", "s12_renamed", "s13_missing", "s14_kernel_dies"]
NO_SUBMISSION = "s15_absent"


@dataclass
class GradedCourse:
    """An autograded course directory and what happened to each student."""

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
        answers = {**GOOD, "attention_weights": "import os\n\nos._exit(1)"}
        nbformat.write(mc.fill(release, answers), folder / "checkpoint.ipynb")
    else:  # pragma: no cover - a typo in the lists above
        raise ValueError(student)


@pytest.fixture(scope="session")
def graded_course(tmp_path_factory: pytest.TempPathFactory) -> GradedCourse:
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
            grade = gb.find_grade("written_scaling", "checkpoint", mc.ASSIGNMENT,
                                  "s09_written_graded")
            grade.manual_score = 1.5
            gb.db.commit()
    finally:
        os.chdir(cwd)
        os.environ["PATH"] = old_path
    return GradedCourse(root, ok)
