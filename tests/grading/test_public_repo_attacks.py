"""Hostile submissions built from the public repository alone, graded by both graders
(audit of issue 41: "no graded point can be had from a classmate or from the public
repository").

Each hostile student starts from their own per-student release (``graded_by_both``, a
secret the attacker does not know) and uses only what anyone can read in the repository:

* ``pub*`` (public code, no understanding): pastes the instructor package's answer cells
  (``course_grading.checkpoint_answers.CORRECT_ANSWER``, ``course_grading.submissions``'
  ``SHIFTED_ANSWER``, ``ONLINE_ANSWER``, ``MULTIHEAD_ANSWER``: they compute from the setup
  cell's names, so they are right on anyone's numbers), and picks the letters by filling
  the public option templates (``checkpoint_answers.OPTIONS``, whose ``"right"`` key is
  public) with ``option_numbers`` of their own setup cell; for question 3 it tells which
  column is the undivided one by re-measuring the table with the public ``measure_table``
  at the sizes the question states.
* ``rule*`` (public words, no code): only the two letters, by a rule read off the public
  templates: question 3, of the two options worded as the right template, the one whose
  quoted column climbs higher; question 4, of the two worded as the right template, the
  one whose "together" is smaller (the right 2w / (1 + w), not its twin's 2w).
* ``same*``: "B" for every letter, nothing else (a know-nothing guess); ``blank*``: the
  release unchanged.

The right students (``ok*``) bound the scale. The test asserts what issue 41's "Done when"
asks; it fails today, and is marked so (xfail, strict): the public repository holds a
complete solution, computed from the student's own names (issue 41 stays open for it).
"""

from __future__ import annotations

import re

import nbformat
import numpy as np
import pytest
from per_student import graded_by_both

from course_grading import variants
from course_grading.check_calls import setup_values
from course_grading.checkpoint_answers import CORRECT_ANSWER, OPTIONS, option_numbers
from course_grading.pipeline import grades
from course_grading.submissions import (
    MULTIHEAD_ANSWER,
    ONLINE_ANSWER,
    SHIFTED_ANSWER,
    fill_answers,
    made_up_submission,
)
from course_quiz.checkpoint_spec import CHECKPOINT

pytestmark = pytest.mark.slow

SECRET = "audit 41: a secret the attackers never see"
NOTEBOOK = "checkpoint.ipynb"
AUTO = CHECKPOINT.autograded
OPTION = re.compile(r"^- \*\*([A-D])\.\*\* (.+)$")
ROW = re.compile(r"^\| (\d+) \| ([\d.]+) \| ([\d.]+) \|$")
MEASURED = re.compile(r"over (\d+) rows of (\d+) keys.*?entries of size about (\d+(?:\.\d+)?)",
                      re.S)

STUDENTS = {"ok": ("ok1", "ok2", "ok3"), "pub": ("pub1", "pub2", "pub3"),
            "rule": ("rule1", "rule2", "rule3"), "same": ("same1", "same2"),
            "blank": ("blank1", "blank2")}


def _own(course, student: str) -> nbformat.NotebookNode:
    return nbformat.reads(made_up_submission(course, "blank", student)[NOTEBOOK].decode(), 4)


def _question(nb: nbformat.NotebookNode, answer_id: str) -> str:
    """The markdown just before an answer cell (its question, with the options)."""
    cells = nb.cells
    i = next(i for i, c in enumerate(cells)
             if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == answer_id)
    return next(c.source for c in reversed(cells[:i]) if c.cell_type == "markdown")


def _options(text: str) -> dict[str, str]:
    return {m[1]: m[2] for line in text.split("\n") if (m := OPTION.match(line))}


def _setup(nb: nbformat.NotebookNode) -> dict:
    cell = next(c for c in nb.cells
                if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "setup")
    return {name: lit.value for name, lit in setup_values(cell.source).items()}


def _letter_by_template(options: dict[str, str], question: str, numbers: dict) -> str:
    right = dict(OPTIONS[question])["right"].format(**numbers)
    [letter] = [k for k, text in options.items() if text == right]
    return letter


