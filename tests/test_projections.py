"""Tests for course_lib.projections: Q = X W_Q, K = X W_K, V = X W_V (lesson 08)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from course_lib import AttentionInputError, attention_weights, scores, the_cat_sat
from course_lib.explore.describe import asymmetry
from course_lib.explore.plots import tied_and_separate_keys
from course_lib.projections import embedded_example, project, rotation_scale

small = st.floats(-3, 3, allow_nan=False, allow_infinity=False)


def test_the_example_reproduces_lessons_01_to_07_with_tied_keys():
    ex, old = embedded_example(), the_cat_sat()
    Q, K, V = project(ex.X, ex.W_Q, ex.W_Q, ex.W_V)  # W_K = W_Q: the old example
    np.testing.assert_array_equal(Q, old.Q)
    np.testing.assert_array_equal(K, old.K)
    np.testing.assert_array_equal(V, old.V)


def test_the_example_with_its_own_keys_is_the_lessons_table():
    ex = embedded_example()
    Q, K, V = project(ex.X, ex.W_Q, ex.W_K, ex.W_V)
    np.testing.assert_array_equal(K, [[1, 0], [1, 1], [1, 0]])
    S = scores(Q, K)
    np.testing.assert_array_equal(S, [[1, 1, 1], [0, 1, 0], [1, 2, 1]])
    assert not np.array_equal(S, S.T)
    w = attention_weights(Q, K)
    np.testing.assert_allclose(w[:, 0], w[:, 2])  # 'the' and 'sat': the same key
    assert not np.array_equal(V[0], V[2])  # ... but different values
    assert np.argmax(S[2]) == 1  # 'sat' scores highest on 'cat', not on itself


def test_project_is_three_matrix_products_and_keeps_a_batch():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(2, 5, 4))
    W_Q, W_K, W_V = rng.normal(size=(4, 3)), rng.normal(size=(4, 3)), rng.normal(size=(4, 6))
    Q, K, V = project(X, W_Q, W_K, W_V)
    assert (Q.shape, K.shape, V.shape) == ((2, 5, 3), (2, 5, 3), (2, 5, 6))
    np.testing.assert_allclose(V[1], X[1] @ W_V)


def test_project_does_not_change_its_inputs():
    ex = embedded_example()
    before = [a.copy() for a in (ex.X, ex.W_Q, ex.W_K, ex.W_V)]
    project(ex.X, ex.W_Q, ex.W_K, ex.W_V)
    for a, b in zip(before, (ex.X, ex.W_Q, ex.W_K, ex.W_V), strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((np.ones((3, 3)), np.ones((2, 3)), np.ones((3, 2)), np.ones((3, 2))),
         r"^W_Q must have d_model=3 rows, one per column of X \(X shape \(3, 3\), W_Q shape "
         r"\(2, 3\)\)$"),
        ((np.ones((3, 3)), np.ones((3, 2)), np.ones((3, 4)), np.ones((3, 2))),
         r"^W_K must have as many columns as W_Q, the same d_k \(W_Q shape \(3, 2\), W_K "
         r"shape \(3, 4\)\)"),
        ((np.ones((3, 3)), np.ones((3, 2)), np.ones((3, 2)), np.ones((2, 2, 3))),
         r"^W_V must be one matrix, shape \(d_model, d_v\) \(got shape \(2, 2, 3\)\)$"),
        ((np.ones(3), np.ones((3, 2)), np.ones((3, 2)), np.ones((3, 2))),
         r"^X must have shape \(\.\.\., n, d_model\), at least 2 dimensions .*"
         r"\(got shape \(3,\)\)"),
        ((np.full((3, 3), np.nan), np.ones((3, 2)), np.ones((3, 2)), np.ones((3, 2))),
         r"^X must hold finite numbers"),
        ((np.ones((3, 3)), "abc", np.ones((3, 2)), np.ones((3, 2))),
         r"^W_Q must be an array of numbers of shape \(d_model, d_k\)"),
    ],
)
def test_project_says_what_it_expected_and_what_it_got(args, message):
    with pytest.raises(AttentionInputError, match=message):
        project(*args)


@settings(max_examples=60, deadline=None)
@given(hnp.arrays(np.float64, (4, 3), elements=small),
       hnp.arrays(np.float64, (3, 2), elements=small),
       st.floats(-180, 180))
def test_tied_keys_give_a_symmetric_table_that_no_rotation_changes(X, W, angle):
    """K = Q makes q_i·q_j = q_j·q_i, and turning every query and key together keeps it."""
    Q, K, _ = project(X, W, W, W)
    S = scores(Q, K)
    np.testing.assert_allclose(S, S.T, atol=1e-9)
    R = rotation_scale(angle)
    Q2, K2, _ = project(X, W @ R, W @ R, W)
    np.testing.assert_allclose(scores(Q2, K2), S, atol=1e-9)


@settings(max_examples=60, deadline=None)
@given(st.floats(-720, 720), st.floats(0, 5), hnp.arrays(np.float64, 2, elements=small))
def test_rotation_scale_turns_and_stretches(angle, scale, v):
    R = rotation_scale(angle, scale)
    np.testing.assert_allclose(np.linalg.norm(v @ R), scale * np.linalg.norm(v), atol=1e-9)
    np.testing.assert_allclose(R @ R.T, scale**2 * np.eye(2), atol=1e-9)
    if np.linalg.norm(v) > 1e-3 and scale > 1e-3:
        turned = v @ R
        cross = v[0] * turned[1] - v[1] * turned[0]
        dot = v @ turned
        np.testing.assert_allclose(np.degrees(np.arctan2(cross, dot)),
                                   (angle + 180) % 360 - 180, atol=1e-6)


def test_rotation_scale_is_exact_at_right_angles_and_refuses_bad_input():
    np.testing.assert_array_equal(np.array([1.0, 1.0]) @ rotation_scale(90), [-1.0, 1.0])
    np.testing.assert_array_equal(rotation_scale(180, 2.0), [[-2.0, 0.0], [0.0, -2.0]])
    with pytest.raises(AttentionInputError, match=r"scale a finite number >= 0 \(got 0, -1\)"):
        rotation_scale(0, -1)
    with pytest.raises(AttentionInputError, match="finite"):
        rotation_scale(float("nan"))


def test_asymmetry_names_the_pairs_and_refuses_a_non_square_table():
    text = asymmetry([[1, 1, 1], [0, 1, 0], [1, 2, 1]], ["the", "cat", "sat"])
    assert text == ("The table is not symmetric: the's query · cat's key = 1.00, but cat's "
                    "query · the's key = 0.00; cat's query · sat's key = 0.00, but sat's query "
                    "· cat's key = 2.00.")
    assert asymmetry(np.eye(3), "abc").startswith("The table is symmetric")
    many = asymmetry(np.triu(np.ones((5, 5))), "abcde")
    assert many.endswith("(10 pairs differ).")
    with pytest.raises(AttentionInputError, match=r"square.*got shape \(2, 3\) and 2 tokens"):
        asymmetry(np.ones((2, 3)), ["a", "b"])


def test_the_figure_says_what_it_shows():
    fig = tied_and_separate_keys()
    assert fig.description.count("heatmap") == 1 and "Two 3 by 3 heatmaps" in fig.description
    assert "The table is symmetric" in fig.description
    assert "sat's query · cat's key = 2.00" in fig.description
    assert fig.caption == ("With K = Q the table mirrors across its diagonal; with its own W_K "
                           "it does not, and sat scores highest on cat, not on itself.")
    assert len(fig.figure.axes) == 4  # two heatmaps and their colour bars
    # with W_K = W_Q the right-hand table is symmetric too, and the caption says so
    ex = embedded_example()
    tied = type(ex)(ex.tokens, ex.X, ex.W_Q, ex.W_Q, ex.W_V)
    assert "it happens to mirror too, and sat scores highest on itself" in (
        tied_and_separate_keys(tied).caption)
