r"""Sentences of different lengths in one batch: padding, and the mask that hides it.

A model computes a batch of sentences at once, as one array ``(batch, n, d)``, so every
sentence must have the same number of tokens ``n``: the shorter ones are **padded** with a
filler token (BERT's ``[PAD]``) up to the longest. The filler has a key and a value like
any token, so without a mask every real token would give it some weight, and a real
sentence's outputs would depend on how many fillers its batch gave it. The **padding mask**
hides the padding *keys*: each query, real or filler, attends only to its sentence's real
tokens. A filler's own output is computed (it must see at least one key, or its row would
be 0/0) and thrown away.

>>> lengths = [3, 2]                       # two sentences, padded to n = 3
>>> padding_mask(lengths)                  # True where a token is real
array([[ True,  True,  True],
       [ True,  True, False]])
>>> key_mask(lengths).shape                # (batch, 1 query axis, keys): every query alike
(2, 1, 3)
>>> key_mask(lengths, heads=True).shape    # (batch, heads axis, query axis, keys)
(2, 1, 1, 3)

``attention_weights(Q, K, mask=key_mask(lengths, heads=True))`` then gives, for every real
query of every sentence, exactly the weights of that sentence run alone (lesson 11 shows it
on all-MiniLM-L6-v2, and :func:`course_lib.real_model.model_forward.run_padded` runs the
whole model on a padded batch).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .errors import AttentionInputError

__all__ = ["key_mask", "pad", "padding_mask"]


def _lengths(lengths: ArrayLike, n: int | None) -> tuple[NDArray[np.int64], int]:
    arr = np.asarray(lengths)
    if (arr.ndim != 1 or arr.size == 0 or not np.issubdtype(arr.dtype, np.integer)
            or (arr < 1).any()):
        raise AttentionInputError(
            "lengths must be one positive whole number of real tokens per sentence, e.g. "
            f"[9, 8] (got {np.asarray(lengths).tolist()!r})")
    longest = int(arr.max())
    if n is None:
        n = longest
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < longest:
        raise AttentionInputError(f"n must be a whole number of tokens at least the longest "
                                  f"sentence's {longest} (got {n!r})")
    return arr.astype(np.int64), int(n)


def padding_mask(lengths: ArrayLike, n: int | None = None) -> NDArray[np.bool_]:
    """Which tokens of a padded batch are real: ``True`` for the first ``lengths[b]``.

    Parameters
    ----------
    lengths : array_like of int, shape (batch,)
        The number of real tokens of each sentence, at least 1.
    n : int, optional
        The padded length; the longest sentence's by default.

    Returns
    -------
    ndarray of bool, shape (batch, n)

    Raises
    ------
    AttentionInputError
        If a length is not a positive whole number, or ``n`` is shorter than one.

    Examples
    --------
    >>> padding_mask([2, 1], n=3)
    array([[ True,  True, False],
           [ True, False, False]])
    """
    arr, n = _lengths(lengths, n)
    return np.arange(n) < arr[:, None]


def key_mask(lengths: ArrayLike, n: int | None = None, *, heads: bool = False
             ) -> NDArray[np.bool_]:
    """The attention mask of a padded batch: every query may attend to its real keys only.

    The padding mask of :func:`padding_mask` put on the *key* axis (the last) of the table
    of weights, with an axis of length 1 for the queries (so that it hides the same keys
    from every query) and, with ``heads``, one for the heads.

    Parameters
    ----------
    lengths : array_like of int, shape (batch,)
    n : int, optional
    heads : bool, default False
        For weights of shape (batch, heads, n, n) rather than (batch, n, n).

    Returns
    -------
    ndarray of bool, shape (batch, 1, n), or (batch, 1, 1, n) with ``heads``

    Examples
    --------
    >>> key_mask([2, 1])
    array([[[ True,  True]],
    <BLANKLINE>
           [[ True, False]]])
    """
    real = padding_mask(lengths, n)
    return real[:, None, None, :] if heads else real[:, None, :]


def pad(sequences: Sequence[ArrayLike], n: int | None = None, *, value: float = 0.0
        ) -> NDArray[np.float64]:
    """Stack arrays of different numbers of tokens into one batch, padding with ``value``.

    Parameters
    ----------
    sequences : sequence of array_like, each of shape (..., n_b, d)
        One array per sentence, its tokens on the second-to-last axis (a layer's
        ``(heads, n, d_k)`` queries, say); the other axes alike for all.
    n : int, optional
        The padded length; the longest sentence's by default.
    value : float, default 0.0
        What the padding rows hold. With the key mask it never shows.

    Returns
    -------
    ndarray, shape (batch, ..., n, d)

    Raises
    ------
    AttentionInputError
        If there is no sequence, or their other axes differ.

    Examples
    --------
    >>> pad([np.ones((2, 1)), np.ones((1, 1))]).tolist()
    [[[1.0], [1.0]], [[1.0], [0.0]]]
    """
    arrays = [np.asarray(s, dtype=np.float64) for s in sequences]
    if not arrays or any(a.ndim < 2 for a in arrays) or len(
            {a.shape[:-2] + a.shape[-1:] for a in arrays}) != 1:
        raise AttentionInputError(
            "sequences must be one or more arrays of shape (..., n_b, d) that differ only in "
            f"n_b (got shapes {[a.shape for a in arrays]})")
    _, n = _lengths([a.shape[-2] for a in arrays], n)
    out = np.full((len(arrays), *arrays[0].shape[:-2], n, arrays[0].shape[-1]), float(value))
    for b, a in enumerate(arrays):
        out[b, ..., : a.shape[-2], :] = a
    return out
