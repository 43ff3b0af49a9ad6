"""The grade table, read from a gradebook that nbgrader's real autograder filled in."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

from course_grading.gradetable import build_grade_table, main

pytestmark = pytest.mark.slow

Q = ["weights_without_self (/5)", "shifted_key (/2)", "mc_read_table (/2)",
     "mc_duplicate_key (/1)", "written_shift_or_scale (/3)"]
HEADER = ["student", "name", "email", "roster", "status", *Q, "total (/13)", "late",
          "late penalty", "final (/13)", "failed hidden tests"]

# student -> (status, the five question cells, total, failed hidden tests)
EXPECTED = {
    "s01_correct": ("graded", ["5", "2", "2", "1", "0"], "10", ""),
    "s02_missing_scale": ("graded", ["3", "2", "2", "1", "0"], "8", "test_missing_scale"),
    "s03_wrong_axis": ("graded", ["3", "2", "2", "1", "0"], "8", "test_wrong_axis"),
    "s04_naive_exp": ("graded", ["4", "2", "2", "1", "0"], "9", "test_naive_exp_overflow"),
    "s05_dk_wrong_axis": ("graded", ["3", "2", "2", "1", "0"], "8", "test_dk_from_wrong_axis"),
    "s06_blank": (
        "graded", ["0", "0", "0", "0", "0"], "0",
        "test_missing_scale (NameError) test_wrong_axis (NameError) "
        "test_naive_exp_overflow (NameError) test_dk_from_wrong_axis (NameError)",
    ),
    "s07_wrong_mc": ("graded", ["5", "2", "0", "0", "0"], "7", ""),
    "s08_written": (
        "graded; needs manual grade: written_shift_or_scale",
        ["5", "2", "2", "1", "needs manual grade"], "10 + pending", "",
    ),
    "s09_written_graded": ("graded", ["5", "2", "2", "1", "1.5"], "11.5", ""),
    "s10_two_mistakes": (
        "graded", ["2", "2", "2", "1", "0"], "7", "test_missing_scale test_wrong_axis",
    ),
}
UNGRADED = {
    "s11_corrupt": "ungraded: corrupt notebook (not valid JSON)",
    "s12_renamed": "ungraded: renamed notebook (expected 'checkpoint.ipynb', "
                   "found 'checkpoint (1).ipynb')",
    "s13_missing": "ungraded: missing notebook (no 'checkpoint.ipynb' submitted)",
    "s14_kernel_dies": "ungraded: autograde failed (no autograded notebook)",
    "s15_absent": "no submission",
}


def test_header_has_one_column_per_question_with_its_maximum(mini_graded_course):
    table = build_grade_table(mini_graded_course.root)
    assert table.header == HEADER


@pytest.mark.parametrize("student", sorted(EXPECTED))
def test_graded_submissions_exact_cells(mini_graded_course, student):
    status, cells, total, failed = EXPECTED[student]
    row = build_grade_table(mini_graded_course.root).row(student)
    assert row["status"] == status
    assert [row[q] for q in Q] == cells
    assert row["total (/13)"] == total
    assert row["final (/13)"] == total  # no due date: nothing is late
    assert row["late"] == row["late penalty"] == ""
    assert row["failed hidden tests"] == failed


@pytest.mark.parametrize("student", sorted(UNGRADED))
def test_ungraded_submissions_say_why_in_every_cell_never_zero(mini_graded_course, student):
    reason = UNGRADED[student]
    row = build_grade_table(mini_graded_course.root).row(student)
    assert row["status"] == reason
    assert [row[q] for q in Q] == [reason] * 5
    assert row["total (/13)"] == row["final (/13)"] == reason


def test_every_student_appears_once_in_order(mini_graded_course):
    table = build_grade_table(mini_graded_course.root)
    assert table.students == sorted([*EXPECTED, *UNGRADED])


def test_broken_submissions_really_failed_in_nbgrader(mini_graded_course):
    """The ungraded rows come from real autograde failures, not from the table's guesses."""
    ok = mini_graded_course.autograde_ok
    assert [s for s, good in ok.items() if not good] == [
        "s11_corrupt", "s12_renamed", "s13_missing", "s14_kernel_dies"
    ]


