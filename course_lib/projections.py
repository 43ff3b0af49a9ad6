r"""Where Q, K and V come from: three projections of the token embeddings (lesson 08).

Each token starts as an embedding, one row of ``X`` (shape ``(n, d_model)``). Three learned
matrices project every row three ways:

.. math:: Q = X W_Q, \qquad K = X W_K, \qquad V = X W_V

``W_Q`` and ``W_K`` are ``(d_model, d_k)``, ``W_V`` is ``(d_model, d_v)``. The key of a token
is what it is *matched on* (queries are dotted with it); its value is what it *hands
over* (the output blends the values). Because ``W_Q`` and ``W_K`` differ, ``q_i · k_j`` and
``q_j · k_i`` differ too: the score table is not symmetric.

=====================================  ==================================================
function                               what it does
=====================================  ==================================================
:func:`project`                        ``(Q, K, V) = (X W_Q, X W_K, X W_V)``, shapes checked
:func:`rotation_scale`                 a 2 × 2 matrix: turn by an angle, stretch by a factor
:func:`embedded_example`               'the cat sat' as embeddings and three projections
=====================================  ==================================================

Which pairs (i, j) score differently from (j, i), in words, is
:func:`course_lib.explore.describe.asymmetry`; the figure of the scores with K = Q next to
K = X W_K is :func:`course_lib.explore.plots.tied_and_separate_keys`.

The lessons' earlier example (lessons 01-07, :func:`course_lib.examples.the_cat_sat`) is
the special case ``W_K = W_Q``: :func:`embedded_example` reproduces its Q, K and V.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .errors import AttentionInputError

__all__ = [
    "EmbeddedExample",
    "embedded_example",
    "project",
    "rotation_scale",
]

FloatArray = NDArray[np.float64]


def _matrix(name: str, x: ArrayLike, layout: str) -> FloatArray:
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise AttentionInputError(
            f"{name} must be an array of numbers of shape {layout} (got {type(x).__name__}: "
            f"{exc})"
        ) from None
    if arr.ndim < 2 or 0 in arr.shape[-2:]:
        raise AttentionInputError(
            f"{name} must have shape {layout}, at least 2 dimensions and none empty "
            f"(got shape {arr.shape})"
        )
    if not np.isfinite(arr).all():
        raise AttentionInputError(f"{name} must hold finite numbers (got shape {arr.shape} "
                                  "with NaN or infinity in it)")
    return arr


def project(
    X: ArrayLike, W_Q: ArrayLike, W_K: ArrayLike, W_V: ArrayLike
) -> tuple[FloatArray, FloatArray, FloatArray]:
    r"""Project the embeddings three ways: :math:`Q = XW_Q`, :math:`K = XW_K`, :math:`V = XW_V`.

    Parameters
    ----------
    X : array_like, shape (..., n, d_model)
        One embedding per row (leading batch dimensions are allowed).
    W_Q, W_K : array_like, shape (d_model, d_k)
        The query and key projections; the same ``d_k``, since queries are dotted with keys.
    W_V : array_like, shape (d_model, d_v)
        The value projection.

    Returns
    -------
    Q : ndarray, shape (..., n, d_k)
    K : ndarray, shape (..., n, d_k)
    V : ndarray, shape (..., n, d_v)

    Raises
    ------
    AttentionInputError
        If a weight matrix is not 2-D, its rows do not match ``X``'s ``d_model`` columns,
        or ``W_Q`` and ``W_K`` differ in ``d_k``.

    Examples
    --------
    >>> ex = embedded_example()
    >>> Q, K, V = project(ex.X, ex.W_Q, ex.W_K, ex.W_V)
    >>> K
    array([[1., 0.],
           [1., 1.],
           [1., 0.]])
    >>> project(ex.X, ex.W_Q.T, ex.W_K, ex.W_V)
    Traceback (most recent call last):
    ...
    course_lib.errors.AttentionInputError: W_Q must have d_model=3 rows, one per column of X ...
    """
    x = _matrix("X", X, "(..., n, d_model)")
    d_model = x.shape[-1]
    ws = {}
    for name, w, cols in (("W_Q", W_Q, "d_k"), ("W_K", W_K, "d_k"), ("W_V", W_V, "d_v")):
        arr = _matrix(name, w, f"(d_model, {cols})")
        if arr.ndim != 2:
            raise AttentionInputError(f"{name} must be one matrix, shape (d_model, {cols}) "
                                      f"(got shape {arr.shape})")
        if arr.shape[0] != d_model:
            raise AttentionInputError(
                f"{name} must have d_model={d_model} rows, one per column of X (X shape "
                f"{x.shape}, {name} shape {arr.shape})"
            )
        ws[name] = arr
    if ws["W_Q"].shape[1] != ws["W_K"].shape[1]:
        raise AttentionInputError(
            f"W_K must have as many columns as W_Q, the same d_k (W_Q shape "
            f"{ws['W_Q'].shape}, W_K shape {ws['W_K'].shape}): every query is dotted with "
            "every key"
        )
    return x @ ws["W_Q"], x @ ws["W_K"], x @ ws["W_V"]


def rotation_scale(angle_degrees: float, scale: float = 1.0) -> FloatArray:
    r"""The 2 × 2 matrix that turns a row vector by ``angle_degrees`` and stretches it.

    For a row vector ``q``, ``q @ rotation_scale(a, s)`` is ``q`` turned counter-clockwise
    by ``a`` degrees and made ``s`` times longer:

    .. math:: R = s \begin{pmatrix} \cos a & \sin a \\ -\sin a & \cos a \end{pmatrix}

    Parameters
    ----------
    angle_degrees : float
    scale : float, default 1.0
        Zero or more.

    Returns
    -------
    ndarray, shape (2, 2)

    Raises
    ------
    AttentionInputError
        If ``scale`` is negative or either number is not finite.

    Examples
    --------
    >>> (np.array([1.0, 0.0]) @ rotation_scale(90)).round(12)
    array([0., 1.])
    >>> rotation_scale(0, 2.0)
    array([[2., 0.],
           [0., 2.]])
    """
    if not (math.isfinite(angle_degrees) and math.isfinite(scale)) or scale < 0:
        raise AttentionInputError(
            f"angle_degrees must be finite and scale a finite number >= 0 (got "
            f"{angle_degrees!r}, {scale!r})"
        )
    a = math.radians(angle_degrees)
    c, s = math.cos(a), math.sin(a)
    # exact zeros at multiples of 90 degrees, so turned integer vectors stay integers
    c, s = (0.0 if abs(c) < 1e-15 else c), (0.0 if abs(s) < 1e-15 else s)
    return scale * np.array([[c, s], [-s, c]]) + 0.0  # + 0.0: no -0.0


@dataclass(frozen=True)
class EmbeddedExample:
    """'the cat sat' as embeddings and the three projection matrices of lesson 08.

    Attributes
    ----------
    tokens : tuple of str, length n
    X : ndarray, shape (n, d_model)
        The token embeddings, one row per token.
    W_Q, W_K : ndarray, shape (d_model, d_k)
    W_V : ndarray, shape (d_model, d_v)
    """

    tokens: tuple[str, ...]
    X: FloatArray
    W_Q: FloatArray
    W_K: FloatArray
    W_V: FloatArray

    @property
    def d_model(self) -> int:
        """Length of each embedding."""
        return int(self.X.shape[-1])

    @property
    def d_k(self) -> int:
        """Length of each query and key."""
        return int(self.W_Q.shape[-1])


def embedded_example() -> EmbeddedExample:
    """'the cat sat' with ``d_model = 3`` and ``d_k = d_v = 2``, small enough to do by hand.

    ========  =============  ==============  ===========  ==========
    token     embedding X    query X W_Q     key X W_K    value X W_V
    ========  =============  ==============  ===========  ==========
    'the'     [1, 0, 0]      [1, 0]          [1, 0]       [1, 0]
    'cat'     [0, 1, 0]      [0, 1]          [1, 1]       [0, 2]
    'sat'     [1, 1, 1]      [1, 1]          [1, 0]       [2, 2]
    ========  =============  ==============  ===========  ==========

    The queries and values are those of lessons 01-07; with ``W_K = W_Q`` the keys would be
    too. Here the keys have their own matrix: 'the' and 'sat' get the same key, so every
    query weighs them equally, yet they hand over different values. Fresh arrays each call.

    Examples
    --------
    >>> ex = embedded_example()
    >>> ex.X @ ex.W_Q
    array([[1., 0.],
           [0., 1.],
           [1., 1.]])
    >>> ex.d_model, ex.d_k
    (3, 2)
    """
    X = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 1.0]])
    W_Q = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    W_K = np.array([[1.0, 0.0], [1.0, 1.0], [-1.0, -1.0]])
    W_V = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 0.0]])
    return EmbeddedExample(("the", "cat", "sat"), X, W_Q, W_K, W_V)
