r"""The scaling experiment of lesson 03: why :math:`QK^T` is divided by :math:`\sqrt{d_k}`.

Draw random queries and keys whose entries are independent with mean 0 and variance 1.
Each score :math:`q \cdot k` is then a sum of ``d_k`` unit-variance products, so its
standard deviation grows like :math:`\sqrt{d_k}`. Without scaling, the softmax of such
scores saturates as ``d_k`` grows: the largest weight of a row tends to 1, the row's
entropy to 0, and the softmax Jacobian :math:`\partial w/\partial s` (with respect to
whatever the softmax is given) to 0. Dividing by :math:`\sqrt{d_k}` keeps these flat.

What reaches the query (and, through it, :math:`W_Q`) is :math:`\partial w/\partial q`,
the Jacobian times :math:`K/\sqrt{d_k}` (or times :math:`K` unscaled): the unscaled
scores' larger keys make up for a smaller Jacobian until the saturation wins. With the
lesson's seed it is *larger* unscaled up to d_k = 128 and collapses from d_k = 512 up.
Whether that slows training is measured by :mod:`course_lib.experiments.training`, not here.

Public API (names are stable)
-----------------------------
``ScalingStats``
    Frozen dataclass: ``d_k``, ``scaled``, ``n_keys``, ``qk_std``, ``median_max_weight``,
    ``median_entropy``, ``max_entropy``, ``median_jacobian_norm``,
    ``median_query_gradient_norm`` and ``dots`` (the sampled scores, for histograms);
    ``.summary()`` is a one-line text of the numbers.
``query_gradient_norms(Q, K, scale=True)``
    :math:`\lVert\partial w_i/\partial q_i\rVert` for every query row, computed with
    :func:`course_lib.attention_backward`.
``random_qk(d_k, n_queries=256, n_keys=16, *, rng=None, seed=0)``
    The random unit-variance ``(Q, K)`` pair behind every experiment here.
``scaling_stats(d_k, scale=True, *, n_queries=256, n_keys=16, rng=None, seed=0)``
    The numbers for one ``d_k`` with or without scaling. The same ``seed`` gives the same
    Q and K whether ``scale`` is on or off, so the toggle compares like with like.
``scaling_sweep(d_ks=D_KS, *, n_queries=256, n_keys=16, seed=0)``
    ``{"scaled": [...], "unscaled": [...]}`` lists of :class:`ScalingStats` over ``d_ks``.
``D_KS``
    The powers of two from 2 to 4096 that the lesson and its widget use.

Randomness always comes from a :class:`numpy.random.Generator` that is passed in or created
here from ``seed``; the global numpy seed is never touched.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..attention import (
    _check_q_k,
    row_entropy,
    scaled_scores,
    scores,
    softmax,
    softmax_jacobian,
)
from ..backward import attention_backward
from ..errors import AttentionInputError

__all__ = [
    "D_KS",
    "ScalingStats",
    "query_gradient_norms",
    "random_qk",
    "scaling_stats",
    "scaling_sweep",
]

#: d_k values of the lesson and its widget: 2, 4, 8, …, 4096.
D_KS: tuple[int, ...] = tuple(2**i for i in range(1, 13))


@dataclass(frozen=True)
class ScalingStats:
    """What softmax does with random scores at one ``d_k``, scaled or not.

    Attributes
    ----------
    d_k : int
        Dimension of each query and key vector.
    scaled : bool
        Whether the scores were divided by :math:`\\sqrt{d_k}`.
    n_keys : int
        Keys per row (the row length the softmax spreads its budget over).
    qk_std : float
        Standard deviation of the (scaled or raw) scores.
    median_max_weight : float
        Median over rows of the largest weight; ``1/n_keys`` is perfectly even, 1 one-hot.
    median_entropy : float
        Median over rows of the row entropy in nats; ``log(n_keys)`` is even, 0 one-hot.
    max_entropy : float
        ``log(n_keys)``, the largest possible entropy, for comparison.
    median_jacobian_norm : float
        Median over rows of the Frobenius norm of the softmax Jacobian
        :math:`\\partial w/\\partial s = \\mathrm{diag}(w) - ww^T`, where ``s`` is what the
        softmax is given: :math:`QK^T` unscaled, :math:`QK^T/\\sqrt{d_k}` scaled (so the two
        are derivatives with respect to different variables). It vanishes when the softmax
        saturates.
    median_query_gradient_norm : float
        Median over rows of the Frobenius norm of :math:`\\partial w/\\partial q`, the
        derivative of a row's weights with respect to its query: the same variable scaled
        or not, and what training passes on to :math:`W_Q`.
    dots : ndarray, shape (n_queries * n_keys,)
        The scores themselves (after scaling when ``scaled``), for a histogram.
    """

    d_k: int
    scaled: bool
    n_keys: int
    qk_std: float
    median_max_weight: float
    median_entropy: float
    max_entropy: float
    median_jacobian_norm: float
    median_query_gradient_norm: float
    dots: NDArray[np.float64] = field(repr=False, compare=False)

    def summary(self) -> str:
        """One line with the numbers, as the lesson and the widget print them.

        Examples
        --------
        >>> print(scaling_stats(512, scale=False, seed=0).summary())
        d_k = 512, unscaled: std of q·k 22.9, median max weight 1.00, median row entropy
        0.00274 nats (even: 2.77), median softmax-Jacobian size 0.000564, median |dw/dq|
        0.0124
        """
        return (
            f"d_k = {self.d_k}, {'scaled by 1/sqrt(d_k)' if self.scaled else 'unscaled'}: "
            f"std of q·k {self.qk_std:.3g}, median max weight {self.median_max_weight:.2f}, "
            f"median row entropy {self.median_entropy:.3g} nats (even: "
            f"{self.max_entropy:.2f}), median softmax-Jacobian size "
            f"{self.median_jacobian_norm:.3g}, median |dw/dq| "
            f"{self.median_query_gradient_norm:.3g}"
        )


def _check_count(name: str, value: int, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise AttentionInputError(f"{name} must be an integer >= {minimum} (got {value!r})")
    return int(value)


def random_qk(
    d_k: int,
    n_queries: int = 256,
    n_keys: int = 16,
    *,
    rng: np.random.Generator | None = None,
    seed: int = 0,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Random queries and keys with independent mean-0, variance-1 entries.

    Parameters
    ----------
    d_k : int
        Vector dimension, at least 1.
    n_queries, n_keys : int
        Rows of ``Q`` and ``K``.
    rng : numpy.random.Generator, optional
        Source of randomness; by default ``numpy.random.default_rng(seed)``.
    seed : int, default 0
        Used only when ``rng`` is not given.

    Returns
    -------
    Q : ndarray, shape (n_queries, d_k)
    K : ndarray, shape (n_keys, d_k)

    Examples
    --------
    >>> Q, K = random_qk(64, n_queries=4, n_keys=3)
    >>> Q.shape, K.shape
    ((4, 64), (3, 64))
    """
    d_k = _check_count("d_k", d_k, 1)
    n_queries = _check_count("n_queries", n_queries, 1)
    n_keys = _check_count("n_keys", n_keys, 2)
    gen = rng if rng is not None else np.random.default_rng(seed)
    return gen.standard_normal((n_queries, d_k)), gen.standard_normal((n_keys, d_k))


