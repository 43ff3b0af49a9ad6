r"""Self-checks for the exercises that are not fill-ins: derive, choose, find the bug.

Issue 30 asked for at least one exercise per lesson that makes the student think rather
than type: a number derived by hand on numbers no lesson printed before, a choice between
two implementations, the bug in a given function. Each check here works like those of
:mod:`course_lib.checks` (it returns a :class:`~course_lib.checks.CheckResult`, raises
under nbgrader's *Validate*, and reuses their helpers); :mod:`course_lib.checks` exports
them, so a lesson's check cell reads ``checks.check_x(f)`` like every other.

Feedback names the mistake (a known wrong answer gets its own sentence) and never writes
out the expected numbers.

=================================  =================================================  ======
check                              the student returns                                lesson
=================================  =================================================  ======
:func:`check_table_sizes`          numbers in the score table and the output          01
:func:`check_which_is_qkt`         "A" or "B": which product is QKᵀ                   02
:func:`check_spread_by_hand`       the spread of q·k for entries not of variance 1    03
:func:`check_breaks_global_max`    a table on which a given softmax goes wrong        04
:func:`check_weights_for_point`    weights that blend the values into a point         05
:func:`check_sat_by_hand`          the worked example's row of 'sat': weights, output 06
:func:`check_own_the_output`       the output of 'the' with keys of their own         06
:func:`check_rows_the_bug_changes`  the rows a zero-for-minus-infinity mask changes   07
:func:`check_mat_key`              a new token's key, by hand                          08
:func:`check_head_table_sizes`     numbers in the weight tables of h heads            09
:func:`check_table_bytes`          bytes of the weights table, one head and twelve    10
:func:`check_buggy_line`           the line of a given function that is wrong         11
:func:`check_third_block`          an online softmax's sum and output after a block   14
:func:`check_multiply_adds`        multiply-adds for one new token: cache, recompute  15
=================================  =================================================  ======

Examples
--------
>>> check_table_sizes(lambda: [10_000, 800])
Well done: 100 queries times 100 keys is 10000 scores, and the output holds one row of
d_v = 8 numbers per query, 800.
>>> check_table_sizes(lambda: [1_600, 800]).mistake
'used_d_k'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..attention import scaled_scores, softmax
from ..examples import the_cat_sat, the_cat_sat_own_keys
from ..online_softmax import OnlineSoftmaxState, online_softmax_start, online_softmax_step
from .core import CheckResult, _as_array, _call, _fail, _fmt, _name_of, _ok, _run

__all__ = [
    "buggy_model_weights",
    "buggy_softmax",
    "check_breaks_global_max",
    "check_buggy_line",
    "check_head_table_sizes",
    "check_mat_key",
    "check_multiply_adds",
    "check_own_the_output",
    "check_rows_the_bug_changes",
    "check_sat_by_hand",
    "check_spread_by_hand",
    "check_table_bytes",
    "check_table_sizes",
    "check_third_block",
    "check_weights_for_point",
    "check_which_is_qkt",
    "online_example_state",
    "zero_masked_weights",
]

#: Within this of the exact answer, a number derived by hand counts as right.
HAND_TOLERANCE = 0.005

Mistake = tuple[str, Sequence[float], str]


def _answer(answer: Any, what: str) -> Any:
    """The student's answer: what their function returns, or the value itself."""
    return _call(answer, [], what) if callable(answer) else answer


def _by_hand(answer: Any, what: str, want: Sequence[float], mistakes: Sequence[Mistake],
             ok: str, otherwise: str, *, tolerance: float = HAND_TOLERANCE) -> CheckResult:
    """Compare numbers worked out by hand with ``want``; name the first mistake that fits."""

    def body() -> CheckResult:
        got = _as_array(_answer(answer, what), what, (len(want),)).ravel()
        if got.shape != (len(want),):
            return _fail("wrong_shape", f"`{what}` should return {len(want)} numbers "
                         f"(got {got.size}).")
        if np.allclose(got, want, atol=tolerance, rtol=0):
            return _ok(ok)
        for code, wrong, sentence in mistakes:
            if np.allclose(got, wrong, atol=tolerance, rtol=0):
                return _fail(code, sentence)
        return _fail("wrong_values", f"{_fmt(got)} is not it; {otherwise}")

    return _run(body)


