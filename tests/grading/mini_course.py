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

HIDDEN_TESTS = {
    "test_missing_scale": '''\
"""Scores are divided by sqrt(d_k) before the softmax."""
Q = K = np.array([[2.0, 0.0], [0.0, 2.0]])
expected = np.exp(4 / np.sqrt(2)) / (np.exp(4 / np.sqrt(2)) + 1)
assert np.isclose(attention_weights(Q, K)[0, 0], expected), "scores are not scaled"
''',
    "test_wrong_axis": '''\
"""Each query's row of weights sums to 1 (softmax over the keys)."""
Q = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
K = np.array([[1.0, 2.0], [0.0, 1.0]])
assert np.allclose(attention_weights(Q, K).sum(axis=1), 1.0), "rows do not sum to 1"
''',
    "test_naive_exp_overflow": '''\
"""Large scores do not overflow: the result stays finite."""
with np.errstate(over="ignore", invalid="ignore"):
    w = attention_weights(np.array([[40.0, 40.0]]), np.array([[40.0, 40.0], [0.0, 0.0]]))
assert np.all(np.isfinite(w)), "exp overflowed"
''',
    "test_dk_from_wrong_axis": '''\
"""d_k is the length of a query (last axis), not the number of queries."""
Q = K = np.array([[1.0, 1.0, 0.0, 0.0], [0.0, 1.0, 1.0, 0.0], [1.0, 0.0, 1.0, 0.0]])
w = attention_weights(Q, K)[0, 0]
scaled, unscaled = np.e / (np.e + 2 * np.exp(0.5)), np.exp(2) / (np.exp(2) + 2 * np.e)
# an unscaled result is test_missing_scale's business, not this test's
assert np.isclose(w, scaled) or np.isclose(w, unscaled), "d_k taken from the wrong axis"
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
            "attention_weights",
            grade=False,
            solution=True,
            locked=False,
        ),
        _code(
            '"""The worked example gives the lesson\'s weights."""\n'
            "W = attention_weights(np.array([[1.0, 0], [0, 1], [1, 1]]),"
            " np.array([[1.0, 0], [0, 1], [1, 1]]))\n"
            "assert np.allclose(W[2], [0.2483, 0.2483, 0.5035], atol=1e-3)\n",
            "test_attention_weights_visible",
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
            "### BEGIN SOLUTION\nsat_output = np.array([1.26, 1.50])\n### END SOLUTION\n",
            "sat_output",
            grade=False,
            solution=True,
            locked=False,
        ),
        _code(
            '"""sat_output is the attention output for \'sat\' (2 decimals)."""\n'
            "assert np.allclose(sat_output, [1.26, 1.50], atol=0.006)\n",
            "test_sat_output",
            grade=True,
            solution=False,
            locked=True,
            points=1,
        ),
        _code(
            '### BEGIN SOLUTION\nmc_why_scale = "B"\n### END SOLUTION\n',
            "mc_why_scale",
            grade=False,
            solution=True,
            locked=False,
        ),
        _code(
            '"""mc_why_scale is one of the letters A-D."""\n'
            'assert mc_why_scale in {"A", "B", "C", "D"}\n'
            '### BEGIN HIDDEN TESTS\nassert mc_why_scale == "B"\n### END HIDDEN TESTS\n',
            "test_mc_why_scale",
            grade=True,
            solution=False,
            locked=True,
            points=1,
        ),
        _code(
            '### BEGIN SOLUTION\nmc_causal_mask = "C"\n### END SOLUTION\n',
            "mc_causal_mask",
            grade=False,
            solution=True,
            locked=False,
        ),
        _code(
            '"""mc_causal_mask is one of the letters A-D."""\n'
            'assert mc_causal_mask in {"A", "B", "C", "D"}\n'
            '### BEGIN HIDDEN TESTS\nassert mc_causal_mask == "C"\n### END HIDDEN TESTS\n',
            "test_mc_causal_mask",
            grade=True,
            solution=False,
            locked=True,
            points=1,
        ),
        new_markdown_cell(
            "=== BEGIN MARK SCHEME ===\nGrowth of dot products.\n=== END MARK SCHEME ===",
            metadata=_meta("written_scaling", grade=True, solution=True, locked=False, points=2),
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
