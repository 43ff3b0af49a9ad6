r"""Peak memory and time without the n × n table, measured: tiles, and the KV cache.

Two comparisons, each against ``n`` and side by side in one run:

* :func:`measure_tiled_cost`: :func:`course_lib.attention` (which returns the whole
  ``(n, n)`` table) against :func:`course_lib.tiled_attention` (one tile at a time). Peak
  memory grows like :math:`n^2` for the first and like :math:`n` for the second; the
  arithmetic is :math:`O(n^2 d)` for both, and in numpy the tiled version is *slower*, since
  each tile is a few Python-level numpy calls. Real kernels (FlashAttention) win on time
  because a GPU's time goes into moving the table through its slow memory, not into the
  arithmetic; numpy on a CPU cannot show that, and this module does not pretend to.
* :func:`measure_kv_cache_cost`: one new token with :class:`course_lib.KVCache` (its query
  against the ``n`` cached keys: :math:`O(n)` memory, :math:`O(n d)` time) against
  recomputing causal attention over all ``n`` tokens (:math:`O(n^2)` and :math:`O(n^2 d)`).

Memory is the peak of what a call allocates, above what was allocated before it, read with
:mod:`tracemalloc` (numpy reports its arrays to it). It leaves out what exists before the
call: ``Q``, ``K`` and ``V`` (``3 · 8nd`` bytes, for both methods), and the KV cache's own
keys and values (``2 · 8nd`` bytes per head and layer, the cache's real price). It counts
the output: the tiled version's peak is :math:`8 n d_v` bytes of output plus a few tiles,
a constant that flattens the slope at small ``n`` (the fit gets closer to 1 as ``n``
grows, or as the blocks shrink). Time is measured with tracemalloc off, in interleaved
rounds (each round calls every method once, so a busy moment lands on all of them alike);
each size keeps its fastest run (load only ever adds time to a run). Slopes come from
:func:`course_lib.experiments.cost.loglog_slope` on these numbers;
:func:`comparison_figure` plots both panels log-log with a description of every number.
``benchmarks/tiled_memory.py`` prints both comparisons.
"""

from __future__ import annotations

import math
import time
import tracemalloc
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..attention import attention, causal_mask
from ..errors import AttentionInputError
from ..explore.plots import DescribedFigure, _figure
from ..explore.style import BLUE, ORANGE
from ..kv_cache import KVCache
from ..tiled import tiled_attention
from .cost import _check_sizes, _fit_line, _format_seconds, format_bytes, loglog_slope

__all__ = [
    "SIZES",
    "CostComparison",
    "comparison_figure",
    "fastest_seconds",
    "measure_kv_cache_cost",
    "measure_tiled_cost",
    "peak_bytes",
]

#: The sentence lengths measured by default: 256 … 2048 tokens, doubling.
SIZES = (256, 512, 1024, 2048)


def peak_bytes(call: Callable[[], object]) -> int:
    """Bytes allocated at the peak of one ``call()``, above what was allocated before it.

    Read with :mod:`tracemalloc`; if it was not tracing, it is started and stopped again.
    What ``call`` returns counts (it is alive at the peak).

    Parameters
    ----------
    call : callable
        Called once, with no arguments.

    Returns
    -------
    int

    Examples
    --------
    >>> peak_bytes(lambda: np.ones((1000, 100))) >= 8 * 1000 * 100
    True
    """
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        result = call()
        peak = tracemalloc.get_traced_memory()[1] - before
        del result
    finally:
        if not was_tracing:
            tracemalloc.stop()
    return max(int(peak), 0)


def fastest_seconds(
    calls: Mapping[str, Callable[[], object]],
    *,
    repeats: int = 5,
    min_sample_seconds: float = 2e-3,
    timer: Callable[[], float] = time.perf_counter,
) -> dict[str, float]:
    """The fastest seconds of one call of each, timed in interleaved rounds.

    Other programs, and numpy's threads waiting for a free core, can only add time to a
    sample, so the fastest sample is the one a busy machine disturbed least.

    Each round calls every function once, in an order that rotates from round to round. A
    sample repeats a quick call until it lasts ``min_sample_seconds`` (so a coarse clock,
    as in a browser, still measures it) and divides. The first call of each is a warm-up,
    not timed.

    Parameters
    ----------
    calls : mapping of str to callable
        The functions to time, by name; each called with no arguments.
    repeats : int, default 5
        Rounds, so samples per function.
    min_sample_seconds : float, default 0.002
    timer : callable, default :func:`time.perf_counter`

    Returns
    -------
    dict of str to float

    Raises
    ------
    AttentionInputError
        If ``repeats`` is not a positive integer or ``min_sample_seconds`` is negative.

    Examples
    --------
    >>> t = fastest_seconds({"sum": lambda: sum(range(100))}, repeats=3)
    >>> list(t), t["sum"] > 0
    (['sum'], True)
    """
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise AttentionInputError(f"repeats must be a positive integer (got {repeats!r})")
    if not (isinstance(min_sample_seconds, int | float) and math.isfinite(min_sample_seconds)
            and min_sample_seconds >= 0):
        raise AttentionInputError(
            f"min_sample_seconds must be a number >= 0 (got {min_sample_seconds!r})")
    names = list(calls)
    per_sample = dict.fromkeys(names, 1)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for name in names:
        calls[name]()  # warm-up
    for r in range(repeats):
        for name in names[r % len(names):] + names[: r % len(names)]:
            while True:
                start = timer()
                for _ in range(per_sample[name]):
                    calls[name]()
                elapsed = timer() - start
                if elapsed >= min_sample_seconds and elapsed > 0:
                    break
                if per_sample[name] >= 1 << 16:  # a clock that does not move
                    elapsed = max(elapsed, 1e-12 * per_sample[name])
                    break
                per_sample[name] *= 2
            samples[name].append(elapsed / per_sample[name])
    return {name: min(s) for name, s in samples.items()}


