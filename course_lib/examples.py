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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["WorkedExample", "the_cat_sat"]


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
        """Length of each query and key vector."""
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
