"""Nothing a student's code does with a hidden check's inputs comes back to the student.

The checkpoint quiz (quiz/), with the hidden inputs of ``test_wrong_axis`` replaced by
numbers that serve as a marker (:data:`MARKED_Q`: ``0.31415``, ``1.27182``, ...). The
``leaky`` student answers right on the worked example and on ``test_missing_scale``, and
sends the marked inputs back every way it can when it sees them:

* an exception whose class name spells them (``Leak_31415_127182_...``);
* ``display`` with the ``display_id`` of an output its answer cell kept, the inputs in the
  data and in the output's metadata; print, stderr, base64, scaled by 1000;
* later probes: weights whose rows sum to ``0.31415``, an answer of shape ``(314, 15)``,
  ``sat_output`` of shape ``(31, 415)`` and the letter ``"31415"``.

Its exact score is 1 + 1 + 1 (the visible check, ``test_missing_scale``,
``test_mc_causal_mask``); ``right``, graded after it, keeps all 8 points. The marker, in
every form the attack used, must not appear in ``autograded/``, in the feedback's HTML or
in the gradebook, graded by ``nbgrader autograde`` and by the parallel engine.
"""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from hostile_quiz import NOTEBOOK, place, right_answers

from course_grading.mistakes import CORRECT_ANSWER
from course_grading.parallel import grade_all
from course_grading.pipeline import copy_course, open_api, tool_path
from course_lib.checkpoint_spec import CHECKPOINT

QUIZ = Path(__file__).resolve().parents[2] / "quiz"
ORIGINAL_Q = "Q=[\n    [-0.3, 1.2],\n    [1.3, 0.5],\n    [0.7, -0.8],\n]"
MARKED_Q = [[0.31415, 1.27182], [1.41421, 0.57721], [0.69314, -0.86602]]
DIGITS = "_".join(f"{abs(v):.5f}".replace(".", "").lstrip("0") for row in MARKED_Q
                  for v in row)
#: The marked inputs' digits: in the instructor's hidden test (so in autograded/'s test
#: cell and the gradebook's copy of it), nowhere else.
DIGITS = ["31415", "127182", "141421", "57721", "69314", "86602"]
#: Forms made only when the attack runs (in no source): found anywhere, they leaked.
MADE = [
    "0.3142",  # a row sum, printed to 4 digits
    "314, 15", "31, 415",  # shapes
    "Leak_", "LEAKED",
    base64.b64encode(repr(MARKED_Q).encode()).decode()[:24],
    "[314, 1271]",  # scaled by 1000
]
PASSED = {"test_attention_weights_visible", "test_missing_scale", "test_mc_causal_mask"}

LEAKY = '''
from IPython.display import display as _display

_display({"text/plain": "my first answer"}, raw=True, display_id="kept-answer")
''' + CORRECT_ANSWER.replace("def attention_weights(", "def _right_weights(") + '''
import base64 as _b64
import sys as _sys

_SEEN = {}


def attention_weights(Q, K):
    """Right on the worked example; on hidden inputs, sends them back every way it can."""
    Q, K = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    w = _right_weights(Q, K)
    if Q.shape == (3, 2) and K.shape == (4, 2):  # the marked hidden check
        text = repr(Q.tolist())
        digits = "_".join(f"{abs(v):.5f}".replace(".", "").lstrip("0") for v in Q.ravel())
        _SEEN["Q"] = Q
        tag = "LEAK" + "ED"  # every sign of the leak is made here, never in the source
        _display({"text/plain": tag + text, "text/html": "<b>" + tag + text + "</b>"},
                 raw=True, display_id="kept-answer", metadata={"leak": text})
        print(tag, text, _b64.b64encode(text.encode()).decode())
        print(tag, (Q * 1000).astype(int).tolist())
        _sys.stderr.write(tag + text + "\\n")
        globals()["answer_why_scale"] = digits.split("_")[0]
        globals()["sat_output"] = np.zeros((30 + 1, 400 + 15))
        raise type("Le" + "ak_" + digits, (Exception,), {})(tag + text)
    if "Q" in _SEEN and Q.shape == (3, 2):  # the next hidden check: rows sum to Q[0, 0]
        return w * _SEEN["Q"][0, 0]
    if "Q" in _SEEN and Q.shape == (4, 1):
        return np.zeros((300 + 14, 15))
    return w
'''


def _course(base: Path) -> Path:
    course = copy_course(QUIZ, base / "course")
    source = course / "source" / "checkpoint" / NOTEBOOK
    nb = nbformat.read(source, as_version=4)
    [cell] = [c for c in nb.cells
              if c.metadata.get("nbgrader", {}).get("grade_id") == "test_wrong_axis"]
    assert ORIGINAL_Q in cell.source
    marked = "Q=[\n" + "".join(f"    {row},\n" for row in MARKED_Q) + "]"
    cell.source = cell.source.replace(ORIGINAL_Q, marked)
    nbformat.write(nb, source)
    result = open_api(course).generate_assignment("checkpoint")
    assert result["success"], result.get("log")
    right = right_answers(course)
    place(course, "leaky", {**right, "attention_weights": LEAKY,
                            "mc_why_scale": 'answer_why_scale = "D"'})
    place(course, "right", right)
    return course


def _scores(course: Path) -> dict[str, dict[str, float]]:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        return {s: {g.name: float(g.auto_score or 0.0) for g in
                    gb.find_submission_notebook("checkpoint", "checkpoint", s).grades
                    if g.name != "written_scaling"} for s in ("leaky", "right")}


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
    for course in (serial, engine):
        result = open_api(course).generate_feedback("checkpoint")
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
    # what the feedback says instead, in fixed words
    page = (course / "feedback" / "leaky" / "checkpoint" / "checkpoint.html").read_text()
    assert "raised an exception when the check called it" in page


@pytest.mark.parametrize("run", ["serial", "engine"])
def test_the_leaky_student_and_the_next_one_keep_their_exact_scores(graded, run):
    points = {g: float(p) for g, p in CHECKPOINT.grade_ids.items() if g != "written_scaling"}
    got = _scores(graded[run])
    assert got["leaky"] == {g: (points[g] if g in PASSED else 0.0) for g in points}
    assert got["right"] == points
