"""Each self-check accepts a correct function and names each likely mistake correctly.

For every check: one correct student function passes; one wrong function per mistake
fails with the right diagnosis (the ``mistake`` code) and a sentence that names it.
"""

from __future__ import annotations

import numpy as np
import pytest

import course_lib as cl
from course_lib import checks
from course_lib.checks import CheckResult, terms


def _softmax_rows(x):
    x = np.asarray(x, dtype=float)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _naive(x, axis=-1):
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)


def _global_max(x):
    e = np.exp(x - x.max())
    return e / e.sum(axis=-1, keepdims=True)


def _not_written(*args):
    raise NotImplementedError("Student exercise: write it")


def _mask_where(mask, s, fill=-np.inf):
    return np.where(mask, s, fill)


# ----------------------------------------------------------------------------- results


def test_result_repr_is_the_sentence_and_bool_is_the_verdict():
    ok = checks.check_scores(cl.scores)
    assert bool(ok) is True and ok.mistake is None
    assert repr(ok) == ok.message == str(ok)
    assert ok.message.startswith("Well done: ")
    bad = checks.check_scores(lambda Q, K: Q @ K.T * 2)
    assert bool(bad) is False
    assert repr(bad).startswith("Not yet: ")
    assert isinstance(bad, CheckResult)


# ----------------------------------------------------------------------------- each check