def _choice(answer: Any, what: str, options: Sequence[str], right: str, ok: str,
            wrong: dict[str, tuple[str, str]]) -> CheckResult:
    """A choice among ``options``; each wrong option names its own mistake."""

    def body() -> CheckResult:
        got = _answer(answer, what)
        if got is ...:
            return _fail("not_written", f"`{what}` still returns `...`: put your choice "
                         "there, then run this check again.")
        key = got.strip().upper() if isinstance(got, str) else got
        if isinstance(key, str) and key.isdigit():
            key = int(key)
        if key == right:
            return _ok(ok)
        if key in wrong:
            code, sentence = wrong[key]
            return _fail(code, sentence)
        names = ", ".join(repr(o) for o in options)
        return _fail("not_an_option", f"`{what}` should return one of {names} "
                     f"(got {got!r}).")

    return _run(body)


# ------------------------------------------------------------------------------ lesson 01


def check_table_sizes(answer: Any) -> CheckResult:
    """100 tokens, d_k = 16, d_v = 8: how many numbers in the score table and the output?

    Examples
    --------
    >>> check_table_sizes(lambda: [100, 800]).mistake
    'one_score_per_query'
    """
    n, d_k, d_v = 100, 16, 8
    return _by_hand(
        answer, _name_of(answer, "table_sizes"), [n * n, n * d_v],
        [("used_d_k", [n * d_k, n * d_v], "the score table has one entry per (query, key) "
          "pair; d_k only says how long each dot product is."),
         ("one_score_per_query", [n, n * d_v], "each query gets a score against every key, "
          "not one score: the table is n_q by n_k."),
         ("output_is_square", [n * n, n * n], "the output has one row per query, and each "
          "row is a blend of value vectors, so it is as long as a value."),
         ("output_uses_d_k", [n * n, n * d_k], "the output blends the values, so its rows "
          "are d_v long, not d_k.")],
        f"100 queries times 100 keys is {n * n} scores, and the output holds one row of\n"
        f"d_v = 8 numbers per query, {n * d_v}.",
        "count the rows and the columns of each table from the shapes of section 2.",
        tolerance=0.5)


# ------------------------------------------------------------------------------ lesson 02


def check_which_is_qkt(answer: Any) -> CheckResult:
    """Which of A = ``Q @ K.T`` and B = ``K @ Q.T`` is the score table QKᵀ?

    Examples
    --------
    >>> check_which_is_qkt(lambda: "B").mistake
    'transposed_table'
    """
    return _choice(
        answer, _name_of(answer, "which_is_qkt"), ["A", "B"], "A",
        "A puts query i against key j at row i, column j. B gives the transpose; on the\n"
        "cat-sat example K = Q, so the two tables agree, and only keys of their own tell.",
        {"B": ("transposed_table", "B's row i holds key i against every query, the "
               "transpose of the table; it only looks right when the table is symmetric. "
               "Run both on the keys of their own.")})


# ------------------------------------------------------------------------------ lesson 03

#: Lesson 03's head for the spread by hand: d_k, and the standard deviation of the
#: entries of the queries and of the keys (mean 0, all independent).
SPREAD_EXAMPLE = (16, 2.0, 3.0)


