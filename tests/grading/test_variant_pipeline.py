"""A private variant, made by the command, grades a correct answer full marks with nbgrader.

And the answers published with this repository (the default variant's) do not.
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
    copy_course,
    grades,
    open_api,
    place_submission,
)
from course_grading.submissions import answers_for, fill_answers, lifted_answers
from course_grading.variants import quiz_facts
from course_lib.checkpoint_spec import CHECKPOINT

pytestmark = pytest.mark.slow

# a seed whose two right letters differ from the public ones and from the self-study's
SEED = "section D"
ROOT = Path(__file__).resolve().parents[2]
QUIZ = ROOT / "quiz"


def test_a_private_variant_grades_right_answers_full_and_public_answers_not(tmp_path):
    course = copy_course(QUIZ, tmp_path / "quiz")
    source = course / "source" / "checkpoint" / "checkpoint.ipynb"
    run = subprocess.run(
        [sys.executable, "-m", "course_grading.variants", "--seed", SEED, "--out", str(source)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    variant = quiz_facts(nbformat.read(source, as_version=4))
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
        f"shifted_weights = np.array({np.round(public.shifted_row, 3).tolist()})")
    students = {"right": right, "copied": fill_answers(released, copied),
                "lessons": fill_answers(released, lifted_answers()), "blank": released}
    for student, nb in students.items():
        place_submission(course, student, {"checkpoint.ipynb": nbformat.writes(nb).encode()})
    result = api.autograde(ASSIGNMENT, "*")
    assert result["success"], result.get("error")

    written = "written_shift_or_scale"
    full = {g: float(p) for g, p in CHECKPOINT.grade_ids.items() if g != written}
    assert grades(course, "right") == {**full, written: 0.0}
    lost = {"test_shifted_key", "test_mc_read_table", "test_mc_duplicate_key"}
    assert grades(course, "copied") == {**full, **dict.fromkeys(lost, 0.0), written: 0.0}
    # issue 30: copying the lessons earns no more than knowing nothing, in a private variant
    assert sum(grades(course, "lessons").values()) <= sum(grades(course, "blank").values())
