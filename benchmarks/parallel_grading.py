"""Serial ``nbgrader autograde`` against the parallel engine, side by side, in one run.

Builds a copy of the checkpoint quiz (quiz/) with N submissions (default 40: correct ones
and each single mistake, in turn), then grades identical copies of it:

1. ``nbgrader autograde checkpoint`` (the plain command, serial, sandboxed by the quiz's
   config), once per repeat;
2. ``python -m course_grading.parallel checkpoint --jobs J`` for J = 1 and J = the
   number of cores (and any ``--jobs`` given), once per repeat, and with ``--no-prestart``
   at J = the number of cores (kernels started only when their notebook comes), to show
   what starting the next kernel ahead is worth;
3. with ``--with-stock``: also plain ``nbgrader autograde`` (nbgrader's stock, unsandboxed
   kernel, every check run inside it: what the sandbox and the host-side verdicts cost).

It prints seconds per submission, throughput and the share of the machine's CPU time that
was busy (median over repeats), the ratio to the serial command, and checks that every run
gave the same scores. It also times a bare sandboxed kernel start and the bwrap sandbox
alone: the fixed cost per submission that starting kernels ahead hides.

Run: ``.venv/bin/python benchmarks/parallel_grading.py [--n 40] [--repeats 3] [--jobs 1 2 3]``
(``--smoke``: 1 submission, 1 worker, one kernel start timed; the suite's check that it runs)
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

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # the sibling benchmark whose course builder this reuses

from grading_time import ASSIGNMENT, ROOT, prepare_course, tool_path  # noqa: E402

FAST_KINDS = ["correct", "mistake_missing_scale", "mistake_wrong_axis",
              "mistake_naive_exp_overflow", "mistake_dk_from_wrong_axis", "blank"]


def scores(course: Path) -> dict[str, float]:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        return {s.student.id: s.score for s in gb.assignment_submissions(ASSIGNMENT)}


def _cpu_times() -> tuple[int, int]:
    """Total and idle jiffies of the whole machine, from /proc/stat."""
    with open("/proc/stat") as f:
        fields = [int(v) for v in f.readline().split()[1:]]
    return sum(fields), fields[3] + fields[4]


def run(cmd: list[str], course: Path) -> tuple[float, float]:
    """Run ``cmd`` in ``course``; return its seconds and the machine's busy CPU share."""
    env = {**os.environ, "PATH": tool_path()}
    total0, idle0 = _cpu_times()
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=course, env=env, capture_output=True, text=True,
                          check=False)
    seconds = time.perf_counter() - start
    total1, idle1 = _cpu_times()
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    busy = 1 - (idle1 - idle0) / max(total1 - total0, 1)
    return seconds, busy


def unsandbox(course: Path) -> None:
    """Make ``course`` plain nbgrader: stock kernel, every check run inside it."""
    config = course / "nbgrader_config.py"
    lines = config.read_text().splitlines()
    kept = [ln for ln in lines if "course_grading.verdicts" not in ln
            and not ln.startswith("enable(c")]
    if len(kept) == len(lines):
        raise SystemExit(f"{config} does not enable the course's grading the way this script "
                         "expects")
    config.write_text("\n".join(kept) + "\n")


def kernel_start_cost(repeats: int = 5) -> tuple[float, float]:
    """Median seconds to start+stop a sandboxed kernel, and to run `true` in bwrap."""
    from course_grading.sandbox import SandboxKernelManager, _root_links

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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=40, help="submissions (default 40)")
    parser.add_argument("--repeats", type=int, default=1, help="runs of each (median)")
    parser.add_argument("--jobs", type=int, nargs="*", default=None,
                        help="worker counts for the engine (default: 1 and all cores)")
    parser.add_argument("--with-stock", action="store_true",
                        help="also time nbgrader autograde with its stock, unsandboxed kernel")
    parser.add_argument("--smoke", action="store_true",
                        help="1 submission, 1 worker, one kernel start: a check that it runs")
    args = parser.parse_args(argv)
    cores = len(os.sched_getaffinity(0))
    if args.smoke:
        args.n, args.repeats, args.jobs = 1, 1, [1]
    jobs = sorted(set(args.jobs or [1, cores]))
    serial_name = "nbgrader autograde (serial)"
    engine = [sys.executable, "-m", "course_grading.parallel", ASSIGNMENT, "--no-progress"]
    variants: list[tuple[str, list[str], bool]] = [
        (serial_name, ["nbgrader", "autograde", ASSIGNMENT], True)]
    if args.with_stock:
        variants.append(("  plain nbgrader (checks in the kernel)", ["nbgrader", "autograde",
                                                                     ASSIGNMENT], False))
    variants += [(f"parallel engine, {j} worker(s)", [*engine, "--jobs", str(j)], True)
                 for j in jobs]
    variants.append((f"  same, {cores} workers, --no-prestart",
                     [*engine, "--jobs", str(cores), "--no-prestart"], True))
    runs: dict[str, list[tuple[float, float]]] = {}
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-grading-") as tmp:
        base = Path(tmp)
        template = prepare_course(base / "template", args.n, FAST_KINDS)
        for r in range(args.repeats):
            for i, (name, cmd, sandboxed) in enumerate(variants):
                course = base / f"run{r}-{i}"
                shutil.copytree(template, course)
                if not sandboxed:
                    unsandbox(course)
                seconds, busy = run(cmd, course)
                runs.setdefault(name, []).append((seconds, busy))
                results[name] = scores(course)
                shutil.rmtree(course)
                print(f"  {name.strip()}: {seconds:.1f} s, CPU {busy:.0%} busy", flush=True)
    serial = statistics.median(s for s, _ in runs[serial_name])
    print(f"\n{args.n} submissions of the checkpoint quiz, {cores} cores, "
          f"median of {args.repeats} run(s) (shared machine: figures are noisy)")
    print(f"{'runner':40s} {'seconds':>8s} {'s/subm.':>8s} {'subm./s':>8s} {'CPU busy':>9s} "
          f"{'vs serial':>9s}")
    for name, pairs in runs.items():
        med = statistics.median(s for s, _ in pairs)
        busy = statistics.median(b for _, b in pairs)
        print(f"{name:40s} {med:8.1f} {med / args.n:8.2f} {args.n / med:8.2f} {busy:9.0%} "
              f"{serial / med:8.2f}x")
    reference = results[serial_name]
    same = all(res == reference for res in results.values())
    print(f"same scores in every run: {same}")
    starts = 1 if args.smoke else 5
    kernel, bwrap = kernel_start_cost(starts)
    print(f"fixed cost per submission: a sandboxed kernel starts in {kernel:.2f} s (median of "
          f"{starts}; the engine starts it during the previous notebook), of which the bwrap "
          f"sandbox alone {bwrap * 1000:.0f} ms")
    if not same:
        raise SystemExit("scores differ between runners")


if __name__ == "__main__":
    main()
