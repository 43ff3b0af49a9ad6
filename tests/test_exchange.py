"""course_exchange.exchange and .inbound: collect reads ``inbound`` as hostile (see also tests/hub).

The attacks below are made by real Unix students (``runuser``) in an ``inbound`` with the
class's modes (2733, setgid), each first shown to work against plain nbgrader's collect and
then to fail against :class:`OwnerCheckedCollect`, with every other student's submission
collected byte for byte. Collect itself runs in this process, as the instructor (root).
"""

from __future__ import annotations

import logging
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from nbgrader.api import Gradebook
from nbgrader.coursedir import CourseDirectory
from nbgrader.exchange import ExchangeError
from nbgrader.exchange.default.collect import ExchangeCollect
from traitlets.config import Config

from course_exchange.exchange import OwnerCheckedCollect, PrivateSubmit, symbolic_links
from course_exchange.inbound import (
    Limits,
    Refused,
    collected_time,
    format_timestamp,
    parse_inbound_name,
    read_submission,
)

COURSE = "attention-course"
ASSIGNMENT = "checkpoint"
ROOT_ONLY = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("useradd") is None or shutil.which("runuser") is None,
    reason="needs root, useradd and runuser (real Unix students)")


# ---------------------------------------------------------------------------------------
# read_submission on its own
# ---------------------------------------------------------------------------------------


def test_own_files_are_read_and_copied_with_their_server_time(tmp_path):
    sub = tmp_path / "sub"
    (sub / "data").mkdir(parents=True)
    (sub / "checkpoint.ipynb").write_text('{"cells": []}')
    (sub / "data" / "x.csv").write_text("1,2\n")
    (sub / ".ipynb_checkpoints").mkdir()
    before = datetime.utcnow() - timedelta(seconds=1)
    read = read_submission(sub, os.getuid(), dest=tmp_path / "copy")
    assert read.files == 2 and read.skipped == [".ipynb_checkpoints"]
    assert before <= read.server_time <= datetime.utcnow() + timedelta(seconds=1)
    assert (tmp_path / "copy" / "data" / "x.csv").read_text() == "1,2\n"
    assert not (tmp_path / "copy" / ".ipynb_checkpoints").exists()


def test_rewriting_a_file_moves_the_server_time_later_and_backdating_does_not_help(tmp_path):
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "timestamp.txt").write_text("2026-03-01 09:30:00.000000 UTC")
    first = read_submission(sub, os.getuid()).server_time
    time.sleep(0.05)
    (sub / "timestamp.txt").write_text("2000-01-01 00:00:00.000000 UTC")
    os.utime(sub / "timestamp.txt", (0, 0))  # mtime can be set back; ctime cannot
    assert read_submission(sub, os.getuid()).server_time > first


def test_links_pipes_and_excess_are_refused_with_every_reason(tmp_path):
    sub = tmp_path / "sub"
    (sub / "deep").mkdir(parents=True)
    (sub / "deep" / "solutions.txt").symlink_to("/etc/hostname")
    os.mkfifo(sub / "data.csv")
    for i in range(4):
        (sub / f"f{i}.txt").write_text("x")
    with pytest.raises(Refused) as err:  # 7 entries: the folder and the link count too
        read_submission(sub, os.getuid(), Limits(max_files=6), dest=tmp_path / "copy")
    why = str(err.value)
    assert "contains symbolic links (deep/solutions.txt -> /etc/hostname)" in why
    assert "data.csv is not a regular file or folder (mode prw" in why
    assert "it holds more than 6 files and folders" in why
    assert not (tmp_path / "copy").exists()
    assert list(tmp_path.iterdir()) == [sub], "no half-made copy is left behind"


