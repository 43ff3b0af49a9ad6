r"""Online softmax: softmax(scores) · V over blocks of keys, without the whole row at once.

Lesson 04 subtracts each row's maximum before ``exp``. Here the keys arrive in blocks, so
the maximum is not known in advance: each row keeps a *running* state of three numbers
(per query)

========================  ============================================================
``running_max``           :math:`m`, the largest score seen so far (``-inf`` at the start)
``running_sum``           :math:`\ell = \sum_j e^{s_j - m}` over the keys seen so far
``partial_output``        :math:`o = \sum_j e^{s_j - m}\, v_j`, not yet divided by :math:`\ell`
========================  ============================================================

and updates it with each block of scores :math:`s_B` and values :math:`V_B`:

.. math::

    m' = \max(m, \max_j s_{B,j}), \qquad c = e^{m - m'}, \qquad p = e^{s_B - m'},

    \ell' = c\,\ell + \sum_j p_j, \qquad o' = c\,o + p\,V_B .

When the maximum grows, everything summed so far was exponentiated against the old,
smaller maximum, so both the sum and the partial output are multiplied by the correction
:math:`c = e^{m - m'} \le 1`; when it does not grow, :math:`c = 1`. After the last block,
:math:`o / \ell` is exactly ``softmax(scores) @ V`` (up to rounding), and no row of
weights was ever held whole. :func:`course_lib.tiled.tiled_attention` runs this step on
every pair of a block of queries and a block of keys.

Shapes: ``block_scores`` is ``(..., n_q, b)`` for ``b`` keys of the block, ``block_values``
``(..., b, d_v)``; the state is ``(..., n_q)``, ``(..., n_q)`` and ``(..., n_q, d_v)``. A
hidden score is ``-inf`` (weight exactly 0); a row whose block is all hidden keeps its state.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .attention import _as_float_array, _check_batch, _check_finite, _check_matrix
from .errors import AttentionInputError

__all__ = [
    "OnlineSoftmaxState",
    "online_softmax",
    "online_softmax_finish",
    "online_softmax_start",
    "online_softmax_step",
]

FloatArray = NDArray[np.float64]


class OnlineSoftmaxState(NamedTuple):
    """The running state of an online softmax, one entry per query row.

    A tuple, so ``running_max, running_sum, partial_output = state`` unpacks it.

    Attributes
    ----------
    running_max : ndarray, shape (..., n_q)
        The largest score seen so far in each row (``-inf`` before the first key).
    running_sum : ndarray, shape (..., n_q)
        :math:`\\sum_j e^{s_j - m}` over the keys seen so far, with ``m = running_max``.
    partial_output : ndarray, shape (..., n_q, d_v)
        :math:`\\sum_j e^{s_j - m} v_j`: the output before dividing by ``running_sum``.
    """

    running_max: FloatArray
    running_sum: FloatArray
    partial_output: FloatArray


def online_softmax_start(n_q: int, d_v: int, batch_shape: tuple[int, ...] = ()
                         ) -> OnlineSoftmaxState:
    """The state before any key: maximum ``-inf``, sum 0, partial output 0.

    Parameters
    ----------
    n_q : int
        Number of query rows.
    d_v : int
        Length of each value vector.
    batch_shape : tuple of int, default ()
        Leading (batch/head) dimensions.

    Returns
    -------
    OnlineSoftmaxState

    Raises
    ------
    AttentionInputError
        If ``n_q`` or ``d_v`` is not a positive integer.

    Examples
    --------
    >>> running_max, running_sum, partial_output = online_softmax_start(2, 3)
    >>> running_max, running_sum, partial_output.shape
    (array([-inf, -inf]), array([0., 0.]), (2, 3))
    """
    for name, value in (("n_q", n_q), ("d_v", d_v)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
            raise AttentionInputError(f"{name} must be a positive integer (got {value!r})")
    shape = (*tuple(batch_shape), int(n_q))
    return OnlineSoftmaxState(np.full(shape, -np.inf), np.zeros(shape),
                              np.zeros((*shape, int(d_v))))


def _step(running_max: FloatArray, running_sum: FloatArray, partial_output: FloatArray,
          block_scores: FloatArray, block_values: FloatArray) -> OnlineSoftmaxState:
    """The update on checked arrays of our own: the scores and the state are overwritten.

    ``running_sum`` and ``partial_output`` must already have the state's full (broadcast)
    shape; they are rescaled and added to in place, so a tile costs no extra copies.
    """
    new_max = np.maximum(running_max, block_scores.max(axis=-1))
    # a row that has seen only hidden keys keeps m' = -inf; shifting it by 0 instead
    # gives exp(-inf) = 0 for its correction and its block, never -inf - (-inf) = NaN
    shift = np.where(np.isneginf(new_max), 0.0, new_max)
    correction = np.exp(running_max - shift)
    if block_scores.shape[:-1] == shift.shape:
        block_scores -= shift[..., None]  # in place: no second tile
    else:  # the state has batch dimensions the scores broadcast to
        block_scores = block_scores - shift[..., None]
    p = np.exp(block_scores, out=block_scores)
    running_sum *= correction
    running_sum += p.sum(axis=-1)
    partial_output *= correction[..., None]
    partial_output += np.matmul(p, block_values)
    return OnlineSoftmaxState(new_max, running_sum, partial_output)


def online_softmax_step(
    running_max: ArrayLike,
    running_sum: ArrayLike,
    partial_output: ArrayLike,
    block_scores: ArrayLike,
    block_values: ArrayLike,
) -> OnlineSoftmaxState:
    r"""Take one block of keys into the running state of an online softmax.

    .. math::

        m' = \max(m, \max_j s_j), \quad c = e^{m - m'}, \quad p = e^{s - m'}, \quad
        \ell' = c\,\ell + \textstyle\sum_j p_j, \quad o' = c\,o + p\,V_B .

    Parameters
    ----------
    running_max : array_like, shape (..., n_q)
        The largest score seen so far per row (``-inf`` at the start).
    running_sum : array_like, shape (..., n_q)
        The sum of ``exp(score - running_max)`` over the keys seen so far.
    partial_output : array_like, shape (..., n_q, d_v)
        The sum of ``exp(score - running_max) * value`` over the keys seen so far.
    block_scores : array_like, shape (..., n_q, b)
        The (scaled) scores of every query against the ``b`` keys of this block; ``-inf``
        for a hidden key. Not written to.
    block_values : array_like, shape (..., b, d_v)
        The values of the block's keys.

    Returns
    -------
    OnlineSoftmaxState
        The new ``(running_max, running_sum, partial_output)``.

    Raises
    ------
    AttentionInputError
        If a shape does not fit the others, a score is NaN or ``+inf``, or a state or value
        is not finite (``running_max`` may be ``-inf``).

    Examples
    --------
    Two blocks of one row; the second raises the maximum from 1 to 3, so the sum and the
    partial output of the first are scaled by :math:`e^{1 - 3}`:

    >>> state = online_softmax_start(1, 1)
    >>> state = online_softmax_step(*state, [[1.0, 0.0]], [[10.0], [20.0]])
    >>> state = online_softmax_step(*state, [[3.0]], [[30.0]])
    >>> state.running_max
    array([3.])
    >>> online_softmax_finish(state).round(6)
    array([[27.295995]])
    >>> from course_lib import softmax
    >>> (softmax([1.0, 0.0, 3.0]) @ [10.0, 20.0, 30.0]).round(6)
    np.float64(27.295995)
    """
    s = _as_float_array("block_scores", block_scores, min_ndim=2, layout="(..., n_q, b)")
    if np.isnan(s).any() or np.isposinf(s).any():
        raise AttentionInputError(
            f"block_scores must hold finite scores or -inf for hidden keys (got NaN or +inf "
            f"in an array of shape {s.shape})"
        )
    v = _check_matrix("block_values", block_values, "b", "d_v")
    m = _as_float_array("running_max", running_max, min_ndim=1, layout="(..., n_q)")
    if np.isnan(m).any() or np.isposinf(m).any():
        raise AttentionInputError("running_max must hold finite numbers or -inf (got NaN or "
                                  "+inf)")
    total = _as_float_array("running_sum", running_sum, min_ndim=1, layout="(..., n_q)")
    _check_finite("running_sum", total)
    o = _check_matrix("partial_output", partial_output, "n_q", "d_v")
    n_q, b, d_v = s.shape[-2], s.shape[-1], v.shape[-1]
    if v.shape[-2] != b:
        raise AttentionInputError(
            f"block_values has {v.shape[-2]} rows but block_scores has b={b} columns "
            f"(block_scores shape {s.shape}, block_values shape {v.shape}); each key of the "
            "block needs exactly one value"
        )
    for name, arr, want in (("running_max", m, (n_q,)), ("running_sum", total, (n_q,)),
                            ("partial_output", o, (n_q, d_v))):
        if arr.shape[-len(want):] != want:
            raise AttentionInputError(
                f"{name} must end in shape {want} to match block_scores {s.shape} and "
                f"block_values {v.shape} (got shape {arr.shape})"
            )
    _check_batch(("block_scores", "block_values", "partial_output"), (s, v, o))
    shape = np.broadcast_shapes(m.shape, total.shape, o.shape[:-1], s.shape[:-1],
                                (*v.shape[:-2], n_q))
    # copies of our own, in the state's full shape: the caller's arrays are never written
    return _step(m, np.array(np.broadcast_to(total, shape)),
                 np.array(np.broadcast_to(o, (*shape, d_v))), np.array(s), v)


def online_softmax_finish(state: OnlineSoftmaxState) -> FloatArray:
    """Divide the partial output by the running sum: the attention output.

    Parameters
    ----------
    state : OnlineSoftmaxState
        After every block of keys has been taken in.

    Returns
    -------
    ndarray, shape (..., n_q, d_v)

    Raises
    ------
    AttentionInputError
        If some row has seen no visible key (its running sum is 0).

    Examples
    --------
    >>> state = online_softmax_step(*online_softmax_start(1, 2), [[0.0, 0.0]],
    ...                             [[1.0, 0.0], [0.0, 1.0]])
    >>> online_softmax_finish(state)
    array([[0.5, 0.5]])
    """
    _, running_sum, partial_output = state
    running_sum = np.asarray(running_sum, dtype=np.float64)
    if not (running_sum > 0).all():
        raise AttentionInputError(
            "every row must have seen at least one visible key before finishing (got a "
            "running_sum of 0: all its keys were hidden or no block was taken in)"
        )
    return np.asarray(partial_output, dtype=np.float64) / running_sum[..., None]


def online_softmax(scores: ArrayLike, values: ArrayLike, *, block_k: int = 64) -> FloatArray:
    """``softmax(scores) @ values`` computed over blocks of ``block_k`` keys.

    The row-wise softmax is never formed: each block goes through
    :func:`online_softmax_step`. Pass ``values = np.eye(n_k)`` to get the weights
    themselves.

    Parameters
    ----------
    scores : array_like, shape (..., n_q, n_k)
        Scaled scores; ``-inf`` hides a key.
    values : array_like, shape (..., n_k, d_v)
    block_k : int, default 64
        Keys per block; the last block may be shorter.

    Returns
    -------
    ndarray, shape (..., n_q, d_v)

    Raises
    ------
    AttentionInputError
        As :func:`online_softmax_step`; also if ``block_k`` is not a positive integer or
        a row hides every key.

    Examples
    --------
    >>> from course_lib import softmax
    >>> x = np.array([[0.5, -1.0, 1.3, 0.1, 2.0]])
    >>> bool(np.allclose(online_softmax(x, np.eye(5), block_k=2), softmax(x)))
    True
    """
    s = _as_float_array("scores", scores, min_ndim=2, layout="(..., n_q, n_k)")
    v = _check_matrix("values", values, "n_k", "d_v")
    block = _check_block("block_k", block_k)
    n_k = s.shape[-1]
    if n_k == 0 or s.shape[-2] == 0:
        raise AttentionInputError(f"scores must have at least one row and one key (got "
                                  f"shape {s.shape})")
    if v.shape[-2] != n_k:
        raise AttentionInputError(
            f"values has {v.shape[-2]} rows but scores has n_k={n_k} columns (scores shape "
            f"{s.shape}, values shape {v.shape}); each key needs exactly one value"
        )
    _check_batch(("scores", "values"), (s, v))
    batch = np.broadcast_shapes(s.shape[:-2], v.shape[:-2])
    state = online_softmax_start(s.shape[-2], v.shape[-1], batch)
    for start in range(0, n_k, block):
        state = online_softmax_step(*state, s[..., start:start + block],
                                    v[..., start:start + block, :])
    return online_softmax_finish(state)


def _check_block(name: str, value: int) -> int:
    """A block size: a positive integer, or raise."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise AttentionInputError(f"{name} must be a positive integer number of rows per "
                                  f"block (got {value!r})")
    return int(value)
