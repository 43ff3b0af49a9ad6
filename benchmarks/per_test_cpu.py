"""Which tests spend the suite's CPU: run pytest, and print CPU seconds per test and per module.

Run:  .venv/bin/python benchmarks/per_test_cpu.py [--top 30] -- -n 3 --dist loadgroup [pytest args]
      .venv/bin/python benchmarks/per_test_cpu.py --smoke   # one test file (the suite's check)

The suite is CPU-bound on 2 cores (``benchmarks/suite_cpu.py`` shows the machine busy for
~95 % of a run), so its wall time is its CPU over two, and ``--durations`` misleads: a test
that waits a minute for a timeout costs nothing, a short one that drives Chromium costs much.
This loads itself into pytest (and each xdist worker) as a plugin. In each pytest process a
thread samples, every ``PER_TEST_CPU_INTERVAL`` seconds (0.5), the user + system time of
every process descended from it (Chromium, kernels, servers, sandboxed graders, the worker
itself) and adds each one's increase since the last sample to the test that is running (its
setup, call and teardown; a module's fixtures count to the test that made or ended them).

What it cannot see, so the totals are a lower bound (compare them with ``suite_cpu.py``'s):
a process that lives shorter than one interval, the last interval of one that ends, and a
process that leaves the tree (a daemon such as PostgreSQL's server, reparented to init).
Figures go to ``--out`` (a TSV: test, wall s, CPU s; one line per test and worker); the
summary is printed at the end. The exit status is pytest's. Linux only.
"""

from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from proc_cpu import HZ, all_processes

ROOT = Path(__file__).resolve().parents[1]
OUT_ENV = "PER_TEST_CPU_OUT"
#: what ``--smoke`` runs when no pytest arguments are given: one small test file
SMOKE_TESTS = ["-q", "-p", "no:xdist", "tests/test_proc_cpu.py"]


def _tree(root: int, procs: dict[int, tuple[int, int]]) -> list[int]:
    children: dict[int, list[int]] = collections.defaultdict(list)
    for pid, (ppid, _) in procs.items():
        children[ppid].append(pid)
    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo.extend(children.get(pid, ()))
    return tree


class TreeSampler:
    """CPU ticks of this process's tree, added to whatever ``current`` names at each sample."""

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self.current: str | None = None
        self.ticks: collections.Counter[str] = collections.Counter()
        self._last: dict[int, int] = {}
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self.sample(baseline=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def sample(self, baseline: bool = False) -> None:
        procs = all_processes()
        with self._lock:
            seen = {}
            for pid in _tree(os.getpid(), procs):
                if pid not in procs:
                    continue
                own = procs[pid][1]
                # a process first seen now was born since the last sample: all its time is new
                last = self._last.get(pid, own if baseline else 0)
                if self.current is not None and own > last:
                    self.ticks[self.current] += own - last
                seen[pid] = own
            self._last = seen

    def switch(self, name: str | None) -> None:
        """Sample (closing the last test's account), then count towards ``name``."""
        with self._lock:  # no sample of the thread's between the two
            self.sample()
            self.current = name

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.sample()


# ---------------------------------------------------------------- the pytest plugin
_SAMPLER: TreeSampler | None = None
_STARTS: dict[str, float] = {}  # node id -> when its setup began


def pytest_configure(config) -> None:
    global _SAMPLER
    # xdist's controller runs no test: only its workers (or a pytest without -n) sample
    controller = bool(getattr(config.option, "numprocesses", 0)) and not hasattr(
        config, "workerinput")
    if os.environ.get(OUT_ENV) and _SAMPLER is None and not controller:
        _SAMPLER = TreeSampler(float(os.environ.get("PER_TEST_CPU_INTERVAL", "0.5")))
        _SAMPLER.start()


def pytest_unconfigure(config) -> None:
    if _SAMPLER is not None:
        _SAMPLER.stop()


def pytest_runtest_protocol(item, nextitem):
    if _SAMPLER is not None:
        _SAMPLER.switch(item.nodeid)
        _STARTS[item.nodeid] = time.monotonic()


def pytest_runtest_logfinish(nodeid, location):
    if _SAMPLER is None:
        return
    _SAMPLER.switch(None)
    with open(os.environ[OUT_ENV], "a", encoding="utf-8") as out:
        out.write(f"{nodeid}\t{time.monotonic() - _STARTS.pop(nodeid):.2f}"
                  f"\t{_SAMPLER.ticks.pop(nodeid, 0) / HZ:.2f}\n")


# ---------------------------------------------------------------- the summary
def summary(rows: list[tuple[str, float, float]], top: int) -> str:
    lines = [f"{len(rows)} tests; CPU seen {sum(r[2] for r in rows):.0f} s "
             f"(lower bound: see the docstring)", "", "CPU s   wall s  test"]
    lines += [f"{cpu:6.1f}  {wall:7.1f}  {node}"
              for node, wall, cpu in sorted(rows, key=lambda r: -r[2])[:top]]
    modules: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0])
    for node, wall, cpu in rows:
        m = modules[node.split("::", 1)[0]]
        m[0] += cpu
        m[1] += wall
        m[2] += 1
    lines += ["", "CPU s   wall s  tests  module"]
    lines += [f"{c:6.1f}  {w:7.1f}  {n:5d}  {mod}"
              for mod, (c, w, n) in sorted(modules.items(), key=lambda kv: -kv[1][0])[:top]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--out", type=Path, default=None,
                        help="the TSV (default test-artifacts/per_test_cpu.tsv; with --smoke, "
                        "a temporary file)")
    parser.add_argument("--smoke", action="store_true",
                        help=f"pytest {' '.join(SMOKE_TESTS)} unless pytest arguments are "
                        "given: a check that it runs (the suite's)")
    parser.add_argument("pytest_args", nargs=argparse.REMAINDER, help="pytest's, after --")
    args = parser.parse_args(argv)
    if not os.path.isdir("/proc/self"):
        parser.error("this needs Linux's /proc")
    pytest_args = args.pytest_args[1:] if args.pytest_args[:1] == ["--"] else args.pytest_args
    if args.smoke:
        pytest_args = pytest_args or SMOKE_TESTS
    if args.out is None and args.smoke:  # a smoke run leaves a real measurement's TSV alone
        with tempfile.TemporaryDirectory(prefix="per-test-cpu-") as tmp:
            return _run(Path(tmp) / "per_test_cpu.tsv", pytest_args, args.top)
    out = args.out or ROOT / "test-artifacts" / "per_test_cpu.tsv"
    return _run(out, pytest_args, args.top)


def _run(out: Path, pytest_args: list[str], top: int) -> int:
    """Run pytest with this plugin writing to ``out``; print the summary; pytest's status."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("")
    here = str(Path(__file__).resolve().parent)
    env = dict(os.environ, **{OUT_ENV: str(out.resolve())})
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [here, env.get("PYTHONPATH")]))
    code = subprocess.call([sys.executable, "-m", "pytest", "-p", Path(__file__).stem,
                            *pytest_args], cwd=ROOT, env=env)
    rows = []
    for line in out.read_text(encoding="utf-8").splitlines():
        node, wall, cpu = line.rsplit("\t", 2)
        rows.append((node, float(wall), float(cpu)))
    print(summary(rows, top))
    return code


if __name__ == "__main__":
    raise SystemExit(main())
