"""Each student gets their own notebook through the course's exchanges (course_grading.personal
releases it, course_exchange fetches it), and only their own where the exchange can tell.

The filesystem exchange is tried with real Unix students (each fetch runs in a child
process with that student's uid and groups), in an exchange with the class's modes; the
instructor is root here. The ngshare steps are tried against a stand-in for the service
(the whole class through the hub: tests/hub).
"""

from __future__ import annotations

import base64
import json
import os
import pwd
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbgrader.auth import Authenticator
from nbgrader.coursedir import CourseDirectory
from nbgrader.exchange import ExchangeError
from traitlets.config import Config

from course_exchange.exchange import PERSONAL, PersonalFetch
from course_grading import personal, variants
from course_grading.check_calls import setup_values
from course_grading.pipeline import ASSIGNMENT, copy_course, open_api

QUIZ = Path(__file__).resolve().parents[1] / "quiz"
COURSE = "attention-course"
SECRET = "exchange class"
NOTEBOOK = "checkpoint.ipynb"
ROOT_ONLY = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("useradd") is None,
    reason="needs root and useradd (real Unix students)")


def _q(nb: nbformat.NotebookNode) -> list:
    setup = next(c.source for c in nb.cells
                 if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "setup")
    return setup_values(setup)["Q"].value


def _config(course: Path, exchange: Path, **extra: Any) -> Config:
    config = Config()
    config.CourseDirectory.root = str(course)
    config.CourseDirectory.course_id = COURSE
    config.Exchange.root = str(exchange)
    for key, value in extra.items():
        section, name = key.split(".")
        setattr(getattr(config, section), name, value)
    return config


def _run(cls: type, config: Config) -> None:
    coursedir = CourseDirectory(config=config)
    coursedir.assignment_id = ASSIGNMENT
    cls(coursedir=coursedir, authenticator=Authenticator(config=config), config=config).start()


def _as_user(name: str, action: Callable[[], Any], env: dict[str, str] | None = None) -> Any:
    """Run ``action`` in a child process with ``name``'s uid and groups; its result (JSON) or
    the exception it raised, as ``{"error": "Type: message"}``."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            os.close(read)
            user = pwd.getpwnam(name)
            os.setgroups([])
            os.setgid(user.pw_gid)
            os.setuid(user.pw_uid)
            os.environ.update(env or {})
            try:
                out = {"value": action()}
            except BaseException as exc:  # reported to the parent
                out = {"error": f"{type(exc).__name__}: {exc}"}
            os.write(write, json.dumps(out).encode())
        finally:
            os._exit(0)
    os.close(write)
    chunks = []
    while chunk := os.read(read, 65536):
        chunks.append(chunk)
    os.close(read)
    os.waitpid(pid, 0)
    return json.loads(b"".join(chunks) or b'{"error": "the child said nothing"}')


class Exchange:
    """A course with per-student variants, released into an exchange with the class's modes,
    and real Unix students."""

    def __init__(self, students: tuple[str, ...]) -> None:
        self.tag = "pe" + secrets.token_hex(3)
        self.base = Path(tempfile.mkdtemp(prefix="personal-"))
        self.base.chmod(0o755)
        self.exchange = self.base / "exchange"
        (self.exchange / COURSE).mkdir(parents=True)
        self.exchange.chmod(0o1777)
        (self.exchange / COURSE).chmod(0o755)
        self.users: dict[str, str] = {}
        for who in students:
            name = f"{self.tag}-{who}"
            subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin",
                            name], check=True, capture_output=True)
            self.users[who] = name
        self.course = copy_course(QUIZ, self.base / "instructor" / "quiz")
        (self.base / "instructor").chmod(0o700)
        assert variants.main(["--seed", SECRET, "--template",
                              str(self.course / "source" / ASSIGNMENT / NOTEBOOK)]) == 0
        os.environ["PATH"] = str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"]
        api = open_api(self.course)
        assert api.generate_assignment(ASSIGNMENT)["success"]
        self.class_list = [u for w, u in self.users.items() if w != "mallory"]
        with api.gradebook as gb:
            for name in self.class_list:
                gb.add_student(name)

    def release(self, **extra: Any) -> None:
        _run(personal.PersonalRelease, _config(self.course, self.exchange, **extra))

    def personal(self, who: str) -> Path:
        return self.exchange / COURSE / PERSONAL / ASSIGNMENT / self.users[who]

    def fetch(self, who: str, env: dict[str, str] | None = None, home: str = "") -> Any:
        """``who`` fetches into a folder of their own; the fetched notebook's Q, or the error."""
        home = self.base / (home or f"home-{who}")
        home.mkdir(exist_ok=True)
        user = pwd.getpwnam(self.users[who])
        os.chown(home, user.pw_uid, user.pw_gid)
        config = _config(self.course, self.exchange, **{"Exchange.assignment_dir": str(home)})

        def fetch() -> Any:
            _run(PersonalFetch, config)
            nb = nbformat.read(home / ASSIGNMENT / NOTEBOOK, as_version=4)
            return {"Q": _q(nb), "student": nb.metadata.get("course_student")}

        return _as_user(self.users[who], fetch, env)

    def remove(self) -> None:
        for name in self.users.values():
            subprocess.run(["userdel", name], capture_output=True)
        shutil.rmtree(self.base, ignore_errors=True)


