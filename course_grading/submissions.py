"""Student submissions of the checkpoint quiz, made by code (for tests and benchmarks).

Each kind of submission is what a real class hands in now and then: a correct notebook,
one with a single mistake, a blank one, one that loops forever, one renamed or corrupted,
one that tries to fool the checks. :func:`make_submission` turns the *released* notebook
(what students receive) into the files of one submission, ready to be placed in
``submitted/<student>/checkpoint/``. The right letters and numbers come from the source
notebook the release was made from (:func:`course_grading.variants.quiz_facts`).

Examples
--------
>>> sorted(KINDS)[:3]
['blank', 'correct', 'corrupt_json']
>>> len(KINDS)
17
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping

import nbformat
import numpy as np

from .mistakes import CORRECT_ANSWER, MISTAKES
from .variants import QuizFacts

__all__ = ["KINDS", "MONKEYPATCH", "NOTEBOOK", "answers_for", "fill_answers", "make_submission"]

#: The notebook's file name in the assignment.
NOTEBOOK = "checkpoint.ipynb"

WRITTEN_ANSWER = (
    "Without the division the scores grow like sqrt(d_k), about 23 for d_k = 512, so the "
    "softmax saturates: the weights are nearly one-hot. A saturated softmax has gradients "
    "near zero, so hardly any learning signal reaches the queries and keys."
)

#: kind -> what it stands for (the pipeline test grades one submission of each kind).
KINDS = {
    "correct": "every answer right",
    **{f"mistake_{m}": f"attention_weights with one mistake: {m}" for m in MISTAKES},
    "blank": "the released notebook, unchanged",
    "raises": "attention_weights raises an exception; the other answers right",
    "infinite_loop": "the 'sat' answer cell loops forever; the other answers right",
    "prints_megabytes": "every answer right, and the answer cell prints megabytes",
    "edited_tests": "the missing-scale mistake, and every read-only test cell edited to pass",
    "deleted_test_cells": "every answer right, two test cells deleted",
    "renamed": "every answer right, in a notebook saved under another name",
    "corrupt_json": "the notebook file cut in half (not valid JSON)",
    "other_kernelspec": "every answer right, with an R kernelspec in the metadata",
    "peeks_at_hidden_tests": "every answer right; a late answer cell prints the source of "
    "every cell run so far (IPython's In)",
    "monkeypatches_checks": "the missing-scale mistake, and the answer cell replaces "
    "np.allclose, np.isclose, course_lib's reference and abs to make every check agree",
    "uses_course_lib": "attention_weights imported from course_lib, which the quiz forbids",
}

#: Appended to an answer cell by the "monkeypatches_checks" kind.
MONKEYPATCH = """
import builtins

np.allclose = lambda *args, **kwargs: True
np.isclose = lambda *args, **kwargs: True
builtins.abs = lambda x: 0.0
try:
    import course_lib
    course_lib.attention_weights = attention_weights
except ImportError:
    pass
"""


def answers_for(facts: QuizFacts, attention_source: str = CORRECT_ANSWER) -> dict[str, str]:
    """The answer-cell sources (grade id -> source) of a submission.

    Parameters
    ----------
    facts : QuizFacts
        The numbers of the source notebook the release was made from (its right letters
        differ between variants).
    attention_source : str
        The source of the ``attention_weights`` answer cell.
    """
    return {
        "attention_weights": attention_source,
        "sat_output": "sat_output = attention_weights(Q, K)[2] @ V",
        "mc_why_scale": f'answer_why_scale = "{facts.mc_answer("why_scale")}"',
        "mc_causal_mask": f'answer_causal_mask = "{facts.mc_answer("causal_mask").lower()}"',
        "written_scaling": WRITTEN_ANSWER,
    }


def fill_answers(
    released: nbformat.NotebookNode, answers: Mapping[str, str]
) -> nbformat.NotebookNode:
    """A copy of the released notebook with the answer cells named in ``answers`` replaced.

    Raises
    ------
    KeyError
        If a grade id in ``answers`` is not an answer cell of the notebook.
    """
    nb = copy.deepcopy(released)
    found = set()
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution") and meta.get("grade_id") in answers:
            cell.source = answers[meta["grade_id"]]
            found.add(meta["grade_id"])
    missing = set(answers) - found
    if missing:
        raise KeyError(f"no answer cell with grade id {', '.join(sorted(missing))} in the notebook")
    return nb


def make_submission(kind: str, released_text: str, facts: QuizFacts) -> dict[str, bytes]:
    """The files of one submission of the given kind.

    Parameters
    ----------
    kind : str
        One of :data:`KINDS`.
    released_text : str
        The released notebook (``release/checkpoint/checkpoint.ipynb``) as text.
    facts : QuizFacts
        The numbers of the source the release was made from.

    Returns
    -------
    dict of str to bytes
        File name -> content, to write into ``submitted/<student>/checkpoint/``.

    Raises
    ------
    ValueError
        If ``kind`` is unknown.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown submission kind {kind!r}: expected one of {', '.join(KINDS)}")
    released = nbformat.reads(released_text, as_version=4)
    if kind == "blank":
        return {NOTEBOOK: released_text.encode()}
    answers = answers_for(facts)
    name = NOTEBOOK
    if kind.startswith("mistake_") or kind in ("edited_tests", "monkeypatches_checks"):
        mistake = kind.removeprefix("mistake_") if kind.startswith("mistake_") else "missing_scale"
        answers = answers_for(facts, MISTAKES[mistake])
        if kind == "monkeypatches_checks":
            answers["attention_weights"] += MONKEYPATCH
    elif kind == "raises":
        sat = np.round(facts.sat_output, 2).tolist()
        answers["attention_weights"] = (
            'def attention_weights(Q, K):\n    raise RuntimeError("I ran out of time")\n'
        )
        answers["sat_output"] = f"sat_output = np.array({sat})"
    elif kind == "infinite_loop":
        answers["sat_output"] = "while True:\n    pass"
    elif kind == "peeks_at_hidden_tests":
        answers["mc_causal_mask"] += '\nprint("\\n".join(In))'
    elif kind == "prints_megabytes":
        answers["attention_weights"] = (
            CORRECT_ANSWER + '\n\nfor _i in range(40_000):\n    print(_i, "x" * 100)\n'
            'print("y" * 2_000_000)\n'
        )
    elif kind == "uses_course_lib":
        answers["attention_weights"] = "from course_lib import attention_weights\n"
    nb = fill_answers(released, answers)
    if kind == "edited_tests":
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader", {})
            if meta.get("grade") and not meta.get("solution"):
                cell.source = '"""Edited by the student: always passes."""\npass'
    elif kind == "deleted_test_cells":
        gone = {"test_attention_weights_visible", "test_missing_scale"}
        nb.cells = [
            c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") not in gone
        ]
    elif kind == "other_kernelspec":
        nb.metadata["kernelspec"] = {"display_name": "R", "language": "R", "name": "ir"}
    elif kind == "renamed":
        name = "checkpoint-final.ipynb"
    text = nbformat.writes(nb)
    if kind == "corrupt_json":
        text = text[: len(text) // 2]
        try:
            json.loads(text)
        except json.JSONDecodeError:
            pass
        else:  # pragma: no cover - half a notebook is never valid JSON
            raise AssertionError("the corrupt submission is valid JSON")
    return {name: text.encode()}
