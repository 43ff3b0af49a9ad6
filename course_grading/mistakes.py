"""The likely mistakes in ``attention_weights(Q, K)``, written as a student would write them.

The checkpoint quiz has one hidden test per mistake, named for it (``test_missing_scale``
catches :data:`MISTAKES` ``["missing_scale"]`` and so on). This module is the one place
that spells the mistakes out, as source code for the answer cell of the quiz, so that:

* :mod:`course_grading.variants` can prove, for every variant it generates, that each
  hidden test fails for exactly its own mistake and passes for the correct answer and for
  every other mistake (so a failing test *diagnoses* the mistake);
* the grading tests and benchmarks can build submissions from the same code.

Every answer is plain numpy, as a student without ``course_lib`` would write it.

Examples
--------
>>> import numpy as np
>>> f = answer_function(CORRECT_ANSWER)
>>> f(np.eye(2), np.eye(2)).sum(axis=-1)
array([1., 1.])
>>> sorted(MISTAKES)
['dk_from_wrong_axis', 'missing_scale', 'naive_exp_overflow', 'wrong_axis']
"""

from __future__ import annotations

from collections.abc import Callable
from types import MappingProxyType

import numpy as np
from numpy.typing import NDArray

__all__ = ["CORRECT_ANSWER", "MISTAKES", "answer_function", "hidden_test_id"]

#: A correct answer: stable row-wise softmax of QK^T / sqrt(d_k), d_k = Q.shape[-1].
CORRECT_ANSWER = '''\
def attention_weights(Q, K):
    """Row-wise softmax of Q K^T / sqrt(d_k)."""
    Q = np.asarray(Q, dtype=float)
    K = np.asarray(K, dtype=float)
    scores = Q @ K.T / np.sqrt(Q.shape[-1])
    scores = scores - scores.max(axis=-1, keepdims=True)
    e = np.exp(scores)
    return e / e.sum(axis=-1, keepdims=True)
'''

_MISTAKES = {
    # forgot the 1/sqrt(d_k)
    "missing_scale": '''\
def attention_weights(Q, K):
    """Row-wise softmax of Q K^T (the scale is missing)."""
    Q = np.asarray(Q, dtype=float)
    K = np.asarray(K, dtype=float)
    scores = Q @ K.T
    scores = scores - scores.max(axis=-1, keepdims=True)
    e = np.exp(scores)
    return e / e.sum(axis=-1, keepdims=True)
''',
    # normalised each column (over the queries) instead of each row (over the keys)
    "wrong_axis": '''\
def attention_weights(Q, K):
    """Softmax of Q K^T / sqrt(d_k) over axis 0 (the columns) instead of the rows."""
    Q = np.asarray(Q, dtype=float)
    K = np.asarray(K, dtype=float)
    scores = Q @ K.T / np.sqrt(Q.shape[-1])
    scores = scores - scores.max(axis=0, keepdims=True)
    e = np.exp(scores)
    return e / e.sum(axis=0, keepdims=True)
''',
    # exp of the raw scores: overflows to inf for large scores, and inf/inf = nan
    "naive_exp_overflow": '''\
def attention_weights(Q, K):
    """Row-wise softmax of Q K^T / sqrt(d_k), without subtracting the row maximum."""
    Q = np.asarray(Q, dtype=float)
    K = np.asarray(K, dtype=float)
    scores = Q @ K.T / np.sqrt(Q.shape[-1])
    e = np.exp(scores)
    return e / e.sum(axis=-1, keepdims=True)
''',
    # took d_k from the number of rows (tokens) instead of the number of columns
    "dk_from_wrong_axis": '''\
def attention_weights(Q, K):
    """Row-wise softmax of Q K^T / sqrt(n), with d_k read from the wrong axis."""
    Q = np.asarray(Q, dtype=float)
    K = np.asarray(K, dtype=float)
    d_k = Q.shape[0]
    scores = Q @ K.T / np.sqrt(d_k)
    scores = scores - scores.max(axis=-1, keepdims=True)
    e = np.exp(scores)
    return e / e.sum(axis=-1, keepdims=True)
''',
}

#: Mistake name -> answer-cell source with exactly that one mistake (read-only mapping).
MISTAKES = MappingProxyType(_MISTAKES)


def hidden_test_id(mistake: str) -> str:
    """The grade id of the hidden test that catches ``mistake``.

    Examples
    --------
    >>> hidden_test_id("wrong_axis")
    'test_wrong_axis'
    """
    if mistake not in MISTAKES:
        raise KeyError(
            f"unknown mistake {mistake!r}: expected one of {', '.join(sorted(MISTAKES))}"
        )
    return f"test_{mistake}"


def answer_function(source: str) -> Callable[..., NDArray[np.float64]]:
    """Run an answer cell's source and return the ``attention_weights`` it defines.

    Parameters
    ----------
    source : str
        Python source of an answer cell, such as :data:`CORRECT_ANSWER` or a value of
        :data:`MISTAKES`. It runs with ``np`` (numpy) available, as in the quiz.

    Returns
    -------
    callable
        The function ``attention_weights(Q, K)``.

    Raises
    ------
    ValueError
        If the source does not define ``attention_weights``.
    """
    namespace: dict[str, object] = {"np": np, "__name__": "__main__"}
    exec(compile(source, "<answer cell>", "exec"), namespace)
    func = namespace.get("attention_weights")
    if not callable(func):
        raise ValueError(
            "the answer source must define a function attention_weights(Q, K) "
            f"(got names: {', '.join(sorted(k for k in namespace if not k.startswith('__')))})"
        )
    return func  # type: ignore[return-value]
