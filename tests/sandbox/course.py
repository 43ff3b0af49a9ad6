"""A small nbgrader course built by code, for the sandbox and parallel-grading tests.

Assignment ``ps1`` / notebook ``ps1.ipynb``:

* ``squares`` (answer) + ``test_squares`` (1 point, visible);
* ``weights`` (answer: softmax of a 1-d list) + ``test_weights_hidden`` (2 points, hidden,
  written to resist monkeypatching: literal expectations from a trusted copy, compared with
  float arithmetic, which no student code can redefine) + ``test_weights_naive`` (1 point,
  hidden, written the naive way with ``np.allclose``: the monkeypatch attack fools it, which
  proves that the attack is real).

:func:`make_course` writes the source, runs the real ``nbgrader generate_assignment`` and
places submissions made by code in ``submitted/<student>/ps1/``.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import nbformat

ASSIGNMENT = "ps1"
GRADE_IDS = ("test_squares", "test_weights_hidden", "test_weights_naive")
MAX_SCORE = {"test_squares": 1.0, "test_weights_hidden": 2.0, "test_weights_naive": 1.0}

_X = [1.0, 2.0, 3.0, 0.5]


def _softmax(xs: list[float]) -> list[float]:
    top = max(xs)
    e = [math.exp(v - top) for v in xs]
    return [v / sum(e) for v in e]


# The trusted copy: expectations computed here, at authoring time, and written into the
# hidden test as literals. The test compares them with float arithmetic only.
_EXPECTED = _softmax(_X)

SQUARES_SOLUTION = "def squares(n):\n    return [i * i for i in range(n)]\n"
WEIGHTS_SOLUTION = (
    "import numpy as np\n\n"
    "def weights(xs):\n"
    "    x = np.asarray(xs, dtype=float)\n"
    "    e = np.exp(x - x.max())\n"
    "    return e / e.sum()\n"
)
WRONG_WEIGHTS = (
    "import numpy as np\n\n"
    "def weights(xs):\n"
    "    x = np.asarray(xs, dtype=float)\n"
    "    return x / x.sum()\n"
)


def _cell(kind: str, source: str, grade_id: str | None = None, points: float | None = None,
          solution: bool = False, locked: bool = False) -> nbformat.NotebookNode:
    make = nbformat.v4.new_code_cell if kind == "code" else nbformat.v4.new_markdown_cell
    cell = make(source)
    if grade_id:
        meta = {"grade_id": grade_id, "grade": points is not None, "solution": solution,
                "locked": locked, "schema_version": 3}
        if points is not None:
            meta["points"] = points
        cell.metadata["nbgrader"] = meta
    return cell


def source_notebook() -> nbformat.NotebookNode:
    """The instructor's version of ``ps1.ipynb``, with solutions and hidden tests."""
    robust = (
        '"""Hidden: weights() is the softmax of the list (robust to monkeypatching)."""\n'
        "### BEGIN HIDDEN TESTS\n"
        f"_expected = {_EXPECTED!r}\n"
        f"_got = weights({_X!r})\n"
        "_F = (0.0).__class__  # the real float type: literals cannot be monkeypatched\n"
        "_n = 0\n"
        "for _e in _expected:\n"
        "    _g = _F(_got[_n])\n"
        "    assert _g.__class__ is _F\n"
        "    assert (_g - _e) * (_g - _e) < 1e-18, 'weights() is not the softmax'\n"
        "    _n = _n + 1\n"
        "### END HIDDEN TESTS\n"
    )
    naive = (
        '"""Hidden: weights() matches the reference (naive: trusts numpy in the kernel)."""\n'
        "### BEGIN HIDDEN TESTS\n"
        "import numpy as np\n"
        f"assert np.allclose(weights({_X!r}), {_EXPECTED!r})\n"
        "### END HIDDEN TESTS\n"
    )
    cells = [
        _cell("markdown", "# ps1\nTwo small functions."),
        _cell("code", "def squares(n):\n    ### BEGIN SOLUTION\n    return [i * i for i in "
              "range(n)]\n    ### END SOLUTION\n", "squares", solution=True),
        _cell("code", '"""squares(3) is [0, 1, 4]."""\nassert squares(3) == [0, 1, 4]\n',
              "test_squares", points=1, locked=True),
        _cell("code", "### BEGIN SOLUTION\n" + WEIGHTS_SOLUTION + "### END SOLUTION\n",
              "weights", solution=True),
        _cell("code", robust, "test_weights_hidden", points=2, locked=True),
        _cell("code", naive, "test_weights_naive", points=1, locked=True),
    ]
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    return nb


CONFIG = """\
c = get_config()  # noqa: F821
c.CourseDirectory.course_id = "sandbox-test"
c.Execute.timeout = {timeout}
from course_grading.sandbox import enable
enable(c, memory_limit={memory}, max_processes=48, scratch_size={scratch},
       cpu_time_limit=60, wall_time_limit={wall})
"""


def nbgrader(course: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run the real ``nbgrader`` command line in ``course``."""
    bindir = Path(sys.executable).parent  # nbgrader runs `alembic` from PATH for a new db
    env = {**os.environ, "PYTHONUNBUFFERED": "1",
           "PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}"}
    proc = subprocess.run([str(bindir / "nbgrader"), *args], cwd=course, capture_output=True,
                          text=True, check=False, timeout=900, env=env)
    if check and proc.returncode != 0:
        raise RuntimeError(f"nbgrader {' '.join(args)} failed ({proc.returncode}):\n"
                           f"{proc.stdout}\n{proc.stderr}")
    return proc


def make_course(root: Path, *, timeout: int = 5, memory: int = 1 << 30,
                scratch: int = 64 << 20, sandbox: bool = True, wall: float = 120.0) -> Path:
    """Write the course, its config and source, and run ``nbgrader generate_assignment``."""
    root.mkdir(parents=True, exist_ok=True)
    config = CONFIG.format(timeout=timeout, memory=memory, scratch=scratch, wall=wall)
    if not sandbox:
        config = config.split("from course_lib")[0]
    (root / "nbgrader_config.py").write_text(config)
    src = root / "source" / ASSIGNMENT
    src.mkdir(parents=True, exist_ok=True)
    nbformat.write(source_notebook(), src / f"{ASSIGNMENT}.ipynb")
    nbgrader(root, "generate_assignment", ASSIGNMENT, "--force")
    return root


def submit(root: Path, student: str, *, squares: str = SQUARES_SOLUTION,
           weights: str = WEIGHTS_SOLUTION) -> Path:
    """Place a submission for ``student`` whose answer cells hold the given code."""
    nb = nbformat.read(root / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if gid == "squares":
            cell.source = squares
        elif gid == "weights":
            cell.source = weights
    dest = root / "submitted" / student / ASSIGNMENT
    dest.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, dest / f"{ASSIGNMENT}.ipynb")
    (dest / "timestamp.txt").write_text("2026-11-29 12:00:00.000000 UTC")
    return dest


def scores(root: Path, course_id: str = "sandbox-test") -> dict[str, dict[str, float | None]]:
    """Autograded score of every grade cell of every student in the gradebook."""
    from nbgrader.api import Gradebook

    out: dict[str, dict[str, float | None]] = {}
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}", course_id) as gb:
        for student in gb.students:
            try:
                sub = gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, student.id)
            except Exception:  # no submission graded for this student
                continue
            out[student.id] = {g.name: g.auto_score for g in sub.grades}
    return out
