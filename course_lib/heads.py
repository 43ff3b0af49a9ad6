r"""Many heads: split d_model into h heads, attend in each, concatenate, mix with W_O (lesson 09).

.. math::

    \mathrm{head}_i = \mathrm{Attention}(Q_i, K_i, V_i), \qquad
    \mathrm{MultiHead}(X) = \mathrm{Concat}(\mathrm{head}_1, \dots, \mathrm{head}_h)\, W_O

where ``Q = X W_Q`` (shape ``(..., n, d_model)``) is cut into ``h`` slices of
``d_k = d_model / h`` columns, ``Q_i`` being columns ``i·d_k … (i+1)·d_k − 1`` (the same for
``K`` and ``V``). Each head has its own ``n × n`` table of weights, so one head can follow
one relation while another follows a different one. The heads are stacked on their own
axis: a batch of sentences is ``(batch, heads, n, d_k)``, and every function of
:mod:`course_lib.attention` works on the last two axes, broadcasting over the others. That
is why the transpose of ``K`` must swap the last two axes only: ``K.T`` reverses **all**
axes of a 3-D or 4-D array.

=====================================  ==================================================
function                               what it does
=====================================  ==================================================
:func:`split_heads`                    ``(..., n, d_model)`` → ``(..., h, n, d_k)``
:func:`merge_heads`                    ``(..., h, n, d_k)`` → ``(..., n, h·d_k)`` (concat)
:func:`multi_head_attention`           the whole layer; returns the output and every map
:func:`heads_example`                  'the cat sat' with d_model = 4 and two heads
=====================================  ==================================================

The heads' maps in words and side by side are
:func:`course_lib.explore.describe.describe_heads` and
:func:`course_lib.explore.plots.head_maps`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .attention import attention
from .errors import AttentionInputError
from .projections import project

__all__ = [
    "HeadsExample",
    "heads_example",
    "merge_heads",
    "multi_head_attention",
    "split_heads",
]

FloatArray = NDArray[np.float64]


def _check_h(h: int) -> int:
    if isinstance(h, bool) or not isinstance(h, int | np.integer) or h < 1:
        raise AttentionInputError(f"h must be a positive whole number of heads (got {h!r})")
    return int(h)


def split_heads(x: ArrayLike, h: int) -> FloatArray:
    """Cut the last axis into ``h`` heads and move the heads in front of the tokens.

    Parameters
    ----------
    x : array_like, shape (..., n, d_model)
        Queries, keys or values of every token (``Q = X W_Q`` and so on).
    h : int
        Number of heads; must divide ``d_model``.

    Returns
    -------
    ndarray, shape (..., h, n, d_model // h)
        Head ``i`` holds columns ``i·d_k`` to ``(i+1)·d_k − 1`` of every token.

    Raises
    ------
    AttentionInputError
        If ``h`` does not divide ``d_model`` or ``x`` has fewer than 2 dimensions.

    Examples
    --------
    >>> Q = np.arange(12.0).reshape(3, 4)  # 3 tokens, d_model = 4
    >>> split_heads(Q, 2)  # 2 heads of d_k = 2
    array([[[ 0.,  1.],
            [ 4.,  5.],
            [ 8.,  9.]],
    <BLANKLINE>
           [[ 2.,  3.],
            [ 6.,  7.],
            [10., 11.]]])
    >>> split_heads(Q, 3)
    Traceback (most recent call last):
    ...
    course_lib.errors.AttentionInputError: h=3 heads must divide d_model=4 evenly, ... or 4
    """
    h = _check_h(h)
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim < 2:
        raise AttentionInputError(
            f"x must have shape (..., n, d_model), at least 2 dimensions (got shape {arr.shape})"
        )
    d_model = arr.shape[-1]
    if d_model % h:
        divisors = [str(d) for d in range(1, d_model + 1) if d_model % d == 0]
        listed = ", ".join(divisors[:-1]) + f" or {divisors[-1]}" if len(divisors) > 1 else (
            divisors[0])
        raise AttentionInputError(
            f"h={h} heads must divide d_model={d_model} evenly, d_k = d_model / h (got x of "
            f"shape {arr.shape}); try h = {listed}"
        )
    heads = arr.reshape(*arr.shape[:-1], h, d_model // h)  # (..., n, h, d_k)
    return np.swapaxes(heads, -3, -2)  # (..., h, n, d_k)


def merge_heads(x: ArrayLike) -> FloatArray:
    """Concatenate the heads again: the inverse of :func:`split_heads`.

    Parameters
    ----------
    x : array_like, shape (..., h, n, d_k)

    Returns
    -------
    ndarray, shape (..., n, h * d_k)
        Token ``t``'s row is head 0's row ``t``, then head 1's, and so on.

    Raises
    ------
    AttentionInputError
        If ``x`` has fewer than 3 dimensions (it has no heads axis).

    Examples
    --------
    >>> Q = np.arange(12.0).reshape(3, 4)
    >>> np.array_equal(merge_heads(split_heads(Q, 2)), Q)
    True
    """
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim < 3:
        raise AttentionInputError(
            f"x must have shape (..., h, n, d_k), at least 3 dimensions (got shape {arr.shape})"
        )
    h, n, d_k = arr.shape[-3:]
    return np.swapaxes(arr, -3, -2).reshape(*arr.shape[:-3], n, h * d_k)


def _check_w(name: str, w: ArrayLike, rows: int, what: str) -> FloatArray:
    arr = np.asarray(w, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[0] != rows:
        raise AttentionInputError(
            f"{name} must have shape ({rows}, d_model_out), {rows} rows, one per {what} "
            f"(got shape {arr.shape})"
        )
    if not np.isfinite(arr).all():
        raise AttentionInputError(f"{name} must hold finite numbers")
    return arr


def multi_head_attention(
    X: ArrayLike,
    W_Q: ArrayLike,
    W_K: ArrayLike,
    W_V: ArrayLike,
    W_O: ArrayLike,
    h: int,
    mask: ArrayLike | None = None,
) -> tuple[FloatArray, FloatArray]:
    r"""Multi-head attention: project, split into ``h`` heads, attend, concatenate, ``W_O``.

    Parameters
    ----------
    X : array_like, shape (..., n, d_model)
        Token embeddings; leading axes are a batch.
    W_Q, W_K : array_like, shape (d_model, d_model)
        Query and key projections (``h`` heads of ``d_k = d_model / h`` columns each).
    W_V : array_like, shape (d_model, d_v_total)
        Value projection; ``h`` must divide its columns too.
    W_O : array_like, shape (d_v_total, d_out)
        The output projection, applied to the concatenated heads.
    h : int
        Number of heads.
    mask : array_like of bool, optional
        Broadcastable to ``(..., h, n, n)`` (an ``(n, n)`` causal mask works for all heads).

    Returns
    -------
    output : ndarray, shape (..., n, d_out)
    weights : ndarray, shape (..., h, n, n)
        Every head's attention weights.

    Raises
    ------
    AttentionInputError
        If the shapes do not fit (with what was expected and what arrived), or ``h`` does
        not divide ``d_model``.

    Examples
    --------
    >>> ex = heads_example()
    >>> out, w = multi_head_attention(ex.X, ex.W_Q, ex.W_K, ex.W_V, ex.W_O, h=2)
    >>> w.shape, out.shape
    ((2, 3, 3), (3, 4))
    >>> w[:, 2].round(2)  # what 'sat' attends to, in head 0 and in head 1
    array([[0.25, 0.5 , 0.25],
           [0.67, 0.16, 0.16]])
    """
    h = _check_h(h)
    Q, K, V = project(X, W_Q, W_K, W_V)
    split = [split_heads(a, h) for a in (Q, K, V)]
    out_heads, weights = attention(*split, mask=mask)
    concat = merge_heads(out_heads)
    w_o = _check_w("W_O", W_O, concat.shape[-1], "column of the concatenated heads")
    return concat @ w_o, weights


@dataclass(frozen=True)
class HeadsExample:
    """'the cat sat' with d_model = 4 and the four matrices of a multi-head layer.

    Attributes
    ----------
    tokens : tuple of str
    X : ndarray, shape (n, d_model)
    W_Q, W_K, W_V, W_O : ndarray, shape (d_model, d_model)
    """

    tokens: tuple[str, ...]
    X: FloatArray
    W_Q: FloatArray
    W_K: FloatArray
    W_V: FloatArray
    W_O: FloatArray


def heads_example() -> HeadsExample:
    """'the cat sat' with ``d_model = 4``, built so that two heads of ``d_k = 2`` differ.

    The embeddings are lesson 08's with a fourth feature that is 1 for every token. Head 0
    (columns 0-1 of ``W_Q``, ``W_K``, ``W_V``) is lesson 08's projection: 'sat' looks most at
    'cat'. Head 1 (columns 2-3) gives every token the same query, and 'the' the one key
    that matches it: every token looks most at 'the'. ``W_O`` adds the two heads' outputs
    in its first two output columns and keeps head 1's alone in the last two.

    Examples
    --------
    >>> ex = heads_example()
    >>> ex.X
    array([[1., 0., 0., 1.],
           [0., 1., 0., 1.],
           [1., 1., 1., 1.]])
    >>> (ex.X @ ex.W_Q)[:, 2:]  # head 1's queries: all the same
    array([[1., 0.],
           [1., 0.],
           [1., 0.]])
    """
    X = np.array([[1.0, 0, 0, 1], [0, 1, 0, 1], [1, 1, 1, 1]])
    W_Q = np.array([[1.0, 0, 0, 0], [0, 1, 0, 0], [0, 0, 0, 0], [0, 0, 1, 0]])
    W_K = np.array([[1.0, 0, 2, 0], [1, 1, 0, 1], [-1, -1, -2, 0], [0, 0, 0, 0]])
    W_V = np.array([[1.0, 0, 1, 0], [0, 2, 0, 1], [1, 0, 0, 0], [0, 0, 0, 0]])
    W_O = np.array([[1.0, 0, 0, 0], [0, 1, 0, 0], [1, 0, 1, 0], [0, 1, 0, 1]])
    return HeadsExample(("the", "cat", "sat"), X, W_Q, W_K, W_V, W_O)
