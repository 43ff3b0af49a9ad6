"""The instructor's laptop flow as docs/instructors.md types it: formgrader in one command with the
Content-Security-Policy on (as root too), and students' data kept out of git."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from labdriver import REPO

sys.path.insert(0, str(REPO / "tests"))
from localports import free_port

pytestmark = [pytest.mark.timeout(300)]
TOKEN = "formgrader-test"


@contextlib.contextmanager
def laptop_formgrader(tmp_path: Path, *extra: str) -> Iterator[str]:
    """``python -m course_grading.formgrader_csp <copy of quiz/>`` as the guide types it
    (plus ``--no-browser`` and a port); yields its base URL once formgrader answers.

    Jupyter's folders are throw-away, and so is JupyterLab's settings folder: overrides
    that ``./course lab`` may have written into this environment stay out of it.
    """
    from course_grading.pipeline import copy_course

    course = copy_course(REPO / "quiz", tmp_path / "quiz")
    port = free_port()
    scratch = tmp_path / "jupyter"
    (scratch / "settings").mkdir(parents=True)
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(scratch / "config"),
           "JUPYTER_DATA_DIR": str(scratch / "data"), "JUPYTER_RUNTIME_DIR": str(scratch / "rt"),
           "JUPYTER_PLATFORM_DIRS": "1"}
    env.pop("JUPYTER_CONFIG_PATH", None)
    log = tmp_path / "lab.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "course_grading.formgrader_csp", str(course), "--no-browser",
             "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
             "--ServerApp.port_retries=0", f"--IdentityProvider.token={TOKEN}",
             f"--LabApp.app_settings_dir={scratch / 'settings'}", *extra],
            env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                urllib.request.urlopen(f"{base}/formgrader?token={TOKEN}", timeout=10)
                break
            except (urllib.error.URLError, OSError):
                time.sleep(0.5)
        else:
            raise AssertionError(log.read_text()[-3000:])
        yield base
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)


def test_one_command_opens_formgrader_with_the_policy(tmp_path):
    with laptop_formgrader(tmp_path) as base:
        url = f"{base}/formgrader/manage_assignments?token={TOKEN}"
        response = urllib.request.urlopen(url, timeout=30)
        assert response.status == 200
        assert "script-src 'self'" in response.headers["Content-Security-Policy"]
        page = response.read().decode()
        assert "var base_url" not in page and "formgrader_vars.js" in page


@pytest.mark.browser
def test_the_laptop_formgrader_asks_nothing_and_says_why_release_is_off(
        tmp_path: Path, chromium: Any, artifacts: Path) -> None:
    """In Chromium: JupyterLab shows no news prompt, and formgrader, instead of warning that
    the exchange "does not exist and could not be created", says in one line that this
    machine has none and what to do instead."""
    from labdriver import save_screenshot

    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    try:
        with laptop_formgrader(tmp_path) as base:
            page = context.new_page()
            page.set_default_timeout(60_000)
            page.goto(f"{base}/lab?token={TOKEN}")
            page.wait_for_selector("#jp-main-dock-panel")
            page.wait_for_timeout(4000)  # the news prompt comes within a second or two
            save_screenshot(page, artifacts, "laptop-formgrader-lab")
            toasts = page.locator(".Toastify__toast").all_inner_texts()
            assert toasts == [], f"notifications: {toasts}"
            page.goto(f"{base}/formgrader/manage_assignments?token={TOKEN}")
            page.wait_for_selector("#warning-exchange, #note-no-exchange", state="attached")
            save_screenshot(page, artifacts, "laptop-formgrader-manage")
            assert page.locator("#warning-exchange").count() == 0
            note = page.locator("#note-no-exchange").inner_text()
            assert note.startswith("No exchange on this machine, so Release and Collect are "
                                   "off: hand out release/<assignment>/ yourself"), note
            assert "\n" not in note.strip()
    finally:
        context.close()


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
