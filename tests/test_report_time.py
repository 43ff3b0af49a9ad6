"""benchmarks/report_time.py: the grade table and report timed against a real autograde."""

from __future__ import annotations

import re

import pytest
from benchmark_scripts import load_benchmark


def test_arguments_are_checked(capsys):
    with pytest.raises(SystemExit):
        load_benchmark("report_time").main(["-n", "0"])
    assert "-n and --repeats must be at least 1 (got 0, 5)" in capsys.readouterr().err


@pytest.mark.slow
def test_prints_medians_and_ratios(capsys):
    assert load_benchmark("report_time").main(["-n", "2", "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("class of 2 submissions (NbGraderAPI, one process); medians of 1 runs")
    for label in ("autograde (one run)", "grade table", "class report"):
        assert re.search(rf"{re.escape(label)}:\s+\d+\.\d\d s\s+\d+\.\d{{3}} s per submission",
                         out), label
    assert len(re.findall(r"\d+\.\d% of autograde", out)) == 2