CASES = {
    "check_shapes": (
        lambda n_q, n_k, d_k, d_v: ((n_q, n_k), (n_q, d_v)),
        [
            ("transposed_result", lambda n_q, n_k, d_k, d_v: ((n_k, n_q), (n_q, d_v))),
            ("wrong_shape", lambda n_q, n_k, d_k, d_v: ((n_q, n_k), (n_q, d_k))),
            ("wrong_shape", lambda n_q, n_k, d_k, d_v: ((n_q, d_k), (n_q, d_v))),
            ("wrong_type", lambda n_q, n_k, d_k, d_v: n_q * n_k),
        ],
    ),
    "check_scores": (
        lambda Q, K: Q @ K.T,
        [
            ("not_written", _not_written),
            ("not_transposing_k", lambda Q, K: Q @ K),  # the shapes do not fit
            ("transposed_result", lambda Q, K: K @ Q.T),
            ("scaled_too_early", lambda Q, K: Q @ K.T / np.sqrt(Q.shape[-1])),
            ("wrong_shape", lambda Q, K: (Q * K[:2]).sum(axis=-1)),
            ("returned_none", lambda Q, K: None),
            ("wrong_values", lambda Q, K: Q @ K.T + 0.1),
        ],
    ),
    "check_scaled_scores": (
        lambda Q, K: Q @ K.T / np.sqrt(K.shape[1]),
        [
            ("missing_scale", lambda Q, K: Q @ K.T),
            ("dk_wrong_axis", lambda Q, K: Q @ K.T / np.sqrt(Q.shape[0])),
            ("dk_wrong_axis", lambda Q, K: Q @ K.T / np.sqrt(len(K))),
            ("divided_by_dk", lambda Q, K: Q @ K.T / Q.shape[-1]),
            ("multiplied_by_sqrt_dk", lambda Q, K: Q @ K.T * np.sqrt(Q.shape[-1])),
            ("not_transposing_k", lambda Q, K: Q @ K / np.sqrt(Q.shape[-1])),
            ("transposed_result", lambda Q, K: K @ Q.T / np.sqrt(Q.shape[-1])),
        ],
    ),
    "check_softmax": (
        _softmax_rows,
        [
            ("naive_exp_overflow", _naive),
            ("softmax_wrong_axis", lambda x: _naive(x, axis=0)),
            ("softmax_wrong_axis", lambda x: _softmax_rows(np.asarray(x).T).T),
            ("softmax_whole_table", lambda x: np.exp(x) / np.exp(x).sum()),
            ("no_exp", lambda x: x / x.sum(axis=-1, keepdims=True)),
            ("no_normalisation", np.exp),
            ("global_max_shift", _global_max),
            ("not_written", _not_written),
            ("wrong_shape", lambda x: _softmax_rows(x)[0]),
        ],
    ),
    "check_attention_weights": (
        lambda Q, K: _softmax_rows(Q @ K.T / np.sqrt(Q.shape[-1])),
        [
            ("missing_scale", lambda Q, K: _softmax_rows(Q @ K.T)),
            ("dk_wrong_axis", lambda Q, K: _softmax_rows(Q @ K.T / np.sqrt(Q.shape[0]))),
            ("dk_wrong_axis", lambda Q, K: _softmax_rows(Q @ K.T / np.sqrt(K.shape[0]))),
            ("softmax_wrong_axis",
             lambda Q, K: _softmax_rows((Q @ K.T / np.sqrt(Q.shape[-1])).T).T),
            ("naive_exp_overflow", lambda Q, K: _naive(Q @ K.T / np.sqrt(Q.shape[-1]))),
            ("global_max_shift", lambda Q, K: _global_max(Q @ K.T / np.sqrt(Q.shape[-1]))),
            ("not_transposing_k", lambda Q, K: _softmax_rows(Q @ K / np.sqrt(Q.shape[-1]))),
            ("transposed_result",
             lambda Q, K: _softmax_rows(K @ Q.T / np.sqrt(Q.shape[-1]))),
            ("not_written", _not_written),
            ("no_softmax", lambda Q, K: Q @ K.T / np.sqrt(Q.shape[-1])),
        ],
    ),
    "check_blend": (
        lambda w, V: w @ V,
        [
            ("blend_shapes", lambda w, V: V @ w),
            ("blend_shapes", lambda w, V: w.T @ V),
            ("blend_shapes", lambda w, V: w * V),
            ("raised", lambda w, V: {}["weights"]),  # any other error: named as such
            ("values_unweighted", lambda w, V: np.tile(V.mean(axis=0), (len(w), 1))),
            ("values_unweighted", lambda w, V: np.tile(V.sum(axis=0), (len(w), 1))),
            ("wrong_values", lambda w, V: np.round(w, 1) @ V),
            ("not_written", _not_written),
        ],
    ),
    "check_attention": (
        lambda Q, K, V: _softmax_rows(Q @ K.T / np.sqrt(Q.shape[-1])) @ V,
        [
            ("missing_scale", lambda Q, K, V: _softmax_rows(Q @ K.T) @ V),
            ("dk_wrong_axis",
             lambda Q, K, V: _softmax_rows(Q @ K.T / np.sqrt(Q.shape[0])) @ V),
            ("softmax_wrong_axis",
             lambda Q, K, V: _naive(Q @ K.T / np.sqrt(Q.shape[-1]), axis=0) @ V),
            ("naive_exp_overflow",
             lambda Q, K, V: _naive(Q @ K.T / np.sqrt(Q.shape[-1])) @ V),
            ("global_max_shift",
             lambda Q, K, V: _global_max(Q @ K.T / np.sqrt(Q.shape[-1])) @ V),
            ("not_transposing_k",
             lambda Q, K, V: _softmax_rows(Q @ K / np.sqrt(Q.shape[-1])) @ V),
            ("no_softmax", lambda Q, K, V: (Q @ K.T / np.sqrt(Q.shape[-1])) @ V),
            ("values_unweighted", lambda Q, K, V: np.tile(V.mean(axis=0), (len(Q), 1))),
            ("not_written", _not_written),
        ],
    ),
    "check_masked_attention": (
        lambda Q, K, V, m: _softmax_rows(
            _mask_where(m, Q @ K.T / np.sqrt(Q.shape[-1]))) @ V,
        [
            ("mask_after_softmax",
             lambda Q, K, V, m: (_softmax_rows(Q @ K.T / np.sqrt(Q.shape[-1])) * m) @ V),
            ("mask_ignored", lambda Q, K, V, m: _softmax_rows(Q @ K.T / np.sqrt(3)) @ V),
            ("mask_inverted",
             lambda Q, K, V, m: _softmax_rows(
                 _mask_where(~m, Q @ K.T / np.sqrt(Q.shape[-1]))) @ V),
            ("mask_with_zero",
             lambda Q, K, V, m: _softmax_rows(
                 _mask_where(m, Q @ K.T / np.sqrt(Q.shape[-1]), 0.0)) @ V),
            ("mask_with_zero",
             lambda Q, K, V, m: _softmax_rows(Q @ K.T / np.sqrt(Q.shape[-1]) * m) @ V),
            ("missing_scale",
             lambda Q, K, V, m: _softmax_rows(_mask_where(m, Q @ K.T)) @ V),
            ("dk_wrong_axis",
             lambda Q, K, V, m: _softmax_rows(
                 _mask_where(m, Q @ K.T / np.sqrt(Q.shape[0]))) @ V),
            ("dk_wrong_axis",
             lambda Q, K, V, m: _softmax_rows(
                 _mask_where(m, Q @ K.T / np.sqrt(len(K)))) @ V),
            ("not_transposing_k",
             lambda Q, K, V, m: _softmax_rows(
                 _mask_where(m, Q @ K / np.sqrt(Q.shape[-1]))) @ V),
            ("not_written", _not_written),
        ],
    ),
}

