"""The figures of lesson 16: the trained model's training curve and its heads' maps.

Each returns a :class:`~course_lib.explore.plots.DescribedFigure` whose description (the
image's alt text and ``text/plain``) is computed from the same numbers as the figure.

``training_curve(loaded)``
    The loss and the held-out accuracy the training command recorded
    (:mod:`course_lib.tiny_gpt.shipped`).
``head_maps(model, batch, i=0)``
    Every head's attention weights on sequence ``i`` of a batch, one map per head, layers
    in rows; the description says, for each head, how many positions look most at the
    letter just before them, and how many (of those in the second copy of the segment) at
    the letter after the earlier copy of the current one.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import AttentionInputError
from ..tiny_gpt.model import TinyGPT, forward
from ..tiny_gpt.task import VOCAB_SIZE, Batch, letters
from .plots import DescribedFigure, _figure, _plain_axes
from .style import BLUE, CMAP, ORANGE, PAPER, PAPER_INK

__all__ = ["head_maps", "training_curve"]


def _first_at_least(values: list[float], steps: list[int], level: float) -> int | None:
    return next((s for s, v in zip(steps, values, strict=True) if v >= level), None)


def training_curve(loaded: Any) -> DescribedFigure:
    """The recorded loss and held-out accuracy of a training run, against the step.

    Parameters
    ----------
    loaded : course_lib.tiny_gpt.Loaded
        From :func:`course_lib.tiny_gpt.load_model`.

    Examples
    --------
    >>> from course_lib.tiny_gpt import load_model
    >>> print(training_curve(load_model()).caption)  # doctest: +ELLIPSIS
    The loss stays near log 26 for about ... steps, then falls: held-out accuracy ...
    """
    curve = getattr(loaded, "curve", None)
    if not isinstance(curve, dict) or not {"steps", "loss", "held_out_accuracy"} <= set(curve):
        raise AttentionInputError(f"loaded must be what course_lib.tiny_gpt.load_model() "
                                  f"returns (got {type(loaded).__name__})")
    steps, loss, acc = curve["steps"], curve["loss"], curve["held_out_accuracy"]
    every = steps[0]
    log_vocab = float(np.log(VOCAB_SIZE))
    # Margins in inches: a title above each panel, "step" below, tick labels of at most
    # four characters on the left; the labels fit, so no layout pass measures them.
    fig = _figure((9.0, 3.0), margins={"left": 0.45 / 9.0, "right": 1 - 0.1 / 9.0,
                                       "bottom": 0.45 / 3.0, "top": 1 - 0.3 / 3.0,
                                       "wspace": 0.22})
    left, right = fig.subplots(1, 2)
    left.plot(steps, loss, color=BLUE)
    left.axhline(log_vocab, color=PAPER_INK, linewidth=0.6, linestyle=":")
    left.set_title(f"loss (mean over {every} steps)", fontsize=10)
    right.plot(steps, [100 * a for a in acc], color=ORANGE)
    right.axhline(100 / VOCAB_SIZE, color=PAPER_INK, linewidth=0.6, linestyle=":")
    right.set_title("held-out accuracy (%)", fontsize=10)
    right.set_ylim(0, 100)
    for ax in (left, right):
        ax.set_xlabel("step")
        _plain_axes(ax)
    half = _first_at_least(acc, steps, 0.5)
    ninety = _first_at_least(acc, steps, 0.9)
    plateau = max((s for s, v in zip(steps, loss, strict=True) if v > log_vocab - 0.15),
                  default=steps[0])
    description = (
        f"Two panels, the training run of `{loaded.command}`: {steps[-1]} steps of Adam, a "
        f"point every {every} steps. Left, the loss (each point the mean over the {every} "
        f"steps before it): {loss[0]:.2f} at step {steps[0]}, near log {VOCAB_SIZE} = "
        f"{log_vocab:.2f} (every letter alike, the dotted line) up to step {plateau}, then "
        f"{loss[steps.index(plateau) + 1]:.2f} at step {plateau + every} and "
        f"{loss[-1]:.3f} at the end. Right, the accuracy on held-out sequences: "
        f"{acc[0]:.1%} at step {steps[0]} (a letter at random: {1 / VOCAB_SIZE:.1%}, the "
        f"dotted line), "
        + (f"past 50% at step {half}, past 90% at step {ninety}, " if half and ninety else "")
        + f"{acc[-1]:.1%} at the end.")
    caption = (f"The loss stays near log {VOCAB_SIZE} for about {plateau} steps, then falls: "
               f"held-out accuracy {acc[steps.index(plateau)]:.0%} at step {plateau}, "
               f"{acc[-1]:.1%} after {steps[-1]}.")
    return DescribedFigure(fig, description, caption)


def _what_rows_look_at(w: np.ndarray, batch: Batch, i: int) -> str:
    """One head's map on sequence ``i`` in words: where its rows look most."""
    n = w.shape[-1]
    top = w.argmax(axis=-1)
    rows = np.arange(1, n)
    previous = int((top[rows] == rows - 1).sum())
    itself = int((top[rows] == rows).sum())
    first = int((top[2:] == 0).sum())  # row 1's letter before it is the first: counted once
    s, d, k = int(batch.first[i]), int(batch.second[i]), int(batch.length[i])
    scored = np.arange(d, d + k - 1)
    induction = int((top[scored] == s + (scored - d) + 1).sum())
    parts = [f"{previous} of {n - 1} positions look most at the letter just before them"]
    if itself:
        parts.append(f"{itself} at themselves")
    if first:
        parts.append(f"{first} at the first letter")
    parts.append(f"of the {len(scored)} positions in the second copy (but its last), "
                 f"{induction} look most at the letter after the earlier copy of their own")
    return "; ".join(parts)


