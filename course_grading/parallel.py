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
some failed, 2 when nothing could start (no sandbox, no assignment, no gradebook).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import re
import sqlite3
import sys
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

__all__ = ["GradeResult", "Summary", "grade_all", "main"]

_LOCKED = "database is locked"
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


@dataclass
class Summary:
    """All results of one run of :func:`grade_all`."""

    assignment: str
    jobs: int
    seconds: float
    results: list[GradeResult] = field(default_factory=list)

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
        for r in sorted(self.failed, key=lambda r: r.student):
            lines.append(f"  FAILED {r.student}: {r.reason}")
        return "\n".join(lines)


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
    from traitlets.config import Config
    from traitlets.config.loader import PyFileConfigLoader

    from .sandbox import enable

    config = Config()
    if (course_dir / "nbgrader_config.py").exists():
        config.merge(PyFileConfigLoader("nbgrader_config.py", path=str(course_dir)).load_config())
    config.CourseDirectory.root = str(course_dir)
    enable(config)  # idempotent: student code is sandboxed whatever the config says
    config.SandboxedExecute.prestart = prestart
    if allow_unsandboxed:
        config.SandboxKernelManager.allow_unsandboxed = True
    return config


def _init_worker(course_dir: str, allow_unsandboxed: bool, prestart: bool) -> None:
    global _api
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
    known = [
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


def _grade_one(assignment: str, student: str) -> GradeResult:
    start = time.perf_counter()
    result: dict[str, Any] = {}
    for _attempt in range(3):
        result = _api.autograde(assignment, student, force=True, create=True)
        if result.get("success") or _LOCKED not in str(result.get("log", "")):
            break
    ok = bool(result.get("success"))
    reason = "" if ok else _reason(str(result.get("log", "")), result.get("error"))
    return GradeResult(student, ok, time.perf_counter() - start, reason)


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
                f"{time.perf_counter() - self.start:.0f} s  ({r.student}: "
                f"{'ok' if r.ok else 'FAILED'})")
        if self.tty:
            end = "\n" if self.done == self.total else ""
            self.stream.write("\r" + line.ljust(100) + end)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


def grade_all(course_dir: str | os.PathLike[str], assignment: str, *,
              students: list[str] | None = None, jobs: int | None = None,
              allow_unsandboxed: bool = False, progress: bool = True,
              stream: TextIO | None = None, prestart: bool = True) -> Summary:
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
    problem = sandbox_problem(config.SandboxKernelManager.get("bwrap_path") or None)
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
    with Gradebook(db_url, config.CourseDirectory.get("course_id", "")) as gb:
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
    start = time.perf_counter()
    with ProcessPoolExecutor(max_workers=min(jobs, max(1, len(students))), mp_context=ctx,
                             initializer=_init_worker,
                             initargs=(str(course), allowed, prestart)) as pool:
        pending = {pool.submit(_grade_one, assignment, s): s for s in students}
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                student = pending.pop(fut)
                try:
                    r = fut.result()
                except Exception as exc:  # a worker crashed: report, keep grading others
                    r = GradeResult(student, False, 0.0, f"grading worker crashed: {exc!r}")
                summary.results.append(r)
                bar.update(r)
    summary.seconds = time.perf_counter() - start
    _scores(config, assignment, summary.results)
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
    args = parser.parse_args(argv)
    try:
        summary = grade_all(args.course_dir, args.assignment, students=args.student,
                            jobs=args.jobs, allow_unsandboxed=args.allow_unsandboxed,
                            progress=not args.no_progress, prestart=not args.no_prestart)
    except RuntimeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(summary.render())
    for r in summary.graded:
        print(f"  graded {r.student}: {r.score} / {r.max_score}  ({r.seconds:.1f} s)")
    return 0 if not summary.failed else 1


if __name__ == "__main__":
    sys.exit(main())
