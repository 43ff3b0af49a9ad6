"""What formgrader shows beside a written answer: the rubric and the student's own numbers.

The handler itself, over HTTP and in Chromium, is tested in
tests/browser/test_formgrader_written_guide.py.
"""

from __future__ import annotations

import re
from pathlib import Path

import jinja2
import nbformat
import pytest

from course_grading import personal, variants
from course_grading.formgrader_csp import ScriptFreeLoader, _nbgrader_templates
from course_grading.pipeline import copy_course
from course_grading.written_guide import GuideError, written_guide

QUIZ = Path(__file__).resolve().parents[1] / "quiz"
SECRET = "section C"
MY_WRITTEN = """She is not right: the maximum only shifts the scores.

- 1 point: a shift leaves the weights unchanged
- 1 point: a scale changes them, read off the table
- 1 point: train with and without it and compare
"""


def _course(tmp_path: Path, written: str | None, per_class: bool = False) -> Path:
    course = copy_course(QUIZ, tmp_path / "quiz")
    args = ["--seed", SECRET, "--template", str(course / "source/checkpoint/checkpoint.ipynb")]
    if written is not None:
        (tmp_path / "w.md").write_text(written)
        args += ["--written", str(tmp_path / "w.md")]
    assert variants.main(args + (["--per-class"] if per_class else [])) == 0
    return course


def _source(course: Path) -> Path:
    return course / "secret_source" / "checkpoint" / "checkpoint.ipynb"


def _own_question(course: Path, student: str) -> str:
    """Question 3 as ``student``'s own notebook shows it (personal.personal_notebook)."""
    mine = personal.personal_notebook(nbformat.read(_source(course), as_version=4), SECRET,
                                      student)
    cells = mine.cells
    at = next(i for i, c in enumerate(cells)
              if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "mc_read_table")
    return next(c.source for c in reversed(cells[:at]) if c.cell_type == "markdown")


def _own_table(course: Path, student: str) -> list[list[str]]:
    return [[cell.strip() for cell in line.strip("| ").split("|")]
            for line in _own_question(course, student).splitlines()
            if re.match(r"^\| \d+ \|", line)]


def test_each_student_gets_their_own_table_and_the_instructors_rubric(tmp_path, capsys):
    course = _course(tmp_path, MY_WRITTEN)
    guides = {s: written_guide(course, _source(course), s) for s in ("alice", "bob")}
    for student, guide in guides.items():
        assert guide["per_student"] is True and guide["student"] == student
        assert guide["table"]["rows"] == _own_table(course, student)
        assert guide["table"]["header"] == ["d_k", "X", "Y"]
        assert guide["table"]["title"] == "Question 3"
        v = personal.personal_variant(SECRET, student)
        assert guide["variant"] == v.seed_id
        assert guide["table"]["scaled_column"] == ("Y" if v.unscaled_first else "X")
        question = " ".join(_own_question(course, student).split())
        rows_of_keys, size = guide["table"]["measured"].split(", ")
        assert rows_of_keys in question and size in question, (guide["table"], question)
        assert guide["rubric"] == [
            {"points": 1, "criterion": "a shift leaves the weights unchanged"},
            {"points": 1, "criterion": "a scale changes them, read off the table"},
            {"points": 1, "criterion": "train with and without it and compare"}]
        assert guide["model_answer"] == "She is not right: the maximum only shifts the scores."
        assert guide["rubric_missing"] is None
    assert guides["alice"]["table"]["rows"] != guides["bob"]["table"]["rows"]


def test_no_rubric_yet_says_how_to_add_one_in_the_private_source(tmp_path, capsys):
    course = _course(tmp_path, None)
    guide = written_guide(course, _source(course), "alice")
    assert guide["rubric"] == [] and guide["model_answer"] == ""
    assert guide["table"]["rows"] == _own_table(course, "alice")  # the numbers are still there
    message = guide["rubric_missing"]
    assert message.startswith("No rubric for written_shift_or_scale in ")
    assert "--written FILE" in message and "'- N point(s): what earns them'" in message
    assert f"written answer's cell of {_source(course)}" in message


def test_the_public_source_is_never_where_a_rubric_goes(tmp_path):
    """Without a variant, formgrader's source is the public notebook, which git tracks: the
    message sends the instructor to --written (secret_source/), not into that file."""
    course = copy_course(QUIZ, tmp_path / "quiz")
    public = course / "source" / "checkpoint" / "checkpoint.ipynb"
    guide = written_guide(course, public, "alice")
    assert guide["per_student"] is False and guide["variant"] == "public"
    assert guide["table"]["scaled_column"] is None
    assert "--written FILE" in guide["rubric_missing"]
    assert "cell of" not in guide["rubric_missing"]


def test_one_variant_for_the_class_shows_the_class_table(tmp_path):
    course = _course(tmp_path, MY_WRITTEN, per_class=True)
    a, b = (written_guide(course, _source(course), s) for s in ("alice", "bob"))
    assert a["per_student"] is False and a["table"] == b["table"]
    assert a["variant"] == variants.make_variant(SECRET).seed_id
    assert len(a["rubric"]) == 3


def test_an_unreadable_source_is_named(tmp_path):
    with pytest.raises(GuideError, match=r"source notebook .*missing\.ipynb could not be read"):
        written_guide(tmp_path, tmp_path / "missing.ipynb", "alice")


def test_the_manual_grading_page_loads_the_guide_from_a_file():
    """formgrade_macros.html.j2 (every Manual Grading page) gets written_guide.js right
    after the script that sets submission_id, and still no inline script."""
    loader = ScriptFreeLoader(_nbgrader_templates())
    text, _, _ = loader.get_source(jinja2.Environment(), "formgrade_macros.html.j2")
    vars_at = text.index("formgrader_vars.js")
    guide_at = text.index('/course-grading/static/written_guide.js" '
                          'data-question="written_shift_or_scale"></script>')
    assert vars_at < guide_at
    other, _, _ = loader.get_source(jinja2.Environment(), "manage_assignments.tpl")
    assert "written_guide.js" not in other
