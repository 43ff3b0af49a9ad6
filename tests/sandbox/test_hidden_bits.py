"""A hidden check tells the student one bit: passed or failed, whatever the function did.

Issue 42, item 2. On the checkpoint quiz, students whose function does something different
on each hidden input, chosen from the inputs themselves, are graded beside students whose
function does one thing on all of them; each pair agrees on the setup cell's example (public)
and fails every hidden check, so the one bit per check is the same in both:

* ``raises_by_hash`` raises a built-in exception picked by a hash of the hidden input (about
  6 bits per check before this change), ``raises_value_error`` always ``ValueError``;
* ``imitates_by_hash`` returns the weights of a named mistake picked by a hash of the input
  (which mistake the verdict named: about 2.6 bits), ``zeros_on_hidden`` all zeros;
* ``dies_on_hidden`` ends its kernel at the first hidden input (the notebook's note said
  "the kernel died"), against ``zeros_on_hidden`` again.

What the student sees of each pair is identical, graded by ``nbgrader autograde`` with the
course's config and by the engine: every check's output and verdict in the autograded
notebook, the notebook's grading note, the feedback page's words for every check and its
notes, the scores, the grade table's row and the class report's entries. (The notebook's
``seconds``, measured before any hidden input is sent, is the machine's, not the student's.)
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest
from hostile_quiz import NOTEBOOK, place, right_answers

from course_grading.checkpoint_answers import CORRECT_ANSWER, MISTAKE_SOURCES
from course_grading.gradetable import build_grade_table
from course_grading.parallel import grade_all
from course_grading.pipeline import copy_course, open_api, tool_path
from course_grading.probe import REPORTED_EXCEPTIONS
from course_grading.report import _lost_rows, summarize
from course_grading.verdicts import plan_checks, sends_hidden_inputs
from course_quiz.checkpoint_spec import CHECKPOINT

QUIZ = Path(__file__).resolve().parents[2] / "quiz"

#: The setup cell's example is recognised by its first query (its answer is public).
_EXAMPLE = "np.asarray(Q, dtype=float).shape == (4, 2) and list(np.asarray(Q)[0]) == [2.0, 1.0]"
_RIGHT = CORRECT_ANSWER.replace("def weights_without_self(", "def _right(")

RAISES_BY_HASH = f'''
import builtins as _builtins
import hashlib as _hashlib

_NAMES = sorted(n for n, v in vars(_builtins).items()
                if isinstance(v, type) and issubclass(v, Exception) and "Group" not in n)


def weights_without_self(Q, K):
    if {_EXAMPLE}:
        raise ValueError("not done")
    pick = int(_hashlib.sha256(np.asarray(Q, dtype=float).tobytes()).hexdigest(), 16)
    raise getattr(_builtins, _NAMES[pick % len(_NAMES)])("not done")
'''
RAISES_VALUE_ERROR = '''
def weights_without_self(Q, K):
    raise ValueError("not done")
'''
IMITATES_BY_HASH = _RIGHT + "".join(
    source.replace("def weights_without_self(", f"def _{name}(")
    for name, source in MISTAKE_SOURCES.items()) + f'''
import hashlib as _hashlib

_MISTAKES = [{", ".join(f"_{name}" for name in MISTAKE_SOURCES)}]


def weights_without_self(Q, K):
    right = _right(Q, K)
    if {_EXAMPLE}:
        return right
    with np.errstate(all="ignore"):
        tables = [m(Q, K) for m in _MISTAKES]
    wrong = [t for t in tables if t.shape != right.shape or not np.allclose(t, right)]
    pick = int(_hashlib.sha256(np.asarray(Q, dtype=float).tobytes()).hexdigest(), 16)
    return wrong[pick % len(wrong)]
'''
ZEROS_ON_HIDDEN = _RIGHT + f'''

def weights_without_self(Q, K):
    if {_EXAMPLE}:
        return _right(Q, K)
    return np.zeros((len(Q), len(Q)))
'''
DIES_ON_HIDDEN = _RIGHT + f'''
import os as _os


def weights_without_self(Q, K):
    if {_EXAMPLE}:
        return _right(Q, K)
    _os._exit(3)
'''
STUDENTS = {"raises_by_hash": RAISES_BY_HASH, "raises_value_error": RAISES_VALUE_ERROR,
            "imitates_by_hash": IMITATES_BY_HASH, "zeros_on_hidden": ZEROS_ON_HIDDEN,
            "dies_on_hidden": DIES_ON_HIDDEN}
PAIRS = [("raises_by_hash", "raises_value_error"), ("imitates_by_hash", "zeros_on_hidden"),
         ("dies_on_hidden", "zeros_on_hidden")]
_SOURCE = nbformat.read(QUIZ / "source" / "checkpoint" / NOTEBOOK, 4)
HIDDEN = [p.grade_id for p in plan_checks(_SOURCE, CHECKPOINT).values()
          if sends_hidden_inputs(p)]


@pytest.fixture(scope="module")
def graded(bwrap_ok: None, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    serial = copy_course(QUIZ, tmp_path_factory.mktemp("bits-serial") / "course")
    result = open_api(serial).generate_assignment("checkpoint")
    assert result["success"], result.get("log")
    right = right_answers(serial)
    for student, answer in STUDENTS.items():
        place(serial, student, {**right, "weights_without_self": answer})
    engine = shutil.copytree(serial, serial.parent.parent / "bits-engine" / "course")
    proc = subprocess.run([sys.executable, "-m", "nbgrader", "autograde", "checkpoint"],
                          cwd=serial, capture_output=True, text=True, timeout=900,
                          env=dict(os.environ, PATH=tool_path()), check=False)
    assert all((serial / "autograded" / s).exists() for s in STUDENTS), proc.stderr[-3000:]
    summary = grade_all(engine, "checkpoint", jobs=2, progress=False)
    assert all(r.ok for r in summary.results), summary.render()
    for course in (serial, engine):  # the written answer waits for hand grading: sent at 0
        api = open_api(course, **{"ManualGradesFirst.allow_pending": True})
        result = api.generate_feedback("checkpoint")
        assert result["success"], result.get("log")
    return {"serial": serial, "engine": engine, "summary": summary, "log": proc.stderr}


def _feedback_words(page: str) -> list[str]:
    """Every check's explanation and every note of the grader on a feedback page."""
    checks = re.findall(r'<div class="course-check".*?</div>', page, flags=re.S)
    notes = re.findall(r"Note from the grader.*?</p>", page, flags=re.S)
    return checks + notes