@pytest.mark.parametrize("kind", ["folders", "nested folders", "links", "pipes"])
def test_every_entry_counts_against_the_limit_and_reading_stops_there(tmp_path, kind):
    """10,000 empty folders (flat or nested), links or pipes: no regular file at all, and
    each is an entry that nbgrader's autograde would list (issue 42, item 4)."""
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "checkpoint.ipynb").write_text('{"cells": []}')
    for i in range(10_000):
        if kind == "folders":
            (sub / f"d{i}").mkdir()
        elif kind == "nested folders":
            (sub / f"d{i // 100}" / f"e{i % 100}").mkdir(parents=True)
        elif kind == "links":
            (sub / f"l{i}").symlink_to("checkpoint.ipynb")
        else:
            os.mkfifo(sub / f"p{i}")
    start = time.perf_counter()
    with pytest.raises(Refused, match="it holds more than 1000 files and folders"):
        read_submission(sub, os.getuid(), Limits(max_files=1000), dest=tmp_path / "copy")
    took = time.perf_counter() - start
    assert list(tmp_path.iterdir()) == [sub], "no half-made copy is left behind"
    # an honest submission's read, for scale: the refusal reads no more than the limit
    honest = tmp_path / "honest"
    honest.mkdir()
    for i in range(1000):
        (honest / f"f{i}.txt").write_text("x")
    start = time.perf_counter()
    read_submission(honest, os.getuid(), Limits(max_files=1000))
    assert took < 5 * (time.perf_counter() - start) + 1.0


def test_nesting_deeper_than_the_limit_is_refused(tmp_path):
    deep = tmp_path / "sub"
    for _ in range(6):
        deep = deep / "d"
    deep.mkdir(parents=True)
    with pytest.raises(Refused, match="nested more than 4 folders deep"):
        read_submission(tmp_path / "sub", os.getuid(), Limits(max_depth=4))


@pytest.mark.parametrize("name, problem", [
    ("ada+checkpoint+yesterday+f00d", "got the timestamp 'yesterday'"),
    ("ada+checkpoint+2026-03-01 09:30:00 UTC", "got 2 '+' separators"),
    ("ada+quiz2+2026-03-01 09:30:00 UTC+f00d", "got the assignment 'quiz2'"),
    ("ada+checkpoint+99999-99-99 99:99:99 UTC+f00d", "got the timestamp '99999-99-99"),
])
def test_unparsable_inbound_names_raise_a_clear_error(name, problem):
    with pytest.raises(ValueError, match=r"must be named <student>\+checkpoint.*"
                       + re.escape(problem)):
        parse_inbound_name(name, ASSIGNMENT)


def test_symbolic_links_are_found_deep_inside_and_regular_files_are_not(tmp_path):
    deep = tmp_path / "checkpoint" / "data"
    deep.mkdir(parents=True)
    (tmp_path / "checkpoint.ipynb").write_text("{}")
    (deep / "solutions.txt").symlink_to("/srv/course/source/checkpoint/checkpoint.ipynb")
    (tmp_path / "checkpoint" / "up").symlink_to("..")
    assert symbolic_links(tmp_path) == [
        "checkpoint/data/solutions.txt -> /srv/course/source/checkpoint/checkpoint.ipynb",
        "checkpoint/up -> ..",
    ]
    (deep / "solutions.txt").unlink()
    (tmp_path / "checkpoint" / "up").unlink()
    assert symbolic_links(tmp_path) == []


def test_the_classes_plug_into_nbgraders_exchange_factory():
    from nbgrader.exchange.abc import ExchangeCollect as AbcCollect
    from nbgrader.exchange.abc import ExchangeSubmit as AbcSubmit

    assert issubclass(OwnerCheckedCollect, AbcCollect)
    assert issubclass(PrivateSubmit, AbcSubmit)



def test_submitting_as_someone_else_is_refused_at_once_in_one_line(tmp_path):
    """``nbgrader submit checkpoint --student=bob`` by anyone but bob: refused before
    anything lands in ``inbound`` or in the student's own list of submissions (plain
    nbgrader says it succeeded, lists it in the Assignments tab as theirs, and the
    instructor's collect refuses it later)."""
    import pwd

    from nbgrader.auth import Authenticator

    me = pwd.getpwuid(os.getuid()).pw_name
    inbound = tmp_path / "exchange" / COURSE / "inbound"
    inbound.mkdir(parents=True)
    for folder in (tmp_path / "exchange" / COURSE / "outbound" / ASSIGNMENT,  # released
                   tmp_path / ASSIGNMENT):  # fetched and answered
        folder.mkdir(parents=True)
        (folder / "checkpoint.ipynb").write_text('{"cells": []}')
    config = Config()
    config.CourseDirectory.root = str(tmp_path)
    config.CourseDirectory.course_id = COURSE
    config.Exchange.root = str(tmp_path / "exchange")
    config.Exchange.cache = str(tmp_path / "cache")
    config.Exchange.assignment_dir = str(tmp_path)

    def submit(student: str) -> PrivateSubmit:
        coursedir = CourseDirectory(config=config)
        coursedir.assignment_id, coursedir.student_id = ASSIGNMENT, student
        return PrivateSubmit(coursedir=coursedir, authenticator=Authenticator(config=config),
                             config=config, log=logging.getLogger("submit-as-other"))

    with pytest.raises(ExchangeError) as err:
        submit("bob" if me != "bob" else "alice").start()
    other = "bob" if me != "bob" else "alice"
    assert str(err.value) == (
        f"Not submitted: you are {me!r} and asked to submit as {other!r}; the instructor's "
        "collect refuses a submission made by another Unix user. Run nbgrader submit "
        "without --student.")
    assert list(inbound.iterdir()) == [] and not (tmp_path / "cache").exists()
    with pytest.raises(ExchangeError) as err:  # a name made to break the terminal line
        submit("bob\x1b[2J\nok").start()
    assert "\n" not in str(err.value) and "\x1b" not in str(err.value)
    submit(me).start()  # under one's own name it goes in
    [sent] = inbound.iterdir()
    assert sent.name.startswith(f"{me}+{ASSIGNMENT}+")

# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("content", [
    b"\xff\xfe" * 25_000_000,                           # 50 MB of bytes that are not text
    b"2026-03-01 09:30:00.000000 UTC" + b" " * 50_000_000,
    b"",
    b"9999-12-31 23:59:59.999999 UTC",
])
def test_a_collected_timestamp_txt_is_read_only_as_far_as_a_time_goes(tmp_path, content):
    """A copy collected by plain nbgrader keeps the student's timestamp.txt: collect reads
    its first bytes only (it read all 50 MB, as text, to keep 100 characters), and a time
    in the future, which no collect wrote, is not believed (it stopped collect --update)."""
    import tracemalloc

    (tmp_path / "timestamp.txt").write_bytes(content)
    tracemalloc.start()
    when = collected_time(tmp_path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 1_000_000, peak
    assert when == (datetime(2026, 3, 1, 9, 30) if content.startswith(b"2026") else None)


# A class of real Unix students attacking plain collect and ours
# ---------------------------------------------------------------------------------------


class Inbound:
    """An exchange with the class's modes, a gradebook with a due date, real students."""

    def __init__(self, base: Path) -> None:
        self.tag = "xc" + secrets.token_hex(3)
        self.base = base
        self.exchange = base / "exchange"
        self.inbound = self.exchange / COURSE / "inbound"
        self.inbound.mkdir(parents=True)
        (self.exchange / COURSE).chmod(0o755)
        self.exchange.chmod(0o1777)
        self.inbound.chmod(0o2733)  # everyone drops in, nobody but the instructor lists
        self.course = base / "course"
        self.course.mkdir()
        self.users: list[str] = []
        self.sent: dict[str, bytes] = {}

    def add_student(self, who: str) -> str:
        name = f"{self.tag}-{who}"
        subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
                       check=True, capture_output=True)
        self.users.append(name)
        return name

    def remove(self) -> None:
        for name in self.users:
            subprocess.run(["userdel", name], capture_output=True)

    def as_student(self, name: str, script: str, *args: str) -> None:
        subprocess.run(["runuser", "-u", name, "--", "/bin/sh", "-ec", script, "sh", *args],
                       check=True, capture_output=True, text=True, cwd="/")

    def submit(self, name: str, claimed: datetime | None = None, folder: str | None = None,
               answer: str = "") -> str:
        """What ``nbgrader submit`` makes, made by the student: folder, notebook, timestamp."""
        stamp = format_timestamp(claimed or datetime.utcnow())
        folder = folder or f"{name}+{ASSIGNMENT}+{stamp}+{secrets.token_hex(4)}"
        notebook = f'{{"cells": [], "answer": "{answer or name}"}}'.encode()
        self.sent[name] = notebook
        self.as_student(name, 'mkdir -m 0770 "$1/$2"; printf "%s" "$3" > "$1/$2/timestamp.txt";'
                              ' printf "%s" "$4" > "$1/$2/checkpoint.ipynb"',
                        str(self.inbound), folder, stamp, notebook.decode())
        return folder

    def set_duedate(self, when: datetime) -> None:
        self.due = when
        with Gradebook(f"sqlite:///{self.course}/gradebook.db", COURSE) as gb:
            gb.update_or_create_assignment(ASSIGNMENT, duedate=when)

    def collect(self, collector: type, submitted: str, **options) -> str:
        """Run ``collector`` as the instructor would; return its log."""
        log = logging.getLogger(f"collect-{submitted}-{secrets.token_hex(2)}")
        log.setLevel(logging.DEBUG)
        lines: list[str] = []
        handler = logging.Handler()
        handler.emit = lambda rec: lines.append(f"{rec.levelname} {rec.getMessage()}")
        log.addHandler(handler)
        config = Config()
        config.CourseDirectory.root = str(self.course)
        config.CourseDirectory.course_id = COURSE
        config.CourseDirectory.submitted_directory = submitted
        config.Exchange.root = str(self.exchange)
        for key, value in options.items():
            setattr(config.ExchangeCollect, key, value)
        coursedir = CourseDirectory(config=config)
        coursedir.assignment_id = ASSIGNMENT
        from nbgrader.auth import Authenticator

        collector(coursedir=coursedir, authenticator=Authenticator(config=config),
                  config=config, log=log).start()
        return "\n".join(lines)

    def collected(self, submitted: str, name: str) -> Path:
        return self.course / submitted / name / ASSIGNMENT

    def seconds_late(self, submitted: str, name: str) -> float:
        """What autograde records: timestamp.txt of the collected copy against the due date."""
        config = Config()
        config.CourseDirectory.root = str(self.course)
        when = CourseDirectory(config=config).get_existing_timestamp(
            str(self.collected(submitted, name)))
        # one gradebook per collected folder, so that each submission is new to it
        with Gradebook(f"sqlite:///{self.course}/late-{submitted}.db", COURSE) as gb:
            gb.update_or_create_assignment(ASSIGNMENT, duedate=self.due)
            gb.update_or_create_student(name)
            sub = gb.update_or_create_submission(ASSIGNMENT, name, timestamp=when)
            return sub.total_seconds_late


