"""The checkpoint's checks: turn an answer into plain data, then judge that data.

A check of the checkpoint quiz has two halves, kept apart on purpose:

1. :func:`answer_as_data` turns the student's answer into plain data (JSON types only): it
   calls the student's function on the check's inputs, or reads an array of numbers, or
   the letter of a multiple-choice answer.
2. :func:`judge` compares that plain data with the expected values it is given, and
   returns a :class:`Verdict` whose words come from
   :data:`course_lib.checkpoint_spec.CHECKPOINT`.

This module holds no answer of the quiz and computes none (STYLE.md habit 9): the expected
values come from the instructor's package (``course_grading.checkpoint_answers``). In the
student's notebook both halves run in the student's kernel, and a check knows no expected
value: it confirms the form of an answer (the shape of the weights, a zero diagonal, rows
summing to 1, a row of finite numbers, a letter) and names the mistakes that show in the
form alone, never whether the values are right (issue 41: a visible check that confirmed
the weights could be passed by trial and error). :func:`check` raises
:class:`CheckFailed` with one sentence (that is also what nbgrader's *Validate* prints).
When the quiz is graded, the instructor's grader (``course_grading.verdicts``) runs only
the first half in the student's kernel, receives the data as JSON, computes the expected
values itself and runs the second half on the instructor's side, where nothing the
student's code did can reach the expectations or the comparison.

Examples
--------
>>> import numpy as np
>>> Q = K = np.array([[1.0, 0.0], [0.0, 1.0]])
>>> expected = {"want": [[0.0, 1.0], [1.0, 0.0]],
...             "mistaken": {"no_mask": [[0.67, 0.33], [0.33, 0.67]]}}
>>> def answer(Q, K):  # returns the expected table, whatever Q and K
...     return np.array(expected["want"])
>>> check("test_weights_visible", answer, Q=Q, K=K)  # in the notebook: the form only
✓ test_weights_visible: `weights_without_self` has the form of the weights (...
>>> judge("test_weights_visible", {"value": [[0.67, 0.33], [0.33, 0.67]]},
...       {"Q": Q, "K": K}, expected=expected).mistake  # as the grader judges
'no_mask'
"""

from __future__ import annotations

import base64
import json
import re
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .checkpoint_spec import CHECKPOINT, Check, QuizSpec

__all__ = [
    "MAX_VALUES",
    "CheckFailed",
    "Verdict",
    "answer_as_data",
    "check",
    "judge",
    "plain_reply",
    "read_expected",
]

#: The most numbers an answer may hand back to a check (larger answers are refused).
MAX_VALUES = 4096
_MAX_LETTER = 32
_EXCEPTION_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]{0,79}$")


class CheckFailed(AssertionError):
    """A check of the checkpoint failed; the message names what was wrong.

    IPython shows only the message (no traceback of the check's code), and so does
    nbgrader's *Validate*.
    """

    def _render_traceback_(self) -> list[str]:
        return [f"CheckFailed: {self}"]


@dataclass(frozen=True)
class Verdict:
    """What a check decided.

    Attributes
    ----------
    grade_id : str
    passed : bool
    message : str
        One or two sentences for the student: what passed, or what went wrong.
    reason : str
        ``"passed"``, ``"wrong"`` (an answer that is not right), ``"format"`` (an
        answer of the wrong form: shape, type, letter), ``"raised"``, ``"missing"``,
        ``"not_plain"`` (the grader received something that is not plain data) or
        ``"not_run"`` (the check could not run).
    mistake : str or None
        The :class:`~course_lib.checkpoint_spec.Mistake` the answer shows, if one does.
    detail : str or None
        For ``"raised"``: the name of the exception's class.
    """

    grade_id: str
    passed: bool
    message: str
    reason: str
    mistake: str | None = None
    detail: str | None = None


