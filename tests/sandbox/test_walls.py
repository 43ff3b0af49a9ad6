"""The sandbox's walls hold for every process in it, and nothing of a sandbox outlives it.

One course (tests/sandbox/course.py, 30 s per notebook as the checkpoint has), four
submissions graded in this order, every one with the right answer (4 points each):

* ``a_look`` reports every process it can see in its sandbox and what it can do to it
  (tests/sandbox/walls.py :data:`LOOK`);
* ``b_take_over`` takes over the sandbox's pid 1, when pid 1 is not its own kernel, and
  leaves 100 processes spinning in sessions of their own, and 8 threads (:data:`TAKE_OVER`);
* ``c_honest`` and ``d_honest`` come right after it.

The course is graded twice, each in its own copy: by ``nbgrader autograde`` (serial) and by
the parallel engine (two workers). This test process is a child subreaper while it grades:
whatever a sandbox leaves behind becomes its child, so "no process remains" is checked
exactly, beside other people's sandboxes on the same machine.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from course import ASSIGNMENT, WEIGHTS_SOLUTION, make_course, nbgrader, scores, submit
from walls import LOOK, TAKE_OVER, THREADS

from course_grading.parallel import grade_all

FULL = {"test_squares": 1.0, "test_weights_hidden": 2.0, "test_weights_naive": 1.0}
STUDENTS = ("a_look", "b_take_over", "c_honest", "d_honest")
PR_SET_CHILD_SUBREAPER = 36


def _stat(pid: int) -> tuple[str, int, str] | None:
    """(command name, parent pid, state) of a process, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    name = text[text.index("(") + 1: text.rindex(")")]
    state, ppid = text[text.rindex(")") + 2:].split()[:2]
    return name, int(ppid), state


def _pid_namespace(pid: int) -> int | None:
    try:
        return os.stat(f"/proc/{pid}/ns/pid").st_ino
    except OSError:
        return None


def sandbox_processes() -> list[tuple[int, str]]:
    """Descendants of this process that are a sandbox's: bwrap, or in a pid namespace of
    their own (a leftover of any sandbox this process started, since it is a subreaper),
    still running (a dead one waiting for this process to reap it is not)."""
    parents: dict[int, int] = {}
    names: dict[int, str] = {}
    dead: set[int] = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (info := _stat(int(entry))) is not None:
            names[int(entry)], parents[int(entry)], state = info
            if state in ("Z", "X"):
                dead.add(int(entry))
    mine, ours = os.getpid(), _pid_namespace(os.getpid())
    found = []
    for pid in names:
        up, seen = parents.get(pid), 0
        while up not in (None, 0, 1, mine) and seen < 64:
            up, seen = parents.get(up), seen + 1
        if up == mine and pid not in dead and (names[pid] == "bwrap"
                                               or _pid_namespace(pid) != ours):
            found.append((pid, names[pid]))
    return sorted(found)


def _kill_and_reap(found: list[tuple[int, str]]) -> None:
    """End what a test found left behind (only before the fix), so that it costs nobody."""
    for pid, _ in found:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    _reap()


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


@pytest.fixture(scope="module")
def subreaper() -> Iterator[None]:
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    yield
    _kill_and_reap(sandbox_processes())
    libc.prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)


def _course(base: Path) -> Path:
    root = make_course(base / "course", timeout=10, memory=1 << 30, wall=30.0)
    submit(root, "a_look", weights=LOOK)
    submit(root, "b_take_over", weights=TAKE_OVER)
    submit(root, "c_honest")
    submit(root, "d_honest", weights=WEIGHTS_SOLUTION)
    return root


class Graded:
    """A graded copy of the course, and what was left running right after the grading."""

    def __init__(self, root: Path, left: list[tuple[int, str]], seconds: float) -> None:
        self.root, self.left, self.seconds = root, left, seconds
        self.said = ""  # what the grading command reported

    def printed(self, student: str) -> str:
        nb = nbformat.read(self.root / "autograded" / student / ASSIGNMENT /
                           f"{ASSIGNMENT}.ipynb", 4)
        [cell] = [c for c in nb.cells
                  if c.metadata.get("nbgrader", {}).get("grade_id") == "weights"]
        return "".join(o.get("text", "") for o in cell.outputs)


