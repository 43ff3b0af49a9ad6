"""The self-checks of lessons 08 and 09 accept a right answer and name each likely mistake.

Same pattern as tests/checks/test_checks.py: one correct student function passes; one wrong
function per mistake fails with the right ``mistake`` code and a sentence naming it, and
no hint writes out the line the exercise asks for.
"""

from __future__ import annotations

import numpy as np
import pytest

from course_lib import checks
from course_lib.attention import scaled_scores
from course_lib.checks import model as model_checks
from course_lib.projections import project


def _not_written(*args):
    raise NotImplementedError("Student exercise: write it")


def _swap(K):
    return np.swapaxes(K, -1, -2)


def _padded(Q, K, lengths, *, keys=True, queries=False, fill=-np.inf, after=False,
            scale=True, shift=0):
    """A student's weights of a padded batch, with each mistake a switch (issue 44)."""
    n = Q.shape[-2]
    real = np.arange(n) < (np.asarray(lengths) + shift)[:, None]  # (batch, n)
    s = Q @ _swap(K) / (np.sqrt(Q.shape[-1]) if scale else 1.0)
    if after:
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True) * real[:, None, None, :]
    m = np.ones(s.shape, dtype=bool)
    if keys:
        m &= real[:, None, None, :]
    if queries:
        m &= real[:, None, :, None]
    with np.errstate(invalid="ignore"):
        s = np.where(m, s, fill)
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)


CASES = {
    "check_projections": (
        lambda X, W_Q, W_K, W_V: (X @ W_Q, X @ W_K, X @ W_V),
        [
            ("not_written", _not_written),
            ("projection_order", lambda X, W_Q, W_K, W_V: (W_Q @ X, W_K @ X, W_V @ X)),
            ("projection_order", lambda X, W_Q, W_K, W_V: (W_Q.T @ X.T, W_K.T @ X.T,
                                                            W_V.T @ X.T)),
            ("keys_from_w_q", lambda X, W_Q, W_K, W_V: (X @ W_Q, X @ W_Q, X @ W_V)),
            ("queries_from_w_k", lambda X, W_Q, W_K, W_V: (X @ W_K, X @ W_K, X @ W_V)),
            ("values_from_w_k", lambda X, W_Q, W_K, W_V: (X @ W_Q, X @ W_K, X @ W_K)),
            ("values_from_w_q", lambda X, W_Q, W_K, W_V: (X @ W_Q, X @ W_K, X @ W_Q)),
            ("swapped_q_k", lambda X, W_Q, W_K, W_V: (X @ W_K, X @ W_Q, X @ W_V)),
            ("missing_projection", lambda X, W_Q, W_K, W_V: (X @ W_Q, X @ W_K, X)),
            ("missing_projection", lambda X, W_Q, W_K, W_V: (X, X @ W_K, X @ W_V)),
            ("wrong_type", lambda X, W_Q, W_K, W_V: (X @ W_Q, X @ W_K)),
            ("wrong_type", lambda X, W_Q, W_K, W_V: X @ W_Q),
            ("returned_none", lambda X, W_Q, W_K, W_V: None),
            ("wrong_values", lambda X, W_Q, W_K, W_V: (X @ W_Q + 1, X @ W_K, X @ W_V)),
        ],
    ),
    "check_batched_scores": (
        lambda Q, K: Q @ _swap(K) / np.sqrt(Q.shape[-1]),
        [
            ("not_written", _not_written),
            ("transpose_all_axes", lambda Q, K: Q @ K.T / np.sqrt(Q.shape[-1])),
            ("transpose_all_axes", lambda Q, K: Q @ np.transpose(K) / np.sqrt(Q.shape[-1])),
            ("transpose_all_axes", lambda Q, K: Q @ K.transpose() / np.sqrt(K.shape[-1])),
            ("transpose_fixed_axes",
             lambda Q, K: Q @ np.transpose(K, (0, 2, 1)) / np.sqrt(Q.shape[-1])),
            ("transpose_fixed_axes", lambda Q, K: Q @ K.swapaxes(1, 2) / np.sqrt(Q.shape[-1])),
            ("not_transposing_k", lambda Q, K: Q @ K / np.sqrt(Q.shape[-1])),
            ("transposed_result", lambda Q, K: K @ _swap(Q) / np.sqrt(Q.shape[-1])),
            ("missing_scale", lambda Q, K: Q @ _swap(K)),
            ("dk_wrong_axis", lambda Q, K: Q @ _swap(K) / np.sqrt(Q.shape[0])),
            ("dk_wrong_axis", lambda Q, K: Q @ _swap(K) / np.sqrt(Q.shape[1])),
            ("dk_wrong_axis", lambda Q, K: Q @ _swap(K) / np.sqrt(Q.shape[-2])),
            ("divided_by_dk", lambda Q, K: Q @ _swap(K) / Q.shape[-1]),
            ("wrong_values", lambda Q, K: Q @ _swap(K) / np.sqrt(Q.shape[-1]) + 0.1),
        ],
    ),
    "check_padded_weights": (
        _padded,
        [
            ("not_written", _not_written),
            ("no_mask", lambda Q, K, lengths: _padded(Q, K, lengths, keys=False)),
            ("masked_queries", lambda Q, K, lengths: _padded(Q, K, lengths, keys=False,
                                                             queries=True)),
            ("padding_queries_see_nothing", lambda Q, K, lengths: _padded(Q, K, lengths,
                                                                          queries=True)),
            ("zero_not_minus_inf", lambda Q, K, lengths: _padded(Q, K, lengths, fill=0.0)),
            ("mask_after_softmax", lambda Q, K, lengths: _padded(Q, K, lengths, after=True)),
            ("missing_scale", lambda Q, K, lengths: _padded(Q, K, lengths, scale=False)),
            ("mask_too_short", lambda Q, K, lengths: _padded(Q, K, lengths, shift=-1)),
            ("mask_keeps_one_pad", lambda Q, K, lengths: _padded(Q, K, lengths, shift=1)),
            ("wrong_shape", lambda Q, K, lengths: _padded(Q, K, lengths)[0]),
            ("wrong_values", lambda Q, K, lengths: _padded(Q, K, lengths) + 0.01),
        ],
    ),
}

