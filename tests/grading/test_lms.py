"""The LMS exports of a class of 200, read back the way Canvas's and Moodle's importers read them.

The class: the 15 students of the mini course that nbgrader's real autograder graded
(conftest.py: correct, each mistake, a pending written answer, four broken submissions, one
absent) and 185 made-up ones without a submission, with names that hold commas, accents,
quotes and a leading ``=``; one without an LMS key, one who left the course.

Each file is read back by a reader that follows the documented rules of the importer it is
for (cited per function), and each student must land on their own LMS user with the grade
of the grade table (after the late penalty).
"""

from __future__ import annotations

import csv
import io
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from course_grading.gradebook import locate
from course_grading.gradetable import build_grade_table
from course_grading.lms import LmsExportError, export
from course_grading.roster import parse_roster, sync_roster

pytestmark = pytest.mark.slow

MINI = ["s01_correct", "s02_missing_scale", "s03_wrong_axis", "s04_naive_exp",
        "s05_dk_wrong_axis", "s06_blank", "s07_wrong_mc", "s08_written", "s09_written_graded",
        "s10_two_mistakes", "s11_corrupt", "s12_renamed", "s13_missing", "s14_kernel_dies",
        "s15_absent"]
FIRST = ["Zoë", "José", "Ana María", "Łukasz", "Siobhán", "Nguyễn", "Björk", "D'Arcy",
         'Robert "Bob"', "=SUM(A1)", "Chloé", "François", "Ærin", "Ōta"]
LAST = ["O'Brien", "Müller, Jr.", "van der Berg", "Ng-Šimić", "García Márquez", "Øster",
        "Points Possible", "Smith; Jones", "+cmd|' /C calc'!A0", "Dvořák", "Æsir, the"]
NO_KEY = "st0042"
LEAVER = "st0099"


def make_class() -> str:
    """200 rows: the mini course's 15, then 185 made up; Canvas-like numeric LMS ids."""
    rng = random.Random(43)
    lines = ["id,first_name,last_name,email,lms_id,extension,time_limit_factor"]
    ids = MINI + [f"st{n:04d}" for n in range(16, 201)]
    for n, sid in enumerate(ids):
        first, last = rng.choice(FIRST), LAST[n % len(LAST)]
        lms = "" if sid == NO_KEY else str(70000 + 13 * n)
        cells = [sid, first, last, f"{sid}@uni.example", lms, "2d" if n == 3 else "",
                 "2" if n == 5 else ""]
        out = io.StringIO()
        csv.writer(out, lineterminator="").writerow(cells)
        lines.append(out.getvalue())
    return "\n".join(lines) + "\n"


def copy_of(mini: Path, root: Path) -> Path:
    """The graded mini course copied to ``root``, its config's root moved along."""
    shutil.copytree(mini, root)
    config = root / "nbgrader_config.py"
    config.write_text(config.read_text().replace(repr(str(mini)), repr(str(root))))
    assert locate(root).root == root
    return root


@pytest.fixture(scope="module")
def course(mini_graded_course, tmp_path_factory) -> Path:
    root = copy_of(mini_graded_course.root, tmp_path_factory.mktemp("lms") / "quiz")
    text = make_class()
    where = locate(root)
    sync_roster(where, parse_roster(text.encode()))
    kept = [line for line in text.splitlines() if not line.startswith(LEAVER + ",")]
    report = sync_roster(where, parse_roster(("\n".join(kept) + "\n").encode()))
    assert report.left == [LEAVER]
    return root


def final_grades(root: Path) -> dict[str, float]:
    return {r.student: r.final for r in build_grade_table(root).rows
            if r.graded and not r.pending}


# ---- Canvas: lib/gradebook_importer.rb (instructure/canvas-lms) ---------------------------


def canvas_import(path: Path, canvas_users: dict[int, str]) -> tuple[dict[str, str], str]:
    """Canvas's gradebook importer, as its source reads a file: ``;`` or ``,`` by which
    splits the first lines into equal counts; a header whose first cell holds ``Student``
    and second ``ID``, ``SIS User ID`` + ``SIS Login ID`` before ``Section``, which ends the
    student columns; a row whose first cell holds ``Points Possible`` gives the maximum; a
    student is found by ``ID`` (Canvas's user id) as an integer. Returns {user: grade} for
    the one assignment column, and its title."""
    text = path.read_text(encoding="utf-8")
    first = text.splitlines()[:3]

    def fields(sep: str) -> int:
        try:
            counts = {len(next(csv.reader([line], delimiter=sep, strict=True)))
                      for line in first}
        except csv.Error:
            return 0
        return counts.pop() if len(counts) == 1 else 0

    sep = ";" if fields(";") > fields(",") else ","
    rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=sep, strict=True))
    header = rows[0]
    assert len(header) > 3 and "Student" in header[0] and "ID" in header[1], header
    assert re.search(r"SIS\s+User\s+ID", header[2]) and re.search(r"SIS\s+Login\s+ID",
                                                                  header[3])
    student_columns = 5
    assert "Section" in header[student_columns - 1], "Section must end the student columns"
    [title] = header[student_columns:]
    grades: dict[str, str] = {}
    for row in rows[1:]:
        if "Points Possible" in row[0]:
            continue
        if all(re.fullmatch(r"\s*(Muted|Manual Posting.*)?\s*", c, re.I) for c in row if c):
            continue
        user = canvas_users[int(row[1])]  # Canvas: @all_students[student_id.to_i]
        assert user not in grades
        grades[user] = row[student_columns].strip()
    return grades, title


