"""Lesson 12's self-checks accept a right answer and name each mistake with its own message.

Every wrong backward pass (and finite-difference gradient) below makes one mistake a
student is likely to make; each must fail with its own code and sentence, and no message
may print a number of the expected gradient (the answer the student is asked for).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from course_lib import attention_backward, attention_weights
from course_lib.backward import numerical_gradient
from course_lib.checks import backward as bc


def _backward(*, scale_q=True, scale_k=True, transpose_ds=False, rowsum="rows",
              transpose_dv=True, use_mask=True, order=(0, 1, 2)):
    """A student's backward pass, written out, with at most one mistake."""

    def my_attention_backward(Q, K, V, dO, mask=None):
        P = attention_weights(Q, K, mask if use_mask else None)
        d_k = Q.shape[-1]
        dV = P.T @ dO if transpose_dv else P @ dO
        dP = dO @ V.T
        if rowsum == "rows":
            dS = P * (dP - (dP * P).sum(axis=1, keepdims=True))
        elif rowsum == "columns":
            dS = P * (dP - (dP * P).sum(axis=0, keepdims=True))
        else:
            dS = P * dP
        left = dS.T if transpose_ds else dS
        dQ = left @ K / (np.sqrt(d_k) if scale_q else 1.0)
        dK = left.T @ Q / (np.sqrt(d_k) if scale_k else 1.0)
        result = (dQ, dK, dV)
        return tuple(result[i] for i in order)

    return my_attention_backward


WRONG_BACKWARDS = {
    "missing_scale": _backward(scale_q=False, scale_k=False),
    "missing_scale_dq": _backward(scale_q=False),
    "missing_scale_dk": _backward(scale_k=False),
    "transposed_ds": _backward(transpose_ds=True),
    "rowsum_wrong_axis": _backward(rowsum="columns"),
    "no_rowsum": _backward(rowsum="none"),
    "dv_not_transposed": _backward(transpose_dv=False),
    "mask_ignored": _backward(use_mask=False),
    "wrong_order": _backward(order=(1, 0, 2)),
}


def _not_written(*args):
    raise NotImplementedError("Student exercise: write it")


def test_a_right_backward_pass_passes():
    assert bc.check_attention_backward(_backward())
    assert bc.check_attention_backward(attention_backward)


@pytest.mark.parametrize("code", WRONG_BACKWARDS)
def test_each_wrong_backward_pass_is_named(code):
    result = bc.check_attention_backward(WRONG_BACKWARDS[code])
    assert not result and result.mistake == code, result.message
    assert result.message.startswith("Not yet: ")


def test_each_mistake_has_its_own_message():
    messages = [bc.check_attention_backward(f).message for f in WRONG_BACKWARDS.values()]
    assert len(set(messages)) == len(messages)


def _numbers_in(text):
    return {float(m) for m in re.findall(r"-?\d+\.\d+", text)}


@pytest.mark.parametrize("fn", [*WRONG_BACKWARDS.values(),
                                lambda Q, K, V, dO, mask=None: tuple(
                                    g + 0.01 for g in attention_backward(Q, K, V, dO, mask))],
                         ids=[*WRONG_BACKWARDS, "off_a_little"])
def test_feedback_never_prints_the_expected_gradient(fn):
    message = bc.check_attention_backward(fn).message
    for mask in (None, bc._MASK):
        expected = attention_backward(bc._Q, bc._K, bc._V, bc._DO, mask)
        for grad in expected:
            for value in grad.ravel():
                for digits in (2, 3, 4):
                    text = f"{value:.{digits}f}"
                    if abs(value) >= 0.005:
                        assert text not in message, (text, message)


def test_a_generic_mistake_names_the_array_and_row_not_the_numbers():
    def off_in_dv(Q, K, V, dO, mask=None):
        dQ, dK, dV = attention_backward(Q, K, V, dO, mask)
        dV = dV.copy()
        dV[2, 1] += 0.5
        return dQ, dK, dV

    result = bc.check_attention_backward(off_in_dv)
    assert result.mistake == "wrong_values"
    assert "dV" in result.message and "row 2" in result.message


