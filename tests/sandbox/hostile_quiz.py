"""Hostile submissions to the real checkpoint quiz, one per class of attack seen in review.

Every hostile student answers everything *wrong* (raw scores for ``weights_without_self``,
zeros for the derived row, a wrong letter for both multiple-choice questions: 0 of 10
autograded points when graded honestly) and adds an attack to the first answer cell. Graded by plain
nbgrader, which runs each check inside the student's kernel, the attack earns points it
should not; graded by this course (checks decided on the instructor's side, student code in
the sandbox) it earns exactly its honest 0.

:data:`ATTACKS` maps a student name to its answer cells; :func:`make_corpus` writes them,
with two controls (``right``: every answer right, ``wrong``: every answer wrong, no attack)
into ``submitted/`` of a course directory.
"""

from __future__ import annotations

from pathlib import Path

import nbformat

from course_grading.mistakes import CORRECT_ANSWER
from course_grading.submissions import WRITTEN_ANSWER, answers_for, fill_answers
from course_grading.variants import quiz_facts

NOTEBOOK = "checkpoint.ipynb"

#: Wrong everywhere: raw scores are not weights (no row sums to 1, on any input).
WRONG_WEIGHTS = '''
def weights_without_self(Q, K):
    """The raw scores, not softmax(QK^T / sqrt(d_k)): wrong on every input."""
    return np.asarray(Q, dtype=float) @ np.asarray(K, dtype=float).T
'''

WRONG = {
    "weights_without_self": WRONG_WEIGHTS,
    "shifted_key": "shift_factors = [0.0, 0.0, 0.0]\n"
                   "shifted_weights = np.array([0.0, 0.0, 0.0, 0.0])",
    "mc_read_table": 'answer_read_table = "D"',
    "mc_duplicate_key": 'answer_duplicate_key = "D"',
    "written_shift_or_scale": "I do not know.",
    "multihead_sizes": "multihead_sizes = [0.0] * 6",
    "online_state": "online_state = [0.0] * 6",
}

# Sleep of the "slow_hooks" attack before every cell, and the limits the tests grade with:
# every cell stays under the cell time limit, so only a budget for the whole notebook stops it.
# The 1.5 s between them is for the cell itself on a busy machine (the three gradings of
# test_hostile_quiz run side by side, beside other test workers).
HOOK_SLEEP = 2.5
CELL_TIMEOUT = 4
NOTEBOOK_BUDGET = 20

#: A control with every answer right whose kernel signals the end of one cell's output this
#: many seconds late, as a busy machine can: longer than nbclient's own wait (4 s), which
#: stopped the notebook there, and shorter than the course's grader waits (15 s). It patches
#: ipykernel's private _publish_status; the test checks, in nbclient's timing record of
#: plain nbgrader's run, that the end of output did come late.
LATE_OUTPUT = 7
LATE_IDLE = f'''
import time as _time

_kernel = get_ipython().kernel
_publish = _kernel._publish_status


def _late_once(status, *args, **kwargs):
    """This cell's end of output ("idle") comes {LATE_OUTPUT} s after its reply."""
    if status == "idle" and _kernel._publish_status is _late_once:
        _kernel._publish_status = _publish
        _time.sleep({LATE_OUTPUT})
    return _publish(status, *args, **kwargs)


_kernel._publish_status = _late_once
'''
RIGHT_LATE_OUTPUT = "right_late_output"

#: Files each hostile student tries to create (the sandbox's scratch allows 10,000).
INODE_ATTEMPT = 12_000
#: Plain nbgrader's cell time limit in these tests, and its wait for a cell's output after the
#: cell's reply. No attack runs forever, so they only have to let the slowest cells finish
#: (creating those files; printing 50 MB: the whole submission took 12 s alone, 34-38 s
#: beside six busy loops). Two full runs lost plain nbgrader's notebook of an output flood:
#: the second said why (Run.autograded prints what the grading said): nbclient's default
#: 4 s wait for the output ran out on a busy machine, and nbgrader dropped the notebook.
PLAIN_CELL_TIMEOUT = 300

