"""The class list: every bad row named, and a gradebook kept in step as students come and go.

Each load goes through nbgrader's own gradebook (SQLite here; tests/hub/test_postgres_tools.py
does the same on PostgreSQL).
"""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
from pathlib import Path

import pytest

from course_grading.gradebook import locate, open_gradebook
from course_grading.roster import (
    RosterError,
    parse_extension,
    parse_roster,
    read_roster,
    roster_extension,
    sync_roster,
    time_limit_factor,
)

HEADER = "id,first_name,last_name,email,lms_id,extension,time_limit_factor\n"


def csv_bytes(*rows: str, header: str = HEADER) -> bytes:
    return (header + "".join(r + "\n" for r in rows)).encode()


def problems(data: bytes) -> list[str]:
    with pytest.raises(RosterError) as info:
        parse_roster(data, "class.csv")
    assert str(info.value).startswith("class.csv: nothing was loaded")
    return info.value.problems


def test_names_with_commas_quotes_and_accents_are_kept_as_written():
    rows = parse_roster(csv_bytes(
        'ada,Ada,"Lovelace, Countess",ada@example.org,101,2d,',
        'bob,"Robert ""Bob""",Ó Briain,bob@example.org,,,1.5',
        "zoe,Zoë,Ng-Šimić,zoe@example.org,103,,x2",
        "mono,,Sukarno,mono@example.org,,,"))
    assert [(r.id, r.first_name, r.last_name) for r in rows] == [
        ("ada", "Ada", "Lovelace, Countess"), ("bob", 'Robert "Bob"', "Ó Briain"),
        ("zoe", "Zoë", "Ng-Šimić"), ("mono", "", "Sukarno")]
    assert rows[0].extension_minutes == 2 * 24 * 60 and rows[0].lms_id == "101"
    assert [r.time_limit_factor for r in rows] == [1.0, 1.5, 2.0, 1.0]


def test_spreadsheet_headers_a_bom_and_semicolons_are_understood():
    data = ("\ufeffID;First name;Last name;Email;LMS user id\n"
            "ada;Ada;Lovelace;ada@example.org;101\n").encode()
    [row] = parse_roster(data)
    assert (row.id, row.name, row.lms_id) == ("ada", "Ada Lovelace", "101")


@pytest.mark.parametrize(("row", "expected"), [
    ("-ada,A,B,a@x.org,,,", "row 2 (id '-ada'): id '-ada' is not a user name; expected "
     "letters, digits, _ . @ - (not first)"),
    (",A,B,a@x.org,,,", "row 2 (id ''): id is empty"),
    ("ada,,,a@x.org,,,", "row 2 (id 'ada'): first_name and last_name are both empty"),
    ("ada,A,B,ada-at-x.org,,,", "row 2 (id 'ada'): email 'ada-at-x.org' is not an email "
     "address; expected name@domain.tld"),
    ("ada,A,B,a@x.org,=1+2,,", "row 2 (id 'ada'): lms_id '=1+2' starts with '=', which a "
     "spreadsheet runs as a formula"),
    ("ada,A,B,a@x.org,@SUM(A1),,", "lms_id '@SUM(A1)' starts with '@'"),
    ("ada,A,B,a@x.org,,3,", "row 2 (id 'ada'): extension '3' has no unit; expected a time "
     "such as 2d, 36h, 90m or 1d 12h"),
    ("ada,A,B,a@x.org,,2 fortnights,", "extension '2 fortnights': unknown unit 'fortnights'"),
    ("ada,A,B,a@x.org,,400d,", "extension '400d' is longer than 365 days"),
    ("ada,A,B,a@x.org,,,0.5", "row 2 (id 'ada'): time_limit_factor '0.5' is not a number "
     "from 1 to 10 (e.g. 1.5 for half as much time again; below 1 would shorten the limits)"),
    ("ada,A,B,a@x.org,,,twice", "time_limit_factor 'twice' is not a number from 1 to 10"),
    ("ada,A,B,a@x.org,,", "row 2: 6 cells, expected 7 as in the header (a name with a comma "
     "must be in double quotes)"),
    ("ada,A\x1b[2J,B,a@x.org,,,", "first_name 'A?[2J' holds a control character"),
    ("ada," + "x" * 129 + ",B,a@x.org,,,", "first_name has 129 characters; at most 128"),
])
def test_each_bad_row_is_named_with_what_was_expected(row, expected):
    found = problems(csv_bytes(row))
    assert len(found) == 1 and expected in found[0], found


