"""The core every self-check is built on: the verdict, and a safe call of the student's code.

A check (``checks.check_softmax(my_softmax)``) calls the student's function through
:func:`_call`, which turns anything it raises into a verdict; :func:`_diagnose` compares
the answer with the library's and names the first known mistake it fits; :func:`_run`
returns the :class:`CheckResult`. Its ``repr`` is one friendly sentence, so a notebook
cell that ends in a check shows the verdict (and nbval compares it); ``bool(result)`` says
pass or fail, so tests can assert on it. The checks themselves are in the modules beside
this one, one per part of the course (see :mod:`course_lib.checks`).

nbgrader's Validate button
--------------------------
The lessons' check cells carry nbgrader metadata (a graded test cell each, see
``scripts/run_lessons.py``), so nbgrader's *Validate* (and ``nbgrader validate``) checks a
lesson's exercises. nbgrader runs the notebook with ``NBGRADER_VALIDATING=1``; then a
check that does not pass raises :class:`ExerciseNotDone` with its verdict instead of
returning it, and Validate lists every exercise still to do (and says "Success!" only when
all are done). In a normal run the verdict is returned and *Run All* goes on.

Examples
--------
A check of a function that doubles its input, in this module's terms:

>>> def check_double(fn):
...     args = [("x", np.array([1.0, 2.0]))]
...     def body():
...         got = _as_array(_call(fn, args, "double"), "double", (2,))
...         _diagnose(got, np.array([2.0, 4.0]), "double", [], args)
...         return _ok("your function doubles every entry.")
...     return _run(body)
>>> check_double(lambda x: 2 * x)
Well done: your function doubles every entry.
>>> def double(x):
...     raise NotImplementedError("Student exercise: double x")
>>> [check_double(f).mistake for f in (double, lambda x: x, lambda x: None)]
['not_written', 'wrong_values', 'returned_none']
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..explore.render import feedback_html

__all__ = ["CheckResult", "ExerciseNotDone"]

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class CheckResult:
    """The verdict of one self-check.

    Attributes
    ----------
    passed : bool
        True when the student's function matched the reference on every probe.
    message : str
        One friendly sentence: a confirmation, or the mistake that was seen.
    mistake : str or None
        A short code naming the mistake (``"missing_scale"``, ``"softmax_wrong_axis"``,
        ``"not_written"``, ...) or None on success. Tests assert on it.
    """

    passed: bool
    message: str
    mistake: str | None = None

    def __bool__(self) -> bool:
        return self.passed

    def __repr__(self) -> str:
        return self.message

    __str__ = __repr__

    def _repr_html_(self) -> str:
        """The verdict as a paragraph that wraps between words (``text/plain`` stays)."""
        return feedback_html(self.message)


class ExerciseNotDone(AssertionError):
    """A check that did not pass while nbgrader validates the notebook: its verdict.

    In a notebook it shows as one line, the verdict, without a traceback through the
    check's insides (IPython asks an exception for ``_render_traceback_``).
    """

    def _render_traceback_(self) -> list[str]:
        return [f"{type(self).__name__}: {self}"]


# --------------------------------------------------------------------------------------
# helpers (private)
# --------------------------------------------------------------------------------------

_ATOL = 1e-6


def _ok(message: str) -> CheckResult:
    return CheckResult(True, f"Well done: {message}")


def _fail(mistake: str, message: str) -> CheckResult:
    return CheckResult(False, f"Not yet: {message}", mistake)


def _fmt(a: Any) -> str:
    """Short, stable text for an array in a message."""
    arr = np.asarray(a, dtype=float)
    return np.array2string(arr, precision=3, suppress_small=True, separator=", ")


def _shape_text(args: Sequence[tuple[str, Any]]) -> str:
    return ", ".join(f"{name} of shape {np.shape(value)}" for name, value in args)


class _Stop(Exception):
    """Raised inside a check to return a verdict early."""

    def __init__(self, result: CheckResult) -> None:
        super().__init__(result.message)
        self.result = result


def _name_of(fn: Any, default: str) -> str:
    """The student's own name for the function (``my_softmax``), else the lesson's."""
    name = getattr(fn, "__name__", "")
    return name if name.isidentifier() else default


def _call(
    fn: Callable[..., Any],
    args: Sequence[tuple[str, Any]],
    what: str,
    hint: str = "",
    shape_mistake: str = "raised",
) -> Any:
    """Call ``fn`` on copies of the arguments; turn any exception into a verdict."""
    if not callable(fn):
        raise _Stop(
            _fail("not_callable", f"pass the function itself, e.g. `{what}` without "
                  f"brackets (got {type(fn).__name__})."),
        )
    copies = [np.array(v) if isinstance(v, np.ndarray) else v for _, v in args]
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*copies)
    except NotImplementedError:
        raise _Stop(
            _fail("not_written", f"`{what}` is not written yet: replace the `...` and "
                  "delete the `raise NotImplementedError` line, then run this check again.")
        ) from None
    except Exception as exc:  # the student's code may raise anything; we report it
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        shapes_clash = isinstance(exc, ValueError) and any(
            word in detail for word in ("matmul", "shape", "broadcast", "aligned")
        )
        if "matmul" in detail:
            detail = "the shapes in a matrix product do not fit"
        if len(detail) > 120:
            detail = detail[:117] + "..."
        text = f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
        raise _Stop(
            _fail(shape_mistake if shapes_clash else "raised",
                  f"`{what}` raised {text} when called with "
                  f"{_shape_text(args)}.{hint if shapes_clash else ''}")
        ) from None


def _as_array(
    value: Any, what: str, expected_shape: tuple[int, ...], *, accept_pair: bool = False
) -> FloatArray:
    if accept_pair and isinstance(value, tuple) and len(value) == 2:
        value = value[0]  # accept (output, weights) like course_lib.attention returns
    if value is None:
        raise _Stop(
            _fail("returned_none", f"`{what}` returned None: did you forget `return`?")
        )
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise _Stop(
            _fail("not_numbers", f"`{what}` should return an array of numbers of shape "
                  f"{expected_shape} (got {type(value).__name__}).")
        ) from None
    return arr


def _matches(got: FloatArray, want: FloatArray, *, equal_nan: bool = False) -> bool:
    return got.shape == want.shape and bool(
        np.allclose(got, want, rtol=1e-6, atol=_ATOL, equal_nan=equal_nan)
    )


def _try(candidate: Callable[[], Any]) -> FloatArray | None:
    """Compute what a known mistake would give (None if that mistake would raise)."""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return np.asarray(candidate(), dtype=float)
    except Exception:
        return None


def _diagnose(
    got: FloatArray,
    want: FloatArray,
    what: str,
    mistakes: Sequence[tuple[str, Callable[[], Any], str]],
    args: Sequence[tuple[str, Any]],
) -> None:
    """Raise a verdict unless ``got`` equals ``want``; name the first mistake that fits."""
    if _matches(got, want):
        return
    for code, candidate, sentence in mistakes:
        wrong = _try(candidate)
        if wrong is not None and _matches(got, wrong, equal_nan=True):
            raise _Stop(_fail(code, sentence))
    if got.shape != want.shape:
        if got.shape == want.shape[::-1]:
            raise _Stop(
                _fail("transposed_result", f"`{what}` returned shape {got.shape}, the "
                      f"transpose of the expected {want.shape}: rows should be the queries "
                      "and columns the keys.")
            )
        raise _Stop(
            _fail("wrong_shape", f"`{what}` returned shape {got.shape} but should return "
                  f"{want.shape} for {_shape_text(args)}.")
        )
    if not np.isfinite(got).all():
        first = tuple(int(i) for i in np.argwhere(~np.isfinite(got))[0])
        where = f"row {first[0]}" if len(first) > 1 else f"entry {first[0]}"
        raise _Stop(
            _fail("not_finite", f"`{what}` returned NaN or infinity, first in {where}, for "
                  f"{_shape_text(args)}; an overflowing exp or a 0/0 is the usual cause.")
        )
    raise _Stop(_fail("wrong_values", _where_wrong(got, want)))


def _where_wrong(got: FloatArray, want: FloatArray) -> str:
    """Where a right-shaped answer goes wrong: the table, row and column, and how many rows.

    Never the expected numbers: the student's own row is shown, so the hint says where to
    look without handing over the answer (issue 30).
    """
    wrong = ~np.isclose(got, want, rtol=1e-6, atol=_ATOL)
    bad = tuple(int(i) for i in np.argwhere(wrong)[0])
    if len(bad) == 1:
        return (f"the shape is right but entry {bad[0]} ({_fmt(got[bad])}) is not what the "
                "equation gives; compare your steps with the lesson's.")
    table = f"in the table at index {bad[:-2]}, " if len(bad) > 2 else ""
    rows_wrong = int(wrong.any(axis=-1).sum())
    rows_all = int(np.prod(wrong.shape[:-1]))
    return (f"the shape is right but {table}row {bad[-2]} is off from column {bad[-1]}: "
            f"your row is {_fmt(got[bad[:-1]])}, and {rows_wrong} of {rows_all} rows differ "
            "from what the equation gives; compare your steps with the lesson's.")


def _run(body: Callable[[], CheckResult]) -> CheckResult:
    try:
        result = body()
    except _Stop as stop:
        result = stop.result
    if not result and os.environ.get("NBGRADER_VALIDATING"):
        raise ExerciseNotDone(result.message)
    return result

