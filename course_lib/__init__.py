"""course_lib: the helper library of the course "Attention, Term by Term".

Every lesson notebook imports what it needs from here in one setup cell, so each helper
has exactly one source. The math is in :mod:`course_lib.attention`, its backward pass in
:mod:`course_lib.backward`; the worked example of
the lessons is in :mod:`course_lib.examples`.
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
