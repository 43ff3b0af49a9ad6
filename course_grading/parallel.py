"""Autograde many submissions at once: one worker process per core, one shared gradebook.

``nbgrader autograde`` grades one submission after another (nbgrader issue #174). This
command runs nbgrader's own autograder (``NbGraderAPI.autograde``, the same code as the CLI
and the formgrader) in a pool of worker processes, each of which imports nbgrader once and
then grades submission after submission, so that the start-up of the command line is paid
once per worker instead of once per run. Student code runs in the bubblewrap sandbox of
:mod:`course_grading.sandbox`; each worker starts the sandboxed kernel of its next
notebook while the current one runs (``SandboxedExecute.prestart``), so that the half second
a kernel takes to start overlaps with grading instead of adding to it.

The gradebook is SQLite: the coordinator switches it to write-ahead logging (readers never
wait for the writer) and every worker connection waits up to a minute for SQLite's write
lock (``PRAGMA busy_timeout``) instead of failing at once, so concurrent writers queue on
SQLite's own file lock. A submission that still meets a locked database is graded again.

Usage, from the course directory (the one with ``nbgrader_config.py``)::

    python -m course_grading.parallel checkpoint            # every submitted student
    python -m course_grading.parallel checkpoint --jobs 4 --student alice --student bob

It prints a progress bar on stderr and, at the end, a summary: how many submissions were
graded, which failed and why. The exit status is 0 when every submission was graded, 1 when
some failed, 2 when nothing could start (no sandbox, no assignment, no gradebook) or when
grading stopped because the gradebook's database could not be reached.

Workers are looked after one by one: each grades one submission at a time, under a memory
limit (``--worker-memory``). A worker that dies (out of memory, killed) is replaced, and the
submission it was grading is graded again in a fresh worker; a submission that kills a
worker twice is reported as failed, and nobody else's grading is lost. If the gradebook's
database cannot be reached, grading stops with a message saying so; run the command again
when it is back: submissions already autograded are skipped (as ``nbgrader autograde``
skips them), unless ``--force`` asks to grade everything again.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import re
import resource
import shutil
import sqlite3
import sys
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from pathlib import Path
from typing import Any, TextIO

from .shown_ids import for_terminal

__all__ = ["GradeResult", "Summary", "grade_all", "main", "process_age"]

_LOCKED = "database is locked"
# What nbgrader's log says when the gradebook's database cannot be reached.
_UNREACHABLE = ("could not connect to server", "Connection refused", "could not translate host",
                "server closed the connection", "unable to open database file",
                "connection to server at", "terminating connection",
                "the database system is shutting down", "the database system is starting up",
                "could not receive data from server", "no connection to the server",
                "SSL connection has been closed unexpectedly")
#: Address space of each grading worker (the sandboxed kernels have their own limits).
DEFAULT_WORKER_MEMORY = 4 << 30
_api: Any = None  # one NbGraderAPI per worker process
# Imported once by the fork server, before it forks the workers: nbgrader, the sandbox, and
# what the first autograde would otherwise import in every worker (kernelspec, SQLite dialect).
_PRELOAD = ["nbgrader.apps", "course_grading.sandbox", "course_grading.parallel",
            "ipykernel.kernelspec", "sqlalchemy.dialects.sqlite", "encodings.unicode_escape"]


@dataclass
class GradeResult:
    """What happened to one submission."""

    student: str
    ok: bool
    seconds: float
    reason: str = ""
    score: float | None = None
    max_score: float | None = None
    #: For a graded notebook the grader stopped early: why (time budget, output flood...).
    note: str = ""
    #: The gradebook's database could not be reached: grading must stop.
    unreachable: bool = False
    skipped: bool = False


@dataclass
class Summary:
    """All results of one run of :func:`grade_all`."""

    assignment: str
    jobs: int
    seconds: float
    results: list[GradeResult] = field(default_factory=list)
    #: Why grading stopped before every submission was graded, if it did.
    stopped: str = ""
    #: Students not graded because grading stopped.
    not_started: list[str] = field(default_factory=list)
    #: Workers that died and were replaced.
    replaced_workers: int = 0

    @property
    def graded(self) -> list[GradeResult]:
        """Submissions that nbgrader autograded."""
        return [r for r in self.results if r.ok]

    @property
    def failed(self) -> list[GradeResult]:
        """Submissions that could not be autograded, each with its reason."""
        return [r for r in self.results if not r.ok]

    def render(self) -> str:
        """The summary as text: counts, then one line per failed submission."""
        n = len(self.results)
        rate = n / self.seconds if self.seconds else 0.0
        lines = [f"{self.assignment}: {len(self.graded)} of {n} submissions graded, "
                 f"{len(self.failed)} failed, in {self.seconds:.1f} s with {self.jobs} "
                 f"worker(s) ({rate:.2f} submissions/s)."]
        skipped = sum(r.skipped for r in self.graded)
        if skipped:
            lines.append(f"  {skipped} of them were autograded before and skipped "
                         "(--force grades them again).")
        if self.replaced_workers:
            lines.append(f"  {self.replaced_workers} grading worker(s) died and were replaced.")
        for r in sorted(self.failed, key=lambda r: r.student):
            lines.append(for_terminal(f"  FAILED {r.student}: {r.reason}", width=None))
        for r in sorted(self.graded, key=lambda r: r.student):
            if r.note:
                lines.append(for_terminal(
                    f"  graded, but stopped or broken: {r.student}: {r.note}", width=None))
        if self.stopped:
            lines.append(f"STOPPED: {self.stopped}. {len(self.not_started)} submission(s) "
                         "not graded yet; run the same command again to grade them "
                         "(what is graded is kept and skipped).")
        return "\n".join(lines)


def _shown_url(db_url: str) -> str:
    """A database URL without its password, for messages."""
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", db_url)


def _sqlite_path(db_url: str) -> Path | None:
    return Path(db_url[len("sqlite:///"):]) if db_url.startswith("sqlite:///") else None


def _install_sqlite_wait() -> None:
    """Make every SQLite connection of this process wait for the write lock."""
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    if getattr(_install_sqlite_wait, "done", False):
        return

    @event.listens_for(Engine, "connect")
    def _busy_timeout(dbapi_connection: Any, _record: Any) -> None:
        if isinstance(dbapi_connection, sqlite3.Connection):
            dbapi_connection.execute("PRAGMA busy_timeout = 60000")

    _install_sqlite_wait.done = True  # type: ignore[attr-defined]


def _load_config(course_dir: Path, allow_unsandboxed: bool, prestart: bool = True) -> Any:
    from .gradebook import course_config
    from .sandbox import enable

    config = course_config(course_dir)  # as `nbgrader autograde` in course_dir loads it
    config.CourseDirectory.root = str(course_dir)
    enable(config)  # idempotent: student code is sandboxed whatever the config says
    config.SandboxedExecute.prestart = prestart
    if allow_unsandboxed:
        config.SandboxProvisioner.allow_unsandboxed = True
    return config


def _init_worker(course_dir: str, allow_unsandboxed: bool, prestart: bool,
                 memory: int = 0) -> None:
    global _api
    if memory:  # a soft limit: the sandboxes it starts may set their own
        resource.setrlimit(resource.RLIMIT_AS, (memory, resource.RLIM_INFINITY))
    os.chdir(course_dir)
    # Kernels inherit the worker's stdout and print their banner there: keep the terminal
    # for the progress bar (nbgrader's own log is captured by NbGraderAPI).
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)
    _install_sqlite_wait()
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    config = _load_config(Path(course_dir), allow_unsandboxed, prestart)
    _api = NbGraderAPI(CourseDirectory(config=config), config=config)


def _reason(log: str, error: str | None) -> str:
    """The most telling line of a failed autograde's log."""
    text = f"{log}\n{error or ''}"
    if any(u in text for u in _UNREACHABLE):
        return "the gradebook cannot be reached"
    too_many = re.search(r"Not graded: (too (?:many files|large|large a notebook) "
                         r"\([^()\n]{0,80}\))", text)
    if too_many:  # refused by course_grading.submission_shape before nbgrader listed it
        return too_many.group(1)
    known = [
        ("SandboxSurvivorError", "processes of its sandbox still ran after it was killed "
         "(their pids are in the log): kill them by hand"),
        ("QuizSourceError", "the quiz's source cannot be graded outside the kernel"),
        ("SandboxUnavailableError", "no sandbox: bubblewrap missing or not working"),
        ("SubmissionLinkError", "the submission contains symbolic links (not graded)"),
        ("DeadKernelError", "the kernel died (killed, or it crashed) while running the notebook"),
        ("Kernel died", "the kernel died before it could run the notebook"),
        ("CellTimeoutError", "a cell ran past the time limit"),
        ("No notebooks found", "no notebook in the submission"),
        ("NotJSONError", "the notebook is not valid JSON"),
        ("NotebookValidationError", "the notebook does not follow the notebook format"),
        (_LOCKED, "the gradebook stayed locked"),
    ]
    for needle, why in known:
        if needle in text:
            return why
    errors = [ln for ln in text.splitlines() if re.search(r"Error|ERROR", ln)]
    return errors[-1].strip()[:300] if errors else "nbgrader reported a failure"


