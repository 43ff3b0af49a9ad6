"""benchmarks/tiled_memory.py prints both comparisons side by side, with measured slopes."""

from __future__ import annotations

import re

from benchmark_scripts import load_benchmark


def test_prints_every_size_and_the_slopes_of_this_run(capsys):
    bench = load_benchmark("tiled_memory")
    assert bench.main(["--sizes", "32", "64", "128", "--d", "8", "--block", "16",
                       "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    assert "1. the whole table against tiles (blocks of 16 × 16)" in out
    assert "2. one new token at position n: recompute causal attention" in out
    for n in ("32", "64", "128"):
        assert len(re.findall(rf"^\s+{n}\s", out, flags=re.MULTILINE)) == 2
    slopes = re.findall(r"attention memory (\d\.\d\d).*tiled_attention memory (\d\.\d\d)", out)
    assert len(slopes) == 1
    whole, tiled = (float(s) for s in slopes[0])
    assert whole > 1.5 and tiled < whole  # from this run's numbers, not typed in
    assert "recompute / cache time: 32:" in out


def test_causal_flag_reaches_the_measurement(capsys):
    bench = load_benchmark("tiled_memory")
    bench.main(["--sizes", "32", "64", "--d", "4", "--block", "16", "--repeats", "1",
                "--causal"])
    assert "(blocks of 16 × 16, causal)" in capsys.readouterr().out
