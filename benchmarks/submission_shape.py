"""What a submission of empty folders costs the grader, listed by nbgrader and refused here.

nbgrader's autograde lists a submission with ``nbgrader.utils.find_all_files`` before it
grades anything, matching each of its ignore globs against each folder's whole parent: the
time grows with the square of the folders. ``course_grading.submission_shape`` counts the
entries first (``course_exchange.inbound.count_entries``, which stops one past the limit)
and refuses a folder with more than ``c.SubmissionShape.max_entries`` (1000).

This script makes submissions of N empty folders for each N of ``--listed`` and times
nbgrader's listing of them, then makes one of ``--folders`` (default 10,000) and times
(1) the count, (2) ``NbGraderAPI.autograde`` of it with the course's config (refused), and
(3) the same of an honest submission (graded in the sandbox), side by side. It asserts
nothing.

    python benchmarks/submission_shape.py
    python benchmarks/submission_shape.py --folders 100000 --listed 1000 2000 4000
    python benchmarks/submission_shape.py --smoke   # 1,001 folders, 100 listed (the suite's)
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "tests" / "sandbox"))


def _folders(where: Path, n: int) -> Path:
    where.mkdir(parents=True)
    for i in range(n):
        (where / f"empty{i:06d}").mkdir()
    return where


def main(argv: list[str] | None = None) -> int:
    """Print the seconds of each step (see the module docstring)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--folders", type=int, default=10_000)
    p.add_argument("--listed", type=int, nargs="*", default=[1000, 2000, 4000],
                   help="folder counts whose nbgrader listing is timed")
    p.add_argument("--smoke", action="store_true",
                   help="1,001 folders (one past the limit), 100 listed: a check that it runs")
    args = p.parse_args(argv)
    if args.smoke:
        args.folders, args.listed = 1001, [100]

    from hostile_quiz import place, right_answers
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.utils import find_all_files

    from course_exchange.inbound import count_entries
    from course_grading.pipeline import copy_course, open_api

    ignore = [*CourseDirectory().ignore, "*.ipynb"]  # what init_assignment passes
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        for n in args.listed:
            folder = _folders(base / f"listed{n}", n)
            start = time.perf_counter()
            find_all_files(str(folder), ignore)
            print(f"nbgrader's listing of {n:>7,} empty folders: "
                  f"{time.perf_counter() - start:7.2f} s")
        course = copy_course(HERE.parent / "quiz", base / "course")
        api = open_api(course)
        assert api.generate_assignment("checkpoint")["success"]
        right = right_answers(course)
        place(course, "folders", right)
        place(course, "honest", right)
        _folders(course / "submitted" / "folders" / "checkpoint" / "more", args.folders - 1)
        start = time.perf_counter()
        count = count_entries(course / "submitted" / "folders" / "checkpoint", 1000)
        print(f"count of a {args.folders:,}-folder submission: "
              f"{time.perf_counter() - start:7.3f} s (stopped at {count} entries)")
        for student in ("folders", "honest"):
            start = time.perf_counter()
            result = api.autograde("checkpoint", student)
            why = next((line.split("Not graded: ", 1)[1].split(" in ", 1)[0]
                        for line in result.get("log", "").splitlines()
                        if "Not graded: " in line), "failed")
            print(f"autograde of {student:<8} {time.perf_counter() - start:7.3f} s "
                  f"({'graded' if result['success'] else why})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