@pytest.fixture(scope="module", autouse=True)
def _alembic_on_path():
    """nbgrader runs the `alembic` command when it creates a gradebook: put it on PATH."""
    old = os.environ.get("PATH", "")
    os.environ["PATH"] = str(Path(sys.executable).parent) + os.pathsep + old
    yield
    os.environ["PATH"] = old


def _public_dir() -> Path:
    """A root-owned 0755 folder under /tmp: pytest's own tmp_path is private to root."""
    base = Path(tempfile.mkdtemp(prefix="exchange-"))
    base.chmod(0o755)
    return base


@pytest.fixture
def world():
    if os.geteuid() != 0 or shutil.which("useradd") is None:
        pytest.skip("needs root and useradd")
    world = Inbound(_public_dir())
    yield world
    world.remove()
    shutil.rmtree(world.base)


@pytest.fixture(scope="module")
def attacked_class():
    """On-time alice and dave; bob hides a late submission; carol plants a bad name."""
    if os.geteuid() != 0 or shutil.which("useradd") is None:
        pytest.skip("needs root and useradd")
    world = Inbound(_public_dir())
    try:
        alice, bob, carol, dave = (world.add_student(w) for w in ("alice", "bob", "carol",
                                                                  "dave"))
        world.submit(alice)
        world.submit(carol)
        world.submit(dave)
        time.sleep(0.1)
        due = datetime.utcnow()
        world.set_duedate(due)
        time.sleep(0.1)
        # Bob submits after the due date, then renames the folder and rewrites
        # timestamp.txt to an hour before it (he owns both; inbound is not sticky).
        late = world.submit(bob, answer="late work")
        early = format_timestamp(due - timedelta(hours=1))
        hidden = f"{bob}+{ASSIGNMENT}+{early}+{secrets.token_hex(4)}"
        world.as_student(bob, 'mv "$1/$2" "$1/$3"; printf "%s" "$4" > "$1/$3/timestamp.txt";'
                              ' touch -d "2000-01-01" "$1/$3/checkpoint.ipynb"',
                         str(world.inbound), late, hidden, early)
        # Carol adds a folder whose timestamp does not parse, next to her genuine one.
        world.as_student(carol, 'mkdir -m 0770 "$1/$2"',
                         str(world.inbound), f"{carol}+{ASSIGNMENT}+not-a-time+x")
        world.names = {"alice": alice, "bob": bob, "carol": carol, "dave": dave}
        yield world
    finally:
        world.remove()
        shutil.rmtree(world.base)


