"""A kernel's output is counted whole, metadata included, and the grader's memory stays bounded.

The checkpoint quiz (quiz/) with one student, ``metadata_flood``, whose answer cell sends
400 outputs of one character each, each with 1 MB of metadata (400 MB in all; every
message stays under the 16 MB the grader accepts), then answers everything right; and
``right``, graded after it. Graded by ``nbgrader autograde`` in a process of its own, whose
peak memory (``VmHWM``) is read while it runs.

The bound: the grader receives at most ``max_output_received`` (32 M characters) from one
kernel before it kills it, keeps at most ``max_notebook_output`` (1 M) of it, and holds the
rest only while one cell runs; with nbgrader's own ~150 MB the grading process stays under
:data:`BOUND`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from hostile_quiz import NOTEBOOK, place, right_answers

from course_grading.pipeline import copy_course, open_api, tool_path
from course_quiz.checkpoint_spec import CHECKPOINT

QUIZ = Path(__file__).resolve().parents[2] / "quiz"
BOUND = 400 << 20
FLOOD = '''
from IPython.display import display as _display

for _i in range(400):
    _display({"text/plain": "."}, raw=True, metadata={"pad": "m" * 1_000_000})
'''


def _peak_rss(cmd: list[str], cwd: Path) -> tuple[int, subprocess.CompletedProcess[str]]:
    """Run ``cmd``; its highest resident memory (bytes) as it ran, and how it ended."""
    env = dict(os.environ, PATH=tool_path())
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    peak = 0
    while proc.poll() is None:
        try:
            with open(f"/proc/{proc.pid}/status", encoding="utf-8") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        peak = max(peak, int(line.split()[1]) << 10)
        except OSError:
            pass
        time.sleep(0.1)
    out = proc.stdout.read() if proc.stdout else ""
    return peak, subprocess.CompletedProcess(cmd, proc.returncode, out, "")


@pytest.fixture(scope="module")
def graded(bwrap_ok: None, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, str]:
    course = copy_course(QUIZ, tmp_path_factory.mktemp("budgets") / "course")
    result = open_api(course).generate_assignment("checkpoint")
    assert result["success"], result.get("log")
    right = right_answers(course)
    place(course, "metadata_flood", {**right, "weights_without_self":
                                     FLOOD + right["weights_without_self"]})
    place(course, "right", right)
    peak, proc = _peak_rss([sys.executable, "-m", "nbgrader", "autograde", "checkpoint"],
                           course)
    return course, peak, proc.stdout


def test_metadata_counts_against_the_output_budgets(graded):
    course, _, said = graded
    path = course / "autograded" / "metadata_flood" / "checkpoint" / NOTEBOOK
    assert path.exists(), said[-3000:]
    assert path.stat().st_size < 2_000_000
    course_meta = nbformat.read(path, as_version=4).metadata["course"]
    assert course_meta["stopped"] == "it sent more than 32,000,000 characters of output"


def test_grader_memory_per_notebook_stays_under_the_bound(graded):
    _, peak, said = graded
    print(f"grading process peak memory: {peak >> 20} MB")
    assert 0 < peak < BOUND, f"peak {peak >> 20} MB\n{said[-2000:]}"


def test_the_next_notebook_keeps_its_exact_score(graded):
    from nbgrader.api import Gradebook

    course, _, _ = graded
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        nb = gb.find_submission_notebook("checkpoint", "checkpoint", "right")
        auto = sum(g.auto_score or 0 for g in nb.grades if g.name in CHECKPOINT.autograded)
        assert auto == sum(CHECKPOINT.autograded.values())  # every autograded point
