r"""Scaled dot-product attention, one term at a time.

.. math:: \mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{QK^T}{\sqrt{d_k}}\right) V

Each term of the equation is its own function, named as the lessons name it:

========================  ================================  ========================
term                      function                          lesson
========================  ================================  ========================
:math:`QK^T`              :func:`scores`                    02 (the scores)
:math:`/\sqrt{d_k}`       :func:`scaled_scores`             03 (the scaling)
row-wise softmax          :func:`softmax`                   04 (softmax)
:math:`\cdot V`           :func:`blend`                     05 (the blend)
all of it                 :func:`attention`                 06 (worked example)
causal mask               :func:`causal_mask`               07 (masking)
========================  ================================  ========================

Shapes follow the lessons: ``Q`` is ``(..., n_q, d_k)``, ``K`` is ``(..., n_k, d_k)`` and
``V`` is ``(..., n_k, d_v)``. Leading batch or head dimensions broadcast as they do in
:func:`numpy.matmul`. Everything is computed in float64 with numpy alone.

Bad input raises :class:`~course_lib.errors.AttentionInputError` (a :class:`ValueError`)
whose message says which argument was wrong, what was expected and what arrived.

Cost: the ``(..., n_q, n_k)`` table is the only large array. Each function allocates it
once and then works on it in place (scale, shift, ``exp``, normalise), the same passes as
the bare numpy expression; the checks on ``Q``, ``K`` and ``V`` read the small
``(n, d)`` arrays, and the checks on the scores reuse the row maxima that the stable
softmax computes anyway. An array passed in by the caller is never written to.
``benchmarks/attention_speed.py`` compares :func:`attention` with the bare expression.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .errors import AttentionInputError

__all__ = [
    "attention",
    "attention_weights",
    "blend",
    "causal_mask",
    "row_entropy",
    "scaled_scores",
    "scores",
    "softmax",
    "softmax_jacobian",
]

FloatArray = NDArray[np.float64]


# --------------------------------------------------------------------------------------
# input checks (private): each turns a bad input into a message a student can act on
# --------------------------------------------------------------------------------------


def _as_float_array(name: str, x: ArrayLike, *, min_ndim: int, layout: str) -> FloatArray:
    """Return ``x`` as a float64 array with at least ``min_ndim`` dims, or raise."""
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise AttentionInputError(
            f"{name} must be an array of numbers of shape {layout} "
            f"(got {type(x).__name__} that numpy cannot turn into floats: {exc})"
        ) from None
    if arr.ndim < min_ndim:
        raise AttentionInputError(
            f"{name} must have at least {min_ndim} dimensions, shape {layout} "
            f"(got shape {arr.shape})"
        )
    return arr


def _check_not_empty(name: str, arr: FloatArray, axes: Sequence[tuple[int, str]]) -> None:
    for axis, what in axes:
        if arr.shape[axis] == 0:
            raise AttentionInputError(
                f"{name} has no {what} (shape {arr.shape}); attention needs at least one"
            )


def _check_finite(name: str, arr: FloatArray) -> None:
    if np.isfinite(arr).all():  # the common case: one pass, no index work
        return
    bad = ~np.isfinite(arr)
    if bad.any():
        first = tuple(int(i) for i in np.argwhere(bad)[0])
        raise AttentionInputError(
            f"{name} must hold finite numbers (got {int(bad.sum())} non-finite "
            f"entr{'y' if bad.sum() == 1 else 'ies'}, the first is {arr[first]} at index "
            f"{first}, in an array of shape {arr.shape})"
        )


def _check_matrix(name: str, x: ArrayLike, rows: str, cols: str) -> FloatArray:
    layout = f"(..., {rows}, {cols})"
    arr = _as_float_array(name, x, min_ndim=2, layout=layout)
    if arr.shape[-2] == 0 or arr.shape[-1] == 0:
        _check_not_empty(name, arr, [(-2, f"rows ({rows} = 0)"), (-1, f"columns ({cols} = 0)")])
    _check_finite(name, arr)
    return arr


def _check_batch(names: Sequence[str], arrays: Sequence[FloatArray]) -> None:
    if all(a.ndim == 2 for a in arrays):
        return  # no leading dimensions: nothing to broadcast
    try:
        np.broadcast_shapes(*(a.shape[:-2] for a in arrays))
    except ValueError:
        shapes = ", ".join(f"{n} shape {a.shape}" for n, a in zip(names, arrays, strict=True))
        raise AttentionInputError(
            f"the leading (batch/head) dimensions of {', '.join(names)} must broadcast "
            f"like numpy's matmul (got {shapes})"
        ) from None


def _check_q_k(Q: ArrayLike, K: ArrayLike) -> tuple[FloatArray, FloatArray]:
    q = _check_matrix("Q", Q, "n_q", "d_k")
    k = _check_matrix("K", K, "n_k", "d_k")
    if q.shape[-1] != k.shape[-1]:
        raise AttentionInputError(
            f"K has d_k={k.shape[-1]} columns but Q has d_k={q.shape[-1]} "
            f"(Q shape {q.shape}, K shape {k.shape}); every query is dotted with every key, "
            "so both need the same d_k"
        )
    _check_batch(("Q", "K"), (q, k))
    return q, k


def _check_q_k_v(
    Q: ArrayLike, K: ArrayLike, V: ArrayLike
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """The checks of :func:`attention` on Q, K and V (shared with its backward, tiled)."""
    q, k = _check_q_k(Q, K)
    v = _check_matrix("V", V, "n_k", "d_v")
    if v.shape[-2] != k.shape[-2]:
        raise AttentionInputError(
            f"V has {v.shape[-2]} rows but K has n_k={k.shape[-2]} (K shape {k.shape}, "
            f"V shape {v.shape}); each key needs exactly one value"
        )
    _check_batch(("Q", "K", "V"), (q, k, v))
    return q, k, v


def _check_axis(axis: int, ndim: int) -> int:
    if not isinstance(axis, int | np.integer) or isinstance(axis, bool):
        raise AttentionInputError(f"axis must be an integer (got {axis!r})")
    if not -ndim <= axis < ndim:
        raise AttentionInputError(
            f"axis {axis} is out of range for x with {ndim} dimension{'s' * (ndim != 1)} "
            f"(allowed: {-ndim} to {ndim - 1}; for attention the rows are axis -1)"
        )
    return int(axis) % ndim


# --------------------------------------------------------------------------------------
# the arithmetic on checked arrays (private): one new table, then in place
# --------------------------------------------------------------------------------------


def _score_table(q: FloatArray, k: FloatArray, *, scale: bool) -> FloatArray:
    """``q @ k^T`` (divided by sqrt(d_k) when ``scale``) as a new array of our own."""
    table = np.matmul(q, np.swapaxes(k, -1, -2))
    if scale:
        # in place, and the same numbers as table / np.sqrt(d_k): both square roots are
        # correctly rounded, and math.sqrt costs less than a numpy call on a Python int
        table /= math.sqrt(q.shape[-1])
    return table


def _check_row_maxima(row_max: FloatArray, shape: tuple[int, ...], axis: int, ax: int) -> None:
    """Judge the scores by their maxima along ``ax``, without another pass over them.

    ``max`` propagates NaN, so a slice holds NaN exactly when its maximum is NaN; it holds
    ``+inf`` (and no NaN) exactly when its maximum is ``+inf``; it is all ``-inf`` exactly
    when its maximum is ``-inf``.
    """
    if np.isfinite(row_max).all():
        return  # the common case: one check on n numbers
    if np.isnan(row_max).any() or np.isposinf(row_max).any():
        kind = "NaN" if np.isnan(row_max).any() else "+inf"
        raise AttentionInputError(
            f"x must hold finite scores or -inf for hidden entries (got {kind} in an "
            f"array of shape {shape})"
        )
    empty_rows = np.isneginf(row_max)
    if empty_rows.any():
        where = tuple(int(i) for i in np.argwhere(np.squeeze(empty_rows, axis=ax))[0])
        raise AttentionInputError(
            f"x has a slice along axis {axis} that is all -inf (at index {where} of the other "
            "axes): every entry is hidden, so softmax would compute 0/0 = NaN"
        )


def _stable_softmax(
    x: FloatArray, ax: int, axis: int, temperature: float, *, in_place: bool
) -> FloatArray:
    """Softmax along ``ax``; writes into ``x`` only when ``in_place`` (our own table)."""
    row_max = x.max(axis=ax, keepdims=True)
    _check_row_maxima(row_max, x.shape, axis, ax)
    e = np.subtract(x, row_max, out=x if in_place else None)
    if temperature != 1:
        e /= temperature  # x / 1 == x exactly, so skipping it changes no number
    np.exp(e, out=e)
    e /= e.sum(axis=ax, keepdims=True)
    return e


def _weight_table(
    q: FloatArray, k: FloatArray, mask: ArrayLike | None, *, scale: bool
) -> FloatArray:
    """softmax(q k^T [/ sqrt(d_k)]) with the mask applied, on checked ``q`` and ``k``."""
    table = _score_table(q, k, scale=scale)
    if mask is not None:
        m = _check_mask(mask, table.shape)
        np.copyto(table, -np.inf, where=~m)  # hidden keys: -inf, so exp gives exactly 0
    return _stable_softmax(table, table.ndim - 1, -1, 1.0, in_place=True)


# --------------------------------------------------------------------------------------
# the terms of the equation
# --------------------------------------------------------------------------------------


def scores(Q: ArrayLike, K: ArrayLike) -> FloatArray:
    r"""Dot every query with every key: the raw attention scores :math:`QK^T`.

    Entry ``[i, j]`` is ``Q[i] · K[j]``: how well token *j*'s key matches token *i*'s
    query. Lesson 02 builds this table by hand.

    Parameters
    ----------
    Q : array_like, shape (..., n_q, d_k)
        One query vector per row.
    K : array_like, shape (..., n_k, d_k)
        One key vector per row, with the same ``d_k`` as ``Q``.

    Returns
    -------
    ndarray, shape (..., n_q, n_k)
        The score table; row *i* holds query *i* scored against every key.

    Raises
    ------
    AttentionInputError
        If ``Q`` and ``K`` differ in ``d_k``, are empty, hold NaN or infinity, or have
        leading dimensions that do not broadcast.

    Examples
    --------
    The 'the cat sat' example of the lessons (queries and keys are equal there):

    >>> Q = K = [[1, 0], [0, 1], [1, 1]]
    >>> scores(Q, K)
    array([[1., 0., 1.],
           [0., 1., 1.],
           [1., 1., 2.]])
    """
    q, k = _check_q_k(Q, K)
    return _score_table(q, k, scale=False)


def scaled_scores(Q: ArrayLike, K: ArrayLike) -> FloatArray:
    r"""The scores divided by :math:`\sqrt{d_k}`: :math:`QK^T / \sqrt{d_k}`.

    ``d_k`` is the dimension of each query and key vector (the last axis of ``Q``).
    Dividing keeps the typical size of a score near 1 whatever ``d_k`` is, so that
    softmax stays in its responsive range (lesson 03 measures why).

    Parameters
    ----------
    Q : array_like, shape (..., n_q, d_k)
    K : array_like, shape (..., n_k, d_k)

    Returns
    -------
    ndarray, shape (..., n_q, n_k)

    Raises
    ------
    AttentionInputError
        As :func:`scores`.

    Examples
    --------
    >>> Q = K = [[1, 0], [0, 1], [1, 1]]
    >>> scaled_scores(Q, K).round(2)
    array([[0.71, 0.  , 0.71],
           [0.  , 0.71, 0.71],
           [0.71, 0.71, 1.41]])
    """
    q, k = _check_q_k(Q, K)
    return _score_table(q, k, scale=True)


def softmax(x: ArrayLike, axis: int = -1, *, temperature: float = 1.0) -> FloatArray:
    r"""Turn each row of scores into positive weights that sum to 1.

    .. math:: \mathrm{softmax}(x)_j = \frac{e^{x_j / T}}{\sum_l e^{x_l / T}}

    Computed stably: the row's largest entry is subtracted before exponentiating, which
    changes nothing mathematically (the factor cancels) but keeps ``exp`` from
    overflowing, so scores of 1000 or 1e300 are fine. An entry of ``-inf`` gets weight
    exactly 0: that is how a mask hides a key.

    Parameters
    ----------
    x : array_like
        Scores. Any shape with at least one dimension.
    axis : int, default -1
        The axis that sums to 1. For attention weights this is the last axis (the keys):
        each query spends its own budget.
    temperature : float, default 1.0
        Divide the scores by ``T`` first. ``T > 1`` flattens the weights, ``T < 1``
        sharpens them; dividing scores by :math:`\sqrt{d_k}` is a softmax at
        temperature :math:`T = \sqrt{d_k}`.

    Returns
    -------
    ndarray, same shape as ``x``
        Non-negative weights; every slice along ``axis`` sums to 1.

    Raises
    ------
    AttentionInputError
        If ``x`` holds NaN or ``+inf``, is empty along ``axis``, if a slice along
        ``axis`` is all ``-inf`` (nothing to give weight to), if ``axis`` is out of range
        or if ``temperature`` is not a positive finite number.

    Examples
    --------
    >>> softmax([1.0, 1.0, 2.0]).round(2)
    array([0.21, 0.21, 0.58])
    >>> softmax([1000.0, 0.0])
    array([1., 0.])
    >>> softmax([[0.0, -np.inf], [2.0, 2.0]])
    array([[1. , 0. ],
           [0.5, 0.5]])
    """
    arr = _as_float_array("x", x, min_ndim=1, layout="(..., n)")
    ax = _check_axis(axis, arr.ndim)
    if not (np.isfinite(temperature) and temperature > 0):
        raise AttentionInputError(
            f"temperature must be a positive finite number (got {temperature!r})"
        )
    if arr.shape[ax] == 0:
        raise AttentionInputError(
            f"x has nothing to normalise along axis {axis} (shape {arr.shape})"
        )
    # NaN, +inf and all -inf slices are found from the row maxima (no extra pass), and
    # the result is one new array: the caller's x is never written to
    return _stable_softmax(arr, ax, axis, temperature, in_place=False)


def causal_mask(n: int) -> NDArray[np.bool_]:
    """The causal mask for ``n`` tokens: ``True`` where a query may look.

    Token *i* may attend to tokens ``0 … i`` (itself and what came before), never to the
    future. The result is lower-triangular, diagonal included, so every row keeps at least
    one visible key.

    Parameters
    ----------
    n : int
        Number of tokens, at least 1.

    Returns
    -------
    ndarray of bool, shape (n, n)

    Raises
    ------
    AttentionInputError
        If ``n`` is not a positive integer.

    Examples
    --------
    >>> causal_mask(3)
    array([[ True, False, False],
           [ True,  True, False],
           [ True,  True,  True]])
    """
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise AttentionInputError(f"n must be a positive integer number of tokens (got {n!r})")
    return np.tril(np.ones((int(n), int(n)), dtype=bool))


def _check_mask(mask: ArrayLike, weights_shape: tuple[int, ...]) -> NDArray[np.bool_]:
    """Return ``mask`` as a boolean array that broadcasts to ``weights_shape``, or raise.

    Also raises if it hides every key from some query. The check reads the mask in its
    own (often smaller) shape, e.g. one ``(n, n)`` causal mask for every batch and head.
    """
    m = np.asarray(mask)
    if m.dtype != np.bool_:
        raise AttentionInputError(
            f"mask must be a boolean array (True = may attend, False = hidden), got dtype "
            f"{m.dtype}; build one with causal_mask(n) or a comparison such as `m == 1`"
        )
    try:
        np.broadcast_to(m, weights_shape)
    except ValueError:
        raise AttentionInputError(
            f"mask of shape {m.shape} does not broadcast to the weights' shape "
            f"{weights_shape} (..., n_q, n_k)"
        ) from None
    # a key axis of length 1 broadcasts one value to every key, so any() over it is the same
    sees_a_key = m.any(axis=-1) if m.ndim else m
    hidden_rows = ~np.broadcast_to(sees_a_key, weights_shape[:-1])
    if hidden_rows.any():
        where = tuple(int(i) for i in np.argwhere(hidden_rows)[0])
        row = where[-1]
        batch = f" in batch index {where[:-1]}" if len(where) > 1 else ""
        raise AttentionInputError(
            f"mask hides every key from query row {row}{batch} (mask row is all False): "
            "softmax over nothing is 0/0 = NaN. Let every query see at least one key "
            "(a causal mask always lets a token see itself)"
        )
    return m


def attention_weights(
    Q: ArrayLike, K: ArrayLike, mask: ArrayLike | None = None, scale: bool = True
) -> FloatArray:
    r"""The attention weights :math:`\mathrm{softmax}(QK^T/\sqrt{d_k})`, row by row.

    Parameters
    ----------
    Q : array_like, shape (..., n_q, d_k)
    K : array_like, shape (..., n_k, d_k)
    mask : array_like of bool, optional
        Broadcastable to ``(..., n_q, n_k)``. ``True`` means the query may attend to that
        key; a hidden key gets weight exactly 0.
    scale : bool, default True
        Divide by :math:`\sqrt{d_k}`. ``False`` gives the unscaled softmax(QK^T) that
        lesson 03 shows saturating.

    Returns
    -------
    ndarray, shape (..., n_q, n_k)
        Each row is non-negative and sums to 1.

    Raises
    ------
    AttentionInputError
        As :func:`scores`; also if the mask is not boolean, does not broadcast, or hides
        every key of some query.

    Examples
    --------
    >>> Q = K = [[1, 0], [0, 1], [1, 1]]
    >>> attention_weights(Q, K).round(2)
    array([[0.4 , 0.2 , 0.4 ],
           [0.2 , 0.4 , 0.4 ],
           [0.25, 0.25, 0.5 ]])
    """
    q, k = _check_q_k(Q, K)
    return _weight_table(q, k, mask, scale=scale)


def blend(weights: ArrayLike, V: ArrayLike) -> FloatArray:
    """Mix the value vectors with the weights: the ``· V`` of the equation.

    Output row *i* is ``sum_j weights[i, j] * V[j]``, a weighted average of the values
    when row *i* of ``weights`` is a softmax row, so it lies inside their convex hull.

    Parameters
    ----------
    weights : array_like, shape (..., n_q, n_k)
    V : array_like, shape (..., n_k, d_v)

    Returns
    -------
    ndarray, shape (..., n_q, d_v)

    Raises
    ------
    AttentionInputError
        If ``V`` has a different number of rows than ``weights`` has columns, or either
        is empty or non-finite.

    Examples
    --------
    >>> blend([[0.25, 0.25, 0.5]], [[1, 0], [0, 2], [2, 2]])
    array([[1.25, 1.5 ]])
    """
    w = _check_matrix("weights", weights, "n_q", "n_k")
    v = _check_matrix("V", V, "n_k", "d_v")
    if v.shape[-2] != w.shape[-1]:
        raise AttentionInputError(
            f"V has {v.shape[-2]} rows but the weights have n_k={w.shape[-1]} columns "
            f"(weights shape {w.shape}, V shape {v.shape}); each key needs exactly one value"
        )
    _check_batch(("weights", "V"), (w, v))
    return np.matmul(w, v)


def attention(
    Q: ArrayLike,
    K: ArrayLike,
    V: ArrayLike,
    mask: ArrayLike | None = None,
    scale: bool = True,
) -> tuple[FloatArray, FloatArray]:
    r"""Scaled dot-product attention: :math:`\mathrm{softmax}(QK^T/\sqrt{d_k})\,V`.

    Parameters
    ----------
    Q : array_like, shape (..., n_q, d_k)
        Queries, one per row.
    K : array_like, shape (..., n_k, d_k)
        Keys, one per row.
    V : array_like, shape (..., n_k, d_v)
        Values, one per key.
    mask : array_like of bool, optional
        Broadcastable to ``(..., n_q, n_k)``; ``True`` = may attend. Hidden keys get
        weight exactly 0. A row that hides every key raises instead of returning NaN.
    scale : bool, default True
        Divide the scores by :math:`\sqrt{d_k}`.

    Returns
    -------
    output : ndarray, shape (..., n_q, d_v)
        Row *i* is the weighted average of the values that query *i* attends to.
    weights : ndarray, shape (..., n_q, n_k)
        The attention weights; each row sums to 1.

    Raises
    ------
    AttentionInputError
        If ``K`` and ``Q`` differ in ``d_k``; ``K`` and ``V`` differ in ``n_k``; the mask
        is not boolean, has the wrong shape or hides a whole row; any input is empty or
        holds NaN or infinity; batch dimensions do not broadcast.

    Examples
    --------
    >>> Q = K = [[1, 0], [0, 1], [1, 1]]
    >>> V = [[1, 0], [0, 2], [2, 2]]
    >>> out, w = attention(Q, K, V)
    >>> out[2].round(2)  # the output for 'sat'
    array([1.26, 1.5 ])
    >>> w.sum(axis=-1)
    array([1., 1., 1.])
    """
    q, k, v = _check_q_k_v(Q, K, V)
    weights = _weight_table(q, k, mask, scale=scale)
    return np.matmul(weights, v), weights


# --------------------------------------------------------------------------------------
# quantities the lessons measure
# --------------------------------------------------------------------------------------


def row_entropy(weights: ArrayLike) -> FloatArray:
    r"""Entropy of each row of weights, in nats: :math:`-\sum_j w_j \log w_j`.

    A row spread evenly over ``n`` keys has entropy :math:`\log n` (the most); a one-hot,
    saturated row has entropy 0. Lesson 03 tracks it as ``d_k`` grows. Zero weights
    contribute 0 (the limit of :math:`w \log w`).

    Parameters
    ----------
    weights : array_like, shape (..., n_k)
        Rows of non-negative weights that sum to 1.

    Returns
    -------
    ndarray, shape (...)

    Raises
    ------
    AttentionInputError
        If a row has a negative entry or does not sum to 1 (within 1e-6).

    Examples
    --------
    >>> row_entropy([[0.5, 0.5], [1.0, 0.0]]).round(4)
    array([0.6931, 0.    ])
    """
    w = _as_float_array("weights", weights, min_ndim=1, layout="(..., n_k)")
    _check_finite("weights", w)
    if w.shape[-1] == 0:
        raise AttentionInputError(f"weights has empty rows (shape {w.shape})")
    if (w < 0).any():
        raise AttentionInputError(
            f"weights must be non-negative (got a minimum of {w.min()}); pass softmax output"
        )
    sums = w.sum(axis=-1)
    if not np.allclose(sums, 1.0, atol=1e-6):
        worst = float(sums.flat[np.argmax(np.abs(sums - 1.0))])
        raise AttentionInputError(
            f"each row of weights must sum to 1 (got a row summing to {worst}); "
            "did the softmax run over the wrong axis?"
        )
    logs = np.log(np.where(w > 0, w, 1.0))
    return 0.0 - (w * logs).sum(axis=-1)  # 0.0 - x turns -0.0 into 0.0


def softmax_jacobian(x: ArrayLike) -> FloatArray:
    r"""The Jacobian of the row softmax: how each weight responds to each score.

    For one row with weights :math:`p = \mathrm{softmax}(x)`,

    .. math:: J_{jl} = \frac{\partial p_j}{\partial x_l} = p_j(\delta_{jl} - p_l),
              \qquad J = \mathrm{diag}(p) - p p^T .

    When a row saturates (one weight near 1), every entry of ``J`` goes to 0: the scores
    get almost no gradient. Lesson 03 measures this.

    Parameters
    ----------
    x : array_like, shape (..., n)
        Rows of scores (before softmax).

    Returns
    -------
    ndarray, shape (..., n, n)
        One Jacobian per row.

    Raises
    ------
    AttentionInputError
        As :func:`softmax`.

    Examples
    --------
    >>> softmax_jacobian([0.0, 0.0])
    array([[ 0.25, -0.25],
           [-0.25,  0.25]])
    >>> np.abs(softmax_jacobian([30.0, 0.0])).max() < 1e-12
    np.True_
    """
    p = softmax(x, axis=-1)
    return p[..., :, None] * np.eye(p.shape[-1]) - p[..., :, None] * p[..., None, :]
