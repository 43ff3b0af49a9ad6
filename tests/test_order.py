"""Tests for course_lib.order: permutations, the equivariance law, positions that break it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from course_lib import AttentionInputError, attention, the_cat_sat
from course_lib.order import (
    as_permutation,
    attention_in_order,
    equivariance_gap,
    permute_rows,
    sentence_orders,
    sinusoidal_positions,
)

finite = st.floats(-30, 30, allow_nan=False, allow_infinity=False)


@st.composite
def sentence_and_order(draw):
    """Q, K, V of one sentence (n tokens) and a random new order of its tokens."""
    n = draw(st.integers(1, 7))
    d_k = draw(st.integers(1, 5))
    d_v = draw(st.integers(1, 4))
    Q = draw(hnp.arrays(np.float64, (n, d_k), elements=finite))
    K = draw(hnp.arrays(np.float64, (n, d_k), elements=finite))
    V = draw(hnp.arrays(np.float64, (n, d_v), elements=finite))
    order = draw(st.permutations(range(n)))
    return Q, K, V, np.array(order)


# ------------------------------------------------------------------------------ the law


@settings(max_examples=150, deadline=None)
@given(sentence_and_order())
def test_shuffling_the_tokens_shuffles_the_outputs_the_same_way(args):
    Q, K, V, order = args
    out, w = attention(Q, K, V)
    q, k, v = permute_rows(order, Q, K, V)
    out_p, w_p = attention(q, k, v)
    np.testing.assert_allclose(out_p, out[order], atol=1e-9)
    np.testing.assert_allclose(w_p, w[order][:, order], atol=1e-12)
    assert equivariance_gap(Q, K, V, order) < 1e-9


def test_with_positions_the_law_fails():
    """The tokens move, the places stay: the outputs no longer just move with the tokens."""
    _, _, out = attention_in_order(["the", "cat", "sat"], positions=True)
    _, _, out_p = attention_in_order(["sat", "cat", "the"], positions=True)
    assert np.abs(out_p - out[[2, 1, 0]]).max() > 0.3


# ------------------------------------------------------------------------------ positions


def test_positions_make_the_same_word_read_differently_by_place():
    _, _, a = attention_in_order(["cat", "sat"])
    _, _, b = attention_in_order(["sat", "cat"])
    np.testing.assert_allclose(a[0], b[1])  # no positions: cat's output, wherever it is
    _, _, a = attention_in_order(["cat", "sat"], positions=True)
    _, _, b = attention_in_order(["sat", "cat"], positions=True)
    np.testing.assert_allclose(a[0], [0.69, 2.0], atol=0.005)
    np.testing.assert_allclose(b[1], [1.29, 2.0], atol=0.005)


def test_attention_in_order_is_the_library_attention_on_shifted_rows():
    ex = the_cat_sat()
    q, w, out = attention_in_order(["sat", "the", "cat"], positions=True)
    rows = [2, 0, 1]
    p = sinusoidal_positions(3, 2)
    want_out, want_w = attention(ex.Q[rows] + p, ex.K[rows] + p, ex.V[rows])
    np.testing.assert_array_equal(q, ex.Q[rows] + p)
    np.testing.assert_array_equal(w, want_w)
    np.testing.assert_array_equal(out, want_out)


def test_sinusoidal_positions_follow_the_formula():
    p = sinusoidal_positions(5, 6)
    t = np.arange(5)[:, None]
    for i in range(3):
        freq = 1 / 10000 ** (2 * i / 6)
        np.testing.assert_allclose(p[:, 2 * i], np.sin(t[:, 0] * freq))
        np.testing.assert_allclose(p[:, 2 * i + 1], np.cos(t[:, 0] * freq))
    np.testing.assert_allclose(sinusoidal_positions(4, 2), np.c_[np.sin(np.arange(4)),
                                                                  np.cos(np.arange(4))])
    assert sinusoidal_positions(3, 1).shape == (3, 1)  # odd d: the last column is a sine
    assert len({tuple(r) for r in sinusoidal_positions(8, 2).round(6)}) == 8  # all differ


# ------------------------------------------------------------------------------ helpers


def test_permute_rows_moves_rows_of_every_array_and_copies():
    X = np.arange(6.0).reshape(3, 2)
    Y = np.arange(9.0).reshape(3, 3)
    a, b = permute_rows([1, 2, 0], X, Y)
    np.testing.assert_array_equal(a, X[[1, 2, 0]])
    np.testing.assert_array_equal(b, Y[[1, 2, 0]])
    a[0, 0] = 99
    assert X[1, 0] == 2.0  # the caller's array is untouched
    batched = np.arange(12.0).reshape(2, 3, 2)  # rows are axis -2
    (c,) = permute_rows([2, 0, 1], batched)
    np.testing.assert_array_equal(c, batched[:, [2, 0, 1]])


def test_sentence_orders_lists_every_order_once_original_first():
    orders = sentence_orders(["the", "cat", "sat"])
    assert len(orders) == len(set(orders)) == 6 and orders[0] == "the cat sat"


@pytest.mark.parametrize(("call", "message"), [
    (lambda: as_permutation([0, 0, 1], 3),
     r"order must use each of 0 … 2 exactly once \(got \[0, 0, 1\]: 0 twice, 2 missing\)"),
    (lambda: as_permutation([0, 1, 5], 3), r"5 out of range"),
    (lambda: as_permutation([0, 1], 3), r"order must be 3 whole numbers.*got \[0, 1\]"),
    (lambda: as_permutation([0.0, 1.0], 2), r"order must be 2 whole numbers"),
    (lambda: as_permutation([0], 0), r"n must be a positive integer"),
    (lambda: permute_rows([0, 1], np.ones((2, 2)), np.ones((3, 2))),
     r"array 0 has 2, array 1 has 3"),
    (lambda: permute_rows([0, 1], np.ones(2)), r"array 0 must have one row per token"),
    (lambda: permute_rows([0]), r"at least one array"),
    (lambda: sinusoidal_positions(0, 2), r"n must be a positive integer \(got 0\)"),
    (lambda: sinusoidal_positions(3, 2, base=1.0), r"base must be a finite number greater"),
    (lambda: sentence_orders(["a", "a"]), r"distinct words"),
    (lambda: attention_in_order(["cat", "dog"]), r"words must be distinct tokens .*'dog'"),
    (lambda: attention_in_order(["cat", "cat"]), r"words must be distinct tokens"),
])
def test_bad_input_gets_a_clear_error(call, message):
    with pytest.raises(AttentionInputError, match=message):
        call()