def _public_code(nb: nbformat.NotebookNode) -> dict[str, str]:
    """Every answer from the public repository, fitted to this notebook's own numbers."""
    s = _setup(nb)
    dup = option_numbers("mc_duplicate_key", {
        "Q": np.array(s["Q"]), "K": np.array(s["K"]), "tokens": s["tokens"],
        "dup_query": s["dup_query"], "dup_key": s["dup_key"]})
    q3 = _question(nb, "mc_read_table")
    rows = [ROW.match(line) for line in q3.split("\n")]
    rows = [m for m in rows if m]
    dks = tuple(int(m[1]) for m in rows)
    xy = np.array([[float(m[2]), float(m[3])] for m in rows])
    n_rows, n_keys, scale = MEASURED.search(q3).groups()
    measured = variants.measure_table(np.random.default_rng(0), dks, int(n_keys),
                                      int(n_rows), float(scale))  # (divided, undivided)
    # X undivided when the table, read as (Y, X), is closer to the re-measured one
    unscaled_first = (np.abs(xy[:, ::-1] - measured).sum() < np.abs(xy - measured).sum())
    table = xy[:, ::-1] if unscaled_first else xy
    q3_numbers = option_numbers("mc_read_table", {
        "table": table, "unscaled_first": unscaled_first, "table_setup": (dks,)})
    read_table = _letter_by_template(_options(q3), "mc_read_table", q3_numbers)
    duplicate_key = _letter_by_template(_options(_question(nb, "mc_duplicate_key")),
                                        "mc_duplicate_key", dup)
    return {
        "weights_without_self": CORRECT_ANSWER,
        "shifted_key": SHIFTED_ANSWER,
        "online_state": ONLINE_ANSWER,
        "multihead_sizes": MULTIHEAD_ANSWER,
        "mc_read_table": f'answer_read_table = "{read_table}"',
        "mc_duplicate_key": f'answer_duplicate_key = "{duplicate_key}"',
    }


def _public_words(nb: nbformat.NotebookNode) -> dict[str, str]:
    """The two letters by a rule read off the public templates; no code, no reasoning."""
    q3 = _options(_question(nb, "mc_read_table"))
    twins = {k: t for k, t in q3.items() if "is the one without the division" in t}
    climb = {k: float(re.search(r"goes from [\d.]+ to ([\d.]+)", t)[1]) for k, t in twins.items()}
    q4 = _options(_question(nb, "mc_duplicate_key"))
    pairs = {k: re.search(r"together get ([\d.]+) \(one copy had ([\d.]+)\)", t)
             for k, t in q4.items() if "takes more of the budget" in t}
    # the right pair is 2w / (1 + w), its twin 2w: always the smaller of the two
    smaller = min(pairs, key=lambda k: float(pairs[k][1]))
    return {"mc_read_table": f'answer_read_table = "{max(climb, key=climb.get)}"',
            "mc_duplicate_key": f'answer_duplicate_key = "{smaller}"'}


def _handed_in(course) -> dict[str, dict[str, bytes]]:
    out = {}
    for kind, ids in STUDENTS.items():
        for student in ids:
            if kind == "ok":
                out[student] = made_up_submission(course, "correct", student)
                continue
            nb = _own(course, student)
            answers = {"pub": _public_code, "rule": _public_words,
                       "same": lambda nb: {"mc_read_table": 'answer_read_table = "B"',
                                           "mc_duplicate_key": 'answer_duplicate_key = "B"'},
                       "blank": lambda nb: {}}[kind](nb)
            out[student] = {NOTEBOOK: nbformat.writes(fill_answers(nb, answers)).encode()}
    return out


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    return graded_by_both(tmp_path_factory.mktemp("attacks"), SECRET, _handed_in)


def _auto(course, student: str) -> float:
    got = grades(course, student)
    return sum(got[g] for g in AUTO)


@pytest.fixture(scope="module")
def table(graded):
    """kind -> grader -> autograded points of each of its students (printed)."""
    out = {kind: {run: [_auto(graded[run], s) for s in ids] for run in ("nbgrader", "engine")}
           for kind, ids in STUDENTS.items()}
    print(f"\nautograded points of {sum(AUTO.values())} (nbgrader / engine):")
    for kind, runs in out.items():
        print(f"  {kind}: {runs['nbgrader']} / {runs['engine']}")
    return out


def test_both_graders_agree_and_the_right_students_get_every_point(graded, table):
    for ids in STUDENTS.values():
        for s in ids:
            assert grades(graded["nbgrader"], s) == grades(graded["engine"], s), s
    assert table["ok"]["nbgrader"] == [float(sum(AUTO.values()))] * len(STUDENTS["ok"])


@pytest.mark.parametrize("run", ["nbgrader", "engine"])
def test_guessing_one_letter_for_all_earns_at_most_a_guess(table, run):
    """A know-nothing "B" everywhere: no more than the two letters' points (3)."""
    assert all(p <= AUTO["test_mc_read_table"] + AUTO["test_mc_duplicate_key"]
               for p in table["same"][run])


@pytest.mark.parametrize("run", ["nbgrader", "engine"])
@pytest.mark.xfail(strict=True, reason=(
    "issue 41, open: the public repository holds a complete solution computed from the "
    "student's own names (14 of 14 autograded points) and option templates whose wording "
    "gives questions 3 and 4 away. The grader needs a right answer to every autograded "
    "item, and what it needs is in the repository: moving the answer cells alone would "
    "leave the reference functions and the options' formulas; only questions the "
    "instructor writes and keeps out of it close this (docs/instructors.md, section 1). "
    "Strict: this fails the suite once the hole is closed"))
def test_the_public_repository_earns_no_more_than_a_blank_notebook(table, run):
    """Issue 41, "Done when": no graded point from the public repository. Fails today:
    the public answer cells and option templates earn every autograded point."""
    blank = max(table["blank"][run])
    for kind in ("pub", "rule"):
        assert max(table[kind][run]) <= blank, (kind, table[kind][run], blank)