ATTACKS: dict[str, dict[str, str]] = {
    # 1. IPython hooks installed by an answer cell
    "hook_ast": {"weights_without_self": '''
import ast as _ast


class _NoChecks(_ast.NodeTransformer):
    """Every later call of check(...) becomes None: no check can fail."""

    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, _ast.Name) and node.func.id == "check":
            return _ast.copy_location(_ast.Constant(None), node)
        return node


get_ipython().ast_transformers.append(_NoChecks())
''' + WRONG_WEIGHTS},
    "hook_input": {"weights_without_self": '''
def _rewrite(lines):
    """Every later cell's check( becomes a call of a function that does nothing."""
    return [line.replace("check(", "(lambda *a, **k: None)(") for line in lines]


get_ipython().input_transformers_post.append(_rewrite)
''' + WRONG_WEIGHTS},
    "hook_first_result": {"weights_without_self": '''
_shell = get_ipython()


def _score_first(info):
    """An execute result before every cell: nbgrader scores a cell by its first one, and
    a result that is not a number is full credit (a 1 would be 1 point of a 2-point cell)."""
    _shell.displayhook("full credit")


_shell.events.register("pre_run_cell", _score_first)
''' + WRONG_WEIGHTS},
    "hook_run_cell": {"weights_without_self": '''
_shell = get_ipython()
_run_cell, _run_cell_async = _shell.run_cell, _shell.run_cell_async


def _skip_checks(raw_cell, *args, **kwargs):
    """Cells that check anything are not run at all."""
    if "check(" in raw_cell:
        raw_cell, kwargs["transformed_cell"] = "pass", "pass\\n"
    return _run_cell(raw_cell, *args, **{k: v for k, v in kwargs.items()
                                         if k != "transformed_cell"})


async def _skip_checks_async(raw_cell, *args, **kwargs):
    if "check(" in raw_cell:
        raw_cell, kwargs["transformed_cell"] = "pass", "pass\\n"
    return await _run_cell_async(raw_cell, *args, **kwargs)


_shell.run_cell, _shell.run_cell_async = _skip_checks, _skip_checks_async
''' + WRONG_WEIGHTS},
    # 2. objects that lie: answers whose conversion reads the check's inputs from the
    # caller's frames, and the checker replaced in the student's own process
    "lying_objects": {"weights_without_self": '''
import sys as _sys

try:
    import course_quiz.checkpoint_checks as _checks

    def _always(grade_id, reply, inputs, spec=_checks.CHECKPOINT):
        return _checks.Verdict(grade_id, True, "passed", "passed")

    _checks.judge = _always  # the in-kernel check now agrees with anything
except ImportError:
    print("course_quiz is not there to patch")


class _Liar:
    """Turns into whatever the caller's frames say is right."""

    def __array__(self, dtype=None, copy=None):
        frame = _sys._getframe(1)
        while frame is not None:
            inputs = frame.f_locals.get("inputs")
            if isinstance(inputs, dict) and "key" in inputs:
                Q, K = (np.asarray(inputs[n], dtype=float) for n in "QK")
                s = Q @ K.T / np.sqrt(Q.shape[-1])
                s[:, int(inputs["key"])] += float(inputs["c"])
                w = np.exp(s - s.max(-1, keepdims=True))
                return (w / w.sum(-1, keepdims=True))[int(inputs["row"])]
            frame = frame.f_back
        return np.array([0.0, 0.0, 0.0, 0.0])
''' + WRONG_WEIGHTS, "shifted_key": "shift_factors = _Liar()\nshifted_weights = _Liar()"},
    # 3. files inside the sandbox: the notebook being graded, printed encoded
    "reads_graded_notebook": {"weights_without_self": '''
import base64 as _b64
import glob as _glob
import re as _re

_right = {}
for _path in _glob.glob("*.ipynb"):
    _text = open(_path, encoding="utf-8").read().replace('\\\\"', '"')
    print("READ", _path, _b64.b64encode(_text.encode()).decode()[:400])
    for _m in _re.finditer(r'check\\("test_mc_\\w+", (answer_\\w+), right="([A-D])"', _text):
        _right[_m.group(1)] = _m.group(2)
print("RIGHT LETTERS FOUND", sorted(_right.items()))
''' + WRONG_WEIGHTS,
        "mc_read_table": 'answer_read_table = _right.get("answer_read_table", "D")',
        "mc_duplicate_key": 'answer_duplicate_key = _right.get("answer_duplicate_key", "D")'},
    # 4. student HTML and JavaScript for the instructor's browser
    "html_for_the_instructor": {
        "weights_without_self": '''
from IPython.display import HTML, Javascript, display

display(HTML('<img src=x onerror="document.title=\\'HOSTILE-HTML\\'">'))
display(Javascript("document.title = 'HOSTILE-JS'"))
''' + WRONG_WEIGHTS,
        "written_shift_or_scale": '<img src=x onerror="document.title=\'HOSTILE-MD\'">\n\n'
                           "[click me](javascript:document.title='HOSTILE-LINK')"},
    # 5. the grader's terminal: escape sequences, and a look for an inherited terminal
    "terminal": {"weights_without_self": '''
import os as _os

print("TTYS", [fd for fd in range(64) if _os.isatty(fd)], flush=True)
_os.write(2, b"\\x1b]0;HOSTILE-TITLE\\x07\\x1b[2JHOSTILE-STDERR\\n")
_os.write(1, b"HOSTILE-STDOUT\\n")
''' + WRONG_WEIGHTS},
    # 6. resources: an output flood, a hook that stays under the cell limit, inodes
    "output_flood": {"weights_without_self": 'print("x" * 50_000_000)\n' + WRONG_WEIGHTS},
    "output_flood_lines": {"weights_without_self": '''
for _line in range(60):
    print("y" * 1_000_000, flush=True)  # one message each
''' + WRONG_WEIGHTS},
    "slow_hooks": {"weights_without_self": f'''
import time as _time

get_ipython().events.register("pre_run_cell", lambda info: _time.sleep({HOOK_SLEEP}))
''' + WRONG_WEIGHTS},
    "inode_fill": {"weights_without_self": f'''
import os as _os

_made = 0
for _dir in (".", "/tmp"):
    try:
        _os.makedirs(_os.path.join(_dir, "_fill"), exist_ok=True)
        while _made < {INODE_ATTEMPT}:
            _os.close(_os.open(_os.path.join(_dir, "_fill", str(_made)),
                               _os.O_CREAT | _os.O_WRONLY, 0o600))
            _made += 1
        break
    except OSError as _e:
        print("stopped in", _dir, "after", _made, "files:", _e.strerror)
print("FILES", _made)
''' + WRONG_WEIGHTS},
}