def answer_as_data(kind: str, value: Any, args: tuple[Any, ...] = (),
                   limit: int = 4096) -> dict[str, Any]:
    """Turn a student's answer into plain data (this exact code runs in the grading kernel).

    The instructor's grader sends the source of this function to the student's kernel and
    reads what it returns, as JSON: keep it self-contained (its imports inside it).

    Parameters
    ----------
    kind : str
        ``"weights"`` (``value`` is a function, called with ``args`` as float arrays),
        ``"output"`` (``value`` holds numbers) or ``"letter"`` (``value`` is a string).
    value : object
        The student's function or variable.
    args : tuple
        The inputs to call a function with (nested lists or arrays of numbers).
    limit : int
        The most numbers to send back.

    Returns
    -------
    dict
        ``{"value": ...}`` (nested lists of floats, or a string), or one of
        ``{"raised": name}``, ``{"not_numbers": type}``, ``{"not_text": type}``,
        ``{"too_big": shape}``.
    """
    import numpy

    if kind == "weights":
        try:
            with numpy.errstate(all="ignore"):
                value = value(*(numpy.array(a, dtype=float) for a in args))
        except BaseException as exc:  # the student's code may raise anything at all
            return {"raised": type(exc).__name__}
    if kind == "letter":
        if isinstance(value, str):
            return {"value": str.__str__(value)[:32]}
        return {"not_text": type(value).__name__}
    try:
        with numpy.errstate(all="ignore"):
            array = numpy.asarray(value, dtype=float)
    except BaseException:  # e.g. a list of strings, or an object whose __float__ raises
        return {"not_numbers": type(value).__name__}
    if array.size > limit:
        return {"too_big": [int(n) for n in array.shape]}
    return {"value": array.tolist()}


def _nested_floats(value: Any, depth: int) -> bool:
    """True when ``value`` is a list nested ``depth`` deep whose leaves are floats."""
    if depth == 0:
        return type(value) is float
    return type(value) is list and all(_nested_floats(v, depth - 1) for v in value)


def plain_reply(kind: str, reply: Any) -> dict[str, Any] | str:
    """Check that a reply is plain data of the expected form.

    Parameters
    ----------
    kind : str
        The check's kind (see :data:`course_lib.checkpoint_spec.KINDS`).
    reply : object
        What came back, parsed from JSON.

    Returns
    -------
    dict or str
        The reply itself when it is plain (only ``dict``, ``list``, ``str``, ``float``
        and ``int`` where each belongs), else a sentence saying what was wrong with it.
    """
    if type(reply) is not dict or len(reply) != 1:
        return "the reply is not a single-entry object"
    (key, value), = reply.items()
    if key == "value":
        depth = {"weights": 2, "output": 1}.get(kind)
        if kind == "letter":
            return reply if type(value) is str and len(value) <= _MAX_LETTER else \
                "the letter is not a short string"
        if depth is None:
            return f"unknown kind of check {kind!r}"
        # a float array of another shape is judged as a wrong shape, not as foreign data
        for d in range(0, 4):
            if _nested_floats(value, d):
                return reply if _count(value) <= MAX_VALUES else "too many numbers"
        return "the numbers are not floats in nested lists"
    if key in ("raised", "not_numbers", "not_text"):
        return reply if type(value) is str and len(value) <= 200 else \
            "a type name that is not a short string"
    if key == "too_big":
        return reply if type(value) is list and all(type(n) is int for n in value) and \
            len(value) <= 32 else "a shape that is not a list of integers"
    if key == "missing":
        return reply if value is True else "a malformed 'missing' reply"
    return f"an unknown reply {key[:40]!r}"


def _count(value: Any) -> int:
    return sum(_count(v) for v in value) if type(value) is list else 1


def _name(exc_name: str) -> str:
    return exc_name if _EXCEPTION_NAME.match(exc_name) else "an exception"


def _shape(value: Any) -> tuple[int, ...]:
    return tuple(np.shape(np.asarray(value, dtype=float)))


def _close(got: NDArray[np.float64], want: NDArray[np.float64], tol: float) -> bool:
    return got.shape == want.shape and bool(
        np.allclose(got, want, rtol=0.0, atol=tol, equal_nan=True))


def _round(row: NDArray[np.float64]) -> str:
    return "[" + ", ".join(f"{x:.2f}" for x in row) + "]"


