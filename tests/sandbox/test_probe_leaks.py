"""Nothing a student's code does with a hidden check's inputs comes back to the student.

The checkpoint quiz (quiz/), with the hidden ``Q`` of ``test_wrong_axis`` (a check of
``weights_without_self``) replaced by numbers that serve as a marker (:data:`MARKED_Q`:
``0.31415``, ``1.27182``, ...; 4 x 4, like the check's own) and its ``expected`` written
afresh for them. The ``leaky``
student answers right on the setup cell's example, on ``test_missing_scale`` and on
``mc_duplicate_key``, and sends the marked inputs back every way it can when it sees them:

* an exception whose class name spells them (``Leak_31415_127182_...``);
* ``display`` with the ``display_id`` of an output its answer cell kept, the inputs in the
  data and in the output's metadata; print, stderr, base64, scaled by 1000;
* later probes: weights whose rows sum to ``0.31415`` (``test_naive_exp_overflow``), an
  answer of shape ``(314, 15)`` (``test_dk_from_wrong_axis``), ``shifted_weights`` of shape
  ``(31, 415)`` and the letter ``"31415"`` for ``mc_read_table``. The last two come too
  late: checks that send the kernel nothing (a number, a letter) are read before any
  hidden input is sent, so they read the answers the student's cells left.

Its exact score is the points of ``test_weights_visible``, ``test_missing_scale``,
``test_shift_factors``, ``test_shifted_key`` and both multiple-choice checks (read from the
spec); ``right``, graded after it, keeps every autograded point. The marker, in every form
the attack used, must not appear in ``autograded/``, in the feedback's HTML or in the
gradebook (beyond the instructor's own hidden test source), graded by ``nbgrader
autograde`` and by the parallel engine.
"""

from __future__ import annotations

import base64
import html
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest
from hostile_quiz import NOTEBOOK, place, right_answers

from course_grading.check_calls import Literal, check_calls
from course_grading.checkpoint_answers import CORRECT_ANSWER, expected
from course_grading.parallel import grade_all
from course_grading.pipeline import copy_course, open_api, tool_path
from course_grading.variants import encode_expected
from course_quiz.checkpoint_checks import read_expected
from course_quiz.checkpoint_spec import CHECKPOINT

QUIZ = Path(__file__).resolve().parents[2] / "quiz"
#: The hidden check whose inputs are marked, and the marked queries (its keys stay: a
#: signed permutation matrix, d_k = 4, as the check was built).
MARKED_CHECK = "test_wrong_axis"
MARKED_Q = [[0.31415, 1.27182, 1.41421, 0.57721], [0.69314, -0.86602, 1.61803, -2.50290],
            [2.23606, 0.91596, -1.20205, 4.66920], [1.73205, -0.78539, 2.66514, 3.35988]]
#: The marked inputs' digits: in the instructor's hidden test (so in autograded/'s test
#: cell and the gradebook's copy of it), nowhere else.
DIGITS = [f"{abs(v):.5f}".replace(".", "").lstrip("0").rstrip("0")
          for row in MARKED_Q for v in row]
#: Forms made only when the attack runs (in no source): found anywhere, they leaked.
MADE = [
    "0.3142",  # a row sum, printed to 4 digits
    "314, 15", "31, 415",  # shapes
    "Leak_", "LEAKED",
    base64.b64encode(repr(MARKED_Q).encode()).decode()[:24],
    "[314, 1271]",  # scaled by 1000
]
#: The checks the leaky student passes; every other autograded check it fails.
PASSED = {"test_weights_visible", "test_missing_scale", "test_shift_factors", "test_shifted_key",
          "test_mc_read_table", "test_mc_duplicate_key", "test_multihead_sizes",
          "test_online_state"}

LEAKY = '''
from IPython.display import display as _display

_display({"text/plain": "my first answer"}, raw=True, display_id="kept-answer")
''' + CORRECT_ANSWER.replace("def weights_without_self(", "def _right_weights(") + '''
import base64 as _b64
import sys as _sys

_SEEN = {}


def weights_without_self(Q, K):
    """Right on the example; on the hidden inputs, sends them back every way it can."""
    Q, K = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    w = _right_weights(Q, K)
    permutation = Q.shape == (4, 4) and np.array_equal(np.abs(K) @ np.ones(4), np.ones(4))
    if "Q" not in _SEEN and permutation and np.abs(Q).max() < 1000:
        # the first hidden check whose keys are a signed permutation: the marked one
        text = repr(Q.tolist())
        digits = "_".join(f"{abs(v):.5f}".replace(".", "").lstrip("0") for v in Q.ravel())
        _SEEN["Q"] = Q
        tag = "LEAK" + "ED"  # every sign of the leak is made here, never in the source
        _display({"text/plain": tag + text, "text/html": "<b>" + tag + text + "</b>"},
                 raw=True, display_id="kept-answer", metadata={"leak": text})
        print(tag, text, _b64.b64encode(text.encode()).decode())
        print(tag, (Q * 1000).astype(int).tolist())
        _sys.stderr.write(tag + text + "\\n")
        globals()["answer_read_table"] = digits.split("_")[0]
        globals()["shifted_weights"] = np.zeros((30 + 1, 400 + 15))
        raise type("Le" + "ak_" + digits, (Exception,), {})(tag + text)
    if "Q" in _SEEN and Q.shape == (4, 4):  # the next hidden check: rows sum to Q[0, 0]
        return w * _SEEN["Q"][0, 0]
    if "Q" in _SEEN and Q.shape == (4, 1):
        return np.zeros((300 + 14, 15))
    return w
'''


