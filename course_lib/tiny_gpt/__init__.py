"""A small transformer trained end to end from the course's parts, and its heads read.

A two-layer, attention-only, decoder-only model in numpy whose every head runs the course's
:func:`course_lib.attention` (or your own) and whose backward pass runs
:func:`course_lib.attention_backward`. Trained with Adam on sequences in which a random
segment appears twice, it learns to predict the second copy from the first: a
previous-token head in layer 0 and induction heads in layer 1 (lesson 16).

=====================================  ==================================================
module                                 what it holds
=====================================  ==================================================
:mod:`~course_lib.tiny_gpt.task`       the sequences (letters), seeded; which positions
                                       count
:mod:`~course_lib.tiny_gpt.model`      the model, its loss, every backward piece,
                                       generation with a KV cache
:mod:`~course_lib.tiny_gpt.training`   Adam, the training loop, the held-out accuracy
:mod:`~course_lib.tiny_gpt.circuit`    every head's previous-token and induction score,
                                       and the accuracy with heads removed
:mod:`~course_lib.tiny_gpt.shipped`    the trained weights the course ships, checked by
                                       sha256
=====================================  ==================================================

Train it yourself (about half a minute of CPU time): ``python -m course_lib.tiny_gpt train
--out my_model``; measure it: ``python -m course_lib.tiny_gpt evaluate --weights my_model``.

Examples
--------
>>> from course_lib import tiny_gpt
>>> loaded = tiny_gpt.load_model()
>>> batch = tiny_gpt.make_batch(3, seed=5)
>>> tiny_gpt.forward(loaded.model, batch.tokens).logits.shape
(3, 24, 26)
"""

from __future__ import annotations

from .circuit import Ablation, HeadScores, ablation, chance, head_scores
from .model import TinyGPT, forward, generate, init_model, loss_and_gradients, reset_weights
from .shipped import Loaded, load_model
from .task import LETTERS, Batch, letters, make_batch
from .training import Adam, TrainingConfig, TrainingRun, accuracy, held_out, train

__all__ = [
    "LETTERS",
    "Ablation",
    "Adam",
    "Batch",
    "HeadScores",
    "Loaded",
    "TinyGPT",
    "TrainingConfig",
    "TrainingRun",
    "ablation",
    "accuracy",
    "chance",
    "forward",
    "generate",
    "head_scores",
    "held_out",
    "init_model",
    "letters",
    "load_model",
    "loss_and_gradients",
    "make_batch",
    "reset_weights",
    "train",
]
