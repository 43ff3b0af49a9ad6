"""Quiet, honest logs and summaries on a real run of the grading engine.

Four submissions of a copy of quiz/: one right, one whose 'sat' cell loops until the cell
time limit stops it, one whose code answer does not parse, one with its checks edited. The engine
(``python -m course_grading.parallel``, as docs/instructors.md types it), the grade table and the
class report each name the two students and what happened; the engine prints no
RuntimeWarning about itself, and ``nbgrader generate_feedback`` prints no warning about the
course's own preprocessors.

A fifth student's id is hostile (a student chooses it when submitting through the local
exchange): a spreadsheet formula, HTML, Markdown, math and terminal escapes. Every place that
shows it (the engine's summary, the grade table's text and CSV, the class report) shows the
characters without running or drawing anything.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import pytest

from course_grading.pipeline import (
    ASSIGNMENT,
    copy_course,
    open_api,
    place_submission,
    tool_path,
)
from course_grading.submissions import fill_answers, made_up_submission

ROOT = Path(__file__).resolve().parents[2]
LOOP = "dave: shifted_key: stopped by the cell time limit"
BROKEN = "erin: weights_without_self: does not parse"
# No glob characters ([, *, ?): nbgrader finds a student's folder with a glob; and no space
# at either end, which nbgrader strips from a student id.
HOSTILE = "=1+2|<img src=x onerror=alert(1)>\r$x$_ \x1b]0;owned\x07\x1b)0"


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> Path:
    course = copy_course(ROOT / "quiz", tmp_path_factory.mktemp("quiet") / "quiz")
    assert open_api(course).generate_assignment(ASSIGNMENT)["success"]
    released = (course / "release" / ASSIGNMENT / "checkpoint.ipynb").read_text()
    place_submission(course, "ada", made_up_submission(course, "correct"))
    place_submission(course, "dave", made_up_submission(course, "infinite_loop"))
    place_submission(course, "fred", made_up_submission(course, "edited_tests"))
    broken = fill_answers(nbformat.reads(released, 4),
                          {"weights_without_self": "def weights_without_self(Q, K:\n    return Q"})
    place_submission(course, "erin", {"checkpoint.ipynb": nbformat.writes(broken).encode()})
    place_submission(course, HOSTILE, made_up_submission(course, "edited_tests"))
    return course


def _run(course: Path, *argv: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": tool_path()}
    return subprocess.run(argv, cwd=course, env=env, capture_output=True, text=True,
                          timeout=600)


@pytest.fixture(scope="module")
def engine(course: Path) -> subprocess.CompletedProcess:
    argv = (sys.executable, "-m", "course_grading.parallel", ASSIGNMENT, "--no-progress")
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as err, subprocess.Popen(
            argv, cwd=course, env={**os.environ, "PATH": tool_path()},
            stdout=subprocess.PIPE, stderr=err, text=True) as proc:
        first = proc.stdout.readline()  # the summary's first line, when it is printed
        summary_at = time.perf_counter() - start
        out = first + proc.stdout.read()
        proc.wait(timeout=600)
        err.seek(0)
        done = subprocess.CompletedProcess(argv, proc.returncode, out, err.read())
    done.summary_at = summary_at  # type: ignore[attr-defined]
    return done


def test_the_engines_time_includes_its_own_start(engine):
    """Issue 33, item 11: the summary's time left out the engine's start (imports, config,
    gradebook); it is now the time from the command's launch to its summary, as a clock
    outside the process measures it."""
    said = float(re.search(r"in (\d+\.\d) s with", engine.stdout).group(1))
    # The summary rounds to 0.1 s (up to 0.05 s over), and the process's start time in /proc
    # is whole clock ticks rounded down (up to one tick, 1/SC_CLK_TCK s, over). Beyond that,
    # once in CI (ci-run9, a Firecracker VM with 2 vCPUs under load) the engine's 19.1 s came
    # at 19.037 s by this clock: at least 13 ms more than a tick, cause not found (200 starts
    # here, idle and beside 3 busy loops, never read more than 1.7 ms over). The bound keeps
    # what the test is for, the start counted (about a second) and not counted twice, with
    # 0.1 s for the two clocks' disagreement.
    over = 0.05 + 1 / os.sysconf("SC_CLK_TCK") + 0.1
    assert engine.summary_at - 0.5 <= said <= engine.summary_at + over, (said, engine.stdout)


def test_the_engine_names_who_was_stopped_or_broken(engine):
    assert "RuntimeWarning" not in engine.stderr, engine.stderr
    assert "SAWarning" not in engine.stderr, engine.stderr
    assert f"graded, but stopped or broken: {LOOP}" in engine.stdout, engine.stdout
    assert f"graded, but stopped or broken: {BROKEN}" in engine.stdout, engine.stdout
    assert "ada:" not in engine.stdout.split("stopped or broken", 1)[-1].split("\n")[0]


def test_the_grade_table_names_them(course, engine):
    from course_grading.gradetable import build_grade_table

    rows = {r.student: r for r in build_grade_table(course, ASSIGNMENT).rows}
    assert rows["ada"].problems == []
    assert rows["dave"].graded and rows["dave"].problems == [LOOP.split(": ", 1)[1]]
    assert rows["erin"].graded and rows["erin"].problems == [BROKEN.split(": ", 1)[1]]
    assert "stopped by the cell time limit" in rows["dave"].status
    printed = _run(course, sys.executable, "-m", "course_grading.gradetable").stdout
    assert "2 graded but stopped or broken" in printed
    assert f"  {LOOP}" in printed and f"  {BROKEN}" in printed


def test_the_report_names_them(course, engine, tmp_path):
    from course_grading.report import write_report

    summary = write_report(course, tmp_path / "report", ASSIGNMENT)
    assert sorted(summary.troubled) == ["dave", "erin"]
    md = (tmp_path / "report" / "report.md").read_text()
    section = md.split("## Graded, but stopped or broken", 1)[1]
    assert "| dave | shifted_key: stopped by the cell time limit |" in section
    assert "| erin | weights_without_self: does not parse |" in section
    assert "2 graded but stopped or broken" in md


def test_generate_feedback_prints_no_config_warning(course, engine):
    done = _run(course, "nbgrader", "generate_feedback", ASSIGNMENT,
                "--ManualGradesFirst.allow_pending=True")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "not recognized" not in done.stderr, done.stderr


def test_the_feedback_says_what_the_grade_table_says(course, engine):
    """Issue 41: the feedback of an answer that does not parse, or whose cell the time limit
    stopped, said "`...` is not defined: run its cell" where the instructor's table said
    "does not parse" / "stopped by the cell time limit"; and its contents list named every
    check "Test cell"."""
    done = _run(course, "nbgrader", "generate_feedback", ASSIGNMENT, "--force",
                "--ManualGradesFirst.allow_pending=True")
    assert done.returncode == 0, done.stderr[-2000:]

    def words(student: str, grade_id: str) -> str:
        page = (course / "feedback" / student / ASSIGNMENT / "checkpoint.html").read_text()
        found = re.search(rf'<div class="course-check" data-check="{grade_id}".*?</div>',
                          page, flags=re.S)
        assert found, (student, grade_id)
        return found.group(0)

    assert "`weights_without_self` is not defined: its cell does not parse (SyntaxError)" \
        in words("erin", "test_weights_visible")
    assert "`shifted_weights` is not defined: its cell was stopped by the cell time limit" \
        in words("dave", "test_shifted_key")
    page = (course / "feedback" / "ada" / ASSIGNMENT / "checkpoint.html").read_text()
    assert "Test cell" not in page
    assert '<a href="#test_missing_scale">test_missing_scale: whether the scores' in page


def test_nbgrader_warns_about_changed_checks_only_when_they_were_changed(course, engine):
    """No "checksum has changed" for a check whose only difference is its hidden tests."""
    done = _run(course, "nbgrader", "autograde", ASSIGNMENT, "--force", "--student", "ada")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "checksum" not in done.stderr, done.stderr
    assert "SAWarning" not in done.stderr, done.stderr
    edited = _run(course, "nbgrader", "autograde", ASSIGNMENT, "--force", "--student", "fred")
    assert "Attribute 'checksum' for cell test_" in edited.stderr, edited.stderr[-2000:]


def test_the_serial_log_names_who_timed_out(course, engine):
    """Issue 33, item 10: nbclient's "Timeout waiting for execute reply" names no student;
    in the course's log every line of the grading preprocessor says whose notebook it is."""
    done = _run(course, "nbgrader", "autograde", ASSIGNMENT, "--force", "--student", "dave")
    assert done.returncode == 0, done.stderr[-2000:]
    [line] = [x for x in done.stderr.splitlines() if "Timeout waiting for execute reply" in x]
    assert "dave" in line and "checkpoint" in line, line


