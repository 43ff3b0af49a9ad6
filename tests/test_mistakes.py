"""The mistakes of course_grading.mistakes are what they say they are."""

from __future__ import annotations

import numpy as np
import pytest

from course_grading.mistakes import (
    ALL_MISTAKES,
    CORRECT_ANSWER,
    MISTAKES,
    answer_function,
    hidden_test_id,
)
from course_lib import attention_weights, causal_mask, softmax

Q = np.array([[1.0, 0.5, -0.3], [0.2, -1.0, 0.4], [0.6, 0.1, -0.9], [-0.4, 0.8, 0.3]])
K = np.array([[0.3, 0.1, 1.0], [-0.5, 0.7, 0.2], [1.1, -0.2, 0.0], [0.0, 0.4, -0.8]])
OTHERS = ~np.eye(4, dtype=bool)


def _masked(s, axis=-1):
    s = np.where(OTHERS, s, -np.inf)
    return softmax(s, axis=axis)


def test_the_correct_answer_agrees_with_course_lib():
    assert np.allclose(answer_function(CORRECT_ANSWER)(Q, K),
                       attention_weights(Q, K, mask=OTHERS))


def test_each_mistake_is_that_mistake_exactly():
    f = {m: answer_function(src) for m, src in ALL_MISTAKES.items()}
    assert sorted(MISTAKES) == ["dk_from_wrong_axis", "missing_scale", "naive_exp_overflow",
                                "wrong_axis"]
    s = Q @ K.T
    assert np.allclose(f["missing_scale"](Q, K), _masked(s))
    assert np.allclose(f["wrong_axis"](Q, K), _masked(s / np.sqrt(3), axis=0))
    assert np.allclose(f["naive_exp_overflow"](Q, K), attention_weights(Q, K, mask=OTHERS))
    assert np.allclose(f["dk_from_wrong_axis"](Q, K), _masked(s / np.sqrt(4)))
    assert np.allclose(f["no_mask"](Q, K), attention_weights(Q, K))
    assert np.allclose(f["causal_mask"](Q, K), attention_weights(Q, K, mask=causal_mask(4)))
    after = attention_weights(Q, K) * OTHERS
    assert np.allclose(f["mask_after_softmax"](Q, K), after)
    zero = np.where(OTHERS, s / np.sqrt(3), 0.0)
    assert np.allclose(f["zero_score"](Q, K), softmax(zero))


def test_unknown_names_are_refused_clearly():
    with pytest.raises(KeyError, match="unknown mistake 'typo'"):
        hidden_test_id("typo")
    with pytest.raises(ValueError, match="must define a function weights_without_self"):
        answer_function("x = 1")
