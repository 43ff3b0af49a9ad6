"""benchmarks/grading_time.py measures a real autograde run (tiny here; the figure:
docs/instructors.md)."""

from __future__ import annotations

import pytest
from benchmark_scripts import figures, load_benchmark, run_smoke


def test_arguments_are_checked():
    bench = load_benchmark("grading_time")
    with pytest.raises(ValueError, match="n and repeats must be at least 1"):
        bench.measure(n=0)
    with pytest.raises(ValueError, match="method must be 'cli' or 'api'"):
        bench.measure(n=1, method="fast")


@pytest.mark.slow
def test_smoke_mode_grades_one_submission_with_the_command_and_prints_its_figures():
    """``--smoke`` (1 submission, 1 run of ``nbgrader autograde``), as a reader runs it."""
    out = run_smoke("grading_time").stdout
    assert out.startswith("nbgrader autograde (cli), 1 submissions, 1 runs"), out
    median, run = figures(r"^  seconds per submission: median (\d+\.\d\d) \(runs: (\d+\.\d\d)\)$",
                          out)
    assert median == run > 0, out
    assert figures(r"^  slowest / fastest run: (\d+\.\d\d)$", out) == [1.0], out
    assert figures(r"^  whole class of 1: about (\d+) s$", out)
    assert 0.2 < median < 120  # a kernel per submission: never instant, never minutes
