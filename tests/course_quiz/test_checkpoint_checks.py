"""The checkpoint's checks: plain data in, a verdict in the spec's words out."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import numpy as np
import pytest

from course_grading.checkpoint_answers import (
    MISTAKE_SOURCES,
    answer_function,
    expected,
    weights_without_self,
)
from course_grading.variants import SOURCE_PATH, make_variant
from course_quiz.checkpoint_checks import (
    CheckFailed,
    answer_as_data,
    check,
    judge,
    plain_reply,
)
from course_quiz.checkpoint_spec import CHECKPOINT

ROOT = Path(__file__).resolve().parents[2]
EX = make_variant("public")
WORKED = {"Q": EX.Q, "K": EX.K}
SHIFT = {"Q": EX.Q, "K": EX.K, "row": EX.row, "key": EX.shift_key, "c": EX.c}


def _weights(fn, inputs=WORKED, grade_id="test_weights_visible"):
    data = answer_as_data("weights", fn, (inputs["Q"], inputs["K"]))
    return judge(grade_id, json.loads(json.dumps(data)), inputs,
                 expected=expected(grade_id, inputs))


def test_the_right_answer_passes_and_each_mistake_is_named_on_the_setup_example():
    assert _weights(weights_without_self).passed
    for mistake in CHECKPOINT.mistakes:
        verdict = _weights(answer_function(MISTAKE_SOURCES[mistake.id]))
        if mistake.id == "naive_exp_overflow":  # small scores: exp does not overflow here
            assert verdict.passed
            continue
        assert not verdict.passed and verdict.mistake == mistake.id, verdict
        assert verdict.message.lower().startswith(mistake.hint[:20].lower())


def _in_notebook(fn, inputs=WORKED):
    """The visible check as the student's notebook runs it: no expected values."""
    data = answer_as_data("weights", fn, (inputs["Q"], inputs["K"]))
    return judge("test_weights_visible", json.loads(json.dumps(data)), inputs)


def test_the_students_check_confirms_the_form_never_the_weights():
    """Issue 41: the visible check confirmed the weights, so question 1 could be passed by
    trial and error against it. In the notebook it now passes any table of the right form:
    the right one, uniform weights and a wrong one alike, in the same words."""
    wrong = weights_without_self(EX.Q, EX.K)
    wrong[1] = [0.125, 0.0, 0.375, 0.5]
    uniform = (1 - np.eye(4)) / 3
    verdicts = [_in_notebook(f) for f in (weights_without_self, lambda Q, K: uniform,
                                          lambda Q, K: wrong)]
    assert all(v.passed for v in verdicts)
    assert len({v.message for v in verdicts}) == 1
    assert "checked when the quiz is graded" in verdicts[0].message
    for value in weights_without_self(EX.Q, EX.K).ravel():
        if value:
            assert f"{value:.2f}" not in verdicts[0].message


def test_the_students_check_names_the_mistakes_that_show_in_the_form():
    """Hiding the diagonal after the softmax, not at all, causally, or a softmax down the
    columns: each shows in the form of the weights and is named with the spec's words.
    The others (the scale, d_k, overflow) do not, and pass until the quiz is graded."""
    named = {"no_mask": "no_mask", "zero_score": "no_mask", "causal_mask": "causal_mask",
             "mask_after_softmax": "mask_after_softmax", "wrong_axis": "wrong_axis"}
    for mistake in CHECKPOINT.mistakes:
        verdict = _in_notebook(answer_function(MISTAKE_SOURCES[mistake.id]))
        if mistake.id in named:
            want = CHECKPOINT.mistake(named[mistake.id])
            assert not verdict.passed and verdict.mistake == want.id, (mistake.id, verdict)
            assert verdict.message.lower().startswith(want.hint[:20].lower())
        else:
            assert verdict.passed, (mistake.id, verdict)
    assert "shape (4, 4)" in _in_notebook(lambda Q, K: np.ones((2, 4)) / 4).message
    assert "NaN" in _in_notebook(lambda Q, K: np.full((4, 4), np.nan)).message
    assert "negative" in _in_notebook(lambda Q, K: (np.ones((4, 4)) - 2 * np.eye(4)) / 2
                                      ).message


