"""Due dates, late penalties, extensions and time-limit factors, with real nbgrader runs.

The real quiz (quiz/, its config as shipped: ``late_work(c, percent_per_day=10)``) with a
class list loaded by ``python -m course_grading.roster load``, a due date set with
``nbgrader db assignment add --duedate``, and a cell time limit of 3 s for the test. Five
students: one on time, one an hour late, one an hour late with a two-day extension from the
class list, and two whose answer cell sleeps 4.5 s (1.5 times the limit) before it defines
the function, one of them with a time-limit factor of 2 on the class list. The same course
is graded by ``nbgrader autograde`` and by the engine (``python -m course_grading.parallel``),
each in its own copy, and both must penalise, extend and time exactly alike.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from course import nbgrader

from course_grading.gradetable import build_grade_table
from course_grading.mistakes import CORRECT_ANSWER
from course_grading.pipeline import ASSIGNMENT, copy_course, open_api, place_submission
from course_grading.report import write_report
from course_grading.submissions import answers_for, fill_answers
from course_grading.variants import quiz_facts
from course_quiz.checkpoint_spec import CHECKPOINT

QUIZ = Path(__file__).resolve().parents[2] / "quiz"
CELL_LIMIT = 3
SLOW = f"import time\ntime.sleep({1.5 * CELL_LIMIT})\n" + CORRECT_ANSWER
DUE = "2027-01-15 17:00:00 UTC"
SUBMITTED = {"ontime": "2027-01-15 16:00:00.000000 UTC",
             "late": "2027-01-15 18:00:00.000000 UTC",
             "extended": "2027-01-15 18:00:00.000000 UTC",
             "slow": "2027-01-15 16:00:00.000000 UTC",
             "accommodated": "2027-01-15 16:00:00.000000 UTC"}
CLASS_LIST = """\
id,first_name,last_name,email,lms_id,extension,time_limit_factor
ontime,Ana,"Ortiz, Jr.",ana@example.org,1001,,
late,Léo,Müller,leo@example.org,1002,,
extended,Bea,"O""Neil",bea@example.org,1003,2d,
slow,Cai,Lin,cai@example.org,1004,,
accommodated,Dee,Rao,dee@example.org,1005,,2
"""
# the written answer waits for a manual grade: every other point is automatic
WRITTEN_POINTS = CHECKPOINT.question("written_shift_or_scale").points
AUTOMATIC = CHECKPOINT.total_points - WRITTEN_POINTS


def _run(course: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], cwd=course, capture_output=True, text=True,
                          timeout=600)


@pytest.fixture(scope="module")
def graded(bwrap_ok: None, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The class set up once, then graded by each grader in its own copy."""
    base = tmp_path_factory.mktemp("late")
    course = copy_course(QUIZ, base / "serial")
    with open(course / "nbgrader_config.py", "a") as f:
        f.write(f"\nc.Execute.timeout = {CELL_LIMIT}  # tests/sandbox/test_late_work.py\n")
    assert open_api(course).generate_assignment(ASSIGNMENT)["success"]
    (base / "class.csv").write_text(CLASS_LIST, encoding="utf-8")
    loaded = _run(course, "-m", "course_grading.roster", "load", str(base / "class.csv"))
    assert loaded.returncode == 0, loaded.stderr
    assert "extended 2 d" in loaded.stdout and "accommodated x2" in loaded.stdout
    nbgrader(course, "db", "assignment", "add", ASSIGNMENT, f"--duedate={DUE}")
    released = nbformat.read(course / "release" / ASSIGNMENT / "checkpoint.ipynb", 4)
    facts = quiz_facts(nbformat.read(course / "source" / ASSIGNMENT / "checkpoint.ipynb", 4))
    for student, stamp in SUBMITTED.items():
        answers = answers_for(facts, SLOW if student in ("slow", "accommodated")
                              else CORRECT_ANSWER)
        nb = fill_answers(released, answers)
        place_submission(course, student, {"checkpoint.ipynb": nbformat.writes(nb).encode(),
                                           "timestamp.txt": stamp.encode()})
    engine = base / "engine"
    shutil.copytree(course, engine)
    with subprocess.Popen([sys.executable, "-m", "course_grading.parallel", ASSIGNMENT,
                           "--jobs", "2"], cwd=engine, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True) as proc:
        try:
            nbgrader(course, "autograde", ASSIGNMENT)
            out, err = proc.communicate(timeout=900)
        finally:
            proc.kill()
    assert proc.returncode == 0, out + err
    return {"nbgrader autograde": course, "engine": engine}