def test_every_problem_of_a_file_is_listed_and_duplicates_name_the_first_row():
    found = problems(csv_bytes("ada,A,B,a@x.org,101,,", "bob,B,C,a@x.org,101,,",
                               "ada,C,D,c@x.org,,,", "eve,E,F,e@x.org,,soon,"))
    assert found == [
        "row 3 (id 'bob'): email 'a@x.org' is also in row 2; each student needs their own",
        "row 3 (id 'bob'): lms_id '101' is also in row 2; each student needs their own",
        "row 4 (id 'ada'): id 'ada' is also in row 2; each student needs their own",
        "row 5 (id 'eve'): extension 'soon' is not a time; expected e.g. 2d, 36h, 90m or 1d 12h",
    ]


@pytest.mark.parametrize(("data", "expected"), [
    (b"", "is empty; expected a header row"),
    (HEADER.encode(), "has a header but no students"),
    (b"id,first_name,last_name,mail\nada,A,B,a@x.org\n",
     "row 1: unknown column 'mail'; expected id, first_name, last_name, email, lms_id, "
     "extension, time_limit_factor"),
    (b"id,first_name,last_name\nada,A,B\n", "row 1: missing column email"),
    (b"id,first_name,last_name,email\nada,A,B,a@x.org\nbob,\xe9,B,b@x.org\n",
     "row 3: byte 0xe9 is not UTF-8; save the file as 'CSV UTF-8'"),
    (b'id,first_name,last_name,email\nada,"A"x,B,a@x.org\n', "row 2: "),
])
def test_a_file_that_is_no_class_list_says_why(data, expected):
    found = problems(data)
    assert any(expected in p for p in found), found


@pytest.mark.parametrize(("text", "minutes"), [
    ("2d", 2880), ("36h", 2160), ("90m", 90), ("1d 12h", 2160), ("1w", 10080),
    ("1.5 days", 2160), ("2 hours, 30 minutes", 150), ("", None), ("0d", None)])
def test_extensions_in_the_units_an_instructor_writes(text, minutes):
    assert parse_extension(text) == minutes


# ---- a gradebook kept in step --------------------------------------------------------------


def rows_of(*lines: str):
    return parse_roster(csv_bytes(*lines))


@pytest.fixture
def course(tmp_path: Path) -> Path:
    (tmp_path / "nbgrader_config.py").write_text(
        "c = get_config()\nc.CourseDirectory.course_id = 'attention-course'\n")
    return tmp_path


def students(course: Path) -> dict[str, tuple]:
    from nbgrader.api import Student

    with open_gradebook(locate(course)) as gb:
        return {s.id: (s.first_name, s.last_name, s.email, s.lms_user_id)
                for s in gb.db.query(Student).all()}


@pytest.mark.slow  # a gradebook of nbgrader's (made with `alembic`)
def test_join_leave_and_come_back_keep_everyones_grades(course):
    where = locate(course)
    first = sync_roster(where, rows_of("ada,Ada,Lovelace,ada@x.org,101,2d,",
                                       "bob,Bob,Ng,bob@x.org,102,,2"),
                        now=dt.datetime(2027, 1, 10))
    assert first.joined == ["ada", "bob"] and first.left == []
    assert students(course)["ada"] == ("Ada", "Lovelace", "ada@x.org", "101")
    # bob hands something in and is graded: a submission of his in the gradebook
    with open_gradebook(where) as gb:
        gb.add_assignment("checkpoint")
        gb.add_submission("checkpoint", "bob")
        gb.update_or_create_student("eve")  # a submission from someone not on the list
    second = sync_roster(where, rows_of("ada,Ada,King,ada@x.org,101,2d,",
                                        "cy,Cy,Oh,cy@x.org,103,,"),
                         now=dt.datetime(2027, 2, 1))
    assert (second.joined, second.left, second.updated) == (
        ["cy"], ["bob"], {"ada": ["last_name"]})
    assert second.not_on_roster == ["eve"]
    with open_gradebook(where) as gb:
        roster = read_roster(gb.db)
        assert gb.find_submission("checkpoint", "bob")  # kept, with his grades
    assert roster["bob"].enrolled is False and roster["bob"].left == dt.datetime(2027, 2, 1)
    assert set(students(course)) == {"ada", "bob", "cy", "eve"}
    third = sync_roster(where, rows_of("ada,Ada,King,ada@x.org,101,2d,",
                                       "bob,Bob,Ng,bob@x.org,102,,2",
                                       "cy,Cy,Oh,cy@x.org,103,,"))
    assert (third.returned, third.left, third.unchanged) == (["bob"], [], 2)
    with open_gradebook(where) as gb:
        entry = read_roster(gb.db)["bob"]
    assert entry.enrolled and entry.left is None and entry.time_limit_factor == 2.0


