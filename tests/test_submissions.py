"""Submissions made by code have the defect their kind names, and only that one."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import nbformat
import pytest

from course_grading.mistakes import CORRECT_ANSWER, MISTAKES
from course_grading.submissions import (
    KINDS,
    NOTEBOOK,
    answers_for,
    fill_answers,
    make_submission,
)
from course_grading.variants import SOURCE_PATH, quiz_facts

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import lesson_index  # noqa: E402  (scripts/lesson_index.py: the notebooks, by their metadata)

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
    assert len(KINDS) == 19


def test_the_copier_lifts_every_answer_from_a_lesson_or_the_self_study():
    """The "copies from the lessons" submission (issue 30) is what it says: its function's
    body is lesson 12's solution, its letters and written answer the self-study's."""
    from course_grading.submissions import LIFTED_WEIGHTS, lifted_answers
    from course_quiz.self_study import load_questions

    self_study = lesson_index.the_one(ROOT / "notebooks", kind=lesson_index.CHECKPOINT)
    lesson = nbformat.read(self_study.path, as_version=4)
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


# python -m course_grading.submissions: made-up students for a trial run (docs/instructors.md)

def _released_course(tmp_path: Path, source_dir: str = "source") -> Path:
    """A copy of quiz/ whose release is the source (as above), without running nbgrader."""
    from course_grading.pipeline import copy_course

    course = copy_course(ROOT / "quiz", tmp_path / "quiz")
    release = course / "release" / "checkpoint"
    release.mkdir(parents=True)
    source = course / source_dir / "checkpoint" / NOTEBOOK
    (release / NOTEBOOK).write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    return course


def test_the_command_places_each_students_kind(tmp_path, capsys):
    from course_grading.submissions import main

    course = _released_course(tmp_path)
    released = (course / "release" / "checkpoint" / NOTEBOOK).read_text(encoding="utf-8")
    assert main(["--course-dir", str(course), "alice=correct", "bob=mistake_wrong_axis",
                 "dave=renamed"]) == 0
    for student, kind in [("alice", "correct"), ("bob", "mistake_wrong_axis"),
                          ("dave", "renamed")]:
        folder = course / "submitted" / student / "checkpoint"
        expected = make_submission(kind, released, VARIANT)
        assert {p.name: p.read_bytes() for p in folder.iterdir()} == expected
    out = capsys.readouterr().out
    assert "bob/checkpoint/checkpoint.ipynb: mistake_wrong_axis" in out


def test_the_command_reads_the_source_the_course_config_names(tmp_path):
    """A variant's right letters, when nbgrader_config.py makes its folder the source."""
    from course_grading.submissions import main
    from course_grading.variants import fill, make_variant

    course = _released_course(tmp_path)
    variant = fill(SOURCE, make_variant("a secret of the test"))
    secret = course / "secret_source" / "checkpoint" / NOTEBOOK
    secret.parent.mkdir(parents=True)
    secret.write_text(nbformat.writes(variant), encoding="utf-8")
    with (course / "nbgrader_config.py").open("a", encoding="utf-8") as config:
        config.write('\nc.CourseDirectory.source_directory = "secret_source"\n')
    answers = answers_for(quiz_facts(variant))
    # else the test could not tell the two sources apart
    assert answers != answers_for(VARIANT)
    assert main(["--course-dir", str(course), "alice=correct"]) == 0
    nb = nbformat.read(course / "submitted" / "alice" / "checkpoint" / NOTEBOOK, as_version=4)
    assert {grade_id: _src(nb, grade_id) for grade_id in answers} == answers


def test_the_command_leaves_a_real_submission_alone(tmp_path, capsys):
    from course_grading.submissions import main

    course = _released_course(tmp_path)
    mine = course / "submitted" / "ada" / "checkpoint" / NOTEBOOK
    mine.parent.mkdir(parents=True)
    mine.write_text("ada's own work")
    assert main(["--course-dir", str(course), "ada=blank"]) == 2
    assert "already submitted: ada (--force replaces them)" in capsys.readouterr().err
    assert mine.read_text() == "ada's own work"
    assert main(["--course-dir", str(course), "--force", "ada=blank"]) == 0
    assert mine.read_text() != "ada's own work"


@pytest.mark.parametrize(("args", "says"), [
    (["../eve=correct"], "student id '../eve' must be a plain name"),
    (["eve=perfect"], "unknown submission kind 'perfect' for eve: expected one of correct"),
    # hostile ids: none may name another folder, and none is written when one is refused
    (["alice=correct", "a/../../eve=correct"], "student id 'a/../../eve' must be a plain"),
    (["alice=correct", ".eve=correct"], "student id '.eve' must be a plain name"),
    (["alice=correct", "/tmp/eve=correct"], "student id '/tmp/eve' must be a plain name"),
    (["alice=correct", "eve\n=correct"], "student id 'eve\\n' must be a plain name"),
    (["alice=correct", "eve\x1b[2J=correct"], "student id 'eve\\x1b[2J' must be a plain"),
    (["alice=correct", "~eve=correct"], "student id '~eve' must be a plain name"),
])
def test_the_command_refuses_bad_input_by_name(tmp_path, capsys, args, says):
    from course_grading.submissions import main

    course = _released_course(tmp_path)
    assert main(["--course-dir", str(course), *args]) == 2
    assert says in capsys.readouterr().err
    assert not (course / "submitted").exists() and not (tmp_path / "eve").exists()


def test_the_command_asks_for_the_release_first(tmp_path, capsys):
    from course_grading.pipeline import copy_course
    from course_grading.submissions import main

    course = copy_course(ROOT / "quiz", tmp_path / "quiz")
    assert main(["--course-dir", str(course), "alice=correct"]) == 2
    assert "release the assignment first (nbgrader generate_assignment checkpoint" in (
        capsys.readouterr().err)


def test_made_up_submission_names_what_it_expected(tmp_path):
    from course_grading.pipeline import copy_course
    from course_grading.submissions import made_up_submission

    with pytest.raises(ValueError, match=r"no nbgrader_config\.py"):
        made_up_submission(tmp_path, "correct")
    course = copy_course(ROOT / "quiz", tmp_path / "quiz")
    with pytest.raises(ValueError, match="release the assignment first"):
        made_up_submission(course, "correct")
    course = _released_course(tmp_path / "released")
    with pytest.raises(ValueError, match="unknown submission kind 'corect'"):
        made_up_submission(course, "corect")
    assert set(made_up_submission(course, "correct")) == {"checkpoint.ipynb"}