def test_nbgrader_export_scores_the_broken_ones_zero_and_the_table_does_not(mini_graded_course,
                                                                             tmp_path):
    """What the table adds to `nbgrader export`: export says 0 for an ungraded notebook."""
    out = tmp_path / "export.csv"
    nbgrader = Path(sys.executable).parent / "nbgrader"
    subprocess.run([str(nbgrader), "export", f"--to={out}"], cwd=mini_graded_course.root,
                   check=True, capture_output=True)
    exported = {r["student_id"]: r for r in csv.DictReader(out.open())}
    assert float(exported["s11_corrupt"]["score"]) == 0.0
    assert float(exported["s12_renamed"]["score"]) == 0.0
    assert float(exported["s01_correct"]["score"]) == 10.0
    table = build_grade_table(mini_graded_course.root)
    assert table.row("s11_corrupt")["total (/13)"].startswith("ungraded: corrupt")


def test_cli_writes_csv_and_prints_table(mini_graded_course, tmp_path):
    out = tmp_path / "grades.csv"
    proc = subprocess.run(
        [sys.executable, "-m", "course_grading.gradetable",
         "--course-dir", str(mini_graded_course.root), "--csv", str(out)],
        capture_output=True, text=True, check=True,
    )
    rows = list(csv.reader(out.open()))
    assert rows[0] == HEADER
    by_student = {r[0]: r for r in rows[1:]}
    assert by_student["s04_naive_exp"] == [
        "s04_naive_exp", "", "", "", "graded", "4", "2", "2", "1", "0", "9", "", "", "9",
        "test_naive_exp_overflow"
    ]
    assert by_student["s11_corrupt"][5:11] == ["ungraded: corrupt notebook (not valid JSON)"] * 6
    lines = proc.stdout.splitlines()
    assert lines[0].split()[:2] == ["student", "status"]
    corrupt_line = next(line for line in lines if line.startswith("s11_corrupt"))
    assert corrupt_line.split("  ")[-1].strip() == "ungraded"
    assert "15 students, 4 submission(s) could not be graded" in proc.stdout


def test_cli_without_gradebook_says_what_is_missing(tmp_path, capsys):
    assert main(["--course-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"no gradebook at {tmp_path / 'gradebook.db'}" in err
    assert "nbgrader_config.py" in err


def test_unknown_assignment_names_the_known_ones(mini_graded_course):
    with pytest.raises(ValueError, match=r"'quiz9' is not in the gradebook .* \['checkpoint'\]"):
        build_grade_table(mini_graded_course.root, "quiz9")


def test_grading_problems_echoes_no_student_text_and_survives_any_shape():
    """A student writes their cells' metadata: a made-up grade id (HTML, a table's '|', a
    newline) is not echoed into the summaries, and JSON of the wrong shapes is no crash."""
    from course_grading.gradetable import grading_problems

    stop = {"output_type": "error", "ename": "CellTimeoutError"}
    hostile = "<script>alert(1)</script>|x\n| y"
    nb = {"metadata": {}, "cells": [
        {"cell_type": "code", "metadata": {"nbgrader": {"grade_id": hostile}},
         "outputs": [stop]},
        {"cell_type": "code", "metadata": {"nbgrader": {"grade_id": "shifted_key"}},
         "outputs": ["not a dict", stop]},
        "not a cell", {"cell_type": "code", "metadata": ["x"], "outputs": {"a": 1}},
        {"cell_type": "code", "metadata": {"nbgrader": "x"}, "outputs": [stop]},
    ]}
    got = grading_problems(nb)
    assert got == ["a cell without a known grade id: stopped by the cell time limit",
                   "shifted_key: stopped by the cell time limit",
                   "a cell without a known grade id: stopped by the cell time limit"]
    for shape in ([], "x", {"metadata": [], "cells": "x"}, {"metadata": {"course": []}}):
        assert grading_problems(shape) == []