def check_spread_by_hand(answer: Any) -> CheckResult:
    r"""The spread of q·k, and of q·k/√d_k, for entries of standard deviation 2 and 3.

    With independent entries of mean 0, :math:`\mathrm{Var}(q_i k_i) = \sigma_q^2
    \sigma_k^2` and the :math:`d_k` variances add, so the standard deviation of
    :math:`q\cdot k` is :math:`\sigma_q \sigma_k \sqrt{d_k}`. The student returns it and
    what is left after dividing by :math:`\sqrt{d_k}` (:data:`SPREAD_EXAMPLE`).

    Examples
    --------
    >>> check_spread_by_hand(lambda: [4, 1]).mistake
    'unit_variance_assumed'
    >>> check_spread_by_hand(lambda: [576, 144]).mistake
    'variance_not_spread'
    """
    d_k, sd_q, sd_k = SPREAD_EXAMPLE
    root = float(np.sqrt(d_k))
    spread = sd_q * sd_k * root
    first = [  # wrong spreads of q·k, each with its mistake
        ("unit_variance_assumed", root, "the first number is the spread for entries of "
         "variance 1; here each product q_i·k_i has variance σ_q²·σ_k²."),
        ("one_spread_only", sd_q * root, "each product q_i·k_i carries the spread of "
         "both vectors: its variance is σ_q²·σ_k², not one of them."),
        ("one_spread_only", sd_k * root, "each product q_i·k_i carries the spread of "
         "both vectors: its variance is σ_q²·σ_k², not one of them."),
        ("spreads_added", (sd_q + sd_k) * root, "in a product the spreads multiply; "
         "they do not add."),
        ("variance_not_spread", spread**2, "the first number is a variance; the spread "
         "is its square root, the standard deviation."),
        ("no_square_root_of_d_k", sd_q * sd_k * d_k, "the d_k variances add, so the "
         "variance grows like d_k and the standard deviation like √d_k, not d_k."),
    ]
    second = [  # wrong spreads after the scaling, with a right first number
        ("scaling_always_gives_one", 1.0, "dividing by √d_k takes out the growth with "
         "d_k only: it brings the spread to 1 for entries of variance 1, and these are "
         "not."),
        ("divided_by_d_k", spread / d_k, "the second number divides by d_k = 16; the "
         "scaling divides by √d_k."),
        ("not_scaled", spread, "the second number is the spread after dividing each "
         "score by √d_k."),
    ]
    what = _name_of(answer, "spread_by_hand")

    def close(a: float, b: float) -> bool:
        return abs(a - b) <= HAND_TOLERANCE

    def body() -> CheckResult:
        got = _as_array(_answer(answer, what), what, (2,)).ravel()
        if got.shape != (2,):
            return _fail("wrong_shape", f"`{what}` should return 2 numbers (got {got.size}).")
        if close(got[0], spread) and close(got[1], spread / root):
            return _ok(f"each product has variance {sd_q:g}²·{sd_k:g}², the {d_k} "
                       f"variances add, so q·k spreads by\n{sd_q:g}·{sd_k:g}·√{d_k} = "
                       f"{spread:g}; dividing by √{d_k} leaves {spread / root:g}, the "
                       "spread of one product q_i·k_i.")
        for code, wrong, sentence in first:
            if close(got[0], wrong):
                return _fail(code, sentence)
        if not close(got[0], spread):
            return _fail("wrong_values", f"{_fmt(got[:1])} is not the spread of q·k; "
                         "start from one product q_i·k_i: its mean is 0 and its variance "
                         "is E[q_i²]·E[k_i²].")
        for code, wrong, sentence in second:
            if close(got[1], wrong):
                return _fail(code, sentence)
        return _fail("wrong_values", "the first number is right; the second is the "
                     "spread of each score divided by √d_k.")

    return _run(body)


# ------------------------------------------------------------------------------ lesson 04


def buggy_softmax(x: Any) -> np.ndarray:
    """A softmax with a bug for lesson 04 to find, line for line as the lesson shows it.

    It shifts every row by the table's largest score, not by the row's own.

    Examples
    --------
    >>> buggy_softmax(np.array([[1.0, 1.0]]))
    array([[0.5, 0.5]])
    """
    x = np.asarray(x, dtype=float)
    top = x.max()
    exps = np.exp(x - top)
    totals = exps.sum(axis=-1, keepdims=True)
    return exps / totals


def check_breaks_global_max(answer: Any) -> CheckResult:
    """A table of scores (2 or more rows) on which :func:`buggy_softmax` goes wrong.

    Examples
    --------
    >>> check_breaks_global_max(lambda: [[0.0, 1.0], [-2000.0, -2001.0]])
    Well done: in your table a row's own largest score is far below the table's, so
    e^(x - max) underflows to 0 in that row and 0/0 gives NaN: shift each row by its own
    maximum.
    >>> check_breaks_global_max(lambda: [[1.0, 2.0], [3.0, 4.0]]).mistake
    'rows_too_close'
    """
    what = _name_of(answer, "table_that_breaks_it")

    def body() -> CheckResult:
        x = _as_array(_answer(answer, what), what, (2, 3))
        if x.ndim != 2 or x.shape[0] < 2 or not np.isfinite(x).all():
            return _fail("wrong_shape", "give a table of finite scores with at least two "
                         f"rows, one per query (got shape {x.shape}).")
        with np.errstate(all="ignore"):
            got, want = buggy_softmax(x), softmax(x)
        if not np.allclose(got, want, equal_nan=False):
            return _ok("in your table a row's own largest score is far below the table's, "
                       "so\ne^(x - max) underflows to 0 in that row and 0/0 gives NaN: "
                       "shift each row by its own\nmaximum.")
        if x.shape[-1] < 2:
            return _fail("one_key", "with one key every softmax gives weight 1; give each "
                         "row at least two scores.")
        gap = float(x.max() - x.max(axis=-1).min())
        return _fail("rows_too_close", f"both softmaxes agree on your table: its rows' "
                     f"largest scores are at most {gap:.0f} apart, and e^-{gap:.0f} is "
                     "still a number a float can hold. How far below must a row be?")

    return _run(body)