def head_maps(model: TinyGPT, batch: Batch, i: int = 0) -> DescribedFigure:
    """Every head's map of attention weights on sequence ``i`` of ``batch``.

    Parameters
    ----------
    model : TinyGPT
    batch : course_lib.tiny_gpt.Batch
    i : int
        Which sequence of the batch.

    Examples
    --------
    >>> from course_lib.tiny_gpt import load_model, make_batch
    >>> fig = head_maps(load_model().model, make_batch(1, seed=6))
    >>> fig.description.split(":")[0]  # doctest: +NORMALIZE_WHITESPACE
    'Attention weights of the 4 heads (2 layers × 2 heads) on the sequence
     t c v b o u r l x z e w i g y u r l x z e w q s'
    """
    if not isinstance(batch, Batch) or not 0 <= i < len(batch):
        raise AttentionInputError(f"batch must be a course_lib.tiny_gpt.Batch and i one of "
                                  f"its sequences (got {type(batch).__name__}, i = {i!r})")
    weights = forward(model, batch.tokens[i]).weights  # (layers, heads, n, n)
    tokens = letters(batch.tokens[i])
    layers, heads, n, _ = weights.shape
    import matplotlib as mpl
    from matplotlib.figure import Figure

    # The maps are drawn as one image, a gap between them, in one axes: a grid of axes with
    # every letter as a tick label cost 3 s of CPU time to lay out (matplotlib measures each
    # label several times); here the letters label the outer rows and columns once.
    gap = 4  # room for the lower maps' titles: 1.6 rows of text and a clear space each side
    step = n + gap
    mosaic = np.full((layers * step - gap, heads * step - gap), np.nan)
    words = []
    for layer in range(layers):
        for head in range(heads):
            mosaic[layer * step:layer * step + n, head * step:head * step + n] = \
                weights[layer, head]
            words.append(f"head {layer}.{head}: "
                         f"{_what_rows_look_at(weights[layer, head], batch, i)}")
    fig = Figure(figsize=(0.16 * mosaic.shape[1] + 1.4, 0.16 * mosaic.shape[0] + 0.8))
    fig.subplots_adjust(left=0.07, right=0.84, bottom=0.02, top=0.88)
    ax = fig.add_subplot()
    cmap = mpl.colormaps[CMAP].with_extremes(bad=PAPER)
    image = ax.imshow(mosaic, cmap=cmap, vmin=0.0, vmax=1.0, aspect="equal",
                      interpolation="nearest")
    ax.set_xticks([h * step + j for h in range(heads) for j in range(n)], tokens * heads)
    ax.set_yticks([layer * step + j for layer in range(layers) for j in range(n)],
                  tokens * layers)
    ax.tick_params(length=0, pad=1, labelsize=7, top=True, labeltop=True, bottom=False,
                   labelbottom=False)
    for side in ax.spines.values():
        side.set_visible(False)
    for layer in range(layers):
        for head in range(heads):
            ax.text(head * step + n / 2 - 0.5, layer * step - (3.2 if layer == 0 else 1.4),
                    f"head {layer}.{head}", ha="center", va="bottom", fontsize=10)
    fig.colorbar(image, cax=fig.add_axes((0.88, 0.2, 0.02, 0.6)), label="weight")
    description = (f"Attention weights of the {layers * heads} heads ({layers} layers × "
                   f"{heads} heads) on the sequence {' '.join(tokens)}: rows are the "
                   f"positions that look, columns the letters they look at, each row "
                   f"summing to 1 over its own letter and the ones before it. "
                   + ". ".join(w[0].upper() + w[1:] for w in words) + ".")
    caption = (f"Each head's weights on {batch.marked(i)} (the segment's copies in "
               "brackets): a row is a position, its columns the letters it looks at.")
    return DescribedFigure(fig, description, caption)
