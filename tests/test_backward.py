"""Tests for course_lib.backward: attention's backward pass against finite differences."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course_lib import AttentionInputError, attention, attention_backward, causal_mask
from course_lib.backward import numerical_gradient

# ---------------------------------------------------------------------------------------
# the reference: central finite differences of L = sum(dO * attention(Q, K, V))
# ---------------------------------------------------------------------------------------


def loss(Q, K, V, dO, mask, scale):
    """A scalar whose gradient with respect to the output is exactly dO."""
    return float((attention(Q, K, V, mask=mask, scale=scale)[0] * dO).sum())


def numerical_gradients(Q, K, V, dO, mask=None, scale=True, h=1e-6):
    """dQ, dK, dV by central differences of :func:`loss`, one input at a time."""
    arrays = [Q, K, V]

    def varying(which):
        def f(x):
            args = [x if i == which else a for i, a in enumerate(arrays)]
            return loss(*args, dO, mask, scale)
        return f

    return [numerical_gradient(varying(which), x, h) for which, x in enumerate(arrays)]


def assert_matches_finite_differences(Q, K, V, dO, mask=None, scale=True):
    got = attention_backward(Q, K, V, dO, mask, scale=scale)
    want = numerical_gradients(Q, K, V, dO, mask, scale)
    for name, g, w, x in zip("QKV", got, want, (Q, K, V), strict=True):
        assert g.shape == x.shape, name
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-7, err_msg=f"d{name}")


# ---------------------------------------------------------------------------------------
# property tests: random shapes, batched, masked, scaled or not
# ---------------------------------------------------------------------------------------

dims = st.integers(1, 4)
NO_BATCH = st.just(((), (), ()))


@st.composite
def problems(draw, batch_shapes=NO_BATCH):
    """Q, K, V, dO with random sizes and entries of moderate size (so softmax is not one-hot)."""
    n_q, n_k, d_k, d_v = draw(dims), draw(dims), draw(dims), draw(dims)
    bq, bk, bv = draw(batch_shapes)
    seed = draw(st.integers(0, 2**32 - 1))
    spread = draw(st.sampled_from([0.3, 1.0, 2.0]))
    rng = np.random.default_rng(seed)
    Q = spread * rng.standard_normal((*bq, n_q, d_k))
    K = spread * rng.standard_normal((*bk, n_k, d_k))
    V = rng.standard_normal((*bv, n_k, d_v))
    out_batch = np.broadcast_shapes(bq, bk, bv)
    dO = rng.standard_normal((*out_batch, n_q, d_v))
    return Q, K, V, dO, rng


@settings(max_examples=40, deadline=None)
@given(problems(), st.booleans())
def test_gradients_match_finite_differences(problem, scale):
    Q, K, V, dO, _ = problem
    assert_matches_finite_differences(Q, K, V, dO, scale=scale)


# leading dimensions, including ones that broadcast (a K shared by every head)
batch_shapes = st.sampled_from([
    ((2,), (2,), (2,)),
    ((2, 3), (2, 3), (2, 3)),
    ((2, 3), (3,), (1, 3)),
    ((3,), (), ()),
    ((), (2,), (2,)),
    ((2, 1), (1, 2), (2, 2)),
])


@settings(max_examples=25, deadline=None)
@given(problems(batch_shapes), st.booleans())
def test_batched_gradients_match_finite_differences(problem, scale):
    Q, K, V, dO, _ = problem
    assert_matches_finite_differences(Q, K, V, dO, scale=scale)


@settings(max_examples=30, deadline=None)
@given(problems(st.sampled_from([((), (), ()), ((2,), (2,), (2,))])))
def test_masked_gradients_match_and_hidden_keys_get_none(problem):
    Q, K, V, dO, rng = problem
    n_q, n_k = Q.shape[-2], K.shape[-2]
    mask = rng.random((n_q, n_k)) < 0.5
    mask[np.arange(n_q), rng.integers(0, n_k, n_q)] = True  # every query sees a key
    assert_matches_finite_differences(Q, K, V, dO, mask)
    # a key hidden from every query gets no gradient at all, whatever the others do
    hidden = ~mask.any(axis=0)
    _, dK, dV = attention_backward(Q, K, V, dO, mask)
    assert (dK[..., hidden, :] == 0).all() and (dV[..., hidden, :] == 0).all()


def test_a_masked_entry_moves_nothing_even_with_large_scores():
    """Rows with masked keys: changing a hidden key's score is invisible, so its dS is 0."""
    rng = np.random.default_rng(3)
    Q, K, V, dO = (rng.standard_normal(s) for s in ((4, 3), (4, 3), (4, 2), (4, 2)))
    K[3] *= 50  # a huge key that the causal mask hides from rows 0-2
    mask = causal_mask(4)
    dQ, dK, dV = attention_backward(Q, K, V, dO, mask)
    assert_matches_finite_differences(Q, K, V, dO, mask)
    # key 3 is seen by query 3 only: its gradients come from that row alone
    _, dK3, dV3 = attention_backward(Q[3:], K, V, dO[3:], mask[3:])
    np.testing.assert_allclose(dK[3], dK3[3])
    np.testing.assert_allclose(dV[3], dV3[3])
    # and query 0 sees key 0 only: its weight is 1 whatever its query, so no gradient
    assert (dQ[0] == 0).all()


