"""The mistakes of course_grading.mistakes are what they say they are."""

from __future__ import annotations

import numpy as np
import pytest

from course_grading.mistakes import CORRECT_ANSWER, MISTAKES, answer_function, hidden_test_id
from course_lib import attention_weights, softmax

Q = np.array([[1.0, 0.5, -0.3], [0.2, -1.0, 0.4]])
K = np.array([[0.3, 0.1, 1.0], [-0.5, 0.7, 0.2], [1.1, -0.2, 0.0], [0.0, 0.4, -0.8]])


def test_the_correct_answer_agrees_with_course_lib():
    assert np.allclose(answer_function(CORRECT_ANSWER)(Q, K), attention_weights(Q, K))


def test_each_mistake_is_that_mistake_exactly():
    f = {m: answer_function(src) for m, src in MISTAKES.items()}
    s = Q @ K.T
    assert np.allclose(f["missing_scale"](Q, K), softmax(s))
    assert np.allclose(f["wrong_axis"](Q, K), softmax(s / np.sqrt(3), axis=0))
    assert np.allclose(f["naive_exp_overflow"](Q, K), attention_weights(Q, K))
    assert np.allclose(f["dk_from_wrong_axis"](Q, K), softmax(s / np.sqrt(2)))


def test_unknown_names_are_refused_clearly():
    with pytest.raises(KeyError, match="unknown mistake 'typo'"):
        hidden_test_id("typo")
    with pytest.raises(ValueError, match="must define a function attention_weights"):
        answer_function("x = 1")