def query_gradient_norms(Q: ArrayLike, K: ArrayLike, scale: bool = True) -> NDArray[np.float64]:
    r"""How strongly each query's weights respond to the query: :math:`\lVert\partial w_i /
    \partial q_i\rVert_F` per row.

    Row *i* of the weights, :math:`w_i = \mathrm{softmax}(c\, q_i K^T)` with :math:`c =
    1/\sqrt{d_k}` (or 1 when ``scale`` is False), depends on query *i* alone, through

    .. math::

        \frac{\partial w_i}{\partial q_i} = \bigl(\mathrm{diag}(w_i) - w_i w_i^T\bigr)\,
        c\, K \qquad (n_k \times d_k).

    The derivative is computed with :func:`course_lib.attention_backward`: with the values
    ``V = I`` the output *is* the weights, and ``dO`` = the *j*-th unit vector gives
    :math:`\partial w_{ij}/\partial q_i` as row *i* of ``dQ``. To keep this cheap at
    large ``d_k``, the backward pass runs in the (at most ``n_k``-dimensional) space the
    keys span: with :math:`K^T = BR` (QR, :math:`B` with orthonormal columns) the scores are
    :math:`(c\,q_i B)\,R`, and :math:`\partial w_i/\partial q_i = \partial w_i/\partial
    (c\,q_i B)\; c B^T` has the same norm as :math:`c\,\partial w_i/\partial(c\,q_i B)`.
    The result is exact; the tests compare it with the backward pass on the full ``Q``,
    ``K`` and with finite differences.

    Parameters
    ----------
    Q : array_like, shape (n_q, d_k)
    K : array_like, shape (n_k, d_k)
    scale : bool, default True

    Returns
    -------
    ndarray, shape (n_q,)

    Raises
    ------
    AttentionInputError
        As :func:`course_lib.scores`, and if ``Q`` or ``K`` has leading batch dimensions.

    Examples
    --------
    >>> Q, K = random_qk(64, n_queries=3, n_keys=4, seed=0)
    >>> w = softmax(scaled_scores(Q, K))
    >>> by_formula = [np.linalg.norm(softmax_jacobian(Q[i] @ K.T / 8) @ K / 8) for i in range(3)]
    >>> np.allclose(query_gradient_norms(Q, K), by_formula)
    True
    """
    q, k = _check_q_k(Q, K)
    if q.ndim != 2 or k.ndim != 2:
        raise AttentionInputError(
            f"query_gradient_norms takes one Q of shape (n_q, d_k) and one K of shape "
            f"(n_k, d_k) (got Q shape {q.shape}, K shape {k.shape})"
        )
    c = 1.0 / np.sqrt(q.shape[-1]) if scale else 1.0
    basis, r = np.linalg.qr(k.T)  # K^T = basis @ r
    q_small, k_small = c * (q @ basis), r.T  # q_small @ k_small^T == c * Q K^T
    n_k = k.shape[0]
    values = np.eye(n_k)
    squares = np.zeros(q.shape[0])
    for j in range(n_k):
        d_out = np.zeros((q.shape[0], n_k))
        d_out[:, j] = 1.0
        d_q, _, _ = attention_backward(q_small, k_small, values, d_out, scale=False)
        squares += (d_q**2).sum(axis=-1)
    return c * np.sqrt(squares)


