"""A small nbgrader course with the checkpoint's grade ids, built in a temp dir by the tests.

It stands in for quiz/source/checkpoint/checkpoint.ipynb where a test needs answers and
scores it controls exactly: every cell carries the agreed grade id, the hidden tests are
each named for the mistake they catch, and each test checks an input on which its own
mistake changes the result.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from course_grading.mistakes import CORRECT_ANSWER, MISTAKES  # noqa: F401 (conftest uses mc.MISTAKES)

COURSE_ID = "attention-course"
ASSIGNMENT = "checkpoint"

# The correct answer and one answer per single mistake: the same ones the real quiz's
# pipeline tests use.
CORRECT_CODE = CORRECT_ANSWER

_SOFTMAX_WITHOUT_SELF = """\
s = Q @ K.T / np.sqrt(Q.shape[1])
np.fill_diagonal(s, -np.inf)
e = np.exp(s - s.max(axis=1, keepdims=True))
expected = e / e.sum(axis=1, keepdims=True)
"""

HIDDEN_TESTS = {
    "test_missing_scale": '''\
"""Scores are divided by sqrt(d_k) (here the axis and n = d_k change nothing)."""
Q = K = np.array([[-0.7, 0.6, 0.5, 0.6], [0.6, -0.7, 0.6, 0.5], [0.5, 0.6, -0.7, 0.6],
                  [0.6, 0.5, 0.6, -0.7]])
''' + _SOFTMAX_WITHOUT_SELF + '''\
assert np.allclose(weights_without_self(Q, K), expected), "scores are not scaled"
''',
    "test_wrong_axis": '''\
"""Each query's row sums to 1 over the others: every key is the same, so 1/3 each."""
Q = np.array([[-0.3, 1.2], [1.3, 0.5], [0.7, -0.8], [0.1, 0.4]])
K = np.tile([[1.8, 1.5]], (4, 1))
assert np.allclose(weights_without_self(Q, K), (1 - np.eye(4)) / 3), "not over each row"
''',
    "test_naive_exp_overflow": '''\
"""Large scores do not overflow: the result stays finite."""
with np.errstate(over="ignore", invalid="ignore"):
    w = weights_without_self(np.tile([[18.0, 26.0]], (4, 1)), np.tile([[22.0, 30.0]], (4, 1)))
assert np.allclose(w, (1 - np.eye(4)) / 3), "exp overflowed"
''',
    "test_dk_from_wrong_axis": '''\
