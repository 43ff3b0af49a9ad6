"""course_lib.experiments.memory_cost: memory slopes from a real measurement, timing rules.

Memory from tracemalloc does not depend on the machine's load, so the slopes can be held
near 2 and 1; nothing here asserts a speed.
"""

from __future__ import annotations

import itertools
import tracemalloc

import numpy as np
import pytest

from course_lib import AttentionInputError
from course_lib.experiments.memory_cost import (
    CostComparison,
    comparison_figure,
    fastest_seconds,
    measure_kv_cache_cost,
    measure_tiled_cost,
    peak_bytes,
)

SMALL = (256, 512, 1024)


def test_tiled_memory_slopes_are_near_two_and_one():
    c = measure_tiled_cost(SMALL, d=32, block=16, repeats=1, min_sample_seconds=0.0)
    whole, tiled = c.memory_slopes()
    assert abs(whole - 2) < 0.15, c.table()
    assert abs(tiled - 1) < 0.15, c.table()
    for n, table_peak, tile_peak in zip(c.sizes, *c.peak_bytes, strict=True):
        assert table_peak >= 8 * n * n > tile_peak  # the table, and never the table


def test_kv_cache_memory_slopes_are_near_two_and_one():
    c = measure_kv_cache_cost(SMALL, d=32, repeats=1, min_sample_seconds=0.0)
    recompute, cached = c.memory_slopes()
    assert abs(recompute - 2) < 0.15, c.table()
    assert abs(cached - 1) < 0.15, c.table()
    assert c.names == ("recompute", "KV cache")


def test_causal_measurement_runs_both_with_the_mask():
    c = measure_tiled_cost((64, 128), d=8, block=16, causal=True, repeats=1,
                           min_sample_seconds=0.0)
    assert "causal" in c.note and all(s > 0 for s in c.seconds[0] + c.seconds[1])


def test_peak_bytes_counts_what_the_call_allocates_and_leaves_tracing_as_it_was():
    if tracemalloc.is_tracing():
        pytest.skip("tracemalloc is already tracing in this process")
    assert 8e6 <= peak_bytes(lambda: np.ones(10**6)) < 8.1e6
    assert not tracemalloc.is_tracing()
    tracemalloc.start()
    try:
        keep = np.ones(10**6)  # allocated before: not counted
        assert peak_bytes(lambda: keep + 1) < 8.1e6
        assert tracemalloc.is_tracing()
    finally:
        tracemalloc.stop()


def test_fastest_seconds_repeats_quick_calls_and_keeps_the_fastest():
    """A fake clock that moves 1 ms per reading: each call costs 1 ms of readings."""
    ticks = itertools.count()
    calls = {"a": 0, "b": 0}

    def timer():
        return next(ticks) * 1e-3

    def call(name):
        def run():
            calls[name] += 1
            timer()  # the call itself takes one tick
        return run

    t = fastest_seconds({"a": call("a"), "b": call("b")}, repeats=3, min_sample_seconds=4e-3,
                        timer=timer)
    assert set(t) == {"a", "b"}
    assert all(0 < s <= 2e-3 for s in t.values())
    assert calls["a"] > 3 and calls["b"] > 3  # quick calls repeated within a sample


def test_fastest_seconds_keeps_the_least_disturbed_sample():
    """A busy moment (one slow sample of three) does not move the result: the fastest is kept,
    where a median of two slow samples out of three would have been slow."""
    durations = iter([0.0, 0.5, 0.0, 0.5, 0.0, 0.001])  # (start, end) readings per sample
    clock = [0.0]

    def timer():
        clock[0] += next(durations, 0.0)
        return clock[0]

    t = fastest_seconds({"a": lambda: None}, repeats=3, min_sample_seconds=0.0, timer=timer)
    assert t["a"] == pytest.approx(0.001)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: measure_tiled_cost((64,)), "sizes must be at least 2 positive integers"),
        (lambda: measure_tiled_cost((128, 64)), "sizes must be increasing"),
        (lambda: measure_tiled_cost((32, 64), d=0), "d must be a positive integer"),
        (lambda: measure_tiled_cost((32, 64), block=0), "block must be a positive integer"),
        (lambda: measure_kv_cache_cost((32, 64), repeats=0), "repeats must be a positive"),
        (lambda: fastest_seconds({"a": int}, min_sample_seconds=-1), "min_sample_seconds"),
    ],
)
def test_bad_settings_get_clear_errors(call, message):
    with pytest.raises(AttentionInputError, match=message):
        call()


def test_slopes_can_be_fitted_on_the_larger_sizes():
    c = CostComparison(("a", "b"), (1, 2, 4), 8, ((100, 400, 1600), (10, 2000, 4000)),
                       ((1.0, 1.0, 1.0), (1.0, 1.0, 1.0)), 1)
    assert c.memory_slopes()[0] == pytest.approx(2.0)
    assert c.memory_slopes(min_n=2)[1] == pytest.approx(1.0)
    assert c.memory_slopes(min_n=100)[1] == pytest.approx(1.0)  # too few: the last two
    assert "slopes (log-log): a memory 2.00" in c.table()


def test_the_figure_describes_its_own_numbers():
    c = CostComparison(("recompute", "KV cache"), (256, 512, 1024), 64,
                       ((655360, 2621440, 10485760), (17920, 34304, 67072)),
                       ((1e-3, 4e-3, 1.6e-2), (3e-5, 6e-5, 1.2e-4)), 3)
    fig = comparison_figure(c)
    assert fig.description == (
        "Two log-log plots against the number of tokens n = 256, 512, 1024 (d = 64). Left, "
        "peak memory of one call: recompute 640 KiB, 2.5 MiB, 10 MiB (slope 2.00); KV cache "
        "17.5 KiB, 33.5 KiB, 65.5 KiB (slope 0.95). Right, fastest time of one call: "
        "recompute 1 ms, 4 ms, 16 ms (slope 2.00); KV cache 30 µs, 60 µs, 120 µs (slope 1.00).")
    assert fig.caption.startswith("Peak memory grows with slope 2.00 for recompute and 0.95")
    axes = fig.figure.axes
    assert [(ax.get_xscale(), ax.get_yscale()) for ax in axes] == [("log", "log")] * 2
    labels = [t.get_text() for t in axes[0].get_legend().get_texts()]
    assert labels == ["recompute, slope 2.00", "KV cache, slope 0.95"]
    with pytest.raises(AttentionInputError, match="c must be a CostComparison"):
        comparison_figure({"sizes": (1, 2)})
