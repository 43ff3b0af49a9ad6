"""A class of hundreds submitting at once through JupyterHub and ngshare, then collected.

Runs deploy/jupyterhub_config.py with the ngshare exchange (ngshare as a hub service, its
database on a throw-away PostgreSQL server) for N simulated students (default 200): each is
a real hub user with their own API token and, at the same moment as all the others, fetches
the released checkpoint and submits a notebook made unique to them, through the hub's proxy
(the REST calls of course_exchange.ngshare_exchange). Then the instructor runs
``nbgrader collect`` (the course's ngshare collect) and every collected notebook's SHA-256 is
compared with what that student sent. Needs root (throw-away Unix users, removed after).

    sudo .venv/bin/python benchmarks/ngshare_load.py             # 200 students
    sudo .venv/bin/python benchmarks/ngshare_load.py --students 50 --workers 25
    sudo .venv/bin/python benchmarks/ngshare_load.py --smoke   # 2 students, 1 round (the suite's)
    sudo .venv/bin/python benchmarks/ngshare_load.py --personal  # each student their own numbers

``--personal`` runs the class as the instructors' guide does: a secret seed
(``course_grading.variants``) and the class list of all N (``course_grading.roster``), so the
release holds a notebook of their own for each student. ngshare (0.6) has no way to download
one file of a release, so every student's fetch carries all N notebooks (the course's fetch
keeps the caller's): printed as the fetch's size and latency.

Prints submissions per second, the submit latency (median, 95th percentile, max), the
collect time, and what was lost, mixed up or answered with an error (all should be 0).
Goal on a 2-core machine: 200 students in under 60 s, p95 under 2 s. Not a test.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "hub"))

from classroom import ASSIGNMENT, COURSE_ID, ClassRun, Hub
from ngshare_load import add_crowd, collected_digest, everyone_submits
from proc_cpu import HZ, stat_of


def percentile(values: list[float], q: float) -> float:
    """The ``q``-th percentile (0-100) by the nearest-rank method (no extrapolation)."""
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * q // 100))
    return ordered[int(rank) - 1]


def processes(hub: Hub) -> dict[str, list[int]]:
    """The processes whose CPU time is reported: ngshare, the hub, its proxy, the students."""
    import os
    import subprocess

    def children(pid: int) -> list[int]:
        out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
        return [int(p) for p in out.split()]

    kids = children(hub.proc.pid)
    proxy = [p for p in kids if "configurable-http-proxy" in Path(f"/proc/{p}/cmdline")
             .read_bytes().decode(errors="replace")]
    return {"ngshare": hub.ngshare_pids(), "hub": [hub.proc.pid], "proxy": proxy,
            "students (this process)": [os.getpid()]}


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time of ``pids`` so far (Linux /proc)."""
    total = 0
    for pid in pids:
        if (stat := stat_of(pid)) is None:
            raise ProcessLookupError(f"process {pid} ended before its CPU time was read")
        total += stat[1]
    return total / HZ


