r"""The scaling experiment of lesson 03: why :math:`QK^T` is divided by :math:`\sqrt{d_k}`.

Draw random queries and keys whose entries are independent with mean 0 and variance 1.
Each score :math:`q \cdot k` is then a sum of ``d_k`` unit-variance products, so its
standard deviation grows like :math:`\sqrt{d_k}`. Without scaling, the softmax of such
scores saturates as ``d_k`` grows (the largest weight of a row tends to 1, the row's
entropy to 0) and its Jacobian, the gradient that training sends back to the scores,
vanishes. Dividing by :math:`\sqrt{d_k}` keeps all three flat.

Public API (names are stable)
-----------------------------
``ScalingStats``
    Frozen dataclass: ``d_k``, ``scaled``, ``n_keys``, ``qk_std``, ``median_max_weight``,
    ``median_entropy``, ``max_entropy``, ``median_jacobian_norm``, and ``dots`` (the
    sampled scores, for histograms); ``.summary()`` is a one-line text of the numbers.
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
from numpy.typing import NDArray

from .attention import row_entropy, scaled_scores, scores, softmax, softmax_jacobian
from .errors import AttentionInputError

__all__ = ["D_KS", "ScalingStats", "random_qk", "scaling_stats", "scaling_sweep"]

#: d_k values of the lesson and its widget: 2, 4, 8, …, 4096.
D_KS: tuple[int, ...] = tuple(2**i for i in range(1, 13))


@dataclass(frozen=True)
class ScalingStats:
    """What softmax does with random scores at one ``d_k``, scaled or not.

    Attributes
    ----------
    d_k : int
        Length of each query and key vector.
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
        Median over rows of the Frobenius norm of the softmax Jacobian: the size of the
        gradient that reaches the scores. It vanishes when the softmax saturates.
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
    dots: NDArray[np.float64] = field(repr=False, compare=False)

    def summary(self) -> str:
        """One line with the numbers, as the lesson and the widget print them.

        Examples
        --------
        >>> print(scaling_stats(512, scale=False, seed=0).summary())
        d_k = 512, unscaled: std of q·k 22.9, median max weight 1.00, median row entropy
        0.00274 nats (even: 2.77), median softmax-Jacobian size 0.000564
        """
        return (
            f"d_k = {self.d_k}, {'scaled by 1/sqrt(d_k)' if self.scaled else 'unscaled'}: "
            f"std of q·k {self.qk_std:.3g}, median max weight {self.median_max_weight:.2f}, "
            f"median row entropy {self.median_entropy:.3g} nats (even: "
            f"{self.max_entropy:.2f}), median softmax-Jacobian size "
            f"{self.median_jacobian_norm:.3g}"
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
        Vector length, at least 1.
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
        Vector length (the lesson uses 2 … 4096).
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
