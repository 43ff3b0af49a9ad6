"""course_lib.explore.describe: the numbers in words (alt text) and the one-line takeaways."""

from __future__ import annotations

import numpy as np
import pytest

from course_lib import attention_weights, causal_mask, the_cat_sat
from course_lib.explore.describe import (
    blend_takeaway,
    convex_hull,
    describe_blend,
    describe_heatmap,
    describe_row,
    describe_softmax,
    format_number,
    heatmap_takeaway,
    inside_hull,
    row_takeaway,
)
from course_lib.explore.plots import budget_bars
from course_lib.explore.widgets import softmax_budget

TOKENS = ["the", "cat", "sat"]


def test_format_number():
    assert format_number(-0.0001) == "0.00"
    assert format_number(1.255, 1) == "1.3"
    assert format_number(float("-inf")) == "−∞" and format_number(float("inf")) == "+∞"


def test_heatmap_description_ends_with_its_takeaway():
    ex = the_cat_sat()
    w = attention_weights(ex.Q, ex.K)
    takeaway = heatmap_takeaway(w, TOKENS, TOKENS)
    assert takeaway == "Every row sums to 1; the strongest cell is sat attending to itself at 0.50."
    assert describe_heatmap(w, TOKENS, TOKENS).endswith(" " + takeaway)
    m = causal_mask(3)
    masked = heatmap_takeaway(attention_weights(ex.Q, ex.K, mask=m), TOKENS, TOKENS, mask=m)
    assert masked.startswith("3 cells above the diagonal are masked (causal mask): no token "
                             "attends to a later one. Every row sums to 1;")


def test_ties_are_named():
    assert heatmap_takeaway([[0.5, 0.5]], ["a"], ["a", "b"]) == (
        "Every row sums to 1; the strongest cells, tied at 0.50, are a attending to a, a "
        "attending to b.")
    assert row_takeaway([0.5, 0.5], ["a", "b"]) == (
        "The weights sum to 1.00; the largest, tied at 0.50, are a, b.")


def test_row_description_and_takeaway_agree():
    text = describe_row([1.0, 1.0, 2.0], TOKENS, kind="scores", query="sat")
    assert text == ("sat's scores: 1.00 against the, 1.00 against cat, 2.00 against sat. "
                    "The largest is sat at 2.00.")
    assert row_takeaway([1.0, 1.0, 2.0], TOKENS, kind="scores", query="sat") == (
        "Of sat's scores, the largest is sat at 2.00.")
    long = describe_row(np.arange(10.0), [f"t{i}" for i in range(10)], kind="scores")
    assert "10 values from 0.00 (against t0) to 9.00" in long


def test_softmax_sentence_is_shared_by_figure_and_widget():
    """One source: the figure of lesson 04 and its widget say it in the same words."""
    s = np.array([0.71, 0.71, 1.41])
    figure = budget_bars(s, TOKENS, query="sat").description
    widget = softmax_budget().description
    assert widget == figure.replace(" at temperature 1", "").replace(
        "sat's scores", "sat's scaled scores")
    assert widget == describe_softmax(s, np.exp(s) / np.exp(s).sum(), TOKENS, query="sat",
                                      what="scaled scores")


def test_blend_in_words():
    v = the_cat_sat().V
    assert blend_takeaway([1.5, -0.5, 0.0], v, TOKENS) == (
        "The output, [1.50, -1.00], lies OUTSIDE the values' convex hull.")
    text = describe_blend([1.5, -0.5, 0.0], v, TOKENS)
    assert text.endswith("the weights sum to 1.00 and some are negative, so this is not a "
                         "weighted average.")


def test_inside_hull():
    tri = [[1, 0], [0, 2], [2, 2]]
    assert inside_hull([1.25, 1.5], tri)
    assert inside_hull([1, 0], tri)  # a corner counts
    assert not inside_hull([0, 0], tri)
    assert inside_hull([0.5, 0.5], [[0, 0], [1, 1]])
    assert not inside_hull([0.5, 0.6], [[0, 0], [1, 1]])
    assert convex_hull([[0, 0], [2, 0], [1, 1], [1, 0.2]]).tolist() == [
        [0.0, 0.0], [2.0, 0.0], [1.0, 1.0]]


def test_looks_most_and_top_weights_refuse_what_does_not_fit():
    from course_lib import AttentionInputError
    from course_lib.explore.describe import looks_most, top_weights

    with pytest.raises(AttentionInputError,
                       match=r"row must be one row of 3 weights, one per token "
                       r"\(got shape \(2,\)\)"):
        looks_most([0.5, 0.5], ["a", "b", "c"])
    with pytest.raises(AttentionInputError,
                       match=r"weights must be 2 × 2, one row and one column per "
                       r"token \(got shape \(2, 3\)\)"):
        top_weights(np.ones((2, 3)) / 3, ["a", "b"])
    with pytest.raises(AttentionInputError, match=r"top must be between 1 and 2 \(got 3\)"):
        top_weights(np.eye(2), ["a", "b"], top=3)
    assert looks_most([0.5, 0.5, 0.0], ["a", "b", "c"]) == (
        "looks most at 'a' and 'b', tied at 0.50")
    assert looks_most([0.501, 0.499, 0.0], ["a", "b", "c"]) == (
        "looks most at 'a' and 'b', tied at 0.50")  # equal as shown: a tie
