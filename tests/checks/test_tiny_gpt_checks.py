"""Lesson 16's checks: a student's attention in the trained model, and the circuit by hand.
Each names its mistake; none gives a number or the answer away before it is given."""

from __future__ import annotations

import re

import numpy as np
import pytest

import course_lib as cl
from course_lib import checks


def solution(Q, K, V, mask):  # the lesson's solution, as a student writes it
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    scores = np.where(mask, scores, -np.inf)
    return cl.softmax(scores) @ V


def _scores(Q, K):
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])


MISTAKES = {
    "sees_the_future": lambda Q, K, V, mask: cl.softmax(_scores(Q, K)) @ V,
    "missing_scale": lambda Q, K, V, mask: cl.softmax(
        np.where(mask, Q @ np.swapaxes(K, -1, -2), -np.inf)) @ V,
    "softmax_wrong_axis": lambda Q, K, V, mask: cl.softmax(
        np.where(mask, _scores(Q, K), -np.inf), axis=-2) @ V,
    "masked_to_zero": lambda Q, K, V, mask: cl.softmax(np.where(mask, _scores(Q, K), 0)) @ V,
    "mask_after_softmax": lambda Q, K, V, mask: (cl.softmax(_scores(Q, K)) * mask) @ V,
    "returned_weights": lambda Q, K, V, mask: cl.softmax(
        np.where(mask, _scores(Q, K), -np.inf)),
    "shapes_clash": lambda Q, K, V, mask: cl.softmax(
        np.where(mask, Q @ K.T / np.sqrt(Q.shape[-1]), -np.inf)) @ V,
    "returned_none": lambda Q, K, V, mask: None,
}


def test_the_solution_and_the_library_pass():
    assert checks.check_attend_in_model(solution)
    assert checks.check_attend_in_model(lambda Q, K, V, mask: cl.attention(Q, K, V, mask=mask))


@pytest.mark.parametrize("mistake", sorted(MISTAKES))
def test_each_mistake_is_named(mistake):
    verdict = checks.check_attend_in_model(MISTAKES[mistake])
    assert not verdict and verdict.mistake == mistake, verdict.message


def test_k_dot_t_is_explained_and_no_number_is_given():
    verdict = checks.check_attend_in_model(MISTAKES["shapes_clash"])
    assert "`K.T` reverses all four axes" in verdict.message
    for mistake in MISTAKES.values():  # no value of the expected output, or of theirs
        message = checks.check_attend_in_model(mistake).message
        assert not re.search(r"\d\.\d", message), message


def test_a_function_right_on_layer_0_but_not_in_the_model_is_caught():
    calls = []

    def right_once(Q, K, V, mask):
        calls.append(1)
        out = cl.attention(Q, K, V, mask=mask)[0]
        return out if len(calls) <= 2 else out * 1.01

    verdict = checks.check_attend_in_model(right_once)
    assert verdict.mistake == "wrong_in_model", verdict.message


def test_the_circuit_by_hand_names_the_letters_one_off():
    assert checks.check_induction_by_hand(lambda: ["n", "c"])
    assert checks.check_induction_by_hand(["N ", "c"])  # a value, and the letters' case
    named = {("c", "n"): "swapped", ("c", "i"): "the_earlier_copy_itself",
             ("i", "c"): "one_before", ("n", "n"): "wrote_itself", ("n", "q"): "wrote_the_next",
             ("z", "c"): "wrong_letter", ("n", "z"): "wrong_letter"}
    for answer, mistake in named.items():
        verdict = checks.check_induction_by_hand(lambda a=answer: list(a))
        assert verdict.mistake == mistake, (answer, verdict.message)
        assert "n" not in verdict.message.split() or mistake in ("wrote_itself",
                                                                 "wrote_the_next")
    assert checks.check_induction_by_hand(lambda: "nc").mistake == "not_two_letters"