def test_one_hot_rows_give_vanishing_query_gradients():
    """Saturated softmax: dQ goes to 0 while dV (= P^T dO) does not."""
    rng = np.random.default_rng(0)
    K = rng.standard_normal((8, 4))
    Q = 200 * K[:2]  # each query points hard at one key
    dO = rng.standard_normal((2, 3))
    dQ, _, dV = attention_backward(Q, K, rng.standard_normal((8, 3)), dO, scale=False)
    assert np.abs(dQ).max() < 1e-12
    assert np.abs(dV).max() > 0.1


def test_unscaled_gradient_is_sqrt_dk_times_the_scaled_one_at_the_same_scores():
    """dQ carries the factor 1/sqrt(d_k): with Q/sqrt(d_k) unscaled the scores are equal."""
    rng = np.random.default_rng(1)
    Q, K, V, dO = (rng.standard_normal(s) for s in ((3, 16), (5, 16), (5, 2), (3, 2)))
    dQ_scaled, dK_scaled, _ = attention_backward(Q, K, V, dO)
    dQ_raw, _, _ = attention_backward(Q / 4.0, K, V, dO, scale=False)
    _, dK_raw, _ = attention_backward(Q / 4.0, K, V, dO, scale=False)
    np.testing.assert_allclose(dQ_scaled, dQ_raw / 4.0)  # chain rule through Q/4
    np.testing.assert_allclose(dK_scaled, dK_raw)  # dS^T (Q/4) either way


def test_inputs_are_not_written_to():
    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal(s) for s in ((3, 2), (4, 2), (4, 2), (3, 2))]
    copies = [a.copy() for a in arrays]
    attention_backward(*arrays)
    for a, c in zip(arrays, copies, strict=True):
        np.testing.assert_array_equal(a, c)


# ---------------------------------------------------------------------------------------
# bad input: the messages of attention(), plus dO's own
# ---------------------------------------------------------------------------------------


def raises(match: str):
    return pytest.raises(AttentionInputError, match=re.escape(match))


def messages_of(call):
    try:
        call()
    except AttentionInputError as exc:
        return str(exc)
    raise AssertionError("no error raised")


ones = np.ones


@pytest.mark.parametrize(
    ("Q", "K", "V", "mask"),
    [
        (ones((3, 2)), ones((4, 3)), ones((4, 1)), None),  # d_k differs
        (ones((2, 2)), ones((4, 2)), ones((3, 5)), None),  # n_k differs between K and V
        (ones((3, 2)), ones((3, 2)), ones((3, 2)), causal_mask(2)),  # mask shape
        (ones((2, 2)), ones((2, 2)), ones((2, 2)), np.tril(ones((2, 2)))),  # mask dtype
        (ones((2, 2)), ones((2, 2)), ones((2, 2)), np.array([[True, False], [False, False]])),
        (ones((0, 2)), ones((3, 2)), ones((3, 2)), None),  # empty
        ([1.0, 0.0], ones((3, 2)), ones((3, 2)), None),  # one-dimensional
        ([["a", "b"]], ones((3, 2)), ones((3, 2)), None),  # not numbers
        (ones((2, 3, 4)), ones((3, 3, 4)), ones((3, 3, 4)), None),  # batch does not broadcast
        (np.array([[1.0, np.nan]]), ones((3, 2)), ones((3, 2)), None),  # non-finite
    ],
)
def test_bad_inputs_get_the_messages_of_attention(Q, K, V, mask):
    want = messages_of(lambda: attention(Q, K, V, mask=mask))
    try:  # dO of the output's shape where there is one, so Q, K, V or mask is the culprit
        dO = ones((*np.broadcast_shapes(np.shape(Q)[:-2], np.shape(V)[:-2]),
                   np.shape(Q)[-2], np.shape(V)[-1]))
    except (ValueError, IndexError):
        dO = ones((1, 1))
    got = messages_of(lambda: attention_backward(Q, K, V, dO, mask))
    assert got == want


def test_do_with_the_wrong_shape_is_named():
    with raises("dO must have the shape of the attention output, (..., n_q, d_v) = (3, 2) "
                "(got shape (3, 4)); it holds dL/dO, one number per output entry"):
        attention_backward(ones((3, 2)), ones((4, 2)), ones((4, 2)), ones((3, 4)))
    with raises("dO must have the shape of the attention output, (..., n_q, d_v) = (2, 3, 2) "
                "(got shape (3, 2))"):
        attention_backward(ones((2, 3, 2)), ones((4, 2)), ones((4, 2)), ones((3, 2)))


def test_non_finite_do_is_named():
    dO = ones((3, 2))
    dO[1, 1] = np.inf
    with raises("dO must hold finite numbers (got 1 non-finite entry, the first is inf at "
                "index (1, 1)"):
        attention_backward(ones((3, 2)), ones((4, 2)), ones((4, 2)), dO)