@pytest.mark.parametrize("grader", ["nbgrader autograde", "engine"])
def test_late_is_penalised_and_the_extension_is_honoured(graded, grader):
    rows = {r.student: r for r in build_grade_table(graded[grader]).rows}
    auto = rows["ontime"].total
    assert auto == AUTOMATIC  # every automatic point
    assert (rows["ontime"].seconds_late, rows["ontime"].penalty) == (0, 0)
    # an hour late: nbgrader's late-submission plugin took 10% of the notebook's score
    assert rows["late"].seconds_late == 3600
    assert rows["late"].penalty == pytest.approx(0.1 * auto)
    assert rows["late"].final == pytest.approx(0.9 * auto)
    # an hour late as well, but the class list gives two more days: not late, no penalty
    assert (rows["extended"].seconds_late, rows["extended"].penalty) == (0, 0)
    assert rows["extended"].extension_minutes == 2 * 24 * 60
    table = build_grade_table(graded[grader])
    late = table.row("late")
    assert (late["late"], late["late penalty"],
            late[f"final (/{CHECKPOINT.total_points})"]) == (
        "1 h", f"-{0.1 * auto:g}", f"{0.9 * auto:g} + pending")
    assert (table.row("extended")["late"], table.row("extended")["late penalty"]) == ("", "")
    assert table.row("late")["name"] == "Léo Müller"
    assert table.row("ontime")["name"] == "Ana Ortiz, Jr."


@pytest.mark.parametrize("grader", ["nbgrader autograde", "engine"])
def test_a_time_limit_factor_of_2_lets_a_cell_of_1_5_limits_finish(graded, grader):
    rows = {r.student: r for r in build_grade_table(graded[grader]).rows}
    slow, accommodated = rows["slow"], rows["accommodated"]
    # the same notebook: stopped at 3 s for one student, run to its end in 6 s for the other
    assert "weights_without_self: stopped by the cell time limit" in slow.problems
    assert slow.scores["weights_without_self"] == 0
    assert accommodated.problems == []
    assert accommodated.time_limit_factor == 2
    assert accommodated.total == rows["ontime"].total == AUTOMATIC
    assert accommodated.scores["weights_without_self"] > 0


def test_the_report_lists_extensions_accommodations_and_late_work(graded, tmp_path):
    write_report(graded["engine"], tmp_path)
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    section = md.split("## Due dates, extensions and time limits", 1)[1]
    lines = {line.split(" | ")[0].strip("| "): line for line in section.splitlines()
             if line.startswith("| ")}
    assert "| extended | Bea O\"Neil | 2027-01-17 17:00 UTC | 2 d | on time |  | as everyone |" \
        in lines["extended"]
    penalty = f"-{0.1 * AUTOMATIC:g}"  # 10% of the automatic points
    assert f"| late | Léo Müller | 2027-01-15 17:00 UTC |  | 1 h | {penalty} | as everyone |" \
        in lines["late"]
    assert lines["accommodated"].endswith(
        f"| on time |  | x2: cell {2 * CELL_LIMIT} s, notebook 60 s |")
    assert "ontime" not in lines and "slow" not in lines
    assert f"each cell {CELL_LIMIT} s, each notebook 30 s" in section
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "<h2>Due dates, extensions and time limits</h2>" in html
    assert "x2: cell 6 s, notebook 60 s" in html