def _stopped_note(course_dir: Path, assignment: str, student: str) -> str:
    """What stopped or broke a graded notebook (a time limit, a crashed kernel, an answer
    that does not parse), from its autograded notebooks; empty if it ran through."""
    from .gradetable import grading_problems
    from .notebook_files import read_notebook

    folder = course_dir / "autograded" / student / assignment
    problems = []
    for path in sorted(folder.glob("*.ipynb")):
        nb, _ = read_notebook(path)
        problems += grading_problems(nb or {})
    return "; ".join(problems)[:400]


def _grade_one(assignment: str, student: str, force: bool) -> GradeResult:
    start = time.perf_counter()
    result: dict[str, Any] = {}
    for _attempt in range(3):
        result = _api.autograde(assignment, student, force=force, create=True)
        if result.get("success") or _LOCKED not in str(result.get("log", "")):
            break
    ok = bool(result.get("success"))
    log = str(result.get("log", ""))
    reason = "" if ok else _reason(log, result.get("error"))
    unreachable = not ok and reason == "the gradebook cannot be reached"
    note = _stopped_note(Path(os.getcwd()), assignment, student) if ok else ""
    # a stop during the hidden checks is in the grader's log only (the student is not told)
    hidden_stop = re.search(r"stopped during its hidden checks: [^\n]{0,200}", log) if ok \
        else None
    if hidden_stop:
        note = "; ".join(filter(None, [note, "notebook " + hidden_stop.group(0)]))
    return GradeResult(student, ok, time.perf_counter() - start, reason, note=note,
                       unreachable=unreachable, skipped=ok and "Skipping existing" in log)