def _plain_collect_aborts(world: Inbound) -> str:
    with pytest.raises((ExchangeError, ValueError)) as err:
        world.collect(ExchangeCollect, "plain-all")
    return str(err.value)


@pytest.mark.slow  # real nbgrader collects, as a class runs them
@ROOT_ONLY
def test_one_unparsable_name_aborts_plain_collect_for_everyone(attacked_class):
    world = attacked_class
    why = _plain_collect_aborts(world)
    assert "not-a-time" in why or "Unknown string format" in why, why
    assert not (world.course / "plain-all").exists() or not any(
        (world.course / "plain-all").iterdir()), "plain collect collected nobody"


@pytest.mark.slow  # real nbgrader collects, as a class runs them
@ROOT_ONLY
def test_ours_skips_the_unparsable_name_and_collects_everyone(attacked_class):
    world = attacked_class
    log = world.collect(OwnerCheckedCollect, "ours")
    carol = world.names["carol"]
    assert (f"ERROR Skipping {carol}+checkpoint+not-a-time+x: inbound folder "
            f"'{carol}+checkpoint+not-a-time+x' must be named") in log
    assert "the other submissions are collected" in log
    for who, name in world.names.items():
        got = world.collected("ours", name) / "checkpoint.ipynb"
        assert got.read_bytes() == world.sent[name], who


@ROOT_ONLY
# nbgrader's own update_or_create_submission warns under SQLAlchemy 2 (autograde does too)
@pytest.mark.slow  # real nbgrader collects, as a class runs them
@pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")
def test_a_rewritten_timestamp_hides_lateness_from_plain_collect_but_not_from_ours(
        attacked_class):
    world = attacked_class
    bob = world.names["bob"]
    # Plain collect, on the exchange without carol's bad name (which would abort it):
    carol_bad = world.inbound / f"{world.names['carol']}+{ASSIGNMENT}+not-a-time+x"
    parked = world.base / "parked"
    carol_bad.rename(parked)
    try:
        world.collect(ExchangeCollect, "plain")
    finally:
        parked.rename(carol_bad)
    late_work = (world.collected("plain", bob) / "checkpoint.ipynb").read_bytes()
    assert late_work == world.sent[bob] == b'{"cells": [], "answer": "late work"}'
    assert world.seconds_late("plain", bob) == 0, "plain nbgrader believes the rewritten time"
    # Ours records the time the server saw: after the due date.
    world.collect(OwnerCheckedCollect, "ours-late")
    assert world.seconds_late("ours-late", bob) > 0
    # Nobody else is late, in either; their files are what they sent.
    for who in ("alice", "carol", "dave"):
        name = world.names[who]
        assert world.seconds_late("plain", name) == 0, who
        assert world.seconds_late("ours-late", name) == 0, who
        for submitted in ("plain", "ours-late"):
            got = (world.collected(submitted, name) / "checkpoint.ipynb").read_bytes()
            assert got == world.sent[name], (who, submitted)


@pytest.mark.slow  # real nbgrader collects, as a class runs them
@ROOT_ONLY
def test_the_claimed_time_is_logged_when_it_is_not_the_servers(attacked_class):
    log = attacked_class.collect(OwnerCheckedCollect, "ours-claims")
    bob = attacked_class.names["bob"]
    assert f"WARNING Submission {bob}+checkpoint+" in log
    assert "the server saw it last changed at" in log and "which is the time recorded" in log
    assert sum("claims to be from" in line for line in log.splitlines()) == 1, log


@pytest.mark.slow  # real nbgrader collects, as a class runs them
@ROOT_ONLY
def test_a_pipe_in_one_submission_aborts_plain_collect_but_not_ours(world):
    ann, eve = world.add_student("ann"), world.add_student("eve")
    world.submit(ann)
    folder = world.submit(eve)
    world.as_student(eve, 'mkfifo "$1/$2/data.csv"', str(world.inbound), folder)
    # Plain collect stops at the pipe with an error: the command fails for the class.
    with pytest.raises(shutil.Error, match=r"data\.csv` is a named pipe"):
        world.collect(ExchangeCollect, "plain")
    # Ours refuses eve's submission, says why, and collects ann's.
    log = world.collect(OwnerCheckedCollect, "ours")
    assert f"Refusing submission {folder} by '{eve}': data.csv is not a regular file" in log
    assert f"No submission of '{eve}' could be collected" in log
    assert (world.collected("ours", ann) / "checkpoint.ipynb").read_bytes() == world.sent[ann]
    assert not world.collected("ours", eve).exists()