@pytest.fixture(scope="module")
def released():
    if os.geteuid() != 0 or shutil.which("useradd") is None:
        pytest.skip("needs root and useradd (real Unix students)")
    world = Exchange(("alice", "bob", "mallory"))
    try:
        world.release()
        yield world
    finally:
        world.remove()


def _own_q(world: Exchange, who: str) -> list:
    return personal.personal_variant(SECRET, world.users[who]).Q.tolist()


@ROOT_ONLY
def test_each_student_fetches_their_own_numbers(released):
    for who in ("alice", "bob"):
        got = released.fetch(who)
        assert got.get("value") == {"Q": _own_q(released, who),
                                    "student": released.users[who]}, got
    assert _own_q(released, "alice") != _own_q(released, "bob")


@ROOT_ONLY
def test_a_student_can_neither_read_nor_list_a_classmates_notebook(released):
    alice = released.personal("alice") / NOTEBOOK

    def peek() -> dict:
        out = {}
        for what, act in (("read", lambda: alice.read_bytes()),
                          ("list", lambda: os.listdir(alice.parent.parent)),
                          ("enter", lambda: os.listdir(alice.parent))):
            try:
                act()
                out[what] = "allowed"
            except PermissionError:
                out[what] = "refused"
        return out

    assert _as_user(released.users["bob"], peek) == {
        "value": {"read": "refused", "list": "refused", "enter": "refused"}}
    assert _as_user(released.users["alice"], lambda: len(alice.read_bytes()) > 0) == {
        "value": True}


@ROOT_ONLY
def test_fetching_as_someone_else_gives_ones_own_notebook(released):
    """$USER and $LOGNAME are the student's to set; the fetch goes by the process's uid."""
    name = released.users["alice"]
    got = released.fetch("bob", env={"USER": name, "LOGNAME": name, "JUPYTERHUB_USER": name},
                         home="bob-as-alice")
    assert got.get("value", {}).get("Q") == _own_q(released, "bob"), got


@ROOT_ONLY
def test_a_student_outside_the_class_list_is_told_and_gets_nothing(released):
    got = released.fetch("mallory")
    assert "there is none for" in got.get("error", ""), got
    assert "ask your instructor" in got["error"]
    assert not (released.base / "home-mallory" / ASSIGNMENT).exists()