@pytest.mark.parametrize("fn, code", [
    (_not_written, "not_written"),
    (lambda Q, K, V, dO, mask=None: None, "returned_none"),
    (lambda Q, K, V, dO, mask=None: attention_backward(Q, K, V, dO, mask)[:2], "wrong_type"),
    (lambda Q, K, V, dO: attention_backward(Q, K, V, dO), "raised"),  # no mask argument
])
def test_unfinished_functions(fn, code):
    assert bc.check_attention_backward(fn).mistake == code


def _divided_by_h(loss, X, h):
    return 2 * numerical_gradient(loss, X, h)


def _not_restored(loss, X, h):
    grad = np.zeros_like(X)
    for i in np.ndindex(X.shape):
        old = X[i]
        X[i] = old + h
        up = loss(X)
        X[i] = old - h
        grad[i] = (up - loss(X)) / (2 * h)
    return grad


def _one_sided(loss, X, h):
    grad = np.zeros_like(X)
    base = loss(X)
    for i in np.ndindex(X.shape):
        Xh = X.copy()
        Xh[i] += h
        grad[i] = (loss(Xh) - base) / h
    return grad


@pytest.mark.parametrize("fn, code", [(_divided_by_h, "divided_by_h"),
                                      (_not_restored, "not_restored"),
                                      (_one_sided, "one_sided"),
                                      (lambda loss, X, h: numerical_gradient(loss, X, h)[0],
                                       "wrong_shape"),
                                      (_not_written, "not_written")])
def test_each_finite_difference_mistake_is_named(fn, code):
    assert bc.check_numerical_gradient(numerical_gradient)
    result = bc.check_numerical_gradient(fn)
    assert not result and result.mistake == code, result.message
    want = bc._probe_gradient(bc._X)
    assert not any(f"{v:.2f}" in result.message for v in want.ravel() if abs(v) >= 0.005)


def test_validate_raises_under_nbgrader(monkeypatch):
    from course_lib.checks import ExerciseNotDone

    monkeypatch.setenv("NBGRADER_VALIDATING", "1")
    with pytest.raises(ExerciseNotDone, match="Not yet"):
        bc.check_attention_backward(_not_written)


@pytest.mark.parametrize("fn, code", [
    (lambda X, dQ: np.einsum("nqm,nqd->md", X, dQ) / len(X), "mean_not_sum"),
    (lambda X, dQ: np.swapaxes(X, -1, -2) @ dQ, "not_summed"),
    (lambda X, dQ: np.einsum("nqm,nqd->dm", X, dQ), "transposed_result"),
    (lambda X, dQ: np.einsum("nqm,nqd->md", X, dQ) + 0.5, "wrong_values"),
    (_not_written, "not_written"),
])
def test_each_weight_gradient_mistake_is_named(fn, code):
    assert bc.check_weight_gradient(lambda X, dQ: sum(x.T @ d for x, d in zip(X, dQ, strict=True)))
    result = bc.check_weight_gradient(fn)
    assert not result and result.mistake == code, result.message
    want = bc._weight_gradient(bc._XB, bc._DQB)
    assert not any(f"{v:.2f}" in result.message for v in want.ravel() if abs(v) >= 0.005)


@pytest.mark.parametrize("answer, code", [
    (["dQ", "dK"], None), (("dK", "dQ"), None),
    (["dQ", "dK", "dV"], "dv_scaled"), (["dQ", "dK", "dS"], "ds_scaled"),
    (["dQ"], "one_side"), (["dK"], "one_side"), (["dW"], "unknown_name"), ("dQ", "wrong_type"),
])
def test_terms_with_the_scale(answer, code):
    result = bc.check_terms_with_the_scale(lambda: answer)
    assert bool(result) is (code is None) and result.mistake == code, result.message


def test_what_went_wrong_names_each_wrong_choice_and_not_the_answer():
    results = {a: bc.check_what_went_wrong(lambda a=a: a) for a in "ABCDE"}
    assert results["C"] and results["A"].mistake == "batch_gradient_vanished"
    assert results["B"].mistake == "training_frees_them"
    assert results["D"].mistake == "adam_steps"
    assert results["E"].mistake == "loss_does_not_matter"
    assert all('"C"' not in r.message and "C:" not in r.message for r in results.values())
    assert bc.check_what_went_wrong(lambda: "F").mistake == "wrong_type"
    assert bc.check_what_went_wrong(lambda: "c").mistake == "wrong_type"
