"""A real model, all-MiniLM-L6-v2: its attention recomputed with your own function.

Two modules: :mod:`course_lib.real_model.recorded` reads what the model computed for four
sentences (shipped in ``course_lib/real_model/data/``), compares any weights function with
it over every head, and draws and explores the heads (lesson 11), and reads two of them as a
padded batch (:func:`~course_lib.real_model.recorded.load_padded_batch`);
:mod:`course_lib.real_model.model_forward` runs the whole encoder in numpy from the model's
own weights, on a sentence of your own (lesson 15; optional, the weights are not shipped).
This package hands out the first one's names, so a lesson reads
``real_model.load_model_attention()``.

Examples
--------
>>> from course_lib import attention_weights, real_model
>>> real_model.compare_with_model(attention_weights).heads_compared
288
"""

from __future__ import annotations

from .recorded import (
    DATA_FILE,
    PADDED_FILE,
    PADDED_PROVENANCE_FILE,
    PATTERNS,
    PROVENANCE_FILE,
    Comparison,
    LayerAttention,
    ModelAttention,
    PaddedBatch,
    compare_with_model,
    head_heatmap,
    head_patterns,
    load_model_attention,
    load_padded_batch,
    model_heads_explorer,
    strongest_heads,
)

__all__ = [
    "DATA_FILE",
    "PADDED_FILE",
    "PADDED_PROVENANCE_FILE",
    "PATTERNS",
    "PROVENANCE_FILE",
    "Comparison",
    "LayerAttention",
    "ModelAttention",
    "PaddedBatch",
    "compare_with_model",
    "head_heatmap",
    "head_patterns",
    "load_model_attention",
    "load_padded_batch",
    "model_heads_explorer",
    "strongest_heads",
]
