r"""Cost: the n × n table of attention, measured on this machine.

Lesson 10 ("Order and cost"). For ``n`` tokens, :func:`course_lib.attention` builds one
``(n, n)`` table of float64 weights: :math:`8 n^2` bytes, and about :math:`2 n^2 d` multiply-adds
for :math:`QK^T` and the same again for the blend with ``V``. Both grow like :math:`n^2`:
doubling the sentence makes the table four times as large. On log-log axes a power law
:math:`y = c\, n^p` is a straight line of slope :math:`p`, so :func:`loglog_slope` reads
the exponent off the measurements.

Time is measured, not assumed: :func:`measure_attention` runs the library's own
``attention`` on random ``Q``, ``K``, ``V`` for each ``n`` and keeps the *fastest* run of
each size: other programs, and numpy's threads waiting for a free core, can only add time
to a run, never take it away, so the fastest is the run a busy machine disturbed least.
Timings still differ from machine to machine (a browser's Pyodide is several times slower
than native numpy), so the measurement runs within a time budget: every size once, then
more rounds while the budget lasts. The slope is a claim about a shape, and is stated as a
range (:data:`QUADRATIC_SLOPES`): the n² arithmetic makes it about 2; where the table
outgrows the processor's caches each entry costs more, and a busy machine can move it
either way. The table's bytes are read from the returned
weights array (``weights.nbytes``) and are the same everywhere: exactly :math:`8 n^2`.

``benchmarks/attention_speed.py`` shows that the library adds little to the bare numpy
expression, so these times are the arithmetic's, not the checks'.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ..attention import attention
from ..errors import AttentionInputError
from ..explore.plots import DescribedFigure, _figure
from ..explore.style import BLUE, ORANGE

__all__ = [
    "QUADRATIC_SLOPES",
    "SIZES",
    "CostMeasurement",
    "cost_figure",
    "format_bytes",
    "loglog_slope",
    "measure_attention",
    "table_bytes",
]

#: The sentence lengths the lesson measures: 64 … 2048 tokens, doubling.
SIZES = (64, 128, 256, 512, 1024, 2048)
#: The time slopes (fastest runs, n >= 256) that the lesson and the figure call "about n²".
QUADRATIC_SLOPES = (1.5, 3.0)


def table_bytes(n_q: int, n_k: int | None = None, itemsize: int = 8) -> int:
    """Bytes of an ``(n_q, n_k)`` table of ``itemsize``-byte numbers (float64: 8).

    Parameters
    ----------
    n_q : int
        Number of queries (rows).
    n_k : int, optional
        Number of keys (columns); default ``n_q`` (self-attention).
    itemsize : int, default 8

    Returns
    -------
    int

    Raises
    ------
    AttentionInputError
        If a size is not a positive integer.

    Examples
    --------
    >>> table_bytes(1024)
    8388608
    >>> table_bytes(2, 3)
    48
    """
    n_k = n_q if n_k is None else n_k
    for name, value in (("n_q", n_q), ("n_k", n_k), ("itemsize", itemsize)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
            raise AttentionInputError(f"{name} must be a positive integer (got {value!r})")
    return int(n_q) * int(n_k) * int(itemsize)


def loglog_slope(x: ArrayLike, y: ArrayLike) -> float:
    r"""The least-squares slope of :math:`\log y` against :math:`\log x`: the exponent ``p``.

    If :math:`y = c\,x^p` exactly, the slope is exactly ``p`` (up to rounding).

    Parameters
    ----------
    x, y : array_like, shape (m,)
        At least two positive numbers each, ``x`` not all equal.

    Returns
    -------
    float

    Raises
    ------
    AttentionInputError
        If the lengths differ, there are fewer than 2 points, a value is not positive, or
        all ``x`` are equal.

    Examples
    --------
    >>> round(loglog_slope([64, 128, 256], [8 * 64**2, 8 * 128**2, 8 * 256**2]), 6)
    2.0
    """
    xs = np.asarray(x, dtype=np.float64)
    ys = np.asarray(y, dtype=np.float64)
    if xs.ndim != 1 or xs.shape != ys.shape or xs.size < 2:
        raise AttentionInputError(
            f"x and y must be two rows of the same length, at least 2 points (got shapes "
            f"{xs.shape} and {ys.shape})"
        )
    if not (np.isfinite(xs).all() and np.isfinite(ys).all() and (xs > 0).all()
            and (ys > 0).all()):
        raise AttentionInputError(
            f"x and y must be positive finite numbers to take logarithms (got x = "
            f"{xs.tolist()}, y = {ys.tolist()})"
        )
    lx, ly = np.log(xs), np.log(ys)
    if np.ptp(lx) == 0:
        raise AttentionInputError(f"x must not be all equal (got {xs.tolist()})")
    return float(np.polyfit(lx, ly, 1)[0])


def format_bytes(b: float) -> str:
    """Bytes in binary units: ``'32 KiB'``, ``'8 MiB'``, three significant digits.

    Examples
    --------
    >>> format_bytes(32768), format_bytes(8 * 1024**2), format_bytes(100)
    ('32 KiB', '8 MiB', '100 B')
    """
    for unit, size in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if b >= size:
            return f"{b / size:.3g} {unit}"
    return f"{b:.3g} B"


def _format_seconds(s: float) -> str:
    if s >= 1:
        return f"{s:.3g} s"
    if s >= 1e-3:
        return f"{s * 1e3:.3g} ms"
    return f"{s * 1e6:.3g} µs"


@dataclass(frozen=True)
class CostMeasurement:
    """Times and table sizes of :func:`course_lib.attention`, one entry per ``n``.

    Attributes
    ----------
    sizes : tuple of int
        The sentence lengths ``n`` (queries = keys = ``n``), increasing.
    d : int
        The length of each query, key and value vector.
    seconds : tuple of float
        The fastest wall-clock time of one ``attention(Q, K, V)`` call, per size.
    repeats : tuple of int
        How many timed samples each fastest time is taken from.
    table_bytes : tuple of int
        ``weights.nbytes`` of the returned ``(n, n)`` weights, per size.
    """

    sizes: tuple[int, ...]
    d: int
    seconds: tuple[float, ...]
    repeats: tuple[int, ...]
    table_bytes: tuple[int, ...]

    def memory_slope(self) -> float:
        """The log-log slope of the table's bytes against ``n`` (2 for an n × n table)."""
        return loglog_slope(self.sizes, self.table_bytes)

    def time_slope(self, min_n: int = 256) -> float:
        """The log-log slope of the time against ``n``, fitted on ``n >= min_n``.

        Small tables are dominated by fixed costs (a Python call, the input checks), so
        the slope is fitted where the n² arithmetic dominates. Falls back to the largest
        two sizes if fewer than two are ``>= min_n``.
        """
        keep = [i for i, n in enumerate(self.sizes) if n >= min_n]
        if len(keep) < 2:
            keep = list(range(len(self.sizes)))[-2:]
        return loglog_slope([self.sizes[i] for i in keep], [self.seconds[i] for i in keep])

    def table(self) -> str:
        """A text table: n, the fastest time, the samples, the table's bytes.

        Examples
        --------
        >>> m = CostMeasurement((64, 128), 64, (1e-4, 4e-4), (5, 3), (32768, 131072))
        >>> print(m.table())
             n  fastest time  runs  weights table
            64        100 µs     5         32 KiB
           128        400 µs     3        128 KiB
        """
        lines = [f"{'n':>6}  {'fastest time':>12}  {'runs':>4}  {'weights table':>13}"]
        for n, s, r, b in zip(self.sizes, self.seconds, self.repeats, self.table_bytes,
                              strict=True):
            lines.append(f"{n:>6}  {_format_seconds(s):>12}  {r:>4}  {format_bytes(b):>13}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()


def _check_sizes(sizes: Sequence[int]) -> tuple[int, ...]:
    try:
        ns = tuple(sizes)
    except TypeError:
        raise AttentionInputError(
            f"sizes must be a sequence of token counts (got {type(sizes).__name__})"
        ) from None
    if len(ns) < 2 or any(isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1
                          for n in ns):
        raise AttentionInputError(
            f"sizes must be at least 2 positive integers (got {list(ns)})"
        )
    if any(b <= a for a, b in itertools.pairwise(ns)):
        raise AttentionInputError(f"sizes must be increasing (got {list(ns)})")
    return tuple(int(n) for n in ns)


def measure_attention(
    sizes: Sequence[int] = SIZES,
    d: int = 64,
    *,
    budget_seconds: float = 1.5,
    max_repeats: int = 7,
    min_sample_seconds: float = 2e-3,
    warmup_seconds: float = 0.2,
    seed: int = 0,
    timer: Callable[[], float] = time.perf_counter,
) -> CostMeasurement:
    """Time :func:`course_lib.attention` for ``n`` tokens of dimension ``d``, per ``n``.

    For each ``n``, random ``Q``, ``K``, ``V`` of shape ``(n, d)`` are drawn from
    ``numpy.random.default_rng(seed)``. After an untimed warm-up, one *sample* calls
    ``attention(Q, K, V)`` enough times in a row to last at least ``min_sample_seconds``
    (so a coarse browser clock still measures the smallest sizes) and divides. Every size
    gets one sample; then further rounds over all sizes run while the time spent is under
    ``budget_seconds`` and the largest size has fewer than ``max_repeats`` samples; in each,
    a size whose sample took a fraction of the slowest one's is sampled up to 5 times. The
    result holds each size's fastest sample: load only ever adds time, so the fastest is
    the least disturbed.

    Parameters
    ----------
    sizes : sequence of int, default :data:`SIZES`
        Increasing sentence lengths, at least two.
    d : int, default 64
        Length of each query, key and value vector.
    budget_seconds : float, default 1.5
        Time to spend after the first round (which always runs).
    max_repeats : int, default 7
        The most samples of the largest size (a quicker size may get up to 5 times as many).
    min_sample_seconds : float, default 0.002
        The shortest sample; quick calls are repeated within a sample to reach it.
    warmup_seconds : float, default 0.2
        Untimed calls on the middle size first, for at least this long (at least one
        call), so that first-call costs do not land on the smallest sizes.
    seed : int, default 0
    timer : callable, default :func:`time.perf_counter`
        Returns seconds as a float.

    Returns
    -------
    CostMeasurement

    Raises
    ------
    AttentionInputError
        For sizes that are not increasing positive integers, or a bad ``d``, budget or
        repeat count.

    Examples
    --------
    >>> m = measure_attention([16, 32], d=8, budget_seconds=0.0)
    >>> m.table_bytes, m.repeats
    ((2048, 8192), (1, 1))
    >>> all(s > 0 for s in m.seconds)
    True
    """
    ns = _check_sizes(sizes)
    if isinstance(d, bool) or not isinstance(d, int | np.integer) or d < 1:
        raise AttentionInputError(f"d must be a positive integer (got {d!r})")
    if isinstance(max_repeats, bool) or not isinstance(max_repeats, int) or max_repeats < 1:
        raise AttentionInputError(f"max_repeats must be a positive integer (got {max_repeats!r})")
    for name, value in (("budget_seconds", budget_seconds),
                        ("min_sample_seconds", min_sample_seconds),
                        ("warmup_seconds", warmup_seconds)):
        if not (isinstance(value, int | float) and math.isfinite(value) and value >= 0):
            raise AttentionInputError(f"{name} must be a number >= 0 (got {value!r})")
    rng = np.random.default_rng(seed)
    inputs = [tuple(rng.standard_normal((n, int(d))) for _ in range(3)) for n in ns]
    calls = [1] * len(ns)
    samples: list[list[float]] = [[] for _ in ns]
    nbytes = [0] * len(ns)

    def sample(i: int) -> None:
        q, k, v = inputs[i]
        while True:
            start = timer()
            for _ in range(calls[i]):
                _, w = attention(q, k, v)
            elapsed = timer() - start
            if elapsed >= min_sample_seconds and elapsed > 0:
                break
            if calls[i] >= 1 << 16:  # a clock that does not move: keep what we have
                elapsed = max(elapsed, 1e-12 * calls[i])
                break
            calls[i] *= 2
        nbytes[i] = int(w.nbytes)
        samples[i].append(elapsed / calls[i])

    # warm-up, not timed: the first calls pay for things a later call does not (memory
    # pages touched for the first time; in a browser, WebAssembly compiled to faster code
    # only once it runs hot), and would make the first, small sizes look slow
    q, k, v = inputs[len(ns) // 2]
    warm_start = timer()
    while True:
        attention(q, k, v)
        if timer() - warm_start >= warmup_seconds:
            break
    started = timer()
    for i in range(len(ns)):
        sample(i)
    first_round = timer() - started
    # a quick size gets up to 5 samples a round, as many as fit in the slowest one's time:
    # its fastest run then comes from more tries, for a fraction of the budget
    slowest = max(s[0] for s in samples)
    per_round = [max(1, min(5, int(slowest / max(s[0], 1e-12)))) for s in samples]
    spent = 0.0
    while len(samples[-1]) < max_repeats and spent + first_round <= budget_seconds:
        t0 = timer()
        for i in range(len(ns)):
            # the largest size stops at max_repeats even when noise made a smaller size the
            # slowest of the first round and so gave the largest several samples a round
            times = per_round[i]
            if i == len(ns) - 1:
                times = min(times, max_repeats - len(samples[i]))
            for _ in range(times):
                sample(i)
        spent += timer() - t0
    return CostMeasurement(
        sizes=ns,
        d=int(d),
        seconds=tuple(float(min(s)) for s in samples),
        repeats=tuple(len(s) for s in samples),
        table_bytes=tuple(nbytes),
    )


def _fit_line(xs: Sequence[float], ys: Sequence[float], slope: float) -> list[float]:
    """The power law of this slope through the geometric centre of the points."""
    lx, ly = np.log(np.asarray(xs, float)), np.log(np.asarray(ys, float))
    c = ly.mean() - slope * lx.mean()
    return list(np.exp(c + slope * lx))


def cost_figure(m: CostMeasurement, *, min_n: int = 256) -> DescribedFigure:
    """Two log-log plots against ``n``: the time of one call and the weights table's bytes.

    Each panel shows the measured points, the fitted power law (dashed) and its slope in
    the title. The description lists every number of both panels.

    Parameters
    ----------
    m : CostMeasurement
        From :func:`measure_attention`.
    min_n : int, default 256
        The time slope is fitted on ``n >= min_n`` (see :meth:`CostMeasurement.time_slope`).

    Returns
    -------
    DescribedFigure

    Raises
    ------
    AttentionInputError
        If ``m`` is not a :class:`CostMeasurement`.

    Examples
    --------
    >>> m = CostMeasurement((64, 128, 256), 64, (1e-4, 4e-4, 1.6e-3), (3, 3, 3),
    ...                     (32768, 131072, 524288))
    >>> print(cost_figure(m, min_n=64))  # doctest: +NORMALIZE_WHITESPACE
    Two log-log plots against the number of tokens n = 64, 128, 256 (d = 64). Left, the
    fastest time of one attention call: 100 µs, 400 µs, 1.6 ms; fitted slope 2.00 for n >=
    64. Right, the bytes of the n × n weights table: 32 KiB, 128 KiB, 512 KiB; slope 2.00:
    each doubling of n makes the table 4.00 times as large.
    """
    if not isinstance(m, CostMeasurement):
        raise AttentionInputError(
            f"m must be a CostMeasurement from measure_attention() (got {type(m).__name__})"
        )
    t_slope, b_slope = m.time_slope(min_n), m.memory_slope()

    fig = _figure((9.0, 3.2))  # matplotlib only when a figure is drawn
    ax_t, ax_b = fig.subplots(1, 2)
    keep = [i for i, n in enumerate(m.sizes) if n >= min_n] or list(range(len(m.sizes)))
    if len(keep) < 2:
        keep = list(range(len(m.sizes)))[-2:]
    fit_x = [m.sizes[i] for i in keep]
    ax_t.plot(m.sizes, m.seconds, "o", color=BLUE, label="measured")
    ax_t.plot(fit_x, _fit_line(fit_x, [m.seconds[i] for i in keep], t_slope), "--",
              color=BLUE, label=f"fit, slope {t_slope:.2f}")
    ax_t.set_ylabel("seconds per call")
    ax_t.set_title(f"time: slope {t_slope:.2f} (n ≥ {fit_x[0]})", fontsize=11)
    ax_b.plot(m.sizes, m.table_bytes, "s", color=ORANGE, label="weights.nbytes")
    ax_b.plot(m.sizes, _fit_line(m.sizes, m.table_bytes, b_slope), "--", color=ORANGE,
              label=f"fit, slope {b_slope:.2f}")
    ax_b.set_ylabel("bytes")
    ax_b.set_title(f"memory of the n × n table: slope {b_slope:.2f}", fontsize=11)
    for ax in (ax_t, ax_b):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(list(m.sizes), [str(n) for n in m.sizes])
        ax.minorticks_off()
        ax.set_xlabel("tokens n")
        ax.legend(frameon=False, fontsize=9)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
    ratio = 2.0 ** b_slope
    description = (
        f"Two log-log plots against the number of tokens n = "
        f"{', '.join(str(n) for n in m.sizes)} (d = {m.d}). Left, the fastest time of one "
        f"attention call: {', '.join(_format_seconds(s) for s in m.seconds)}; fitted slope "
        f"{t_slope:.2f} for n >= {fit_x[0]}. Right, the bytes of the n × n weights table: "
        f"{', '.join(format_bytes(b) for b in m.table_bytes)}; slope {b_slope:.2f}: each "
        f"doubling of n makes the table {ratio:.2f} times as large."
    )
    low, high = QUADRATIC_SLOPES
    if low <= t_slope <= high:
        caption = (f"Both grow like n²: memory slope {b_slope:.2f} exactly, time slope "
                   f"{t_slope:.2f} at n ≥ {fit_x[0]} on this machine (between {low} and "
                   f"{high}).")
    else:
        caption = (f"Memory grows like n², slope {b_slope:.2f} exactly; the time slope, "
                   f"{t_slope:.2f} at n ≥ {fit_x[0]}, is outside {low} to {high} in this "
                   "run: something other than the n² arithmetic took much of the time (fixed "
                   "costs of a call, other programs, threads waiting for a core). Measure "
                   "again.")
    return DescribedFigure(fig, description, caption)
