"""Tests for course_lib.attention: the terms of the equation, their errors, their laws."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from course_lib import (
    AttentionInputError,
    attention,
    attention_weights,
    blend,
    causal_mask,
    row_entropy,
    scaled_scores,
    scores,
    softmax,
    softmax_jacobian,
    the_cat_sat,
)

# ---------------------------------------------------------------------------------------
# the worked example: the seed lesson's numbers
# ---------------------------------------------------------------------------------------

A = np.exp(1 / np.sqrt(2))


def test_worked_example_scores_are_the_lessons_table():
    ex = the_cat_sat()
    np.testing.assert_array_equal(scores(ex.Q, ex.K), [[1, 0, 1], [0, 1, 1], [1, 1, 2]])


def test_worked_example_scaled_row_sat():
    ex = the_cat_sat()
    np.testing.assert_allclose(scaled_scores(ex.Q, ex.K)[2].round(2), [0.71, 0.71, 1.41])


def test_worked_example_weights_match_the_lessons_rounded_rows():
    ex = the_cat_sat()
    _, w = attention(ex.Q, ex.K, ex.V)
    np.testing.assert_array_equal(
        w.round(2), [[0.40, 0.20, 0.40], [0.20, 0.40, 0.40], [0.25, 0.25, 0.50]]
    )


def test_worked_example_weights_match_closed_forms():
    ex = the_cat_sat()
    _, w = attention(ex.Q, ex.K, ex.V)
    np.testing.assert_allclose(w[0], np.array([A, 1, A]) / (2 * A + 1), rtol=0, atol=1e-12)
    np.testing.assert_allclose(w[1], np.array([1, A, A]) / (2 * A + 1), rtol=0, atol=1e-12)
    np.testing.assert_allclose(w[2], np.array([1, 1, A]) / (2 + A), rtol=0, atol=1e-12)


def test_worked_example_output_for_sat():
    ex = the_cat_sat()
    out, w = attention(ex.Q, ex.K, ex.V)
    # with the lesson's two-decimal weights the blend is exactly [1.25, 1.5]
    np.testing.assert_allclose(blend(w[2:].round(2), ex.V), [[1.25, 1.5]], atol=1e-12)
    # unrounded it is about [1.26, 1.50]
    np.testing.assert_array_equal(out[2].round(2), [1.26, 1.50])
    exact = (np.array([1, 0]) + np.array([0, 2]) + A * np.array([2, 2])) / (2 + A)
    np.testing.assert_allclose(out[2], exact, rtol=0, atol=1e-12)


def test_the_cat_sat_returns_fresh_arrays():
    ex = the_cat_sat()
    ex.Q[0, 0] = 99
    assert the_cat_sat().Q[0, 0] == 1
    assert ex.tokens == ("the", "cat", "sat") and ex.d_k == 2 and ex.n == 3


# ---------------------------------------------------------------------------------------
# each term on its own
# ---------------------------------------------------------------------------------------


def test_scaled_scores_divides_by_sqrt_of_key_dimension_not_query_count():
    rng = np.random.default_rng(0)
    Q, K = rng.normal(size=(3, 8)), rng.normal(size=(5, 8))
    np.testing.assert_allclose(scaled_scores(Q, K), Q @ K.T / np.sqrt(8))
    assert scaled_scores(Q, K).shape == (3, 5)


def test_attention_scale_false_is_unscaled():
    ex = the_cat_sat()
    np.testing.assert_allclose(
        attention(ex.Q, ex.K, ex.V, scale=False)[1], softmax(ex.Q @ ex.K.T)
    )


def test_softmax_is_row_wise_by_default():
    x = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 5.0]])
    w = softmax(x)
    np.testing.assert_allclose(w.sum(axis=-1), [1, 1])
    np.testing.assert_allclose(w[0], np.exp([1, 2, 3]) / np.exp([1, 2, 3]).sum())
    np.testing.assert_allclose(softmax(x, axis=0).sum(axis=0), [1, 1, 1])


def test_softmax_is_stable_for_scores_of_1000():
    w = softmax([1000.0, 1000.0, 999.0])
    e = np.exp([0.0, 0.0, -1.0])
    np.testing.assert_allclose(w, e / e.sum())


def test_softmax_is_stable_for_scores_of_1e300():
    np.testing.assert_array_equal(softmax([1e300, 1e300, 0.0]), [0.5, 0.5, 0.0])
    np.testing.assert_array_equal(softmax([[1e300, -1e300]]), [[1.0, 0.0]])


def test_softmax_gives_minus_inf_exactly_zero_weight():
    w = softmax([[1.0, -np.inf, 1.0]])
    assert w[0, 1] == 0.0
    np.testing.assert_allclose(w, [[0.5, 0.0, 0.5]])


def test_softmax_temperature_equals_dividing_scores():
    x = np.array([1.0, 2.0, 4.0])
    np.testing.assert_allclose(softmax(x, temperature=np.sqrt(64)), softmax(x / 8.0))


def test_causal_mask_is_lower_triangular():
    m = causal_mask(4)
    assert m.dtype == bool and m.shape == (4, 4)
    np.testing.assert_array_equal(m, np.tril(np.ones((4, 4), bool)))


def test_masked_attention_the_cannot_look_ahead():
    ex = the_cat_sat()
    _, w = attention(ex.Q, ex.K, ex.V, mask=causal_mask(3))
    assert w[0].tolist() == [1.0, 0.0, 0.0]
    assert w[1, 2] == 0.0
    np.testing.assert_allclose(w.sum(axis=-1), 1)


def test_row_entropy_bounds():
    n = 5
    assert row_entropy(np.full(n, 1 / n)) == pytest.approx(np.log(n))
    assert row_entropy(np.eye(n)).tolist() == [0.0] * n


def test_softmax_jacobian_matches_finite_differences():
    x = np.array([[0.3, -1.2, 2.0, 0.5]])
    J = softmax_jacobian(x)[0]
    h = 1e-6
    numeric = np.stack(
        [(softmax(x[0] + h * e) - softmax(x[0] - h * e)) / (2 * h) for e in np.eye(4)], axis=1
    )
    np.testing.assert_allclose(J, numeric, atol=1e-8)


def test_softmax_jacobian_vanishes_when_saturated():
    assert np.abs(softmax_jacobian([40.0, 0.0, 0.0])).max() < 1e-15
    assert np.abs(softmax_jacobian([0.0, 0.0, 0.0])).max() > 0.1


def test_leading_batch_and_head_dimensions_broadcast_like_matmul():
    rng = np.random.default_rng(1)
    Q = rng.normal(size=(2, 4, 3, 8))  # batch 2, 4 heads, 3 queries
    K = rng.normal(size=(4, 5, 8))  # the same keys for every batch item
    V = rng.normal(size=(4, 5, 6))
    out, w = attention(Q, K, V)
    assert out.shape == (2, 4, 3, 6) and w.shape == (2, 4, 3, 5)
    for b in range(2):
        for h in range(4):
            o, ww = attention(Q[b, h], K[h], V[h])
            np.testing.assert_allclose(out[b, h], o)
            np.testing.assert_allclose(w[b, h], ww)


def test_mask_broadcasts_over_batch():
    rng = np.random.default_rng(2)
    Q = rng.normal(size=(3, 4, 2))
    _out, w = attention(Q, Q, Q, mask=causal_mask(4))
    assert (w[:, np.triu_indices(4, 1)[0], np.triu_indices(4, 1)[1]] == 0).all()


# ---------------------------------------------------------------------------------------
# working in place on the n × n table: the same numbers, the caller's arrays untouched
# ---------------------------------------------------------------------------------------


def bare_attention(Q, K, V, mask=None):
    """The equation written out with numpy alone, each step on a new array."""
    s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    w = e / e.sum(axis=-1, keepdims=True)
    return w @ V, w


@pytest.mark.parametrize(
    ("q_shape", "k_shape", "v_shape"),
    [((50, 16), (70, 16), (70, 5)), ((2, 3, 9, 4), (3, 11, 4), (3, 11, 6))],
)
def test_attention_is_the_bare_expression_bit_for_bit(q_shape, k_shape, v_shape):
    rng = np.random.default_rng(3)
    Q, K, V = (rng.normal(size=s) * 3 for s in (q_shape, k_shape, v_shape))
    out, w = attention(Q, K, V)
    bare_out, bare_w = bare_attention(Q, K, V)
    np.testing.assert_array_equal(w, bare_w)
    np.testing.assert_array_equal(out, bare_out)
    np.testing.assert_array_equal(scaled_scores(Q, K), Q @ np.swapaxes(K, -1, -2) / np.sqrt(4 if
                                  len(q_shape) > 2 else 16))


def test_masked_attention_is_the_bare_expression_bit_for_bit():
    rng = np.random.default_rng(4)
    Q, K, V = (rng.normal(size=(2, 6, 3)) for _ in range(3))
    mask = causal_mask(6)
    out, w = attention(Q, K, V, mask=mask)
    bare_out, bare_w = bare_attention(Q, K, V, mask=mask)
    np.testing.assert_array_equal(w, bare_w)
    np.testing.assert_array_equal(out, bare_out)


def test_softmax_with_axis_and_temperature_is_the_formula_bit_for_bit():
    x = np.random.default_rng(5).normal(size=(4, 7)) * 10
    expected = np.exp((x - x.max(axis=0, keepdims=True)) / 2.5)
    expected = expected / expected.sum(axis=0, keepdims=True)
    np.testing.assert_array_equal(softmax(x, axis=0, temperature=2.5), expected)


def read_only(a):
    a = np.array(a, dtype=np.float64)
    a.flags.writeable = False  # any write into it raises ValueError
    return a


@pytest.mark.parametrize(
    "call",
    [
        lambda Q, K, V, W, M: softmax(Q),
        lambda Q, K, V, W, M: softmax(Q, axis=0, temperature=3.0),
        lambda Q, K, V, W, M: scores(Q, K),
        lambda Q, K, V, W, M: scaled_scores(Q, K),
        lambda Q, K, V, W, M: attention_weights(Q, K, mask=M),
        lambda Q, K, V, W, M: blend(W, V),
        lambda Q, K, V, W, M: attention(Q, K, V, mask=M),
        lambda Q, K, V, W, M: attention(Q, K, V, scale=False),
    ],
)
def test_no_function_writes_to_the_callers_arrays(call):
    rng = np.random.default_rng(6)
    Q, K, V = (read_only(rng.normal(size=(5, 5))) for _ in range(3))
    W = read_only(softmax(rng.normal(size=(5, 5))))
    M = causal_mask(5)
    M.flags.writeable = False
    result = call(Q, K, V, W, M)
    for r in result if isinstance(result, tuple) else (result,):
        assert r.flags.writeable and r.dtype == np.float64
        assert not any(np.shares_memory(r, a) for a in (Q, K, V, W, M))


def test_softmax_of_an_array_returns_a_new_array():
    x = np.array([[1.0, 2.0], [3.0, -np.inf]])
    before = x.copy()
    w = softmax(x)
    w[0, 0] = 99.0
    np.testing.assert_array_equal(x, before)


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.float16])
def test_other_dtypes_are_computed_in_float64(dtype):
    rng = np.random.default_rng(7)
    Q, K, V = ((rng.normal(size=(4, 3)) * 4).astype(dtype) for _ in range(3))
    kept = [a.copy() for a in (Q, K, V)]
    out, w = attention(Q, K, V)
    assert out.dtype == w.dtype == np.float64
    ref_out, ref_w = attention(*(a.astype(np.float64) for a in (Q, K, V)))
    np.testing.assert_array_equal(w, ref_w)
    np.testing.assert_array_equal(out, ref_out)
    for a, b in zip((Q, K, V), kept, strict=True):
        np.testing.assert_array_equal(a, b)
        assert a.dtype == dtype


# The inputs are checked for finiteness, not the n × n scores; scores that overflow from
# finite inputs are still caught, through the row maxima the softmax computes anyway
# (numpy's matmul also warns about the overflow, as it always did).


def overflow_warning():
    return pytest.warns(RuntimeWarning, match="overflow encountered in matmul")


def test_scores_overflowing_to_plus_inf_are_reported():
    message = ("x must hold finite scores or -inf for hidden entries (got +inf in an array "
               "of shape (1, 2))")
    with overflow_warning(), raises(message):
        attention([[1e200]], [[1e200], [1.0]], [[1.0], [2.0]])


def test_scores_overflowing_to_minus_inf_in_every_key_are_reported():
    message = ("x has a slice along axis -1 that is all -inf (at index (0,) of the other "
               "axes): every entry is hidden, so softmax would compute 0/0 = NaN")
    with overflow_warning(), raises(message):
        attention([[1e200]], [[-1e200]], [[1.0]])


def test_a_masked_key_may_hold_a_score_that_overflowed():
    Q = K = np.array([[1.0], [1e200]])  # scores[1, 1] = 1e400 overflows to +inf
    mask = np.array([[True, True], [True, False]])
    with overflow_warning():
        w = attention_weights(Q, K, mask=mask)
    np.testing.assert_array_equal(w, [[0.0, 1.0], [1.0, 0.0]])


@pytest.mark.parametrize(
    "mask",
    [
        np.array(True),
        np.array([True, False, True, True]),
        np.array([[True, False, True, True]]),
        np.array([[True], [True], [True]]),
    ],
    ids=["scalar", "keys only", "one row", "one column"],
)
def test_masks_of_smaller_shape_broadcast_like_the_full_mask(mask):
    rng = np.random.default_rng(8)
    Q, K = rng.normal(size=(3, 2)), rng.normal(size=(4, 2))
    full = np.broadcast_to(mask, (3, 4))
    np.testing.assert_array_equal(
        attention_weights(Q, K, mask=mask), attention_weights(Q, K, mask=full.copy())
    )
    assert (attention_weights(Q, K, mask=mask)[~full] == 0).all()


def test_a_mask_hiding_every_key_is_reported_whatever_its_shape():
    with raises("mask hides every key from query row 0 (mask row is all False)"):
        attention_weights(np.ones((3, 2)), np.ones((4, 2)), mask=np.zeros(4, dtype=bool))
    with raises("mask hides every key from query row 0 (mask row is all False)"):
        attention_weights(np.ones((3, 2)), np.ones((4, 2)), mask=np.array(False))


def test_a_shared_mask_names_the_batch_index_of_the_hidden_row():
    mask = np.array([[True, False, False], [False, False, False], [True, True, True]])
    with raises("mask hides every key from query row 1 in batch index (0,) (mask row is all "
                "False)"):
        attention(np.ones((2, 3, 2)), np.ones((3, 2)), np.ones((3, 2)), mask=mask)


# ---------------------------------------------------------------------------------------
# bad input: a clear message naming the argument, what was expected and what arrived
# ---------------------------------------------------------------------------------------


def raises(match: str):
    return pytest.raises(AttentionInputError, match=re.escape(match))


def test_error_class_is_a_value_error():
    assert issubclass(AttentionInputError, ValueError)


def test_mismatched_d_k_message():
    with raises("K has d_k=3 columns but Q has d_k=2 (Q shape (3, 2), K shape (4, 3))"):
        scores(np.ones((3, 2)), np.ones((4, 3)))
    with raises("K has d_k=3 columns but Q has d_k=2"):
        attention(np.ones((3, 2)), np.ones((4, 3)), np.ones((4, 1)))


def test_mismatched_n_k_between_K_and_V_message():
    with raises("V has 3 rows but K has n_k=4 (K shape (4, 2), V shape (3, 5))"):
        attention(np.ones((2, 2)), np.ones((4, 2)), np.ones((3, 5)))
    with raises("V has 2 rows but the weights have n_k=3 columns"):
        blend(np.ones((1, 3)) / 3, np.ones((2, 2)))


def test_wrong_mask_shape_message():
    with raises("mask of shape (2, 2) does not broadcast to the weights' shape (3, 3)"):
        attention(np.ones((3, 2)), np.ones((3, 2)), np.ones((3, 2)), mask=causal_mask(2))


def test_non_boolean_mask_message():
    with raises("mask must be a boolean array (True = may attend, False = hidden), got dtype"):
        attention(np.ones((2, 2)), np.ones((2, 2)), np.ones((2, 2)), mask=np.tril(np.ones((2, 2))))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("which", ["Q", "K", "V"])
def test_non_finite_inputs_message(bad, which):
    args = {n: np.ones((2, 2)) for n in "QKV"}
    args[which][1, 0] = bad
    with raises(f"{which} must hold finite numbers (got 1 non-finite entry, the first is {bad} "
                "at index (1, 0)"):
        attention(args["Q"], args["K"], args["V"])


@pytest.mark.parametrize(
    ("Q", "K", "V", "message"),
    [
        (np.ones((0, 2)), np.ones((3, 2)), np.ones((3, 2)), "Q has no rows (n_q = 0)"),
        (np.ones((2, 2)), np.ones((0, 2)), np.ones((0, 2)), "K has no rows (n_k = 0)"),
        (np.ones((2, 0)), np.ones((3, 0)), np.ones((3, 2)), "Q has no columns (d_k = 0)"),
    ],
)
def test_empty_sequences_message(Q, K, V, message):
    with raises(message):
        attention(Q, K, V)


def test_one_dimensional_input_message():
    with raises("Q must have at least 2 dimensions, shape (..., n_q, d_k) (got shape (2,))"):
        scores([1.0, 0.0], [[1.0, 0.0]])


def test_not_numbers_message():
    with raises("Q must be an array of numbers of shape (..., n_q, d_k) (got list"):
        scores([["a", "b"]], [[1.0, 0.0]])


def test_fully_masked_row_is_explained_not_nan():
    mask = np.array([[True, False], [False, False]])
    with raises("mask hides every key from query row 1 (mask row is all False): softmax over "
                "nothing is 0/0 = NaN"):
        attention(np.ones((2, 2)), np.ones((2, 2)), np.ones((2, 2)), mask=mask)


def test_softmax_all_minus_inf_row_is_explained():
    with raises("x has a slice along axis -1 that is all -inf (at index (1,) of the other axes)"):
        softmax([[0.0, 1.0], [-np.inf, -np.inf]])


@pytest.mark.parametrize(
    ("x", "message"),
    [
        ([1.0, np.nan], "got NaN"),
        ([1.0, np.inf], "got +inf"),
    ],
)
def test_softmax_rejects_nan_and_plus_inf(x, message):
    with raises(message):
        softmax(x)


def test_softmax_axis_out_of_range_message():
    with raises("axis 2 is out of range for x with 2 dimensions (allowed: -2 to 1"):
        softmax(np.ones((2, 3)), axis=2)


def test_softmax_temperature_must_be_positive():
    with raises("temperature must be a positive finite number (got 0)"):
        softmax([1.0, 2.0], temperature=0)


def test_causal_mask_needs_positive_int():
    with raises("n must be a positive integer number of tokens (got 0)"):
        causal_mask(0)
    with raises("n must be a positive integer number of tokens (got 2.5)"):
        causal_mask(2.5)


def test_batch_dimensions_that_do_not_broadcast_message():
    with raises("the leading (batch/head) dimensions of Q, K must broadcast like numpy's matmul "
                "(got Q shape (2, 3, 4), K shape (3, 3, 4))"):
        scores(np.ones((2, 3, 4)), np.ones((3, 3, 4)))


def test_row_entropy_rejects_rows_not_summing_to_one():
    with raises("each row of weights must sum to 1 (got a row summing to 2.0)"):
        row_entropy([[1.0, 1.0]])


# ---------------------------------------------------------------------------------------
# the laws the lessons teach, as property tests
# ---------------------------------------------------------------------------------------

finite = st.floats(-30, 30, allow_nan=False, allow_infinity=False)


@st.composite
def qkv(draw):
    n_q = draw(st.integers(1, 6))
    n_k = draw(st.integers(1, 6))
    d_k = draw(st.integers(1, 5))
    d_v = draw(st.integers(1, 4))
    Q = draw(hnp.arrays(np.float64, (n_q, d_k), elements=finite))
    K = draw(hnp.arrays(np.float64, (n_k, d_k), elements=finite))
    V = draw(hnp.arrays(np.float64, (n_k, d_v), elements=finite))
    return Q, K, V


@settings(max_examples=100, deadline=None)
@given(qkv())
def test_rows_of_weights_sum_to_one(args):
    Q, K, V = args
    _, w = attention(Q, K, V)
    assert (w >= 0).all()
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, atol=1e-12)


@settings(max_examples=100, deadline=None)
@given(
    hnp.arrays(np.float64, st.tuples(st.integers(1, 5), st.integers(1, 7)), elements=finite),
    st.floats(-1e3, 1e3),
)
def test_softmax_unchanged_by_adding_a_constant_to_a_row(x, c):
    np.testing.assert_allclose(softmax(x + c), softmax(x), atol=1e-10)


@settings(max_examples=100, deadline=None)
@given(qkv(), st.randoms(use_true_random=False))
def test_permuting_tokens_permutes_outputs(args, rnd):
    Q, K, V = args
    n = min(Q.shape[0], K.shape[0])
    Q, K, V = Q[:n], K[:n], V[:n]
    perm = np.array(rnd.sample(range(n), n))
    out, w = attention(Q, K, V)
    out_p, w_p = attention(Q[perm], K[perm], V[perm])
    np.testing.assert_allclose(out_p, out[perm], atol=1e-9)
    np.testing.assert_allclose(w_p, w[perm][:, perm], atol=1e-12)


@settings(max_examples=100, deadline=None)
@given(qkv(), st.integers(0, 2**32 - 1))
def test_every_output_lies_in_the_convex_hull_of_the_values(args, seed):
    Q, K, V = args
    out, _ = attention(Q, K, V)
    # a point is in the convex hull iff, along every direction, it is no further out than
    # the furthest vertex: check many random directions plus the coordinate axes
    dirs = np.random.default_rng(seed).normal(size=(64, V.shape[1]))
    dirs = np.vstack([dirs, np.eye(V.shape[1]), -np.eye(V.shape[1])])
    reach = (V @ dirs.T).max(axis=0)
    tol = 1e-9 * (1 + np.abs(V).max())
    assert ((out @ dirs.T) <= reach + tol).all()


@settings(max_examples=100, deadline=None)
@given(qkv(), st.integers(0, 2**32 - 1))
def test_masked_weights_are_exactly_zero(args, seed):
    Q, K, V = args
    rng = np.random.default_rng(seed)
    mask = rng.random((Q.shape[0], K.shape[0])) < 0.6
    mask[np.arange(Q.shape[0]), rng.integers(0, K.shape[0], Q.shape[0])] = True  # no empty row
    _, w = attention(Q, K, V, mask=mask)
    assert (w[~mask] == 0.0).all()
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, atol=1e-12)