# ------------------------------------------------------------------------------ lesson 05

#: The point lesson 05 asks the student to reach with the values of 'the cat sat'.
POINT = (0.6, 1.4)


def check_weights_for_point(answer: Any) -> CheckResult:
    """Weights for 'the', 'cat', 'sat' that blend their values into the point [0.6, 1.4].

    Examples
    --------
    >>> check_weights_for_point(lambda: [0.6, 0.7, 0.0]).mistake
    'not_a_budget'
    """
    what = _name_of(answer, "weights_for_point")
    V = the_cat_sat().V

    def body() -> CheckResult:
        w = _as_array(_answer(answer, what), what, (3,)).ravel()
        if w.shape != (3,):
            return _fail("wrong_shape", f"give one weight per token, 3 numbers (got {w.size}).")
        if (w < -HAND_TOLERANCE).any():
            return _fail("negative_weight", "a softmax weight is never negative; the point "
                         "is inside the triangle, so non-negative weights reach it.")
        if abs(w.sum() - 1) > HAND_TOLERANCE:
            return _fail("not_a_budget", f"your weights sum to {w.sum():.2f}; attention "
                         "spends a budget of exactly 1. Write that as a third equation.")
        point = w @ V
        if np.allclose(point, POINT, atol=HAND_TOLERANCE):
            return _ok("x = w_the·1 + w_sat·2 = 0.6, y = 2·w_cat + 2·w_sat = 1.4 and the "
                       "weights sum to 1:\nthree equations, one answer.")
        axis = "first (x)" if abs(point[0] - POINT[0]) > HAND_TOLERANCE else "second (y)"
        return _fail("wrong_point", f"your weights blend the values into {_fmt(point)}: "
                     f"its {axis} coordinate is off. Write x and y as sums of weight times "
                     "value, one equation each.")

    return _run(body)


# ------------------------------------------------------------------------------ lesson 06


