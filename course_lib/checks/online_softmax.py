r"""The self-check of the online-softmax exercise: run the student's update step, name the mistake.

The student writes ``step(running_max, running_sum, partial_output, block_scores,
block_values) -> (running_max, running_sum, partial_output)``, the update of
:func:`course_lib.online_softmax.online_softmax_step`. :func:`check_online_softmax_step`
works like the checks of :mod:`course_lib.checks` (it returns a
:class:`~course_lib.checks.CheckResult`, and raises under nbgrader's *Validate*) and
reuses their helpers. It names these mistakes:

==========================  ===============================================================
mistake                     what the step did
==========================  ===============================================================
``sum_not_rescaled``        kept the old running sum as it was when the maximum grew
``output_not_rescaled``     kept the old partial output as it was when the maximum grew
``neither_rescaled``        both of the above
``block_max_not_running``   shifted by the block's own maximum instead of the running one
``correction_inverted``     multiplied by :math:`e^{m' - m}` instead of :math:`e^{m - m'}`
``no_max_shift``            exponentiated the scores without subtracting a maximum
``wrong_order``             returned the three arrays in another order
==========================  ===============================================================

Feedback never prints an expected number (the running sum or output the step should
give): it names the array, the row and what happens in that row, so the student can find
the line without being handed the result.

The probe: 3 queries, a block of 4 keys, values of dimension 2, starting from the state left
by an earlier block of 3 keys. In row 0 the block raises the maximum a lot, in row 1 not at
all, in row 2 a little; so a missing rescale shows in rows 0 and 2 only, and a block
maximum in row 1. Then the step runs over a whole table of 10 keys in blocks of 4, 4, 2
from the start state, and over scores near 1000.

Examples
--------
>>> from course_lib.online_softmax import online_softmax_step
>>> check_online_softmax_step(online_softmax_step)
Well done: your step keeps the running maximum, rescales the sum and the partial output
when it grows, and streams a table of 10 keys in blocks of 4, 4, 2 to softmax · V exactly,
also on scores near 1000.
>>> def forgot_the_sum(m, l, o, s, v):
...     new_m = np.maximum(m, s.max(axis=-1))
...     c = np.exp(m - new_m)
...     p = np.exp(s - new_m[:, None])
...     return new_m, l + p.sum(axis=-1), c[:, None] * o + p @ v
>>> check_online_softmax_step(forgot_the_sum).mistake
'sum_not_rescaled'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..attention import softmax
from ..online_softmax import OnlineSoftmaxState, online_softmax_start, online_softmax_step
from .core import (
    CheckResult,
    _as_array,
    _call,
    _fail,
    _matches,
    _name_of,
    _ok,
    _run,
    _Stop,
)

__all__ = ["check_online_softmax_step"]

FloatArray = NDArray[np.float64]
Step = Callable[[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray], Any]
NAMES = ("running_max", "running_sum", "partial_output")

# an earlier block of 3 keys (row maxima 0.9, 1.6, 0.5) and the block the step takes in
# (row maxima 2.4, 0.8, 1.2): row 0's maximum grows by 1.5, row 1's stays, row 2's grows by
# 0.7. Every score is within 3 of its row's maximum, so no weight is near 0.
_EARLIER_SCORES = np.array([[0.4, -0.3, 0.9], [1.6, 0.2, -0.5], [-0.2, 0.5, 0.1]])
_EARLIER_VALUES = np.array([[1.0, -0.5], [0.0, 2.0], [-1.0, 1.0]])
_BLOCK_SCORES = np.array([[2.4, 0.3, 1.1, -0.6], [0.1, 0.8, -0.9, 0.6], [0.7, -0.4, 1.2, 0.2]])
_BLOCK_VALUES = np.array([[2.0, 0.5], [-1.0, 1.5], [0.5, -2.0], [1.0, 1.0]])
_ROWS = {0: "row 0, where this block raises the maximum a lot",
         1: "row 1, where the maximum does not change",
         2: "row 2, where this block raises the maximum a little"}
# the whole-table probe: 10 keys streamed in blocks of 4, 4, 2 (the last one shorter)
_TABLE = np.array([[0.5, -1.0, 1.3, 0.1, 2.2, -0.4, 0.9, 1.8, -0.2, 0.6],
                   [1.1, 0.3, -0.4, 0.9, -1.2, 0.2, 0.7, -0.8, 1.4, 0.0],
                   [-0.8, 0.6, 0.2, -0.1, 0.4, 1.6, -0.5, 0.3, 0.8, 2.0]])
_TABLE_VALUES = np.round(np.sin(np.arange(20.0)).reshape(10, 2) * 2, 2)
_BLOCKS = ((0, 4), (4, 8), (8, 10))


def _earlier_state() -> OnlineSoftmaxState:
    return online_softmax_step(*online_softmax_start(3, 2), _EARLIER_SCORES, _EARLIER_VALUES)


def _variant(*, rescale_sum: bool = True, rescale_output: bool = True,
             shift: str = "running", inverted: bool = False) -> Callable[..., tuple]:
    """An update step with one mistake (what a student's step would return)."""

    def step(m: FloatArray, total: FloatArray, o: FloatArray, s: FloatArray,
             v: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        block_max = s.max(axis=-1)
        new_m = block_max if shift == "block" else np.maximum(m, block_max)
        c = np.exp(new_m - m) if inverted else np.exp(m - new_m)
        if shift == "none":
            p = np.exp(s)
        elif shift == "block_exp":  # the right new maximum, but p shifted by the block's
            p = np.exp(s - block_max[..., None])
        else:
            p = np.exp(s - new_m[..., None])
        new_total = (c * total if rescale_sum else total) + p.sum(axis=-1)
        new_o = (c[..., None] * o if rescale_output else o) + p @ v
        return new_m, new_total, new_o

    return step


_MISTAKES: tuple[tuple[str, Callable[..., tuple], str], ...] = (
    ("neither_rescaled", _variant(rescale_sum=False, rescale_output=False),
     "when the maximum grew, neither the running sum nor the partial output was rescaled: "
     "both were summed with the old maximum subtracted, so both need a correction for "
     "the new maximum before the block's terms are added."),
    ("sum_not_rescaled", _variant(rescale_sum=False),
     "your partial output is right, but when the maximum grew the running sum was not "
     "rescaled: its old terms were exponentiated against the old maximum, so they need the "
     "same correction as the partial output."),
    ("output_not_rescaled", _variant(rescale_output=False),
     "your running sum is right, but when the maximum grew the partial output was not "
     "rescaled: its old terms were exponentiated against the old maximum, so they need the "
     "same correction as the running sum."),
    ("block_max_not_running", _variant(shift="block"),
     "you kept the block's own maximum as the new running maximum: in row 1 this block's "
     "largest score is below the maximum seen before, and the running maximum is the "
     "largest score of all the keys so far, this block's and the earlier ones'."),
    ("block_max_not_running", _variant(shift="block_exp"),
     "your running maximum is right, but the block's scores were shifted by the block's own "
     "maximum: every term of the sum and the partial output must be shifted by the same "
     "number, the new running maximum, or the rows mix two different scales."),
    ("correction_inverted", _variant(inverted=True),
     "the correction is upside down: when the maximum grows, terms that had the old, "
     "smaller maximum subtracted must shrink, so the correction is a number below 1."),
    ("no_max_shift", _variant(shift="none"),
     "the block's scores were exponentiated without subtracting the running maximum, so "
     "they are on a different scale from the running sum (and overflow on large scores)."),
)


def _three_arrays(value: Any, what: str) -> tuple[FloatArray, FloatArray, FloatArray]:
    if value is None:
        raise _Stop(_fail("returned_none", f"`{what}` returned None: did you forget `return`?"))
    if not isinstance(value, tuple | list) or len(value) != 3:
        length = f" of length {len(value)}" if isinstance(value, tuple | list) else ""
        raise _Stop(_fail("wrong_type", f"`{what}` should return three arrays: the new "
                          "running maximum, running sum and partial output, in that order "
                          f"(got {type(value).__name__}{length})."))
    shapes = ((3,), (3,), (3, 2))
    arrays = tuple(_as_array(a, f"{what}(...)'s {name}", shape)
                   for a, name, shape in zip(value, NAMES, shapes, strict=True))
    return arrays  # type: ignore[return-value]


def _same(got: tuple[FloatArray, ...], want: tuple[Any, ...]) -> bool:
    return all(_matches(g, np.asarray(w, dtype=float)) for g, w in zip(got, want, strict=True))


def _judge_probe(got: tuple[FloatArray, FloatArray, FloatArray], what: str) -> None:
    """Raise a verdict unless ``got`` is the right new state for the first probe."""
    state = _earlier_state()
    args = (*state, _BLOCK_SCORES, _BLOCK_VALUES)
    want = online_softmax_step(*args)
    if _same(got, want):
        return
    if sorted(g.shape for g in got) == sorted(w.shape for w in want) and any(
            _same(tuple(got[i] for i in order), want)
            for order in ((1, 0, 2), (0, 2, 1), (2, 0, 1), (2, 1, 0), (1, 2, 0))):
        raise _Stop(_fail("wrong_order", f"`{what}` computes the right three arrays but "
                          "returns them in another order: return the running maximum, the "
                          "running sum, then the partial output."))
    for code, mistake, sentence in _MISTAKES:
        with np.errstate(all="ignore"):  # our own variants, on the fixed probe
            wrong_state = mistake(*args)
        if _same(got, wrong_state):
            raise _Stop(_fail(code, sentence))
    for g, w, name in zip(got, want, NAMES, strict=True):
        if g.shape != w.shape:
            raise _Stop(_fail("wrong_shape", f"your new {name} has shape {g.shape} but should "
                              f"have {w.shape}: one entry per query"
                              f"{', per value entry' if w.ndim == 2 else ''} (3 queries, a "
                              "block of 4 keys, values of dimension 2)."))
        if not np.isfinite(g).all():
            raise _Stop(_fail("not_finite", f"your new {name} holds NaN or infinity on "
                              "ordinary scores (none above 3)."))
        close = np.isclose(g, w, rtol=1e-6, atol=1e-6)
        if not close.all():
            row = int(np.argwhere(~close)[0][0])
            raise _Stop(_fail("wrong_values", f"your new {name} is off in {_ROWS[row]}; "
                              "compare your update with the lesson's, one quantity at a "
                              "time."))


def _stream(fn: Step, scores: FloatArray, values: FloatArray, what: str) -> FloatArray:
    """Run the student's step over the blocks of a whole table; return output / sum."""
    state: tuple[Any, ...] = tuple(online_softmax_start(scores.shape[0], values.shape[1]))
    for start, stop in _BLOCKS:
        args = [("running_max", state[0]), ("running_sum", state[1]),
                ("partial_output", state[2]), ("block_scores", scores[:, start:stop]),
                ("block_values", values[start:stop])]
        state = _three_arrays(_call(fn, args, what), what)
        if not all(np.isfinite(a).all() for a in state):
            raise _Stop(_fail("not_finite", f"`{what}` gave NaN or infinity while streaming "
                              f"keys {start} to {stop - 1} of a table whose largest score is "
                              f"near {round(float(scores.max()))}: does every exponent have "
                              "a maximum subtracted first?"))
    return np.asarray(state[2]) / np.asarray(state[1])[:, None]


def check_online_softmax_step(fn: Step) -> CheckResult:
    """Check a student's online-softmax update step.

    ``fn(running_max, running_sum, partial_output, block_scores, block_values)`` must return
    the new ``(running_max, running_sum, partial_output)`` (shapes ``(n_q,)``, ``(n_q,)``,
    ``(n_q, d_v)``), as :func:`course_lib.online_softmax.online_softmax_step` does.

    Parameters
    ----------
    fn : callable
        The student's step.

    Returns
    -------
    CheckResult
        Passed, or the mistake (see the table of this module) in one sentence.

    Examples
    --------
    >>> def block_max(m, l, o, s, v):
    ...     b = s.max(axis=-1)
    ...     c = np.exp(m - b)
    ...     p = np.exp(s - b[:, None])
    ...     return b, c * l + p.sum(axis=-1), c[:, None] * o + p @ v
    >>> check_online_softmax_step(block_max).mistake
    'block_max_not_running'
    """
    what = _name_of(fn, "online_softmax_step")

    def body() -> CheckResult:
        state = _earlier_state()
        args = [("running_max", state.running_max), ("running_sum", state.running_sum),
                ("partial_output", state.partial_output), ("block_scores", _BLOCK_SCORES),
                ("block_values", _BLOCK_VALUES)]
        _judge_probe(_three_arrays(_call(fn, args, what), what), what)
        for scores, note in ((_TABLE, ""), (_TABLE + 1000.0, " scores near 1000")):
            got = _stream(fn, scores, _TABLE_VALUES, what)
            if not _matches(got, softmax(scores) @ _TABLE_VALUES):
                row = int(np.argwhere(~np.isclose(
                    got, softmax(scores) @ _TABLE_VALUES, rtol=1e-6, atol=1e-6))[0][0])
                return _fail("wrong_values", f"your step is right on one block, but streaming "
                             f"a table of 10 keys{note} in blocks of 4, 4, 2 from the start "
                             f"state (maximum -inf, sum 0) gives a wrong output in row {row}: "
                             "does the first block, or the last, shorter one, need care?")
        return _ok("your step keeps the running maximum, rescales the sum and the partial "
                   "output when it grows, and streams a table of 10 keys in blocks of 4, 4, "
                   "2 to softmax · V exactly, also on scores near 1000.")

    return _run(body)
