"""Self-checks of part 2, attention in a real model (lessons 08-11): name the mistake.

They work like the checks of part 1 (:mod:`course_lib.checks.terms`, whose list of the
usual mistakes of attention they extend) on the shapes a model uses: projections of token
vectors, several heads at once, queries and keys from different sequences, and every head
of a real model (:mod:`course_lib.real_model`).

==============================  ==============================================  ===========
check                           the student writes                              lesson
==============================  ==============================================  ===========
:func:`check_projections`       ``projections(X, W_Q, W_K, W_V)`` -> Q, K, V    08
:func:`check_batched_scores`    scaled scores of (..., n, d_k) arrays           09
:func:`check_cross_attention`   ``cross_attention(Q, K, V)``, n_q ≠ n_k         10
:func:`check_model_weights`     ``attention_weights(Q, K)``, all heads          11
:func:`check_padded_weights`    the weights of a padded batch, padding hidden   11
==============================  ==============================================  ===========
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..attention import attention, attention_weights, scaled_scores, softmax
from .core import (
    _ATOL,
    CheckResult,
    FloatArray,
    _as_array,
    _call,
    _diagnose,
    _fail,
    _matches,
    _name_of,
    _ok,
    _run,
    _shape_text,
    _Stop,
    _try,
    _where_wrong,
)
from .terms import _attention_mistakes, _qk_call

__all__ = [
    "check_batched_scores",
    "check_cross_attention",
    "check_model_weights",
    "check_padded_weights",
    "check_projections",
]


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
    from ..real_model.recorded import compare_with_model, load_model_attention

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


# --------------------------------------------------------------------------------------
# lesson 11: a padded batch (issue 44)
# --------------------------------------------------------------------------------------

#: The padded batch the check tries: 2 sentences of 5 and 3 real tokens, padded to 5,
#: 2 heads of d_k = 3; the padding rows hold numbers like any token's.
PADDED_PROBE = (2, 2, 5, 3)
PADDED_LENGTHS = (5, 3)


def check_padded_weights(fn: Callable[[Any, Any, Any], Any]) -> CheckResult:
    """Check ``fn(Q, K, lengths)``: the weights of a padded batch, the padding keys hidden.

    ``Q`` and ``K`` are (batch, heads, n, d_k); ``lengths[b]`` says how many of sentence
    *b*'s tokens are real. The real queries' rows must be those of each sentence alone
    (the padding's keys get weight 0, every row sums to 1); the padding's own query rows
    are not compared, but must be numbers (a row that hides every key is 0/0).

    Examples
    --------
    >>> from course_lib import padding
    >>> check_padded_weights(lambda Q, K, lengths: attention_weights(
    ...     Q, K, mask=padding.key_mask(lengths, heads=True)))  # doctest: +ELLIPSIS
    Well done: every real token attends to its own sentence's tokens only...
    >>> check_padded_weights(lambda Q, K, lengths: attention_weights(Q, K)).mistake
    'no_mask'
    """
    from ..padding import key_mask, padding_mask

    rng = np.random.default_rng(44)
    Q, K = rng.normal(size=PADDED_PROBE), rng.normal(size=PADDED_PROBE)
    lengths = list(PADDED_LENGTHS)
    what = _name_of(fn, "padded_weights")
    keys = key_mask(lengths, heads=True)                            # (b, 1, 1, n)
    queries = padding_mask(lengths)[:, None, :, None]               # (b, 1, n, 1)
    real_rows = np.broadcast_to(queries, (*PADDED_PROBE[:3], PADDED_PROBE[2]))
    want = attention_weights(Q, K, mask=keys)
    scaled = scaled_scores(Q, K)
    after = softmax(scaled) * keys

    def on_real_rows(got: FloatArray, other: FloatArray | None) -> bool:
        return other is not None and bool(np.allclose(
            got[real_rows], other[real_rows], rtol=1e-6, atol=_ATOL, equal_nan=True))

    mistakes = [
        ("zero_not_minus_inf", lambda: softmax(np.where(keys, scaled, 0.0)),
         "you hid the padding with a score of 0, and e^0 = 1: the padding keys still get "
         "weight. A hidden score must be -inf, so that its weight is exactly 0."),
        ("mask_after_softmax", lambda: after,
         "you set the padding's weights to 0 after the softmax: the real rows of the short "
         "sentence no longer sum to 1. Hide the padding keys before the softmax (-inf)."),
        ("missing_scale", lambda: attention_weights(Q, K, mask=keys, scale=False),
         "the padding is hidden, but the scores are not divided by sqrt(d_k) first."),
        ("mask_too_short", lambda: attention_weights(
            Q, K, mask=key_mask([n - 1 for n in lengths], PADDED_PROBE[2], heads=True)),
         "your mask hides each sentence's last real token too: a sentence of 3 real tokens "
         "keeps tokens 0, 1 and 2, all those before its length."),
        ("mask_keeps_one_pad", lambda: attention_weights(Q, K, mask=np.arange(
            PADDED_PROBE[2]) <= np.array(lengths)[:, None, None, None]),
         "your mask keeps one padding token per sentence: a sentence of 3 real tokens has "
         "tokens 0, 1 and 2 only, so token 3 is padding."),
    ]

    def body() -> CheckResult:
        got = _as_array(_call(fn, [("Q", Q), ("K", K), ("lengths", lengths)], what,
                              shape_mistake="raised"), what, want.shape)
        if got.shape != want.shape:
            raise _Stop(_fail("wrong_shape", f"`{what}` returned shape {got.shape} but the "
                              f"weights of Q and K of shape {Q.shape} are {want.shape}: "
                              "(batch, heads, n, n)."))
        no_mask = attention_weights(Q, K)
        if on_real_rows(got, want):
            if not np.isfinite(got).all():
                return _fail("padding_queries_see_nothing", "the real rows are right, but "
                             "the padding's own rows are NaN: you hid every key from the "
                             "padding's queries. Hide the padding keys only; the padding's "
                             "outputs are computed and thrown away.")
            return _ok("every real token attends to its own sentence's tokens only, "
                       "as if its sentence were alone, whatever the padding holds.")
        if on_real_rows(got, no_mask):
            pad_rows = got[~real_rows]
            if not np.isfinite(pad_rows).all() or np.allclose(pad_rows, 0.0):
                return _fail("masked_queries", "you hid the padding's queries (its rows), "
                             "not its keys (the columns): the real tokens still attend to "
                             "the padding. The mask goes on the key axis, the last one.")
            return _fail("no_mask", "the padding keys still get weight: the short "
                         "sentence's real tokens attend to its padding. Hide the padding "
                         "keys (score -inf) before the softmax.")
        for code, candidate, sentence in mistakes:
            if on_real_rows(got, _try(candidate)):
                return _fail(code, sentence)
        if not np.isfinite(got[real_rows]).all():
            return _fail("not_finite", f"`{what}` returned NaN or infinity in a real "
                         "token's row; an all-hidden row or an overflowing exp is the "
                         "usual cause.")
        return _fail("wrong_values", _where_wrong(np.where(real_rows, got, 0.0),
                                                  np.where(real_rows, want, 0.0)))

    return _run(body)
