"""The checkpoint's checks: plain data in, a verdict in the spec's words out."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from course_lib import the_cat_sat
from course_lib.checkpoint_checks import (
    CheckFailed,
    answer_as_data,
    answer_function,
    check,
    judge,
    plain_reply,
)
from course_lib.checkpoint_spec import CHECKPOINT

EX = the_cat_sat()
WORKED = {"Q": EX.Q, "K": EX.K}


def _weights(fn, inputs=WORKED, grade_id="test_attention_weights_visible"):
    data = answer_as_data("weights", fn, (inputs["Q"], inputs["K"]))
    return judge(grade_id, json.loads(json.dumps(data)), inputs)


def test_the_right_answer_passes_and_each_mistake_is_named_on_the_worked_example():
    from course_lib import attention_weights

    assert _weights(attention_weights).passed
    for mistake in CHECKPOINT.mistakes:
        verdict = _weights(answer_function(mistake.source))
        if mistake.id == "naive_exp_overflow":  # small scores: exp does not overflow here
            assert verdict.passed
            continue
        assert not verdict.passed and verdict.mistake == mistake.id, verdict
        assert verdict.message.lower().startswith(mistake.hint[:20].lower())


def test_answers_of_the_wrong_form_are_named_not_crashed():
    assert _weights(lambda Q, K: 1 / 0).reason == "raised"
    assert "ZeroDivisionError" in _weights(lambda Q, K: 1 / 0).message
    assert _weights(lambda Q, K: "weights").reason == "format"
    assert "shape (3, 3)" in _weights(lambda Q, K: np.ones((2, 3)) / 3).message
    assert "sums to 2" in _weights(lambda Q, K: Q @ K.T).message
    assert "NaN" in _weights(lambda Q, K: np.full((3, 3), np.nan)).message
    v = _weights(lambda Q, K: np.full((3, 3), 1 / 3))
    assert "Row 0 of the weights is [0.33, 0.33, 0.33]" in v.message  # the worked example
    assert "[0.40, 0.20, 0.40]" in v.message


def test_a_hidden_check_never_prints_its_inputs_or_expected_values():
    inputs = {"Q": [[0.25, 1.75]], "K": [[1.5, 0.5], [0.75, 1.25]]}
    v = _weights(lambda Q, K: np.array([[0.3, 0.7]]), inputs, "test_missing_scale")
    assert not v.passed
    for number in ("0.25", "1.75", "1.5", "0.75", "0.3", "0.7"):
        assert number not in v.message


def test_sat_output_and_letters():
    sat = {"Q": EX.Q, "K": EX.K, "V": EX.V, "row": 2}
    assert judge("test_sat_output", answer_as_data("output", [1.2552, 1.5035]), sat).passed
    assert judge("test_sat_output", answer_as_data("output", [1.26, 1.5]), sat).passed
    assert not judge("test_sat_output", answer_as_data("output", [1.27, 1.5]), sat).passed
    assert "2 numbers" in judge("test_sat_output", answer_as_data("output", [1.0]), {}).message
    assert judge("test_mc_why_scale", answer_as_data("letter", " c\n"), {"right": "C"}).passed
    assert not judge("test_mc_why_scale", answer_as_data("letter", "B"), {"right": "C"}).passed
    assert judge("test_mc_why_scale", answer_as_data("letter", "cc"), {}).reason == "format"


def test_sat_output_from_the_exact_weights_means_exact():
    """Issue 30 (2): the stem says "from the exact weights", so the output of weights rounded
    to two decimals fails, and the stem states the tolerance the check uses."""
    import nbformat

    from course_grading.variants import SOURCE_PATH
    from course_lib import attention_weights

    sat = {"Q": EX.Q, "K": EX.K, "V": EX.V, "row": 2}
    rounded = attention_weights(EX.Q, EX.K)[2].round(2) @ EX.V
    verdict = judge("test_sat_output", answer_as_data("output", rounded.tolist()), sat)
    assert not verdict.passed and "rounded" in verdict.message
    tolerance = CHECKPOINT.check("test_sat_output").tolerance
    assert tolerance == 0.005  # two decimals, correctly rounded
    root = Path(__file__).resolve().parents[1]
    stem = "\n".join(c.source for c in nbformat.read(root / SOURCE_PATH, as_version=4).cells
                     if c.cell_type == "markdown" and "sat_output" in c.source)
    assert "exact" in stem and "within 0.005" in stem, stem


def test_only_plain_data_is_accepted():
    """What a lying kernel can send: the wrong types, a second key, huge or deep data."""
    assert plain_reply("weights", {"value": [[0.5, 0.5]]}) == {"value": [[0.5, 0.5]]}
    for bad in ([1], {"value": [[0.5, "0.5"]]}, {"value": [[True, 0.5]]}, {"value": 1, "x": 2},
                {"raised": 5}, {"value": [[[[[0.5]]]]]}, {"evil": 1}, "value"):
        assert isinstance(plain_reply("weights", bad), str), bad
    assert isinstance(plain_reply("letter", {"value": "A" * 100}), str)
    verdict = judge("test_mc_why_scale", {"value": ["C"]}, {"right": "C"})
    assert verdict.reason == "not_plain" and not verdict.passed


def test_check_raises_one_sentence_without_a_traceback(capsys):
    with pytest.raises(CheckFailed) as info:
        check("test_attention_weights_visible",
              answer_function(CHECKPOINT.mistake("wrong_axis").source), Q=EX.Q, K=EX.K)
    assert info.value._render_traceback_() == [f"CheckFailed: {info.value}"]
    check("test_mc_why_scale", "a")
    assert "whether it is the right one is checked when the quiz is graded" in \
        capsys.readouterr().out
    with pytest.raises(TypeError, match="needs the inputs Q and K"):
        check("test_attention_weights_visible", lambda Q, K: Q)
    with pytest.raises(KeyError, match="has no check 'test_typo'"):
        check("test_typo", 1)
