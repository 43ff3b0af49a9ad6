"""benchmarks/class_grading.py: a class graded serially and by the engine (the figures for 200:
docs/instructors.md, "How long grading takes"); here its smoke mode, with real grading."""

from __future__ import annotations

import re

import pytest
from benchmark_scripts import load_benchmark


def test_the_class_has_its_share_of_looping_and_corrupt_submissions():
    kinds = load_benchmark("class_grading").class_kinds(200)
    assert (len(kinds), kinds.count("infinite_loop"), kinds.count("corrupt_json")) == (200, 10, 2)
    assert kinds.count("correct") > 50 and kinds.count("mistake_missing_scale") > 10
    with pytest.raises(ValueError, match=r"n must be at least 1 \(got 0\)"):
        load_benchmark("class_grading").class_kinds(0)


@pytest.mark.slow
def test_smoke_mode_grades_both_ways_and_prints_its_figures(capsys):
    assert load_benchmark("class_grading").main(["--smoke", "--jobs", "1"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^2 made-up submissions of the checkpoint quiz \(0 looping, 1 corrupt, .*"
                     r"load average before [\d.]+ [\d.]+ [\d.]+, after", out, re.M), out
    for runner in (r"nbgrader autograde \(serial\)", r"engine, 1 worker\(s\)"):
        row = re.search(rf"^{runner} +(\d+\.\d) +\d+\.\d\d +(\d+) +(\d+) +1$", out, re.M)
        assert row, (runner, out)
        assert float(row.group(1)) > 0 and int(row.group(2)) > 20 and int(row.group(3)) >= 2
    assert re.search(r"^engine against serial: \d+\.\d\dx as fast, \d+\.\d\dx the peak memory$",
                     out, re.M), out
    assert "same scores from both: True; ungraded by both: s02 (corrupt: s02)" in out