def judge(grade_id: str, reply: Any, inputs: Mapping[str, Any],
          spec: QuizSpec = CHECKPOINT, expected: Mapping[str, Any] | None = None) -> Verdict:
    """Decide one check from plain data.

    Parameters
    ----------
    grade_id : str
        The check (a grade id of ``spec``).
    reply : dict
        What :func:`answer_as_data` returned (parsed from JSON when graded).
    inputs : mapping
        The check's inputs: ``Q``, ``K`` for weights; ``Q``, ``K``, ``V`` and ``row`` for an
        output (none: only its form is checked); ``right`` for a letter (none: only its
        form is checked).
    spec : QuizSpec
        The quiz.
    expected : mapping or None
        What the answer is compared with, computed by whoever calls (the grader, or the
        quiz maker for the test cells; None: ``inputs["expected"]``): for weights ``{"want": table,
        "mistaken": {mistake id: table}}``; for an output with inputs ``{"want": row,
        "misconceived": {misconception id: row}}``; None for a letter, an output without
        inputs, or weights in the student's notebook (only their form is checked).

    Returns
    -------
    Verdict

    Raises
    ------
    ValueError
        If an output check with inputs is given no ``expected``.
    """
    check_ = spec.check(grade_id)
    if expected is None:
        expected = inputs.get("expected")
    reply = plain_reply(check_.kind, reply)
    if isinstance(reply, str):
        return Verdict(grade_id, False, f"The grader received something from your kernel "
                       f"that is not plain data ({reply}), so it could not check "
                       f"`{check_.answer}`.", "not_plain")
    (key, value), = reply.items()
    if key == "missing":
        return _fail(check_, "missing", f"`{check_.answer}` is not defined: run its cell "
                     "and check the name.")
    if key == "raised":
        message = (f"`{check_.answer}` raised {_name(value)} when the check called it."
                   if check_.kind == "weights" else
                   f"`{check_.answer}` could not be read: it raised {_name(value)}.")
        return Verdict(grade_id, False, message, "raised", None, _name(value))
    if key == "not_numbers":
        return _fail(check_, "format", f"`{check_.answer}` should give numbers (got "
                     f"{_name(value)}).")
    if key == "not_text":
        return _fail(check_, "format", f"`{check_.answer}` must be one of the strings "
                     f"{_letters(spec)} (got {_name(value)}).")
    if key == "too_big":
        return _fail(check_, "format", f"`{check_.answer}` gave far more numbers than "
                     f"expected (shape {tuple(value)}).")
    if check_.kind == "weights":
        got = np.asarray(value, dtype=float)
        if expected is None:  # in the student's notebook: the form only
            return _judge_weights_form(check_, got, inputs, spec)
        return _judge_weights(check_, got, _needed(check_, expected), spec)
    if check_.kind == "output":
        return _judge_output(check_, np.asarray(value, dtype=float), inputs,
                             _needed(check_, expected) if _has_inputs(inputs) else {}, spec)
    return _judge_letter(check_, value, inputs, spec)


def _has_inputs(inputs: Mapping[str, Any]) -> bool:
    """Whether an output check was given the inputs its numbers come from (the hidden call
    when graded), not only the answer (the visible call: its form only)."""
    return any(name != "expected" for name in inputs)


def _needed(check_: Check, expected: Mapping[str, Any] | None) -> Mapping[str, Any]:
    if not isinstance(expected, Mapping) or "want" not in expected:
        raise ValueError(f"check {check_.grade_id!r} needs expected={{'want': ...}} to "
                         f"compare with (got {type(expected).__name__})")
    return expected


def _letters(spec: QuizSpec) -> str:
    return ", ".join(repr(x) for x in spec.letters)


def _fail(check_: Check, reason: str, message: str, mistake: str | None = None) -> Verdict:
    return Verdict(check_.grade_id, False, message, reason, mistake)


def _pass(check_: Check, message: str | None = None) -> Verdict:
    return Verdict(check_.grade_id, True, message or f"passed ({check_.looks_at}).", "passed")


def _judge_weights(check_: Check, got: NDArray[np.float64], expected: Mapping[str, Any],
                   spec: QuizSpec) -> Verdict:
    want = np.asarray(expected["want"], dtype=float)
    if _close(got, want, check_.tolerance):
        return _pass(check_)
    for mistake_id, table in (expected.get("mistaken") or {}).items():
        mistaken = np.asarray(table, dtype=float)
        if _close(got, mistaken, check_.tolerance) and not _close(mistaken, want,
                                                                   check_.tolerance):
            mistake = spec.mistake(mistake_id)
            return _fail(check_, "wrong", f"{mistake.hint[0].upper()}{mistake.hint[1:]}.",
                         mistake_id)
    if got.shape != want.shape:
        return _fail(check_, "format", f"expected weights of shape {want.shape} (one row "
                     f"per query, one column per key), got shape {got.shape}.")
    if not np.isfinite(got).all():
        rows = sorted({int(i) for i in np.argwhere(~np.isfinite(got))[:, 0]})
        return _fail(check_, "wrong", f"Row(s) {', '.join(map(str, rows))} of the weights "
                     "hold NaN or infinite values.")
    sums = got.sum(axis=-1)
    bad = np.flatnonzero(np.abs(sums - 1.0) > 1e-6)
    if bad.size:
        return _fail(check_, "wrong", f"Row {bad[0]} of the weights sums to {sums[bad[0]]:.4g}, "
                     "not 1: each query's weights must sum to 1.")
    if check_.hidden:  # never print a hidden check's inputs or expected values
        return _fail(check_, "wrong", f"The weights are not right: {check_.hint}.",
                     check_.mistake)
    row = int(np.flatnonzero(np.abs(got - want).max(axis=-1) > check_.tolerance)[0])
    # where, never the expected numbers
    return _fail(check_, "wrong", f"Row {row} of the weights (query {row}'s) is "
                 f"{_round(got[row])}: {check_.hint}.")