def _worker_main(conn: Any, course_dir: str, allow_unsandboxed: bool, prestart: bool,
                 memory: int, assignment: str, force: bool) -> None:
    """A grading worker: one submission at a time, as the coordinator hands them out."""
    _init_worker(course_dir, allow_unsandboxed, prestart, memory)
    conn.send(("ready", None))
    while True:
        student = conn.recv()
        if student is None:
            break
        try:
            result = _grade_one(assignment, student, force)
        except Exception as exc:  # report it; this worker can still grade the next one
            result = GradeResult(student, False, 0.0, f"grading raised {type(exc).__name__}: "
                                 f"{str(exc)[:200]}")
        conn.send(("result", result))
    from .sandbox import discard_spare

    discard_spare()


@dataclass
class _Worker:
    process: Any
    conn: Any
    student: str | None = None
    ready: bool = False


class _Coordinator:
    """Hands submissions to workers, replaces dead workers, regrades what they held."""

    def __init__(self, ctx: Any, jobs: int, args: tuple[Any, ...]) -> None:
        self.ctx, self.jobs, self.args = ctx, jobs, args
        self.course, self.assignment = Path(args[0]), str(args[4])
        self.gradebook = "the gradebook"  # set by grade_all: its URL without a password
        self.workers: list[_Worker] = []
        self.replaced = 0

    def spawn(self) -> None:
        parent, child = self.ctx.Pipe()
        process = self.ctx.Process(target=_worker_main, args=(child, *self.args), daemon=True)
        process.start()
        child.close()
        self.workers.append(_Worker(process, parent))

    def run(self, students: list[str], on_result: Any) -> tuple[str, list[str]]:
        """Grade every student; return (why grading stopped or "", students not graded)."""
        queue = deque(students)
        crashes: Counter[str] = Counter()
        stopped = ""
        for _ in range(min(self.jobs, len(queue))):
            self.spawn()
        while self.workers and (queue or any(w.student for w in self.workers)):
            for w in self.workers:
                if w.ready and w.student is None and queue and not stopped:
                    w.student = queue.popleft()
                    w.conn.send(w.student)
            if stopped and not any(w.student for w in self.workers):
                break
            waits = {w.conn: w for w in self.workers}
            waits.update({w.process.sentinel: w for w in self.workers})
            for ready in wait(list(waits)):
                w = waits[ready]
                if w not in self.workers:
                    continue
                if ready is w.conn:
                    try:
                        kind, payload = w.conn.recv()
                    except (EOFError, OSError):
                        continue  # the worker died: its sentinel says so too
                    if kind == "ready":
                        w.ready = True
                    else:
                        w.student = None
                        if payload.unreachable:
                            stopped = stopped or (f"grading stopped: the gradebook "
                                                  f"({self.gradebook}) cannot be reached")
                            queue.appendleft(payload.student)
                        else:
                            on_result(payload)
                    continue
                # the worker process is gone
                self.workers.remove(w)
                w.conn.close()
                self.replaced += 1
                if w.student is not None:
                    # what the dead worker left half-written must not pass for a grade
                    shutil.rmtree(self.course / "autograded" / w.student / self.assignment,
                                  ignore_errors=True)
                    crashes[w.student] += 1
                    if crashes[w.student] >= 2:
                        on_result(GradeResult(
                            w.student, False, 0.0, "grading worker crashed while grading "
                            f"this submission, twice (exit status {w.process.exitcode})"))
                    else:
                        queue.appendleft(w.student)  # graded again, in a fresh worker
                if queue and not stopped:
                    self.spawn()
        self.close()
        return stopped, list(queue)

    def close(self) -> None:
        for w in self.workers:
            try:
                w.conn.send(None)
            except (OSError, BrokenPipeError):
                pass
        for w in self.workers:
            w.process.join(timeout=30)
            if w.process.is_alive():
                w.process.kill()
                w.process.join(timeout=10)
            w.conn.close()
        self.workers = []