@pytest.mark.slow  # a gradebook of nbgrader's (made with `alembic`)
def test_the_graders_read_the_accommodations_from_the_gradebook(course):
    where = locate(course)
    sync_roster(where, rows_of("ada,Ada,L,ada@x.org,,36h,", "bob,Bob,N,bob@x.org,,,1.5"))
    assert roster_extension(where.db_url, "ada") == dt.timedelta(hours=36)
    assert roster_extension(where.db_url, "bob") is None
    assert time_limit_factor(where.db_url, "bob") == 1.5
    assert time_limit_factor(where.db_url, "ada") == time_limit_factor(where.db_url, "x") == 1.0


@pytest.mark.slow  # a gradebook of nbgrader's (made with `alembic`)
def test_a_changed_extension_reaches_submissions_already_in_the_gradebook(course):
    where = locate(course)
    sync_roster(where, rows_of("ada,Ada,L,ada@x.org,,,"))
    with open_gradebook(where) as gb:
        gb.add_assignment("checkpoint", duedate=dt.datetime(2027, 1, 15, 17))
        gb.add_submission("checkpoint", "ada", timestamp=dt.datetime(2027, 1, 15, 18))
        assert gb.find_submission("checkpoint", "ada").total_seconds_late == 3600
    sync_roster(where, rows_of("ada,Ada,L,ada@x.org,,1d,"))
    with open_gradebook(where) as gb:
        sub = gb.find_submission("checkpoint", "ada")
        assert (sub.extension, sub.total_seconds_late) == (dt.timedelta(days=1), 0)
    sync_roster(where, rows_of("ada,Ada,L,ada@x.org,,,"))
    with open_gradebook(where) as gb:
        assert gb.find_submission("checkpoint", "ada").extension is None


@pytest.mark.slow  # a gradebook of nbgrader's (made with `alembic`)
def test_a_dry_run_writes_nothing(course):
    where = locate(course)
    sync_roster(where, rows_of("ada,Ada,L,ada@x.org,,,"))
    report = sync_roster(where, rows_of("bob,Bob,N,bob@x.org,,,"), dry_run=True)
    assert (report.joined, report.left) == (["bob"], ["ada"])
    assert "(dry run: nothing was written)" in report.render("class.csv", 1)
    assert set(students(course)) == {"ada"}
    with open_gradebook(where) as gb:
        assert read_roster(gb.db)["ada"].enrolled


@pytest.mark.slow  # a gradebook of nbgrader's (made with `alembic`)
def test_the_command_loads_shows_and_refuses_a_bad_file_without_writing(course):
    good = course / "class.csv"
    good.write_bytes(csv_bytes('ada,Ada,"Lovelace, A.",ada@x.org,101,2d,',
                               "bob,Bob,Ng,bob@x.org,102,,2"))

    def roster(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "course_grading.roster", *args],
                              cwd=course, capture_output=True, text=True)

    done = roster("load", "class.csv")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[:4] == [
        "roster: 2 students in class.csv: 2 joined, 0 came back, 0 left, 0 updated, "
        "0 unchanged.",
        "  joined: ada, bob",
        "  extensions on every due date: ada 2 d",
        "  time limits multiplied: bob x2"]
    shown = roster("show")
    assert "ada  Ada Lovelace, A.  ada@x.org  101     2 d" in shown.stdout
    assert "2 enrolled, 0 left" in shown.stdout
    bad = course / "bad.csv"
    bad.write_bytes(csv_bytes("cy,Cy,Oh,cy@x.org,,,", "dee,Dee,Rao,not-an-email,,,"))
    refused = roster("load", "bad.csv")
    assert refused.returncode == 2
    assert refused.stderr.splitlines() == [
        "roster: bad.csv: nothing was loaded, 1 problem:",
        "  row 3 (id 'dee'): email 'not-an-email' is not an email address; expected "
        "name@domain.tld"]
    assert "cy" not in students(course)
