"""benchmarks/grading_time.py measures a real autograde run (tiny here; the figure: README)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "grading_time.py"


def _module():
    spec = importlib.util.spec_from_file_location("grading_time", PATH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while defining
    spec.loader.exec_module(module)
    return module


def test_arguments_are_checked():
    bench = _module()
    with pytest.raises(ValueError, match="n and repeats must be at least 1"):
        bench.measure(n=0)
    with pytest.raises(ValueError, match="method must be 'cli' or 'api'"):
        bench.measure(n=1, method="fast")


@pytest.mark.slow
def test_measure_grades_for_real(capsys):
    bench = _module()
    m = bench.measure(n=2, repeats=1, method="api", kinds=("correct",))
    assert m.n_submissions == 2 and len(m.per_submission) == 1
    assert 0.2 < m.median < 120  # a kernel per submission: never instant, never minutes