def _hint(spec: QuizSpec, mistake_id: str) -> str:
    hint = spec.mistake(mistake_id).hint
    return f"{hint[0].upper()}{hint[1:]}."


def _judge_weights_form(check_: Check, got: NDArray[np.float64], inputs: Mapping[str, Any],
                        spec: QuizSpec) -> Verdict:
    """The form of the weights, without knowing what they should be: the shape, finite
    numbers, none negative, a zero diagonal, each row summing to 1. A mistake that shows in
    the form alone is named (the spec's words); the values are never confirmed."""
    n = int(np.shape(inputs["Q"])[0])
    if got.shape != (n, n):
        return _fail(check_, "format", f"expected weights of shape {(n, n)} (one row per "
                     f"query, one column per key), got shape {got.shape}.")
    if not np.isfinite(got).all():
        rows = sorted({int(i) for i in np.argwhere(~np.isfinite(got))[:, 0]})
        return _fail(check_, "wrong", f"Row(s) {', '.join(map(str, rows))} of the weights "
                     "hold NaN or infinite values.")
    if (got < -check_.tolerance).any():
        return _fail(check_, "wrong", "Some weights are negative: a softmax gives weights "
                     "between 0 and 1.")
    diagonal = np.abs(np.diag(got))
    if diagonal.max() > check_.tolerance:
        above = np.abs(got[np.triu_indices(n, 1)]).max()
        mistake = "causal_mask" if above <= check_.tolerance else "no_mask"
        return _fail(check_, "wrong", _hint(spec, mistake), mistake)
    sums = got.sum(axis=-1)
    bad = np.flatnonzero(np.abs(sums - 1.0) > check_.tolerance)
    if bad.size:
        if np.abs(got.sum(axis=0) - 1.0).max() <= check_.tolerance:
            return _fail(check_, "wrong", _hint(spec, "wrong_axis"), "wrong_axis")
        if (sums < 1.0).all():
            return _fail(check_, "wrong", _hint(spec, "mask_after_softmax"),
                         "mask_after_softmax")
        return _fail(check_, "wrong", f"Row {bad[0]} of the weights sums to "
                     f"{sums[bad[0]]:.4g}, not 1: each query's weights must sum to 1.")
    return _pass(check_, f"`{check_.answer}` has the form of the weights (shape {(n, n)}, a "
                 "zero diagonal, each row summing to 1); whether they are right is checked "
                 "when the quiz is graded.")


def _judge_output(check_: Check, got: NDArray[np.float64], inputs: Mapping[str, Any],
                  expected: Mapping[str, Any], spec: QuizSpec) -> Verdict:
    if got.ndim != 1 or not 2 <= got.size <= 64:
        return _fail(check_, "format", f"`{check_.answer}` must be one row of numbers (got "
                     f"shape {got.shape}).")
    if not np.isfinite(got).all():
        return _fail(check_, "format", f"`{check_.answer}` must hold finite numbers.")
    if not _has_inputs(inputs):
        return _pass(check_, f"`{check_.answer}` holds {got.size} finite numbers; whether "
                     "they are right is checked when the quiz is graded.")
    want = np.asarray(expected["want"], dtype=float)
    if got.shape != want.shape:
        return _fail(check_, "format", f"`{check_.answer}` must hold {want.size} numbers"
                     f"{check_.layout} (got {got.size}).")
    if np.abs(got - want).max() <= check_.tolerance:
        return _pass(check_)
    misconceived = expected.get("misconceived") or {}
    for m in spec.misconceptions_of_check(check_.grade_id):
        if m.id not in misconceived:
            continue
        wrong = np.asarray(misconceived[m.id], dtype=float)
        if wrong.shape == got.shape and np.abs(got - wrong).max() <= check_.tolerance:
            return _fail(check_, "wrong", f"{m.hint[0].upper()}{m.hint[1:]}.", m.id)
    return _fail(check_, "wrong", f"These are not {check_.what}"
                 f": {check_.hint}.")


