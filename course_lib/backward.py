r"""The backward pass of attention: how a loss's gradient flows back to Q, K and V.

Training a model needs, for each parameter, the derivative of the loss. Attention's part of
that is :func:`attention_backward`: given ``dO``, the gradient of the loss with respect to
each entry of the output ``O = softmax(QK^T/sqrt(d_k)) V``, it returns the gradients with
respect to ``Q``, ``K`` and ``V``. The training experiment (:mod:`course_lib.experiments.training`)
and lesson 03's gradient column use it; the tests check it against :func:`numerical_gradient`,
the central finite differences lesson 12's students write.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .attention import _check_matrix, _check_q_k_v, _weight_table
from .errors import AttentionInputError

__all__ = ["attention_backward", "numerical_gradient"]

FloatArray = NDArray[np.float64]


def _sum_to_shape(grad: FloatArray, shape: tuple[int, ...]) -> FloatArray:
    """Sum ``grad`` over the axes that broadcasting added to an input of ``shape``.

    An input shared by every batch entry (e.g. one ``K`` for many heads of ``Q``) receives
    the sum of the gradients of all the entries that used it.
    """
    extra = grad.ndim - len(shape)
    if extra:
        grad = grad.sum(axis=tuple(range(extra)))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    if stretched:
        grad = grad.sum(axis=stretched, keepdims=True)
    return grad


def attention_backward(
    Q: ArrayLike,
    K: ArrayLike,
    V: ArrayLike,
    dO: ArrayLike,
    mask: ArrayLike | None = None,
    *,
    scale: bool = True,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    r"""Gradients of a loss with respect to ``Q``, ``K`` and ``V``, given its gradient ``dO``.

    The forward pass is :func:`course_lib.attention`:

    .. math::

        S = \frac{QK^T}{\sqrt{d_k}}, \qquad P = \mathrm{softmax}(S) \text{ (row by row)},
        \qquad O = PV .

    Going backwards, one equation per forward step (:math:`\odot` is the entrywise
    product, :math:`c = 1/\sqrt{d_k}`, or :math:`c = 1` when ``scale=False``):

    .. math::

        dV &= P^T\, dO, \qquad dP = dO\, V^T, \\
        dS_{ij} &= \sum_l dP_{il}\, \frac{\partial P_{il}}{\partial S_{ij}}
                = P_{ij}\Bigl(dP_{ij} - \sum_l dP_{il} P_{il}\Bigr)
                \quad\text{(the softmax Jacobian } \mathrm{diag}(p) - pp^T
                \text{ of each row)}, \\
        dQ &= c\, dS\, K, \qquad dK = c\, dS^T Q .

    A masked position has :math:`P_{ij} = 0`, so its :math:`dS_{ij}` is exactly 0: hidden
    keys receive no gradient through it. Leading batch/head dimensions broadcast as in
    :func:`course_lib.attention`; an input shared across them (say one ``K`` for every
    head) gets the sum of their gradients, so each result has its input's shape.

    Parameters
    ----------
    Q : array_like, shape (..., n_q, d_k)
    K : array_like, shape (..., n_k, d_k)
    V : array_like, shape (..., n_k, d_v)
    dO : array_like, shape (..., n_q, d_v)
        :math:`\partial L / \partial O`, with the shape of the output of
        :func:`course_lib.attention` (leading dimensions included).
    mask : array_like of bool, optional
        As in :func:`course_lib.attention`; ``True`` = may attend.
    scale : bool, default True
        Whether the forward pass divided the scores by :math:`\sqrt{d_k}`.

    Returns
    -------
    dQ : ndarray, shape of ``Q``
    dK : ndarray, shape of ``K``
    dV : ndarray, shape of ``V``

    Raises
    ------
    AttentionInputError
        With the messages of :func:`course_lib.attention` for ``Q``, ``K``, ``V`` and
        ``mask``; also if ``dO`` is not a finite array with the output's shape.

    Examples
    --------
    The loss is the first coordinate of sat's output, so ``dO`` is 1 there and 0 elsewhere:

    >>> import numpy as np
    >>> from course_lib import attention
    >>> Q = K = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> V = np.array([[1.0, 0.0], [0.0, 2.0], [2.0, 2.0]])
    >>> dO = np.zeros((3, 2))
    >>> dO[2, 0] = 1.0
    >>> dQ, dK, dV = attention_backward(Q, K, V, dO)
    >>> dV.round(3)  # sat's weights, in the column of the coordinate
    array([[0.248, 0.   ],
           [0.248, 0.   ],
           [0.503, 0.   ]])
    >>> dQ.round(3)  # only sat's query moves sat's output
    array([[0.   , 0.   ],
           [0.   , 0.   ],
           [0.22 , 0.045]])

    The same derivative by a finite difference:

    >>> h = 1e-6
    >>> Qh = Q.copy()
    >>> Qh[2, 0] += h
    >>> bool(abs((attention(Qh, K, V)[0][2, 0] - attention(Q, K, V)[0][2, 0]) / h
    ...          - dQ[2, 0]) < 1e-5)
    True
    """
    q, k, v = _check_q_k_v(Q, K, V)
    d_o = _check_matrix("dO", dO, "n_q", "d_v")
    out_shape = (*np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2]),
                 q.shape[-2], v.shape[-1])
    if d_o.shape != out_shape:
        raise AttentionInputError(
            f"dO must have the shape of the attention output, (..., n_q, d_v) = {out_shape} "
            f"(got shape {d_o.shape}); it holds dL/dO, one number per output entry"
        )
    p = _weight_table(q, k, mask, scale=scale)  # (..., n_q, n_k); 0 where masked
    c = 1.0 / math.sqrt(q.shape[-1]) if scale else 1.0
    d_v = np.matmul(np.swapaxes(p, -1, -2), d_o)
    d_p = np.matmul(d_o, np.swapaxes(v, -1, -2))
    d_s = p * (d_p - (d_p * p).sum(axis=-1, keepdims=True))
    d_q = np.matmul(d_s, k)
    d_k = np.matmul(np.swapaxes(d_s, -1, -2), q)
    if c != 1.0:
        d_q *= c
        d_k *= c
    return (_sum_to_shape(d_q, q.shape), _sum_to_shape(d_k, k.shape),
            _sum_to_shape(d_v, v.shape))


def numerical_gradient(loss: Callable[[FloatArray], float], X: ArrayLike, h: float = 1e-6
                       ) -> FloatArray:
    r"""The gradient of ``loss`` at ``X`` by central finite differences (lesson 12).

    Each entry is nudged up and down by ``h`` in turn and put back:

    .. math:: \frac{\partial L}{\partial X_i} \approx \frac{L(X + h e_i) - L(X - h e_i)}{2h}

    Parameters
    ----------
    loss : callable
        Takes an array of ``X``'s shape, returns a number.
    X : array_like, any shape
        Where to take the gradient; not changed (a float copy is nudged).
    h : float
        The step.

    Returns
    -------
    ndarray, the shape of ``X``

    Examples
    --------
    >>> X = np.array([[1.0, -2.0], [0.5, 3.0]])
    >>> np.allclose(numerical_gradient(lambda A: float((A ** 2).sum()), X), 2 * X)
    True
    """
    X = np.array(X, dtype=float)
    grad = np.zeros_like(X)
    for i in np.ndindex(X.shape):
        old = X[i]
        X[i] = old + h
        up = loss(X)
        X[i] = old - h
        grad[i] = (up - loss(X)) / (2 * h)
        X[i] = old
    return grad
