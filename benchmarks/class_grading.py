"""A class of 200: serial ``nbgrader autograde`` against the grading engine, wall time and memory.

Builds a copy of the checkpoint quiz (quiz/) with N made-up submissions
(``course_grading.submissions``): 5% that loop for ever (the derivation's answer cell), 1%
corrupt (the notebook cut in half), the rest correct or with one mistake in
``weights_without_self``, in turn. Then grades two identical copies of it, one after the other:

1. ``nbgrader autograde checkpoint`` (serial, sandboxed by the quiz's config), as typed;
2. ``python -m course_grading.parallel checkpoint`` (the engine, one worker per core unless
   ``--jobs``).

For each it prints the wall time, the peak memory of the whole process tree (the command and
every process under it: workers, sandboxes, kernels; the sum of their proportional set sizes,
sampled every 0.2 s, so a process that lives less than that may be missed) and the exit
status; then the ratios, the machine's load average before and after, and whether both gave
the same score to every student (the corrupt ones are ungraded by both, which is why both
commands exit with status 1).

Run::

    python benchmarks/class_grading.py            # 200 submissions (about 10 minutes here)
    python benchmarks/class_grading.py --smoke    # 2 submissions, one corrupt (seconds)
    python benchmarks/class_grading.py --n 400 --jobs 4

It asserts nothing about speed; it stops with an error if a command fails for another reason
or the scores differ.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # the sibling benchmark whose course builder this reuses

from grading_time import ASSIGNMENT, prepare_course, tool_path  # noqa: E402

#: What the answered submissions cycle through: right, and each single mistake.
ANSWERED = ["correct", "mistake_missing_scale", "correct", "mistake_wrong_axis", "correct",
            "mistake_naive_exp_overflow", "correct", "mistake_dk_from_wrong_axis", "blank"]
LOOPING, CORRUPT = "infinite_loop", "corrupt_json"
SMOKE_N = 2


def class_kinds(n: int) -> list[str]:
    """The kind of each of ``n`` submissions: 5% looping, 1% corrupt (at least one), the
    rest answered, spread through the class.

    >>> kinds = class_kinds(200)
    >>> kinds.count("infinite_loop"), kinds.count("corrupt_json"), len(kinds)
    (10, 2, 200)
    >>> class_kinds(4)
    ['correct', 'mistake_missing_scale', 'correct', 'corrupt_json']
    """
    if n < 1:
        raise ValueError(f"n must be at least 1 (got {n})")
    looping, corrupt = round(0.05 * n), max(1, round(0.01 * n))
    special = {round((i + 0.5) * n / looping): LOOPING for i in range(looping)}
    for i in range(corrupt):  # between the looping ones
        at = round((i + 0.5) * n / corrupt) + 1
        while at in special or at >= n:
            at = (at + 1) % n
        special[at] = CORRUPT
    answered = iter(ANSWERED * n)
    return [special.get(i) or next(answered) for i in range(n)]


def _pss_kib(pid: int) -> int:
    """A process's proportional set size in KiB (0 if it is gone or unreadable)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def tree_of(root: int) -> list[int]:
    """``root`` and every process under it, now (from each thread's ``children`` file, which
    costs a few reads where a scan of all of /proc costs tens of milliseconds)."""
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tasks:
            try:
                with open(f"/proc/{pid}/task/{tid}/children") as f:
                    todo.extend(int(c) for c in f.read().split())
            except (OSError, ValueError):
                pass
    return found


class PeakMemory:
    """Samples the PSS of a process tree every ``interval`` seconds; keeps the peak."""

    def __init__(self, root: int, interval: float = 0.2) -> None:
        self.root, self.interval = root, interval
        self.peak_kib, self.processes_at_peak = 0, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            pids = tree_of(self.root)
            total = sum(_pss_kib(p) for p in pids)
            if total > self.peak_kib:
                self.peak_kib, self.processes_at_peak = total, len(pids)
            self._stop.wait(self.interval)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