def _scores(config: Any, assignment: str, results: list[GradeResult]) -> None:
    from nbgrader.api import Gradebook, MissingEntry

    db_url = config.CourseDirectory.get("db_url") or \
        f"sqlite:///{Path(config.CourseDirectory.root) / 'gradebook.db'}"
    with Gradebook(db_url, config.CourseDirectory.get("course_id", "")) as gb:
        for r in results:
            try:
                sub = gb.find_submission(assignment, r.student)
            except MissingEntry:
                continue
            r.score, r.max_score = sub.score, sub.max_score


class _Progress:
    def __init__(self, total: int, stream: TextIO, enabled: bool) -> None:
        self.total, self.stream, self.enabled = total, stream, enabled
        self.done = self.failed = 0
        self.start = time.perf_counter()
        self.tty = stream.isatty()

    def update(self, r: GradeResult) -> None:
        self.done += 1
        self.failed += not r.ok
        if not self.enabled:
            return
        width = 30
        filled = width * self.done // max(self.total, 1)
        bar = "#" * filled + "-" * (width - filled)
        line = (f"[{bar}] {self.done}/{self.total} graded, {self.failed} failed, "
                f"{time.perf_counter() - self.start:.0f} s  ({for_terminal(r.student)}: "
                f"{'ok' if r.ok else 'FAILED'})")
        if self.tty:
            end = "\n" if self.done == self.total else ""
            self.stream.write("\r" + line.ljust(100) + end)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


