"""Serial ``nbgrader autograde`` against the parallel engine, side by side, in one run.

Builds a copy of the checkpoint quiz (quiz/) with N submissions (default 40: correct ones
and each single mistake, in turn), then grades identical copies of it:

1. ``nbgrader autograde checkpoint`` (the plain command, serial, sandboxed by the quiz's
   config), once per repeat;
2. ``python -m course_lib.grading.parallel checkpoint --jobs J`` for J = 1 and J = the
   number of cores (and any ``--jobs`` given), once per repeat.

It prints seconds per submission and throughput (median over repeats), the ratio to the
serial command, and checks that every run gave the same scores. It also times the fixed
costs per submission: a bare sandboxed kernel start, and the bwrap sandbox alone.

Run: ``.venv/bin/python benchmarks/parallel_grading.py [--n 40] [--repeats 1] [--jobs 2 4]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from course_lib.grading.pipeline import (  # noqa: E402
    ASSIGNMENT,
    copy_course,
    open_api,
    place_submission,
    tool_path,
)
from course_lib.grading.submissions import make_submission  # noqa: E402
from course_lib.grading.variants import DEFAULT_SEED, make_variant  # noqa: E402

FAST_KINDS = ["correct", "mistake_missing_scale", "mistake_wrong_axis",
              "mistake_naive_exp_overflow", "mistake_dk_from_wrong_axis", "blank"]


def build(base: Path, n: int) -> Path:
    course = copy_course(ROOT / "quiz", base / "template")
    result = open_api(course).generate_assignment(ASSIGNMENT)
    if not result["success"]:
        raise SystemExit(result.get("log"))
    released = (course / "release" / ASSIGNMENT / "checkpoint.ipynb").read_text()
    variant = make_variant(DEFAULT_SEED)
    for i in range(n):
        kind = FAST_KINDS[i % len(FAST_KINDS)]
        place_submission(course, f"s{i:03d}", make_submission(kind, released, variant))
    return course


def scores(course: Path) -> dict[str, float]:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        return {s.student.id: s.score for s in gb.assignment_submissions(ASSIGNMENT)}


def run(cmd: list[str], course: Path) -> float:
    env = {**os.environ, "PATH": tool_path()}
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=course, env=env, capture_output=True, text=True,
                          check=False)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return seconds


def kernel_start_cost(repeats: int = 5) -> tuple[float, float]:
    """Median seconds to start+stop a sandboxed kernel, and to run `true` in bwrap."""
    from course_lib.grading.sandbox import SandboxKernelManager, _root_links

    async def once() -> float:
        km = SandboxKernelManager(kernel_name="python3")
        t = time.perf_counter()
        await km.start_kernel(cwd=str(ROOT / "quiz"))
        kc = km.client()
        kc.start_channels()
        await kc.wait_for_ready(timeout=60)
        elapsed = time.perf_counter() - t
        kc.stop_channels()
        await km.shutdown_kernel(now=True)
        return elapsed

    kernels = [asyncio.run(once()) for _ in range(repeats)]
    bw = []
    for _ in range(repeats):
        t = time.perf_counter()
        subprocess.run(["bwrap", "--unshare-all", "--die-with-parent", "--ro-bind", "/usr",
                        "/usr", *_root_links(), "--proc", "/proc", "--dev", "/dev", "--",
                        "/usr/bin/true"], check=True)
        bw.append(time.perf_counter() - t)
    return statistics.median(kernels), statistics.median(bw)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=40, help="submissions (default 40)")
    parser.add_argument("--repeats", type=int, default=1, help="runs of each (median)")
    parser.add_argument("--jobs", type=int, nargs="*", default=None,
                        help="worker counts for the engine (default: 1 and all cores)")
    args = parser.parse_args()
    cores = len(os.sched_getaffinity(0))
    jobs = sorted(set(args.jobs or [1, cores]))
    with tempfile.TemporaryDirectory(prefix="bench-grading-") as tmp:
        base = Path(tmp)
        template = build(base, args.n)
        runs: dict[str, list[float]] = {}
        results: dict[str, dict[str, float]] = {}
        for r in range(args.repeats):
            variants = [("nbgrader autograde (serial)", ["nbgrader", "autograde", ASSIGNMENT])]
            variants += [(f"parallel engine, {j} worker(s)",
                          [sys.executable, "-m", "course_lib.grading.parallel", ASSIGNMENT,
                           "--jobs", str(j), "--no-progress"]) for j in jobs]
            for name, cmd in variants:
                course = base / f"run{r}-{len(runs.get(name, []))}-{name.split()[0]}"
                shutil.copytree(template, course)
                seconds = run(cmd, course)
                runs.setdefault(name, []).append(seconds)
                results[name] = scores(course)
                shutil.rmtree(course)
                print(f"  {name}: {seconds:.1f} s", flush=True)
    serial = statistics.median(runs["nbgrader autograde (serial)"])
    print(f"\n{args.n} submissions of the checkpoint quiz, {cores} cores, "
          f"median of {args.repeats} run(s) (shared machine: figures are noisy)")
    print(f"{'runner':34s} {'seconds':>8s} {'s/submission':>13s} {'subm./s':>8s} "
          f"{'vs serial':>9s}")
    for name, secs in runs.items():
        med = statistics.median(secs)
        print(f"{name:34s} {med:8.1f} {med / args.n:13.2f} {args.n / med:8.2f} "
              f"{serial / med:8.2f}x")
    reference = results["nbgrader autograde (serial)"]
    same = all(res == reference for res in results.values())
    print(f"same scores in every run: {same}")
    kernel, bwrap = kernel_start_cost()
    print(f"fixed cost left per submission: sandboxed kernel start {kernel:.2f} s "
          f"(median of 5), of which the bwrap sandbox alone {bwrap * 1000:.0f} ms")
    if not same:
        raise SystemExit("scores differ between runners")


if __name__ == "__main__":
    main()
