"""The course's own tools on a real PostgreSQL gradebook, as the guides type them.

A copy of quiz/ whose config names a gradebook on a throw-away PostgreSQL server
(classroom.Postgres: 127.0.0.1, a role with a password, as docs/deploy.md step 6 makes
it). On it, each command of the guides as an instructor types it in the course folder:
``python -m course_grading.roster load`` with a class of 200 (names with commas, accents
and quotes), loaded again when one student leaves and one joins; ``nbgrader
generate_assignment`` with a due date; the engine (``python -m course_grading.parallel``)
grades three submissions, reading the extension and the time-limit factor from the roster
in PostgreSQL; then ``gradetable``, ``report`` and both LMS exports. Nothing may fall back
to a ``gradebook.db`` in the course folder.

tests/hub/test_instructor_hub.py's step 8 does the same with serial ``nbgrader
autograde`` and Canvas's file, through real Unix users on a hub; this one is the engine,
the roster kept in step, ``roster show`` and Moodle's file. Needs root (the server runs
as the ``postgres`` user).
"""

from __future__ import annotations

import csv
import io
import os
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from classroom import Postgres, ensure_env, postgres_bindir

pytestmark = [pytest.mark.hub, pytest.mark.slow, pytest.mark.timeout(1200)]

REPO = Path(__file__).resolve().parents[2]
ASSIGNMENT = "checkpoint"
CELL_LIMIT = 3
DUE = "2027-01-15 17:00:00 UTC"
#: the three who hand something in, and when (collect's timestamp.txt)
SUBMITTED = {"late": "2027-01-15 18:00:00.000000 UTC",
             "extended": "2027-01-15 18:00:00.000000 UTC",
             "accommodated": "2027-01-15 16:00:00.000000 UTC"}
FIRST = ["Zoë", "José", "Siobhán", "Nguyễn", 'Robert "Bob"', "Łukasz", "=SUM(A1)"]
LAST = ["O'Brien", "Müller, Jr.", "García Márquez", "Ng-Šimić", "van der Berg, the"]
LEAVER, JOINER = "mu0100", "newcomer"
MANUAL = 2.0  # the written answer's score, given by hand after the engine ran


def class_list(*, leaver: bool = True, joiner: bool = False) -> str:
    """200 rows: the three who submit, then 197 made up; every one with an LMS key; an
    extension of two days for ``extended`` and a time-limit factor of 2 for
    ``accommodated``. Each student's row is the same in every version of the list (the
    reload changes who is on it, nothing else)."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["id", "first_name", "last_name", "email", "lms_id", "extension",
                "time_limit_factor"])
    everyone = [*SUBMITTED, *(f"mu{n:04d}" for n in range(1, 198)), JOINER]
    for n, sid in enumerate(everyone):
        if (sid == LEAVER and not leaver) or (sid == JOINER and not joiner):
            continue
        w.writerow([sid, FIRST[n % len(FIRST)], LAST[n % len(LAST)], f"{sid}@uni.example",
                    lms_id(sid), "2d" if sid == "extended" else "",
                    "2" if sid == "accommodated" else ""])
    return out.getvalue()


def lms_id(student: str) -> str:
    """The student's LMS key (Canvas's user ID) on the class list."""
    everyone = [*SUBMITTED, *(f"mu{n:04d}" for n in range(1, 198)), JOINER]
    return str(90000 + everyone.index(student))


def typed(course: Path, line: str) -> subprocess.CompletedProcess[str]:
    """One command line of the guides, in the course folder, with the class's shared
    environment first on PATH (as in a terminal of the instructor's hub server: it has
    ``psycopg2`` from deploy/requirements-hub.txt) and this clone's code on its path."""
    env = {**os.environ, "PATH": f"{ensure_env()}/bin{os.pathsep}{os.environ['PATH']}",
           "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1"}
    return subprocess.run(["bash", "-euc", line], cwd=course, env=env, capture_output=True,
                          text=True, timeout=900)


