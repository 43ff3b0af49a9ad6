"""benchmarks/tiny_gpt_training.py: one line per seed, from this run's numbers."""

from __future__ import annotations

import re

import pytest
from benchmark_scripts import load_benchmark


def test_prints_a_line_per_seed_with_its_times_and_removals(capsys):
    bench = load_benchmark("tiny_gpt_training")
    assert bench.main(["--seeds", "3", "4", "--steps", "6", "--sequences", "40"]) == 0
    out = capsys.readouterr().out
    assert "6 steps per seed; held-out: 40 sequences" in out
    rows = re.findall(r"^\s+(\d)\s+(\d+\.\d)\s+(\d+\.\d)\s+(\d+\.\d)%\s+0\.0:(\w{4})", out,
                      flags=re.MULTILINE)
    assert [r[0] for r in rows] == ["3", "4"], out
    assert all(float(cpu) > 0 for _, cpu, _, _, _ in rows)
    assert "load average" in out


def test_smoke_mode_trains_one_seed_a_few_steps_and_prints_its_figures(capsys):
    bench = load_benchmark("tiny_gpt_training")
    assert bench.main(["--smoke"]) == 0
    out = capsys.readouterr().out
    assert (f"{bench.SMOKE_STEPS} steps per seed; held-out: {bench.SMOKE_SEQUENCES} "
            "sequences") in out, out
    [row] = re.findall(r"^\s+0\s+(\d+\.\d)\s+(\d+\.\d)\s+(\d+\.\d)%\s+0\.0:\w{4}", out,
                       flags=re.MULTILINE)
    assert float(row[0]) > 0 and 0 <= float(row[2]) <= 100, out
    assert re.search(r"^load average [\d.]+ [\d.]+ [\d.]+ \(\d+ CPUs\)", out, re.M), out


def test_a_step_count_below_one_is_refused_by_name(capsys):
    bench = load_benchmark("tiny_gpt_training")
    with pytest.raises(SystemExit):
        bench.main(["--steps", "0"])
    assert "--steps must be at least 1 (got 0)" in capsys.readouterr().err