def test_canvas_reads_every_final_grade_onto_the_right_user(course, tmp_path):
    done = export(course, "canvas", out=tmp_path / "canvas.csv", no_submission_zero=True)
    table = build_grade_table(course)
    from nbgrader.api import Gradebook

    with Gradebook(locate(course).db_url) as gb:
        canvas_users = {int(s.lms_user_id): s.id for s in gb.students if s.lms_user_id}
    got, title = canvas_import(done.path, canvas_users)
    assert title == "checkpoint"
    expected = final_grades(course)
    absent = [r.student for r in table.rows if r.status == "no submission"]
    expected.update({s: 0.0 for s in absent})
    for left_out in (NO_KEY, LEAVER):
        expected.pop(left_out)
    assert {u: float(g) for u, g in got.items()} == pytest.approx(expected)
    assert len(got) == 200 - 1 - 1 - 4 - 1  # no key, left, 4 broken, 1 pending
    assert done.left_out == {
        "left the course": [LEAVER],
        "no lms_id on the class list": [NO_KEY],
        "could not be graded (see the grade table; autograde again once fixed)":
            ["s11_corrupt", "s12_renamed", "s13_missing", "s14_kernel_dies"],
        "an answer waits for a manual grade (formgrader's Manual Grading)": ["s08_written"],
    }
    rows = list(csv.reader(done.path.open(encoding="utf-8", newline="")))
    assert rows[1] == ["Points Possible", "", "", "", "", "13"]
    names = [r[0] for r in rows[2:]]
    # "Last, First" as Canvas writes it; commas, quotes and accents intact
    assert any(n.startswith("Müller, Jr., ") for n in names)
    assert any(n.startswith("O'Brien, ") for n in names)
    assert any(n.endswith(', Robert "Bob"') for n in names)
    assert not any("Points Possible" in n for n in names)  # would be read as the maximum
    # nothing a spreadsheet would run: the leading = and + of the names are quoted away
    for row in rows[2:]:
        assert not row[0].startswith(("=", "+", "-", "@")), row
    assert any(n.startswith("'+cmd|") for n in names)


def test_a_canvas_column_names_the_assignment_by_its_id(course, tmp_path):
    done = export(course, "canvas", out=tmp_path / "c.csv", column="Checkpoint quiz (4711)")
    header = next(csv.reader(done.path.open(encoding="utf-8")))
    assert header[-1] == "Checkpoint quiz (4711)"
    # without --no-submission-zero, the 185 who handed nothing in are named, not zeroed
    assert len(done.left_out["no submission (--no-submission-zero sends 0)"]) == 186 - 2
    with pytest.raises(LmsExportError, match="Canvas would not read a column titled "
                       "'Final Score' as an assignment"):
        export(course, "canvas", out=tmp_path / "x.csv", column="Final Score")


# ---- Moodle: grade/import/csv/classes/load_data.php (moodle/moodle) -----------------------


def moodle_import(path: Path, map_from: str, users: dict[str, str]) -> dict[str, float | None]:
    """Moodle's CSV grade import with *Map from* ``map_from``: every value trimmed; a line of
    one cell skipped; the mapped user must exist, or the whole import stops; a grade of ''
    or '-' is no grade, anything else must be a number."""
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))
    header = [h.strip() for h in rows[0]]
    key, grade_col = header.index(map_from), header.index("checkpoint")
    out: dict[str, float | None] = {}
    for line in rows[1:]:
        if len(line) <= 1:
            continue
        value = line[key].strip()
        assert value in users, f"Moodle stops the import: no user with {map_from} {value!r}"
        grade = line[grade_col].strip()
        out[users[value]] = None if grade in ("", "-") else float(grade)
    return out


@pytest.mark.parametrize(("match", "map_from"), [("lms_id", "ID number"),
                                                 ("email", "Email address")])
def test_moodle_reads_every_final_grade_onto_the_right_user(course, tmp_path, match, map_from):
    from nbgrader.api import Gradebook

    done = export(course, "moodle", out=tmp_path / "moodle.csv", match=match)
    with Gradebook(locate(course).db_url) as gb:
        users = {(s.lms_user_id if match == "lms_id" else s.email): s.id
                 for s in gb.students if (s.lms_user_id if match == "lms_id" else s.email)}
    got = moodle_import(done.path, map_from, users)
    expected = final_grades(course)
    expected.pop(LEAVER, None)
    assert got == pytest.approx(expected)
    assert None not in got.values()  # nobody's grade in Moodle is replaced by none
    header = next(csv.reader(done.path.open(encoding="utf-8")))
    assert header == ["ID number", "Email address", "First name", "Last name", "checkpoint"]
    left_out = done.left_out
    if match == "email":  # every student has an email: the one without an lms_id goes out
        assert "no email on the class list" not in left_out
    else:
        assert left_out["no lms_id on the class list"] == [NO_KEY]


def test_exports_refuse_a_course_without_a_class_list(mini_graded_course, tmp_path):
    root = copy_of(mini_graded_course.root, tmp_path / "quiz")
    done = subprocess.run([sys.executable, "-m", "course_grading.lms", "canvas", "checkpoint"],
                          cwd=root, capture_output=True, text=True)
    assert done.returncode == 2
    assert "no class list in the gradebook" in done.stderr
    assert "python -m course_grading.roster load class.csv" in done.stderr


def test_the_grade_table_carries_the_names(course, tmp_path):
    table = build_grade_table(course)
    assert len(table.rows) == 200
    assert table.row(LEAVER)["roster"] == "left"
    assert table.row("s01_correct")["email"] == "s01_correct@uni.example"
    table.write_csv(tmp_path / "grades.csv")
    rows = list(csv.DictReader((tmp_path / "grades.csv").open(encoding="utf-8")))
    names = [r["name"] for r in rows]
    assert any(n.startswith("'=SUM(A1) ") for n in names)  # shown as text in a spreadsheet