def process_age() -> float:
    """Seconds since this process started (Linux: ``/proc``), or 0.0 where unknown.

    The engine's summary counts from the process's start, so that the seconds it says
    include Python's start, the imports and the gradebook's preparation, as the clock on
    the wall does.

    Examples
    --------
    >>> 0.0 <= process_age() < 10 ** 7
    True
    """
    try:
        stat = Path("/proc/self/stat").read_text()
        ticks = int(stat.rsplit(")", 1)[1].split()[19])  # field 22: starttime
        # starttime counts clock ticks since boot, rounded down, so the age can read up to
        # one tick (1/SC_CLK_TCK s) long; /proc/uptime's own 0.01 s steps would add another.
        now = time.clock_gettime(time.CLOCK_BOOTTIME)
    except (OSError, ValueError, IndexError, AttributeError):
        return 0.0
    return max(0.0, now - ticks / os.sysconf("SC_CLK_TCK"))


def grade_all(course_dir: str | os.PathLike[str], assignment: str, *,
              students: list[str] | None = None, jobs: int | None = None,
              allow_unsandboxed: bool = False, progress: bool = True,
              stream: TextIO | None = None, prestart: bool = True, force: bool = False,
              worker_memory: int = DEFAULT_WORKER_MEMORY,
              started: float | None = None) -> Summary:
    """Autograde every submission of ``assignment`` in parallel.

    Parameters
    ----------
    course_dir : path
        The nbgrader course directory (it holds ``nbgrader_config.py`` and ``submitted/``).
    assignment : str
        The assignment id, e.g. ``"checkpoint"``.
    students : list of str, optional
        Grade only these students; default every ``submitted/<student>/<assignment>``.
    jobs : int, optional
        Worker processes; default one per core available to this process.
    allow_unsandboxed : bool
        Run student code even when the sandbox cannot (it then runs as you).
    progress : bool
        Draw a progress bar on ``stream``.
    stream : text stream, optional
        Where the progress goes; default ``sys.stderr``.
    prestart : bool
        Start each worker's next sandboxed kernel while the current notebook runs.
    force : bool
        Grade submissions again that were autograded before (default: skip them, as
        ``nbgrader autograde`` does).
    worker_memory : int
        Address-space limit of each worker, in bytes (0: none).
    started : float, optional
        When the run began, as a ``time.perf_counter()`` value; the summary's seconds
        count from there (the command line passes its process's start). Default: now.

    Returns
    -------
    Summary
        One :class:`GradeResult` per submission, with its total score from the gradebook.

    Raises
    ------
    RuntimeError
        If the sandbox is missing (and not allowed), or the assignment is not in the
        gradebook yet (run ``nbgrader generate_assignment`` first).
    """
    start = time.perf_counter() if started is None else started
    # Start the workers' fork server first: it imports nbgrader (about 2 s) while this
    # process loads the config and prepares the gradebook, instead of after.
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(_PRELOAD)
    from multiprocessing import forkserver
    forkserver.ensure_running()

    from .sandbox import ALLOW_ENV, sandbox_problem

    course = Path(course_dir).resolve()
    stream = stream or sys.stderr
    allowed = allow_unsandboxed or os.environ.get(ALLOW_ENV, "") not in ("", "0")
    config = _load_config(course, allowed)
    problem = sandbox_problem(config.SandboxProvisioner.get("bwrap_path") or None)
    if problem and not allowed:
        raise RuntimeError("Refusing to run untrusted student code without a sandbox. "
                           + problem)
    if problem:
        print(f"WARNING: Grading WITHOUT a sandbox (student code runs as you): {problem}",
              file=stream, flush=True)
    if students is None:
        submitted = course / "submitted"
        students = sorted(p.parent.name for p in submitted.glob(f"*/{assignment}") if p.is_dir())
    jobs = max(1, jobs or len(os.sched_getaffinity(0)))

    _install_sqlite_wait()
    from nbgrader.api import Gradebook, MissingEntry

    db_url = config.CourseDirectory.get("db_url") or f"sqlite:///{course / 'gradebook.db'}"
    db_file = _sqlite_path(db_url)
    if db_file is not None and not db_file.exists():
        raise RuntimeError(f"No gradebook at {db_file}: run `nbgrader generate_assignment "
                           f"{assignment}` in {course} first.")
    try:
        gradebook = Gradebook(db_url, config.CourseDirectory.get("course_id", ""))
    except Exception as exc:  # SQLAlchemy's OperationalError and the like
        raise RuntimeError(f"the gradebook ({_shown_url(db_url)}) cannot be reached: "
                           f"{str(exc).splitlines()[0][:200]}") from None
    with gradebook as gb:
        try:
            gb.find_assignment(assignment)
        except MissingEntry:
            raise RuntimeError(f"Assignment {assignment!r} is not in the gradebook {db_url}: "
                               f"run `nbgrader generate_assignment {assignment}` first.") from None
        for student in students:  # created here, one writer, before the workers start
            gb.update_or_create_student(student)
    if db_file is not None:
        with sqlite3.connect(db_file) as con:  # WAL: readers do not block the writer
            con.execute("PRAGMA journal_mode = WAL")

    summary = Summary(assignment, jobs, 0.0)
    bar = _Progress(len(students), stream, progress)

    def record(r: GradeResult) -> None:
        summary.results.append(r)
        bar.update(r)

    coordinator = _Coordinator(ctx, min(jobs, max(1, len(students))),
                               (str(course), allowed, prestart, worker_memory, assignment,
                                force))
    coordinator.gradebook = _shown_url(db_url)
    summary.stopped, summary.not_started = coordinator.run(list(students), record)
    summary.replaced_workers = coordinator.replaced
    try:
        _scores(config, assignment, summary.results)
    except Exception as exc:  # the gradebook went away: the scores stay unread, not a crash
        if not summary.stopped:
            summary.stopped = (f"grading finished, but the gradebook ({_shown_url(db_url)}) "
                               "cannot be reached to read the scores: "
                               f"{(str(exc).splitlines() or [type(exc).__name__])[0][:200]}")
    summary.seconds = time.perf_counter() - start
    summary.results.sort(key=lambda r: r.student)
    return summary


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m course_grading.parallel ASSIGNMENT [options]``."""
    parser = argparse.ArgumentParser(
        prog="python -m course_grading.parallel",
        description="Autograde many nbgrader submissions at once, sandboxed.")
    parser.add_argument("assignment", help="assignment id, e.g. checkpoint")
    parser.add_argument("--course-dir", default=".", help="nbgrader course directory")
    parser.add_argument("--jobs", "-j", type=int, default=None,
                        help="worker processes (default: one per core)")
    parser.add_argument("--student", action="append", default=None,
                        help="grade only this student (repeatable)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--allow-unsandboxed", action="store_true",
                        help="run student code even without bubblewrap (it runs as you!)")
    parser.add_argument("--no-prestart", action="store_true",
                        help="start each kernel only when its notebook comes (slower)")
    parser.add_argument("--force", action="store_true",
                        help="grade again submissions that were autograded before")
    parser.add_argument("--worker-memory", type=int, default=DEFAULT_WORKER_MEMORY >> 20,
                        metavar="MB", help="address-space limit of each worker "
                        f"(default {DEFAULT_WORKER_MEMORY >> 20} MB; 0: none)")
    args = parser.parse_args(argv)
    started = time.perf_counter() - process_age()
    try:
        summary = grade_all(args.course_dir, args.assignment, students=args.student,
                            jobs=args.jobs, allow_unsandboxed=args.allow_unsandboxed,
                            progress=not args.no_progress, prestart=not args.no_prestart,
                            force=args.force, worker_memory=args.worker_memory << 20,
                            started=started)
    except RuntimeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(summary.render())
    for r in summary.graded:
        if r.skipped:  # nbgrader's "Skipping existing": graded by an earlier run, not now
            print(f"  skipped {for_terminal(r.student)} (autograded before): {r.score} / "
                  f"{r.max_score} in the gradebook")
        else:
            print(f"  graded {for_terminal(r.student)}: {r.score} / {r.max_score}  "
                  f"({r.seconds:.1f} s)")
    if summary.stopped:
        return 2
    return 0 if not summary.failed else 1


if __name__ == "__main__":
    # Run as `python -m course_grading.parallel`. Every worker that multiprocessing starts
    # would run the main module again *by name*, although the fork server has already
    # imported it (_PRELOAD), and runpy warns "found in sys.modules ... prior to execution"
    # once per worker. So the work is done by the importable module (the workers find what
    # they run there, by name) and this main module names neither a spec nor a file: the
    # workers have no main module to run again.
    import course_grading.parallel as _importable

    __spec__ = None
    del __file__
    sys.exit(_importable.main())
