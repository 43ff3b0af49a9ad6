"""Self-checks for the lessons' exercises: run a student's function, name the mistake.

A lesson imports this package in its setup cell and calls ``checks.check_x(my_function)``;
the cell shows the verdict, one friendly sentence (a :class:`CheckResult`). Every check is
built on one core (:mod:`course_lib.checks.core`: calling the student's code safely, naming
the first known mistake its answer fits, nbgrader's *Validate*), and lives with the other
checks of its part of the course:

=====================================  ==================================================
module                                 the checks of
=====================================  ==================================================
:mod:`course_lib.checks.terms`         part 1, the equation term by term (lessons 01-07)
:mod:`course_lib.checks.model`         part 2, attention in a real model (lessons 08-11),
                                       the padding mask of a batch included
:mod:`course_lib.checks.backward`      the backward pass and training (lessons 12, 13)
:mod:`course_lib.checks.online_softmax`  attention without the table (lesson 14)
:mod:`course_lib.checks.kv_cache`      the KV cache (lesson 15)
:mod:`course_lib.checks.tiny_gpt`      the trained transformer and its heads (lesson 16)
:mod:`course_lib.checks.reasoning`     the exercises that are not fill-ins, every lesson:
                                       derive a number, choose, find the bug
:mod:`course_lib.checks.predictions`   every lesson's predictions: the guess read back
                                       beside what the run measured (no grade), and what
                                       a good answer to a "say why" prompt mentions
=====================================  ==================================================

This package hands out every module's checks (each module's ``__all__`` lists its own, and
a test keeps this list equal to theirs).

Examples
--------
>>> from course_lib import checks, softmax
>>> checks.check_softmax(softmax)
Well done: your softmax gives positive weights that sum to 1 along each row,
and it stays finite on scores as large as 1000.
"""

from __future__ import annotations

from .backward import (
    check_attention_backward,
    check_numerical_gradient,
    check_terms_with_the_scale,
    check_weight_gradient,
    check_what_went_wrong,
)
from .core import CheckResult, ExerciseNotDone
from .kv_cache import check_generate_with_cache
from .model import (
    check_batched_scores,
    check_cross_attention,
    check_model_weights,
    check_padded_weights,
    check_projections,
)
from .online_softmax import check_online_softmax_step
from .predictions import (
    REASONS,
    GuessComparison,
    Part,
    compare_guess,
    compare_reason,
    largest,
    nearest,
    number,
    one_of,
    yes_no,
)
from .reasoning import (
    check_breaks_global_max,
    check_buggy_line,
    check_head_table_sizes,
    check_mat_key,
    check_multiply_adds,
    check_own_the_output,
    check_rows_the_bug_changes,
    check_sat_by_hand,
    check_spread_by_hand,
    check_table_bytes,
    check_table_sizes,
    check_third_block,
    check_weights_for_point,
    check_which_is_qkt,
)
from .terms import (
    check_attention,
    check_attention_weights,
    check_blend,
    check_masked_attention,
    check_sat_output,
    check_scaled_scores,
    check_scores,
    check_shapes,
    check_softmax,
)
from .tiny_gpt import check_attend_in_model, check_induction_by_hand

__all__ = [
    "REASONS",
    "CheckResult",
    "ExerciseNotDone",
    "GuessComparison",
    "Part",
    "check_attend_in_model",
    "check_attention",
    "check_attention_backward",
    "check_attention_weights",
    "check_batched_scores",
    "check_blend",
    "check_breaks_global_max",
    "check_buggy_line",
    "check_cross_attention",
    "check_generate_with_cache",
    "check_head_table_sizes",
    "check_induction_by_hand",
    "check_masked_attention",
    "check_mat_key",
    "check_model_weights",
    "check_multiply_adds",
    "check_numerical_gradient",
    "check_online_softmax_step",
    "check_own_the_output",
    "check_padded_weights",
    "check_projections",
    "check_rows_the_bug_changes",
    "check_sat_by_hand",
    "check_sat_output",
    "check_scaled_scores",
    "check_scores",
    "check_shapes",
    "check_softmax",
    "check_spread_by_hand",
    "check_table_bytes",
    "check_table_sizes",
    "check_terms_with_the_scale",
    "check_third_block",
    "check_weight_gradient",
    "check_weights_for_point",
    "check_what_went_wrong",
    "check_which_is_qkt",
    "compare_guess",
    "compare_reason",
    "largest",
    "nearest",
    "number",
    "one_of",
    "yes_no",
]