def test_answers_of_the_wrong_form_are_named_not_crashed():
    assert _weights(lambda Q, K: 1 / 0).reason == "raised"
    assert "ZeroDivisionError" in _weights(lambda Q, K: 1 / 0).message
    assert _weights(lambda Q, K: "weights").reason == "format"
    assert "shape (4, 4)" in _weights(lambda Q, K: np.ones((2, 4)) / 4).message
    assert "NaN" in _weights(lambda Q, K: np.full((4, 4), np.nan)).message


def test_a_failed_check_names_the_row_never_the_expected_numbers():
    """Issue 30: feedback names where (the row), never what it should have been."""
    wrong = weights_without_self(EX.Q, EX.K)
    wrong[1] = [0.125, 0.0, 0.375, 0.5]  # row 1 wrong, still summing to 1
    v = _weights(lambda Q, K: wrong)
    assert not v.passed and CHECKPOINT.check("test_weights_visible").hint in v.message
    for number in np.delete(weights_without_self(EX.Q, EX.K)[1], 1):  # not the diagonal's 0
        assert f"{number:.2f}" not in v.message


def test_a_hidden_check_never_prints_its_inputs_or_expected_values():
    inputs = {"Q": [[0.25, 1.75], [1.5, 0.5]], "K": [[1.5, 0.5], [0.75, 1.25]]}
    v = _weights(lambda Q, K: np.array([[0.3, 0.7], [0.6, 0.4]]), inputs, "test_missing_scale")
    assert not v.passed
    for number in ("0.25", "1.75", "1.5", "0.75", "0.3", "0.7", "0.6", "0.4"):
        assert number not in v.message


def test_the_derivation_is_judged_and_its_misconceptions_named():
    want = EX.shifted_row
    exp = expected("test_shifted_key", SHIFT)
    assert judge("test_shifted_key", answer_as_data("output", want.round(3)), SHIFT,
                 expected=exp).passed
    from course_lib import attention_weights

    row = attention_weights(EX.Q, EX.K)[EX.row]
    times = row.copy()
    times[EX.shift_key] *= np.exp(EX.c)
    plus = row.copy()
    plus[EX.shift_key] += EX.c
    for wrong, named in ((row, "row_shift_rule"), (times, "times_e_c"), (plus, "plus_c")):
        v = judge("test_shifted_key", answer_as_data("output", wrong.tolist()), SHIFT,
                  expected=exp)
        assert not v.passed and v.mistake == named, v
        assert CHECKPOINT.misconception(named).hint[1:30] in v.message
    assert "4 numbers" in judge("test_shifted_key", answer_as_data("output", [1.0, 2.0]),
                                SHIFT, expected=exp).message
    assert judge("test_shifted_key", answer_as_data("output", [1.0, 0.0]), {}).passed  # form


def test_the_derivation_itself_is_graded_its_factors_and_their_misconceptions_named():
    """Issue 41: the derivation is graded for its intermediate quantities, not only the row.
    The factors are measured here from the normalisers themselves (sums of e^score before
    and after the shift), not from the grader's formula; the coder's shortcut (the new row
    by a softmax, the factors read off as new over old, the normaliser's as the ratio of
    the rows' sums) is named as its misconception, and so is each other wrong derivation."""
    from course_lib import attention_weights

    scores = EX.Q @ EX.K.T / np.sqrt(EX.Q.shape[-1])
    raised = scores.copy()
    raised[:, EX.shift_key] += EX.c
    z_old, z_new = np.exp(scores[EX.row]).sum(), np.exp(raised[EX.row]).sum()
    old = attention_weights(EX.Q, EX.K)[EX.row]
    new = np.exp(raised[EX.row]) / z_new
    other = next(i for i in range(len(old)) if i != EX.shift_key)
    measured = [z_new / z_old, new[EX.shift_key] / old[EX.shift_key], new[other] / old[other]]
    exp = expected("test_shift_factors", SHIFT)
    assert np.allclose(exp["want"], measured)
    assert np.isclose(measured[0], 1 + old[EX.shift_key] * (np.exp(EX.c) - 1))
    assert judge("test_shift_factors", answer_as_data("output", np.round(measured, 3)),
                 SHIFT, expected=exp).passed
    shortcut = [new.sum() / old.sum(), measured[1], measured[2]]
    wrongs = ((shortcut, "normaliser_as_weight_sum"), ([1.0, 1.0, 1.0], "factors_unchanged"),
              ([np.exp(EX.c), 1.0, np.exp(-EX.c)], "every_score_raised"))
    for wrong, named in wrongs:
        v = judge("test_shift_factors", answer_as_data("output", wrong), SHIFT, expected=exp)
        assert not v.passed and v.mistake == named, v
        assert CHECKPOINT.misconception(named).hint[1:30] in v.message
    # the row's misconceptions are the row check's: the factors check never names them
    row_wrong = judge("test_shift_factors", answer_as_data("output", old.tolist()), SHIFT,
                      expected=exp)
    assert not row_wrong.passed and row_wrong.mistake is None
    assert "3 numbers" in row_wrong.message
    assert judge("test_shift_factors", answer_as_data("output", [2.0, 1.0, 0.5]), {}).passed


