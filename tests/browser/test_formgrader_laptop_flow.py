"""The instructor's laptop flow as docs/instructors.md types it: formgrader in one command with the
Content-Security-Policy on (as root too), and students' data kept out of git."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from labdriver import REPO

sys.path.insert(0, str(REPO / "tests"))
from localports import free_port

pytestmark = [pytest.mark.timeout(300)]


def test_one_command_opens_formgrader_with_the_policy(tmp_path):
    from course_grading.pipeline import copy_course

    course = copy_course(REPO / "quiz", tmp_path / "quiz")
    port, token = free_port(), "formgrader-test"
    scratch = tmp_path / "jupyter"
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(scratch / "config"),
           "JUPYTER_DATA_DIR": str(scratch / "data"), "JUPYTER_RUNTIME_DIR": str(scratch / "rt"),
           "JUPYTER_PLATFORM_DIRS": "1"}
    env.pop("JUPYTER_CONFIG_PATH", None)
    log = tmp_path / "lab.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "course_grading.formgrader_csp", str(course), "--no-browser",
             "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
             "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}"],
            env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        url = f"http://127.0.0.1:{port}/formgrader/manage_assignments?token={token}"
        deadline = time.monotonic() + 120
        response = None
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                response = urllib.request.urlopen(url, timeout=10)
                break
            except (urllib.error.URLError, OSError):
                time.sleep(0.5)
        assert response is not None, log.read_text()[-3000:]
        assert response.status == 200
        assert "script-src 'self'" in response.headers["Content-Security-Policy"]
        page = response.read().decode()
        assert "var base_url" not in page and "formgrader_vars.js" in page
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)


def test_the_hubs_instructor_config_is_the_commands():
    import json

    from course_grading.formgrader_csp import SERVER_CONFIG

    shipped = REPO / "deploy" / "instructor-jupyter-config" / "jupyter_server_config.json"
    assert json.loads(shipped.read_text()) == SERVER_CONFIG


STUDENT_DATA = ["quiz/grades-checkpoint.csv", "quiz/report-checkpoint/index.html",
                "quiz/gradebook.db", "quiz/gradebook.db-shm", "quiz/gradebook.db-wal",
                "quiz/gradebook.db-journal", "quiz/submitted/ada/checkpoint/checkpoint.ipynb"]


def test_grades_reports_and_the_gradebook_are_ignored_by_git():
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    proc = subprocess.run(["git", "check-ignore", "--no-index", "-v", *STUDENT_DATA],
                          cwd=REPO, capture_output=True, text=True)
    ignored = {line.split("\t")[-1] for line in proc.stdout.splitlines()}
    assert sorted(set(STUDENT_DATA) - ignored) == []


def test_a_grade_table_written_in_the_checkout_leaves_git_status_clean(tmp_path):
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    written = [REPO / "quiz" / "grades-zz-test.csv", REPO / "quiz" / "report-zz-test" / "a.md",
               REPO / "quiz" / "gradebook.db-wal"]
    made = [p for p in written if not p.exists()]
    try:
        for p in made:
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text("student data\n")
        status = subprocess.run(["git", "status", "--porcelain", "--", "quiz"], cwd=REPO,
                                capture_output=True, text=True, check=True).stdout
        assert not any(Path(p).name in status for p in ("grades-zz-test.csv",
                                                        "report-zz-test", "gradebook.db-wal"))
    finally:
        for p in made:
            p.unlink(missing_ok=True)
        if (REPO / "quiz" / "report-zz-test").exists():
            (REPO / "quiz" / "report-zz-test").rmdir()
