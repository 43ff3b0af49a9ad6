"""Tests for course_lib.heads: split, attend per head, concatenate, W_O (lesson 09)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from course_lib import AttentionInputError, attention, causal_mask, scaled_scores
from course_lib.explore.describe import describe_heads
from course_lib.explore.plots import head_maps
from course_lib.heads import (
    heads_example,
    merge_heads,
    multi_head_attention,
    split_heads,
)
from course_lib.projections import project

small = st.floats(-2, 2, allow_nan=False, allow_infinity=False)


@st.composite
def layer(draw, h=None):
    """X of shape (batch, n, d_model) and the four matrices of a layer with h heads."""
    h = draw(st.sampled_from([1, 2, 3])) if h is None else h
    d_k = draw(st.integers(1, 3))
    d_model = h * d_k
    n, batch = draw(st.integers(1, 4)), draw(st.integers(1, 2))
    X = draw(hnp.arrays(np.float64, (batch, n, d_model), elements=small))
    Ws = [draw(hnp.arrays(np.float64, (d_model, d_model), elements=small)) for _ in range(4)]
    return h, X, Ws


@settings(max_examples=60, deadline=None)
@given(layer(h=1))
def test_one_head_is_single_head_attention(args):
    _, X, (W_Q, W_K, W_V, W_O) = args
    out, w = multi_head_attention(X, W_Q, W_K, W_V, W_O, h=1)
    Q, K, V = project(X, W_Q, W_K, W_V)
    single, single_w = attention(Q, K, V)
    np.testing.assert_allclose(out, single @ W_O, atol=1e-9)
    np.testing.assert_allclose(w[..., 0, :, :], single_w, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(layer())
def test_each_head_is_attention_on_its_own_columns(args):
    h, X, (W_Q, W_K, W_V, W_O) = args
    out, w = multi_head_attention(X, W_Q, W_K, W_V, W_O, h=h)
    Q, K, V = project(X, W_Q, W_K, W_V)
    d_k = Q.shape[-1] // h
    cols = [slice(i * d_k, (i + 1) * d_k) for i in range(h)]
    per_head = [attention(Q[..., c], K[..., c], V[..., c]) for c in cols]
    for i, (_, wi) in enumerate(per_head):
        np.testing.assert_allclose(w[..., i, :, :], wi, atol=1e-12)
    concat = np.concatenate([o for o, _ in per_head], axis=-1)
    np.testing.assert_allclose(out, concat @ W_O, atol=1e-9)
    np.testing.assert_allclose(w.sum(axis=-1), 1.0)


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 3), st.integers(1, 3),
       st.data())
def test_split_and_merge_are_inverse(batch, n, h, d_k, data):
    x = data.draw(hnp.arrays(np.float64, (batch, n, h * d_k), elements=small))
    heads = split_heads(x, h)
    assert heads.shape == (batch, h, n, d_k)
    np.testing.assert_array_equal(merge_heads(heads), x)
    np.testing.assert_array_equal(split_heads(merge_heads(heads), h), heads)
    for i in range(h):
        np.testing.assert_array_equal(heads[:, i], x[..., i * d_k:(i + 1) * d_k])


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 3), st.integers(1, 3), st.integers(1, 4), st.integers(1, 4),
       st.integers(1, 4), st.data())
def test_scaled_scores_of_heads_are_each_tables_own(b, h, n_q, n_k, d_k, data):
    Q = data.draw(hnp.arrays(np.float64, (b, h, n_q, d_k), elements=small))
    K = data.draw(hnp.arrays(np.float64, (b, h, n_k, d_k), elements=small))
    got = scaled_scores(Q, K)  # the library's one function, on (batch, heads, n, d_k)
    assert got.shape == (b, h, n_q, n_k)
    for i in range(b):
        for j in range(h):
            np.testing.assert_allclose(got[i, j], scaled_scores(Q[i, j], K[i, j]), atol=1e-12)


def test_dot_t_on_heads_is_not_the_transpose_the_lesson_needs():
    """The lesson's warning, as a fact: on 3-D input .T reverses every axis."""
    K = np.arange(8.0).reshape(2, 2, 2)
    assert K.T.shape == K.shape  # so Q @ K.T raises nothing
    assert not np.array_equal(K.T, np.swapaxes(K, -1, -2))


