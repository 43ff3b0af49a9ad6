"""What do the grade table and the class report cost on top of ``nbgrader autograde``?

Extends ``benchmarks/grading_time.py`` (same course copy, same class of N submissions,
made by its :func:`prepare_course`): autogrades the class once with ``NbGraderAPI``, then
builds the grade table (``python -m course_grading.gradetable``) and writes the class
report (``python -m course_grading.report``) REPEATS times each, in this process.
Prints the median seconds of each, per class and per submission, and their ratio to the
autograde time of the same class.

    python benchmarks/report_time.py             # 20 submissions, 5 repeats
    python benchmarks/report_time.py -n 40 --repeats 3
    python benchmarks/report_time.py --smoke     # 1 submission, 1 run of each (the suite's)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from grading_time import ASSIGNMENT, open_api, prepare_course  # noqa: E402

from course_grading.gradetable import build_grade_table  # noqa: E402
from course_grading.report import write_report  # noqa: E402


def _median_seconds(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: print medians and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-n", type=int, default=20, help="submissions (default 20)")
    parser.add_argument("--repeats", type=int, default=5, help="runs of each (default 5)")
    parser.add_argument("--smoke", action="store_true",
                        help="1 submission, 1 run of each: a check that it runs (the suite's)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.n, args.repeats = 1, 1
    if args.n < 1 or args.repeats < 1:
        parser.error(f"-n and --repeats must be at least 1 (got {args.n}, {args.repeats})")
    with tempfile.TemporaryDirectory(prefix="report-time-") as tmp:
        course = prepare_course(Path(tmp) / "quiz", args.n)
        start = time.perf_counter()
        result = open_api(course).autograde(ASSIGNMENT, "*")
        autograde = time.perf_counter() - start
        if not result["success"]:
            raise RuntimeError(f"autograde failed:\n{result.get('error')}")
        table = _median_seconds(lambda: build_grade_table(course), args.repeats)
        report = _median_seconds(lambda: write_report(course, Path(tmp) / "report"),
                                 args.repeats)
    n = args.n
    print(f"class of {n} submissions (NbGraderAPI, one process); medians of {args.repeats} runs")
    print(f"  autograde (one run):  {autograde:7.2f} s   {autograde / n:.3f} s per submission")
    print(f"  grade table:          {table:7.2f} s   {table / n:.3f} s per submission"
          f"   {table / autograde:.1%} of autograde")
    print(f"  class report:         {report:7.2f} s   {report / n:.3f} s per submission"
          f"   {report / autograde:.1%} of autograde")
    return 0


if __name__ == "__main__":
    sys.exit(main())
