r"""Cross-attention: queries from one sentence, keys and values from another.

Lesson 10. In translation, the sentence being written asks the questions and the source
sentence answers them: the queries come from the target words (``n_q`` of them), the keys
and values from the source words (``n_k``), and ``n_q`` need not equal ``n_k``. The
equation does not change; only the table stops being square:

.. math:: \underbrace{Q}_{(n_q,\ d_k)}\ \underbrace{K^T}_{(d_k,\ n_k)}
          = \underbrace{QK^T}_{(n_q,\ n_k)},\qquad
          \mathrm{softmax}\Big(\frac{QK^T}{\sqrt{d_k}}\Big)\,\underbrace{V}_{(n_k,\ d_v)}
          : (n_q,\ d_v).

Each row (a target word) still spends a budget of 1 over the source words.
:func:`course_lib.attention` takes ``n_q ≠ n_k`` as it is; its errors name the shapes when
``K`` and ``V`` disagree on ``n_k`` or ``Q`` and ``K`` on ``d_k``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .examples import the_cat_sat

__all__ = ["CrossExample", "translation_example"]


@dataclass(frozen=True)
class CrossExample:
    """Target words that query a source sentence.

    Attributes
    ----------
    queries : tuple of str, length n_q
        The words being written (each asks with its query vector).
    sources : tuple of str, length n_k
        The words of the sentence being translated (keys and values).
    Q : ndarray, shape (n_q, d_k)
    K : ndarray, shape (n_k, d_k)
    V : ndarray, shape (n_k, d_v)
    """

    queries: tuple[str, ...]
    sources: tuple[str, ...]
    Q: NDArray[np.float64]
    K: NDArray[np.float64]
    V: NDArray[np.float64]


def translation_example() -> CrossExample:
    """French words 'chat' and 'assis' querying the English 'the cat sat' (fresh arrays).

    Hand-picked, like 'the cat sat' itself: the keys and values are the course's, and each
    French query points most towards the English word it translates.

    Examples
    --------
    >>> ex = translation_example()
    >>> ex.queries, ex.sources
    (('chat', 'assis'), ('the', 'cat', 'sat'))
    >>> ex.Q.shape, ex.K.shape, ex.V.shape
    ((2, 2), (3, 2), (3, 2))
    >>> from course_lib import attention_weights
    >>> attention_weights(ex.Q, ex.K).round(2)
    array([[0.07, 0.62, 0.31],
           [0.16, 0.16, 0.67]])
    """
    src = the_cat_sat()
    Q = np.array([[-1.0, 2.0], [2.0, 2.0]])
    return CrossExample(queries=("chat", "assis"), sources=src.tokens, Q=Q, K=src.K,
                        V=src.V)
