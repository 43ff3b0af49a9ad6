"""What students receive: no solution, hidden test or answer; `nbgrader validate` works."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import nbformat
import pytest

from course_grading.feedback import hidden_lines
from course_grading.mistakes import CORRECT_ANSWER
from course_grading.pipeline import tool_path
from course_grading.submissions import make_submission
from course_grading.variants import HIDDEN_WEIGHT_CHECKS as HIDDEN_TEST_IDS

pytestmark = pytest.mark.slow


def secrets(course) -> list[str]:
    nb = nbformat.read(course / "source" / "checkpoint" / "checkpoint.ipynb", as_version=4)
    found = hidden_lines(nb)
    assert len(found) >= 12
    return [*found, "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"]


def _solution_lines(source_nb) -> list[str]:
    lines, inside = [], False
    for cell in source_nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "markdown" and meta.get("solution"):
            lines += [ln.strip() for ln in cell.source.splitlines() if len(ln.strip()) >= 12]
            continue
        for line in cell.source.splitlines():
            if "BEGIN SOLUTION" in line:
                inside = True
            elif "END SOLUTION" in line:
                inside = False
            elif inside and len(line.strip()) >= 12:
                lines.append(line.strip())
    return lines


def test_the_release_holds_no_solution_hidden_test_or_answer(graded_course):
    course = graded_course.course
    source = nbformat.read(course / "source" / "checkpoint" / "checkpoint.ipynb", as_version=4)
    released = graded_course.released_text
    solutions = _solution_lines(source)
    # the written cell is searched too (the public one says where the model answer is)
    assert any("keepdims" in s for s in solutions) and any("model answer" in s for s in solutions)
    needles = [
        *solutions,
        *secrets(course),
        "BEGIN SOLUTION",
        "END SOLUTION",
        *(
            f'answer_{q} = "{graded_course.variant.mc_answer(q)}"'
            for q in ("read_table", "duplicate_key")
        ),
        *(f'right="{graded_course.variant.mc_answer(q)}"'
          for q in ("read_table", "duplicate_key")),
    ]
    found = [n for n in needles if n in released]
    assert found == []
    # the hidden tests' names: nbgrader needs them as cell ids (grade_id), and nowhere else
    nb = json.loads(released)
    text_outside_ids = json.dumps([(c["source"], c.get("outputs", [])) for c in nb["cells"]])
    for test_id in HIDDEN_TEST_IDS:
        assert test_id not in text_outside_ids
        assert test_id.removeprefix("test_") not in text_outside_ids
    assert all(not c.get("outputs") for c in nb["cells"])


def test_the_leak_check_finds_a_solution_when_there_is_one(graded_course):
    """The control: the same search run on the source finds what it looks for."""
    path = graded_course.course / "source" / "checkpoint" / "checkpoint.ipynb"
    source = nbformat.read(path, as_version=4)
    source_text = "\n".join(c.source for c in source.cells)
    assert all(s in source_text for s in secrets(graded_course.course))
    assert all(s in source_text for s in _solution_lines(source))


def _validator(course):
    from nbgrader.validator import Validator
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    return Validator(config=config)


@pytest.mark.parametrize(
    ("kind", "failing"),
    [
        ("correct", set()),
        ("mistake_naive_exp_overflow", set()),  # only a hidden test catches it
        # the visible checks look at the form only (issue 41): a missing scale keeps it,
        # a softmax down the columns does not (its rows do not sum to 1)
        ("mistake_missing_scale", set()),
        ("mistake_wrong_axis", {"test_weights_visible"}),
        (
            "blank",
            {
                "test_weights_visible",
                "test_shift_factors",
                "test_shifted_key",
                "test_mc_read_table",
                "test_mc_duplicate_key",
                "test_multihead_sizes",
                "test_online_state",
                "written_shift_or_scale",  # validate flags an unanswered written answer too
            },
        ),
    ],
)
def test_validate_runs_the_visible_tests_of_the_student_notebook(
    graded_course, tmp_path, kind, failing
):
    os.environ["PATH"] = tool_path()
    files = make_submission(kind, graded_course.released_text, graded_course.variant)
    path = tmp_path / "checkpoint.ipynb"
    path.write_bytes(files["checkpoint.ipynb"])
    results = _validator(graded_course.course).validate(str(path))
    assert set(results) <= {"failed"}, results
    released = nbformat.reads(graded_course.released_text, as_version=4)
    by_source = {
        c.source.strip(): c.metadata["nbgrader"]["grade_id"]
        for c in released.cells
        if "nbgrader" in c.metadata
    }
    got = {by_source[f["source"]] for f in results.get("failed", [])}
    assert got == failing


def test_nbgrader_validate_command_on_the_student_notebook(graded_course, tmp_path):
    files = make_submission("correct", graded_course.released_text, graded_course.variant)
    good = tmp_path / "checkpoint.ipynb"
    good.write_bytes(files["checkpoint.ipynb"])
    bad = tmp_path / "blank" / "checkpoint.ipynb"
    bad.parent.mkdir()
    bad.write_text(graded_course.released_text)
    env = dict(os.environ, PATH=tool_path())
    nbgrader = [sys.executable, "-m", "nbgrader", "validate"]
    ok = subprocess.run(
        [*nbgrader, str(good)],
        cwd=graded_course.course,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "Success! Your notebook passes all the tests." in ok.stdout, ok.stdout + ok.stderr
    failed = subprocess.run(
        [*nbgrader, str(bad)],
        cwd=graded_course.course,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "VALIDATION FAILED" in failed.stdout, failed.stdout + failed.stderr
    assert "NotImplementedError" in failed.stdout
    assert CORRECT_ANSWER.splitlines()[4].strip() not in failed.stdout


def test_validate_names_the_mistake_as_the_feedback_does_and_shows_no_check_code(
        graded_course, tmp_path):
    """nbgrader's Validate (what the toolbar button runs) on a notebook with one mistake."""
    from course_quiz.checkpoint_spec import CHECKPOINT

    os.environ["PATH"] = tool_path()
    files = make_submission("mistake_wrong_axis", graded_course.released_text,
                            graded_course.variant)
    path = tmp_path / "checkpoint.ipynb"
    path.write_bytes(files["checkpoint.ipynb"])
    [failed] = _validator(graded_course.course).validate(str(path))["failed"]
    hint = CHECKPOINT.mistake("wrong_axis").hint
    assert failed["raw_error"] == f"CheckFailed: {hint[0].upper()}{hint[1:]}."
    for code in ("Traceback", "def ", "judge", "answer_as_data", "site-packages"):
        assert code not in failed["raw_error"]
    # what Validate shows of the cell: its three visible lines, nothing hidden
    assert failed["source"].count("\n") <= 3 and "HIDDEN" not in failed["source"]