def per_student(run: ClassRun, students: list[str]) -> None:
    """The instructor's steps 1-2 of the guide, in the course folder: a secret seed, then
    the class list (``students``), so that the release holds each one's own notebook."""
    import secrets

    env = f"{run.env}/bin/python"
    run.as_user(run.instructor, [env, "-m", "course_grading.variants", "--seed",
                                 secrets.token_hex(8), "--template",
                                 f"source/{ASSIGNMENT}/{ASSIGNMENT}.ipynb"], cwd=run.course)
    run.write_as(run.instructor, run.course / "class.csv", "id,first_name,last_name,email\n"
                 + "".join(f"{s},Student,{i + 1},{s}@example.org\n"
                           for i, s in enumerate(students)))
    said = run.as_user(run.instructor, [env, "-m", "course_grading.roster", "load",
                                        "class.csv"], cwd=run.course)
    if f"{len(students)} joined" not in said.stdout + said.stderr:
        raise RuntimeError(f"the class list did not load: {said.stdout}{said.stderr}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--students", type=int, default=200)
    ap.add_argument("--workers", type=int, default=None,
                    help="students in flight at once (default: all of them)")
    ap.add_argument("--rounds", type=int, default=3,
                    help="times everyone submits (a burst of N each); medians over rounds")
    ap.add_argument("--personal", action="store_true",
                    help="per-student variants: a seed and the class list, as the guide says")
    ap.add_argument("--smoke", action="store_true",
                    help="2 students, 1 round: a check that it runs (the suite's)")
    args = ap.parse_args(argv)
    if args.smoke:
        args.students, args.workers, args.rounds = 2, None, 1
    with ClassRun(n_students=0, backend="postgres", exchange_kind="ngshare",
                  log=lambda *a: None) as run:
        hub = run.hub = Hub(run)
        hub.start()
        admin = hub.token_by_login(run.instructor)
        run.tokens.update(hub.tokens_for(admin, [run.instructor.name]))
        run.as_user(run.instructor, [f"{run.env}/bin/python", "-m",
                                     "course_exchange.ngshare_service", "setup-course",
                                     COURSE_ID, "--url", hub.ngshare_url, "--instructor",
                                     run.instructor.name], cwd=run.course)
        t0 = time.perf_counter()
        crowd = add_crowd(run, args.students, admin)
        setup = time.perf_counter() - t0
        n = len(crowd.names)
        if args.personal:
            per_student(run, crowd.names)
        t0 = time.perf_counter()
        run.release()
        release = time.perf_counter() - t0
        print(f"ngshare load: {n} students fetch and submit at once through JupyterHub "
              f"({args.workers or n} in flight), PostgreSQL behind ngshare"
              + (", each student their own notebook" if args.personal else ""))
        print(f"  users, tokens, enrolment: {setup:.1f} s (not timed below)")
        print(f"  generate and release: {release:.1f} s")
        who = processes(hub)
        errors, rounds = [], []
        for attempt in range(args.rounds):  # every round: everyone submits once more
            cpu0 = {name: cpu_seconds(pids) for name, pids in who.items()}
            t0 = time.perf_counter()
            attempts = everyone_submits(crowd, hub.ngshare_url, attempt=attempt,
                                        workers=args.workers)
            wall = time.perf_counter() - t0
            cpu = {name: cpu_seconds(pids) - cpu0[name] for name, pids in who.items()}
            errors += [a for a in attempts if not a.ok]
            if args.personal:  # a student answering the class's template: counted as an error
                errors += [replace(a, ok=False, error="fetched no notebook of their own")
                           for a in attempts if a.ok and not a.own]
            latencies = [a.seconds for a in attempts if a.ok]
            rounds.append((n / wall, percentile(latencies, 95) if latencies else float("nan")))
            fetches = [a.fetch_seconds for a in attempts if a.ok]
            size = max((a.fetch_bytes for a in attempts), default=0)
            print(f"  round {attempt + 1}: {wall:.1f} s, {n / wall:.1f} submissions/s; fetch "
                  f"{size / 1e6:.2f} MB each, latency median {statistics.median(fetches):.3f} "
                  f"s, p95 {percentile(fetches, 95):.3f} s; submit "
                  f"latency median {statistics.median(latencies):.3f} s, p95 "
                  f"{rounds[-1][1]:.3f} s, max {max(latencies):.3f} s; CPU s: " + ", ".join(
                      f"{name} {seconds:.1f}" for name, seconds in cpu.items()), flush=True)
        t0 = time.perf_counter()
        run.nbgrader(run.instructor, "collect", ASSIGNMENT, cwd=run.course)
        collect = time.perf_counter() - t0
        lost = [s for s in crowd.names if collected_digest(run, s) is None]
        mixed = [s for s in crowd.names
                 if s not in lost and collected_digest(run, s) != crowd.sent[s][-1]]
        hub.stop()
        run.hub = None
    print(f"  median of {len(rounds)} rounds: "
          f"{statistics.median(r[0] for r in rounds):.1f} submissions/s, "
          f"p95 submit latency {statistics.median(r[1] for r in rounds):.3f} s")
    print(f"  instructor's collect of {n} (the last round's): {collect:.1f} s")
    print(f"  error responses {len(errors)}, lost {len(lost)}, mixed up {len(mixed)}")
    for a in errors[:5]:
        print(f"    {a.student}: {a.error}")
    return 1 if errors or lost or mixed else 0


if __name__ == "__main__":
    sys.exit(main())
