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

Size and shape too (a red team's runs): ``a_bigcell`` (every answer right, plus one code
cell of 300,000 characters: 45 MB of them cost ``generate_feedback`` 70 minutes and 20 GB),
``a_manycells`` (plus 20,000 one-letter markdown cells: autograde 94 s against 13 s) and
``a_sparse`` (plus a 3 GB sparse file: 69 s, and 3.1 GB written into ``autograded/``) are
refused by both graders and named in the grade table and the report.

``benchmarks/submission_shape.py`` prints the times.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import nbformat
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
#: the other oversized students, each with the reason both graders give
SHAPES = {"a_bigcell": "too large a notebook (more than 200000 characters of cell source)",
          "a_manycells": "too large a notebook (more than 20000 JSON objects)",
          "a_sparse": "too large (more than 100000000 bytes)"}


def _course(base: Path) -> Path:
    course = copy_course(QUIZ, base / "course")
    assert open_api(course).generate_assignment("checkpoint")["success"]
    right = right_answers(course)
    place(course, "a_folders", right)
    place(course, "b_honest", right)
    folder = course / "submitted" / "a_folders" / "checkpoint"
    for i in range(FOLDERS):
        (folder / f"empty{i:05d}").mkdir()
    for student in SHAPES:
        place(course, student, right)
    bigcell = course / "submitted" / "a_bigcell" / "checkpoint" / "checkpoint.ipynb"
    nb = nbformat.read(bigcell, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("x = 1\n" * 50_000))
    nbformat.write(nb, bigcell)
    manycells = course / "submitted" / "a_manycells" / "checkpoint" / "checkpoint.ipynb"
    nb = nbformat.read(manycells, as_version=4)
    nb.cells += [nbformat.v4.new_markdown_cell("a") for _ in range(20_000)]
    nbformat.write(nb, manycells)
    with open(course / "submitted" / "a_sparse" / "checkpoint" / "data.bin", "wb") as f:
        f.truncate(3 * 10**9)  # apparent size: no disk used
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
    shapes = {student: subprocess.run(
        [sys.executable, "-m", "nbgrader", "autograde", "checkpoint", "--student", student],
        cwd=serial, capture_output=True, text=True, timeout=900,
        env=dict(os.environ, PATH=tool_path()), check=False) for student in SHAPES}
    engine = _course(tmp_path_factory.mktemp("shape-engine"))
    summary = grade_all(engine, "checkpoint", jobs=1, progress=False)
    return {"serial": serial, "engine": engine, "proc": proc, "refused": refused,
            "graded_honest": graded_honest, "summary": summary, "shapes": shapes}


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


@pytest.mark.parametrize("student", SHAPES)
def test_both_graders_refuse_oversized_notebooks_and_files(graded, student):
    proc = graded["shapes"][student]
    assert proc.returncode != 0 and f"Not graded: {SHAPES[student]}" in proc.stderr, (
        proc.stderr[-3000:])
    assert not (graded["serial"] / "autograded" / student).exists()
    results = {r.student: r for r in graded["summary"].results}
    assert not results[student].ok and results[student].reason == SHAPES[student]


@pytest.mark.parametrize("run", ["serial", "engine"])
def test_the_grade_table_and_the_report_name_it(graded, run, tmp_path):
    course = graded[run]
    rows = {r.student: r for r in build_grade_table(course, "checkpoint").rows}
    assert rows["a_folders"].status == f"ungraded: {WHY}"
    assert rows["b_honest"].graded
    full = {g: float(p) for g, p in CHECKPOINT.autograded.items()}
    assert {g: s for g, s in grades(course, "b_honest").items() if g in full} == full
    write_report(course, tmp_path / "report", "checkpoint")
    report = (tmp_path / "report" / "report.md").read_text()
    assert f"| a_folders | {WHY} |" in report
    for student, why in SHAPES.items():
        assert rows[student].status == f"ungraded: {why}"
        assert f"| {student} | {why} |" in report