@dataclass
class Run:
    name: str
    seconds: float
    peak_mib: float
    processes_at_peak: int
    returncode: int
    output: str


def run(name: str, cmd: Sequence[str], course: Path) -> Run:
    """Run ``cmd`` in ``course``, watching its process tree's memory."""
    env = {**os.environ, "PATH": tool_path()}
    start = time.perf_counter()
    proc = subprocess.Popen(list(cmd), cwd=course, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    memory = PeakMemory(proc.pid)
    output, _ = proc.communicate()
    seconds = time.perf_counter() - start
    memory.stop()
    return Run(name, seconds, memory.peak_kib / 1024, memory.processes_at_peak,
               proc.returncode, output)


def scores(course: Path) -> dict[str, float | None]:
    """Every student's total in the gradebook (None: not graded)."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        return {s.student.id: (s.score if (course / "autograded" / s.student.id).is_dir()
                               else None) for s in gb.assignment_submissions(ASSIGNMENT)}


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200, help="submissions (default 200)")
    parser.add_argument("--jobs", type=int, default=None,
                        help="the engine's workers (default: one per core)")
    parser.add_argument("--smoke", action="store_true",
                        help=f"{SMOKE_N} submissions, one of them corrupt: a check that it runs")
    args = parser.parse_args(argv)
    n = SMOKE_N if args.smoke else args.n
    if n < 1:
        parser.error(f"--n must be at least 1 (got {n})")
    cores = len(os.sched_getaffinity(0))
    jobs = args.jobs or cores
    kinds = class_kinds(n)
    corrupt = {f"s{i + 1:02d}" for i, k in enumerate(kinds) if k == CORRUPT}
    before = load()
    runners = [("nbgrader autograde (serial)", ["nbgrader", "autograde", ASSIGNMENT]),
               (f"engine, {jobs} worker(s)", [sys.executable, "-m", "course_grading.parallel",
                                              ASSIGNMENT, "--no-progress", "--jobs",
                                              str(jobs)])]
    results: list[Run] = []
    graded: dict[str, dict[str, float | None]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-class-") as tmp:
        template = prepare_course(Path(tmp) / "template", n, kinds)
        for name, cmd in runners:
            course = Path(tmp) / f"run-{len(results)}"
            shutil.copytree(template, course)
            r = run(name, cmd, course)
            if r.returncode not in (0, 1):  # 1: the corrupt notebooks could not be graded
                raise SystemExit(f"{' '.join(cmd)} failed ({r.returncode}):\n"
                                 f"{r.output[-3000:]}")
            results.append(r)
            graded[name] = scores(course)
            shutil.rmtree(course)
            print(f"  {name}: {r.seconds:.1f} s, peak {r.peak_mib:.0f} MiB", flush=True)
    after = load()
    serial, engine = results
    print(f"\n{n} made-up submissions of the checkpoint quiz ({kinds.count(LOOPING)} looping, "
          f"{kinds.count(CORRUPT)} corrupt, the rest correct or one mistake), {cores} cores; "
          f"load average before {before}, after {after}")
    print(f"{'runner':32s} {'wall s':>8s} {'s/subm.':>8s} {'peak MiB':>9s} {'processes':>10s} "
          f"{'exit':>5s}")
    for r in results:
        print(f"{r.name:32s} {r.seconds:8.1f} {r.seconds / n:8.2f} {r.peak_mib:9.0f} "
              f"{r.processes_at_peak:10d} {r.returncode:5d}")
    print(f"engine against serial: {serial.seconds / engine.seconds:.2f}x as fast, "
          f"{engine.peak_mib / serial.peak_mib:.2f}x the peak memory")
    reference = graded[serial.name]
    same = all(g == reference for g in graded.values())
    ungraded = sorted(s for s, v in reference.items() if v is None) or sorted(
        corrupt - set(reference))
    print(f"same scores from both: {same}; ungraded by both: {', '.join(ungraded) or 'none'} "
          f"(corrupt: {', '.join(sorted(corrupt))})")
    if not same:
        raise SystemExit("the serial command and the engine gave different scores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