def test_the_derivation_stem_states_the_tolerance_the_check_uses():
    """Issue 30 (2): stem and tolerance agree (0.005: two decimals, correctly rounded)."""
    tolerances = {CHECKPOINT.check(c).tolerance for c in CHECKPOINT.question(
        "shifted_key").checks}
    assert tolerances == {0.005}  # the factors and the row alike: "Both are checked"
    stem = "\n".join(c.source for c in nbformat.read(ROOT / SOURCE_PATH, as_version=4).cells
                     if c.cell_type == "markdown" and "shifted_weights" in c.source)
    assert "within\n0.005" in stem or "within 0.005" in stem, stem
    assert "`shift_factors`" in stem, stem


def test_letters_name_the_misconception_of_a_wrong_option():
    inputs = {"right": "B", "wrong": {"A": "division_sharpens", "C": "scale_like_shift",
                                      "D": "misreads_table"}}
    assert judge("test_mc_read_table", answer_as_data("letter", " b\n"), inputs).passed
    v = judge("test_mc_read_table", answer_as_data("letter", "C"), inputs)
    assert not v.passed and v.mistake == "scale_like_shift"
    assert CHECKPOINT.misconception("scale_like_shift").hint in v.message
    assert judge("test_mc_read_table", answer_as_data("letter", "cc"), {}).reason == "format"


def test_only_plain_data_is_accepted():
    """What a lying kernel can send: the wrong types, a second key, huge or deep data."""
    assert plain_reply("weights", {"value": [[0.5, 0.5]]}) == {"value": [[0.5, 0.5]]}
    for bad in ([1], {"value": [[0.5, "0.5"]]}, {"value": [[True, 0.5]]}, {"value": 1, "x": 2},
                {"raised": 5}, {"value": [[[[[0.5]]]]]}, {"evil": 1}, "value"):
        assert isinstance(plain_reply("weights", bad), str), bad
    assert isinstance(plain_reply("letter", {"value": "A" * 100}), str)
    verdict = judge("test_mc_read_table", {"value": ["C"]}, {"right": "C"})
    assert verdict.reason == "not_plain" and not verdict.passed


def test_check_raises_one_sentence_without_a_traceback(capsys):
    with pytest.raises(CheckFailed) as info:
        check("test_weights_visible", answer_function(MISTAKE_SOURCES["wrong_axis"]),
              Q=EX.Q, K=EX.K)
    assert info.value._render_traceback_() == [f"CheckFailed: {info.value}"]
    check("test_mc_read_table", "a")
    assert "whether it is the right one is checked when the quiz is graded" in \
        capsys.readouterr().out
    with pytest.raises(TypeError, match="needs the inputs Q and K"):
        check("test_weights_visible", lambda Q, K: Q)
    with pytest.raises(ValueError, match="needs expected="):
        check("test_shifted_key", [0.25, 0.25, 0.25, 0.25], Q=EX.Q, K=EX.K, row=0, key=1,
              c=1.0)
    with pytest.raises(KeyError, match="has no check 'test_typo'"):
        check("test_typo", 1)