def check_sat_by_hand(answer: Any) -> CheckResult:
    """The worked example's row of 'sat', by hand: its three weights, then its output.

    The weights are accepted within 0.005 of softmax([1, 1, 2] / sqrt(2)); the output within
    0.005 of the exact output or of the blend with the weights rounded to two decimals.

    Examples
    --------
    >>> from course_lib import attention, attention_weights
    >>> ex = the_cat_sat()
    >>> exact = [*attention_weights(ex.Q, ex.K)[2], *attention(ex.Q, ex.K, ex.V)[0][2]]
    >>> bool(check_sat_by_hand(lambda: exact))
    True
    >>> check_sat_by_hand(lambda: [0.21, 0.21, 0.58, 1.37, 1.58]).mistake
    'missing_scale'
    """
    from ..attention import attention, attention_weights

    what = _name_of(answer, "sat_by_hand")
    ex = the_cat_sat()
    raw = ex.Q[2] @ ex.K.T
    scaled = scaled_scores(ex.Q, ex.K)[2]
    weights = attention_weights(ex.Q, ex.K)[2]
    outputs = [attention(ex.Q, ex.K, ex.V)[0][2], weights.round(2) @ ex.V]
    wrong_weights = [
        ("missing_scale", softmax(raw),
         "those weights come from the scores without dividing them by sqrt(d_k) = sqrt(2): "
         "scale first, then take the softmax."),
        ("not_normalised", np.exp(scaled), "those are the exponentials: divide each by their "
         "total, so that the row's weights sum to 1."),
        ("no_softmax", scaled, "those are the scaled scores: softmax turns them into "
         "weights (exponentiate, add up, divide)."),
        ("scores_as_weights", raw, "those are the scores: scale them, then softmax."),
    ]

    def body() -> CheckResult:
        got = _as_array(_answer(answer, what), what, (5,)).ravel()
        if got.shape != (5,):
            return _fail("wrong_shape", f"`{what}` should return 5 numbers, sat's three "
                         f"weights and then its output's two (got {got.size}).")
        w, out = got[:3], got[3:]
        close = dict(atol=HAND_TOLERANCE, rtol=0)
        if not np.allclose(w, weights, **close):
            for code, wrong, sentence in wrong_weights:
                if np.allclose(w, wrong, **close):
                    return _fail(code, sentence)
            if abs(w.sum() - 1) > 0.02:
                return _fail("not_a_budget", f"your weights add up to {w.sum():.2f}: a row of "
                             "weights always sums to 1.")
            return _fail("wrong_weights", f"the weights {_fmt(w)} are not sat's: score, "
                         "scale by sqrt(2), exponentiate, divide by the total.")
        if any(np.allclose(out, o, **close) for o in outputs):
            return _ok("sat's row, by hand. Notice that dividing the scores by their sum, "
                       "[1, 1, 2] / 4,\ngives the same weights on this row by coincidence; "
                       "on row 'the', [1, 0, 1], it does not.")
        if np.allclose(out, ex.V[2], **close):
            return _fail("value_of_sat", "your weights are right, but that output is the "
                         "value of 'sat' alone: the output mixes all three values.")
        if np.allclose(out, ex.V.sum(axis=0), **close):
            return _fail("sum_not_mean", "your weights are right, but that output is the sum "
                         "of the values: multiply each value by its weight first.")
        return _fail("wrong_output", f"your weights are right, but {_fmt(out)} is not the "
                     "output: multiply each value vector by its weight and add them up.")

    return _run(body)


def check_own_the_output(answer: Any) -> CheckResult:
    """The output of 'the' with the keys of their own, derived by hand.

    Examples
    --------
    >>> check_own_the_output(lambda: [1.2, 1.2]).mistake
    'keys_tied'
    """
    from ..attention import attention

    seed, own = the_cat_sat(), the_cat_sat_own_keys()
    want = attention(own.Q, own.K, own.V)[0][0]
    return _by_hand(
        answer, _name_of(answer, "own_the_output"), want,
        [("keys_tied", attention(seed.Q, seed.K, seed.V)[0][0], "that is the output of "
          "'the' with K = Q; use the keys of their own."),
         ("missing_scale", attention(own.Q, own.K, own.V, scale=False)[0][0], "check "
          "the scale step: does dividing equal scores by sqrt(2) change their weights?"),
         ("weights_one_hot", own.V[0], "that is the value of 'the' alone: 'the' does not "
          "score highest on itself here."),
         ("sum_not_mean", own.V.sum(axis=0), "that is the sum of the values; the weights "
          "sum to 1, not 3.")],
        "'the' scores the same against every key, so softmax gives each a third and\n"
        "the output is the centre of the triangle of values.",
        "score 'the' against each key, turn the scores into weights, then blend.")


# ------------------------------------------------------------------------------ lesson 07


def zero_masked_weights(Q: Any, K: Any, mask: Any) -> np.ndarray:
    """Masked attention weights with a bug for lesson 07 to find: hidden scores set to 0.

    Examples
    --------
    >>> from course_lib import causal_mask
    >>> ex = the_cat_sat()
    >>> zero_masked_weights(ex.Q, ex.K, causal_mask(3))[2].round(2)
    array([0.25, 0.25, 0.5 ])
    """
    return softmax(np.where(mask, scaled_scores(Q, K), 0.0))