# A phrase the sentence for each mistake must contain, so the diagnosis is readable.
PHRASES = {
    "not_written": "not written yet",
    "raised": "raised",
    "transposed_result": "",
    "scaled_too_early": "sqrt(d_k)",
    "wrong_shape": "shape",
    "returned_none": "return",
    "wrong_values": "is off from column",
    "missing_scale": "sqrt(d_k)",
    "dk_wrong_axis": "d_k is the dimension",
    "divided_by_dk": "square root",
    "multiplied_by_sqrt_dk": "divides",
    "naive_exp_overflow": "overflows",
    "global_max_shift": "shift of its own",
    "softmax_wrong_axis": "row",
    "softmax_whole_table": "whole table",
    "no_exp": "exponentiat",
    "no_normalisation": "row sum",
    "values_unweighted": "weight on it",
    "no_softmax": "softmax",
    "mask_after_softmax": "before the softmax",
    "mask_ignored": "exactly 0",
    "mask_inverted": "wrong way round",
    "mask_with_zero": "e^x = 0",
    "wrong_type": "two shapes",
    "not_transposing_k": "row of K",
    "blend_shapes": "row of",
}


# Each check with each wrong function of CASES.
EVERY_MISTAKE = pytest.mark.parametrize(
    ("check_name", "mistake", "wrong"),
    [(name, mistake, wrong) for name, (_, wrongs) in CASES.items() for mistake, wrong in wrongs],
    ids=[f"{name}-{i}-{mistake}" for name, (_, wrongs) in CASES.items()
         for i, (mistake, _) in enumerate(wrongs)],
)

# What the exercises ask students to write: a hint may lead there but never write it out.
ANSWER_CODE = ("K.T", "@ V", "np.where(", "-np.inf", "axis=-1", "axis=1", "keepdims",
               "shape[-1]", "shape[1]", "np.sqrt(d_k)", ".max(", "np.exp(x -")


@EVERY_MISTAKE
def test_hints_lead_to_the_answer_without_writing_it(check_name, mistake, wrong):
    """05 once said "weights @ V" outright; 02, 04 and 07 wrote their answers out too."""
    message = getattr(checks, check_name)(wrong).message
    assert not [code for code in ANSWER_CODE if code in message], message


@pytest.mark.parametrize("check_name", sorted(CASES))
def test_check_accepts_a_correct_function(check_name):
    correct, _ = CASES[check_name]
    result = getattr(checks, check_name)(correct)
    assert result, result.message
    assert result.mistake is None


@EVERY_MISTAKE
def test_check_names_the_mistake(check_name, mistake, wrong):
    result = getattr(checks, check_name)(wrong)
    assert not result, f"{check_name} let a '{mistake}' answer pass"
    assert result.mistake == mistake, result.message
    assert result.message.startswith("Not yet: ")
    assert PHRASES[mistake] in result.message
    assert "\n" not in result.message  # one sentence, one line


