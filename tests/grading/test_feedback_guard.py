"""No feedback goes out while a written answer waits to be graded by hand.

A copy of quiz/ with two correct submissions, autograded for real: the written answer of
each waits for the instructor. ``generate_feedback`` and ``release_feedback`` (the
filesystem exchange, as deploy/course_nbgrader_config.py sets it) refuse, naming the
students and cells, until the answers are graded or the instructor says so.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from course_grading.pipeline import ASSIGNMENT, copy_course, open_api, place_submission
from course_grading.submissions import made_up_submission
from course_quiz.checkpoint_spec import CHECKPOINT

ROOT = Path(__file__).resolve().parents[2]
[WRITTEN_ID] = [q.id for q in CHECKPOINT.questions if q.manual]  # graded by hand
WRITTEN = f"{ASSIGNMENT}/{WRITTEN_ID}"
RELEASE_GUARD = {"ExchangeFactory.release_feedback":
                 "course_grading.feedback.CheckedReleaseFeedback"}


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> Path:
    course = copy_course(ROOT / "quiz", tmp_path_factory.mktemp("guard") / "quiz")
    api = open_api(course)
    assert api.generate_assignment(ASSIGNMENT)["success"]
    for student in ("ada", "bo"):
        files = {**made_up_submission(course, "correct"),
                 "timestamp.txt": b"2026-12-01 10:00:00.000000 UTC",  # as collect
                 "submission_secret.txt": student.encode() * 4}  # leaves them
        place_submission(course, student, files)
    result = api.autograde(ASSIGNMENT, "*")
    assert result["success"], result.get("log")
    return course


def _grade_by_hand(course: Path, student: str, score: float) -> None:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        grade = gb.find_grade(WRITTEN_ID, ASSIGNMENT, ASSIGNMENT, student)
        grade.manual_score = score
        grade.needs_manual_grade = False  # what formgrader's grade API does on a score
        gb.db.commit()


def _feedback(course: Path, student: str) -> Path:
    return course / "feedback" / student / ASSIGNMENT / "checkpoint.html"


def test_feedback_waits_for_the_manual_grades(course, tmp_path):
    exchange = {"Exchange.root": str(tmp_path / "exchange"), **RELEASE_GUARD}
    (tmp_path / "exchange").mkdir()
    (tmp_path / "exchange").chmod(0o777)

    def run(step: str, *args: str, allow: bool = False) -> dict:
        """One nbgrader step through a fresh API (the API's log is cumulative)."""
        extra = {"ManualGradesFirst.allow_pending": True} if allow else {}
        return getattr(open_api(course, **exchange, **extra), step)(ASSIGNMENT, *args)

    result = run("generate_feedback")
    assert not result["success"]
    log = result["log"]
    assert f"ada: {WRITTEN}" in log and f"bo: {WRITTEN}" in log, log
    assert "--ManualGradesFirst.allow_pending=True" in log
    assert not _feedback(course, "ada").exists() and not _feedback(course, "bo").exists()

    _grade_by_hand(course, "ada", 2.0)
    result = run("generate_feedback")
    assert not result["success"] and f"bo: {WRITTEN}" in result["log"]
    assert f"ada: {WRITTEN}" not in result["log"]
    assert "(Score: 2.0 / 2.0)" in _feedback(course, "ada").read_text()
    assert not _feedback(course, "bo").exists()

    # bo's feedback, written with the instructor's say-so, is not released while bo waits
    assert run("generate_feedback", allow=True)["success"]
    assert _feedback(course, "bo").exists()
    result = run("release_feedback")
    assert not result["success"]
    assert f"release feedback for {ASSIGNMENT}: 1 student has" in result["log"]
    assert f"bo: {WRITTEN}" in result["log"]
    released = tmp_path / "exchange" / "attention-course" / "feedback"
    assert not released.exists() or list(released.iterdir()) == []

    result = run("release_feedback", allow=True)
    assert result["success"], result
    assert len(list(released.glob("*.html"))) == 2
    # the log names each page as it lies on disk (nbgrader's own says "<hash>-tmp.html")
    said = re.findall(r"Feedback released to: (\S+)", result["log"])
    assert sorted(map(Path, said)) == sorted(released.glob("*.html")), result["log"]

    _grade_by_hand(course, "bo", 1.0)
    assert run("generate_feedback", "bo")["success"]
    assert run("release_feedback")["success"]


def _pending_again(course: Path, *students: str) -> None:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for student in students:
            grade = gb.find_grade(WRITTEN_ID, ASSIGNMENT, ASSIGNMENT, student)
            grade.manual_score, grade.needs_manual_grade = None, True
        gb.db.commit()


def test_generate_feedback_refuses_each_student_in_one_line(course):
    """``nbgrader generate_feedback`` as typed: one line per refused student, saying what
    waits and what to do, and one closing line; no traceback (nbgrader logs ~40 lines per
    student for any exception of a preprocessor)."""
    _pending_again(course, "ada", "bo")
    for student in ("ada", "bo"):  # as before any feedback (nbgrader skips existing ones)
        shutil.rmtree(course / "feedback" / student, ignore_errors=True)
    bindir = os.path.dirname(sys.executable)
    proc = subprocess.run([os.path.join(bindir, "nbgrader"), "generate_feedback", ASSIGNMENT],
                          cwd=course, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PATH": bindir + os.pathsep + os.environ["PATH"]})
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "Traceback" not in out and "File \"" not in out, out
    errors = [ln for ln in out.splitlines() if "| ERROR]" in ln or "| WARNING]" in ln]
    assert [ln.split("] ", 1)[1] for ln in errors] == [
        f"Not going to generate feedback for {ASSIGNMENT}: 1 student has answers that wait "
        f"to be graded by hand ({student}: {WRITTEN}). Grade them in formgrader (Manual "
        "Grading), or, to send feedback with those answers at 0 points, add "
        "--ManualGradesFirst.allow_pending=True (or c.ManualGradesFirst.allow_pending = True "
        "in nbgrader_config.py)." for student in ("ada", "bo")] + [
        "No feedback for 2 students (above): answers wait to be graded by hand. Every other "
        "student's feedback is written."], out
    assert not _feedback(course, "ada").exists() and not _feedback(course, "bo").exists()


def test_release_through_ngshare_waits_for_the_manual_grades(course, tmp_path):
    """The ngshare exchange's release (the course config's
    ``CheckedNgshareReleaseFeedback``) refuses while bo's written answer waits, before it
    sends anything: ngshare's URL here answers nothing, so a release that went on would
    fail on the connection instead."""
    from nbgrader.api import Gradebook
    from traitlets.config import Config

    from course_exchange.ngshare_exchange import configure

    _grade_by_hand(course, "ada", 2.0)
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:  # bo waits again
        grade = gb.find_grade(WRITTEN_ID, ASSIGNMENT, ASSIGNMENT, "bo")
        grade.manual_score, grade.needs_manual_grade = None, True
        gb.db.commit()
    allow = {"ManualGradesFirst.allow_pending": True}
    assert open_api(course, **allow).generate_feedback(ASSIGNMENT)["success"]
    assert _feedback(course, "bo").exists()
    global_config = Config()  # deploy/nbgrader_config_ngshare.py, with a closed port
    configure(global_config, "http://127.0.0.1:9/services/ngshare/")
    ngshare = {f"{section}.{key}": value for section, values in global_config.items()
               for key, value in values.items()}
    ngshare.update({"ExchangeFactory.release_feedback":  # course_nbgrader_config_ngshare.py
                    "course_grading.feedback.CheckedNgshareReleaseFeedback",
                    "NgshareExchange.retries": 0})

    result = open_api(course, **ngshare).release_feedback(ASSIGNMENT)
    assert not result["success"]
    assert f"release feedback for {ASSIGNMENT}: 1 student has" in result["log"]
    assert f"bo: {WRITTEN}" in result["log"] and "ada:" not in result["log"], result["log"]
    # with the instructor's say-so it goes on, to the (absent) ngshare
    result = open_api(course, **ngshare, **allow).release_feedback(ASSIGNMENT)
    assert not result["success"] and "Not going to" not in result["log"], result["log"]
    assert "ngshare" in result["log"], result["log"]
