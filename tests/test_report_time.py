"""benchmarks/report_time.py: the grade table and report timed against a real autograde."""

from __future__ import annotations

import re

import pytest
from benchmark_scripts import figures, load_benchmark, run_smoke


def test_arguments_are_checked(capsys):
    with pytest.raises(SystemExit):
        load_benchmark("report_time").main(["-n", "0"])
    assert "-n and --repeats must be at least 1 (got 0, 5)" in capsys.readouterr().err


@pytest.mark.slow
def test_smoke_mode_prints_medians_and_ratios():
    """``--smoke`` (1 submission, 1 run of each), as a reader runs it: real grading."""
    out = run_smoke("report_time").stdout
    assert out.startswith("class of 1 submissions (NbGraderAPI, one process); medians of 1 runs")
    for label in ("autograde (one run)", "grade table", "class report"):
        seconds, per = figures(rf"{re.escape(label)}:\s+(\d+\.\d\d) s\s+(\d+\.\d{{3}}) s per "
                               "submission", out)
        assert seconds == pytest.approx(per, abs=0.006), out  # one submission (rounded)
    assert len(re.findall(r"\d+\.\d% of autograde", out)) == 2