def test_the_example_has_two_different_heads():
    ex = heads_example()
    out, w = multi_head_attention(ex.X, ex.W_Q, ex.W_K, ex.W_V, ex.W_O, h=2)
    assert out.shape == (3, 4) and w.shape == (2, 3, 3)
    np.testing.assert_allclose(w[0, 2].round(2), [0.25, 0.50, 0.25])  # sat -> cat
    assert (np.argmax(w[1], axis=-1) == 0).all()  # every token -> the
    # the head-0 slice is lesson 08's projection
    from course_lib.projections import embedded_example
    old = embedded_example()
    np.testing.assert_array_equal((ex.X @ ex.W_Q)[:, :2], old.X @ old.W_Q)
    np.testing.assert_array_equal((ex.X @ ex.W_K)[:, :2], old.X @ old.W_K)
    np.testing.assert_array_equal((ex.X @ ex.W_V)[:, :2], old.X @ old.W_V)
    # one head of d_k = 4: the relations add up and sat looks most at the
    _, w1 = multi_head_attention(ex.X, ex.W_Q, ex.W_K, ex.W_V, ex.W_O, h=1)
    assert np.argmax(w1[0, 2]) == 0


def test_a_causal_mask_applies_to_every_head():
    ex = heads_example()
    _, w = multi_head_attention(ex.X, ex.W_Q, ex.W_K, ex.W_V, ex.W_O, h=2,
                                mask=causal_mask(3))
    assert (np.triu(w[0], 1) == 0).all() and (np.triu(w[1], 1) == 0).all()
    np.testing.assert_allclose(w.sum(axis=-1), 1.0)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: split_heads(np.ones((3, 4)), 3),
         r"^h=3 heads must divide d_model=4 evenly, d_k = d_model / h \(got x of shape "
         r"\(3, 4\)\); try h = 1, 2 or 4$"),
        (lambda: split_heads(np.ones((3, 5)), 2), r"d_model=5 .*try h = 1 or 5$"),
        (lambda: split_heads(np.ones(4), 2), r"at least 2 dimensions \(got shape \(4,\)\)"),
        (lambda: split_heads(np.ones((3, 4)), 0), r"^h must be a positive whole number"),
        (lambda: split_heads(np.ones((3, 4)), True), r"^h must be a positive whole number"),
        (lambda: merge_heads(np.ones((3, 4))), r"\(\.\.\., h, n, d_k\), at least 3 dim"),
        (lambda: multi_head_attention(np.ones((3, 4)), np.eye(4), np.eye(4), np.eye(4),
                                      np.eye(3), 2),
         r"^W_O must have shape \(4, d_model_out\), 4 rows, one per column of the "
         r"concatenated heads \(got shape \(3, 3\)\)$"),
        (lambda: multi_head_attention(np.ones((3, 4)), np.eye(3), np.eye(4), np.eye(4),
                                      np.eye(4), 2), r"^W_Q must have d_model=4 rows"),
        (lambda: scaled_scores(np.ones((2, 3, 2)), np.ones((2, 3, 4))),
         r"K has d_k=4 columns but Q has d_k=2"),
        (lambda: describe_heads(np.ones((3, 3)), "abc"), r"\(h, n, n\)"),
    ],
)
def test_bad_shapes_say_what_was_expected_and_what_arrived(call, message):
    with pytest.raises(AttentionInputError, match=message):
        call()


def test_the_figure_says_what_each_head_does():
    ex = heads_example()
    for h, caption in [
        (2, "Two heads, two patterns: in head 0 'sat' → 'cat'; in head 1 every token looks "
            "most at 'the'."),
        (1, "One head, one map: every token looks most at 'the'."),
        (4, "4 heads, 3 different patterns of where tokens look most."),
    ]:
        _, w = multi_head_attention(ex.X, ex.W_Q, ex.W_K, ex.W_V, ex.W_O, h=h)
        fig = head_maps(w, ex.tokens)
        assert fig.caption == caption
        assert len([a for a in fig.figure.axes if a.get_title().startswith("head ")]) == h
        assert fig.description.startswith(f"{h} head")
    assert describe_heads(w, ex.tokens).endswith(
        "head 0: every token spreads evenly; head 1: 'the' → all evenly, 'cat' → 'cat', "
        "'sat' → 'cat'; head 2: every token looks most at 'the'; head 3: every token spreads "
        "evenly.")
