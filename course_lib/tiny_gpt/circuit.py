r"""Reading the trained heads: what each one looks at, and what breaks without it.

Two scores per head, each an average of its attention weights on held-out sequences
(Olsson et al., "In-context Learning and Induction Heads", 2022, measure the same two):

- the **previous-token score**: the weight each position puts on the position just before
  it (1 for a head that always looks one back);
- the **induction score**: at the scored positions, inside the second copy of the segment,
  the weight on the position *after* the earlier occurrence of the current letter (at the
  second ``w`` of ``k w d … k w``, the ``d`` of the first copy). 1 for a head that always
  looks there.

A head's job is named from them (:attr:`HeadScores.jobs`): *previous-token* when its
previous-token score is above one half, *induction* when its induction score is, *other*
otherwise. The circuit the two layers make: a previous-token head in layer 0 writes, into
each position's row, which letter came before it; an induction head in layer 1 matches
the current letter against that and copies the letter found (its value) into the logits.

:func:`ablation` removes heads (their output set to zero: the ``ablate`` of
:func:`course_lib.tiny_gpt.model.forward`) and measures the accuracy again: each head
alone, then the heads of each job together.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..errors import AttentionInputError
from ..heads import merge_heads
from .model import Forward, TinyGPT, _check_ablate, attention_layer, forward, unembed
from .task import VOCAB_SIZE, Batch, make_batch

__all__ = [
    "Ablation",
    "HeadScores",
    "ablation",
    "chance",
    "exercise_sequence",
    "head_scores",
    "induction_targets",
]

FloatArray = NDArray[np.float64]
Head = tuple[int, int]

#: a score above this names the head's job
JOB_THRESHOLD = 0.5


def induction_targets(batch: Batch) -> tuple[NDArray[np.int64], NDArray[np.int64],
                                             NDArray[np.int64]]:
    """Where an induction head should look: ``(sequence, position, key)`` of every scored
    position, ``key`` the position after the current letter's earlier occurrence."""
    seq, pos = np.nonzero(batch.scored)
    key = batch.first[seq] + (pos - batch.second[seq]) + 1
    return seq, pos, key


@dataclass(frozen=True)
class HeadScores:
    """Every head's previous-token and induction score.

    Attributes
    ----------
    previous_token : ndarray, shape (layers, heads)
    induction : ndarray, shape (layers, heads)
    """

    previous_token: FloatArray
    induction: FloatArray

    @property
    def jobs(self) -> dict[Head, str]:
        """Each head's job, named from its scores: ``{(layer, head): job}``."""
        names = {}
        for (layer, head), prev in np.ndenumerate(self.previous_token):
            ind = self.induction[layer, head]
            names[(int(layer), int(head))] = ("induction" if ind > JOB_THRESHOLD else
                                              "previous-token" if prev > JOB_THRESHOLD
                                              else "other")
        return names

    def heads_doing(self, job: str) -> list[Head]:
        """The heads whose job is ``job``, in order."""
        return [h for h, j in self.jobs.items() if j == job]

    def __str__(self) -> str:
        lines = ["head (layer.head)  previous-token score  induction score  job"]
        for (layer, head), job in self.jobs.items():
            lines.append(f"{layer}.{head:<16} {self.previous_token[layer, head]:>20.2f} "
                         f"{self.induction[layer, head]:>16.2f}  {job}")
        return "\n".join(lines)

    __repr__ = __str__


def head_scores(model: TinyGPT, batch: Batch) -> HeadScores:
    """Measure every head's two scores on ``batch``.

    Examples
    --------
    >>> from course_lib.tiny_gpt.model import init_model
    >>> from course_lib.tiny_gpt.task import make_batch
    >>> scores = head_scores(init_model(seed=0), make_batch(20, seed=1))
    >>> scores.previous_token.shape
    (2, 2)
    """
    weights = forward(model, batch.tokens).weights  # (layers, batch, heads, n, n)
    n = weights.shape[-1]
    rows = np.arange(1, n)
    previous = weights[..., rows, rows - 1].mean(axis=(1, 3))
    seq, pos, key = induction_targets(batch)
    # the advanced indices are apart, so numpy puts their axis first: (positions, layers, heads)
    induction = weights[:, seq, :, pos, key].mean(axis=0)
    return HeadScores(previous, induction)