def check_rows_the_bug_changes(answer: Any) -> CheckResult:
    """Which tokens' weights :func:`zero_masked_weights` gets wrong on 'the cat sat'.

    Examples
    --------
    >>> check_rows_the_bug_changes(lambda: ["the", "cat", "sat"]).mistake
    'sat_hides_nothing'
    """
    from ..attention import attention_weights, causal_mask

    what = _name_of(answer, "rows_the_bug_changes")
    ex = the_cat_sat()
    mask = causal_mask(3)
    wrong = ~np.isclose(zero_masked_weights(ex.Q, ex.K, mask),
                        attention_weights(ex.Q, ex.K, mask=mask)).all(axis=-1)
    want = {t for t, w in zip(ex.tokens, wrong, strict=True) if w}

    def body() -> CheckResult:
        got = _answer(answer, what)
        if got is ... or (isinstance(got, list | tuple | set) and ... in got):
            return _fail("not_written", f"`{what}` still holds `...`: list the tokens, "
                         "then run this check again.")
        if isinstance(got, str) or not isinstance(got, list | tuple | set):
            return _fail("not_a_list", f"`{what}` should return a list of token names "
                         f"such as ['cat'] (got {type(got).__name__}).")
        names = {str(t).strip().lower() for t in got}
        if not names <= set(ex.tokens):
            return _fail("not_a_token", f"the tokens are {', '.join(ex.tokens)} "
                         f"(got {sorted(names - set(ex.tokens))}).")
        if names == want:
            return _ok("every row that hides a key changes: e^0 = 1 is a real share of the "
                       "budget,\nwhile e^-inf = 0 is none. 'sat' hides nothing, so the bug "
                       "cannot touch it.")
        if "sat" in names:
            return _fail("sat_hides_nothing", "look at the mask's last row: 'sat' hides no "
                         "key, so the bug replaces nothing there.")
        return _fail("hidden_score_zero_is_harmless", "a hidden score set to 0 still gets "
                     "e^0 = 1 in the softmax: check every row that hides at least one key.")

    return _run(body)


# ------------------------------------------------------------------------------ lesson 08


def check_mat_key(answer: Any) -> CheckResult:
    """Lesson 08's new token 'mat' (embedding [0.6, 0.3, 0.2]): its key x W_K, by hand.

    Examples
    --------
    >>> from course_lib import projections
    >>> x = np.array(MAT_EMBEDDING)
    >>> check_mat_key(lambda: x @ projections.embedded_example().W_Q).mistake
    'query_not_key'
    """
    from ..projections import embedded_example

    W_Q, W_K = embedded_example().W_Q, embedded_example().W_K
    x = np.array(MAT_EMBEDDING)
    return _by_hand(
        answer, _name_of(answer, "mat_key"), x @ W_K,
        [("query_not_key", x @ W_Q, "that is the query of 'mat'; its key comes from W_K."),
         ("third_row_left_out", x[:2] @ W_K[:2], "the embedding has three numbers and "
          "each one meets a row of W_K: the third row is missing."),
         ("third_row_sign", x[:2] @ W_K[:2] - x[2] * W_K[2], "the third row of W_K is "
          "[-1, -1]: it subtracts.")],
        "0.6·[1, 0] + 0.3·[1, 1] + 0.2·[-1, -1]: each number of the embedding scales\n"
        "one row of W_K, and the rows are added.",
        "each number of the embedding scales one row of W_K; add the three rows up.")


#: The embedding of lesson 08's new token 'mat'.
MAT_EMBEDDING = (0.6, 0.3, 0.2)


# ------------------------------------------------------------------------------ lesson 09


def check_head_table_sizes(answer: Any) -> CheckResult:
    """n = 100 tokens, h = 8 heads: numbers in all weight tables, and in one head of d_model.

    Examples
    --------
    >>> check_head_table_sizes(lambda: [10_000, 10_000]).mistake
    'heads_share_a_table'
    """
    n, h = 100, 8
    return _by_hand(
        answer, _name_of(answer, "head_table_sizes"), [h * n * n, n * n],
        [("heads_share_a_table", [n * n, n * n], "each head runs its own softmax over "
          "its own n by n table; the tables do not share memory."),
         ("split_the_table", [n * n, h * n * n], "the order: first the h heads, then the "
          "single big head."),
         ("tables_n_by_d_k", [h * n * 64, n * 512], "a table of weights has one row "
          "per query and one column per key; d_k is the dimension of the vectors, not of the "
          "table.")],
        "8 heads store 8 tables of 100 by 100 weights, 80000 numbers; one big head\n"
        "stores 10000. Splitting d_model shrinks the vectors, not the tables.",
        "each head has a weight table with one row per query and one column per key.",
        tolerance=0.5)


# ------------------------------------------------------------------------------ lesson 10


