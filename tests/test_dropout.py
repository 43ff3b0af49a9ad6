"""course_lib/dropout.py: dropout on the attention weights, training only (issue 44)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import course_lib as cl
from course_lib import dropout


def weights_and_values():
    ex = cl.the_cat_sat()
    return cl.attention_weights(ex.Q, ex.K), ex.V


def test_a_draw_zeros_some_weights_and_rescales_the_rest():
    w, _ = weights_and_values()
    dropped = dropout.attention_dropout(w, 0.25, np.random.default_rng(3))
    kept = dropped != 0
    assert 0 < kept.sum() < kept.size
    np.testing.assert_allclose(dropped[kept], w[kept] / 0.75, rtol=1e-15)


def test_on_average_the_output_is_unchanged_but_one_draw_does_not_sum_to_one():
    """Measured over 20,000 seeded draws: the mean output is the output without dropout to
    within 0.01 (the spread of a mean of 20,000), while a draw's row sums scatter."""
    w, V = weights_and_values()
    rng = np.random.default_rng(0)
    draws = np.stack([dropout.attention_dropout(w, 0.1, rng) for _ in range(20_000)])
    np.testing.assert_allclose((draws @ V).mean(axis=0), w @ V, atol=0.01)
    sums = draws.sum(axis=-1)
    assert np.abs(sums.mean(axis=0) - 1).max() < 0.01
    assert (np.abs(sums - 1) > 0.05).mean() > 0.5  # most single draws are off by > 5%
    biased = np.stack([np.where(dropout.keep_mask(w.shape, 0.1, rng), w, 0.0)
                       for _ in range(5_000)])  # zeros without the rescaling: 10% short
    assert np.abs((biased @ V).mean(axis=0) - 0.9 * (w @ V)).max() < 0.02


def test_off_in_eval_and_the_same_for_the_same_seed():
    w, _ = weights_and_values()
    assert dropout.attention_dropout(w, 0.1, training=False) is w
    a = dropout.attention_dropout(w, 0.1, np.random.default_rng(7))
    b = dropout.attention_dropout(w, 0.1, np.random.default_rng(7))
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(dropout.attention_dropout(w, 0.0, np.random.default_rng(1)),
                                  w)


@pytest.mark.parametrize("p", [-0.1, 1.0, 1.5, True, "0.1"])
def test_a_rate_that_is_not_a_probability_is_named(p):
    with pytest.raises(cl.AttentionInputError, match=re.escape(
            f"p must be a probability of dropping, 0 <= p < 1 (got {p!r})")):
        dropout.attention_dropout([[1.0]], p, np.random.default_rng(0))


def test_training_needs_a_generator():
    with pytest.raises(cl.AttentionInputError, match=r"give rng, e\.g\. np\.random\.default_rng"):
        dropout.attention_dropout([[1.0]], 0.1)
    with pytest.raises(cl.AttentionInputError, match=r"rng must be a numpy Generator, .*\(got "
                                                     r"int\)"):
        dropout.keep_mask((2,), 0.1, 0)