@pytest.mark.slow  # real nbgrader collects, as a class runs them
@ROOT_ONLY
def test_a_file_someone_else_made_inside_a_submission_refuses_it(world):
    ann, eve = world.add_student("ann"), world.add_student("eve")
    first = world.submit(ann, answer="ann's own")
    time.sleep(0.05)
    newer = world.submit(ann, answer="ann's second")
    # Eve cannot enter ann's 0770 folder; root plants a file of eve's to stand for
    # anything not made by ann (a shared group, an admin's copy).
    planted = world.inbound / newer / "extra.py"
    planted.write_text("x = 1\n")
    os.chown(planted, pwd_uid(eve), -1)
    log = world.collect(OwnerCheckedCollect, "ours")
    assert f"Refusing submission {newer} by '{ann}': extra.py is owned by {eve}" in log
    got = world.collected("ours", ann) / "checkpoint.ipynb"
    assert got.read_bytes() == b'{"cells": [], "answer": "ann\'s own"}', first


def pwd_uid(name: str) -> int:
    import pwd

    return pwd.getpwnam(name).pw_uid


@pytest.mark.slow  # real nbgrader collects, as a class runs them
@ROOT_ONLY
def test_a_forged_timestamp_txt_never_stops_the_collect_and_the_server_time_is_recorded(world):
    """``timestamp.txt`` made a folder, 2 MB of binary, or a time in 9999: each student is
    collected, with the server's time in a plain ``timestamp.txt``, and nothing left over."""
    kim, lee, max_ = (world.add_student(w) for w in ("kim", "lee", "max"))
    world.set_duedate(datetime.utcnow() + timedelta(hours=1))
    forged = {
        kim: 'rm "$1/$2/timestamp.txt"; mkdir "$1/$2/timestamp.txt"; '
             'printf x > "$1/$2/timestamp.txt/inner"',
        lee: 'head -c 2000000 /dev/urandom > "$1/$2/timestamp.txt"',
        max_: 'printf "9999-12-31 23:59:59.999999 UTC" > "$1/$2/timestamp.txt"',
    }
    for name, script in forged.items():
        world.as_student(name, script, str(world.inbound), world.submit(name))
    log = world.collect(OwnerCheckedCollect, "ours")
    assert "Could not collect" not in log, log
    for name in forged:
        stamp = world.collected("ours", name) / "timestamp.txt"
        assert stamp.is_file() and stamp.stat().st_size < 40, name
        when = datetime.strptime(stamp.read_text(), "%Y-%m-%d %H:%M:%S.%f UTC")
        assert abs((when - datetime.utcnow()).total_seconds()) < 120, name  # the server's
        assert world.seconds_late("ours", name) == 0, name
        left = [p.name for p in (world.course / "ours" / name).iterdir()]
        assert left == [ASSIGNMENT], left


@pytest.mark.slow  # real nbgrader collects, as a class runs them
@ROOT_ONLY
def test_a_future_time_kept_from_a_plain_collect_never_stops_collect_update(world):
    """Collected once by plain nbgrader, a student's copy keeps his own ``timestamp.txt``
    (9999-12-31). Once the course's exchange is configured, his next submission is
    collected with ``--update``: it was refused as "no newer submission" for ever."""
    max_ = world.add_student("max")
    world.set_duedate(datetime.utcnow() + timedelta(hours=1))
    first = world.submit(max_, answer="first try")
    world.as_student(max_, 'printf "9999-12-31 23:59:59.999999 UTC" > "$1/$2/timestamp.txt"',
                     str(world.inbound), first)
    world.collect(ExchangeCollect, "ours")
    kept = world.collected("ours", max_)
    assert (kept / "timestamp.txt").read_text().startswith("9999"), "plain collect kept it"
    time.sleep(0.05)
    world.submit(max_, answer="second try")
    log = world.collect(OwnerCheckedCollect, "ours", update=True)
    assert "No newer submission" not in log, log
    assert (kept / "checkpoint.ipynb").read_bytes() == world.sent[max_]
    assert b"second try" in world.sent[max_]
    assert not (kept / "timestamp.txt").read_text().startswith("9999")