@ROOT_ONLY
def test_releasing_again_replaces_every_students_notebook(released):
    before = (released.personal("alice") / NOTEBOOK).read_bytes()
    (released.personal("bob") / "stale.ipynb").write_text("{}")
    released.release(**{"ExchangeReleaseAssignment.force": True})
    assert (released.personal("alice") / NOTEBOOK).read_bytes() == before  # deterministic
    assert not (released.personal("bob") / "stale.ipynb").exists()


def test_a_class_without_students_is_not_released(tmp_path):
    """The class list is the gradebook's: without one there is nobody to give numbers to."""
    course = copy_course(QUIZ, tmp_path / "quiz")
    assert variants.main(["--seed", SECRET, "--template",
                          str(course / "source" / ASSIGNMENT / NOTEBOOK)]) == 0
    os.environ["PATH"] = str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"]
    assert open_api(course).generate_assignment(ASSIGNMENT)["success"]
    exchange = tmp_path / "exchange"
    exchange.mkdir()
    exchange.chmod(0o1777)
    with pytest.raises(ExchangeError, match="the gradebook has no students"):
        _run(personal.PersonalRelease, _config(course, exchange))
    assert not (exchange / COURSE / "outbound" / ASSIGNMENT).exists()


# ---------------------------------------------------------------------------------------
# ngshare
# ---------------------------------------------------------------------------------------


def _ngshare(cls: type, tmp_path: Path) -> Any:
    config = _config(tmp_path / "course", tmp_path / "exchange")
    coursedir = CourseDirectory(config=config)
    coursedir.assignment_id = ASSIGNMENT
    return cls(coursedir=coursedir, authenticator=Authenticator(config=config), config=config)


def _file(path: str, text: str) -> dict:
    return {"path": path, "content": base64.b64encode(text.encode()).decode()}


def test_the_ngshare_fetch_keeps_the_callers_own_notebook_only(tmp_path, monkeypatch):
    from course_exchange.ngshare_exchange import NgshareFetchAssignment

    monkeypatch.setenv("JUPYTERHUB_USER", "alice")
    release = [_file(NOTEBOOK, "template"), _file("data.csv", "1,2"),
               _file(f"{PERSONAL}/alice/{NOTEBOOK}", "alice's"),
               _file(f"{PERSONAL}/bob/{NOTEBOOK}", "bob's")]
    fetch = _ngshare(NgshareFetchAssignment, tmp_path)
    got = fetch._own_files(release)
    assert {f["path"]: base64.b64decode(f["content"]).decode() for f in got} == {
        NOTEBOOK: "alice's", "data.csv": "1,2"}
    monkeypatch.setenv("JUPYTERHUB_USER", "carol")
    with pytest.raises(ExchangeError, match="there is none for 'carol'"):
        fetch._own_files(release)
    plain = [_file(NOTEBOOK, "template")]
    assert fetch._own_files(plain) == plain


def test_the_ngshare_release_uploads_each_students_notebook(tmp_path, monkeypatch):
    course = copy_course(QUIZ, tmp_path / "course")
    assert variants.main(["--seed", SECRET, "--template",
                          str(course / "source" / ASSIGNMENT / NOTEBOOK)]) == 0
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent) + os.pathsep
                       + os.environ["PATH"])
    api = open_api(course)
    assert api.generate_assignment(ASSIGNMENT)["success"]
    with api.gradebook as gb:
        for student in ("alice", "bob"):
            gb.add_student(student)
    release = _ngshare(personal.PersonalNgshareRelease, tmp_path)
    files = release.released_files(course / "release" / ASSIGNMENT)
    paths = sorted(f["path"] for f in files)
    assert paths == [NOTEBOOK, f"{PERSONAL}/alice/{NOTEBOOK}", f"{PERSONAL}/bob/{NOTEBOOK}"]
    for student in ("alice", "bob"):
        data = next(f["content"] for f in files if f["path"] == f"{PERSONAL}/{student}/{NOTEBOOK}")
        nb = nbformat.reads(base64.b64decode(data).decode(), as_version=4)
        assert _q(nb) == personal.personal_variant(SECRET, student).Q.tolist()