def check_table_bytes(answer: Any) -> CheckResult:
    """Bytes of the float64 weights table at n = 3000, for one head and for 12 heads.

    Examples
    --------
    >>> check_table_bytes(lambda: [9_000_000, 108_000_000]).mistake
    'forgot_bytes_per_number'
    """
    n, heads = 3000, 12
    one = 8 * n * n
    return _by_hand(
        answer, _name_of(answer, "table_bytes"), [one, heads * one],
        [("forgot_bytes_per_number", [n * n, heads * n * n], "that counts numbers, not "
          "bytes: a float64 takes 8 bytes."),
         ("linear_in_n", [8 * n, heads * 8 * n], "the table is n by n: one weight per "
          "(query, key) pair."),
         ("float32", [4 * n * n, heads * 4 * n * n], "the course computes in float64, 8 "
          "bytes a number (a float32 model would take 4)."),
         ("heads_share_a_table", [one, one], "each of the 12 heads keeps its own table.")],
        "8 bytes × 3000² = 72 MB for one head, and 12 tables take 864 MB.",
        "the table is n by n, each entry a float64.",
        tolerance=0.5)


# ------------------------------------------------------------------------------ lesson 11


def buggy_model_weights(Q: Any, K: Any) -> np.ndarray:
    """Lesson 11's function with one wrong line, for the student to find.

    Examples
    --------
    >>> buggy_model_weights(np.ones((12, 9, 32)), np.ones((12, 9, 32))).shape
    (12, 9, 9)
    """
    Q, K = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    s = Q @ np.swapaxes(K, -1, -2)  # line 1: every query against every key, per head
    s = s / np.sqrt(Q.shape[0])  # line 2: the scale
    s = s - s.max(axis=-1, keepdims=True)  # line 3: shift each row
    exps = np.exp(s)  # line 4
    return exps / exps.sum(axis=-1, keepdims=True)  # line 5: each row sums to 1


def check_buggy_line(answer: Any) -> CheckResult:
    """Which numbered line of :func:`buggy_model_weights` is wrong (1 to 5)?

    Examples
    --------
    >>> check_buggy_line(lambda: 3).mistake
    'shift_is_harmless'
    """
    fine = {
        1: ("transpose_is_right", "line 1 swaps the last two axes of K, so each head "
            "keeps its own keys: that is QKᵀ per head."),
        3: ("shift_is_harmless", "subtracting each row's maximum changes no weight (only "
            "differences matter, lesson 04); it only keeps exp finite."),
        4: ("exp_is_right", "line 4 is softmax's exponential, as in lesson 04."),
        5: ("sum_axis_is_right", "line 5 sums over the last axis, the keys: each query's "
            "row is its budget."),
    }
    return _choice(
        answer, _name_of(answer, "buggy_line"), ["1", "2", "3", "4", "5"], 2,
        "line 2 divides by the square root of Q.shape[0], the number of heads (12),\n"
        "not of d_k (32), which is Q.shape[-1]. Every head's weights come out too sharp.",
        {k: v for k, v in fine.items()})


# ------------------------------------------------------------------------------ lesson 14

#: Lesson 14's row: one query's scores against six keys, in three blocks of two, and each
#: key's value (one number, d_v = 1), as ``(scores, values)`` per block. The lesson works
#: the first two blocks through by hand; the exercise asks for the state after the third,
#: whose maximum (4.5) is above the running one (3).
ONLINE_BLOCKS = (((2.0, 0.0), (4.0, 8.0)), ((3.0, 1.0), (2.0, 6.0)), ((4.5, 2.5), (1.0, 5.0)))


def online_example_state(blocks: int) -> OnlineSoftmaxState:
    """The online-softmax state of lesson 14's row after its first ``blocks`` blocks.

    Examples
    --------
    >>> online_example_state(2).running_max
    array([3.])
    >>> online_example_state(2).running_sum.round(3)
    array([1.553])
    """
    state = online_softmax_start(1, 1)
    for scores, values in ONLINE_BLOCKS[:blocks]:
        state = online_softmax_step(*state, [scores], np.array(values)[:, None])
    return state