@pytest.fixture(scope="module")
def course(class_ready: None) -> Iterator[Path]:
    """quiz/ copied, its gradebook on PostgreSQL, the class list of 200 in class.csv."""
    from course_grading.pipeline import copy_course
    from course_grading.sandbox import sandbox_problem

    if postgres_bindir() is None:
        pytest.skip("PostgreSQL is not installed: run scripts/install-system-packages.sh")
    problem = sandbox_problem()
    if problem:
        pytest.skip(f"{problem} (scripts/install-system-packages.sh installs it)")
    # the postgres user enters its server's folder in here: not under pytest's 0700 tmp
    base = Path(tempfile.mkdtemp(prefix="pgtools-", dir="/tmp"))
    base.chmod(0o755)
    server = Postgres(base)
    try:
        server.start()
        url = server.create_gradebook(owner="instructor")
        course = copy_course(REPO / "quiz", base / "attention-course")
        with open(course / "nbgrader_config.py", "a") as f:
            f.write(f"\nc.Execute.timeout = {CELL_LIMIT}  # tests/hub/test_postgres_tools.py\n"
                    f"c.CourseDirectory.db_url = {url!r}\n")
        (course / "class.csv").write_text(class_list(), encoding="utf-8")
        yield course
    finally:
        server.stop()
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def graded(course: Path) -> dict[str, subprocess.CompletedProcess[str]]:
    """The term on PostgreSQL: roster, release with a due date, the roster again (one left,
    one joined), three submissions graded by the engine and their written answers by
    hand, the grade table, the report and both LMS files. Every command's result, by
    name."""
    from course_grading.mistakes import CORRECT_ANSWER
    from course_grading.pipeline import place_submission
    from course_grading.submissions import answers_for, fill_answers
    from course_grading.variants import quiz_facts

    done: dict[str, subprocess.CompletedProcess[str]] = {}
    ensure_env()  # built once (cached), before the first command wants it
    done["load"] = typed(course, "python -m course_grading.roster load class.csv")
    done["release"] = typed(course, f"nbgrader generate_assignment {ASSIGNMENT} && nbgrader db "
                            f"assignment add {ASSIGNMENT} --duedate='{DUE}'")
    _ok(done["load"]), _ok(done["release"])  # what follows needs them
    (course / "class.csv").write_text(class_list(leaver=False, joiner=True), encoding="utf-8")
    done["reload"] = typed(course, "python -m course_grading.roster load class.csv")
    done["show"] = typed(course, "python -m course_grading.roster show")
    released = nbformat.read(course / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", 4)
    facts = quiz_facts(nbformat.read(course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", 4))
    slow = f"import time\ntime.sleep({1.5 * CELL_LIMIT})\n" + CORRECT_ANSWER
    for student, stamp in SUBMITTED.items():
        answers = answers_for(facts, slow if student == "accommodated" else CORRECT_ANSWER)
        notebook = fill_answers(released, answers)
        place_submission(course, student, {f"{ASSIGNMENT}.ipynb":
                                           nbformat.writes(notebook).encode(),
                                           "timestamp.txt": stamp.encode()})
    done["engine"] = typed(course, f"python -m course_grading.parallel {ASSIGNMENT} --jobs 1")
    done["by hand"] = typed(course, f"python -c {shlex.quote(GRADE_BY_HAND)}")
    done["table"] = typed(course, "python -m course_grading.gradetable && "
                          "python -m course_grading.report")
    done["canvas"] = typed(course, f"python -m course_grading.lms canvas {ASSIGNMENT} "
                           "--no-submission-zero")
    done["moodle"] = typed(course, f"python -m course_grading.lms moodle {ASSIGNMENT}")
    return done


#: Each written answer graded, as formgrader's Manual Grading saves a score (the LMS files
#: leave out a student whose answer waits), run with the class's environment (psycopg2).
GRADE_BY_HAND = f"""\
from nbgrader.api import Gradebook
from course_grading.gradebook import locate
from course_quiz.checkpoint_spec import CHECKPOINT

[written] = [q.id for q in CHECKPOINT.questions if q.manual]
with Gradebook(locate('.').db_url) as gb:
    for student in {list(SUBMITTED)!r}:
        grade = gb.find_grade(written, {ASSIGNMENT!r}, {ASSIGNMENT!r}, student)
        grade.manual_score = {MANUAL!r}
        grade.needs_manual_grade = False
    gb.db.commit()
"""


def _ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


def grade_table(course: Path) -> dict[str, dict[str, str]]:
    """``python -m course_grading.gradetable``'s CSV, by student."""
    with open(course / f"grades-{ASSIGNMENT}.csv", encoding="utf-8", newline="") as f:
        return {r["student"]: r for r in csv.DictReader(f)}


def test_the_roster_is_loaded_into_postgresql_and_kept_in_step(course, graded):
    assert _ok(graded["load"]).splitlines()[0] == (
        "roster: 200 students in class.csv: 200 joined, 0 came back, 0 left, 0 updated, "
        "0 unchanged.")
    again = _ok(graded["reload"]).splitlines()
    assert again[0] == ("roster: 200 students in class.csv: 1 joined, 0 came back, 1 left, "
                        "0 updated, 199 unchanged."), again
    assert f"  joined: {JOINER}" in again, again
    assert any(line.startswith("  left (") and line.endswith(f": {LEAVER}") for line in again)
    shown = _ok(graded["show"])
    assert "200 enrolled, 1 left" in shown, shown[-500:]
    assert "Müller, Jr." in shown and 'Robert "Bob"' in shown
    assert not (course / "gradebook.db").exists()


def test_the_engine_reads_the_extension_and_the_time_limit_factor_from_postgresql(
        course, graded):
    _ok(graded["engine"])
    _ok(graded["by hand"])
    _ok(graded["table"])
    table = grade_table(course)
    late, extended, accommodated = (table[s] for s in SUBMITTED)
    [total] = [h for h in late if h.startswith("total (/")]
    final = "final" + total.removeprefix("total")
    assert float(late[total]) > MANUAL and extended[total] == late[total]
    # nbgrader takes 10% a day late (part of a day: 10%) of the points autograde gave
    penalty = 0.1 * (float(late[total]) - MANUAL)
    assert (late["late"], float(late["late penalty"])) == ("1 h", pytest.approx(-penalty))
    assert float(late[final]) == pytest.approx(float(late[total]) - penalty)
    # an hour late too, but two days more on the class list: on time
    assert (extended["late"], extended["late penalty"]) == ("", "")
    assert extended[final] == extended[total]
    # a cell of 1.5 limits ran to its end: the factor of 2 came from PostgreSQL
    assert (accommodated["status"], accommodated["failed hidden tests"]) == ("graded", "")
    assert accommodated[total] == late[total]
    report = (course / f"report-{ASSIGNMENT}" / "report.md").read_text(encoding="utf-8")
    section = report.split("## Due dates, extensions and time limits", 1)[1]
    assert f"x2: cell {2 * CELL_LIMIT} s" in section


def test_gradetable_and_report_run_on_postgresql(course, graded):
    _ok(graded["table"])
    table = grade_table(course)
    assert len(table) == 201  # 200 on the list, and the one who left
    assert table[LEAVER]["roster"] == "left" and table[JOINER]["roster"] != "left"
    assert table[JOINER]["status"] == "no submission"
    assert table["extended"]["name"] == "José Müller, Jr."
    assert table["mu0002"]["name"] == 'Robert "Bob" van der Berg, the'
    assert table["mu0004"]["name"] == "'=SUM(A1) Müller, Jr."  # text in a spreadsheet
    report = (course / f"report-{ASSIGNMENT}" / "report.md").read_text(encoding="utf-8")
    section = report.split("## Due dates, extensions and time limits", 1)[1]
    assert "| extended | José Müller, Jr. |" in section and "| 2 d | on time |" in section
    assert not (course / "gradebook.db").exists()


def test_both_lms_files_come_from_postgresql(course, graded):
    _ok(graded["canvas"])
    _ok(graded["moodle"])
    table = grade_table(course)
    [final] = [h for h in table["late"] if h.startswith("final (/")]
    with open(course / f"canvas-{ASSIGNMENT}.csv", encoding="utf-8", newline="") as f:
        canvas = list(csv.reader(f))
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                         ASSIGNMENT]
    assert canvas[1][0] == "Points Possible"
    by_key = {r[1]: float(r[5]) for r in canvas[2:]}
    # everyone on the list now (the joiner too, at 0: --no-submission-zero), not the leaver
    assert len(by_key) == 200 and lms_id(JOINER) in by_key and lms_id(LEAVER) not in by_key
    assert by_key[lms_id(JOINER)] == 0.0
    for student in SUBMITTED:
        assert by_key[lms_id(student)] == pytest.approx(float(table[student][final]))
    with open(course / f"moodle-{ASSIGNMENT}.csv", encoding="utf-8", newline="") as f:
        moodle = {r["ID number"]: r for r in csv.DictReader(f)}
    assert set(moodle) == {lms_id(s) for s in SUBMITTED}  # the graded ones only
    row = moodle[lms_id("extended")]
    assert (row["Last name"], row["Email address"]) == ("Müller, Jr.", "extended@uni.example")
    assert float(row[ASSIGNMENT]) == pytest.approx(float(table["extended"][final]))