#: 7. broken files: a notebook of valid JSON nested too deeply for a JSON parser.
DEEP_JSON = "deep_json"


def right_answers(course: Path) -> dict[str, str]:
    """Every answer of the course's checkpoint right (its variant's facts)."""
    facts = quiz_facts(nbformat.read(course / "source" / "checkpoint" / NOTEBOOK, 4))
    return answers_for(facts, CORRECT_ANSWER)  # the written answer included


def place(course: Path, student: str, answers: dict[str, str]) -> None:
    """Write ``student``'s checkpoint with these answers into ``submitted/``."""
    released = nbformat.read(course / "release" / "checkpoint" / NOTEBOOK, as_version=4)
    folder = course / "submitted" / student / "checkpoint"
    folder.mkdir(parents=True)
    nbformat.write(fill_answers(released, answers), folder / NOTEBOOK)


def make_corpus(course: Path) -> list[str]:
    """Write every attack, the three controls and the deep JSON file into ``submitted/``.

    Returns the student names, in order.
    """
    released = nbformat.read(course / "release" / "checkpoint" / NOTEBOOK, as_version=4)
    facts = quiz_facts(nbformat.read(course / "source" / "checkpoint" / NOTEBOOK, 4))
    right = {**answers_for(facts, CORRECT_ANSWER), "written_shift_or_scale": WRITTEN_ANSWER}
    students = {"right": right, "wrong": dict(WRONG),
                RIGHT_LATE_OUTPUT: {**right, "weights_without_self":
                                    LATE_IDLE + right["weights_without_self"]}}
    for name, cells in ATTACKS.items():
        students[name] = {**WRONG, **cells}
    for name, answers in students.items():
        folder = course / "submitted" / name / "checkpoint"
        folder.mkdir(parents=True)
        nbformat.write(fill_answers(released, answers), folder / NOTEBOOK)
    folder = course / "submitted" / DEEP_JSON / "checkpoint"
    folder.mkdir(parents=True)
    depth = 100_000
    (folder / NOTEBOOK).write_text('{"cells": ' + "[" * depth + "]" * depth + "}")
    return [*students, DEEP_JSON]
