"""Tests for course_lib.experiments.scaling: the measured case for dividing by sqrt(d_k)."""

from __future__ import annotations

import numpy as np
import pytest

from course_lib import AttentionInputError, scores, softmax, softmax_jacobian
from course_lib.experiments.scaling import (
    D_KS,
    query_gradient_norms,
    random_qk,
    scaling_stats,
    scaling_sweep,
)


def test_d_ks_span_two_to_4096():
    assert D_KS[0] == 2 and D_KS[-1] == 4096 and len(D_KS) == 12


def test_unscaled_std_grows_like_sqrt_dk_and_scaled_stays_near_one():
    for d in (4, 64, 1024):
        raw = scaling_stats(d, scale=False)
        ok = scaling_stats(d, scale=True)
        assert raw.qk_std == pytest.approx(np.sqrt(d), rel=0.15)
        assert ok.qk_std == pytest.approx(1.0, rel=0.15)
        assert raw.qk_std / ok.qk_std == pytest.approx(np.sqrt(d))  # same Q, K


def test_unscaled_softmax_saturates_and_its_jacobian_vanishes():
    sweep = scaling_sweep()
    raw, ok = sweep["unscaled"], sweep["scaled"]
    assert [s.d_k for s in raw] == list(D_KS)
    assert raw[-1].median_max_weight > 0.999
    assert raw[-1].median_entropy < 1e-3
    assert raw[-1].median_jacobian_norm < 1e-6
    # max weight rises with d_k without scaling (allowing noise between neighbours)
    mw = [s.median_max_weight for s in raw]
    assert mw[0] < 0.4 < 0.9 < mw[6]
    # scaled: all three stay flat
    for s in ok:
        assert 0.15 < s.median_max_weight < 0.3
        assert 2.2 < s.median_entropy <= s.max_entropy
        assert 0.25 < s.median_jacobian_norm < 0.35


def test_numbers_match_a_direct_computation():
    Q, K = random_qk(256, seed=7)
    s = scores(Q, K)
    w = softmax(s)
    stats = scaling_stats(256, scale=False, seed=7)
    assert stats.qk_std == pytest.approx(s.std())
    assert stats.median_max_weight == pytest.approx(np.median(w.max(axis=1)))
    ent = -(w * np.log(np.where(w > 0, w, 1))).sum(axis=1)
    assert stats.median_entropy == pytest.approx(np.median(ent))
    # Frobenius norm of diag(p) - p p^T, row by row
    norms = [np.linalg.norm(np.diag(p) - np.outer(p, p)) for p in w]
    assert stats.median_jacobian_norm == pytest.approx(np.median(norms))
    # dw/dq = (diag(p) - p p^T) K, unscaled, row by row
    q_norms = [np.linalg.norm((np.diag(p) - np.outer(p, p)) @ K) for p in w]
    assert stats.median_query_gradient_norm == pytest.approx(np.median(q_norms))
    np.testing.assert_array_equal(stats.dots, s.ravel())


def test_randomness_is_local_and_seeded():
    # reading the legacy global state is the point here: it must stay untouched
    before = np.random.get_state()[1].copy()  # noqa: NPY002
    a = scaling_stats(64, seed=1)
    b = scaling_stats(64, seed=1)
    c = scaling_stats(64, seed=2)
    assert (np.random.get_state()[1] == before).all()  # noqa: NPY002
    np.testing.assert_array_equal(a.dots, b.dots)
    assert a.qk_std != c.qk_std
    gen = np.random.default_rng(5)
    d = scaling_stats(64, rng=gen)
    e = scaling_stats(64, rng=gen)  # the generator advanced: new samples
    assert d.qk_std != e.qk_std


def test_summary_has_the_three_numbers():
    text = scaling_stats(4096, scale=False).summary()
    assert text.startswith("d_k = 4096, unscaled: std of q·k 63.8")
    assert "median max weight 1.00" in text
    assert "scaled by 1/sqrt(d_k)" in scaling_stats(4096).summary()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"d_k": 0}, r"d_k must be an integer >= 1 \(got 0\)"),
        ({"d_k": 2.5}, r"d_k must be an integer >= 1 \(got 2.5\)"),
        ({"d_k": 8, "n_keys": 1}, r"n_keys must be an integer >= 2 \(got 1\)"),
    ],
)
def test_bad_input(kwargs, message):
    with pytest.raises(AttentionInputError, match=message):
        scaling_stats(**kwargs)
    with pytest.raises(AttentionInputError, match="at least one d_k"):
        scaling_sweep([])


@pytest.mark.parametrize("scale", [True, False])
def test_query_gradient_norms_match_finite_differences(scale):
    Q, K = random_qk(8, n_queries=3, n_keys=5, seed=4)
    h = 1e-6
    c = 1 / np.sqrt(8) if scale else 1.0
    for i in range(3):
        jac = np.zeros((5, 8))
        for m in range(8):
            up, down = Q[i].copy(), Q[i].copy()
            up[m] += h
            down[m] -= h
            jac[:, m] = (softmax(c * up @ K.T) - softmax(c * down @ K.T)) / (2 * h)
        assert query_gradient_norms(Q, K, scale=scale)[i] == pytest.approx(
            np.linalg.norm(jac), rel=1e-6)
        assert np.linalg.norm(softmax_jacobian(c * Q[i] @ K.T) @ (c * K)) == pytest.approx(
            np.linalg.norm(jac), rel=1e-6)


def test_the_query_gradient_is_larger_unscaled_at_head_sizes_and_collapses_later():
    """What lesson 03 reports: the saturation costs the query gradient only from ~512 up."""
    sweep = scaling_sweep([32, 128, 512, 4096])
    raw = [s.median_query_gradient_norm for s in sweep["unscaled"]]
    ok = [s.median_query_gradient_norm for s in sweep["scaled"]]
    assert raw[0] > 2 * ok[0] and raw[1] > 1.5 * ok[1]
    assert raw[2] < ok[2] / 10 and raw[3] < 1e-6
    for s in ok:
        assert 0.25 < s < 0.35


@pytest.mark.parametrize("d_k", [2, 16, 300])
@pytest.mark.parametrize("scale", [True, False])
def test_query_gradient_norms_equal_the_backward_pass_on_the_full_vectors(d_k, scale):
    """The QR shortcut changes nothing: one attention_backward per weight, on Q and K as given."""
    from course_lib import attention_backward

    Q, K = random_qk(d_k, n_queries=20, n_keys=16, seed=d_k)
    Q = Q * (3.0 if d_k == 300 else 1.0)  # saturated rows too
    squares = np.zeros(20)
    for j in range(16):
        dO = np.zeros((20, 16))
        dO[:, j] = 1.0
        dQ, _, _ = attention_backward(Q, K, np.eye(16), dO, scale=scale)
        squares += (dQ**2).sum(axis=1)
    np.testing.assert_allclose(query_gradient_norms(Q, K, scale=scale), np.sqrt(squares),
                               rtol=1e-9, atol=1e-300)


def test_query_gradient_norms_bad_input():
    with pytest.raises(AttentionInputError, match=r"K has d_k=3 columns but Q has d_k=2"):
        query_gradient_norms(np.ones((2, 2)), np.ones((4, 3)))
    with pytest.raises(AttentionInputError, match=r"takes one Q of shape \(n_q, d_k\) and one K"):
        query_gradient_norms(np.ones((2, 2, 2)), np.ones((4, 2)))
