"""The worked example of the lessons: 'the', 'cat', 'sat' with d_k = 2.

Hand-picked vectors, small enough to check with a pencil (lesson 06 does it step by step).
The numbers come from the course's seed lesson; the weights below are what you get.

=========  ===========  ===========  ===========  ==========================
token      query        key          value        attention weights (rounded)
=========  ===========  ===========  ===========  ==========================
'the'      [1, 0]       [1, 0]       [1, 0]       [0.40, 0.20, 0.40]
'cat'      [0, 1]       [0, 1]       [0, 2]       [0.20, 0.40, 0.40]
'sat'      [1, 1]       [1, 1]       [2, 2]       [0.25, 0.25, 0.50]
=========  ===========  ===========  ===========  ==========================

The output for 'sat' is ``0.25·[1, 0] + 0.25·[0, 2] + 0.50·[2, 2] = [1.25, 1.5]`` with the
rounded weights, and about ``[1.26, 1.50]`` with the exact ones.

Its keys are its queries (K = Q), so its score table is symmetric and each token scores
highest against itself. :func:`the_cat_sat_own_keys` is the example beside it: the same
queries and values, keys of their own (those that lesson 08 makes with ``W_K``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["WorkedExample", "the_cat_sat", "the_cat_sat_own_keys"]


@dataclass(frozen=True)
class WorkedExample:
    """A small attention problem: token names and their Q, K, V rows.

    Attributes
    ----------
    tokens : tuple of str, length n
    Q : ndarray, shape (n, d_k)
    K : ndarray, shape (n, d_k)
    V : ndarray, shape (n, d_v)
    """

    tokens: tuple[str, ...]
    Q: NDArray[np.float64]
    K: NDArray[np.float64]
    V: NDArray[np.float64]

    @property
    def d_k(self) -> int:
        """Dimension of each query and key vector (its number of entries)."""
        return int(self.Q.shape[-1])

    @property
    def n(self) -> int:
        """Number of tokens."""
        return len(self.tokens)


def the_cat_sat() -> WorkedExample:
    """Return the 'the cat sat' example, as fresh arrays the caller may change freely.

    Examples
    --------
    >>> ex = the_cat_sat()
    >>> ex.tokens
    ('the', 'cat', 'sat')
    >>> ex.Q
    array([[1., 0.],
           [0., 1.],
           [1., 1.]])
    >>> ex.d_k
    2
    """
    Q = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    V = np.array([[1.0, 0.0], [0.0, 2.0], [2.0, 2.0]])
    return WorkedExample(tokens=("the", "cat", "sat"), Q=Q, K=Q.copy(), V=V)


def the_cat_sat_own_keys() -> WorkedExample:
    """'the cat sat' with keys of their own (K ≠ Q): the example beside :func:`the_cat_sat`.

    The same queries and values; the keys are 'the' [1, 0], 'cat' [1, 1], 'sat' [1, 0],
    the keys lesson 08 makes with their own matrix (``projections.embedded_example``:
    ``X @ W_K``). The score table is not symmetric, and 'sat' scores highest against
    'cat', not against itself. Fresh arrays each call.

    Examples
    --------
    >>> ex = the_cat_sat_own_keys()
    >>> ex.K
    array([[1., 0.],
           [1., 1.],
           [1., 0.]])
    >>> ex.Q @ ex.K.T
    array([[1., 1., 1.],
           [0., 1., 0.],
           [1., 2., 1.]])
    """
    seed = the_cat_sat()
    K = np.array([[1.0, 0.0], [1.0, 1.0], [1.0, 0.0]])
    return WorkedExample(tokens=seed.tokens, Q=seed.Q, K=K, V=seed.V)
