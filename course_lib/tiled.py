r"""Tiled attention: the same equation, computed without its n × n table.

:func:`course_lib.attention` builds the whole ``(n_q, n_k)`` table of weights: memory
:math:`8\,n_q n_k` bytes. :func:`tiled_attention` cuts the queries into blocks of
``block_q`` rows and the keys into blocks of ``block_k``; for each block of queries it
streams over the blocks of keys with :func:`course_lib.online_softmax.online_softmax_step`
(the running maximum, the running sum and the rescaled partial output), so besides the
inputs and the output it holds only a few arrays the size of one ``(block_q, block_k)``
tile or one ``(block_q, d_v)`` block of output. Memory grows like :math:`n`, not
:math:`n^2`; the arithmetic is the same :math:`O(n^2 d)`. This is the idea of
FlashAttention (Dao et al., 2022), in numpy; :mod:`course_lib.experiments.memory_cost`
measures both.

A block of keys that the mask (or ``causal=True``) hides from every query of the block is
skipped: its scores are not computed at all. With a causal mask that is about half the
blocks.

The output equals :func:`course_lib.attention`'s up to rounding, for any block sizes: the
sums are the same, taken in another order (differences of a few 1e-14 for values of size
10 and a few hundred keys; the tests hold it to 1e-12 in float64).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .attention import _check_mask, _check_q_k_v
from .errors import AttentionInputError
from .online_softmax import _check_block, _step, online_softmax_start

__all__ = ["computed_tiles", "tiled_attention"]

FloatArray = NDArray[np.float64]


def tiled_attention(
    Q: ArrayLike,
    K: ArrayLike,
    V: ArrayLike,
    *,
    block_q: int = 64,
    block_k: int = 64,
    mask: ArrayLike | None = None,
    causal: bool = False,
) -> FloatArray:
    r"""Scaled dot-product attention in tiles, with an online softmax: no n × n table.

    .. math:: \mathrm{softmax}\!\left(\frac{QK^T}{\sqrt{d_k}}\right) V,
              \text{ one } (b_q \times b_k) \text{ tile of scores at a time.}

    Parameters
    ----------
    Q : array_like, shape (..., n_q, d_k)
    K : array_like, shape (..., n_k, d_k)
    V : array_like, shape (..., n_k, d_v)
        As for :func:`course_lib.attention`; leading batch/head dimensions broadcast.
    block_q : int, default 64
        Queries per block; the last block may be shorter.
    block_k : int, default 64
        Keys per block; the last block may be shorter.
    mask : array_like of bool, optional
        Broadcastable to ``(..., n_q, n_k)``; ``True`` = may attend, as for
        :func:`course_lib.attention`. A tile hidden from every query is skipped.
    causal : bool, default False
        Apply the causal mask ``causal_mask(n)`` without building it (``n_q`` must equal
        ``n_k``); tiles above the diagonal are skipped. Combines with ``mask``.

    Returns
    -------
    ndarray, shape (..., n_q, d_v)
        The attention output (the weights are never formed, so they are not returned).

    Raises
    ------
    AttentionInputError
        With the same messages as :func:`course_lib.attention` for bad ``Q``, ``K``,
        ``V`` or ``mask``; also if a block size is not a positive integer, or ``causal``
        is asked for with ``n_q != n_k``.

    Examples
    --------
    >>> from course_lib import attention, causal_mask
    >>> rng = np.random.default_rng(0)
    >>> Q, K, V = (rng.normal(size=(2, 10, 4)) for _ in range(3))  # 2 heads, 10 tokens
    >>> out = tiled_attention(Q, K, V, block_q=3, block_k=4)  # 3 and 4 do not divide 10
    >>> out.shape
    (2, 10, 4)
    >>> float(np.abs(out - attention(Q, K, V)[0]).max()) < 1e-12
    True
    >>> causal = tiled_attention(Q, K, V, block_q=3, block_k=4, causal=True)
    >>> float(np.abs(causal - attention(Q, K, V, mask=causal_mask(10))[0]).max()) < 1e-12
    True
    """
    q, k, v = _check_q_k_v(Q, K, V)
    bq, bk = _check_block("block_q", block_q), _check_block("block_k", block_k)
    n_q, n_k, d_v = q.shape[-2], k.shape[-2], v.shape[-1]
    batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    _check_causal(causal, n_q, n_k)
    m = None
    if mask is not None:
        m = np.broadcast_to(_check_mask(mask, (*batch, n_q, n_k)), (*batch, n_q, n_k))
    if causal:
        _check_causal_with_mask(m, batch, n_q)
    sqrt_dk = math.sqrt(q.shape[-1])
    out = np.empty((*batch, n_q, d_v))
    for q0 in range(0, n_q, bq):
        q1 = min(q0 + bq, n_q)
        q_block = q[..., q0:q1, :]
        state = online_softmax_start(q1 - q0, d_v, batch)
        for k0 in range(0, n_k, bk):
            k1 = min(k0 + bk, n_k)
            visible = _visible_tile(m, causal, q0, q1, k0, k1)
            if visible is False:
                continue  # hidden from every query of the block: not computed at all
            tile = np.matmul(q_block, np.swapaxes(k[..., k0:k1, :], -1, -2))
            tile /= sqrt_dk  # as attention does: the same scores, to the last bit
            if visible is not True:
                if np.broadcast_shapes(tile.shape, visible.shape) == tile.shape:
                    np.copyto(tile, -np.inf, where=~visible)
                else:  # the mask has batch dimensions that Q and K broadcast to
                    tile = np.where(visible, tile, -np.inf)
            state = _step(*state, tile, v[..., k0:k1, :])
        np.divide(state.partial_output, state.running_sum[..., None], out=out[..., q0:q1, :])
    return out


def computed_tiles(
    n_q: int,
    n_k: int,
    *,
    block_q: int = 64,
    block_k: int = 64,
    mask: ArrayLike | None = None,
    causal: bool = False,
) -> NDArray[np.bool_]:
    """Which tiles :func:`tiled_attention` computes (``True``) and which it skips.

    The same test that :func:`tiled_attention` applies to each tile: a tile is skipped when
    the mask (or ``causal``) hides all of its entries from every query, in every batch.

    Parameters
    ----------
    n_q, n_k : int
        Numbers of queries and keys.
    block_q, block_k : int, default 64
    mask : array_like of bool, optional
        Broadcastable to ``(..., n_q, n_k)``, as for :func:`tiled_attention`.
    causal : bool, default False

    Returns
    -------
    ndarray of bool, shape (ceil(n_q / block_q), ceil(n_k / block_k))

    Raises
    ------
    AttentionInputError
        As :func:`tiled_attention` for the sizes, blocks and mask.

    Examples
    --------
    >>> grid = computed_tiles(256, 256, block_q=64, block_k=64, causal=True)
    >>> grid.astype(int)
    array([[1, 0, 0, 0],
           [1, 1, 0, 0],
           [1, 1, 1, 0],
           [1, 1, 1, 1]])
    >>> f"{int(grid.sum())} of {grid.size} tiles computed"
    '10 of 16 tiles computed'
    """
    for name, value in (("n_q", n_q), ("n_k", n_k)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
            raise AttentionInputError(f"{name} must be a positive integer (got {value!r})")
    bq, bk = _check_block("block_q", block_q), _check_block("block_k", block_k)
    _check_causal(causal, int(n_q), int(n_k))
    m = None
    if mask is not None:
        m = np.asarray(mask)
        shape = (*np.broadcast_shapes(m.shape[:-2]), int(n_q), int(n_k))
        m = np.broadcast_to(_check_mask(m, shape), shape)
    q_starts, k_starts = range(0, int(n_q), bq), range(0, int(n_k), bk)
    return np.array([[_visible_tile(m, causal, q0, min(q0 + bq, n_q), k0, min(k0 + bk, n_k))
                      is not False for k0 in k_starts] for q0 in q_starts], dtype=bool)


def _check_causal(causal: bool, n_q: int, n_k: int) -> None:
    if not isinstance(causal, bool | np.bool_):
        raise AttentionInputError(f"causal must be True or False (got {causal!r})")
    if causal and n_q != n_k:
        raise AttentionInputError(
            f"causal=True needs as many queries as keys, the causal_mask(n) of the course "
            f"(got n_q={n_q}, n_k={n_k}); pass a boolean mask of shape (n_q, n_k) instead"
        )


def _check_causal_with_mask(m: NDArray[np.bool_] | None, batch: tuple[int, ...],
                            n: int) -> None:
    """With ``causal`` and a mask, every query must still see a key through both."""
    if m is None:
        return  # a causal mask alone lets every token see itself
    row_sees = np.zeros((*batch, n), dtype=bool)
    for i in range(n):
        row_sees[..., i] = m[..., i, : i + 1].any(axis=-1)
    if not row_sees.all():
        where = tuple(int(i) for i in np.argwhere(~row_sees)[0])
        raise AttentionInputError(
            f"mask together with causal=True hides every key from query row {where[-1]}"
            f"{' in batch index ' + str(where[:-1]) if len(where) > 1 else ''}: softmax over "
            "nothing is 0/0 = NaN"
        )


def _visible_tile(
    m: NDArray[np.bool_] | None, causal: bool, q0: int, q1: int, k0: int, k1: int
) -> bool | NDArray[np.bool_]:
    """``True`` if every entry of the tile is visible, ``False`` if none is, else the tile."""
    if causal and k0 > q1 - 1:
        return False  # every key of the tile comes after every query of the block
    part = None if m is None else m[..., q0:q1, k0:k1]
    if causal and k1 - 1 > q0:  # the diagonal crosses the tile
        below = np.arange(q0, q1)[:, None] >= np.arange(k0, k1)[None, :]
        part = below if part is None else part & below
    if part is None:
        return True
    if not part.any():
        return False
    if part.all():
        return True
    return part
