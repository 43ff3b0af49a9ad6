"""The checkpoint quiz in JupyterLab in Chromium, as a student and as an instructor meet it.

A throw-away copy of quiz/ is released with the real ``nbgrader generate_assignment``. The
student opens the released notebook (their own server, in a folder without the course's
config), types an answer into the ``weights_without_self`` cell, saves, and presses nbgrader's
Validate button: a correct answer reports success, a wrong one reports the visible tests'
failure. The instructor opens Nbgrader > Formgrader and finds ``checkpoint`` listed.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from labdriver import (
    REPO,
    VALIDATE,
    LabServer,
    copy_tree,
    open_notebook,
    replace_cell_and_validate,
    save_screenshot,
    shutdown_kernels,
    venv_env,
)

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

QUIZ = REPO / "quiz"
ASSIGNMENT = "checkpoint"
SOURCE = QUIZ / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
SOLUTION_MARKERS = re.compile(r"^\s*### (BEGIN|END) SOLUTION\s*$")

# Right shape, rows sum to 1, wrong values: what the visible tests exist to catch.
WRONG_ANSWER_SUFFIX = '''


def weights_without_self(Q, K):
    """Uniform weights (a wrong answer on purpose)."""
    import numpy as np

    return np.full((np.shape(Q)[0], np.shape(K)[0]), 1.0 / np.shape(K)[0])
'''


def _grade_id(cell: Any) -> str | None:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def _solution(cell: Any) -> str:
    """The instructor's answer with the solution markers removed."""
    return "\n".join(line for line in cell.source.splitlines()
                     if not SOLUTION_MARKERS.match(line))


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory, browser_requirements: None) -> Path:
    """A copy of quiz/ on which the real nbgrader has released ``checkpoint``."""
    if not SOURCE.is_file():
        pytest.fail(f"the quiz source {SOURCE.relative_to(REPO)} is missing")
    course = copy_tree(QUIZ, tmp_path_factory.mktemp("quiz") / "course")
    for stale in ("gradebook.db", "release", "submitted", "autograded", "feedback"):
        path = course / stale
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()
    done = subprocess.run(
        [sys.executable, "-m", "nbgrader", "generate_assignment", ASSIGNMENT, "--force"],
        cwd=course, env=venv_env(), capture_output=True, text=True, timeout=180,
    )
    released = course / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    assert done.returncode == 0 and released.is_file(), done.stdout + done.stderr
    return course


@pytest.fixture(scope="module")
def student_lab(course: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    """The student's JupyterLab, in a home folder holding the released notebook.

    Every answer cell (code or written) except ``weights_without_self`` is filled with the
    instructor's solution (a student who has done the rest), so that Validate's verdict
    hangs on the one answer the browser types.
    """
    home = tmp_path_factory.mktemp("student")
    source = nbformat.read(SOURCE, as_version=4)
    solutions = {_grade_id(c): _solution(c) for c in source.cells
                 if c.get("metadata", {}).get("nbgrader", {}).get("solution")}
    released = nbformat.read(course / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb",
                             as_version=4)
    for cell in released.cells:
        gid = _grade_id(cell)
        if gid in solutions and gid != "weights_without_self":
            cell.source = solutions[gid]
    (home / ASSIGNMENT).mkdir()
    nbformat.write(released, home / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
    with LabServer(home, tmp_path_factory.mktemp("student-scratch")) as server:
        yield server


def _visible_tests_first_line() -> str:
    source = nbformat.read(SOURCE, as_version=4)
    [cell] = [c for c in source.cells if _grade_id(c) == "test_weights_visible"]
    return next(line for line in cell.source.splitlines() if line.strip()).strip()


def _answer_texts() -> tuple[str, str]:
    source = nbformat.read(SOURCE, as_version=4)
    [cell] = [c for c in source.cells if _grade_id(c) == "weights_without_self"]
    correct = _solution(cell).rstrip() + "\n"
    return correct, correct.rstrip() + WRONG_ANSWER_SUFFIX


def test_student_validate_reports_visible_tests(lab_page: Any, student_lab: LabServer,
                                                artifacts: Path) -> None:
    correct, wrong = _answer_texts()
    relpath = f"{ASSIGNMENT}/{ASSIGNMENT}.ipynb"
    open_notebook(lab_page, student_lab, relpath, "student")
    try:
        validate = lab_page.locator(f".jp-NotebookPanel:not(.lm-mod-hidden) {VALIDATE}")
        assert validate.count() == 1, "nbgrader's Validate button is missing from the toolbar"

        verdict = replace_cell_and_validate(lab_page, "def weights_without_self", correct)
        save_screenshot(lab_page, artifacts, "quiz_student_validate_correct")
        assert "Success" in verdict and "passes all the tests" in verdict, verdict
        lab_page.locator(".jp-Dialog button").last.click()

        verdict = replace_cell_and_validate(lab_page, "def weights_without_self", wrong)
        save_screenshot(lab_page, artifacts, "quiz_student_validate_wrong")
        assert "Success" not in verdict, verdict
        assert "failed" in verdict.lower(), verdict
        # The dialog shows the failing cell: it is the visible tests of weights_without_self.
        assert _visible_tests_first_line() in verdict, verdict
        # and the exception the check raised, naming the mistake of the uniform weights typed
        # in (the visible check confirms form only: no expected number is shown, issue 41)
        assert re.search(r"\b\w+(Error|Failed): .*diagonal is not hidden", verdict), verdict
        lab_page.locator(".jp-Dialog button").last.click()
    finally:
        shutdown_kernels(student_lab)


@pytest.fixture(scope="module")
def instructor_lab(course: Path, tmp_path_factory: pytest.TempPathFactory
                   ) -> Iterator[LabServer]:
    """The instructor's JupyterLab, started in the course folder (where nbgrader_config.py is)."""
    with LabServer(course, tmp_path_factory.mktemp("instructor-scratch")) as server:
        yield server


def test_instructor_formgrader_lists_checkpoint(lab_page: Any, instructor_lab: LabServer,
                                                artifacts: Path) -> None:
    lab_page.goto(instructor_lab.url("lab/workspaces/instructor?reset"))
    lab_page.locator(".lm-MenuBar-item", has_text="Nbgrader").click()
    lab_page.locator(".lm-Menu-item[data-command='nbgrader:open-formgrader']").click()
    frame = lab_page.frame_locator("iframe").first
    row = frame.locator("tr", has_text=ASSIGNMENT).first
    row.wait_for(timeout=60_000)
    save_screenshot(lab_page, artifacts, "quiz_instructor_formgrader")
    assert ASSIGNMENT in row.inner_text()