def check_third_block(answer: Any) -> CheckResult:
    """Lesson 14: the running sum and partial output after the third block, by hand.

    The state after two blocks is (maximum 3, sum about 1.553, partial output about 4.682);
    the third block's scores 4.5 and 2.5 raise the maximum, so what was summed before is
    rescaled by :math:`e^{3 - 4.5}` before the block's terms are added.

    Examples
    --------
    >>> check_third_block(lambda: [2.688, 6.359]).mistake
    'neither_rescaled'
    """
    m, total, out = (float(np.ravel(a)[0]) for a in online_example_state(2))
    scores, values = (np.array(a) for a in ONLINE_BLOCKS[2])
    new_m = max(m, float(scores.max()))
    c = np.exp(m - new_m)
    p = np.exp(scores - new_m)
    old = np.exp(scores - m)  # the block's terms against the old maximum
    new = p.sum(), p @ values
    want = online_example_state(3)
    return _by_hand(
        answer, _name_of(answer, "third_block"),
        [float(want.running_sum[0]), float(want.partial_output[0, 0])],
        [("neither_rescaled", [total + new[0], out + new[1]], "the block raised the maximum, "
          "but neither the running sum nor the partial output was rescaled: both were "
          "summed with the old maximum subtracted."),
         ("sum_not_rescaled", [total + new[0], c * out + new[1]], "your partial output is "
          "right, but the running sum needs the same correction: its old terms were "
          "exponentiated against the old maximum."),
         ("output_not_rescaled", [c * total + new[0], out + new[1]], "your running sum is "
          "right, but the partial output needs the same correction: its old terms were "
          "exponentiated against the old maximum."),
         ("correction_inverted", [total / c + new[0], out / c + new[1]], "the correction is "
          "upside down: the maximum grew, so the old terms must shrink (a factor below 1)."),
         ("kept_old_maximum", [total + old.sum(), out + old @ values], "these are the sum and "
          "output with the old maximum, 3, still subtracted; the running maximum is now "
          "the block's largest score, and every term must be measured against it."),
         ("started_over", [new[0], new[1]], "that is the third block on its own: the two "
          "earlier blocks' sum and partial output are kept (rescaled), not dropped."),
         ("no_max_shift", [total + np.exp(scores).sum(), out + np.exp(scores) @ values],
          "the block's scores were exponentiated without subtracting any maximum, so they "
          "are on another scale from the running sum.")],
        "the maximum rose from 3 to 4.5, so the old sum and partial output were both\n"
        "multiplied by e^(3 - 4.5) before the block's two terms were added.",
        "multiply the old sum and output by the correction, then add the block's terms, "
        "each shifted by the new maximum.",
        tolerance=0.02)


# ------------------------------------------------------------------------------ lesson 15


def check_multiply_adds(answer: Any) -> CheckResult:
    """Token n = 1500 of one head (d_k = d_v = 64): multiply-adds with the cache, recomputing.

    With the cache: the new query against 1500 keys, then 1500 weights times the values.
    Recomputing: ``attention`` over all 1500 tokens builds the whole table (then masks it).

    Examples
    --------
    >>> check_multiply_adds(lambda: [96_000, 144_000_000]).mistake
    'scores_only'
    """
    n, d = 1500, 64
    return _by_hand(
        answer, _name_of(answer, "multiply_adds"), [2 * n * d, 2 * n * n * d],
        [("scores_only", [n * d, n * n * d], "that counts the scores only; blending the "
          "values costs as much again (one multiply-add per weight and value entry)."),
         ("cache_still_quadratic", [2 * n * n * d, 2 * n * n * d], "with the cache only the "
          "new token's query is new: one row of scores, not the whole table."),
         ("recompute_linear", [2 * n * d, 2 * n * d], "recomputing means every query "
          "against every key again: n rows of scores, each of n entries."),
         ("forgot_d", [2 * n, 2 * n * n], "each score is a dot product of d_k numbers, and "
          "each output entry a sum over the keys: count the multiplications inside."),
         ("half_table", [2 * n * d, n * n * d], "`attention` computes the whole n by n "
          "table and masks it afterwards; it does not skip the hidden half.")],
        "the cache costs 2 · 1500 · 64 = 192000 multiply-adds for the new token;\n"
        "recomputing costs 2 · 1500² · 64 = 288000000, n = 1500 times more.",
        "one row of scores and one blend for the cache; n rows of each for recomputing.",
        tolerance=0.5)
