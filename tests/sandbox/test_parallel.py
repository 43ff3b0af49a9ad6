"""The parallel engine grades exactly like serial ``nbgrader autograde``; no sandbox, no run.

The equality test grades the real checkpoint quiz (quiz/) with one submission of every kind
that the quiz's own pipeline test uses (correct, each mistake, blank, raises, corrupt,
renamed, other kernelspec, ...): once with the plain ``nbgrader autograde checkpoint`` command, once
with ``python -m course_grading.parallel``, each in its own copy of the course.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import nbformat
import pytest
from course import ASSIGNMENT as PS1
from course import make_course, nbgrader, scores, submit

from course_grading.mistakes import MISTAKES
from course_grading.pipeline import ASSIGNMENT, copy_course, open_api, place_submission
from course_grading.sandbox import ALLOW_ENV
from course_grading.submissions import KINDS, answers_for, fill_answers, make_submission
from course_grading.variants import quiz_facts

QUIZ = Path(__file__).resolve().parents[2] / "quiz"
# Every kind but the two slow ones (timeouts are covered by test_hostile.py's "sleep").
EQUAL_KINDS = [k for k in KINDS if k not in ("infinite_loop", "prints_megabytes")]


def _all_scores(course: Path) -> dict[str, dict[str, float | None]]:
    from nbgrader.api import Gradebook, MissingEntry

    out: dict[str, dict[str, float | None]] = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for student in gb.students:
            try:
                nb = gb.find_submission_notebook(ASSIGNMENT, "checkpoint", student.id)
            except MissingEntry:
                continue
            out[student.id] = {g.name: g.auto_score for g in nb.grades}
    return out


@pytest.fixture(scope="module")
def two_courses(bwrap_ok: None, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two identical copies of the quiz with every kind of submission, not yet graded."""
    base = tmp_path_factory.mktemp("equal")
    first = copy_course(QUIZ, base / "serial")
    result = open_api(first).generate_assignment(ASSIGNMENT)
    assert result["success"], result.get("log")
    released = (first / "release" / ASSIGNMENT / "checkpoint.ipynb").read_text()
    variant = quiz_facts(nbformat.read(first / "source" / ASSIGNMENT / "checkpoint.ipynb", 4))
    for kind in EQUAL_KINDS:
        place_submission(first, kind, make_submission(kind, released, variant))
    # The missing-scale mistake, plus numpy's comparison monkeypatched to always agree.
    attack = MISTAKES["missing_scale"] + "\nnp.allclose = lambda *a, **k: True\n"
    nb = fill_answers(nbformat.reads(released, as_version=4), answers_for(variant, attack))
    place_submission(first, "monkeypatch", {"checkpoint.ipynb": nbformat.writes(nb).encode()})
    second = base / "parallel"
    shutil.copytree(first, second)
    return first, second