def _seen(course: Path, student: str) -> dict[str, object]:
    """What the student sees of their grading, in every place they may see it."""
    nb = nbformat.read(course / "autograded" / student / "checkpoint" / NOTEBOOK, 4)
    checks = {c.metadata["nbgrader"]["grade_id"]: (c.outputs, c.metadata.get("course"))
              for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id")
              in CHECKPOINT.autograded}
    note = {k: v for k, v in nb.metadata.get("course", {}).items() if k != "seconds"}
    page = (course / "feedback" / student / "checkpoint" / "checkpoint.html").read_text()
    table = build_grade_table(course, "checkpoint")
    row = next(r for r in table.rows if r.student == student)
    summary = summarize(table)
    report = {
        "mistakes": sorted(m for m, who in summary.mistakes.items() if student in who),
        "crashed": student in summary.crashed,
        "troubled": summary.troubled.get(student),
        "lost": [r[1:] for r in _lost_rows(summary) if r[0] == student]}
    return {"checks": checks, "note": note, "feedback": _feedback_words(page),
            "row": (row.status, row.scores, row.failed_checks, row.crashed_checks,
                    row.problems, row.lost), "report": report}


@pytest.mark.parametrize("run", ["serial", "engine"])
@pytest.mark.parametrize("pair", PAIRS, ids=["-vs-".join(p) for p in PAIRS])
def test_what_the_function_chose_on_hidden_inputs_never_reaches_the_student(graded, run,
                                                                            pair):
    course = graded[run]
    chooses, constant = (_seen(course, s) for s in pair)
    for key in chooses:
        assert chooses[key] == constant[key], f"{key} differs between {pair}"
    # and each hidden check did fail for both: only its bit is told
    for gid in HIDDEN:
        outputs, course_meta = chooses["checks"][gid]
        assert course_meta["verdict"]["passed"] is False
        assert course_meta["verdict"]["reason"] == "hidden"
        assert outputs[0]["ename"] == "CheckFailed"


def _shown_text(course: Path, student: str) -> str:
    """The autograded notebook without any cell's source (the student's own code names
    what it does), the feedback page and the grade table's row, as one text."""
    nb = nbformat.read(course / "autograded" / student / "checkpoint" / NOTEBOOK, 4)
    for cell in nb.cells:
        cell.source = ""
    page = (course / "feedback" / student / "checkpoint" / "checkpoint.html").read_text()
    row = next(r for r in build_grade_table(course, "checkpoint").rows if r.student == student)
    return nbformat.writes(nb).replace(student, "S") + page.replace(student, "S") + repr(
        row).replace(student, "S")


@pytest.mark.parametrize("run", ["serial", "engine"])
@pytest.mark.parametrize("pair", PAIRS[::2], ids=["-vs-".join(p) for p in PAIRS[::2]])
def test_no_exception_or_death_the_function_chose_is_named_anywhere(graded, run, pair):
    """Whole files, not only the places above: every exception name and every word of a
    stopped kernel found in what the choosing student sees is found in what the constant
    one sees (the page's own stylesheet, the public visible check's ValueError)."""
    course = graded[run]
    words = [*sorted(REPORTED_EXCEPTIONS), "kernel died", "was stopped", "time budget",
             "memory", "output message"]
    texts = {s: _shown_text(course, s) for s in pair}
    found = {s: {w for w in words if re.search(rf"\b{w}\b", texts[s])} for s in pair}
    assert found[pair[0]] <= found[pair[1]], found


@pytest.mark.parametrize("run", ["serial", "engine"])
def test_scores_are_the_bits_and_nothing_else(graded, run):
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{graded[run] / 'gradebook.db'}") as gb:
        for student in STUDENTS:
            nb = gb.find_submission_notebook("checkpoint", "checkpoint", student)
            got = {g.name: float(g.auto_score or 0) for g in nb.grades
                   if g.name in CHECKPOINT.autograded}
            visible = 0.0 if student.startswith("raises") else 1.0
            assert got == {**{g: float(p) for g, p in CHECKPOINT.autograded.items()},
                           "test_weights_visible": visible, **{g: 0.0 for g in HIDDEN}}


def test_the_instructor_is_told_what_the_student_is_not(graded):
    """The grader's log (and the engine's summary, for the instructor's terminal) says that
    the notebook stopped during its hidden checks, and why."""
    assert "stopped during its hidden checks: the kernel died" in graded["log"]
    note = next(r.note for r in graded["summary"].results if r.student == "dies_on_hidden")
    assert "stopped during its hidden checks: the kernel died" in note
    assert "(not shown to the student)" in note
