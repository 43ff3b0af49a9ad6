"""benchmarks/grading_time.py measures a real autograde run (tiny here; the figure:
docs/instructors.md)."""

from __future__ import annotations

import pytest
from benchmark_scripts import load_benchmark


def test_arguments_are_checked():
    bench = load_benchmark("grading_time")
    with pytest.raises(ValueError, match="n and repeats must be at least 1"):
        bench.measure(n=0)
    with pytest.raises(ValueError, match="method must be 'cli' or 'api'"):
        bench.measure(n=1, method="fast")


@pytest.mark.slow
def test_measure_grades_for_real(capsys):
    bench = load_benchmark("grading_time")
    m = bench.measure(n=2, repeats=1, method="api", kinds=("correct",))
    assert m.n_submissions == 2 and len(m.per_submission) == 1
    assert 0.2 < m.median < 120  # a kernel per submission: never instant, never minutes
