"""The hostile corpus on the real checkpoint: plain nbgrader is fooled, this course is not.

The same submissions (tests/sandbox/hostile_quiz.py: every answer wrong plus one attack)
are autograded three times, each in its own copy of quiz/:

* ``plain``: nbgrader as it comes, running every check inside the student's kernel;
* ``ours``: ``nbgrader autograde`` with the course's configuration (checks decided on the
  instructor's side, student code in the sandbox);
* ``parallel``: ``python -m course_grading.parallel`` with the same configuration.

All three run under a pseudo-terminal, as an instructor runs them, so that what reaches the
grader's terminal is seen too.
"""

from __future__ import annotations

import os
import pty
import select
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import nbformat
import pytest
from hostile_quiz import (
    ATTACKS,
    CELL_TIMEOUT,
    DEEP_JSON,
    INODE_ATTEMPT,
    LATE_OUTPUT,
    NOTEBOOK,
    NOTEBOOK_BUDGET,
    PLAIN_CELL_TIMEOUT,
    RIGHT_LATE_OUTPUT,
    make_corpus,
)

from course_grading.pipeline import copy_course, open_api, tool_path
from course_quiz.checkpoint_spec import CHECKPOINT

QUIZ = Path(__file__).resolve().parents[2] / "quiz"
AUTOGRADED = [g for g in CHECKPOINT.grade_ids if g != "written_shift_or_scale"]
FULL = float(sum(CHECKPOINT.autograded.values()))  # every automatic point

PLAIN_CONFIG = f"""
c = get_config()  # noqa: F821
c.CourseDirectory.course_id = "attention-course"
c.Execute.timeout = {PLAIN_CELL_TIMEOUT}
c.Execute.iopub_timeout = {PLAIN_CELL_TIMEOUT}
c.Execute.interrupt_on_timeout = True
c.OverwriteCells.add_missing_cells = True
"""


@dataclass
class Run:
    course: Path
    terminal: bytes  # everything the grading command wrote to its terminal
    seconds: float

    def scores(self) -> dict[str, dict[str, float]]:
        from nbgrader.api import Gradebook, MissingEntry

        out = {}
        with Gradebook(f"sqlite:///{self.course / 'gradebook.db'}") as gb:
            for student in gb.students:
                try:
                    nb = gb.find_submission_notebook("checkpoint", "checkpoint", student.id)
                except MissingEntry:
                    continue
                out[student.id] = {g.name: float(g.auto_score or 0.0) for g in nb.grades
                                   if g.name != "written_shift_or_scale"}
        return out

    def total(self, student: str) -> float:
        return sum(self.scores()[student].values())

    def autograded(self, student: str) -> Path:
        path = self.course / "autograded" / student / "checkpoint" / NOTEBOOK
        if not path.exists():  # say why: the grading's own lines about this student
            lines = self.terminal.decode(errors="replace").splitlines()
            said = [ln for ln in lines if student in ln or "ERROR" in ln or "imeout" in ln]
            raise AssertionError(f"no autograded notebook for {student} in {self.course.name}; "
                                 "what the grading said:\n" + "\n".join(said[-25:]))
        return path

    def printed(self, student: str, grade_id: str = "weights_without_self") -> str:
        nb = nbformat.read(self.autograded(student), as_version=4)
        [cell] = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") ==
                  grade_id]
        return "".join(o.get("text", "") for o in cell.outputs)


def _in_terminal(cmd: list[str], cwd: Path) -> tuple[bytes, float]:
    """Run ``cmd`` with a pseudo-terminal as stdin, stdout and stderr; what it wrote there."""
    master, slave = pty.openpty()
    env = dict(os.environ, PATH=tool_path(), PYTHONUNBUFFERED="1")
    start = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=cwd, stdin=slave, stdout=slave, stderr=slave, env=env)
    os.close(slave)
    seen = bytearray()
    while True:
        ready, _, _ = select.select([master], [], [], 1.0)
        if ready:
            try:
                chunk = os.read(master, 1 << 16)
            except OSError:  # the terminal closed: every writer has exited
                chunk = b""
            if not chunk and proc.poll() is not None:
                break
            seen += chunk
        elif proc.poll() is not None:
            break
    proc.wait(timeout=60)
    os.close(master)
    return bytes(seen), time.monotonic() - start


def _course(base: Path, name: str, config: str | None) -> Path:
    course = copy_course(QUIZ, base / name)
    if config is not None:
        (course / "nbgrader_config.py").write_text(config)
    else:
        text = (course / "nbgrader_config.py").read_text()
        text = text.replace("c.Execute.timeout = 10", f"c.Execute.timeout = {CELL_TIMEOUT}")
        text = text.replace("enable(c, wall_time_limit=30)",
                            f"enable(c, wall_time_limit={NOTEBOOK_BUDGET})")
        assert f"wall_time_limit={NOTEBOOK_BUDGET}" in text
        (course / "nbgrader_config.py").write_text(text)
    result = open_api(course).generate_assignment("checkpoint")
    assert result["success"], result.get("error")
    make_corpus(course)
    return course


