"""Self-checks of part 1, the equation term by term (lessons 01-07): name the mistake.

Each ``check_...`` function calls the student's function on inputs picked so that every
likely mistake gives a visibly different answer (no saturated softmax, no square matrix
where a transpose could hide, scores big enough to overflow a naive ``exp``), compares the
result with the trusted reference in :mod:`course_lib.attention`, and returns a
:class:`~course_lib.checks.CheckResult` (:mod:`course_lib.checks.core`).

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
========================  ==============================================  ===========

Hints lead to the answer without being it: a failed check names the mistake and the shape
or row where it shows, and points at the lesson's idea, but never writes out the line of
code the exercise asks for (a test keeps it so).

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

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..attention import attention, attention_weights, blend, scaled_scores, scores, softmax
from .core import (
    CheckResult,
    FloatArray,
    _as_array,
    _call,
    _diagnose,
    _fail,
    _fmt,
    _matches,
    _name_of,
    _ok,
    _run,
)

__all__ = [
    "check_attention",
    "check_attention_weights",
    "check_blend",
    "check_masked_attention",
    "check_sat_output",
    "check_scaled_scores",
    "check_scores",
    "check_shapes",
    "check_softmax",
]


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
