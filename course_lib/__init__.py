"""course_lib: the helper library of the course "Attention, Term by Term".

Every lesson notebook imports what it needs from here in one setup cell, so each helper
has exactly one source. The attention maths a student reads is at the top: the equation
term by term in :mod:`course_lib.attention`, its backward pass in :mod:`course_lib.backward`,
the worked example in :mod:`course_lib.examples`, and one module for each later idea
(:mod:`~course_lib.projections`, :mod:`~course_lib.heads`, :mod:`~course_lib.order`,
:mod:`~course_lib.cross_attention`, :mod:`~course_lib.online_softmax`,
:mod:`~course_lib.tiled`, :mod:`~course_lib.kv_cache`, :mod:`~course_lib.block`).
Around it, one folder per job:

- :mod:`course_lib.checks`: the self-checks of the lessons' exercises (``checks.check_x``);
- :mod:`course_lib.explore`: figures, their descriptions in words, and the explorers;
- :mod:`course_lib.experiments`: the measurements behind the lessons' claims;
- :mod:`course_lib.real_model`: a real model's attention (all-MiniLM-L6-v2), recomputed;
- :mod:`course_lib.tiny_gpt`: a small transformer made of these parts, trained by the
  course, and its heads read (lesson 16).

The quizzes are not here: the self-study quiz and the checkpoint's checks are in
:mod:`course_quiz`.
"""

from .attention import (
    attention,
    attention_weights,
    blend,
    causal_mask,
    row_entropy,
    scaled_scores,
    scores,
    softmax,
    softmax_jacobian,
)
from .backward import attention_backward
from .errors import AttentionInputError
from .examples import WorkedExample, the_cat_sat, the_cat_sat_own_keys
from .kv_cache import KVCache
from .tiled import tiled_attention

__all__ = [
    "AttentionInputError",
    "KVCache",
    "WorkedExample",
    "attention",
    "attention_backward",
    "attention_weights",
    "blend",
    "causal_mask",
    "row_entropy",
    "scaled_scores",
    "scores",
    "softmax",
    "softmax_jacobian",
    "the_cat_sat",
    "the_cat_sat_own_keys",
    "tiled_attention",
]
