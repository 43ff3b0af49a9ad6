"""The instructor chooses the parts the checkpoint covers (issue 41), and every reader agrees.

For each choice a class can make ({1}, {1,2}, {1,3}, {1,2,3}; part 1 always), a course made
with ``python -m course_grading.variants --parts`` and per-student numbers releases the
chosen parts' questions only, and nbgrader's autograde (``NbGraderAPI``, in this process)
and the course's engine (``course_grading.parallel``) give the same grades: every point of
the choice to a correct submission, none to a blank one. The grade table and the report
read the same recorded choice (``secret_source/variant_parts``), never the notebook's, and
refuse a gradebook generated for another.
"""

from __future__ import annotations

import nbformat
import pytest
from per_student import graded_by_both

from course_grading import variants
from course_grading.gradetable import build_grade_table
from course_grading.pipeline import ASSIGNMENT, grades, open_api
from course_grading.report import write_report
from course_grading.submissions import made_up_submission
from course_quiz.checkpoint_spec import CHECKPOINT

pytestmark = pytest.mark.slow

SECRET = "section P"
NOTEBOOK = "checkpoint.ipynb"
WRITTEN = "written_shift_or_scale"
#: choice -> (the questions its class answers, its points)
CHOICES = {
    "1": ({"weights_without_self", "shifted_key", "mc_read_table", "mc_duplicate_key",
           WRITTEN}, 13),
    "1,2": ({"weights_without_self", "shifted_key", "mc_read_table", "mc_duplicate_key",
             WRITTEN, "multihead_sizes"}, 15),
    "1,3": ({"weights_without_self", "shifted_key", "mc_read_table", "mc_duplicate_key",
             WRITTEN, "online_state"}, 15),
    "1,2,3": ({"weights_without_self", "shifted_key", "mc_read_table", "mc_duplicate_key",
               WRITTEN, "multihead_sizes", "online_state"}, 17),
}


@pytest.fixture(scope="module", params=list(CHOICES))
def graded(request, tmp_path_factory):
    parts = request.param
    run = graded_by_both(tmp_path_factory.mktemp("parts"), SECRET, lambda course: {
        "alice": made_up_submission(course, "correct", "alice"),
        "carol": made_up_submission(course, "blank", "carol"),
    }, parts=parts)
    return {"parts": parts, **run}


def test_the_release_and_the_gradebook_have_the_chosen_parts_questions_only(graded):
    questions, points = CHOICES[graded["parts"]]
    spec = CHECKPOINT.for_parts(graded["parts"])
    assert {q.id for q in spec.questions} == questions
    course = graded["nbgrader"]
    released = nbformat.read(course / "release" / ASSIGNMENT / NOTEBOOK, as_version=4)
    ids = {c.metadata["nbgrader"]["grade_id"] for c in released.cells
           if "grade_id" in c.metadata.get("nbgrader", {})}
    assert ids == {"setup", *questions, *spec.autograded}
    with open_api(course).gradebook as gb:
        nb = gb.find_notebook("checkpoint", ASSIGNMENT)
        assert sum(c.max_score for c in nb.grade_cells) == points
        assert {c.name for c in nb.grade_cells} == set(spec.grade_ids)


@pytest.mark.parametrize("run", ["nbgrader", "engine"])
def test_both_graders_give_a_correct_submission_every_point_of_the_choice(graded, run):
    spec = CHECKPOINT.for_parts(graded["parts"])
    assert grades(graded[run], "alice") == {**{g: float(p) for g, p in
                                               spec.autograded.items()}, WRITTEN: 0.0}
    assert grades(graded["nbgrader"], "alice") == grades(graded["engine"], "alice")


@pytest.mark.parametrize("run", ["nbgrader", "engine"])
def test_both_graders_give_a_blank_submission_nothing(graded, run):
    got = grades(graded[run], "carol")
    assert set(got) == set(CHECKPOINT.for_parts(graded["parts"]).grade_ids)
    assert sum(got.values()) == 0
    assert got == grades(graded["nbgrader" if run == "engine" else "engine"], "carol")


def test_the_grade_table_and_the_report_read_the_recorded_choice(graded, tmp_path):
    questions, points = CHOICES[graded["parts"]]
    chosen = tuple(int(p) for p in graded["parts"].split(","))
    table = build_grade_table(graded["engine"], ASSIGNMENT)
    assert table.parts == chosen
    assert set(table.questions) == questions
    assert f"total (/{points})" in table.header
    report = write_report(graded["engine"], tmp_path / "report")
    text = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    covered = "; ".join(f"{p}, {variants.PARTS[p]}" for p in chosen)
    assert f"covers part{'s' * (len(chosen) > 1)} {covered} of the course: " \
           f"{len(questions)} questions, {points} points." in text
    assert report.table.parts == chosen


def test_a_gradebook_made_for_another_choice_is_refused(graded):
    """The recorded choice changed after the assignment was generated (an instructor who
    ran variants --parts again and forgot generate_assignment): the table refuses to total
    questions of a part the class does not cover, and names the cells and the fix."""
    if "3" not in graded["parts"]:
        pytest.skip("a class without part 3 has no left-out part's cell to find")
    course = graded["engine"]
    record = course / "secret_source" / variants.PARTS_FILE
    before = record.read_text()
    record.write_text("1,2\n" if "2" in graded["parts"] else "1\n")  # part 3 left out
    try:
        with pytest.raises(ValueError, match=r"has online_state, test_online_state, of parts "
                                             r"the class's checkpoint does not cover .* "
                                             r"generate_assignment checkpoint --force"):
            build_grade_table(course, ASSIGNMENT)
    finally:
        record.write_text(before)