@pytest.fixture(scope="module")
def graded(bwrap_ok: None, subreaper: None, tmp_path_factory: pytest.TempPathFactory
           ) -> dict[str, Graded]:
    if os.uname().machine != "x86_64":
        pytest.skip("the attacks on the sandbox's pid 1 are written for x86_64")
    serial = _course(tmp_path_factory.mktemp("walls-serial"))
    engine = shutil.copytree(serial, serial.parent.parent / "walls-engine-course")
    runs = {}
    start = time.monotonic()
    said = nbgrader(serial, "autograde", ASSIGNMENT, check=False)
    runs["serial"] = Graded(serial, sandbox_processes(), time.monotonic() - start)
    _kill_and_reap(runs["serial"].left)
    start = time.monotonic()
    summary = grade_all(engine, ASSIGNMENT, jobs=2, progress=False)
    runs["engine"] = Graded(engine, sandbox_processes(), time.monotonic() - start)
    _kill_and_reap(runs["engine"].left)
    runs["serial"].said = said.stdout + said.stderr
    runs["engine"].said = summary.render()
    return runs


RUNS = ["serial", "engine"]


@pytest.mark.parametrize("run", RUNS)
def test_every_process_in_the_sandbox_is_under_the_walls(graded, run):
    out = graded[run].printed("a_look")
    procs = [line.split() for line in out.splitlines() if line.startswith("PROC ")]
    assert procs, out
    for _, pid, _, seccomp, _, limit in procs:
        assert seccomp == "2", f"process {pid} of the sandbox has no seccomp filter:\n{out}"
        assert limit == str(1 << 30), f"process {pid} has no address-space limit:\n{out}"
    assert "PTRACE_CALL refused" in out, out
    for word in ("PTRACE", "VMREAD", "MEMWRITE"):
        tried = [line for line in out.splitlines() if line.startswith(word + " ")]
        assert all(" refused " in line for line in tried), out
    assert scores(graded[run].root)["a_look"] == FULL


@pytest.mark.parametrize("run", RUNS)
def test_a_take_over_of_pid_1_is_refused_and_nothing_outlives_the_grading(graded, run):
    out = graded[run].printed("b_take_over")
    assert "PID1 refused" in out, out
    for attempt in ("pdeathsig", "setsid", "double fork"):
        assert f"OWN {attempt} refused 1" in out, out  # EPERM, from the seccomp filter
    assert f"THREADS spinning {THREADS}" in out
    assert graded[run].left == [], f"left running after {run} grading: {graded[run].left}"
    assert scores(graded[run].root)["b_take_over"] == FULL


@pytest.mark.parametrize("run", RUNS)
def test_honest_neighbours_keep_their_exact_scores(graded, run):
    got = scores(graded[run].root)
    assert {s: got.get(s) for s in STUDENTS} == dict.fromkeys(STUDENTS, FULL), \
        graded[run].said[-3000:]


def test_a_killed_grading_worker_leaves_no_sandbox(bwrap_ok, subreaper, tmp_path):
    """A worker killed mid-notebook (out of memory, by hand) takes its sandbox with it, even
    one whose kernel tried to leave the grader's session and forget its parent."""
    root = make_course(tmp_path / "course", timeout=10, wall=30.0)
    submit(root, "stubborn", weights=TAKE_OVER.replace(
        'print("THREADS spinning"', 'import time as _time\n_time.sleep(8)\nprint("THREADS'
        ' spinning"'))
    killed: list[int] = []

    def kill_the_worker() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not killed:
            for pid, name in sandbox_processes():
                info = _stat(pid)
                if name == "bwrap" and info is not None and _stat(info[1]) is not None:
                    time.sleep(3)  # the notebook is running by now
                    os.kill(info[1], signal.SIGKILL)
                    killed.append(info[1])
                    return
            time.sleep(0.2)

    killer = threading.Thread(target=kill_the_worker)
    killer.start()
    summary = grade_all(root, ASSIGNMENT, jobs=1, progress=False)
    killer.join()
    time.sleep(1)
    left = sandbox_processes()
    _kill_and_reap(left)
    assert killed and summary.replaced_workers >= 1, summary.render()
    assert left == []
    assert scores(root)["stubborn"] == FULL  # graded again in a fresh worker
