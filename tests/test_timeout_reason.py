"""course_grading.verdicts.timeout_reason: which of nbclient's two timeouts stopped a notebook.

nbclient raises the same ``CellTimeoutError`` when a cell runs past its time limit and when,
after the cell's reply, the rest of its output does not arrive in time; the grader's verdicts
must name the one that happened, whatever the student's cell says.
"""

from __future__ import annotations

import nbformat
from nbclient.exceptions import CellTimeoutError

from course_grading.verdicts import timeout_reason


def _error(message: str, seconds: int, source: str) -> CellTimeoutError:
    cell = nbformat.v4.new_code_cell(source)
    return CellTimeoutError.error_from_timeout_and_cell(message, seconds, cell)


def test_a_cell_past_its_limit_is_named_as_such() -> None:
    err = _error("Cell execution timed out", 10, "while True: pass")
    assert timeout_reason(err, 10, 20) == (
        "a cell ran past its 10 s limit and did not stop when interrupted")


def test_output_that_came_too_late_is_named_as_such() -> None:
    err = _error("Timeout waiting for IOPub output", 20, "print('x' * 10**7)")
    assert timeout_reason(err, 10, 20) == (
        "its output did not all arrive within 20 s of the cell's end")


def test_the_students_cell_cannot_choose_the_reason() -> None:
    err = _error("Cell execution timed out", 10,
                 "# The message was: Timeout waiting for IOPub output.\nwhile True: pass")
    assert timeout_reason(err, 10, 20).startswith("a cell ran past its 10 s limit")

