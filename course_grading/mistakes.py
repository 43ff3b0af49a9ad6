"""Answers to ``weights_without_self(Q, K)`` written as students write them: right, and wrong.

The wrong ones are the quiz's mistakes, named in :data:`course_quiz.checkpoint_spec.CHECKPOINT`
and spelled out on the instructor's side in :mod:`course_grading.checkpoint_answers`
(each hidden check is built to catch one; :data:`MISTAKES` holds those four,
:data:`ALL_MISTAKES` every one), with the right answer, for the submissions that tests and
benchmarks make (:mod:`course_grading.submissions`) and for proving that every check passes it.

Examples
--------
>>> import numpy as np
>>> f = answer_function(CORRECT_ANSWER)
>>> f(np.eye(3), np.eye(3)).round(2)
array([[0. , 0.5, 0.5],
       [0.5, 0. , 0.5],
       [0.5, 0.5, 0. ]])
>>> sorted(MISTAKES)
['dk_from_wrong_axis', 'missing_scale', 'naive_exp_overflow', 'wrong_axis']
>>> hidden_test_id("wrong_axis")
'test_wrong_axis'
"""

from __future__ import annotations

from types import MappingProxyType

from course_quiz.checkpoint_spec import CHECKPOINT

from .checkpoint_answers import CORRECT_ANSWER, MISTAKE_SOURCES, answer_function

__all__ = ["ALL_MISTAKES", "CORRECT_ANSWER", "MISTAKES", "answer_function", "hidden_test_id"]

#: Mistake id -> answer-cell source with exactly that one mistake, for the mistakes a
#: hidden check of their own isolates (read-only mapping).
MISTAKES = MappingProxyType({m.id: MISTAKE_SOURCES[m.id] for m in CHECKPOINT.diagnosed.values()})

#: Every mistake of the spec, the ones every check catches included (read-only mapping).
ALL_MISTAKES = MappingProxyType({m.id: MISTAKE_SOURCES[m.id] for m in CHECKPOINT.mistakes})


def hidden_test_id(mistake: str) -> str:
    """The grade id of the hidden check built to catch ``mistake``.

    Raises
    ------
    KeyError
        If no check of the quiz catches that mistake.
    """
    for grade_id, caught in CHECKPOINT.diagnosed.items():
        if caught.id == mistake:
            return grade_id
    raise KeyError(f"unknown mistake {mistake!r}: expected one of {', '.join(sorted(MISTAKES))}")