@pytest.fixture(scope="module")
def runs(bwrap_ok: None, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    """The three gradings of one corpus, run side by side: each mostly waits (on time limits,
    on sandboxed kernels starting), so together they take little more than the slowest."""
    base = tmp_path_factory.mktemp("hostile-quiz")
    nbgrader = [sys.executable, "-m", "nbgrader", "autograde", "checkpoint"]
    plain = _course(base, "plain", PLAIN_CONFIG)
    ours = _course(base, "ours", None)
    parallel = shutil.copytree(ours, base / "parallel")  # the same submissions, byte for byte
    commands = {
        "plain": (nbgrader, plain),
        "ours": (nbgrader, ours),
        "parallel": ([sys.executable, "-m", "course_grading.parallel", "checkpoint",
                      "--jobs", "2", "--no-progress"], parallel),
    }
    with ThreadPoolExecutor(len(commands)) as pool:
        started = {name: pool.submit(_in_terminal, cmd, course)
                   for name, (cmd, course) in commands.items()}
        return {name: Run(commands[name][1], *job.result()) for name, job in started.items()}


GRADED_RUNS = ["ours", "parallel"]


def test_the_controls_keep_their_grades_everywhere(runs):
    for name, run in runs.items():
        assert run.total("right") == FULL, name
        assert run.total("wrong") == 0.0, name


def test_output_that_ends_late_is_waited_for(runs):
    # the answers are right, and one cell's end of output comes LATE_OUTPUT s after its
    # reply: nbclient's own 4 s wait gave up there and stopped the notebook (every later
    # check 0); plain nbgrader waits PLAIN_CELL_TIMEOUT here
    late = [c for c in nbformat.read(runs["plain"].autograded(RIGHT_LATE_OUTPUT), 4).cells
            if "_late_once" in c.source]
    timing = late[0].metadata["execution"]  # nbclient's own record (plain nbgrader keeps it)
    gap = (datetime.fromisoformat(timing["iopub.status.idle"])
           - datetime.fromisoformat(timing["shell.execute_reply"])).total_seconds()
    assert gap >= LATE_OUTPUT - 0.5, f"the output did not end late (ipykernel changed?): {gap}"
    for name, run in runs.items():
        assert run.total(RIGHT_LATE_OUTPUT) == FULL, (name, run.scores()[RIGHT_LATE_OUTPUT])
    for name in GRADED_RUNS:
        nb = nbformat.read(runs[name].autograded(RIGHT_LATE_OUTPUT), as_version=4)
        assert "stopped" not in nb.metadata["course"], nb.metadata["course"]


@pytest.mark.parametrize("attack", ["hook_ast", "hook_input", "hook_first_result",
                                    "hook_run_cell"])
def test_ipython_hooks_fool_plain_nbgrader_entirely(runs, attack):
    assert runs["plain"].total(attack) == FULL


@pytest.mark.parametrize("run", GRADED_RUNS)
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_every_attack_earns_exactly_its_honest_zero_here(runs, run, attack):
    assert runs[run].scores()[attack] == dict.fromkeys(AUTOGRADED, 0.0)


def test_lying_objects_and_a_patched_checker_fool_plain_nbgrader(runs):
    # the patched judge passes every check; the lying shifted_weights even computes the row
    assert runs["plain"].total("lying_objects") == FULL
    for run in GRADED_RUNS:
        assert "course_quiz is not there to patch" in runs[run].printed("lying_objects")


def test_the_notebook_being_graded_is_not_in_the_sandbox(runs):
    plain = runs["plain"].printed("reads_graded_notebook")
    assert ("RIGHT LETTERS FOUND [('answer_duplicate_key', 'C'), ('answer_read_table', 'B')]"
            in plain)
    assert runs["plain"].scores()["reads_graded_notebook"]["test_mc_read_table"] == 2.0
    for run in GRADED_RUNS:
        printed = runs[run].printed("reads_graded_notebook")
        assert "RIGHT LETTERS FOUND []" in printed  # only the student's own notebook there


def test_student_html_and_script_reach_plain_formgrader_pages_but_not_ours(runs):
    from nbconvert.exporters import HTMLExporter

    def page(run):
        nb = nbformat.read(runs[run].autograded("html_for_the_instructor"), as_version=4)
        return HTMLExporter().from_notebook_node(nb)[0]

    plain = page("plain")
    assert '<img onerror="document.title' in plain or "<img src=\"x\" onerror" in plain \
        or 'onerror="document.title' in plain
    assert "document.title = 'HOSTILE-JS'" in plain  # an executable script output
    for run in GRADED_RUNS:
        html = page(run)
        body = html.split("<body", 1)[1]
        assert "onerror=" not in body.replace("onerror=&quot;", "").replace(
            'onerror="document.title=\'HOSTILE', "") or "&lt;img" in body
        assert "<img src=\"x\"" not in body and "<img src=x" not in body
        assert "HOSTILE-JS" not in body.replace("Javascript(&quot;", "").replace(
            'Javascript("document.title', "") or "<script" not in body.split(
                "HOSTILE-JS")[0][-200:]
        assert 'href="javascript:' not in body


def test_nothing_of_the_students_reaches_the_graders_terminal(runs):
    assert b"HOSTILE-STDERR" in runs["plain"].terminal
    assert b"\x1b]0;HOSTILE-TITLE" in runs["plain"].terminal
    assert "TTYS [" in runs["plain"].printed("terminal")
    assert "TTYS []" not in runs["plain"].printed("terminal")  # the grader's terminal
    for run in GRADED_RUNS:
        assert b"HOSTILE" not in runs[run].terminal
        assert "TTYS []" in runs[run].printed("terminal")


def test_an_output_flood_is_refused_and_the_kernel_stopped(runs):
    assert runs["plain"].autograded("output_flood").stat().st_size > 45_000_000
    for run in GRADED_RUNS:
        path = runs[run].autograded("output_flood")
        assert path.stat().st_size < 200_000
        stopped = nbformat.read(path, as_version=4).metadata["course"]["stopped"]
        assert stopped == "it sent an output message larger than the grader accepts (16 MB)"
    # the same flood in lines of 1 MB: plain nbgrader keeps it (its limit counts lines)
    assert runs["plain"].autograded("output_flood_lines").stat().st_size > 55_000_000
    for run in GRADED_RUNS:
        path = runs[run].autograded("output_flood_lines")
        assert path.stat().st_size < 200_000
        assert "output cut by the grader" in path.read_text()
        stopped = nbformat.read(path, as_version=4).metadata["course"]["stopped"]
        assert stopped == "it sent more than 32,000,000 characters of output"


def test_a_hook_that_stays_under_the_cell_limit_is_stopped_by_the_notebook_budget(runs):
    plain = nbformat.read(runs["plain"].autograded("slow_hooks"), as_version=4)
    assert all(c.execution_count for c in plain.cells if c.cell_type == "code")
    budget = f"the notebook used up its {NOTEBOOK_BUDGET} s time budget"
    for run in GRADED_RUNS:
        nb = nbformat.read(runs[run].autograded("slow_hooks"), as_version=4)
        course = nb.metadata["course"]
        if "stopped" in course:  # the budget ran out in the student's own cells
            assert course["stopped"] == budget
        else:  # ... or while the hidden checks ran (a busy machine): then the grader tells
            # the instructor only (issue 42: the student's code chose that moment)
            terminal = " ".join(runs[run].terminal.decode(errors="replace").split())
            assert f"stopped during its hidden checks: {budget}" in terminal, run
        assert course["seconds"] < NOTEBOOK_BUDGET + 10


def test_empty_files_stop_at_the_scratch_inode_limit(runs):
    assert f"FILES {INODE_ATTEMPT}" in runs["plain"].printed("inode_fill")
    for run in GRADED_RUNS:
        printed = runs[run].printed("inode_fill")
        assert "stopped in . after 0 files: Read-only file system" in printed
        made = int(printed.split("stopped in /tmp after ")[1].split()[0])
        assert made < 10_000


def test_a_deeply_nested_notebook_breaks_plain_readers_but_not_the_class_tools(runs, tmp_path):
    from course_grading.gradetable import build_grade_table
    from course_grading.report import write_report

    path = runs["ours"].course / "submitted" / DEEP_JSON / "checkpoint" / NOTEBOOK
    with pytest.raises(RecursionError):
        nbformat.read(path, as_version=4)  # what reading it plainly does
    for run in GRADED_RUNS:
        table = build_grade_table(runs[run].course)
        assert table.row(DEEP_JSON)["status"] == (
            "ungraded: corrupt notebook (JSON nested too deeply to be a notebook)")
        total = f"total (/{CHECKPOINT.total_points})"
        assert table.row("right")[total].startswith(f"{sum(CHECKPOINT.autograded.values())}")
        summary = write_report(runs[run].course, tmp_path / run)
        assert DEEP_JSON in summary.ungraded


def test_feedback_for_every_hostile_student_runs_no_script(runs):
    from course_grading.feedback import FEEDBACK_CSP

    api = open_api(runs["ours"].course, **{"ManualGradesFirst.allow_pending": True})
    result = api.generate_feedback("checkpoint")
    feedback = runs["ours"].course / "feedback"
    for attack in ATTACKS:
        page = (feedback / attack / "checkpoint" / "checkpoint.html").read_text()
        assert f'content="{FEEDBACK_CSP}"' in page.split("<meta charset", 1)[0], attack
    assert result["success"] or "deep_json" in str(result.get("log", ""))
