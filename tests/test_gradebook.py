"""Every course tool finds the gradebook where nbgrader's own commands find it.

nbgrader reads ``c.CourseDirectory.db_url`` from every ``nbgrader_config.py`` on Jupyter's
config path and then the course directory's. Before, the grade table and the report read
``<course>/gradebook.db`` whatever the config said, so a course whose gradebook is anywhere
else (PostgreSQL on a class server, tests/hub/test_postgres_tools.py; here a SQLite file
outside the course) had "no gradebook" for them, right after ``nbgrader autograde``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from course_grading.gradebook import GradebookMissing, locate, open_gradebook

pytestmark = pytest.mark.slow  # nbgrader makes each new gradebook with `alembic`


def _config(folder: Path, *lines: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "nbgrader_config.py").write_text("c = get_config()\n" + "\n".join(lines) + "\n")


def test_the_course_config_names_the_gradebook_and_the_global_one_is_read_first(
        tmp_path, monkeypatch):
    course, elsewhere = tmp_path / "course", tmp_path / "grades"
    glob = tmp_path / "etc-jupyter"
    _config(glob, "c.CourseDirectory.course_id = 'from-global'",
            "c.Execute.timeout = 7")
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(glob))
    _config(course)
    where = locate(course)
    assert where.db_url == f"sqlite:///{course.resolve() / 'gradebook.db'}"
    assert (where.course_id, where.config.Execute.timeout) == ("from-global", 7)
    url = f"sqlite:///{elsewhere / 'class.db'}"
    _config(course, f"c.CourseDirectory.db_url = {url!r}",
            "c.CourseDirectory.course_id = 'from-course'")
    where = locate(course)
    assert (where.db_url, where.course_id, where.root) == (url, "from-course",
                                                          course.resolve())


def test_gradetable_report_and_roster_read_a_gradebook_outside_the_course(tmp_path):
    course, elsewhere = tmp_path / "course", tmp_path / "grades"
    elsewhere.mkdir()
    url = f"sqlite:///{elsewhere / 'class.db'}"
    _config(course, f"c.CourseDirectory.db_url = {url!r}")
    (course / "class.csv").write_text("id,first_name,last_name,email\n"
                                      "ada,Ada,Lovelace,ada@example.org\n")
    with open_gradebook(locate(course), create=True) as gb:  # as generate_assignment would
        gb.add_assignment("checkpoint")

    def tool(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", *args], cwd=course, capture_output=True,
                              text=True)

    loaded = tool("course_grading.roster", "load", "class.csv")
    assert loaded.returncode == 0, loaded.stderr
    table = tool("course_grading.gradetable")
    assert table.returncode == 0, table.stderr
    assert "ada      Ada Lovelace  no submission" in table.stdout
    report = tool("course_grading.report")
    assert report.returncode == 0, report.stderr
    assert "1 students: 0 graded, 0 could not be graded, 1 without a submission." in \
        report.stdout
    assert not (course / "gradebook.db").exists()  # nothing made where nbgrader does not look


def test_a_gradebook_that_cannot_be_reached_is_named_without_its_password(tmp_path):
    course = tmp_path / "course"
    _config(course, "c.CourseDirectory.db_url = "
            "'postgresql+psycopg2://instructor:s3cret-pw@127.0.0.1:1/gradebook'")
    with pytest.raises(GradebookMissing) as info:
        with open_gradebook(locate(course)):
            pass
    said = str(info.value)
    assert said.startswith("the gradebook (postgresql+psycopg2://instructor:***@127.0.0.1:1/"
                           "gradebook, the db_url of the course's nbgrader_config.py) cannot "
                           "be reached: ")
    assert "s3cret" not in said
    done = subprocess.run([sys.executable, "-m", "course_grading.gradetable"], cwd=course,
                          capture_output=True, text=True)
    assert done.returncode == 2 and "s3cret" not in done.stderr + done.stdout
    assert "cannot be reached" in done.stderr and "Traceback" not in done.stderr


def test_a_missing_sqlite_gradebook_is_not_created_by_reading(tmp_path):
    course = tmp_path / "course"
    _config(course)
    with pytest.raises(GradebookMissing, match=r"no gradebook at .*gradebook\.db: run this in "
                       r"the nbgrader course directory"):
        with open_gradebook(locate(course)):
            pass
    assert not (course / "gradebook.db").exists()
