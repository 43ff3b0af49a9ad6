"""Tests for course_lib.online_softmax: the streaming softmax equals the whole-row one."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course_lib import AttentionInputError, softmax
from course_lib.online_softmax import (
    online_softmax,
    online_softmax_finish,
    online_softmax_start,
    online_softmax_step,
)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 6), st.integers(1, 30), st.integers(1, 4), st.integers(1, 35),
       st.floats(0.1, 800.0), st.integers(0, 2**32 - 1))
def test_streaming_equals_softmax_then_blend(n_q, n_k, d_v, block_k, spread, seed):
    """Any block size (dividing n_k or not) and scores up to ~±2400: no overflow, same numbers."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n_q, n_k)) * spread
    v = rng.normal(size=(n_k, d_v))
    got = online_softmax(x, v, block_k=block_k)
    np.testing.assert_allclose(got, softmax(x) @ v, rtol=0, atol=1e-12)


def test_identity_values_give_the_weights_and_hidden_keys_get_zero():
    x = np.array([[0.5, -np.inf, 1.3, 0.1], [-np.inf, -np.inf, -np.inf, 2.0]])
    np.testing.assert_allclose(online_softmax(x, np.eye(4), block_k=2), softmax(x),
                               rtol=0, atol=1e-15)


def test_state_after_each_block_is_the_definition():
    """m is the running max, l = sum exp(s - m), o = sum exp(s - m) v over the keys so far."""
    rng = np.random.default_rng(3)
    x, v = rng.normal(size=(3, 9)) * 4, rng.normal(size=(9, 2))
    state = online_softmax_start(3, 2)
    for start, stop in ((0, 2), (2, 5), (5, 9)):
        state = online_softmax_step(*state, x[:, start:stop], v[start:stop])
        seen = x[:, :stop]
        m = seen.max(axis=1)
        np.testing.assert_array_equal(state.running_max, m)
        e = np.exp(seen - m[:, None])
        np.testing.assert_allclose(state.running_sum, e.sum(axis=1), rtol=1e-14)
        np.testing.assert_allclose(state.partial_output, e @ v[:stop], rtol=1e-13, atol=1e-15)


def test_a_growing_max_rescales_sum_and_output():
    """The doctest's two blocks: the first block's sum and output are scaled by e^(1 - 3)."""
    first = online_softmax_step(*online_softmax_start(1, 1), [[1.0, 0.0]], [[10.0], [20.0]])
    second = online_softmax_step(*first, [[3.0]], [[30.0]])
    c = np.exp(1.0 - 3.0)
    np.testing.assert_allclose(second.running_sum, c * first.running_sum + 1.0)
    np.testing.assert_allclose(second.partial_output, c * first.partial_output + 30.0)


def test_step_does_not_write_to_its_inputs():
    state = online_softmax_step(*online_softmax_start(2, 1), [[0.5], [4.0]], [[3.0]])
    s, v = np.array([[1.0, 2.0], [3.0, -np.inf]]), np.array([[1.0], [2.0]])
    inputs = (*state, s, v)
    before = [a.copy() for a in inputs]
    online_softmax_step(*inputs)
    for a, b in zip(inputs, before, strict=True):
        np.testing.assert_array_equal(a, b)


def test_batch_dimensions_of_the_values_broadcast_into_the_state():
    """One row of scores, two heads of values: the state takes the heads' shape."""
    v = np.array([[[1.0], [2.0]], [[3.0], [5.0]]])  # (2 heads, 2 keys, 1)
    state = online_softmax_step(*online_softmax_start(1, 1), [[0.0, 0.0]], v)
    np.testing.assert_allclose(online_softmax_finish(state), [[[1.5]], [[4.0]]])


def test_a_row_with_only_hidden_keys_so_far_keeps_its_start_state():
    state = online_softmax_step(*online_softmax_start(2, 1), [[-np.inf], [0.0]], [[5.0]])
    assert np.isneginf(state.running_max[0]) and state.running_sum[0] == 0
    assert not np.isnan(state.partial_output).any()
    with pytest.raises(AttentionInputError, match="at least one visible key"):
        online_softmax_finish(state)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((np.zeros(2), np.ones(2), np.zeros((2, 1)), [[np.nan, 0.0], [0.0, 0.0]], np.ones((2, 1))),
         "block_scores must hold finite scores or -inf"),
        ((np.zeros(2), np.ones(2), np.zeros((2, 1)), np.zeros((2, 3)), np.ones((2, 1))),
         "block_values has 2 rows but block_scores has b=3 columns"),
        ((np.zeros(3), np.ones(2), np.zeros((2, 1)), np.zeros((2, 2)), np.ones((2, 1))),
         r"running_max must end in shape \(2,\)"),
        ((np.zeros(2), np.ones(2), np.zeros((2, 4)), np.zeros((2, 2)), np.ones((2, 1))),
         r"partial_output must end in shape \(2, 1\)"),
        ((np.zeros(2), [1.0, np.inf], np.zeros((2, 1)), np.zeros((2, 2)), np.ones((2, 1))),
         "running_sum must hold finite numbers"),
    ],
)
def test_step_errors_name_the_argument(args, message):
    with pytest.raises(AttentionInputError, match=message):
        online_softmax_step(*args)


@pytest.mark.parametrize("block_k", [0, -1, 2.0, True, None])
def test_block_size_must_be_a_positive_integer(block_k):
    with pytest.raises(AttentionInputError, match="block_k must be a positive integer"):
        online_softmax(np.zeros((1, 3)), np.eye(3), block_k=block_k)