def test_parallel_scores_equal_serial_nbgrader_autograde(two_courses) -> None:
    serial, parallel = two_courses
    # side by side, each in its own copy: both mostly wait on sandboxed kernels starting
    with subprocess.Popen(
            [sys.executable, "-m", "course_grading.parallel", ASSIGNMENT, "--jobs", "2"],
            cwd=parallel, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as engine:
        try:
            nbgrader(serial, "autograde", ASSIGNMENT, check=False)  # some kinds fail on purpose
            stdout, stderr = engine.communicate(timeout=900)
        finally:
            engine.kill()  # nothing left running if the serial grading or the wait failed
    proc = subprocess.CompletedProcess(engine.args, engine.returncode, stdout, stderr)
    assert proc.returncode in (0, 1), proc.stderr
    want, got = _all_scores(serial), _all_scores(parallel)
    assert {"correct", "blank", "mistake_missing_scale"} <= set(want)
    assert got == want
    assert all(v is not None and v > 0 for k, v in want["correct"].items()
               if k.startswith("test_"))

    def autograded(student: str) -> float:
        return sum(v or 0.0 for k, v in got[student].items() if k.startswith("test_"))

    # issue 30, graded by the parallel engine: copying the lessons earns no more than blank
    assert autograded("copies_lessons") <= autograded("blank") == 0.0
    # The summary names every submission that nbgrader could not grade, with a reason.
    serial_failed = {s for s in EQUAL_KINDS if not (serial / "autograded" / s / ASSIGNMENT /
                                              "checkpoint.ipynb").exists()}
    parallel_failed = {line.split()[1].rstrip(":") for line in proc.stdout.splitlines()
                       if line.strip().startswith("FAILED")}
    assert parallel_failed == serial_failed
    n = len(EQUAL_KINDS) + 1
    assert f"{n - len(serial_failed)} of {n} submissions graded" in proc.stdout
    assert "[" in proc.stderr and "graded," in proc.stderr  # the progress bar


def test_quiz_hidden_tests_resist_monkeypatching(two_courses) -> None:
    serial, _ = two_courses
    if not (serial / "gradebook.db").exists() or "monkeypatch" not in _all_scores(serial):
        nbgrader(serial, "autograde", ASSIGNMENT, "--student", "monkeypatch", check=False)
    assert _all_scores(serial)["monkeypatch"]["test_missing_scale"] == 0.0


@pytest.fixture
def ps1(bwrap_ok: None, tmp_path: Path) -> Path:
    root = make_course(tmp_path / "course")
    submit(root, "honest")
    return root


def test_refuses_without_bubblewrap_and_says_how_to_install(ps1: Path) -> None:
    config = ps1 / "nbgrader_config.py"
    config.write_text(config.read_text()
                      + "c.SandboxProvisioner.bwrap_path = '/nonexistent/bwrap'\n")
    env = {k: v for k, v in os.environ.items() if k != ALLOW_ENV}
    proc = subprocess.run([sys.executable, "-m", "course_grading.parallel", PS1],
                          cwd=ps1, capture_output=True, text=True, timeout=300, env=env,
                          check=False)
    assert proc.returncode == 2
    assert "Refusing to run untrusted student code without a sandbox" in proc.stderr
    assert "apt-get install bubblewrap" in proc.stderr and ALLOW_ENV in proc.stderr
    # Plain `nbgrader autograde` refuses too: the kernel never starts, nothing is graded.
    cli = nbgrader(ps1, "autograde", PS1, check=False)
    assert cli.returncode != 0
    assert "Refusing to run untrusted student code" in cli.stdout + cli.stderr
    assert all(v is None for v in scores(ps1)["honest"].values())


def test_instructor_can_opt_out_explicitly(ps1: Path) -> None:
    config = ps1 / "nbgrader_config.py"
    config.write_text(config.read_text()
                      + "c.SandboxProvisioner.bwrap_path = '/nonexistent/bwrap'\n")
    proc = subprocess.run([sys.executable, "-m", "course_grading.parallel", PS1,
                           "--allow-unsandboxed", "--no-progress"],
                          cwd=ps1, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Grading WITHOUT a sandbox" in proc.stderr
    assert scores(ps1)["honest"] == {"test_squares": 1.0, "test_weights_hidden": 2.0,
                                     "test_weights_naive": 1.0}


# A preprocessor the test course adds to autograding, which ends the *grading worker*
# (not the sandboxed kernel) for some students: "crasher" every time, "crasher_once" the
# first time only (a marker file remembers it), "m_dbdown" with the error a gradebook whose
# database server is gone gives.
CRASHING_CONFIG = '''
import os as _os
from nbgrader.preprocessors import NbGraderPreprocessor as _Base


class EndsTheWorker(_Base):
    def preprocess(self, nb, resources):
        student = resources["nbgrader"]["student"]
        marker = _os.path.join(self.coursedir_root, "crashed-once")
        if student == "crasher":
            _os._exit(9)
        if student == "crasher_once" and not _os.path.exists(marker):
            open(marker, "w").close()
            _os._exit(9)
        if student == "m_dbdown":
            from sqlalchemy.exc import OperationalError
            raise OperationalError("SELECT 1", {}, Exception(
                'connection to server at "127.0.0.1", port 5432 failed: Connection refused'))
        return nb, resources


EndsTheWorker.coursedir_root = _os.path.dirname(_os.path.abspath(__file__))
c.Autograde.sanitize_preprocessors = [EndsTheWorker, *c.Autograde.get(
    "sanitize_preprocessors", [])] if c.Autograde.get("sanitize_preprocessors") else None
'''


def _with_crashing_config(root: Path) -> None:
    from nbgrader.converters.autograde import Autograde

    default = [f"nbgrader.preprocessors.{p.__name__}" for p in
               Autograde.class_traits()["sanitize_preprocessors"].default()]
    (root / "nbgrader_config.py").write_text(
        (root / "nbgrader_config.py").read_text() + CRASHING_CONFIG.replace(
            '''c.Autograde.sanitize_preprocessors = [EndsTheWorker, *c.Autograde.get(
    "sanitize_preprocessors", [])] if c.Autograde.get("sanitize_preprocessors") else None''',
            f"c.Autograde.sanitize_preprocessors = [EndsTheWorker, *{default!r}]"))


def test_a_dead_worker_is_replaced_and_its_submission_graded_again(ps1: Path) -> None:
    from course_grading.parallel import grade_all

    _with_crashing_config(ps1)
    for student in ("crasher", "crasher_once", "also_honest"):
        submit(ps1, student)
    summary = grade_all(ps1, PS1, jobs=2, progress=False)
    by = {r.student: r for r in summary.results}
    assert not by["crasher"].ok and "crashed while grading this submission, twice" in \
        by["crasher"].reason
    assert by["crasher_once"].ok  # graded in a fresh worker
    assert by["honest"].ok and by["also_honest"].ok
    assert summary.replaced_workers == 3  # crasher twice, crasher_once once
    full = {"test_squares": 1.0, "test_weights_hidden": 2.0, "test_weights_naive": 1.0}
    got = scores(ps1)
    assert got["honest"] == got["also_honest"] == got["crasher_once"] == full
    assert "crasher" not in got or all(v is None for v in got["crasher"].values())


def test_an_unreachable_gradebook_stops_grading_and_a_rerun_resumes(ps1: Path) -> None:
    _with_crashing_config(ps1)
    for student in ("m_dbdown", "zed"):
        submit(ps1, student)
    run = [sys.executable, "-m", "course_grading.parallel", PS1, "--jobs", "1",
           "--no-progress"]
    proc = subprocess.run(run, cwd=ps1, capture_output=True, text=True, timeout=600,
                          check=False)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "STOPPED: grading stopped: the gradebook (sqlite:///" in proc.stdout
    assert "cannot be reached" in proc.stdout
    assert "2 submission(s) not graded yet" in proc.stdout  # m_dbdown and zed
    graded_first = set(scores(ps1))
    assert "honest" in graded_first and "zed" not in graded_first  # stopped before "zed"
    # the database is back (here: the student who broke it is gone); the same command again
    import shutil

    shutil.rmtree(ps1 / "submitted" / "m_dbdown")
    proc = subprocess.run(run, cwd=ps1, capture_output=True, text=True, timeout=600,
                          check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 of them were autograded before and skipped" in proc.stdout  # "honest"
    assert scores(ps1)["zed"]["test_weights_hidden"] == 2.0


def test_a_gradebook_gone_after_grading_stops_with_a_message_not_a_crash(
        ps1: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The hub test stops PostgreSQL mid-run: reading the scores afterwards must not crash."""
    from sqlalchemy.exc import OperationalError

    from course_grading import parallel

    def gone(*_args: object) -> None:
        raise OperationalError("SELECT", {}, Exception("connection refused\nmore"))

    monkeypatch.setattr(parallel, "_scores", gone)
    assert parallel.main([PS1, "--course-dir", str(ps1), "--jobs", "1", "--no-progress"]) == 2
    out = capsys.readouterr().out
    assert "honest: None / None" in out
    assert ("STOPPED: grading finished, but the gradebook (sqlite:///" in out
            and "cannot be reached to read the scores" in out and "connection refused" in out)


def test_no_sandbox_fails_the_quiz_autograde_instead_of_scoring_zeros(tmp_path) -> None:
    """Checks decided outside the kernel: a kernel that never started judged nobody."""
    course = copy_course(QUIZ, tmp_path / "quiz")
    (course / "nbgrader_config.py").write_text(
        (course / "nbgrader_config.py").read_text()
        + "c.SandboxProvisioner.bwrap_path = '/nonexistent/bwrap'\n")
    api = open_api(course)
    assert api.generate_assignment(ASSIGNMENT)["success"]
    released = (course / "release" / ASSIGNMENT / "checkpoint.ipynb").read_text()
    facts = quiz_facts(nbformat.read(course / "source" / ASSIGNMENT / "checkpoint.ipynb", 4))
    place_submission(course, "honest", make_submission("correct", released, facts))
    env_allow = os.environ.pop(ALLOW_ENV, None)
    try:
        result = api.autograde(ASSIGNMENT, "honest")
    finally:
        if env_allow is not None:
            os.environ[ALLOW_ENV] = env_allow
    assert not result["success"]
    assert "Refusing to run untrusted student code" in result["log"]
    assert all(v is None for v in _all_scores(course).get("honest", {}).values())


def test_the_sandbox_works_with_a_python_under_tmp(tmp_path) -> None:
    """A checkout (and its .venv) under /tmp, as CI clones it: the scratch /tmp of the
    sandbox must not hide it."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    assert str(venv).startswith("/tmp/")
    repo = Path(__file__).resolve().parents[2]
    proc = subprocess.run(
        [str(venv / "bin" / "python"), "-c",
         "from course_grading.sandbox import sandbox_problem; print(sandbox_problem())"],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(
            [str(repo), sysconfig.get_paths()["purelib"]])}, capture_output=True, text=True,
        timeout=120, check=False)
    assert proc.stdout.strip() == "None", proc.stdout + proc.stderr
