"""Where a command's CPU goes, by kind of process: run it, and print seconds per kind.

Run:  .venv/bin/python benchmarks/suite_cpu.py [--interval 1] -- ./course test
      .venv/bin/python benchmarks/suite_cpu.py --smoke   # one test file (the suite's check)

Made to see what the test suite's processes spend (Chromium, kernels, sandboxed graders,
nbgrader commands, pip, ...). Every ``--interval`` seconds it reads ``/proc/<pid>/stat`` of
every process on the machine and adds each one's new user + system time to its kind: the
program, and for Python the module or script it runs (``py -m ipykernel_launcher``), for
Chromium the process type (``chromium renderer``). A process is named by what it ran when
first seen: the grading sandbox's launcher (``py -c``) keeps its name after it execs the
kernel it starts. Linux only.

Three totals come first: the command's wall time, the machine's busy CPU over the run
(``/proc/stat``, other work on the machine included) and what the samples add up to. A
process that lives shorter than one interval is not sampled: the gap between the last two
is such processes' time (and other work's). The table lists the kinds above 0.5 s. The
command's exit status is this script's.
"""

from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from proc_cpu import HZ, all_processes

ROOT = Path(__file__).resolve().parents[1]
#: what ``--smoke`` measures when no command is given: pytest on one small test file
SMOKE_COMMAND = [sys.executable, "-m", "pytest", "-q", "-p", "no:xdist",
                 "tests/test_proc_cpu.py"]


def kind_of(pid: int) -> str | None:
    """What a process is, from its command line; None if it is gone."""
    try:
        raw = open(f"/proc/{pid}/cmdline", "rb").read()
    except OSError:
        return None
    return kind_of_command([c.decode(errors="replace") for c in raw.split(b"\0") if c])


def kind_of_command(cmd: list[str]) -> str:
    """What a process running ``cmd`` (its argv) is."""
    if not cmd:
        return "kernel thread"
    exe = os.path.basename(cmd[0].split()[0])
    if "chromium" in cmd[0] or exe in ("chrome", "chromium"):
        words = " ".join(cmd).split()  # Chromium rewrites its title as one string
        kind = next((w[7:] for w in words if w.startswith("--type=")), "browser")
        sub = next((w[19:] for w in words if w.startswith("--utility-sub-type=")), "")
        return f"chromium {kind} {sub}".rstrip()
    if exe.startswith("python") and len(cmd) > 1:
        args = cmd[1:]
        if "-m" in args and args.index("-m") + 1 < len(args):
            return "py -m " + args[args.index("-m") + 1]
        if "-c" in args:
            return "py -c"
        script = next((a for a in args if not a.startswith("-")), "")
        return "py " + os.path.basename(script)
    if exe == "node" and len(cmd) > 1:
        return "node " + os.path.basename(cmd[1])
    return "postgres" if exe.startswith("postgres") else exe


class Sampler:
    """CPU seconds by kind, from samples of /proc (see the module docstring)."""

    def __init__(self) -> None:
        self.own: collections.Counter[str] = collections.Counter()
        self._last: dict[int, tuple[str, int]] = {}  # pid: kind, its time at the last sample

    def sample(self, baseline: bool = False) -> None:
        for pid, (_, own) in all_processes().items():
            if pid not in self._last:
                kind = kind_of(pid)
                if kind is None:
                    continue
                # processes already running at the start count from there; new ones from 0
                self._last[pid] = (kind, own if baseline else 0)
            kind, last = self._last[pid]
            self.own[kind] += own - last
            self._last[pid] = (kind, own)

    def track(self, pid: int, kind: str) -> None:
        """Count ``pid`` (just started) as ``kind`` from 0, whatever its /proc says yet: a
        child forked but not yet exec'd still shows its parent's command line."""
        self._last[pid] = (kind, 0)


def busy_ticks() -> int:
    values = [int(v) for v in open("/proc/stat").readline().split()[1:]]
    return sum(values) - values[3] - values[4]  # all but idle and iowait


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--interval", type=float, default=1.0)
    parser.add_argument("--smoke", action="store_true",
                        help="without a command, pytest on tests/test_proc_cpu.py in the "
                        "checkout: a check that it runs (the suite's)")
    parser.add_argument("command", nargs=argparse.REMAINDER,
                        help="the command, after --")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    cwd = None
    if args.smoke and not command:
        command, cwd = SMOKE_COMMAND, ROOT
    if not command:
        parser.error("give the command to measure after --, e.g. -- ./course test")
    if not os.path.isdir("/proc/self"):
        parser.error("this needs Linux's /proc")
    sampler = Sampler()
    sampler.sample(baseline=True)
    busy0, start = busy_ticks(), time.monotonic()
    proc = subprocess.Popen(command, cwd=cwd)
    sampler.track(proc.pid, kind_of_command(command))
    done = threading.Event()

    def watch() -> None:
        while not done.wait(args.interval):
            sampler.sample()

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    # wait for the command to end without reaping it: the last sample then still reads its
    # own final CPU from /proc (a zombie keeps its stat), which would otherwise be lost
    # after its last sample (a 2 s command sampled once at 1 s showed none of its time)
    os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
    done.set()
    thread.join()
    sampler.sample()
    code = proc.wait()
    wall, busy = time.monotonic() - start, (busy_ticks() - busy0) / HZ
    print(f"\nwall {wall:.0f} s; machine busy {busy:.0f} s of CPU; "
          f"sampled {sum(sampler.own.values()) / HZ:.0f} s", file=sys.stderr)
    print("CPU s  kind", file=sys.stderr)
    for kind, ticks in sampler.own.most_common():
        if ticks / HZ >= 0.5:
            print(f"{ticks / HZ:7.1f}  {kind}", file=sys.stderr)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
