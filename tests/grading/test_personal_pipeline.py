"""A class with per-student variants, graded for real by nbgrader autograde and the engine.

The course is the quiz with a per-student secret made by the command as typed. Each
student's submission is built on their own notebook (what the release gives them), and
graded against the numbers of the student whose folder it is in:

* alice and bob answer their own numbers right: every autograded point, each;
* carol hands in her notebook blank, dave answers without reading the inputs: 0;
* erin hands in alice's completed notebook: her letters are alice's (for this class,
  wrong for erin), her code runs on erin's own numbers;
* frank types alice's answers (her row, her letters, her online softmax's states) into his
  own notebook;
* grace edits her setup cell to alice's numbers and answers those;
* heidi answers each multiple-choice question with the option closest to the public
  notebook's right one.

frank, grace and heidi score what a blank notebook scores. For this class (secret
"section B") every copied letter happens to be wrong; tests/test_personal.py shows that in
general a copied letter is right as often as a guess. What does transfer is code: a
classmate's working function is right on anyone's numbers (erin's 11 of 14), which no
choice of numbers can prevent.
"""

from __future__ import annotations

import difflib

import nbformat
import numpy as np
import pytest
from per_student import graded_by_both

from course_grading import personal, variants
from course_grading.check_calls import setup_values
from course_grading.pipeline import ASSIGNMENT, grades
from course_grading.submissions import fill_answers, made_up_submission
from course_quiz.checkpoint_spec import CHECKPOINT

pytestmark = pytest.mark.slow

SECRET = "section B"
NOTEBOOK = "checkpoint.ipynb"
WRITTEN = "written_shift_or_scale"
AUTO = {g: float(p) for g, p in CHECKPOINT.autograded.items()}
CODE = {g for g in AUTO if CHECKPOINT.check(g).question in (
    "weights_without_self", "shifted_key", "online_state", "multihead_sizes")}
STUDENTS = ("alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi")


def _own(course, student: str) -> nbformat.NotebookNode:
    data = made_up_submission(course, "blank", student)[NOTEBOOK]
    return nbformat.reads(data.decode(), as_version=4)


def _closest_to_public(v: variants.Variant, question: str) -> str:
    public = variants.make_variant(variants.DEFAULT_SEED)
    right = variants.mc_options(public, question)[
        CHECKPOINT.letters.index(variants.mc_letters(public, question)[0])]
    options = variants.mc_options(v, question)
    best = max(range(len(options)),
               key=lambda i: difflib.SequenceMatcher(None, options[i], right).ratio())
    return CHECKPOINT.letters[best]


def _submissions(course) -> dict[str, bytes]:
    secret = personal.read_secret(personal.secret_path(course))
    alice = variants.facts_of(personal.personal_variant(secret, "alice"))
    typed = {"shifted_key": f"shift_factors = {np.round(alice.shift_factors, 4).tolist()}\n"
                            f"shifted_weights = np.array("
                            f"{np.round(alice.shifted_row, 3).tolist()})",
             "mc_read_table": f'answer_read_table = "{alice.mc_answer("read_table")}"',
             "mc_duplicate_key": f'answer_duplicate_key = "{alice.mc_answer("duplicate_key")}"',
             "online_state": f"online_state = {np.round(alice.online_state, 4).tolist()}",
             "multihead_sizes": f"multihead_sizes = {alice.multihead_sizes.tolist()}"}
    out = {s: made_up_submission(course, "correct", s)[NOTEBOOK] for s in ("alice", "bob")}
    out["carol"] = made_up_submission(course, "blank", "carol")[NOTEBOOK]
    out["dave"] = made_up_submission(course, "knows_nothing", "dave")[NOTEBOOK]
    out["erin"] = out["alice"]
    out["frank"] = nbformat.writes(fill_answers(_own(course, "frank"), typed)).encode()
    grace = fill_answers(_own(course, "grace"), typed)
    setup = next(c for c in grace.cells if c.get("metadata", {}).get("nbgrader", {})
                 .get("grade_id") == "setup")
    setup.source = next(c.source for c in _own(course, "alice").cells
                        if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "setup")
    out["grace"] = nbformat.writes(grace).encode()
    heidi = personal.personal_variant(secret, "heidi")
    out["heidi"] = nbformat.writes(fill_answers(_own(course, "heidi"), {
        "mc_read_table": f'answer_read_table = "{_closest_to_public(heidi, "mc_read_table")}"',
        "mc_duplicate_key":
            f'answer_duplicate_key = "{_closest_to_public(heidi, "mc_duplicate_key")}"',
    })).encode()
    return {s: data if isinstance(data, bytes) else data.encode() for s, data in out.items()}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    def handed_in(course):
        out = {student: {NOTEBOOK: data} for student, data in _submissions(course).items()}
        assert sorted(out) == sorted(STUDENTS)
        return out

    return graded_by_both(tmp_path_factory.mktemp("personal"), SECRET, handed_in)


