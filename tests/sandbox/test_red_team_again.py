"""The second red team on the real checkpoint (issue 42): what it broke, and what held.

Every hostile student answers everything wrong (tests/sandbox/hostile_quiz.py ``WRONG``:
0 autograded points when graded honestly) and adds one attack; a ``right`` neighbour is
graded beside them. The same submissions are graded twice, as the instructor can:

* ``ours``: ``NbGraderAPI.autograde`` in this process, with the course's configuration;
* ``parallel``: the course's engine (:func:`course_grading.parallel.grade_all`, 2 workers).

What broke (each test below failed before its fix):

* a student's function that, once a hidden check has called it, sends its kernel's
  client a message of the wrong shape (no ``msg_id``, a list as parent header or content,
  the same signed message twice) broke nbgrader's autograde for that submission: it came out
  *ungraded* (to be run again) rather than *failed*, a choice made knowing the hidden input;
  now the notebook stops there (:mod:`course_grading.kernel_messages`);
* a file name with a terminal escape sequence reached the instructor's terminal through
  nbgrader's "Copying ..." log line; now such a submission is not graded
  (:func:`course_grading.submission_shape.not_graded_why`).

What held (the attack earns its honest 0, the submission is graded, not ungraded, and the
neighbour keeps its 10): ``kill -9 -1`` and ``SIGSTOP`` of the kernel itself after a hidden
input, an ``atexit`` sleep, a write into the notebook being graded. docs/grading.md has the
whole table, with the attacks tried by hand.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import nbformat
import pytest
from hostile_quiz import NOTEBOOK, WRONG, place, right_answers

from course_grading.gradetable import build_grade_table
from course_grading.pipeline import copy_course, open_api
from course_grading.submissions import WRITTEN_ANSWER
from course_quiz.checkpoint_spec import CHECKPOINT

QUIZ = Path(__file__).resolve().parents[2] / "quiz"

#: Runs only once a hidden check has called the function (not on the setup cell's
#: example, which the student's notebook holds): sends a signed message of raw frames.
_AFTER_HIDDEN = '''
import time as _time

from jupyter_client.session import DELIM as _DELIM


def _send(header=None, parent=None, content=b'{"name": "stdout", "text": "x"}', times=1):
    kernel = get_ipython().kernel
    session = kernel.session
    frames = [session.pack(session.msg_header("stream") if header is None else header),
              session.pack(kernel.get_parent("shell")["header"] if parent is None
                           else parent),
              session.pack({}), content]
    for _ in range(times):
        kernel.iopub_socket.send_multipart([b"stream", _DELIM, session.sign(frames)]
                                           + frames)
    _time.sleep(1)


def weights_without_self(Q, K):
    Q, K = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    if Q.shape != (4, 2):  # a hidden input
        ATTACK
    return Q @ K.T
'''


def _after_hidden(attack: str) -> str:
    return _AFTER_HIDDEN.replace("ATTACK", attack)


MESSAGE_ATTACKS = {
    "no_msg_id": _after_hidden("_send(header={})"),
    "list_parent": _after_hidden("_send(parent=[1, 2])"),
    "list_content": _after_hidden("_send(content=b'[1, 2, 3]')"),
    "replayed": _after_hidden("_send(times=2)"),
}
HELD_ATTACKS = {
    "kill_everything": _after_hidden("import os, signal; os.kill(-1, signal.SIGKILL)"),
    "sigstop_itself": _after_hidden("import os, signal; os.kill(os.getpid(), "
                                    "signal.SIGSTOP)"),
    "sleep_at_exit": _after_hidden("import atexit; atexit.register(_time.sleep, 1000)"),
    "writes_notebook": '''
try:
    with open("checkpoint.ipynb", "a") as _f:
        _f.write("{}")
    print("WROTE THE NOTEBOOK")
except OSError as _e:
    print("NOT WRITTEN:", _e.strerror)
''' + WRONG["weights_without_self"],
}
#: A student cell whose display has a list as metadata: nbformat cannot store it.
ODD_DISPLAY = '''
_kernel = get_ipython().kernel
_kernel.session.send(_kernel.iopub_socket, "display_data",
                     {"data": {"text/plain": "x"}, "metadata": []},
                     _kernel.get_parent("shell"))
''' + WRONG["weights_without_self"]
ESCAPE_NAME = b"\x1b]0;HOSTILE-TITLE\x07notes.txt"
ODD_NAME = "odd_file_name"


@pytest.fixture(scope="module")
def graded(bwrap_ok: None, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from course_grading.parallel import grade_all

    base = tmp_path_factory.mktemp("red-team-again")
    course = copy_course(QUIZ, base / "ours")
    assert open_api(course).generate_assignment("checkpoint")["success"]
    right = {**right_answers(course), "written_shift_or_scale": WRITTEN_ANSWER}
    students = {"right": right, "odd_display": {**WRONG, "weights_without_self": ODD_DISPLAY},
                ODD_NAME: dict(WRONG)}
    for name, source in {**MESSAGE_ATTACKS, **HELD_ATTACKS}.items():
        students[name] = {**WRONG, "weights_without_self": source}
    for name, answers in students.items():
        place(course, name, answers)
    folder = os.fsencode(course / "submitted" / ODD_NAME / "checkpoint")
    with open(os.path.join(folder, ESCAPE_NAME), "wb") as f:
        f.write(b"a file a student may name as they like")
    parallel = shutil.copytree(course, base / "parallel")
    result = open_api(course).autograde("checkpoint", "*")
    summary = grade_all(parallel, "checkpoint", jobs=2, progress=False)
    return {"ours": course, "parallel": parallel, "log": result.get("log", ""),
            "summary": summary.render(), "students": list(students)}


RUNS = ["ours", "parallel"]


#: the grade table's total column, and what every automatic check gives (the written
#: answer waits for a manual grade)
TOTAL = f"total (/{CHECKPOINT.total_points})"
AUTOMATIC = sum(CHECKPOINT.autograded.values())


def _row(graded: dict[str, Any], run: str, student: str) -> dict[str, Any]:
    return build_grade_table(graded[run]).row(student)


def _course_meta(graded: dict[str, Any], run: str, student: str) -> dict[str, Any]:
    path = graded[run] / "autograded" / student / "checkpoint" / NOTEBOOK
    return nbformat.read(path, as_version=4).metadata["course"]


@pytest.mark.parametrize("run", RUNS)
def test_the_neighbour_keeps_its_grade(graded, run):
    row = _row(graded, run, "right")
    assert row["status"].startswith("graded"), row["status"]
    assert row[TOTAL].startswith(f"{AUTOMATIC:g}"), row
    assert "stopped" not in _course_meta(graded, run, "right")


@pytest.mark.parametrize("run", RUNS)
@pytest.mark.parametrize("student", [*MESSAGE_ATTACKS, *HELD_ATTACKS, "odd_display"])
def test_every_attack_is_graded_with_its_honest_zero(graded, run, student):
    # graded, never "ungraded": after a hidden input, that choice would be a bit of it
    row = _row(graded, run, student)
    assert row["status"].startswith("graded"), row["status"]
    assert row[TOTAL].startswith("0"), row


@pytest.mark.parametrize("run", RUNS)
@pytest.mark.parametrize("student", MESSAGE_ATTACKS)
def test_a_malformed_message_after_a_hidden_input_stops_the_notebook_unseen(graded, run,
                                                                             student):
    assert "stopped" not in _course_meta(graded, run, student)  # the student is told nothing
    said = graded["log"] if run == "ours" else graded["summary"]
    said = " ".join(said.split())
    assert f"{student}/checkpoint] The notebook stopped during its hidden checks: it sent " \
           "a message the grader cannot read" in said or (
               f"{student}: notebook stopped during its hidden checks: it sent a message "
               "the grader cannot read" in said), said[-3000:]


@pytest.mark.parametrize("run", RUNS)
def test_a_display_nbformat_cannot_store_stops_the_notebook_with_its_reason(graded, run):
    assert _course_meta(graded, run, "odd_display")["stopped"] == (
        "it sent a message the grader cannot read: its display_data's metadata is a list, "
        "not an object")


@pytest.mark.parametrize("run", RUNS)
def test_the_notebook_being_graded_cannot_be_written(graded, run):
    nb = nbformat.read(graded[run] / "autograded" / "writes_notebook" / "checkpoint" /
                       NOTEBOOK, as_version=4)
    [cell] = [c for c in nb.cells
              if c.metadata.get("nbgrader", {}).get("grade_id") == "weights_without_self"]
    printed = "".join(o.get("text", "") for o in cell.outputs)
    assert "NOT WRITTEN: Read-only file system" in printed, printed


@pytest.mark.parametrize("run", RUNS)
def test_a_file_name_with_an_escape_sequence_is_not_graded(graded, run):
    assert _row(graded, run, ODD_NAME)["status"] == (
        "ungraded: file names with control characters or bytes that are not UTF-8 (1)")
    assert "HOSTILE-TITLE" not in graded["log"] + graded["summary"]