def scaling_stats(
    d_k: int,
    scale: bool = True,
    *,
    n_queries: int = 256,
    n_keys: int = 16,
    rng: np.random.Generator | None = None,
    seed: int = 0,
) -> ScalingStats:
    r"""Measure score spread, saturation and gradient size at one ``d_k``.

    Parameters
    ----------
    d_k : int
        Vector dimension (the lesson uses 2 … 4096).
    scale : bool, default True
        Divide the scores by :math:`\sqrt{d_k}` before the softmax.
    n_queries : int, default 256
        Rows sampled (each row is one softmax).
    n_keys : int, default 16
        Keys per row.
    rng : numpy.random.Generator, optional
        Source of randomness; by default a fresh ``default_rng(seed)``.
    seed : int, default 0

    Returns
    -------
    ScalingStats

    Examples
    --------
    >>> unscaled = scaling_stats(1024, scale=False)
    >>> scaled = scaling_stats(1024, scale=True)
    >>> round(unscaled.qk_std / scaled.qk_std, 1)  # sqrt(1024) = 32
    32.0
    >>> bool(unscaled.median_max_weight > 0.99), bool(scaled.median_max_weight < 0.5)
    (True, True)
    """
    Q, K = random_qk(d_k, n_queries, n_keys, rng=rng, seed=seed)
    s = scaled_scores(Q, K) if scale else scores(Q, K)
    w = softmax(s, axis=-1)
    jac = softmax_jacobian(s)
    return ScalingStats(
        d_k=int(d_k),
        scaled=bool(scale),
        n_keys=int(n_keys),
        qk_std=float(s.std()),
        median_max_weight=float(np.median(w.max(axis=-1))),
        median_entropy=float(np.median(row_entropy(w))),
        max_entropy=float(np.log(n_keys)),
        median_jacobian_norm=float(np.median(np.sqrt((jac**2).sum(axis=(-2, -1))))),
        median_query_gradient_norm=float(np.median(query_gradient_norms(Q, K, scale=scale))),
        dots=s.ravel(),
    )


def scaling_sweep(
    d_ks: Sequence[int] = D_KS,
    *,
    n_queries: int = 256,
    n_keys: int = 16,
    seed: int = 0,
) -> dict[str, list[ScalingStats]]:
    """:func:`scaling_stats` over many ``d_k``, with and without scaling.

    Returns
    -------
    dict
        ``{"scaled": [ScalingStats, ...], "unscaled": [ScalingStats, ...]}`` in the order
        of ``d_ks``. Each ``d_k`` uses the same random Q and K for both entries.

    Examples
    --------
    >>> sweep = scaling_sweep([2, 4096])
    >>> [round(s.median_max_weight, 2) for s in sweep["unscaled"]]
    [0.28, 1.0]
    """
    if len(d_ks) == 0:
        raise AttentionInputError("d_ks must list at least one d_k (got an empty sequence)")
    return {
        key: [
            scaling_stats(d, scale=scale, n_queries=n_queries, n_keys=n_keys, seed=seed)
            for d in d_ks
        ]
        for key, scale in (("scaled", True), ("unscaled", False))
    }
