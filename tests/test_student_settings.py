"""course_grading.student_settings: installed where everyone reads them, checked as the student.

The whole hub runs in tests/hub (a student whose settings are unreadable gets no server);
here each piece on its own, reading as the Unix user ``nobody``. Needs root.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import stat
import tempfile
from pathlib import Path

import pytest

from course_grading.student_settings import (
    SettingsUnreadable,
    install_settings,
    settings_digests,
    unread_settings,
    unsafe_folders,
)

REPO = Path(__file__).resolve().parents[1]
SHIPPED = REPO / "deploy" / "student-jupyter-config"
SYSTEM_PYTHON = "/usr/bin/python3"  # runnable by every user (a venv under /root is not)

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not os.access(SYSTEM_PYTHON, os.X_OK),
    reason="needs root (to install as root and read as another user) and /usr/bin/python3",
)


@pytest.fixture
def public_dir():
    """A root-owned 0755 folder under /tmp (pytest's tmp_path is private to root)."""
    d = Path(tempfile.mkdtemp(prefix="settings-"))
    d.chmod(0o755)
    yield d
    shutil.rmtree(d)


def read_as_nobody(folder: Path, expected: dict[str, str]) -> list[str]:
    # In a thread of its own: asyncio.run() refuses to start where an event loop runs, as
    # it does in the main thread while a test module's Playwright is open.
    from concurrent.futures import ThreadPoolExecutor

    check = unread_settings("nobody", folder, expected, python=SYSTEM_PYTHON)
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, check).result()


def test_the_shipped_settings_switch_formgrader_off():
    server = json.loads((SHIPPED / "jupyter_server_config.json").read_text())
    extensions = server["ServerApp"]["jpserver_extensions"]
    assert extensions["nbgrader.server_extensions.formgrader"] is False
    lab = json.loads((SHIPPED / "labconfig" / "page_config.json").read_text())
    assert lab["disabledExtensions"]["@jupyter/nbgrader:formgrader"] is True


def test_installed_settings_are_roots_and_readable_by_everyone(public_dir):
    target = public_dir / "etc" / "students"
    digests = install_settings(SHIPPED, target)
    assert digests == settings_digests(SHIPPED)
    assert set(digests) == {"jupyter_server_config.json", "jupyter_server_config.py",
                            "labconfig/page_config.json"}
    for p in [target, *target.rglob("*")]:
        st = p.stat()
        assert st.st_uid == 0
        assert stat.S_IMODE(st.st_mode) == (0o755 if p.is_dir() else 0o644), p
    assert read_as_nobody(target, digests) == []


def test_installing_again_replaces_what_was_there(public_dir):
    target = public_dir / "students"
    install_settings(SHIPPED, target)
    (target / "planted.json").write_text("{}")
    digests = install_settings(SHIPPED, target)
    assert not (target / "planted.json").exists()
    assert read_as_nobody(target, digests) == []


def test_settings_under_a_private_folder_cannot_be_read_by_a_student(public_dir):
    # The reported failure: the checkout's parent is 0700, as `mktemp -d` makes it.
    private = public_dir / "tmp.private"
    private.mkdir(mode=0o700)
    target = private / "student-jupyter-config"
    digests = install_settings(SHIPPED, target)
    problems = read_as_nobody(target, digests)
    assert len(problems) == 1
    assert "PermissionError" in problems[0] and str(target) in problems[0], problems
    private.chmod(0o755)
    assert read_as_nobody(target, digests) == []


def test_one_unreadable_file_is_enough_to_refuse(public_dir):
    target = public_dir / "students"
    digests = install_settings(SHIPPED, target)
    (target / "labconfig" / "page_config.json").chmod(0o600)
    problems = read_as_nobody(target, digests)
    assert len(problems) == 1 and "page_config.json" in problems[0], problems


def test_settings_that_differ_from_the_installed_ones_are_named(public_dir):
    target = public_dir / "students"
    digests = install_settings(SHIPPED, target)
    (target / "jupyter_server_config.json").write_text('{"ServerApp": {}}')
    (target / "labconfig" / "page_config.json").unlink()
    (target / "extra.json").write_text("{}")
    assert read_as_nobody(target, digests) == [
        "labconfig/page_config.json was not found",
        "jupyter_server_config.json differs from what was installed",
        "extra.json was not installed by the hub",
    ]


def test_a_settings_file_that_is_not_json_is_refused(public_dir):
    target = public_dir / "students"
    install_settings(SHIPPED, target)
    (target / "jupyter_server_config.json").write_text("{ not json")
    digests = settings_digests(target)  # even if it is what was installed
    problems = read_as_nobody(target, digests)
    assert len(problems) == 1 and "JSONDecodeError" in problems[0], problems


def test_settings_are_not_installed_where_a_student_could_swap_them(public_dir):
    open_dir = public_dir / "shared"
    open_dir.mkdir()
    open_dir.chmod(0o777)
    with pytest.raises(PermissionError, match=r"shared is writable by others \(mode 0o777\)"):
        install_settings(SHIPPED, open_dir / "students")
    nobody = Path(public_dir / "theirs")
    nobody.mkdir()
    os.chown(nobody, 65534, 65534)
    with pytest.raises(PermissionError, match="theirs is owned by uid 65534, not root"):
        install_settings(SHIPPED, nobody / "students")


def test_sticky_tmp_is_a_safe_parent_and_a_missing_source_is_named(public_dir):
    assert unsafe_folders("/tmp/does-not-exist-yet/students") == []
    with pytest.raises(FileNotFoundError, match="must be a folder"):
        install_settings(public_dir / "nothing-here", public_dir / "students")


def test_the_refusal_carries_the_message_jupyterhub_shows():
    err = SettingsUnreadable("Your server was not started: ...")
    assert err.jupyterhub_message == "Your server was not started: ..."