@dataclass(frozen=True)
class Ablation:
    """The held-out accuracy with heads removed.

    Attributes
    ----------
    full : float
        With every head.
    removed : dict of tuple to float
        For each set of removed heads (a tuple of (layer, head)), the accuracy without them.
    labels : dict of tuple to str
        What each set is, in words.
    chance : float
        A letter guessed at random: 1 / 26.
    """

    full: float
    removed: dict[tuple[Head, ...], float]
    labels: dict[tuple[Head, ...], str]
    chance: float

    def __str__(self) -> str:
        rows = [("none", self.full)]
        for heads, acc in self.removed.items():
            names = ", ".join(f"{layer}.{head}" for layer, head in heads)
            rows.append((f"{names} ({self.labels[heads]})", acc))
        rows.append(("(a letter at random)", self.chance))
        width = max(len(name) for name, _ in rows) + 2
        lines = [f"{'heads removed':<{width}}held-out accuracy"]
        lines += [f"{name:<{width}}{acc:>8.1%}" for name, acc in rows]
        return "\n".join(lines)

    __repr__ = __str__


#: The seed of the sequence the lesson's exercise reads by hand.
EXERCISE_SEED = 8


def exercise_sequence() -> NDArray[np.int64]:
    """The lesson's sequence for the circuit by hand: a sequence of the task cut after the
    second letter of the segment's second copy (the model is to write the third).

    Examples
    --------
    >>> from course_lib.tiny_gpt.task import letters
    >>> " ".join(letters(exercise_sequence()))
    'p t i c n q o z k l a v i c'
    """
    batch = make_batch(1, seed=EXERCISE_SEED)
    return batch.tokens[0, : int(batch.second[0]) + 2].copy()


def chance() -> float:
    """The accuracy of a letter guessed at random, 1 / 26."""
    return 1 / VOCAB_SIZE


def ablation(model: TinyGPT, batch: Batch, scores: HeadScores,
             also: Sequence[tuple[Sequence[Head], str]] = ()) -> Ablation:
    """The accuracy with each head removed alone, then the heads of each job together, then
    the circuit (every previous-token and induction head) together.

    Parameters
    ----------
    model : TinyGPT
    batch : Batch
        Held-out sequences.
    scores : HeadScores
        Names the jobs (:func:`head_scores` on the same model).
    also : sequence of (heads, label)
        More sets of heads to remove together, each a sequence of (layer, head) and what
        to call it.

    Returns
    -------
    Ablation

    Examples
    --------
    >>> from course_lib.tiny_gpt.shipped import load_model
    >>> from course_lib.tiny_gpt.task import make_batch
    >>> model, batch = load_model().model, make_batch(200, seed=2)
    >>> result = ablation(model, batch, head_scores(model, batch),
    ...                   also=[([(0, 0), (0, 1)], "layer 0")])
    >>> result.labels[((0, 0), (0, 1))]
    'layer 0'
    """
    if not isinstance(scores, HeadScores):
        raise AttentionInputError(f"scores must be the HeadScores of head_scores(model, batch) "
                                  f"(got {type(scores).__name__})")
    sets = [((head,), job) for head, job in scores.jobs.items()]
    for job in ("previous-token", "induction", "other"):
        group = tuple(scores.heads_doing(job))
        if len(group) > 1:
            sets.append((group, f"every {job} head"))
    circuit = tuple(sorted(scores.heads_doing("previous-token") + scores.heads_doing("induction")))
    if scores.heads_doing("previous-token") and scores.heads_doing("induction"):
        sets.append((circuit, "the circuit"))
    for heads, label in also:
        group = tuple((int(layer), int(head)) for layer, head in heads)
        sets.append((group, str(label)))
    run = forward(model, batch.tokens)
    right = batch.targets[batch.scored]
    removed, labels = {}, {}
    for group, label in sets:
        if group not in removed:
            predicted = _logits_without(model, run, group).argmax(axis=-1)
            removed[group] = float((predicted[batch.scored] == right).mean())
            labels[group] = label
    full = float((run.predictions()[batch.scored] == right).mean())
    return Ablation(full, removed, labels, chance())


def _logits_without(model: TinyGPT, run: Forward, heads: Sequence[Head]) -> FloatArray:
    """The logits of ``forward(model, run.tokens, ablate=heads)``, from ``run``'s layers.

    A head removed in layer ``l`` changes nothing before layer ``l``, and in layer ``l``
    only its own output (the other heads read the layer's input, which is the same): so the
    layers before the first removal are ``run``'s, that layer's heads are ``run``'s with
    zeros for the removed ones, and only the layers after it run again. The same numbers as
    the forward pass with ``ablate``, for a fraction of its work.
    """
    by_layer = _check_ablate(model, heads)
    if not by_layer:
        return run.logits
    first = min(by_layer)
    before = run.layers[first]
    kept = before.head_outputs.copy()
    for head in by_layer[first]:
        kept[..., head, :, :] = 0.0
    x = before.x + merge_heads(kept) @ model.W_O[first]
    for layer in range(first + 1, model.layers):
        x = attention_layer(x, model.W_Q[layer], model.W_K[layer], model.W_V[layer],
                            model.W_O[layer], model.heads,
                            ablate=by_layer.get(layer, ())).output
    return unembed(x, model.unembedding)
