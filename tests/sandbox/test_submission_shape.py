"""A submission of 10,000 empty folders is refused at once by both graders (issue 42, item 4).

nbgrader's autograde lists a submission before anything else, in time quadratic in its
folders: 10,000 empty ones held a grader 148 s (an honest submission takes about 2 s), and
plain ``nbgrader collect`` or a submission placed by hand never meets the course's own
collect, which counts them. Here ``a_folders`` (every answer right, plus 10,000 empty
folders, placed by hand) is graded before ``b_honest`` (every answer right) by
``nbgrader autograde`` with the course's config and by the engine with one worker, so that
the honest student waits for whatever the folders cost:

* ``a_folders`` is refused, not graded, and named ``ungraded: too many files (more than 1000
  files and folders)`` in the engine's summary, the grade table and the report; its
  submission is kept as it was;
* its refusal takes less time than grading the honest notebook (the bound is the honest
  case, not a clock: on a busy machine both grow);
* ``b_honest`` gets every autograded point.

``benchmarks/submission_shape.py`` prints the times.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hostile_quiz import place, right_answers

from course_exchange.inbound import count_entries
from course_grading.gradetable import build_grade_table
from course_grading.parallel import grade_all
from course_grading.pipeline import copy_course, grades, open_api, tool_path
from course_grading.report import write_report
from course_quiz.checkpoint_spec import CHECKPOINT

QUIZ = Path(__file__).resolve().parents[2] / "quiz"
FOLDERS = 10_000
WHY = "too many files (more than 1000 files and folders)"


def _course(base: Path) -> Path:
    course = copy_course(QUIZ, base / "course")
    assert open_api(course).generate_assignment("checkpoint")["success"]
    right = right_answers(course)
    place(course, "a_folders", right)
    place(course, "b_honest", right)
    folder = course / "submitted" / "a_folders" / "checkpoint"
    for i in range(FOLDERS):
        (folder / f"empty{i:05d}").mkdir()
    return course


@pytest.fixture(scope="module")
def graded(bwrap_ok: None, tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    serial = _course(tmp_path_factory.mktemp("shape-serial"))
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "nbgrader", "autograde", "checkpoint",
                           "--student", "a_folders"], cwd=serial, capture_output=True,
                          text=True, timeout=900, env=dict(os.environ, PATH=tool_path()),
                          check=False)
    refused = time.perf_counter() - start
    start = time.perf_counter()
    honest = subprocess.run([sys.executable, "-m", "nbgrader", "autograde", "checkpoint",
                             "--student", "b_honest"], cwd=serial, capture_output=True,
                            text=True, timeout=900, env=dict(os.environ, PATH=tool_path()),
                            check=False)
    graded_honest = time.perf_counter() - start
    assert honest.returncode == 0, honest.stderr[-3000:]
    engine = _course(tmp_path_factory.mktemp("shape-engine"))
    summary = grade_all(engine, "checkpoint", jobs=1, progress=False)
    return {"serial": serial, "engine": engine, "proc": proc, "refused": refused,
            "graded_honest": graded_honest, "summary": summary}


def test_plain_autograde_refuses_it_before_listing_it(graded):
    proc = graded["proc"]
    assert proc.returncode != 0  # nbgrader reports the failed submission
    assert f"Not graded: {WHY}" in proc.stderr
    assert "Copying" not in proc.stderr  # nbgrader's own listing never ran
    assert graded["refused"] < graded["graded_honest"], graded
    serial = graded["serial"]
    assert not (serial / "autograded" / "a_folders").exists()
    kept = serial / "submitted" / "a_folders" / "checkpoint"
    assert count_entries(kept, 2 * FOLDERS) == FOLDERS + 1  # the notebook and the folders


def test_the_engine_refuses_it_and_the_honest_neighbour_waits_less_than_its_own_grading(
        graded):
    results = {r.student: r for r in graded["summary"].results}
    assert not results["a_folders"].ok and results["a_folders"].reason == WHY
    assert results["b_honest"].ok
    assert results["a_folders"].seconds < results["b_honest"].seconds, results
    assert f"FAILED a_folders: {WHY}" in graded["summary"].render()


@pytest.mark.parametrize("run", ["serial", "engine"])
def test_the_grade_table_and_the_report_name_it(graded, run, tmp_path):
    course = graded[run]
    rows = {r.student: r for r in build_grade_table(course, "checkpoint").rows}
    assert rows["a_folders"].status == f"ungraded: {WHY}"
    assert rows["b_honest"].graded
    full = {g: float(p) for g, p in CHECKPOINT.autograded.items()}
    assert {g: s for g, s in grades(course, "b_honest").items() if g in full} == full
    write_report(course, tmp_path / "report", "checkpoint")
    assert f"| a_folders | {WHY} |" in (tmp_path / "report" / "report.md").read_text()
