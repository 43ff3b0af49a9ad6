"""How long does nbgrader take to autograde one checkpoint submission?

Makes a temporary copy of the course directory, releases the quiz, places N submissions
(by default 20: right answers, each single mistake and blank ones, in turn) and runs
``nbgrader autograde checkpoint --force`` over all of them, REPEATS times. Prints the
median seconds per submission (wall time of one run / N) and the spread over the runs.

    python benchmarks/grading_time.py                 # 20 submissions, 3 runs, the CLI
    python benchmarks/grading_time.py --method api    # the same in one process (NbGraderAPI)
    python benchmarks/grading_time.py -n 40 --repeats 5
    python benchmarks/grading_time.py --smoke         # 1 submission, 1 run (the suite's)

Other scripts can call :func:`measure` (it returns the numbers instead of printing them).
The machine's load matters: quote the figure with the machine it ran on.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # runnable as a plain script from anywhere
    sys.path.insert(0, str(ROOT))

from course_grading.pipeline import (  # noqa: E402
    ASSIGNMENT,
    copy_course,
    open_api,
    place_submission,
    tool_path,
)
from course_grading.submissions import make_submission  # noqa: E402
from course_grading.variants import quiz_facts  # noqa: E402

__all__ = ["DEFAULT_KINDS", "Measurement", "measure", "prepare_course"]

#: A class in miniature: what the N submissions cycle through.
DEFAULT_KINDS = (
    "correct",
    "mistake_missing_scale",
    "correct",
    "mistake_wrong_axis",
    "correct",
    "mistake_naive_exp_overflow",
    "correct",
    "mistake_dk_from_wrong_axis",
    "blank",
    "correct",
)


@dataclass(frozen=True)
class Measurement:
    """Seconds per submission, one value per run."""

    method: str
    n_submissions: int
    per_submission: tuple[float, ...]

    @property
    def median(self) -> float:
        """Median over the runs of (wall seconds of one run / number of submissions)."""
        return statistics.median(self.per_submission)

    @property
    def spread(self) -> float:
        """Slowest run / fastest run."""
        return max(self.per_submission) / min(self.per_submission)


def prepare_course(dest: Path, n: int, kinds: Sequence[str] = DEFAULT_KINDS) -> Path:
    """Copy quiz/ to ``dest``, release the quiz and place ``n`` submissions (s01, s02, ...)."""
    course = copy_course(ROOT / "quiz", dest)
    api = open_api(course)
    result = api.generate_assignment(ASSIGNMENT)
    if not result["success"]:
        raise RuntimeError(f"generate_assignment failed:\n{result.get('error')}")
    released = (course / "release" / ASSIGNMENT / "checkpoint.ipynb").read_text()
    variant = quiz_facts(nbformat.read(course / "source" / "checkpoint" / "checkpoint.ipynb", 4))
    for i in range(n):
        kind = kinds[i % len(kinds)]
        place_submission(course, f"s{i + 1:02d}", make_submission(kind, released, variant))
    return course


def _run_cli(course: Path) -> None:
    env = dict(os.environ, PATH=tool_path())
    proc = subprocess.run(
        [sys.executable, "-m", "nbgrader", "autograde", ASSIGNMENT, "--force"],
        cwd=course,
        env=env,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"nbgrader autograde failed:\n{proc.stderr[-3000:]}")


def _run_api(course: Path) -> None:
    result = open_api(course).autograde(ASSIGNMENT, "*")
    if not result["success"]:
        raise RuntimeError(f"autograde failed:\n{result.get('error')}")


def measure(
    n: int = 20, repeats: int = 3, method: str = "cli", kinds: Sequence[str] = DEFAULT_KINDS
) -> Measurement:
    """Autograde ``n`` submissions ``repeats`` times; return seconds per submission.

    Parameters
    ----------
    n : int
        Submissions per run.
    repeats : int
        Runs (each re-grades every submission, ``--force``).
    method : {"cli", "api"}
        ``"cli"`` runs ``nbgrader autograde`` as an instructor types it; ``"api"`` calls
        ``NbGraderAPI.autograde`` in this process.
    kinds : sequence of str
        Submission kinds (see ``course_grading.submissions.KINDS``) to cycle through.
    """
    if n < 1 or repeats < 1:
        raise ValueError(f"n and repeats must be at least 1 (got n={n}, repeats={repeats})")
    runner = {"cli": _run_cli, "api": _run_api}.get(method)
    if runner is None:
        raise ValueError(f"method must be 'cli' or 'api' (got {method!r})")
    with tempfile.TemporaryDirectory(prefix="grading-time-") as tmp:
        course = prepare_course(Path(tmp) / "quiz", n, kinds)
        per_submission = []
        for _ in range(repeats):
            start = time.perf_counter()
            runner(course)
            per_submission.append((time.perf_counter() - start) / n)
    return Measurement(method, n, tuple(per_submission))


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: print the median seconds per submission."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-n", type=int, default=20, help="submissions per run (default 20)")
    parser.add_argument("--repeats", type=int, default=3, help="runs (default 3)")
    parser.add_argument("--method", choices=["cli", "api"], default="cli")
    parser.add_argument("--smoke", action="store_true",
                        help="1 submission, 1 run: a check that it runs (the suite's)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.n, args.repeats = 1, 1
    m = measure(args.n, args.repeats, args.method)
    runs = ", ".join(f"{s:.2f}" for s in m.per_submission)
    print(f"nbgrader autograde ({m.method}), {m.n_submissions} submissions, {args.repeats} runs")
    print(f"  seconds per submission: median {m.median:.2f} (runs: {runs})")
    print(f"  slowest / fastest run: {m.spread:.2f}")
    print(f"  whole class of {m.n_submissions}: about {m.median * m.n_submissions:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