@pytest.mark.parametrize("check_name", sorted(set(CASES) - {"check_shapes"}))
def test_library_answers_pass(check_name):
    answers = {
        "check_scores": cl.scores,
        "check_scaled_scores": cl.scaled_scores,
        "check_softmax": cl.softmax,
        "check_attention_weights": cl.attention_weights,
        "check_blend": cl.blend,
        "check_attention": cl.attention,  # returns (output, weights): accepted
        "check_masked_attention": cl.attention,
    }
    assert getattr(checks, check_name)(answers[check_name])


def test_not_callable_gets_a_clear_message():
    result = checks.check_softmax(np.array([1.0, 2.0]))
    assert result.mistake == "not_callable"
    assert "without brackets" in result.message


def test_raised_message_names_error_and_shapes():
    result = checks.check_scores(lambda Q, K: Q @ K)
    assert result.mistake == "not_transposing_k"
    assert "ValueError" in result.message
    assert "Q of shape (2, 3), K of shape (4, 3)" in result.message
    assert "row of K" in result.message and "K.T" not in result.message


def test_hint_about_transposing_only_for_shape_errors():
    result = checks.check_attention(lambda Q, K, V: 1 / 0)
    assert result.mistake == "raised"
    assert "ZeroDivisionError: division by zero" in result.message
    assert "K.T" not in result.message


def test_nan_output_is_reported_as_not_finite():
    result = checks.check_blend(lambda w, V: np.full((2, 5), np.nan))
    assert result.mistake == "not_finite"


def test_student_warnings_are_silenced(recwarn):
    checks.check_softmax(_naive)
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_probe_inputs_are_unsaturated_and_distinct():
    """The probes keep softmax responsive: no weight near 0 or 1 in the first probe."""
    w = cl.attention_weights(terms._Q, terms._K)
    assert w.max() < 0.6 and w.min() > 0.1
    assert len({terms._Q.shape[0], terms._K.shape[0], terms._Q.shape[1]}) == 3
    x = cl.softmax(terms._X)
    assert x.max() < 0.7 and x.min() > 0.05
    assert cl.scaled_scores(terms._Q_BIG, terms._K_BIG).max() > 710  # exp overflows


@pytest.mark.parametrize(
    ("answer", "ok", "mistake"),
    [
        ([1.25, 1.5], True, None),
        (np.array([1.26, 1.50]), True, None),
        (lambda: (1.25, 1.5), True, None),
        (cl.attention(*[getattr(cl.the_cat_sat(), a) for a in "QKV"])[0][2], True, None),
        ([2.0, 2.0], False, "wrong_values"),
        ([1.0, 1.5], False, "wrong_values"),
        (cl.attention(*[getattr(cl.the_cat_sat(), a) for a in "QKV"], scale=False)[0][2],
         False, "missing_scale"),
        ([1.25, 1.5, 0.0], False, "wrong_shape"),
        (_not_written, False, "not_written"),
    ],
)
def test_check_sat_output(answer, ok, mistake):
    result = checks.check_sat_output(answer)
    assert bool(result) is ok, result.message
    assert result.mistake == mistake


def test_messages_use_the_students_function_name():
    def my_softmax(x):
        raise NotImplementedError("Student exercise: softmax")

    assert "`my_softmax` is not written yet" in checks.check_softmax(my_softmax).message
    assert "`softmax` is not written yet" in checks.check_softmax(
        lambda x: _not_written()).message


def test_validate_gets_an_exception_for_an_unfinished_exercise(monkeypatch):
    """Under nbgrader validate (NBGRADER_VALIDATING=1) a failed check raises its verdict."""
    monkeypatch.setenv("NBGRADER_VALIDATING", "1")
    with pytest.raises(checks.ExerciseNotDone, match=r"^Not yet: `_not_written` is not written"):
        checks.check_softmax(_not_written)
    with pytest.raises(checks.ExerciseNotDone, match="overflows"):
        checks.check_softmax(_naive)
    assert checks.check_softmax(_softmax_rows)  # a finished exercise still passes
    monkeypatch.delenv("NBGRADER_VALIDATING")
    assert not checks.check_softmax(_naive)  # a normal run returns the verdict


# --------------------------------------------------- feedback never hands over the answer