@dataclass(frozen=True)
class CostComparison:
    """Peak memory and fastest time of two ways to compute the same thing, per ``n``.

    Attributes
    ----------
    names : tuple of str
        The two methods, e.g. ``("attention", "tiled_attention")``.
    sizes : tuple of int
        The numbers of tokens ``n``, increasing.
    d : int
        The length of each query, key and value vector.
    peak_bytes : tuple of (tuple of int)
        For each method, its peak memory per size (:func:`peak_bytes`).
    seconds : tuple of (tuple of float)
        For each method, the fastest seconds of one call per size.
    repeats : int
        Timed samples per size, of which the fastest is kept.
    note : str
        What was measured, in words (block sizes, mask).
    """

    names: tuple[str, str]
    sizes: tuple[int, ...]
    d: int
    peak_bytes: tuple[tuple[int, ...], tuple[int, ...]]
    seconds: tuple[tuple[float, ...], tuple[float, ...]]
    repeats: int
    note: str = ""

    def _fit(self, values: tuple[tuple[float, ...], ...], min_n: int | None
             ) -> tuple[float, float]:
        keep = [i for i, n in enumerate(self.sizes) if min_n is None or n >= min_n]
        if len(keep) < 2:
            keep = list(range(len(self.sizes)))[-2:]
        xs = [self.sizes[i] for i in keep]
        first, second = (loglog_slope(xs, [v[i] for i in keep]) for v in values)
        return first, second

    def memory_slopes(self, min_n: int | None = None) -> tuple[float, float]:
        """Log-log slopes of peak memory against ``n``, one per method (fit on ``n >= min_n``)."""
        return self._fit(self.peak_bytes, min_n)

    def time_slopes(self, min_n: int | None = None) -> tuple[float, float]:
        """Log-log slopes of the fastest time against ``n``, one per method."""
        return self._fit(self.seconds, min_n)

    def table(self) -> str:
        """The numbers side by side, then the slopes fitted on every size.

        Examples
        --------
        >>> c = CostComparison(("attention", "tiled"), (256, 512), 64,
        ...                    ((524288, 2097152), (131072, 262144)),
        ...                    ((1e-3, 4e-3), (2e-3, 4e-3)), 5)
        >>> print(c.table())
             n   attention: peak      time       tiled: peak      time
           256           512 KiB      1 ms           128 KiB      2 ms
           512             2 MiB      4 ms           256 KiB      4 ms
        slopes (log-log): attention memory 2.00, time 2.00; tiled memory 1.00, time 1.00
        """
        a, b = self.names
        head = f"{'n':>6}  {a + ': peak':>16}  {'time':>8}  {b + ': peak':>16}  {'time':>8}"
        lines = [head]
        for i, n in enumerate(self.sizes):
            lines.append(
                f"{n:>6}  {format_bytes(self.peak_bytes[0][i]):>16}  "
                f"{_format_seconds(self.seconds[0][i]):>8}  "
                f"{format_bytes(self.peak_bytes[1][i]):>16}  "
                f"{_format_seconds(self.seconds[1][i]):>8}"
            )
        (ma, mb), (ta, tb) = self.memory_slopes(), self.time_slopes()
        lines.append(f"slopes (log-log): {a} memory {ma:.2f}, time {ta:.2f}; {b} memory "
                     f"{mb:.2f}, time {tb:.2f}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()


def _check_d(d: int) -> int:
    if isinstance(d, bool) or not isinstance(d, int | np.integer) or d < 1:
        raise AttentionInputError(f"d must be a positive integer (got {d!r})")
    return int(d)


def measure_tiled_cost(
    sizes: Sequence[int] = SIZES,
    d: int = 64,
    *,
    block: int = 32,
    causal: bool = False,
    repeats: int = 5,
    min_sample_seconds: float = 2e-3,
    seed: int = 0,
    timer: Callable[[], float] = time.perf_counter,
) -> CostComparison:
    """Peak memory and time of :func:`course_lib.attention` and of tiled attention, per ``n``.

    For each ``n``: random ``Q``, ``K``, ``V`` of shape ``(n, d)``; the peak of one call of
    each (:func:`peak_bytes`); then their fastest times (:func:`fastest_seconds`).

    Parameters
    ----------
    sizes : sequence of int, default :data:`SIZES`
        Increasing numbers of tokens, at least two.
    d : int, default 64
    block : int, default 32
        ``block_q = block_k`` of the tiled version. Smaller blocks leave less constant
        memory beside the output (the slope is nearer 1 at small ``n``) and cost more
        Python calls (more time); with ``d = 64`` and :data:`SIZES`, 32 gives a slope
        near 0.9, 64 near 0.8, 16 near 0.95.
    causal : bool, default False
        Both with the causal mask: ``attention(..., mask=causal_mask(n))`` (the mask made
        before the call, not counted) and ``tiled_attention(..., causal=True)``.
    repeats, min_sample_seconds, timer
        As for :func:`fastest_seconds`.
    seed : int, default 0

    Returns
    -------
    CostComparison
        ``names = ("attention", "tiled_attention")``.

    Raises
    ------
    AttentionInputError
        For bad sizes, ``d``, ``block`` or timing settings.

    Examples
    --------
    >>> c = measure_tiled_cost([64, 128], d=8, block=16, repeats=1)
    >>> c.peak_bytes[0][1] >= 8 * 128 * 128  # attention holds the 128 × 128 table
    True
    >>> c.peak_bytes[1][1] < 8 * 128 * 128   # the tiled version never does
    True
    """
    ns, d = _check_sizes(sizes), _check_d(d)
    if isinstance(block, bool) or not isinstance(block, int | np.integer) or block < 1:
        raise AttentionInputError(f"block must be a positive integer (got {block!r})")
    rng = np.random.default_rng(seed)
    peaks: tuple[list[int], list[int]] = ([], [])
    times: tuple[list[float], list[float]] = ([], [])
    for n in ns:
        Q, K, V = (rng.standard_normal((n, d)) for _ in range(3))
        mask = causal_mask(n) if causal else None

        def whole(Q=Q, K=K, V=V, mask=mask) -> object:
            return attention(Q, K, V, mask=mask)

        def tiled(Q=Q, K=K, V=V) -> object:
            return tiled_attention(Q, K, V, block_q=block, block_k=block, causal=causal)

        peaks[0].append(peak_bytes(whole))
        peaks[1].append(peak_bytes(tiled))
        t = fastest_seconds({"attention": whole, "tiled": tiled}, repeats=repeats,
                           min_sample_seconds=min_sample_seconds, timer=timer)
        times[0].append(t["attention"])
        times[1].append(t["tiled"])
    note = f"blocks of {block} × {block}" + (", causal" if causal else "")
    return CostComparison(("attention", "tiled_attention"), ns, d,
                          (tuple(peaks[0]), tuple(peaks[1])),
                          (tuple(times[0]), tuple(times[1])), repeats, note)


def measure_kv_cache_cost(
    sizes: Sequence[int] = SIZES,
    d: int = 64,
    *,
    repeats: int = 5,
    min_sample_seconds: float = 2e-3,
    seed: int = 0,
    timer: Callable[[], float] = time.perf_counter,
) -> CostComparison:
    """Cost of the output of one new token at position ``n``: recomputing against the cache.

    *Recompute*: causal attention over all ``n`` tokens,
    ``attention(Q, K, V, mask=causal_mask(n))`` (the mask made beforehand, not counted),
    whose last row is the new token's output. *KV cache*: ``cache.attend(q)`` with the
    ``n`` tokens' keys and values cached (appending the new token's key and value copies
    ``d`` numbers into a buffer that doubles when full, so it is not timed). Both give the
    same row (checked).

    Parameters
    ----------
    sizes : sequence of int, default :data:`SIZES`
    d : int, default 64
    repeats, min_sample_seconds, timer
        As for :func:`fastest_seconds`.
    seed : int, default 0

    Returns
    -------
    CostComparison
        ``names = ("recompute", "KV cache")``.

    Raises
    ------
    AttentionInputError
        For bad sizes, ``d`` or timing settings.

    Examples
    --------
    >>> c = measure_kv_cache_cost([64, 128], d=8, repeats=1)
    >>> c.names
    ('recompute', 'KV cache')
    >>> c.peak_bytes[1][1] < 8 * 128 * 128 <= c.peak_bytes[0][1]
    True
    """
    ns, d = _check_sizes(sizes), _check_d(d)
    rng = np.random.default_rng(seed)
    peaks: tuple[list[int], list[int]] = ([], [])
    times: tuple[list[float], list[float]] = ([], [])
    for n in ns:
        Q, K, V = (rng.standard_normal((n, d)) for _ in range(3))
        mask = causal_mask(n)
        cache = KVCache()
        cache.extend(K, V)
        q = Q[-1]

        def recompute(Q=Q, K=K, V=V, mask=mask) -> object:
            return attention(Q, K, V, mask=mask)

        def cached(cache=cache, q=q) -> object:
            return cache.attend(q)

        full = recompute()[0][-1]
        if not np.allclose(cached(), full, rtol=0, atol=1e-12):
            raise AssertionError("the KV cache's row differs from causal attention's")
        peaks[0].append(peak_bytes(recompute))
        peaks[1].append(peak_bytes(cached))
        t = fastest_seconds({"recompute": recompute, "cache": cached}, repeats=repeats,
                           min_sample_seconds=min_sample_seconds, timer=timer)
        times[0].append(t["recompute"])
        times[1].append(t["cache"])
    return CostComparison(("recompute", "KV cache"), ns, d,
                          (tuple(peaks[0]), tuple(peaks[1])),
                          (tuple(times[0]), tuple(times[1])), repeats,
                          "one new token at position n")


def comparison_figure(c: CostComparison) -> DescribedFigure:
    """Two log-log plots against ``n``: peak memory and time, both methods in each.

    Each panel shows the measured points of both methods and their fitted power laws
    (dashed), with the slopes in the legend. The description lists every number.

    Parameters
    ----------
    c : CostComparison
        From :func:`measure_tiled_cost` or :func:`measure_kv_cache_cost`.

    Returns
    -------
    DescribedFigure

    Raises
    ------
    AttentionInputError
        If ``c`` is not a :class:`CostComparison`.

    Examples
    --------
    >>> c = CostComparison(("attention", "tiled"), (256, 512), 64,
    ...                    ((524288, 2097152), (131072, 262144)),
    ...                    ((1e-3, 4e-3), (2e-3, 8e-3)), 5)
    >>> print(comparison_figure(c))  # doctest: +NORMALIZE_WHITESPACE
    Two log-log plots against the number of tokens n = 256, 512 (d = 64). Left, peak
    memory of one call: attention 512 KiB, 2 MiB (slope 2.00); tiled 128 KiB, 256 KiB
    (slope 1.00). Right, fastest time of one call: attention 1 ms, 4 ms (slope 2.00); tiled
    2 ms, 8 ms (slope 2.00).
    """
    if not isinstance(c, CostComparison):
        raise AttentionInputError(
            f"c must be a CostComparison from measure_tiled_cost() or "
            f"measure_kv_cache_cost() (got {type(c).__name__})"
        )
    memory, seconds = c.memory_slopes(), c.time_slopes()
    fig = _figure((9.0, 3.2))  # matplotlib only when a figure is drawn
    ax_m, ax_t = fig.subplots(1, 2)
    for ax, values, slopes, ylabel, title in (
        (ax_m, c.peak_bytes, memory, "bytes at the peak", "peak memory"),
        (ax_t, c.seconds, seconds, "seconds per call", "time"),
    ):
        for name, ys, slope, colour, marker in zip(c.names, values, slopes, (BLUE, ORANGE),
                                                   ("o", "s"), strict=True):
            ax.plot(c.sizes, ys, marker, color=colour, label=f"{name}, slope {slope:.2f}")
            ax.plot(c.sizes, _fit_line(c.sizes, ys, slope), "--", color=colour)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(list(c.sizes), [str(n) for n in c.sizes])
        ax.minorticks_off()
        ax.set_xlabel("tokens n")
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize=11)
        ax.legend(frameon=False, fontsize=9)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)

    def series(values: tuple[tuple[float, ...], ...], slopes: tuple[float, float],
               fmt: Callable[[float], str]) -> str:
        return "; ".join(f"{name} {', '.join(fmt(v) for v in ys)} (slope {slope:.2f})"
                         for name, ys, slope in zip(c.names, values, slopes, strict=True))

    description = (
        f"Two log-log plots against the number of tokens n = "
        f"{', '.join(str(n) for n in c.sizes)} (d = {c.d}). Left, peak memory of one call: "
        f"{series(c.peak_bytes, memory, format_bytes)}. Right, fastest time of one call: "
        f"{series(c.seconds, seconds, _format_seconds)}."
    )
    a, b = c.names
    caption = (f"Peak memory grows with slope {memory[0]:.2f} for {a} and {memory[1]:.2f} "
               f"for {b}; time with slope {seconds[0]:.2f} and {seconds[1]:.2f}.")
    return DescribedFigure(fig, description, caption)
