"""Self-checks for the lesson exercises: run a student's function, name the mistake.

Each ``check_...`` function calls the student's function on inputs picked so that every
likely mistake gives a visibly different answer (no saturated softmax, no square matrix
where a transpose could hide, scores big enough to overflow a naive ``exp``), compares the
result with the trusted reference in :mod:`course_lib.attention`, and returns a
:class:`CheckResult`. Its ``repr`` is one friendly sentence, so a notebook cell that ends
in ``check_softmax(my_softmax)`` shows the verdict (and nbval compares it); ``bool(result)``
says pass or fail, so tests can assert on it.

========================  ==============================================  ===========
check                     the student writes                              lesson
========================  ==============================================  ===========
:func:`check_shapes`      ``attention_shapes(n_q, n_k, d_k, d_v)``        01
:func:`check_scores`      ``scores(Q, K)`` = QK^T                          02
:func:`check_scaled_scores`  ``scaled_scores(Q, K)`` = QK^T / sqrt(d_k)    03
:func:`check_softmax`     ``softmax(x)``, row by row, stable              04
:func:`check_blend`       ``blend(weights, V)``                            05
:func:`check_attention_weights`  ``attention_weights(Q, K)``               06
:func:`check_attention`   ``attend(Q, K, V)`` -> output                    06
:func:`check_sat_output`  the output for 'sat', by hand                   06
:func:`check_masked_attention`  ``masked_attention(Q, K, V, mask)``        07
:func:`check_projections`  ``projections(X, W_Q, W_K, W_V)`` -> Q, K, V    08
:func:`check_batched_scores`  scaled scores of (..., n, d_k) arrays         09
:func:`check_cross_attention`  ``cross_attention(Q, K, V)``, n_q ≠ n_k      10
:func:`check_model_weights`  ``attention_weights(Q, K)``, all heads        11
``check_attention_backward``  ``attention_backward(Q, K, V, dO, mask)``     12
``check_numerical_gradient``  ``numerical_gradient(loss, X, h)``            12
``check_terms_with_the_scale``  which of dQ, dK, dV, dS carry 1/sqrt(d_k)      12
``check_weight_gradient``  ``weight_gradient(X, dQ)`` -> dW_Q                 13
``check_what_went_wrong``  why the unscaled run at d_k 256 learns less        13
========================  ==============================================  ===========

The exercises that are not fill-ins (derive a number by hand, choose between two
implementations, find the bug; issue 30) have their checks in
:mod:`course_lib.reasoning_checks`; this module hands them out too (``checks.check_x``).

Hints lead to the answer without being it: a failed check names the mistake and the shape
or row where it shows, and points at the lesson's idea, but never writes out the line of
code the exercise asks for (a test keeps it so).

nbgrader's Validate button
--------------------------
The lessons' check cells carry nbgrader metadata (a graded test cell each, see
``scripts/run_lessons.py``), so nbgrader's *Validate* (and ``nbgrader validate``) checks a
lesson's exercises. nbgrader runs the notebook with ``NBGRADER_VALIDATING=1``; then a
check that does not pass raises :class:`ExerciseNotDone` with its verdict instead of
returning it, and Validate lists every exercise still to do (and says "Success!" only when
all are done). In a normal run the verdict is returned and *Run All* goes on.

Examples
--------
>>> from course_lib import softmax
>>> check_softmax(softmax)
Well done: your softmax gives positive weights that sum to 1 along each row,
and it stays finite on scores as large as 1000.
>>> def naive(x):
...     e = np.exp(x)
...     return e / e.sum(axis=-1, keepdims=True)
>>> result = check_softmax(naive)
>>> bool(result), result.mistake
(False, 'naive_exp_overflow')
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .attention import attention, attention_weights, blend, scaled_scores, scores, softmax
from .render import feedback_html

__all__ = [
    "CheckResult",
    "ExerciseNotDone",
    "check_attention",
    "check_attention_weights",
    "check_batched_scores",
    "check_blend",
    "check_cross_attention",
    "check_masked_attention",
    "check_model_weights",
    "check_projections",
    "check_sat_output",
    "check_scaled_scores",
    "check_scores",
    "check_shapes",
    "check_softmax",
]

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class CheckResult:
    """The verdict of one self-check.

    Attributes
    ----------
    passed : bool
        True when the student's function matched the reference on every probe.
    message : str
        One friendly sentence: a confirmation, or the mistake that was seen.
    mistake : str or None
        A short code naming the mistake (``"missing_scale"``, ``"softmax_wrong_axis"``,
        ``"not_written"``, ...) or None on success. Tests assert on it.
    """

    passed: bool
    message: str
    mistake: str | None = None

    def __bool__(self) -> bool:
        return self.passed

    def __repr__(self) -> str:
        return self.message

    __str__ = __repr__

    def _repr_html_(self) -> str:
        """The verdict as a paragraph that wraps between words (``text/plain`` stays)."""
        return feedback_html(self.message)


class ExerciseNotDone(AssertionError):
    """A check that did not pass while nbgrader validates the notebook: its verdict.

    In a notebook it shows as one line, the verdict, without a traceback through the
    check's insides (IPython asks an exception for ``_render_traceback_``).
    """

    def _render_traceback_(self) -> list[str]:
        return [f"{type(self).__name__}: {self}"]


# --------------------------------------------------------------------------------------
# helpers (private)
# --------------------------------------------------------------------------------------

_ATOL = 1e-6


def _ok(message: str) -> CheckResult:
    return CheckResult(True, f"Well done: {message}")


def _fail(mistake: str, message: str) -> CheckResult:
    return CheckResult(False, f"Not yet: {message}", mistake)


def _fmt(a: Any) -> str:
    """Short, stable text for an array in a message."""
    arr = np.asarray(a, dtype=float)
    return np.array2string(arr, precision=3, suppress_small=True, separator=", ")


def _shape_text(args: Sequence[tuple[str, Any]]) -> str:
    return ", ".join(f"{name} of shape {np.shape(value)}" for name, value in args)


class _Stop(Exception):
    """Raised inside a check to return a verdict early."""

    def __init__(self, result: CheckResult) -> None:
        super().__init__(result.message)
        self.result = result


def _name_of(fn: Any, default: str) -> str:
    """The student's own name for the function (``my_softmax``), else the lesson's."""
    name = getattr(fn, "__name__", "")
    return name if name.isidentifier() else default


def _call(
    fn: Callable[..., Any],
    args: Sequence[tuple[str, Any]],
    what: str,
    hint: str = "",
    shape_mistake: str = "raised",
) -> Any:
    """Call ``fn`` on copies of the arguments; turn any exception into a verdict."""
    if not callable(fn):
        raise _Stop(
            _fail("not_callable", f"pass the function itself, e.g. `{what}` without "
                  f"brackets (got {type(fn).__name__})."),
        )
    copies = [np.array(v) if isinstance(v, np.ndarray) else v for _, v in args]
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*copies)
    except NotImplementedError:
        raise _Stop(
            _fail("not_written", f"`{what}` is not written yet: replace the `...` and "
                  "delete the `raise NotImplementedError` line, then run this check again.")
        ) from None
    except Exception as exc:  # the student's code may raise anything; we report it
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        shapes_clash = isinstance(exc, ValueError) and any(
            word in detail for word in ("matmul", "shape", "broadcast", "aligned")
        )
        if "matmul" in detail:
            detail = "the shapes in a matrix product do not fit"
        if len(detail) > 120:
            detail = detail[:117] + "..."
        text = f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
        raise _Stop(
            _fail(shape_mistake if shapes_clash else "raised",
                  f"`{what}` raised {text} when called with "
                  f"{_shape_text(args)}.{hint if shapes_clash else ''}")
        ) from None


def _as_array(
    value: Any, what: str, expected_shape: tuple[int, ...], *, accept_pair: bool = False
) -> FloatArray:
    if accept_pair and isinstance(value, tuple) and len(value) == 2:
        value = value[0]  # accept (output, weights) like course_lib.attention returns
    if value is None:
        raise _Stop(
            _fail("returned_none", f"`{what}` returned None: did you forget `return`?")
        )
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise _Stop(
            _fail("not_numbers", f"`{what}` should return an array of numbers of shape "
                  f"{expected_shape} (got {type(value).__name__}).")
        ) from None
    return arr


def _matches(got: FloatArray, want: FloatArray, *, equal_nan: bool = False) -> bool:
    return got.shape == want.shape and bool(
        np.allclose(got, want, rtol=1e-6, atol=_ATOL, equal_nan=equal_nan)
    )


def _try(candidate: Callable[[], Any]) -> FloatArray | None:
    """Compute what a known mistake would give (None if that mistake would raise)."""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return np.asarray(candidate(), dtype=float)
    except Exception:
        return None


def _diagnose(
    got: FloatArray,
    want: FloatArray,
    what: str,
    mistakes: Sequence[tuple[str, Callable[[], Any], str]],
    args: Sequence[tuple[str, Any]],
) -> None:
    """Raise a verdict unless ``got`` equals ``want``; name the first mistake that fits."""
    if _matches(got, want):
        return
    for code, candidate, sentence in mistakes:
        wrong = _try(candidate)
        if wrong is not None and _matches(got, wrong, equal_nan=True):
            raise _Stop(_fail(code, sentence))
    if got.shape != want.shape:
        if got.shape == want.shape[::-1]:
            raise _Stop(
                _fail("transposed_result", f"`{what}` returned shape {got.shape}, the "
                      f"transpose of the expected {want.shape}: rows should be the queries "
                      "and columns the keys.")
            )
        raise _Stop(
            _fail("wrong_shape", f"`{what}` returned shape {got.shape} but should return "
                  f"{want.shape} for {_shape_text(args)}.")
        )
    if not np.isfinite(got).all():
        first = tuple(int(i) for i in np.argwhere(~np.isfinite(got))[0])
        where = f"row {first[0]}" if len(first) > 1 else f"entry {first[0]}"
        raise _Stop(
            _fail("not_finite", f"`{what}` returned NaN or infinity, first in {where}, for "
                  f"{_shape_text(args)}; an overflowing exp or a 0/0 is the usual cause.")
        )
    raise _Stop(_fail("wrong_values", _where_wrong(got, want)))


def _where_wrong(got: FloatArray, want: FloatArray) -> str:
    """Where a right-shaped answer goes wrong: the table, row and column, and how many rows.

    Never the expected numbers: the student's own row is shown, so the hint says where to
    look without handing over the answer (issue 30).
    """
    wrong = ~np.isclose(got, want, rtol=1e-6, atol=_ATOL)
    bad = tuple(int(i) for i in np.argwhere(wrong)[0])
    if len(bad) == 1:
        return (f"the shape is right but entry {bad[0]} ({_fmt(got[bad])}) is not what the "
                "equation gives; compare your steps with the lesson's.")
    table = f"in the table at index {bad[:-2]}, " if len(bad) > 2 else ""
    rows_wrong = int(wrong.any(axis=-1).sum())
    rows_all = int(np.prod(wrong.shape[:-1]))
    return (f"the shape is right but {table}row {bad[-2]} is off from column {bad[-1]}: "
            f"your row is {_fmt(got[bad[:-1]])}, and {rows_wrong} of {rows_all} rows differ "
            "from what the equation gives; compare your steps with the lesson's.")


def _run(body: Callable[[], CheckResult]) -> CheckResult:
    try:
        result = body()
    except _Stop as stop:
        result = stop.result
    if not result and os.environ.get("NBGRADER_VALIDATING"):
        raise ExerciseNotDone(result.message)
    return result


def _naive_softmax(x: FloatArray, axis: int = -1) -> FloatArray:
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)


def _global_max_softmax(x: FloatArray) -> FloatArray:
    e = np.exp(x - x.max())
    return e / e.sum(axis=-1, keepdims=True)


# --------------------------------------------------------------------------------------
# probe inputs: small, unsaturated, with n_q, n_k, d_k (and d_v) all different
# --------------------------------------------------------------------------------------

# n_q = 2 queries, n_k = 4 keys, d_k = 3: sqrt(2), sqrt(3), sqrt(4) all differ, so dividing
# by the wrong axis is visible; Q @ K (no transpose) cannot even be computed.
_Q = np.array([[0.9, -0.4, 0.6], [-0.3, 0.8, 0.5]])
_K = np.array([[0.7, 0.2, -0.5], [-0.6, 0.9, 0.3], [0.4, 0.4, 0.8], [0.1, -0.7, 0.2]])
_V = np.array([[1.0, 0.0, 2.0, -1.0, 0.5], [0.0, 2.0, -1.0, 1.0, 1.5],
               [2.0, 2.0, 0.0, 0.5, -0.5], [-1.0, 1.0, 1.0, 0.0, 2.0]])
# The same directions made long (so the scaled scores reach about 1000 in row 0) next to
# an ordinary short query in row 1: naive exp overflows in row 0, and subtracting the max
# of the whole table (instead of each row's own max) underflows row 1 to 0/0.
_Q_BIG = np.array([[1000.0 * np.sqrt(3.0), 0.0, 0.0], [-0.3, 0.8, 0.5]])
_K_BIG = np.array([[1.0, 0.2, -0.5], [0.999, 0.9, 0.3], [1.0005, 0.4, 0.8], [0.998, -0.7, 0.2]])
# Scores for the softmax check: 3 rows, 4 columns, values in [-1.0, 1.3] (unsaturated).
_X = np.array([[0.5, -1.0, 1.3, 0.1], [1.1, 0.3, -0.4, 0.9], [-0.8, 0.6, 0.2, -0.1]])
_X_BIG = np.array([[1000.0, 999.0, 998.5, 999.5], [-2.0, -1.0, 0.5, 0.0],
                   [5.0, 4.0, 4.5, 3.0]])
# A mask with n_q = 5, n_k = 4 (d_k = 3) where neither the mask nor its negation hides a whole row.
_QM = np.array([[0.9, -0.4, 0.6], [-0.3, 0.8, 0.5], [0.5, 0.5, -0.7], [0.2, -0.6, -0.4],
                [-0.7, 0.1, 0.3]])
_MASK = np.array([[True, False, True, False], [True, True, False, False],
                  [False, True, True, True], [True, True, True, False],
                  [False, False, True, False]])


def _scores_mistakes(Q: FloatArray, K: FloatArray) -> list[tuple[str, Callable[[], Any], str]]:
    return [
        ("scaled_too_early", lambda: scaled_scores(Q, K),
         "you already divided by sqrt(d_k); this step is only QK^T, the scaling comes next."),
        ("transposed_result", lambda: K @ Q.T,
         f"your table is {K.shape[0]} × {Q.shape[0]}: one row per key. Row i should be "
         f"query i against every key, {Q.shape[0]} rows of {K.shape[0]} scores."),
        ("not_transposing_k", lambda: Q.T @ K,
         "you multiplied Q^T by K, which pairs the columns of Q with the columns of K; a "
         "score pairs a row of Q (a query) with a row of K (a key)."),
    ]


def _scale_mistakes(
    Q: FloatArray, K: FloatArray, then: Callable[[FloatArray], FloatArray]
) -> list[tuple[str, Callable[[], Any], str]]:
    s = Q @ K.T
    d_k = Q.shape[-1]
    return [
        ("missing_scale", lambda: then(s),
         "the scores were not divided by sqrt(d_k); without it, long vectors make softmax "
         "saturate (lesson 03)."),
        ("dk_wrong_axis", lambda: then(s / np.sqrt(Q.shape[0])),
         f"you divided by sqrt({Q.shape[0]}), the number of queries, but d_k is the dimension "
         f"of each query vector ({d_k} here)."),
        ("dk_wrong_axis", lambda: then(s / np.sqrt(K.shape[0])),
         f"you divided by sqrt({K.shape[0]}), the number of keys, but d_k is the dimension "
         f"of each key vector ({d_k} here)."),
        ("divided_by_dk", lambda: then(s / d_k),
         f"you divided by d_k = {d_k} itself; the equation divides by its square root."),
        ("multiplied_by_sqrt_dk", lambda: then(s * np.sqrt(d_k)),
         "you multiplied by sqrt(d_k); the equation divides by it."),
    ]


def _softmax_mistakes(x: FloatArray) -> list[tuple[str, Callable[[], Any], str]]:
    return [
        ("softmax_wrong_axis", lambda: _naive_softmax(x, axis=0),
         f"your weights sum to 1 down each column, and row 0 sums to "
         f"{_naive_softmax(x, axis=0)[0].sum():.2f}; every query (a row) spends its own "
         "budget of 1."),
        ("softmax_whole_table", lambda: np.exp(x) / np.exp(x).sum(),
         f"you divided by the sum of the whole table, so all {x.size} weights together sum "
         "to 1; each row should sum to 1 on its own."),
        ("no_exp", lambda: x / x.sum(axis=-1, keepdims=True),
         "you divided the scores by their row sum without exponentiating first; "
         "np.exp makes every weight positive."),
        ("no_normalisation", lambda: np.exp(x),
         "you exponentiated but did not divide by the row sum, so the rows do not sum to 1."),
        ("no_normalisation", lambda: np.exp(x - x.max(axis=-1, keepdims=True)),
         "you subtracted the row max and exponentiated but did not divide by the row sum, "
         "so the rows do not sum to 1."),
    ]


def _overflow_mistakes(x: FloatArray) -> list[tuple[str, Callable[[], Any], str]]:
    return [
        ("naive_exp_overflow", lambda: _naive_softmax(x),
         "row 0 has scores near 1000: np.exp overflows to inf there, and inf/inf gives "
         "NaN. Lesson 04's overflow lab shows a shift that changes no weight and keeps "
         "every exponent small."),
        ("global_max_shift", lambda: _global_max_softmax(x),
         "you shifted by the largest score of the whole table, so row 1, whose scores are "
         "small, underflows to 0/0 = NaN; every row needs a shift of its own."),
    ]


def _overflow_verdict(got: FloatArray, want: FloatArray, what: str, args: Sequence[Any],
                      x: FloatArray) -> None:
    """Second probe: large scores. Name the overflow mistakes, else the generic verdict."""
    if _matches(got, want):
        return
    _diagnose(got, want, what, _overflow_mistakes(x), args)


# --------------------------------------------------------------------------------------
# the checks
# --------------------------------------------------------------------------------------


def check_shapes(attention_shapes: Callable[[int, int, int, int], Any]) -> CheckResult:
    """Check ``attention_shapes(n_q, n_k, d_k, d_v) -> (scores_shape, output_shape)``.

    Lesson 01 asks for the shape of the score table and of the output.

    Examples
    --------
    >>> check_shapes(lambda n_q, n_k, d_k, d_v: ((n_q, n_k), (n_q, d_v)))
    Well done: the score table is n_q × n_k (one row per query)
    and the output is n_q × d_v (one blended value per query).
    """
    what = _name_of(attention_shapes, "attention_shapes")

    def body() -> CheckResult:
        for n_q, n_k, d_k, d_v in [(2, 5, 3, 4), (3, 3, 2, 2), (7, 4, 16, 8)]:
            args = [("n_q", n_q), ("n_k", n_k), ("d_k", d_k), ("d_v", d_v)]
            got = _call(attention_shapes, args, what)
            try:
                scores_shape, output_shape = (tuple(int(i) for i in s) for s in got)
            except (TypeError, ValueError):
                return _fail("wrong_type", f"`{what}` should return two shapes, like "
                             f"((2, 5), (2, 4)) (got {got!r}).")
            expect = f"for n_q={n_q}, n_k={n_k}, d_k={d_k}, d_v={d_v}"
            if scores_shape != (n_q, n_k):
                if scores_shape == (n_k, n_q):
                    return _fail("transposed_result", f"{expect} the scores have one row per "
                                 f"query and one column per key: ({n_q}, {n_k}), not "
                                 f"{scores_shape}.")
                return _fail("wrong_shape", f"{expect} the score table has shape ({n_q}, {n_k}) "
                             f"(got {scores_shape}); QK^T pairs every query with every key.")
            if output_shape != (n_q, d_v):
                return _fail("wrong_shape", f"{expect} the output has shape ({n_q}, {d_v}) (got "
                             f"{output_shape}): one row per query, as long as a value vector.")
        return _ok("the score table is n_q × n_k (one row per query) and the output is "
                   "n_q × d_v (one blended value per query).")

    return _run(body)


def check_scores(fn: Callable[[Any, Any], Any]) -> CheckResult:
    """Check a student's ``scores(Q, K)``, the raw scores QK^T.

    Probes with 2 queries and 4 keys of dimension 3, so a missing transpose of ``K`` cannot
    hide behind a square matrix.

    Examples
    --------
    >>> from course_lib import scores
    >>> check_scores(scores)
    Well done: your QK^T dots every query with every key (2 queries × 4 keys gives a 2 × 4 table).
    >>> check_scores(lambda Q, K: K @ Q.T).mistake
    'transposed_result'
    """
    what = _name_of(fn, "scores")

    def body() -> CheckResult:
        args = [("Q", _Q), ("K", _K)]
        got = _as_array(_qk_call(fn, args, what), what, (2, 4))
        _diagnose(got, scores(_Q, _K), what, _scores_mistakes(_Q, _K), args)
        return _ok("your QK^T dots every query with every key (2 queries × 4 keys gives a "
                   "2 × 4 table).")

    return _run(body)


def _qk_call(fn: Callable[..., Any], args: Sequence[tuple[str, Any]], what: str) -> Any:
    """Call a function of Q and K; a shape clash there means K was not transposed."""
    return _call(fn, args, what, _transpose_hint, "not_transposing_k")


_transpose_hint = (" Each score dots a row of Q with a row of K, both of dimension d_k, but a "
                   "matrix product pairs the rows of its left factor with the columns of its "
                   "right one.")


def check_scaled_scores(fn: Callable[[Any, Any], Any]) -> CheckResult:
    """Check a student's ``scaled_scores(Q, K)`` = QK^T / sqrt(d_k).

    With 2 queries, 4 keys and d_k = 3, dividing by the square root of the wrong axis gives
    a different answer from the right one.

    Examples
    --------
    >>> from course_lib import scaled_scores
    >>> check_scaled_scores(scaled_scores)
    Well done: you divided QK^T by sqrt(d_k), with d_k = 3 read from the last axis of Q.
    >>> check_scaled_scores(lambda Q, K: Q @ K.T / np.sqrt(len(Q))).mistake
    'dk_wrong_axis'
    """
    what = _name_of(fn, "scaled_scores")

    def body() -> CheckResult:
        args = [("Q", _Q), ("K", _K)]
        got = _as_array(_qk_call(fn, args, what), what, (2, 4))
        mistakes = _scale_mistakes(_Q, _K, lambda s: s) + _scores_mistakes(_Q, _K)[1:]
        _diagnose(got, scaled_scores(_Q, _K), what, mistakes, args)
        return _ok("you divided QK^T by sqrt(d_k), with d_k = 3 read from the last axis of Q.")

    return _run(body)


def check_softmax(fn: Callable[[Any], Any]) -> CheckResult:
    """Check a student's row-wise ``softmax(x)`` on a 3 × 4 table of scores.

    The first probe has moderate scores (so every axis or normalisation mistake shows);
    the second has a row near 1000 next to a row of small scores (so a naive ``exp``
    overflows and a shift by the table's max underflows).

    Examples
    --------
    >>> check_softmax(lambda x: np.exp(x) / np.exp(x).sum(axis=0, keepdims=True)).mistake
    'softmax_wrong_axis'
    """
    what = _name_of(fn, "softmax")

    def body() -> CheckResult:
        args = [("x", _X)]
        got = _as_array(_call(fn, args, what), what, _X.shape)
        _diagnose(got, softmax(_X), what, _softmax_mistakes(_X), args)
        args = [("x", _X_BIG)]
        got = _as_array(_call(fn, args, what), what, _X_BIG.shape)
        _overflow_verdict(got, softmax(_X_BIG), what, args, _X_BIG)
        return _ok("your softmax gives positive weights that sum to 1 along each row, and it "
                   "stays finite on scores as large as 1000.")

    return _run(body)


def check_attention_weights(fn: Callable[[Any, Any], Any]) -> CheckResult:
    """Check a student's ``attention_weights(Q, K)`` = softmax(QK^T / sqrt(d_k)).

    Examples
    --------
    >>> from course_lib import attention_weights
    >>> check_attention_weights(attention_weights)
    Well done: your weights are softmax(QK^T / sqrt(d_k)) row by row,
    and stay finite when the scores reach 1000.
    >>> check_attention_weights(lambda Q, K: softmax(Q @ K.T)).mistake
    'missing_scale'
    """
    what = _name_of(fn, "attention_weights")

    def body() -> CheckResult:
        args = [("Q", _Q), ("K", _K)]
        got = _as_array(_qk_call(fn, args, what), what, (2, 4))
        s = scaled_scores(_Q, _K)
        mistakes = (_scale_mistakes(_Q, _K, softmax) + _softmax_mistakes(s)
                    + [(c, lambda f=f: softmax(f()), m) for c, f, m in _scores_mistakes(_Q, _K)
                       if c != "scaled_too_early"]
                    + [("no_softmax", lambda: s,
                        "you returned the scaled scores; turn each row into weights with "
                        "softmax.")])
        _diagnose(got, attention_weights(_Q, _K), what, mistakes, args)
        args = [("Q", _Q_BIG), ("K", _K_BIG)]
        got = _as_array(_qk_call(fn, args, what), what, (2, 4))
        _overflow_verdict(got, attention_weights(_Q_BIG, _K_BIG), what, args,
                          scaled_scores(_Q_BIG, _K_BIG))
        return _ok("your weights are softmax(QK^T / sqrt(d_k)) row by row, and stay finite "
                   "when the scores reach 1000.")

    return _run(body)


def _blend_mistakes(w: FloatArray, V: FloatArray) -> list[tuple[str, Callable[[], Any], str]]:
    return [
        ("values_unweighted", lambda: np.broadcast_to(V.mean(axis=0), (w.shape[0], V.shape[1])),
         f"all {w.shape[0]} output rows are the same plain average of the values; row i "
         "should count each value as much as query i's weight on it."),
        ("values_unweighted", lambda: np.broadcast_to(V.sum(axis=0), (w.shape[0], V.shape[1])),
         f"all {w.shape[0]} output rows are the same plain sum of the values; row i should "
         "count each value as much as query i's weight on it (the weights sum to 1)."),
    ]


def check_blend(fn: Callable[[Any, Any], Any]) -> CheckResult:
    """Check a student's ``blend(weights, V)``: each output row is a weighted average of V.

    Probes with 2 queries, 4 keys and values of dimension 5, so ``V @ weights`` or
    ``weights.T @ V`` cannot be computed and a wrong order shows.

    Examples
    --------
    >>> from course_lib import blend
    >>> check_blend(blend)
    Well done: each output row is the weighted average of the value vectors
    (weights @ V), 2 queries × 5 numbers.
    >>> check_blend(lambda w, V: np.tile(V.mean(axis=0), (2, 1))).mistake
    'values_unweighted'
    """
    what = _name_of(fn, "blend")
    w = attention_weights(_Q, _K)

    def body() -> CheckResult:
        args = [("weights", w), ("V", _V)]
        hint = (f" Each output row mixes the {_V.shape[0]} rows of V with one row of "
                f"{w.shape[1]} weights: in which order does a matrix product pair a row of "
                "weights with the rows of V?")
        got = _as_array(_call(fn, args, what, hint, "blend_shapes"), what, (2, 5))
        _diagnose(got, blend(w, _V), what, _blend_mistakes(w, _V), args)
        return _ok("each output row is the weighted average of the value vectors "
                   "(weights @ V), 2 queries × 5 numbers.")

    return _run(body)


def _attention_mistakes(
    Q: FloatArray, K: FloatArray, V: FloatArray
) -> list[tuple[str, Callable[[], Any], str]]:
    w = attention_weights(Q, K)
    weight_mistakes = (_scale_mistakes(Q, K, softmax) + _softmax_mistakes(scaled_scores(Q, K))
                       + [(c, lambda f=f: softmax(f()), m)
                          for c, f, m in _scores_mistakes(Q, K) if c != "scaled_too_early"])
    return ([(c, lambda f=f: f() @ V, m) for c, f, m in weight_mistakes]
            + [("no_softmax", lambda: scaled_scores(Q, K) @ V,
                "the scaled scores went straight into the blend; turn each row into weights "
                "with softmax first.")]
            + _blend_mistakes(w, V))


def check_attention(fn: Callable[[Any, Any, Any], Any]) -> CheckResult:
    """Check a student's ``attend(Q, K, V)``, the whole equation (returns the output).

    A function that returns ``(output, weights)`` like :func:`course_lib.attention` is
    accepted too.

    Examples
    --------
    >>> from course_lib import attention
    >>> check_attention(attention)
    Well done: softmax(QK^T / sqrt(d_k)) · V, every term in its place, and stable on large scores.
    """
    what = _name_of(fn, "attend")

    def body() -> CheckResult:
        args = [("Q", _Q), ("K", _K), ("V", _V)]
        got = _as_array(_qk_call(fn, args, what), what, (2, 5), accept_pair=True)
        _diagnose(got, attention(_Q, _K, _V)[0], what, _attention_mistakes(_Q, _K, _V), args)
        args = [("Q", _Q_BIG), ("K", _K_BIG), ("V", _V)]
        got = _as_array(_qk_call(fn, args, what), what, (2, 5), accept_pair=True)
        x = scaled_scores(_Q_BIG, _K_BIG)
        _diagnose(got, attention(_Q_BIG, _K_BIG, _V)[0], what,
                  [(c, lambda f=f: f() @ _V, m) for c, f, m in _overflow_mistakes(x)], args)
        return _ok("softmax(QK^T / sqrt(d_k)) · V, every term in its place, and stable on "
                   "large scores.")

    return _run(body)


def check_masked_attention(fn: Callable[[Any, Any, Any, Any], Any]) -> CheckResult:
    """Check a student's ``masked_attention(Q, K, V, mask)``; mask True = may attend.

    The probe mask (5 queries × 4 keys, d_k = 3) hides a different set of keys in every row, and
    neither it nor its negation hides a whole row.

    Examples
    --------
    >>> from course_lib import attention
    >>> check_masked_attention(attention)
    Well done: hidden keys got weight 0 before the blend,
    and each row still spends a budget of exactly 1.
    """
    what = _name_of(fn, "masked_attention")
    Q, K, V, mask = _QM, _K, _V, _MASK
    s = scaled_scores(Q, K)

    def soft(x: FloatArray) -> FloatArray:
        return softmax(x)

    def body() -> CheckResult:
        args = [("Q", Q), ("K", K), ("V", V), ("mask", mask)]
        got = _as_array(_qk_call(fn, args, what), what, (5, 5), accept_pair=True)
        mistakes = [
            *_scale_mistakes(Q, K, lambda x: soft(np.where(mask, x, -np.inf)) @ V),
            ("mask_after_softmax", lambda: (soft(s) * mask) @ V,
             "the mask was applied after the softmax, so the weights of row 0 sum to "
             f"{(soft(s) * mask)[0].sum():.2f}, not 1; hide the keys before the softmax."),
            ("mask_ignored", lambda: soft(s) @ V,
             "the mask made no difference: hidden keys still got weight. Which score does "
             "softmax turn into a weight of exactly 0?"),
            ("mask_inverted", lambda: soft(np.where(~mask, s, -np.inf)) @ V,
             "the mask is the wrong way round: True means 'may attend', so it is the False "
             "entries that must be hidden."),
            ("mask_with_zero", lambda: soft(np.where(mask, s, 0.0)) @ V,
             "hidden scores were set to 0, but e^0 = 1 still gives them weight. Which score "
             "x has e^x = 0?"),
            ("mask_with_zero", lambda: soft(s * mask) @ V,
             "multiplying the scores by the mask sets hidden scores to 0, but e^0 = 1 still "
             "gives them weight. Which score x has e^x = 0?"),
        ]
        _diagnose(got, attention(Q, K, V, mask=mask)[0], what, mistakes, args)
        return _ok("hidden keys got weight 0 before the blend, and each row still spends a "
                   "budget of exactly 1.")

    return _run(body)


def check_sat_output(answer: Any) -> CheckResult:
    """Check the output for 'sat' worked out by hand (a function returning it, or the value).

    Accepts ``[1.25, 1.5]`` (from the weights rounded to two decimals) and the exact
    ``≈ [1.26, 1.50]``, each to within 0.005.

    Examples
    --------
    >>> check_sat_output([1.25, 1.5])
    Well done: 0.25·[1, 0] + 0.25·[0, 2] + 0.50·[2, 2] = [1.25, 1.5] (exactly ≈ [1.26, 1.50]).
    >>> check_sat_output([1.0, 1.5]).mistake
    'wrong_values'
    """
    what = _name_of(answer, "sat_output")

    def body() -> CheckResult:
        value = _call(answer, [], what) if callable(answer) else answer
        got = _as_array(value, what, (2,)).ravel()
        if got.shape != (2,):
            return _fail("wrong_shape", f"the output for 'sat' is one value vector of 2 "
                         f"numbers (got shape {got.shape}).")
        ex_w = np.array([0.25, 0.25, 0.5])
        V = np.array([[1.0, 0.0], [0.0, 2.0], [2.0, 2.0]])
        Q = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
        exact = attention(Q, Q, V)[0][2]
        if np.allclose(got, ex_w @ V, atol=0.005) or np.allclose(got, exact, atol=0.005):
            return _ok("0.25·[1, 0] + 0.25·[0, 2] + 0.50·[2, 2] = [1.25, 1.5] "
                       "(exactly ≈ [1.26, 1.50]).")
        unscaled = attention(Q, Q, V, scale=False)[0][2]
        if np.allclose(got, unscaled, atol=0.005):
            return _fail("missing_scale", f"{_fmt(got)} is what you get without dividing "
                         "the scores by sqrt(2); scale first, then softmax.")
        if np.allclose(got, V[2], atol=0.005):
            return _fail("wrong_values", "that is the value of 'sat' itself; the output mixes all "
                         "three values with the weights [0.25, 0.25, 0.50].")
        return _fail("wrong_values", f"{_fmt(got)} is not the output for 'sat'; multiply "
                     "each value by its weight [0.25, 0.25, 0.50] and add them up.")

    return _run(body)


# --------------------------------------------------------------------------------------
# lesson 11: every head of a real model at once (issue 13)
# --------------------------------------------------------------------------------------


def _row_text(a: Any) -> str:
    """One row of weights on one line, however many tokens."""
    return np.array2string(np.asarray(a, dtype=float), precision=3, suppress_small=True,
                           separator=", ", max_line_width=10_000)


def _heads_mistakes(
    Q: FloatArray, K: FloatArray
) -> list[tuple[str, Callable[[], Any], str]]:
    """What the usual mistakes give on (heads, n, d_k) inputs (never by `.T`: it raises)."""
    h, n, d_k = Q.shape
    s = Q @ np.swapaxes(K, -1, -2)
    return [
        ("missing_scale", lambda: softmax(s),
         "the scores were not divided by sqrt(d_k); the model divides by sqrt(32), and "
         "without it its heads would be much more peaked than they are (lesson 03)."),
        ("dk_wrong_axis", lambda: softmax(s / np.sqrt(h)),
         f"you divided by sqrt({h}), the number of heads, but d_k is the dimension of each "
         f"query vector ({d_k} here): the last axis."),
        ("dk_wrong_axis", lambda: softmax(s / np.sqrt(n)),
         f"you divided by sqrt({n}), the number of tokens, but d_k is the dimension of each "
         f"query vector ({d_k} here): the last axis."),
        ("divided_by_dk", lambda: softmax(s / d_k),
         f"you divided by d_k = {d_k} itself; the equation divides by its square root."),
        ("softmax_wrong_axis", lambda: softmax(s / np.sqrt(d_k), axis=-2),
         "your weights sum to 1 down each column (over the queries); on (heads, n, n) "
         "scores each query's row, the last axis, is its budget of 1."),
        ("softmax_wrong_axis", lambda: softmax(s / np.sqrt(d_k), axis=0),
         f"your weights sum to 1 across the {h} heads (axis 0); each head is its own "
         "attention, and each query's row, the last axis, sums to 1."),
        ("softmax_whole_table", lambda: np.exp(s / np.sqrt(d_k)) / np.exp(
            s / np.sqrt(d_k)).sum(),
         "you divided by the sum of the whole array, so all the weights together sum to 1; "
         "each row of each head should sum to 1 on its own."),
        ("no_softmax", lambda: s / np.sqrt(d_k),
         "you returned the scaled scores; turn each row into weights with softmax."),
    ]


def check_model_weights(fn: Callable[[Any, Any], Any]) -> CheckResult:
    """Check ``attention_weights(Q, K)`` on every head of a real model at once.

    ``Q`` and ``K`` are all 12 heads of one layer of all-MiniLM-L6-v2, shape (heads, n,
    d_k) = (12, n, 32) (:mod:`course_lib.real_model`). The first probe (sentence 0, layer
    0) names the mistake: a missing or wrong scale, a softmax over the wrong axis, or a
    transpose by ``.T``, which reverses all three axes of a 3-D array. Then every head of
    every shipped sentence and layer is compared with the model's own probabilities
    (float32; a difference below 1e-5 passes).

    Examples
    --------
    >>> from course_lib import attention_weights, scores
    >>> check_model_weights(attention_weights)  # doctest: +ELLIPSIS
    Well done: your function reproduces the model's own attention probabilities in all 288
    heads ... the largest difference is ...e-07, float32 rounding.
    >>> check_model_weights(lambda Q, K: softmax(scores(Q, K))).mistake
    'missing_scale'
    >>> check_model_weights(lambda Q, K: softmax(Q @ K.T / np.sqrt(32))).mistake
    'transpose_3d'
    """
    from .real_model import compare_with_model, load_model_attention

    what = _name_of(fn, "attention_weights")

    def body() -> CheckResult:
        data = load_model_attention()
        probe = data.layer(0, 0)
        q, k = probe.Q.astype(np.float64), probe.K.astype(np.float64)
        h, n, d_k = q.shape
        args = [("Q", q), ("K", k)]
        try:
            got = _call(fn, args, what, shape_mistake="shapes_clash")
        except _Stop as stop:
            if stop.result.mistake != "shapes_clash":
                raise
            one = _try(lambda: fn(q[0].copy(), k[0].copy()))
            if one is not None and _matches(one, attention_weights(q[0], k[0])):
                raise _Stop(_fail(
                    "transpose_3d", f"`{what}` works on one head, (n, d_k) = ({n}, {d_k}), "
                    f"but raised on all {h} heads at once, ({h}, {n}, {d_k}): `.T` reverses "
                    f"all three axes, so K becomes ({d_k}, {n}, {h}); transpose only the "
                    "last two axes of K (lesson 09).")) from None
            raise _Stop(CheckResult(False, stop.result.message, "raised")) from None
        got = _as_array(got, what, (h, n, n))
        want = attention_weights(q, k)
        if not _matches(got, want):
            for code, candidate, sentence in _heads_mistakes(q, k):
                wrong = _try(candidate)
                if wrong is not None and _matches(got, wrong, equal_nan=True):
                    return _fail(code, sentence)
            if got.shape != want.shape:
                return _fail("wrong_shape", f"`{what}` returned shape {got.shape} but should "
                             f"return (heads, n, n) = {want.shape} for {_shape_text(args)}.")
            if not np.isfinite(got).all():
                return _fail("not_finite", f"`{what}` returned NaN or infinity for "
                             f"{_shape_text(args)}.")
            head, row = (int(i) for i in np.argwhere(
                ~np.isclose(got, want, rtol=1e-6, atol=_ATOL))[0][:2])
            col = int(np.argwhere(~np.isclose(got[head, row], want[head, row], rtol=1e-6,
                                               atol=_ATOL))[0][0])
            return _fail("wrong_values", f"the shape is right but head {head}, row {row} "
                         f"('{probe.tokens[row]}') is off from column {col} "
                         f"('{probe.tokens[col]}'): your row is "
                         f"{_row_text(got[head, row])}, not the model's; compare your steps "
                         "with the lesson's.")
        try:
            found = compare_with_model(fn, data)
        except Exception as exc:  # the student's code may raise on another sentence
            return _fail("raised", f"`{what}` matched on the first sentence but then raised "
                         f"{type(exc).__name__}: {str(exc)[:100]}.")
        if not found.largest_difference < 1e-5:
            s, layer, head, row, _ = found.where
            return _fail("wrong_values", f"`{what}` is right on the first probe but differs "
                         f"from the model by {found.largest_difference:.2g} in sentence {s}, "
                         f"layer {layer}, head {head}, row {row}.")
        return _ok(f"your function reproduces the model's own attention probabilities in "
                   f"all {found.heads_compared} heads ({len(data.sentences)} sentences × "
                   f"{data.layers} layers × {data.heads} heads, each layer's heads in one "
                   f"call); the largest difference is {found.largest_difference:.1e}, "
                   "float32 rounding.")

    return _run(body)


# --------------------------------------------------------------------------------------
# lessons 08 and 09: the projections, and scores for a batch of heads (issue 13)
# --------------------------------------------------------------------------------------

# 4 tokens, d_model = 5, d_k = 3, d_v = 2: every axis a different length, so a product in
# the wrong order cannot be computed and a value made with W_K has the wrong shape.
_X_EMB = np.array([[0.5, -1.0, 0.2, 0.8, -0.3], [0.1, 0.4, -0.6, 0.3, 0.9],
                   [-0.7, 0.2, 0.5, -0.4, 0.6], [0.9, 0.3, 0.1, -0.8, -0.2]])
_W_Q = np.array([[0.6, -0.2, 0.1], [0.3, 0.8, -0.5], [-0.4, 0.1, 0.7], [0.2, -0.6, 0.3],
                 [0.5, 0.4, -0.1]])
_W_K = np.array([[-0.3, 0.5, 0.2], [0.7, -0.1, 0.4], [0.1, 0.6, -0.8], [-0.5, 0.2, 0.6],
                 [0.4, -0.7, 0.1]])
_W_V = np.array([[0.2, 0.9], [-0.6, 0.3], [0.8, -0.4], [0.1, 0.5], [-0.3, -0.2]])


def check_projections(fn: Callable[[Any, Any, Any, Any], Any]) -> CheckResult:
    """Check a student's ``projections(X, W_Q, W_K, W_V) -> (Q, K, V)`` (lesson 08).

    Probes with 4 tokens, d_model = 5, d_k = 3 and d_v = 2, so a product in the wrong order
    raises, and using one projection matrix for another shows in the values or the shape.

    Examples
    --------
    >>> from course_lib.projections import project
    >>> check_projections(project)
    Well done: each token's embedding (a row of X) is projected three ways:
    Q and K are 4 × 3, V is 4 × 2.
    >>> check_projections(lambda X, W_Q, W_K, W_V: (X @ W_Q, X @ W_Q, X @ W_V)).mistake
    'keys_from_w_q'
    """
    what = _name_of(fn, "projections")
    X, mats = _X_EMB, {"W_Q": _W_Q, "W_K": _W_K, "W_V": _W_V}
    want = {"Q": X @ _W_Q, "K": X @ _W_K, "V": X @ _W_V}
    made_with = {w: X @ m for w, m in mats.items()}
    letter = {"Q": "W_Q", "K": "W_K", "V": "W_V"}
    role = {"Q": "what each token asks for", "K": "what each token is matched on",
            "V": "what each token hands over"}

    def body() -> CheckResult:
        args = [("X", X), ("W_Q", _W_Q), ("W_K", _W_K), ("W_V", _W_V)]
        hint = (" X holds one token per row (n × d_model) and each W has d_model rows: in "
                "which order does a matrix product pair a row of X with the rows of W?")
        got = _call(fn, args, what, hint, "projection_order")
        if got is None:
            return _fail("returned_none", f"`{what}` returned None: did you forget `return`?")
        if not isinstance(got, tuple | list) or len(got) != 3:
            length = f" of length {len(got)}" if isinstance(got, tuple | list) else ""
            return _fail("wrong_type", f"`{what}` should return three arrays, Q, K and V in "
                         f"that order (got {type(got).__name__}{length}).")
        arrays = {}
        for name, value in zip("QKV", got, strict=True):
            arrays[name] = _as_array(value, f"{what}(...)'s {name}", want[name].shape)
        same = {n: {w for w, m in made_with.items() if _matches(a, m)} for n, a in arrays.items()}
        if "W_K" in same["Q"] and "W_Q" in same["K"]:
            return _fail("swapped_q_k", "your Q and K are each other's: return Q first, "
                         "then K, then V.")
        for name in "QKV":
            a = arrays[name]
            if _matches(a, want[name]):
                continue
            if _matches(a, X):
                return _fail("missing_projection", f"your {name} is X itself: the embeddings "
                             f"still need projecting with {letter[name]} to become {role[name]}.")
            others = sorted(same[name] - {letter[name]})
            if others:
                plural = {"Q": "queries", "K": "keys", "V": "values"}[name]
                return _fail(f"{plural}_from_{others[0].lower()}",
                             f"your {name} was made with {others[0]}; {role[name]} has its own "
                             f"matrix, {letter[name]}.")
            w = mats[letter[name]]
            if a.shape == want[name].shape[::-1] and _matches(a, w.T @ X.T):
                return _fail("projection_order", f"your {name} has shape {a.shape}, one column "
                             f"per token: each token should be a row, as in X ({X.shape[0]} "
                             f"rows), so {name} is {want[name].shape[0]} × "
                             f"{want[name].shape[1]}.")
            _diagnose(a, want[name], f"{what}(...)'s {name}", [], args)
        return _ok("each token's embedding (a row of X) is projected three ways: Q and K are "
                   "4 × 3, V is 4 × 2.")

    return _run(body)


# Probe 1: 2 heads, 3 queries, 2 keys, d_k = 2. K is (2, 2, 2), so K.T has K's shape and
# Q @ K.T runs without an error: it silently dots each query with another head's keys.
_QH = np.array([[[0.9, -0.4], [0.3, 0.8], [-0.5, 0.6]],
                [[0.2, 0.7], [-0.8, 0.1], [0.6, 0.5]]])
_KH = np.array([[[0.7, 0.2], [-0.6, 0.9]], [[0.4, -0.3], [0.1, 0.8]]])
# Probe 2: batch 2, heads 3, 4 queries, 6 keys, d_k = 5: every axis a different length.
_QB = np.round(np.sin(np.arange(2 * 3 * 4 * 5)).reshape(2, 3, 4, 5), 2)
_KB = np.round(np.cos(np.arange(2 * 3 * 6 * 5) * 0.7).reshape(2, 3, 6, 5), 2)


def _batched_mistakes(Q: FloatArray, K: FloatArray) -> list[tuple[str, Callable[[], Any], str]]:
    k_t = np.swapaxes(K, -1, -2)
    d_k = Q.shape[-1]
    s = Q @ k_t
    same = " (the same shape here, so nothing raised)" if K.T.shape == K.shape else ""
    axis_names = ("sentences in the batch", "heads", "queries")[-(Q.ndim - 1):]
    wrong_axes = [  # the last axes first: when two lengths are equal, name the nearer one
        ("dk_wrong_axis", lambda a=a: s / np.sqrt(Q.shape[a]),
         f"you divided by sqrt({Q.shape[a]}), the number of {axis_names[a]} (axis {a}), but "
         f"d_k is the dimension of each query vector, the last axis ({d_k} here).")
        for a in reversed(range(Q.ndim - 1)) if Q.shape[a] != d_k]
    return [
        ("transpose_all_axes", lambda: Q @ K.T / np.sqrt(d_k),
         f".T (like np.transpose without axes) reverses all {K.ndim} axes of K, shape "
         f"{K.shape} → {K.T.shape}{same}, not just the last two: each query was dotted with "
         "numbers taken across the heads. Swap only the last two axes (tokens and d_k), "
         "whatever comes before them."),
        ("not_transposing_k", lambda: Q @ K / np.sqrt(d_k),
         "K was not transposed: a matrix product pairs a row of Q with a column of K, but a "
         "score pairs a row of Q (a query) with a row of K (a key)."),
        ("transposed_result", lambda: K @ np.swapaxes(Q, -1, -2) / np.sqrt(d_k),
         "your tables have one row per key; row i should be query i against every key."),
        ("missing_scale", lambda: s,
         "the scores were not divided by sqrt(d_k); without it, long vectors make softmax "
         "saturate (lesson 03)."),
        *wrong_axes,
        ("divided_by_dk", lambda: s / d_k,
         f"you divided by d_k = {d_k} itself; the equation divides by its square root."),
    ]


def _diagnose_batched(
    got: FloatArray,
    want: FloatArray,
    what: str,
    mistakes: Sequence[tuple[str, Callable[[], Any], str]],
    args: Sequence[tuple[str, Any]],
) -> None:
    """:func:`_diagnose` for a stack of tables: a wrong row is named with its table's index."""
    if got.shape != want.shape or got.ndim < 3 or not np.isfinite(got).all():
        _diagnose(got, want, what, mistakes, args)
        return
    if _matches(got, want):
        return
    for code, candidate, sentence in mistakes:
        wrong = _try(candidate)
        if wrong is not None and _matches(got, wrong, equal_nan=True):
            raise _Stop(_fail(code, sentence))
    raise _Stop(_fail("wrong_values", _where_wrong(got, want)))


def check_batched_scores(fn: Callable[[Any, Any], Any]) -> CheckResult:
    """Check a student's ``batched_scores(Q, K)`` = QK^T / sqrt(d_k) on (..., n, d_k) arrays.

    The first probe is 3-D, ``(heads, n, d_k)``, shaped so that ``K.T`` has the same shape
    as ``K`` and ``Q @ K.T`` runs without an error (and gives wrong numbers); the second is
    4-D, ``(batch, heads, n, d_k)``, with every axis a different length (lesson 09).

    Examples
    --------
    >>> from course_lib.attention import scaled_scores  # it swaps the last two axes
    >>> check_batched_scores(scaled_scores)
    Well done: one table per head and per sentence, (2, 3, 4, 6) for Q (2, 3, 4, 5) and
    K (2, 3, 6, 5): the transpose swapped only the last two axes.
    >>> check_batched_scores(lambda Q, K: Q @ K.T / np.sqrt(Q.shape[-1])).mistake
    'transpose_all_axes'
    """
    what = _name_of(fn, "batched_scores")

    def body() -> CheckResult:
        args = [("Q", _QH), ("K", _KH)]
        got = _as_array(_qk_call(fn, args, what), what, (2, 3, 2))
        _diagnose_batched(got, scaled_scores(_QH, _KH), what, _batched_mistakes(_QH, _KH), args)
        args = [("Q", _QB), ("K", _KB)]
        try:
            got = _as_array(_call(fn, args, what), what, (2, 3, 4, 6))
        except _Stop as stop:
            if stop.result.mistake in ("raised", "not_transposing_k"):
                raise _Stop(_fail(
                    "transpose_fixed_axes", f"`{what}` works on 3-D input (heads, n, d_k) "
                    f"but raised an error on 4-D input (batch, heads, n, d_k), "
                    f"{_shape_text(args)}: does your transpose count axes from the front? "
                    "Swap the last two axes, whatever comes before them.")) from None
            raise
        _diagnose_batched(got, scaled_scores(_QB, _KB), what, _batched_mistakes(_QB, _KB), args)
        return _ok("one table per head and per sentence, (2, 3, 4, 6) for Q (2, 3, 4, 5) and "
                   "K (2, 3, 6, 5): the transpose swapped only the last two axes.")

    return _run(body)


# --------------------------------------------------------------------------------------
# lesson 10: cross-attention (n_q queries over n_k keys, n_q != n_k)
# --------------------------------------------------------------------------------------

# 3 target words query 5 source words, d_k = 4, d_v = 2: no two of n_q, n_k, d_k equal, so
# the table (3 × 5) is not square, a product with the wrong array transposed cannot be
# computed, and a softmax down the columns gives other numbers of the same shape.
_QC = np.array([[0.6, -0.3, 0.8, 0.1], [-0.5, 0.7, 0.2, 0.4], [0.3, 0.3, -0.6, 0.9]])
_KC = np.array([[0.5, 0.1, -0.4, 0.3], [-0.2, 0.8, 0.3, -0.1], [0.7, -0.5, 0.6, 0.2],
                [0.1, 0.4, -0.2, 0.9], [-0.6, -0.2, 0.5, 0.4]])
_VC = np.array([[1.0, 0.0], [0.0, 2.0], [2.0, 1.0], [-1.0, 1.5], [0.5, -1.0]])
# More queries than keys (4 over 2): a loop over the keys that runs over the queries fails.
_QC2 = np.array([[0.4, -0.8, 0.3, 0.5], [0.9, 0.2, -0.4, 0.1], [-0.3, 0.6, 0.7, -0.2],
                 [0.2, 0.2, 0.2, 0.8]])
_KC2, _VC2 = _KC[:2], _VC[:2]

_cross_hint = (" With n_q queries and n_k keys the table is (n_q, d_k) times (d_k, n_k), "
               "giving (n_q, n_k), and then (n_q, n_k) times (n_k, d_v): look at which array "
               "you transposed, and check that the inner sizes of each product meet.")


def check_cross_attention(fn: Callable[[Any, Any, Any], Any]) -> CheckResult:
    """Check a student's ``cross_attention(Q, K, V)`` with ``n_q != n_k`` (the output).

    Probes: 3 queries over 5 keys (d_k = 4, d_v = 2), then 4 queries over 2 keys. Names
    using the number of queries where the number of keys belongs, a transpose on the
    wrong array (a shape error), a softmax over the wrong axis, and the mistakes of
    :func:`check_attention`.

    Examples
    --------
    >>> from course_lib import attention
    >>> check_cross_attention(attention)  # doctest: +ELLIPSIS
    Well done: every query (a row) spread a budget of 1 over all the keys, 3 queries ...
    >>> check_cross_attention(lambda Q, K, V: attention(Q, K[:len(Q)], V[:len(Q)])).mistake
    'keys_cut_to_queries'
    """
    what = _name_of(fn, "cross_attention")

    def body() -> CheckResult:
        for Q, K, V in ((_QC, _KC, _VC), (_QC2, _KC2, _VC2)):
            n_q, n_k = Q.shape[0], K.shape[0]
            args = [("Q", Q), ("K", K), ("V", V)]
            got = _as_array(_call(fn, args, what, _cross_hint, "wrong_transpose"), what,
                            (n_q, V.shape[1]), accept_pair=True)
            cut = [(
                "keys_cut_to_queries",
                lambda Q=Q, K=K, V=V, n_q=n_q: attention(Q, K[:n_q], V[:n_q])[0],
                f"only the first {min(n_q, n_k)} of the {n_k} keys got any weight: the number "
                f"of queries ({n_q}) was used where the number of keys belongs. Every query is "
                "scored against every key.",
            )] if n_q < n_k else []
            if got.shape == (n_q, n_q) and n_q != n_k:
                raise _Stop(_fail(
                    "keys_cut_to_queries", f"`{what}` returned shape {got.shape}, one column "
                    f"per query; the output has one row per query and d_v = {V.shape[1]} "
                    "columns, from a table with one column per key."))
            _diagnose(got, attention(Q, K, V)[0], what,
                      cut + _attention_mistakes(Q, K, V), args)
        return _ok("every query (a row) spread a budget of 1 over all the keys, 3 queries "
                   "over 5 keys and 4 over 2.")

    return _run(body)


# The checks of the exercises that are not fill-ins live in their own module
# (:mod:`course_lib.reasoning_checks`), those of lessons 12 and 13 in theirs
# (:mod:`course_lib.backward_checks`), lesson 14's online-softmax step in
# :mod:`course_lib.online_softmax_checks` and lesson 15's fill-in in
# :mod:`course_lib.kv_cache_checks`; all build on the helpers above. This module hands
# out their public checks too, so that every lesson's check cell reads `checks.check_x(f)`
# (scripts/run_lessons.py marks such cells for nbgrader). Looked up on first use, as the
# modules import each other; each module's __all__ is the one list of its checks.
def __getattr__(name: str) -> Any:
    if name.startswith("check_"):
        from . import backward_checks, kv_cache_checks, online_softmax_checks, reasoning_checks

        for module in (reasoning_checks, backward_checks, online_softmax_checks, kv_cache_checks):
            if name in module.__all__:
                return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
