"""How long does each lesson take to run top to bottom (Restart & Run All)?

Run:  .venv/bin/python benchmarks/lesson_times.py [--repeat 3] [notebooks/03_scaling.ipynb ...]
      .venv/bin/python benchmarks/lesson_times.py --smoke   # the first lesson, once (the suite)

Each run starts a fresh kernel of this environment (as nbval does), executes every cell of
the lesson in order with nbclient, and stops the kernel. Two times are printed per lesson,
as medians over the repeats (the machine is shared and noisy):

* ``cells``: from the first cell's start to the last cell's end, what a student waits
  for after Restart & Run All once the kernel is up;
* ``total``: including kernel start-up and shutdown, what one nbval run of the file costs;
* ``kernel CPU``: the CPU seconds the kernel process spent over ``cells`` (user + system,
  its threads included, from /proc). On a shared machine wall time grows with the load and
  CPU time hardly does: on an idle core ``cells`` is about this figure.

Target (issue 3): every lesson under 10 s on 2 cores. The last column gives the ratio
of the ``total`` median to that target. The load average is printed before and after.
Nothing is written to the notebooks.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import lesson_index  # noqa: E402  (on the path just above)
import proc_cpu  # noqa: E402  (benchmarks/, this script's folder)

TARGET_S = 10.0


def cpu_seconds(pid: int | None) -> float:
    """User + system CPU seconds of process ``pid`` so far (all its threads); NaN when it
    cannot be read (no /proc, or a kernel this process did not start)."""
    stat = None if pid is None else proc_cpu.stat_of(pid)
    return float("nan") if stat is None else stat[1] / proc_cpu.HZ


def run_once(path: Path) -> tuple[float, float, float]:
    """Execute a copy of the notebook in a fresh kernel; return (cells, total, kernel CPU)
    seconds."""
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=300, kernel_name="python3", resources={
        "metadata": {"path": str(path.parent)}})
    start = time.perf_counter()
    with client.setup_kernel():
        provisioner = getattr(client.km, "provisioner", None)
        pid = getattr(provisioner, "pid", None)
        cpu_before = cpu_seconds(pid)
        first = time.perf_counter()
        for index, cell in enumerate(nb.cells):
            client.execute_cell(cell, index)
        last = time.perf_counter()
        cpu = cpu_seconds(pid) - cpu_before
    return last - first, time.perf_counter() - start, cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path,
                        help="lessons to time (default: every notebook of the course)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per lesson (default 3)")
    parser.add_argument("--smoke", action="store_true",
                        help="the first lesson (unless lessons are given), one run: a check "
                        "that it runs (the suite's)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.repeat = 1
        args.notebooks = args.notebooks or [lesson_index.lessons()[0].path]
    paths = args.notebooks or [n.path for n in lesson_index.read_index()]
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
          f"({os.cpu_count()} cores)")
    print(f"{'lesson':<32} {'cells (s)':>10} {'total (s)':>10} {'total/target':>13} "
          f"{'kernel CPU (s)':>15}")
    worst = 0.0
    for path in paths:
        runs = [run_once(path) for _ in range(args.repeat)]
        cells = statistics.median(r[0] for r in runs)
        total = statistics.median(r[1] for r in runs)
        cpu = statistics.median(r[2] for r in runs)
        worst = max(worst, total)
        print(f"{path.name:<32} {cells:10.2f} {total:10.2f} {total / TARGET_S:13.2f} "
              f"{cpu:15.2f}", flush=True)
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"medians of {args.repeat} run(s); slowest lesson {worst:.2f} s "
          f"(target < {TARGET_S:.0f} s: {'met' if worst < TARGET_S else 'NOT met'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
