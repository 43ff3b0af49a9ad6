"""Tests for course_lib.scaling: the measured case for dividing by sqrt(d_k)."""

from __future__ import annotations

import numpy as np
import pytest

from course_lib import AttentionInputError, scores, softmax
from course_lib.scaling import D_KS, random_qk, scaling_stats, scaling_sweep


def test_d_ks_span_two_to_4096():
    assert D_KS[0] == 2 and D_KS[-1] == 4096 and len(D_KS) == 12


def test_unscaled_std_grows_like_sqrt_dk_and_scaled_stays_near_one():
    for d in (4, 64, 1024):
        raw = scaling_stats(d, scale=False)
        ok = scaling_stats(d, scale=True)
        assert raw.qk_std == pytest.approx(np.sqrt(d), rel=0.15)
        assert ok.qk_std == pytest.approx(1.0, rel=0.15)
        assert raw.qk_std / ok.qk_std == pytest.approx(np.sqrt(d))  # same Q, K


def test_unscaled_softmax_saturates_and_its_gradient_vanishes():
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
