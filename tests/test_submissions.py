"""Submissions made by code have the defect their kind names, and only that one."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from course_grading.mistakes import CORRECT_ANSWER, MISTAKES
from course_grading.submissions import KINDS, NOTEBOOK, fill_answers, make_submission
from course_grading.variants import SOURCE_PATH, quiz_facts

ROOT = Path(__file__).resolve().parents[1]
SOURCE = nbformat.read(ROOT / SOURCE_PATH, as_version=4)
VARIANT = quiz_facts(SOURCE)
# make_submission only touches answer cells (found by grade id), so the source serves here
RELEASED = nbformat.writes(SOURCE)


def _nb(kind: str) -> tuple[str, nbformat.NotebookNode]:
    files = make_submission(kind, RELEASED, VARIANT)
    assert len(files) == 1
    ((name, data),) = files.items()
    return name, nbformat.reads(data.decode(), as_version=4)


def _src(nb, grade_id):
    return next(
        c.source for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id
    )


def test_correct_and_mistakes_fill_the_answer_cells():
    _, nb = _nb("correct")
    assert _src(nb, "weights_without_self") == CORRECT_ANSWER
    assert _src(nb, "mc_read_table") == (
        f'answer_read_table = "{VARIANT.mc_answer("read_table")}"')
    for mistake, source in MISTAKES.items():
        assert _src(_nb(f"mistake_{mistake}")[1], "weights_without_self") == source


def test_each_kind_has_its_defect():
    assert _nb("renamed")[0] != NOTEBOOK
    assert _nb("other_kernelspec")[1].metadata.kernelspec.name == "ir"
    ids = {
        c.metadata.get("nbgrader", {}).get("grade_id") for c in _nb("deleted_test_cells")[1].cells
    }
    assert "test_missing_scale" not in ids and "test_weights_visible" not in ids
    edited = _nb("edited_tests")[1]
    assert "always passes" in _src(edited, "test_missing_scale")
    assert "while True" in _src(_nb("infinite_loop")[1], "shifted_key")
    assert "RuntimeError" in _src(_nb("raises")[1], "weights_without_self")
    assert "In" in _src(_nb("peeks_at_hidden_tests")[1], "mc_duplicate_key")
    assert "from course_lib" in _src(_nb("uses_course_lib")[1], "weights_without_self")
    assert make_submission("blank", RELEASED, VARIANT) == {NOTEBOOK: RELEASED.encode()}
    data = make_submission("corrupt_json", RELEASED, VARIANT)[NOTEBOOK]
    with pytest.raises(json.JSONDecodeError):
        json.loads(data)


def test_bad_requests_are_refused_clearly():
    with pytest.raises(ValueError, match="unknown submission kind 'typo'"):
        make_submission("typo", RELEASED, VARIANT)
    with pytest.raises(KeyError, match="no answer cell with grade id nope"):
        fill_answers(nbformat.reads(RELEASED, as_version=4), {"nope": "x = 1"})
    assert len(KINDS) == 18


def test_the_copier_lifts_every_answer_from_a_lesson_or_the_self_study():
    """The "copies from the lessons" submission (issue 30) is what it says: its function's
    body is lesson 12's solution, its letters and written answer the self-study's."""
    from course_grading.submissions import LIFTED_WEIGHTS, lifted_answers
    from course_lib.quiz import load_questions

    lesson = nbformat.read(ROOT / "notebooks" / "16_checkpoint_self_study.ipynb", as_version=4)
    solution = next(c.source for c in lesson.cells if "Stuck? Show one solution" in c.source)
    for line in LIFTED_WEIGHTS.splitlines()[1:]:
        assert line.strip() in solution, line
    answers = lifted_answers()
    bank = {q.id: q for q in load_questions()}
    for grade_id, qid in (("mc_read_table", "why_scale"), ("mc_duplicate_key", "causal_mask")):
        letter = answers[grade_id].split('"')[1]
        assert bank[qid].check(letter).correct
    assert answers["written_shift_or_scale"] in {
        q.check(letter).text for q in bank.values() for letter in q.letters}
    _, nb = _nb("copies_lessons")
    assert _src(nb, "weights_without_self") == LIFTED_WEIGHTS