"""d_k is the dimension of a query (last axis), not the number of queries."""
Q = K = np.array([[0.9], [-0.9], [-0.9], [0.9]])
''' + _SOFTMAX_WITHOUT_SELF + '''\
assert np.allclose(weights_without_self(Q, K), expected), "d_k taken from the wrong axis"
''',
}


def _meta(grade_id: str, *, grade: bool, solution: bool, locked: bool, points: float = 0):
    """nbgrader cell metadata (schema 3), as nbgrader's create-assignment tool writes it."""
    meta: dict[str, object] = {"grade": grade, "grade_id": grade_id, "locked": locked,
                               "schema_version": 3, "solution": solution, "task": False}
    if grade:
        meta["points"] = points
    return {"nbgrader": meta}


def _code(source: str, grade_id: str, **kw) -> nbformat.NotebookNode:
    return new_code_cell(textwrap.dedent(source), metadata=_meta(grade_id, **kw))


def source_notebook() -> nbformat.NotebookNode:
    """The instructor's source notebook: solutions and hidden tests included."""
    cells = [
        new_markdown_cell("# Checkpoint (test fixture)"),
        new_code_cell("import numpy as np"),
        _code(
            "### BEGIN SOLUTION\n" + CORRECT_CODE + "### END SOLUTION\n",
            "weights_without_self",
            grade=False,
            solution=True,
            locked=False,
        ),
        _code(
            '"""The example of the setup cell gives the right weights."""\n'
            "W = weights_without_self(np.array([[1.0, 0], [0, 1], [1, 1]]),"
            " np.array([[1.0, 0], [0, 1], [1, 1]]))\n"
            "assert np.allclose(W[0], [0.0, 0.3302, 0.6698], atol=1e-3)\n",
            "test_weights_visible",
            grade=True,
            solution=False,
            locked=True,
            points=1,
        ),
    ]
    for grade_id, src in HIDDEN_TESTS.items():
        doc, _, body = src.partition("\n")
        cells.append(
            _code(
                f"{doc}\n### BEGIN HIDDEN TESTS\n{body}### END HIDDEN TESTS\n",
                grade_id,
                grade=True,
                solution=False,
                locked=True,
                points=1,
            )
        )
    cells += [
        _code(
            "### BEGIN SOLUTION\nshifted_weights = np.array([0.1, 0.2, 0.3, 0.4])\n"
            "### END SOLUTION\n",
            "shifted_key",
            grade=False,
            solution=True,
            locked=False,
        ),
        _code(
            '"""shifted_weights is the row after the shift (to within 0.005)."""\n'
            "assert np.allclose(shifted_weights, [0.1, 0.2, 0.3, 0.4], atol=0.005)\n",
            "test_shifted_key",
            grade=True,
            solution=False,
            locked=True,
            points=2,
        ),
        _code(
            '### BEGIN SOLUTION\nanswer_read_table = "B"\n### END SOLUTION\n',
            "mc_read_table",
            grade=False,
            solution=True,
            locked=False,
        ),
        _code(
            '"""answer_read_table is one of the letters A-D."""\n'
            'assert answer_read_table in {"A", "B", "C", "D"}\n'
            '### BEGIN HIDDEN TESTS\nassert answer_read_table == "B"\n### END HIDDEN TESTS\n',
            "test_mc_read_table",
            grade=True,
            solution=False,
            locked=True,
            points=2,
        ),
        _code(
            '### BEGIN SOLUTION\nanswer_duplicate_key = "C"\n### END SOLUTION\n',
            "mc_duplicate_key",
            grade=False,
            solution=True,
            locked=False,
        ),
        _code(
            '"""answer_duplicate_key is one of the letters A-D."""\n'
            'assert answer_duplicate_key in {"A", "B", "C", "D"}\n'
            '### BEGIN HIDDEN TESTS\nassert answer_duplicate_key == "C"\n'
            "### END HIDDEN TESTS\n",
            "test_mc_duplicate_key",
            grade=True,
            solution=False,
            locked=True,
            points=1,
        ),
        new_markdown_cell(
            "=== BEGIN MARK SCHEME ===\nShift or scale.\n=== END MARK SCHEME ===",
            metadata=_meta("written_shift_or_scale", grade=True, solution=True, locked=False,
                           points=3),
        ),
    ]
    nb = new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {
        "name": "python3", "display_name": "Python 3", "language": "python"
    }
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def write_course(root: Path) -> Path:
    """Write nbgrader_config.py and source/checkpoint/checkpoint.ipynb under ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "nbgrader_config.py").write_text(
        "c = get_config()  # noqa: F821\n"
        f"c.CourseDirectory.course_id = {COURSE_ID!r}\n"
        f"c.CourseDirectory.root = {str(root)!r}\n"
        "c.ExecutePreprocessor.timeout = 30\n"
    )
    src = root / "source" / ASSIGNMENT
    src.mkdir(parents=True, exist_ok=True)
    nbformat.write(source_notebook(), src / f"{ASSIGNMENT}.ipynb")
    return root


def fill(release: nbformat.NotebookNode, answers: dict[str, str]) -> nbformat.NotebookNode:
    """A student's copy of the release with the given answer cells replaced by grade id."""
    nb = nbformat.from_dict(json.loads(nbformat.writes(release)))
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if gid in answers:
            cell.source = answers[gid]
    return nb