def _auto(course, student: str) -> dict[str, float]:
    got = grades(course, student)
    assert got.pop(WRITTEN) == 0.0  # waits for the instructor
    return got


@pytest.mark.parametrize("run", ["nbgrader", "engine"])
def test_each_student_gets_every_point_for_their_own_numbers(graded, run):
    for student in ("alice", "bob"):
        assert _auto(graded[run], student) == AUTO, student


@pytest.mark.parametrize("run", ["nbgrader", "engine"])
def test_knowing_nothing_and_a_blank_notebook_score_zero(graded, run):
    for student in ("carol", "dave"):
        assert sum(_auto(graded[run], student).values()) == 0, student


@pytest.mark.parametrize("run", ["nbgrader", "engine"])
def test_a_classmates_answers_earn_no_more_than_a_blank_notebook(graded, run):
    """frank (alice's answers typed in), grace (her setup cell edited to alice's numbers),
    heidi (the public notebook's right wording): 0, as carol's blank notebook."""
    blank = sum(_auto(graded[run], "carol").values())
    for student in ("frank", "grace", "heidi"):
        assert sum(_auto(graded[run], student).values()) <= blank, student


@pytest.mark.parametrize("run", ["nbgrader", "engine"])
def test_a_copied_notebook_keeps_only_what_its_code_computes_on_ones_own_numbers(graded, run):
    """erin hands in alice's notebook: its letters (alice's) earn nothing; its code, run on
    erin's numbers, earns what erin's own working code would (the limit of any choice of
    numbers: a working function works for everyone)."""
    got = _auto(graded[run], "erin")
    assert got == {g: (AUTO[g] if g in CODE else 0.0) for g in AUTO}


def test_the_grader_uses_the_numbers_of_the_students_folder(graded):
    """grace's autograded notebook holds her own numbers, not the classmate's she typed in;
    erin's notebook, alice's, is logged as another student's variant."""
    course = graded["nbgrader"]
    secret = personal.read_secret(personal.secret_path(course))
    nb = nbformat.read(course / "autograded" / "grace" / ASSIGNMENT / NOTEBOOK, as_version=4)
    setup = next(c.source for c in nb.cells if c.metadata.get("nbgrader", {})
                 .get("grade_id") == "setup")
    assert setup_values(setup)["Q"].value == personal.personal_variant(secret, "grace").Q.tolist()
    assert "someone else's notebook" in graded["log"] and "[erin]" in graded["log"]


def test_only_a_changed_setup_cell_is_logged_as_changed(graded):
    """Each student's setup cell differs from the class's template by design: nbgrader's
    "checksum has changed" warning is for the two whose setup cell is not their own
    (grace edited hers, erin's is alice's), not for the six who left theirs alone."""
    changed = [line for line in graded["log"].splitlines()
               if "for cell setup has changed" in line]
    assert len(changed) == 2, changed
