"""The online-softmax self-check passes a right step and names each wrong one, without answers."""

from __future__ import annotations

import re

import numpy as np
import pytest

from course_lib.checks import CheckResult
from course_lib.checks.online_softmax import check_online_softmax_step
from course_lib.online_softmax import online_softmax_step

# Student-style steps, written here independently of the check's own variants.


def right(m, l, o, s, v):  # noqa: E741 (l is the running sum, as in the lesson's math)
    new_m = np.maximum(m, s.max(axis=1))
    c = np.exp(m - new_m)
    p = np.exp(s - new_m[:, None])
    return new_m, c * l + p.sum(axis=1), c[:, None] * o + p @ v


def forgot_sum(m, l, o, s, v):  # noqa: E741
    new_m = np.maximum(m, s.max(axis=1))
    p = np.exp(s - new_m[:, None])
    return new_m, l + p.sum(axis=1), np.exp(m - new_m)[:, None] * o + p @ v


def forgot_output(m, l, o, s, v):  # noqa: E741
    new_m = np.maximum(m, s.max(axis=1))
    p = np.exp(s - new_m[:, None])
    return new_m, np.exp(m - new_m) * l + p.sum(axis=1), o + p @ v


def forgot_both(m, l, o, s, v):  # noqa: E741
    new_m = np.maximum(m, s.max(axis=1))
    p = np.exp(s - new_m[:, None])
    return new_m, l + p.sum(axis=1), o + p @ v


def block_max(m, l, o, s, v):  # noqa: E741
    b = s.max(axis=1)
    c = np.exp(m - b)
    p = np.exp(s - b[:, None])
    return b, c * l + p.sum(axis=1), c[:, None] * o + p @ v


def block_max_in_exp(m, l, o, s, v):  # noqa: E741
    new_m = np.maximum(m, s.max(axis=1))
    c = np.exp(m - new_m)
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return new_m, c * l + p.sum(axis=1), c[:, None] * o + p @ v


def inverted(m, l, o, s, v):  # noqa: E741
    new_m = np.maximum(m, s.max(axis=1))
    c = np.exp(new_m - m)
    p = np.exp(s - new_m[:, None])
    return new_m, c * l + p.sum(axis=1), c[:, None] * o + p @ v


def no_shift(m, l, o, s, v):  # noqa: E741
    new_m = np.maximum(m, s.max(axis=1))
    c = np.exp(m - new_m)
    p = np.exp(s)
    return new_m, c * l + p.sum(axis=1), c[:, None] * o + p @ v


def overflows(m, l, o, s, v):  # noqa: E741
    """Right in exact arithmetic, but exp of a raw score near 1000 is inf."""
    new_m = np.maximum(m, s.max(axis=1))
    c = np.exp(m) / np.exp(new_m)
    p = np.exp(s) / np.exp(new_m)[:, None]
    return new_m, c * l + p.sum(axis=1), c[:, None] * o + p @ v


def wrong_order(m, l, o, s, v):  # noqa: E741
    new_m, new_l, new_o = right(m, l, o, s, v)
    return new_l, new_m, new_o


def table_max(m, l, o, s, v):  # noqa: E741
    new_m = np.maximum(m, s.max())  # the whole block's max, not each row's
    c = np.exp(m - new_m)
    p = np.exp(s - new_m[:, None])
    return new_m, c * l + p.sum(axis=1), c[:, None] * o + p @ v


def not_written(m, l, o, s, v):  # noqa: E741
    raise NotImplementedError("Student exercise: write the update")


WRONG = [
    (forgot_sum, "sum_not_rescaled", "running sum was not rescaled"),
    (forgot_output, "output_not_rescaled", "partial output was not rescaled"),
    (forgot_both, "neither_rescaled", "neither the running sum nor the partial output"),
    (block_max, "block_max_not_running", "block's own maximum as the new running maximum"),
    (block_max_in_exp, "block_max_not_running", "shifted by the block's own maximum"),
    (inverted, "correction_inverted", "upside down"),
    (no_shift, "no_max_shift", "without subtracting the running maximum"),
    (overflows, "not_finite", "near 1002"),
    (wrong_order, "wrong_order", "another order"),
    (table_max, "wrong_values", "running_max is off in row 1"),
    (lambda m, l, o, s, v: None, "returned_none", "forget `return`"),  # noqa: E741
    (lambda m, l, o, s, v: (m, l), "wrong_type", "three arrays"),  # noqa: E741
    (not_written, "not_written", "not written yet"),
]


@pytest.mark.parametrize("step", [right, online_softmax_step])
def test_a_right_step_passes(step):
    result = check_online_softmax_step(step)
    assert isinstance(result, CheckResult)
    assert result, result.message
    assert result.mistake is None


@pytest.mark.parametrize(("step", "mistake", "phrase"), WRONG, ids=[w[1] + "-" + str(i)
                                                                   for i, w in enumerate(WRONG)])
def test_each_wrong_step_gets_its_mistake_named(step, mistake, phrase):
    result = check_online_softmax_step(step)
    assert not result
    assert result.mistake == mistake, result.message
    assert phrase in result.message
    assert result.message.startswith("Not yet: ") and "\n" not in result.message


@pytest.mark.parametrize(("step", "mistake", "phrase"), WRONG, ids=[w[1] + "-" + str(i)
                                                                   for i, w in enumerate(WRONG)])
def test_feedback_never_prints_an_expected_number(step, mistake, phrase):
    """No decimal number at all, so no running sum, output or maximum the step should give."""
    message = check_online_softmax_step(step).message
    assert not re.search(r"\d\.\d", message), message
    # nor the update itself: no code, no formula of the correction
    assert not [code for code in ("np.", "e^(", "exp(", "m - m'", "@") if code in message]


def test_the_three_named_mistakes_get_three_different_messages():
    messages = {check_online_softmax_step(f).message for f in (forgot_sum, forgot_output,
                                                               block_max)}
    codes = {check_online_softmax_step(f).mistake for f in (forgot_sum, forgot_output,
                                                            block_max)}
    assert len(messages) == 3 and len(codes) == 3


def test_the_students_function_name_is_used():
    def my_step(m, l, o, s, v):  # noqa: E741
        return None
    assert "`my_step` returned None" in check_online_softmax_step(my_step).message


def test_validate_raises_for_an_unfinished_step(monkeypatch):
    from course_lib.checks import ExerciseNotDone
    monkeypatch.setenv("NBGRADER_VALIDATING", "1")
    with pytest.raises(ExerciseNotDone, match="not rescaled"):
        check_online_softmax_step(forgot_sum)
