r"""Dropout on the attention weights: a random mask, in training only.

The original transformer (Vaswani et al., 2017) and BERT-style models such as
all-MiniLM-L6-v2 (``attention_probs_dropout_prob = 0.1``) apply dropout to the weights
after the softmax, while they train: each weight is kept with probability ``1 - p`` and
set to 0 otherwise, and the kept ones are divided by ``1 - p``,

.. math:: \tilde w_{ij} = \frac{m_{ij}}{1 - p}\, w_{ij},
          \qquad m_{ij} \sim \mathrm{Bernoulli}(1 - p),

so that on average over the draws every weight, and so every output
:math:`\sum_j \tilde w_{ij} v_j`, is what it was: :math:`E[\tilde w_{ij}] = w_{ij}`. One draw's
row no longer sums to 1 (its kept weights sum to their share divided by ``1 - p``): the
budget holds only on average. Outside training (``training=False``, a model's eval mode)
dropout does nothing, which is how a model computes its outputs, and how lesson 11's data
was recorded.

>>> w = np.array([[0.5, 0.3, 0.2]])
>>> attention_dropout(w, p=0.5, rng=np.random.default_rng(1))
array([[1. , 0.6, 0. ]])
>>> attention_dropout(w, p=0.5, training=False) is w
True
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .errors import AttentionInputError

__all__ = ["attention_dropout", "keep_mask"]


def _rate(p: float) -> float:
    if isinstance(p, bool) or not isinstance(p, int | float | np.floating) or not 0 <= p < 1:
        raise AttentionInputError(f"p must be a probability of dropping, 0 <= p < 1 (got {p!r})")
    return float(p)


def keep_mask(shape: tuple[int, ...], p: float, rng: np.random.Generator) -> NDArray[np.bool_]:
    """One draw of dropout's mask: ``True`` (kept) with probability ``1 - p`` each.

    Raises
    ------
    AttentionInputError
        If ``p`` is not in [0, 1) or ``rng`` is not a numpy Generator.

    Examples
    --------
    >>> keep_mask((2, 3), 0.5, np.random.default_rng(0))
    array([[ True, False, False],
           [False,  True,  True]])
    """
    p = _rate(p)
    if not isinstance(rng, np.random.Generator):
        raise AttentionInputError("rng must be a numpy Generator, e.g. "
                                  f"np.random.default_rng(0) (got {type(rng).__name__})")
    return rng.random(shape) >= p


def attention_dropout(weights: ArrayLike, p: float, rng: np.random.Generator | None = None,
                      *, training: bool = True) -> NDArray[np.float64]:
    """Dropout on a table of attention weights: zeros, and the rest divided by ``1 - p``.

    Parameters
    ----------
    weights : array_like, shape (..., n_q, n_k)
        Attention weights (rows summing to 1, though nothing here needs that).
    p : float
        The probability of dropping a weight, ``0 <= p < 1``.
    rng : numpy.random.Generator, optional
        The source of the draw; needed when ``training``. Seed it for the same draw twice.
    training : bool, default True
        Off (``False``), the weights come back as they are: dropout is for training only.

    Returns
    -------
    ndarray, the shape of ``weights``
        With ``training=False``, ``weights`` itself.

    Raises
    ------
    AttentionInputError
        If ``p`` is not in [0, 1), or ``training`` and no Generator is given.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> draws = [attention_dropout([0.5, 0.3, 0.2], 0.1, rng) for _ in range(20_000)]
    >>> np.mean(draws, axis=0).round(2)           # on average, the weights as they were
    array([0.5, 0.3, 0.2])
    >>> sorted({round(float(d.sum()), 2) for d in draws})  # one draw's sum: never 1 here
    [0.0, 0.22, 0.33, 0.56, 0.78, 0.89, 1.11]
    """
    p = _rate(p)
    if not training:
        return weights  # type: ignore[return-value]
    if rng is None:
        raise AttentionInputError("dropout in training draws at random: give rng, e.g. "
                                  "np.random.default_rng(0) (or training=False to switch it off)")
    w = np.asarray(weights, dtype=np.float64)
    return np.where(keep_mask(w.shape, p, rng), w / (1.0 - p), 0.0)