def _no_control_characters(text: str) -> None:
    shown = [line for line in text.splitlines() if "onerror" in line]
    assert shown, text
    for line in shown:
        assert "\x1b" not in line and "\x07" not in line and "\r" not in line, repr(line)


def test_the_engine_shows_a_hostile_id_without_its_escapes(engine):
    assert "5 of 5 submissions graded" in engine.stdout, engine.stdout
    _no_control_characters(engine.stdout)
    assert "=1+2|<img src=x onerror=alert(1)>?$x$_ ?]0;owned??)0" in engine.stdout


def test_the_grade_table_shows_a_hostile_id_as_text(course, engine):
    import csv

    out = course / "hostile.csv"
    printed = _run(course, sys.executable, "-m", "course_grading.gradetable", "--csv",
                   str(out)).stdout
    _no_control_characters(printed)
    with open(out, newline="", encoding="utf-8") as f:
        cells = [row[0] for row in csv.reader(f)]
    # A leading ' makes a spreadsheet show the cell as text, not run it as a formula.
    assert "'" + HOSTILE in cells, cells
    assert not any(c.startswith(("=", "+", "-", "@")) for c in cells), cells


def test_the_report_shows_a_hostile_id_as_text(course, engine, tmp_path):
    from course_grading.report import write_report

    write_report(course, tmp_path / "report", ASSIGNMENT)
    md = (tmp_path / "report" / "report.md").read_text()
    assert "<img" not in md and "\x1b" not in md, md
    lost = md.split("## Why points were lost", 1)[1]
    rows = [line for line in lost.splitlines() if "onerror" in line]
    assert rows, lost
    for row in rows:
        assert row.startswith("| =1+2\\|&lt;img src=x onerror=alert(1)&gt; "
                              "\\$x\\$\\_  \\]0;owned  )0 | "), row
        # the student's | is escaped: the row has as many columns as the header
        assert row.replace("\\|", "").count("|") == 5, row
    html_report = (tmp_path / "report" / "report.html").read_text()
    assert "<img src=x" not in html_report and "\x1b" not in html_report
