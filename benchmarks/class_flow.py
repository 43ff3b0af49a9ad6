"""How long a whole class takes on one machine: release, every student fetches, answers and
submits (as their own Unix user, nbgrader's CLI), collect, autograde, feedback, every student
fetches feedback. Needs root (it creates throw-away Unix users, removed afterwards).

    sudo .venv/bin/python benchmarks/class_flow.py            # 3 and 30 students, SQLite
    sudo .venv/bin/python benchmarks/class_flow.py 3 30 --backend postgres --repeat 3
    sudo .venv/bin/python benchmarks/class_flow.py --smoke   # a class of 1 (the suite's check)

Prints, per class size, the median over the repeats of each phase and the whole flow, the
seconds per student, and the ratio to the smallest class. Not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "hub"))

from classroom import ClassRun, ensure_env

PHASES = ("release", "students_work", "collect", "autograde", "generate_feedback",
          "release_feedback", "fetch_feedback")
# One student after another here; in a real class each student does these on their own.
STUDENT_PHASES = ("students_work", "fetch_feedback")


def one_class(n: int, backend: str) -> dict[str, float]:
    with ClassRun(n_students=n, backend=backend, log=lambda *a: None) as run:
        t0 = time.perf_counter()
        run.release()
        run.students_work()
        run.grade()
        run.students_fetch_feedback()
        total = time.perf_counter() - t0
        graded = len(run.grades())
        if graded != n:
            raise RuntimeError(f"expected {n} graded submissions, the gradebook has {graded}")
        instructor = sum(run.timings[p] for p in PHASES if p not in STUDENT_PHASES)
        return {**{p: run.timings[p] for p in PHASES}, "instructor": instructor, "total": total}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sizes", nargs="*", type=int, default=[3, 30])
    ap.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--smoke", action="store_true",
                    help="a class of 1, once: a check that it runs (the suite's)")
    args = ap.parse_args(argv)
    if args.smoke:
        args.sizes, args.repeat = [1], 1
    ensure_env()
    print(f"class flow, gradebook={args.backend}, median of {args.repeat} run(s), seconds")
    columns = (*PHASES, "instructor", "total")
    print(f"{'students':>8} " + " ".join(f"{p:>17}" for p in columns) + "  s/student",
          flush=True)
    base = None
    for n in args.sizes:
        runs = [one_class(n, args.backend) for _ in range(args.repeat)]
        r = {k: statistics.median(run[k] for run in runs) for k in runs[0]}
        per = r["total"] / n
        base = base or per
        print(f"{n:>8} " + " ".join(f"{r[p]:>17.1f}" for p in columns)
              + f"  {per:9.2f}  (x{per / base:.2f} per student vs {args.sizes[0]})", flush=True)


if __name__ == "__main__":
    main()
