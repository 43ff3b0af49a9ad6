"""benchmarks/tiled_memory.py prints both comparisons side by side, with measured slopes."""

from __future__ import annotations

import re

from benchmark_scripts import figures, load_benchmark, run_smoke


def test_smoke_mode_prints_every_size_and_the_slopes_of_this_run():
    """``--smoke`` (n = 32, 64, 128, d = 8, blocks of 16, one round), as a reader runs it."""
    out = run_smoke("tiled_memory").stdout
    assert "1. the whole table against tiles (blocks of 16 × 16)" in out
    assert "2. one new token at position n: recompute causal attention" in out
    for n in ("32", "64", "128"):
        rows = re.findall(rf"^ +{n} +(\d+\.?\d*) [KM]?i?B +(\d+\.?\d*) [nmµ]?s +"
                          rf"(\d+\.?\d*) [KM]?i?B +(\d+\.?\d*) [nmµ]?s$", out, re.M)
        assert len(rows) == 2, (n, out)  # one row in each comparison, every cell a number
    slopes = re.findall(r"attention memory (\d\.\d\d).*tiled_attention memory (\d\.\d\d)", out)
    assert len(slopes) == 1
    whole, tiled = (float(s) for s in slopes[0])
    assert whole > 1.5 and tiled < whole  # from this run's numbers, not typed in
    assert figures(r"^   recompute / cache time: 32: (\d+)x, 64: (\d+)x, 128: (\d+)x$", out)


def test_causal_flag_reaches_the_measurement(capsys):
    bench = load_benchmark("tiled_memory")
    bench.main(["--sizes", "32", "64", "--d", "4", "--block", "16", "--repeats", "1",
                "--causal"])
    assert "(blocks of 16 × 16, causal)" in capsys.readouterr().out
