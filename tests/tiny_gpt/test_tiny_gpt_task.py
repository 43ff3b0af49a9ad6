"""course_lib.tiny_gpt.task: the sequences hold what the task says, and only the scored
positions can be predicted."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course_lib import AttentionInputError
from course_lib.tiny_gpt import task


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_a_segment_twice_and_every_other_letter_once(seed):
    b = task.make_batch(20, seed=seed)
    assert b.tokens.shape == (20, task.SEQ_LEN)
    for i in range(20):
        s, d, k = int(b.first[i]), int(b.second[i]), int(b.length[i])
        assert task.SEGMENT_MIN <= k <= task.SEGMENT_MAX and s + k <= d <= task.SEQ_LEN - k
        seq = b.tokens[i]
        np.testing.assert_array_equal(seq[s:s + k], seq[d:d + k])
        counts = np.bincount(seq, minlength=task.VOCAB_SIZE)
        assert counts.max() <= 2 and set(np.flatnonzero(counts == 2)) == set(seq[s:s + k])
        np.testing.assert_array_equal(b.targets[i, :-1], seq[1:])
        assert b.targets[i, -1] == -1


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_the_scored_positions_are_exactly_those_whose_next_letter_can_be_known(seed):
    """At a scored position the current letter stood once before, and the letter after
    that earlier place is the target; at every other position the next letter is new."""
    b = task.make_batch(20, seed=seed)
    for i in range(20):
        seq = b.tokens[i]
        for t in range(task.SEQ_LEN - 1):
            earlier = np.flatnonzero(seq[:t] == seq[t])
            known = len(earlier) == 1 and seq[earlier[0] + 1] == seq[t + 1]
            next_is_new = seq[t + 1] not in seq[:t + 1]
            assert b.scored[i, t] == known, (i, t)
            assert b.scored[i, t] or next_is_new or (t + 1) == int(b.second[i]), (i, t)


def test_seeded_and_marked():
    a, b = task.make_batch(5, seed=9), task.make_batch(5, seed=9)
    np.testing.assert_array_equal(a.tokens, b.tokens)
    assert not np.array_equal(a.tokens, task.make_batch(5, seed=10).tokens)
    marked = a.marked(0)
    assert marked.count("[") == 2 and marked.replace("[", "").replace("]", "") == a.text(0)


def test_bad_input():
    with pytest.raises(AttentionInputError, match=r"n must be a positive whole number "
                                                  r"\(got 0\)"):
        task.make_batch(0)
    with pytest.raises(AttentionInputError, match=r"tokens must be a 1-D sequence of whole "
                                                  r"numbers 0 … 25 \(got int64 of shape "
                                                  r"\(1,\)\)"):
        task.letters(np.array([26]))
