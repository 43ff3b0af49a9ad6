"""A private variant, made by the command as typed, grades a correct answer full marks.

And the answers published with this repository (the default variant's) do not. The
variant goes where git does not see it (issue 33, item 8): the repository's tracked quiz
source is untouched, and nbgrader uses the variant all the same.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest

from course_grading.check_calls import setup_values
from course_grading.pipeline import (
    ASSIGNMENT,
    grades,
    open_api,
    place_submission,
)
from course_grading.submissions import (
    answers_for,
    fill_answers,
    know_nothing_answers,
    lifted_answers,
)
from course_grading.variants import quiz_facts
from course_quiz.checkpoint_spec import CHECKPOINT

pytestmark = pytest.mark.slow

# a seed whose two right letters differ from the public ones and from the self-study's
SEED = "section D"
ROOT = Path(__file__).resolve().parents[2]
QUIZ = ROOT / "quiz"


def _git(repo: Path, *args: str) -> str:
    run = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                         timeout=60, check=True)
    return run.stdout


def _repository_copy(dest: Path) -> Path:
    """A git repository holding this checkout's .gitignore and quiz/ (as in the working tree)."""
    dest.mkdir()
    files = ["quiz/nbgrader_config.py", "quiz/.gitignore",
             "quiz/source/checkpoint/checkpoint.ipynb", ".gitignore"]
    for name in files:
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        (dest / name).write_bytes((ROOT / name).read_bytes())
    _git(dest, "init", "-q")
    _git(dest, "add", *files)
    _git(dest, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "course")
    return dest


def _variants(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "course_grading.variants", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def test_a_private_variant_grades_right_answers_full_and_public_answers_not(tmp_path):
    repo = _repository_copy(tmp_path / "repo")
    course = repo / "quiz"
    run = _variants(repo, "--seed", SEED, "--per-class")  # from the repository's root
    assert run.returncode == 0, run.stderr
    assert _git(repo, "status", "--porcelain") == ""  # nothing tracked changed, nothing new
    written = run.stdout.split()[1]
    assert (repo / written).is_file()
    assert _git(repo, "check-ignore", written).strip() == written
    source = course / "source" / "checkpoint" / "checkpoint.ipynb"
    assert source.read_bytes() == (QUIZ / "source" / "checkpoint" / "checkpoint.ipynb"
                                   ).read_bytes()
    variant = quiz_facts(nbformat.read(repo / written, as_version=4))
    public = quiz_facts(nbformat.read(QUIZ / "source" / "checkpoint" / "checkpoint.ipynb", 4))
    assert variant.mc_answer("read_table") != public.mc_answer("read_table")
    assert variant.mc_answer("duplicate_key") != public.mc_answer("duplicate_key")

    api = open_api(course)
    result = api.generate_assignment(ASSIGNMENT)
    assert result["success"], result.get("error")
    released = nbformat.read(course / "release" / ASSIGNMENT / "checkpoint.ipynb", as_version=4)
    setup = next(c.source for c in released.cells if c.get("id") == "setup")
    assert setup_values(setup)["Q"].value == variant.Q.tolist()  # the variant's numbers
    assert not np.array_equal(variant.Q, public.Q)

    right = fill_answers(released, answers_for(variant))
    copied = answers_for(public)  # the public solution, with the derived row as numbers
    copied["shifted_key"] = (
        f"shift_factors = {np.round(public.shift_factors, 4).tolist()}\n"
        f"shifted_weights = np.array({np.round(public.shifted_row, 3).tolist()})")
    students = {"right": right, "copied": fill_answers(released, copied),
                "lessons": fill_answers(released, lifted_answers()), "blank": released,
                "knows_nothing": fill_answers(released, know_nothing_answers())}
    for student, nb in students.items():
        place_submission(course, student, {"checkpoint.ipynb": nbformat.writes(nb).encode()})
    result = api.autograde(ASSIGNMENT, "*")
    assert result["success"], result.get("error")

    written = "written_shift_or_scale"
    full = {g: float(p) for g, p in CHECKPOINT.grade_ids.items() if g != written}
    assert grades(course, "right") == {**full, written: 0.0}
    lost = {"test_shift_factors", "test_shifted_key", "test_mc_read_table",
            "test_mc_duplicate_key"}
    assert grades(course, "copied") == {**full, **dict.fromkeys(lost, 0.0), written: 0.0}
    # issue 30: copying the lessons earns no more than knowing nothing, in a private variant
    assert sum(grades(course, "lessons").values()) <= sum(grades(course, "blank").values())
    # issue 42: answers that never read the inputs earn nothing in a private variant either
    assert sum(grades(course, "knows_nothing").values()) == 0


def test_writing_a_variant_into_a_tracked_file_needs_a_flag(tmp_path):
    """The tracked public source is rewritten only when the instructor says so."""
    repo = _repository_copy(tmp_path / "repo")
    tracked = "quiz/source/checkpoint/checkpoint.ipynb"
    before = (repo / tracked).read_bytes()
    run = _variants(repo, "--seed", SEED, "--out", tracked)
    assert run.returncode == 2
    assert tracked in run.stderr and "--overwrite-tracked" in run.stderr
    assert (repo / tracked).read_bytes() == before
    run = _variants(repo, "--seed", SEED, "--out", tracked, "--overwrite-tracked")
    assert run.returncode == 0, run.stderr
    assert _git(repo, "status", "--porcelain").split() == ["M", tracked]