PHRASES = {
    "no_mask": "still get weight",
    "masked_queries": "key axis",
    "padding_queries_see_nothing": "NaN",
    "zero_not_minus_inf": "e^0",
    "mask_after_softmax": "before the softmax",
    "mask_too_short": "last real token",
    "mask_keeps_one_pad": "one padding token",
    "wrong_shape": "(batch, heads, n, n)",
    "not_written": "not written yet",
    "projection_order": "row",
    "keys_from_w_q": "matched on",
    "queries_from_w_k": "asks for",
    "values_from_w_k": "hands over",
    "values_from_w_q": "hands over",
    "swapped_q_k": "each other's",
    "missing_projection": "is X itself",
    "wrong_type": "three arrays",
    "returned_none": "return",
    "wrong_values": "is off from column",
    "transpose_all_axes": "reverses all",
    "transpose_fixed_axes": "4-D",
    "not_transposing_k": "row of K",
    "transposed_result": "row per key",
    "missing_scale": "sqrt(d_k)",
    "dk_wrong_axis": "d_k is the dimension",
    "divided_by_dk": "square root",
}

# What the exercises ask students to write: a hint may lead there but never write it out.
ANSWER_CODE = ("X @ W", "@ W_", "swapaxes(", "-1, -2", "shape[-1]", "np.sqrt(", ".transpose(")

EVERY_MISTAKE = pytest.mark.parametrize(
    ("check_name", "mistake", "wrong"),
    [(name, mistake, wrong) for name, (_, wrongs) in CASES.items() for mistake, wrong in wrongs],
    ids=[f"{name}-{i}-{mistake}" for name, (_, wrongs) in CASES.items()
         for i, (mistake, _) in enumerate(wrongs)],
)


@pytest.mark.parametrize("check_name", sorted(CASES))
def test_check_accepts_a_correct_function(check_name):
    correct, _ = CASES[check_name]
    result = getattr(checks, check_name)(correct)
    assert result, result.message
    assert result.mistake is None and result.message.startswith("Well done: ")


@EVERY_MISTAKE
def test_check_names_the_mistake(check_name, mistake, wrong):
    result = getattr(checks, check_name)(wrong)
    assert not result, f"{check_name} let a '{mistake}' answer pass"
    assert result.mistake == mistake, result.message
    assert result.message.startswith("Not yet: ")
    assert PHRASES[mistake] in result.message
    assert "\n" not in result.message


@EVERY_MISTAKE
def test_hints_lead_to_the_answer_without_writing_it(check_name, mistake, wrong):
    message = getattr(checks, check_name)(wrong).message
    assert not [code for code in ANSWER_CODE if code in message], message


def test_library_answers_pass():
    assert checks.check_projections(project)
    assert checks.check_batched_scores(scaled_scores)
    assert checks.check_batched_scores(lambda Q, K: np.einsum("...id,...jd->...ij", Q, K)
                                       / np.sqrt(Q.shape[-1]))


def test_dot_t_passes_nothing_silently_on_the_first_probe():
    """The first probe is built so that K.T runs: the mistake must show in the numbers."""
    Q, K = model_checks._QH, model_checks._KH
    assert K.T.shape == K.shape
    wrong = Q @ K.T
    assert wrong.shape == (Q @ _swap(K)).shape
    assert not np.allclose(wrong, Q @ _swap(K))
    assert "the same shape here, so nothing raised" in checks.check_batched_scores(
        lambda Q, K: Q @ K.T / np.sqrt(Q.shape[-1])).message


def test_second_probe_has_every_axis_a_different_length():
    m = model_checks
    assert len(set(m._QB.shape)) == 4 and m._KB.shape[-2] not in m._QB.shape
    assert len({*m._X_EMB.shape, m._W_Q.shape[1], m._W_V.shape[1]}) == 4


def test_validate_gets_an_exception_for_an_unfinished_exercise(monkeypatch):
    monkeypatch.setenv("NBGRADER_VALIDATING", "1")
    with pytest.raises(checks.ExerciseNotDone, match="reverses all"):
        checks.check_batched_scores(lambda Q, K: Q @ K.T / np.sqrt(Q.shape[-1]))
    with pytest.raises(checks.ExerciseNotDone, match="not written yet"):
        checks.check_projections(_not_written)
