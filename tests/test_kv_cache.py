"""Tests for course_lib.kv_cache: one token at a time equals full causal attention, row by row."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course_lib import AttentionInputError, KVCache, attention, causal_mask


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(1, 3), max_size=2), st.integers(1, 40), st.integers(1, 6),
       st.integers(1, 5), st.integers(0, 40), st.floats(0.1, 10.0),
       st.integers(0, 2**32 - 1))
def test_each_step_is_a_row_of_causal_attention(lead, n, d_k, d_v, prompt, spread, seed):
    """A prompt of some tokens at once (extend), then one token at a time (step)."""
    rng = np.random.default_rng(seed)
    lead = tuple(lead)
    Q, K = (rng.uniform(-spread, spread, size=(*lead, n, d_k)) for _ in range(2))
    V = rng.uniform(-10, 10, size=(*lead, n, d_v))
    full = attention(Q, K, V, mask=causal_mask(n))[0]
    cache = KVCache()
    prompt = min(prompt, n - 1)
    if prompt:
        cache.extend(K[..., :prompt, :], V[..., :prompt, :])
    for i in range(prompt, n):
        row = cache.step(Q[..., i, :], K[..., i, :], V[..., i, :])
        assert row.shape == (*lead, d_v)
        np.testing.assert_allclose(row, full[..., i, :], rtol=0, atol=1e-12)
    assert len(cache) == n
    np.testing.assert_array_equal(cache.keys, K)
    np.testing.assert_array_equal(cache.values, V)


@settings(max_examples=50, deadline=None)
@given(st.integers(2, 30), st.integers(1, 29), st.integers(0, 2**32 - 1))
def test_appending_tokens_changes_no_earlier_row(n, m, seed):
    """Why the cache works: causal attention over the first m tokens is the first m rows."""
    m = min(m, n - 1)
    rng = np.random.default_rng(seed)
    Q, K, V = (rng.normal(size=(n, 3)) * 2 for _ in range(3))
    short = attention(Q[:m], K[:m], V[:m], mask=causal_mask(m))[0]
    full = attention(Q, K, V, mask=causal_mask(n))[0]
    np.testing.assert_allclose(full[:m], short, rtol=0, atol=1e-12)
    without_mask = attention(Q, K, V)[0]  # without the mask the earlier rows do change
    assert np.abs(without_mask[:m] - short).max() > 1e-12


def test_attend_holds_one_row_of_scores_not_a_table():
    """Memory of one new token at n = 4096: O(n) (a 1 × n row), far below the 8 n² table."""
    rng = np.random.default_rng(0)
    n, d = 4096, 8
    cache = KVCache()
    cache.extend(rng.normal(size=(n, d)), rng.normal(size=(n, d)))
    q = rng.normal(size=d)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        cache.attend(q)
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert peak < 4 * 8 * n * d  # a few arrays of n numbers; the table would be 8 n² = 128 MiB


def test_appending_one_at_a_time_doubles_the_buffers():
    """Amortised O(d) per append: 1000 appends reallocate about log2(1000/16) + 1 times."""
    cache = KVCache()
    capacities = set()
    for i in range(1000):
        cache.append([float(i), 1.0], [2.0])
        capacities.add(cache._k.shape[-2])
    assert len(capacities) <= 8
    assert cache.keys[:, 0].tolist() == [float(i) for i in range(1000)]


def test_views_are_read_only():
    cache = KVCache()
    cache.append([1.0], [2.0])
    with pytest.raises(ValueError, match="read-only"):
        cache.keys[0, 0] = 5.0


def _filled():
    cache = KVCache()
    cache.extend(np.ones((2, 3, 4)), np.ones((2, 3, 5)))  # 2 heads, 3 tokens
    return cache


@pytest.mark.parametrize(
    ("action", "message"),
    [
        (lambda c: c.append(np.ones((2, 3)), np.ones((2, 5))),
         r"k must have shape \(2, 4\) like the keys already in the cache \(got shape \(2, 3\)\)"),
        (lambda c: c.append(np.ones((3, 4)), np.ones((3, 5))),
         r"k must have shape \(2, 4\) like the keys already in the cache \(got shape \(3, 4\)\)"),
        (lambda c: c.append(np.ones((2, 4)), np.ones((2, 6))),
         r"v must have shape \(2, 5\) like the values"),
        (lambda c: c.append(np.ones((2, 4)), np.ones((3, 5))),
         "k and v must have the same leading dimensions"),
        (lambda c: c.extend(np.ones((2, 1, 3)), np.ones((2, 1, 5))),
         r"K must have shape \(2, m, 4\)"),
        (lambda c: c.append(np.full((2, 4), np.inf), np.ones((2, 5))),
         "k must hold finite numbers"),
        (lambda c: c.append(np.ones((2, 0)), np.ones((2, 5))), "at least one number per token"),
        (lambda c: c.attend(np.ones(4)), r"q must have shape \(2, 4\)"),
        (lambda c: c.extend(np.ones(4), np.ones(4)), "K must have at least 2 dimensions"),
        (lambda c: KVCache().attend([1.0]), "the cache is empty"),
        (lambda c: KVCache().keys, "the cache is empty"),
    ],
)
def test_bad_input_gets_a_clear_error(action, message):
    with pytest.raises(AttentionInputError, match=message):
        action(_filled())


def test_a_refused_token_leaves_the_cache_as_it_was():
    cache = _filled()
    with pytest.raises(AttentionInputError):
        cache.append(np.ones((2, 4)), np.ones((2, 6)))
    assert len(cache) == 3
