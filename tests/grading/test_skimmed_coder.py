"""A student who skimmed the lessons but can code scores clearly below a correct one on the
items that test reasoning (issue 41), under both graders.

The "skimmed, can code" student answers every item by calling numpy the obvious way, with
no reasoning (:data:`SKIMMED`):

* question 1: the softmax written the obvious way, ``exp`` without subtracting the row's
  maximum (the example's scores are small, so its visible check shows nothing wrong);
* question 2: the new row by the coder's shortcut (raise the key's scores by ``c``, call a
  softmax), and the derivation's factors read off the two rows: new over old for the
  weights, and for the normaliser the ratio of the rows' sums (both 1);
* question 3: no answer: no numpy call reads the table's columns for them;
* question 4: the duplicated key's row computed in numpy (the question invites checking
  in code), the option picked whose numbers match;
* the part-2 sizes from numpy arrays of the sizes, the part-3 state from the question's
  definition (the maximum and the sum over every score read so far, recomputed at each
  block), and no written answer.

A correct student and the skimmer, each with their own numbers in a class with per-student
variants, are graded by ``nbgrader autograde`` (``NbGraderAPI``, in this process) and by the
course's engine (``course_grading.parallel``); the test prints what each earns per item.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import numpy as np
import pytest
from per_student import graded_by_both

from course_grading import personal, variants
from course_grading.pipeline import ASSIGNMENT, grades
from course_grading.submissions import fill_answers, made_up_submission
from course_quiz.checkpoint_spec import CHECKPOINT

pytestmark = pytest.mark.slow

SECRET = "section S"
NOTEBOOK = "checkpoint.ipynb"
WRITTEN = "written_shift_or_scale"

#: The items that test reasoning rather than coding: the derivation's factors, the reading
#: of the measured table. (The written answer is graded by hand.)
REASONING = ("test_shift_factors", "test_mc_read_table")

#: The skimmed coder's answer cells (question 4's letter is chosen by :func:`_skimmed`).
SKIMMED = {
    "weights_without_self": '''\
def weights_without_self(Q, K):
    scores = Q @ K.T / np.sqrt(K.shape[1])
    np.fill_diagonal(scores, -np.inf)
    e = np.exp(scores)
    return e / e.sum(axis=1, keepdims=True)
''',
    "shifted_key": '''\
scores = Q @ K.T / np.sqrt(K.shape[1])
old = np.exp(scores[row]) / np.exp(scores[row]).sum()
raised = scores[row].copy()
raised[shift_key] += c
shifted_weights = np.exp(raised) / np.exp(raised).sum()
other = [i for i in range(len(old)) if i != shift_key][0]
shift_factors = [shifted_weights.sum() / old.sum(),
                 shifted_weights[shift_key] / old[shift_key],
                 shifted_weights[other] / old[other]]
''',
    "multihead_sizes": '''\
d_k = d_model // n_heads
q = np.zeros((n_tokens, d_k))
table = q @ q.T
multihead_sizes = [d_k, table.shape[0], table.shape[1], n_heads * table.size,
                   n_heads * d_k, table.size * d_k]
''',
    "online_state": '''\
online_state = []
for end in range(block, len(block_scores) + 1, block):
    seen = np.array(block_scores[:end])
    online_state += [seen.max(), np.exp(seen - seen.max()).sum()]
''',
}


def _skimmed(course: Path, student: str) -> bytes:
    """The skimmer's notebook: their own release with :data:`SKIMMED`, and question 4's
    letter the option whose numbers a numpy run with the key appended twice gives."""
    secret = personal.read_secret(personal.secret_path(course))
    v = personal.personal_variant(secret, student)
    keys = np.vstack([v.K, v.K[v.dup_key]])
    scores = v.Q[v.dup_query] @ keys.T / np.sqrt(v.K.shape[1])
    w = np.exp(scores) / np.exp(scores).sum()
    pair = f"together get {w[v.dup_key] + w[-1]:.2f}"
    options = variants.mc_options(v, "mc_duplicate_key")
    [letter] = [CHECKPOINT.letters[i] for i, text in enumerate(options) if pair in text]
    own = nbformat.reads(made_up_submission(course, "blank", student)[NOTEBOOK].decode(), 4)
    answers = {**SKIMMED, "mc_duplicate_key": f'answer_duplicate_key = "{letter}"'}
    return nbformat.writes(fill_answers(own, answers)).encode()


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    return graded_by_both(tmp_path_factory.mktemp("skimmed"), SECRET, lambda course: {
        "alice": made_up_submission(course, "correct", "alice"),
        "sam": {NOTEBOOK: _skimmed(course, "sam")},
    })


@pytest.mark.parametrize("run", ["nbgrader", "engine"])
def test_a_skimmed_coder_scores_clearly_below_a_correct_student_on_reasoning(graded, run):
    correct, skimmed = grades(graded[run], "alice"), grades(graded[run], "sam")
    print(f"\n[{run}] item: correct / skimmed, can code")
    for item in CHECKPOINT.grade_ids:
        tag = " (reasoning)" if item in REASONING else ""
        print(f"  {item}: {correct[item]:g} / {skimmed[item]:g}{tag}")
    auto = CHECKPOINT.autograded
    print(f"  autograded total: {sum(correct[g] for g in auto):g} / "
          f"{sum(skimmed[g] for g in auto):g} of {sum(auto.values())}")
    assert {g: correct[g] for g in auto} == {g: float(p) for g, p in auto.items()}
    # the reasoning items: the correct student has every point, the skimmer none
    assert [skimmed[g] for g in REASONING] == [0.0] * len(REASONING)
    # the derivation: its result by the coder's shortcut, its factors not
    assert (skimmed["test_shifted_key"], skimmed["test_shift_factors"]) == (1.0, 0.0)
    # what coding alone still earns, named (see the module docstring): the function but
    # its overflow check, question 4 computed, the part-2 sizes, the part-3 state
    earned = {g for g in auto if skimmed[g] == auto[g]}
    assert earned == set(auto) - {"test_naive_exp_overflow", *REASONING}
    assert grades(graded["nbgrader"], "sam") == grades(graded["engine"], "sam")
    assert grades(graded["nbgrader"], "alice") == grades(graded["engine"], "alice")


def test_the_verdicts_name_the_skimmers_misconception_of_the_normaliser(graded):
    nb = nbformat.read(graded["nbgrader"] / "autograded" / "sam" / ASSIGNMENT / NOTEBOOK, 4)
    named = {c.metadata["nbgrader"]["grade_id"]: c.metadata["course"]["verdict"]["mistake"]
             for c in nb.cells if "verdict" in c.metadata.get("course", {})}
    assert named["test_shift_factors"] == "normaliser_as_weight_sum"