def _recording(reference, wrong_fn):
    """A student function computing ``wrong_fn``; ``calls`` keeps what the right answer
    would have been for each input the check tried."""
    calls = []

    def student(*args):
        calls.append(reference(*args))
        return wrong_fn(*args)

    return student, calls


def _row_zero_off(reference):
    """The right answer with its first row raised by 0.0137: no named mistake fits."""
    def wrong(*args):
        got = np.array(reference(*args), dtype=float)
        got[(0,) * (got.ndim - 1)] += 0.0137
        return got
    return wrong


_REFERENCES = {
    "check_scores": cl.scores,
    "check_scaled_scores": cl.scaled_scores,
    "check_softmax": cl.softmax,
    "check_attention_weights": cl.attention_weights,
    "check_blend": cl.blend,
    "check_attention": lambda Q, K, V: cl.attention(Q, K, V)[0],
    "check_masked_attention": lambda Q, K, V, m: cl.attention(Q, K, V, mask=m)[0],
    "check_batched_scores": cl.scaled_scores,
    "check_cross_attention": lambda Q, K, V: cl.attention(Q, K, V)[0],
    "check_model_weights": cl.attention_weights,
}
# two mistakes at once: no single named mistake fits, so the check falls back
_COMBINED = {
    "check_attention_weights": lambda Q, K: cl.softmax(Q @ K.T, axis=0),  # no scale, axis 0
    "check_attention": lambda Q, K, V: cl.softmax(Q @ K.T, axis=0) @ V,
    "check_cross_attention": lambda Q, K, V: cl.softmax(Q @ K.T / 2.0, axis=0) @ V,
}


def _numbers_in(text: str) -> set[str]:
    import re

    return set(re.findall(r"-?\d+\.\d+", text))


@pytest.mark.parametrize("name", sorted(_REFERENCES) + [f"{n}+combined" for n in _COMBINED])
def test_feedback_names_where_never_the_expected_numbers(name):
    """Issue 30: a wrong answer that fits no named mistake got "row 0 is [...] where it
    should be [...]", the right numbers. Now: where (row, column, how many rows), not what."""
    check_name = name.removesuffix("+combined")
    reference = _REFERENCES[check_name]
    wrong = _COMBINED[check_name] if name.endswith("+combined") else _row_zero_off(reference)
    student, calls = _recording(reference, wrong)
    result = getattr(checks, check_name)(student)
    assert not result and calls, result.message
    assert "row" in result.message or "entry" in result.message, result.message
    assert "should be" not in result.message and "the answer is" not in result.message
    shown = _numbers_in(result.message) - _student_numbers(result.message)
    for want in calls:
        want = np.asarray(want, dtype=float)
        for row in want.reshape(-1, want.shape[-1]) if want.ndim > 1 else [want]:
            assert terms._fmt(row) not in result.message, result.message
        expected = {f"{v:.3f}".rstrip("0") for v in want.ravel() if abs(v - round(v)) > 1e-9}
        assert not expected & shown, result.message


def _student_numbers(message: str) -> set[str]:
    """The numbers the message shows as the student's own ("your row is [...]")."""
    import re

    found = re.search(r"your row is (\[[^\]]*\])", message)
    return _numbers_in(found.group(1)) if found else set()


def test_the_package_hands_out_every_check_of_its_modules_and_no_other():
    """A lesson calls `checks.check_x(f)` whatever module of course_lib/checks holds it,
    and `checks.compare_guess(...)` and the parts of a guess (checks/predictions.py)."""
    import importlib
    import pkgutil

    from course_lib.checks import predictions

    own = set()
    for info in pkgutil.iter_modules(checks.__path__):
        module = importlib.import_module(f"course_lib.checks.{info.name}")
        own |= {n for n in getattr(module, "__all__", []) if n.startswith("check_")}
        assert all(hasattr(module, n) for n in getattr(module, "__all__", [])), info.name
    assert own and set(checks.__all__) == own | {"CheckResult", "ExerciseNotDone"} | set(
        predictions.__all__)
    assert all(getattr(checks, n) is not None for n in checks.__all__)