def _judge_letter(check_: Check, value: str, inputs: Mapping[str, Any],
                  spec: QuizSpec) -> Verdict:
    letter = value.strip().upper()
    if len(letter) != 1 or letter not in spec.letters:
        shown = json.dumps(value[:12], ensure_ascii=True)
        return _fail(check_, "format", f"`{check_.answer}` must be one of the strings "
                     f"{_letters(spec)} (got {shown}).")
    if "right" not in inputs:
        return _pass(check_, f"`{check_.answer}` is one of the letters; whether it is "
                     "the right one is checked when the quiz is graded.")
    if letter == str(inputs["right"]).upper():
        return _pass(check_)
    named = inputs.get("wrong") or {}
    if isinstance(named, Mapping) and letter in named:
        m = spec.misconception(str(named[letter]))
        return _fail(check_, "wrong", f"{check_.hint[0].upper()}{check_.hint[1:]}: "
                     f"{m.hint}.", m.id)
    return _fail(check_, "wrong", f"{check_.hint[0].upper()}{check_.hint[1:]}.")


def _check_args(check_: Check, inputs: Mapping[str, Any]) -> tuple[Any, ...]:
    if check_.kind != "weights":
        return ()
    missing = [name for name in ("Q", "K") if name not in inputs]
    if missing:
        raise TypeError(f"check({check_.grade_id!r}, ...) needs the inputs Q and K "
                        f"(missing {', '.join(missing)})")
    return (inputs["Q"], inputs["K"])


def read_expected(text: str) -> dict[str, Any]:
    """The ``expected`` mapping of a visible test cell, from the one line it is written as.

    The quiz maker writes the visible check's expected values (the right weights of the
    setup cell's example and what each mistake gives on it) as base64 of zlib-compressed
    JSON, so that the test cell stays short where nbgrader's *Validate* shows it. It is
    not a secret: the visible check reveals the same in effect.

    Parameters
    ----------
    text : str
        The encoded mapping.

    Returns
    -------
    dict

    Raises
    ------
    ValueError
        If ``text`` is not such an encoding of a mapping.

    Examples
    --------
    >>> read_expected(base64.b64encode(zlib.compress(b'{"want": [[0.0, 1.0]]}')).decode())
    {'want': [[0.0, 1.0]]}
    """
    try:
        value = json.loads(zlib.decompress(base64.b64decode(text, validate=True)))
    except (ValueError, zlib.error) as exc:
        raise ValueError(f"expected= must be the encoded mapping the quiz maker writes "
                         f"(got {text[:20]!r}...: {exc})") from None
    if not isinstance(value, dict):
        raise ValueError(f"expected= must encode a mapping (got {type(value).__name__})")
    return value


def check(grade_id: str, answer: Any, /, **inputs: Any) -> None:
    """Run a check of the checkpoint on the student's answer, in the student's notebook.

    Parameters
    ----------
    grade_id : str
        The check's grade id (see :data:`course_lib.checkpoint_spec.CHECKPOINT`).
    answer : object
        The student's function or variable.
    **inputs
        The check's inputs (see :func:`judge`), and ``expected``: what to compare with
        (see :func:`judge`), written into the visible test cell when the quiz is made (a
        mapping, or its encoding read by :func:`read_expected`).

    Raises
    ------
    CheckFailed
        With one sentence naming what is wrong.
    """
    check_ = CHECKPOINT.check(grade_id)
    if isinstance(inputs.get("expected"), str):
        inputs["expected"] = read_expected(inputs["expected"])
    data = answer_as_data(check_.kind, answer, _check_args(check_, inputs), MAX_VALUES)
    # the same plain data the grader receives: through JSON and back
    verdict = judge(grade_id, json.loads(json.dumps(data)), inputs)
    if not verdict.passed:
        raise CheckFailed(verdict.message)
    print(f"✓ {grade_id}: {verdict.message}")

