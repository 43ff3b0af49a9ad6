"""Read a quiz notebook's checks and setup values as data, without running anything.

The checkpoint's test cells call :func:`course_quiz.checkpoint_checks.check` with literal
inputs (``check("test_missing_scale", weights_without_self, Q=[[...]], K=[[...]])``) or with
names of the locked setup cell (``Q=Q``); the setup cell assigns literals
(``Q = np.array([[1.0, 0.0], ...])``). The instructor's grader and the variant generator
read these with :mod:`ast` only: they never execute a notebook's code, and they refuse
anything that is not such a call or such a literal, with a message naming the cell.

Examples
--------
>>> calls = check_calls('check("test_shifted_key", shifted_weights)\\n'
...                     '### BEGIN HIDDEN TESTS\\n'
...                     'check("test_shifted_key", shifted_weights, Q=Q, row=2)\\n'
...                     '### END HIDDEN TESTS\\n')
>>> [(c.grade_id, c.hidden, sorted(c.inputs)) for c in calls]
[('test_shifted_key', False, []), ('test_shifted_key', True, ['Q', 'row'])]
>>> calls[1].inputs["Q"]
SetupName(name='Q')
>>> setup_values("import numpy as np\\nQ = np.array([[1.0, 0.0]])\\n")["Q"].value
[[1.0, 0.0]]
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CheckCall", "Literal", "QuizSourceError", "SetupName", "check_calls",
           "setup_values"]

#: The longest cell source read (a quiz cell is a few hundred characters).
MAX_SOURCE = 100_000
BEGIN_HIDDEN = "BEGIN HIDDEN TESTS"
END_HIDDEN = "END HIDDEN TESTS"


class QuizSourceError(ValueError):
    """A quiz cell is not in the form the grader reads (the instructor's notebook)."""


@dataclass(frozen=True)
class Literal:
    """A literal value in a cell, with where its text is (1-based lines, 0-based columns)."""

    value: Any
    start: tuple[int, int]
    end: tuple[int, int]
    array: bool = False  # written as np.array(<literal>)


@dataclass(frozen=True)
class SetupName:
    """An input given by name: its value is the setup cell's assignment of that name."""

    name: str


@dataclass(frozen=True)
class CheckCall:
    """One ``check(grade_id, answer, **inputs)`` call of a test cell."""

    grade_id: str
    answer: str
    inputs: dict[str, Literal | SetupName] = field(default_factory=dict)
    hidden: bool = False
    line: int = 0


def _parse(source: str, what: str) -> ast.Module:
    if len(source) > MAX_SOURCE:
        raise QuizSourceError(f"{what} is {len(source):,} characters long; expected at most "
                              f"{MAX_SOURCE:,}")
    try:
        return ast.parse(source)
    except SyntaxError as exc:
        raise QuizSourceError(f"{what} is not valid Python: {exc.msg} (line {exc.lineno})"
                              ) from None


def _literal(node: ast.expr, what: str) -> Literal:
    array = False
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "array" and isinstance(node.func.value, ast.Name)
            and node.func.value.id in ("np", "numpy") and len(node.args) == 1
            and not node.keywords):
        node, array = node.args[0], True
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        raise QuizSourceError(f"{what} must be a literal (numbers, strings, lists) or "
                              f"np.array(<literal>) (got {ast.dump(node)[:80]})") from None
    assert node.end_lineno is not None and node.end_col_offset is not None
    return Literal(value, (node.lineno, node.col_offset),
                   (node.end_lineno, node.end_col_offset), array)


def _hidden_lines(source: str) -> set[int]:
    lines, inside = set(), False
    for number, line in enumerate(source.split("\n"), start=1):
        if BEGIN_HIDDEN in line:
            inside = True
        elif END_HIDDEN in line:
            inside = False
        elif inside:
            lines.add(number)
    return lines


def check_calls(source: str, *, function: str = "check") -> list[CheckCall]:
    """The ``check(...)`` calls of a test cell, in order.

    Parameters
    ----------
    source : str
        The test cell's source, hidden regions included (the instructor's version).
    function : str
        The name the cell calls.

    Raises
    ------
    QuizSourceError
        If a call's grade id is not a string literal, its answer not a plain name, or an
        input neither a literal nor a name.
    """
    tree = _parse(source, "the test cell")
    hidden = _hidden_lines(source)
    calls = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id == function):
            continue
        where = f"the call of {function}() on line {node.lineno}"
        if len(node.args) != 2 or not isinstance(node.args[0], ast.Constant) or \
                not isinstance(node.args[0].value, str) or not isinstance(node.args[1], ast.Name):
            raise QuizSourceError(f"{where} must read {function}(\"<grade id>\", <answer name>, "
                                  "name=<literal or setup name>, ...)")
        inputs: dict[str, Literal | SetupName] = {}
        for kw in node.keywords:
            if kw.arg is None:
                raise QuizSourceError(f"{where} passes **kwargs; name each input")
            if isinstance(kw.value, ast.Name):
                inputs[kw.arg] = SetupName(kw.value.id)
            else:
                inputs[kw.arg] = _literal(kw.value, f"input {kw.arg!r} of {where}")
        calls.append(CheckCall(node.args[0].value, node.args[1].id, inputs,
                               node.lineno in hidden, node.lineno))
    return sorted(calls, key=lambda c: c.line)


def setup_values(source: str) -> dict[str, Literal]:
    """The literal values the setup cell assigns, by name (``import`` lines are skipped).

    Raises
    ------
    QuizSourceError
        If a statement is neither an import nor an assignment of a literal to one name.
    """
    tree = _parse(source, "the setup cell")
    values = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            continue
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)):
            raise QuizSourceError(f"line {stmt.lineno} of the setup cell must assign a literal "
                                  "to one name (the grader reads it without running it)")
        name = stmt.targets[0].id
        values[name] = _literal(stmt.value, f"the value of {name} in the setup cell")
    return values