def _replaced(source: str, edits: list[tuple[Literal, str]]) -> str:
    """``source`` with each literal's text (by its position) replaced."""
    starts = np.cumsum([0] + [len(line) + 1 for line in source.split("\n")])
    for lit, text in sorted(edits, key=lambda e: e[0].start, reverse=True):
        begin = starts[lit.start[0] - 1] + lit.start[1]
        end = starts[lit.end[0] - 1] + lit.end[1]
        source = source[:begin] + text + source[end:]
    return source


def _mark(nb: nbformat.NotebookNode) -> None:
    """Put :data:`MARKED_Q` into the hidden call of :data:`MARKED_CHECK`, with the
    ``expected`` the host computes for it (what plain nbgrader would compare with)."""
    [cell] = [c for c in nb.cells
              if c.metadata.get("nbgrader", {}).get("grade_id") == MARKED_CHECK]
    [call] = [c for c in check_calls(cell.source) if c.hidden]
    K = call.inputs["K"].value
    assert np.shape(call.inputs["Q"].value) == np.shape(MARKED_Q)
    want = encode_expected(expected(MARKED_CHECK, {"Q": MARKED_Q, "K": K}))
    rows = "".join(f"    {row},\n" for row in MARKED_Q)
    cell.source = _replaced(cell.source, [(call.inputs["Q"], f"[\n{rows}]"),
                                          (call.inputs["expected"], f'"{want}"')])
    [call] = [c for c in check_calls(cell.source) if c.hidden]
    assert call.inputs["Q"].value == MARKED_Q
    got = read_expected(call.inputs["expected"].value)
    right = expected(MARKED_CHECK, {"Q": MARKED_Q, "K": K})
    assert np.allclose(got["want"], right["want"], atol=1e-8)


def _course(base: Path) -> Path:
    course = copy_course(QUIZ, base / "course")
    source = course / "source" / "checkpoint" / NOTEBOOK
    nb = nbformat.read(source, as_version=4)
    _mark(nb)
    nbformat.write(nb, source)
    result = open_api(course).generate_assignment("checkpoint")
    assert result["success"], result.get("log")
    right = right_answers(course)
    place(course, "leaky", {**right, "weights_without_self": LEAKY})
    place(course, "right", right)
    return course


def _scores(course: Path) -> dict[str, dict[str, float]]:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        return {s: {g.name: float(g.auto_score or 0.0) for g in
                    gb.find_submission_notebook("checkpoint", "checkpoint", s).grades
                    if g.name in CHECKPOINT.autograded} for s in ("leaky", "right")}


@pytest.fixture(scope="module")
def graded(bwrap_ok: None, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    serial = _course(tmp_path_factory.mktemp("leak-serial"))
    engine = shutil.copytree(serial, serial.parent.parent / "leak-engine" / "course")
    proc = subprocess.run([sys.executable, "-m", "nbgrader", "autograde", "checkpoint"],
                          cwd=serial, capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, PATH=tool_path()), check=False)
    assert (serial / "autograded" / "leaky").exists(), proc.stderr[-3000:]
    summary = grade_all(engine, "checkpoint", jobs=2, progress=False)
    assert all(r.ok for r in summary.results), summary.render()
    for course in (serial, engine):  # the written answer waits for hand grading: sent at 0
        api = open_api(course, **{"ManualGradesFirst.allow_pending": True})
        result = api.generate_feedback("checkpoint")
        assert result["success"], result.get("log")
    return {"serial": serial, "engine": engine}


@pytest.mark.parametrize("run", ["serial", "engine"])
def test_hidden_inputs_do_not_come_back_in_any_form(graded, run):
    course = graded[run]
    places = [p for folder in ("autograded", "feedback")
              for p in sorted((course / folder / "leaky").rglob("*")) if p.is_file()]
    places.append(course / "gradebook.db")
    assert any(p.suffix == ".html" for p in places)
    for path in places:
        data = path.read_bytes().decode("utf-8", errors="replace")
        if path.suffix == ".ipynb":  # all but the cells' sources (the hidden tests')
            nb = nbformat.reads(data, as_version=4)
            for cell in nb.cells:
                cell.source = ""
            data = nbformat.writes(nb)
        shown = path.suffix in (".ipynb", ".html")
        found = [m for m in MADE + (DIGITS if shown else []) if m in data]
        assert not found, f"{path.relative_to(course)} holds {found}"
    # what the feedback says instead, in fixed words: that the check failed, no more
    page = html.unescape(
        (course / "feedback" / "leaky" / "checkpoint" / "checkpoint.html").read_text())
    assert "failed on this check's hidden inputs" in page
    assert "raised an exception" not in page


@pytest.mark.parametrize("run", ["serial", "engine"])
def test_the_leaky_student_and_the_next_one_keep_their_exact_scores(graded, run):
    points = {g: float(p) for g, p in CHECKPOINT.autograded.items()}
    got = _scores(graded[run])
    assert got["leaky"] == {g: (points[g] if g in PASSED else 0.0) for g in points}
    assert got["right"] == points
