"""benchmarks/tiny_gpt_training.py: one line per seed, from this run's numbers."""

from __future__ import annotations

import re

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
