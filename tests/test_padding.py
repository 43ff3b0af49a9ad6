"""course_lib/padding.py: a padded batch, and the key mask that makes it equal each sentence
alone (issue 44)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import course_lib as cl
from course_lib import padding


def test_the_masks_of_a_batch():
    np.testing.assert_array_equal(padding.padding_mask([3, 1], n=4),
                                  [[1, 1, 1, 0], [1, 0, 0, 0]])
    assert padding.key_mask([3, 1]).shape == (2, 1, 3)
    assert padding.key_mask([3, 1], heads=True).shape == (2, 1, 1, 3)
    np.testing.assert_array_equal(padding.key_mask([2, 3])[0, 0], [True, True, False])


@pytest.mark.parametrize("lengths, n, message", [
    ([], None, r"lengths must be one positive whole number of real tokens per sentence, "
               r"e\.g\. \[9, 8\] \(got \[\]\)"),
    ([3, 0], None, r"\(got \[3, 0\]\)"),
    ([2.5], None, r"\(got \[2\.5\]\)"),
    ([[2, 3]], None, r"\(got \[\[2, 3\]\]\)"),
    ([4, 2], 3, r"n must be a whole number of tokens at least the longest sentence's 4 "
                r"\(got 3\)"),
    ([4, 2], True, r"\(got True\)"),
])
def test_bad_lengths_are_named(lengths, n, message):
    with pytest.raises(cl.AttentionInputError, match=message):
        padding.padding_mask(lengths, n)


def test_pad_stacks_and_refuses_what_does_not_stack():
    out = padding.pad([np.ones((2, 3, 4)), 2 * np.ones((2, 1, 4))], value=-1.0)
    assert out.shape == (2, 2, 3, 4)
    assert (out[1, :, 0] == 2).all() and (out[1, :, 1:] == -1).all()
    with pytest.raises(cl.AttentionInputError, match=r"differ only in n_b \(got shapes "
                                                     r"\[\(2, 4\), \(2, 5\)\]\)"):
        padding.pad([np.ones((2, 4)), np.ones((2, 5))])
    with pytest.raises(cl.AttentionInputError, match=r"\(got shapes \[\]\)"):
        padding.pad([])


@settings(max_examples=40, deadline=None)
@given(lengths=st.lists(st.integers(1, 6), min_size=1, max_size=4),
       extra=st.integers(0, 2), fill=st.floats(-50, 50), seed=st.integers(0, 2**16))
def test_with_the_key_mask_every_real_row_is_its_sentence_alone(lengths, extra, fill, seed):
    """A law: whatever the padding holds and however long, the real queries' weights and
    outputs are those of each sentence alone, and the padding gets weight exactly 0."""
    rng = np.random.default_rng(seed)
    n = max(lengths) + extra
    alone = [rng.normal(size=(3, length, 4)) for length in lengths]  # (Q, K, V) per sentence
    Q, K, V = (padding.pad([a[i] for a in alone], n, value=fill) for i in range(3))
    out, w = cl.attention(Q, K, V, mask=padding.key_mask(lengths, n))
    for b, (q, k, v) in enumerate(alone):
        m = len(q)
        want_out, want_w = cl.attention(q, k, v)
        np.testing.assert_allclose(out[b, :m], want_out, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(w[b, :m, :m], want_w, rtol=1e-12, atol=1e-15)
        assert (w[b, :, m:] == 0).all() and np.isfinite(w[b]).all()


def test_without_the_mask_the_padding_moves_the_real_rows():
    rng = np.random.default_rng(0)
    q, k, v = rng.normal(size=(3, 2, 4))
    Q, K, V = (padding.pad([x], 4, value=1.0) for x in (q, k, v))
    unmasked, _ = cl.attention(Q, K, V)
    assert np.abs(unmasked[0, :2] - cl.attention(q, k, v)[0]).max() > 0.1
