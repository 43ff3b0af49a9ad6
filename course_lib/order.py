r"""Order: attention does not see it, and the smallest position signal that makes it see.

Lesson 10 ("Order and cost"). Shuffle the tokens of a sentence, and their rows of ``Q``,
``K`` and ``V`` with them: every token gets exactly the output it had before, only in its
new place. With a permutation matrix :math:`P` (row *i* of :math:`PX` is row
``order[i]`` of :math:`X`),

.. math:: \mathrm{Attention}(PQ, PK, PV) = P\,\mathrm{Attention}(Q, K, V),

because :math:`(PQ)(PK)^T = P\,QK^T P^T` only reorders the table's rows and columns, a
row-wise softmax follows the rows, and :math:`P^T P = I` in the blend. So 'cat sat' and
'sat cat' give 'cat' the same output: attention alone treats a sentence as a bag of words.
Adding a vector that depends on the *position* to each token's embedding breaks the
symmetry (:func:`sinusoidal_positions`, the encoding of "Attention Is All You Need").

==============================  ==============================================
function                        what it gives
==============================  ==============================================
:func:`as_permutation`          a checked new order of ``n`` tokens
:func:`permute_rows`            the rows of arrays in that order
:func:`equivariance_gap`        how far attention is from the law above
:func:`sinusoidal_positions`    one position vector per place, shape (n, d)
:func:`sentence_orders`         every order of a few words, as sentences
:func:`attention_in_order`      'the cat sat' in any order, with or without positions
==============================  ==============================================
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .attention import attention
from .errors import AttentionInputError
from .examples import WorkedExample, the_cat_sat

__all__ = [
    "as_permutation",
    "attention_in_order",
    "equivariance_gap",
    "permute_rows",
    "sentence_orders",
    "sinusoidal_positions",
]

FloatArray = NDArray[np.float64]


def as_permutation(order: ArrayLike, n: int) -> NDArray[np.intp]:
    """Check that ``order`` lists each of ``0 … n-1`` exactly once; return it as an array.

    Parameters
    ----------
    order : array_like of int, shape (n,)
        The new order: position *i* takes the token that was at ``order[i]``.
    n : int
        The number of tokens.

    Returns
    -------
    ndarray of int, shape (n,)

    Raises
    ------
    AttentionInputError
        If ``order`` is not ``n`` whole numbers that use every index once.

    Examples
    --------
    >>> as_permutation([2, 0, 1], 3)
    array([2, 0, 1])
    >>> as_permutation([0, 0, 1], 3)
    Traceback (most recent call last):
    ...
    course_lib.errors.AttentionInputError: order must use each of 0 … 2 exactly once ...
    """
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise AttentionInputError(f"n must be a positive integer number of tokens (got {n!r})")
    arr = np.asarray(order)
    if arr.ndim != 1 or arr.size != n or not (
            np.issubdtype(arr.dtype, np.integer) or arr.size == 0):
        raise AttentionInputError(
            f"order must be {n} whole numbers, one new place per token (got "
            f"{arr.tolist() if arr.size <= 12 else f'shape {arr.shape}'})"
        )
    counts = np.bincount(arr[(arr >= 0) & (arr < n)], minlength=n)
    if (counts != 1).any() or ((arr < 0) | (arr >= n)).any():
        twice = [f"{i} twice" if c == 2 else f"{i} {c} times" for i, c in enumerate(counts)
                 if c > 1]
        missing = [str(i) for i, c in enumerate(counts) if c == 0]
        outside = [str(int(x)) for x in arr if not 0 <= x < n]
        what = ", ".join(twice + ([f"{', '.join(missing)} missing"] if missing else [])
                         + ([f"{', '.join(outside)} out of range"] if outside else []))
        raise AttentionInputError(
            f"order must use each of 0 … {n - 1} exactly once (got {arr.tolist()}: {what})"
        )
    return arr.astype(np.intp)


def permute_rows(order: ArrayLike, *arrays: ArrayLike) -> tuple[FloatArray, ...]:
    """The rows (axis -2) of each array in the new ``order``: :math:`PX` for each ``X``.

    Parameters
    ----------
    order : array_like of int, shape (n,)
        See :func:`as_permutation`.
    *arrays : array_like, shape (..., n, d)
        Arrays with one row per token (``Q``, ``K``, ``V``, outputs), all with ``n`` rows.

    Returns
    -------
    tuple of ndarray
        New arrays; the inputs are not changed.

    Raises
    ------
    AttentionInputError
        If an array is not at least 2-D with ``n`` rows, or ``order`` is not a permutation.

    Examples
    --------
    >>> (X,) = permute_rows([2, 0, 1], [[1, 0], [0, 1], [1, 1]])
    >>> X
    array([[1., 1.],
           [1., 0.],
           [0., 1.]])
    """
    if not arrays:
        raise AttentionInputError("permute_rows needs at least one array to reorder")
    mats = [np.asarray(a, dtype=np.float64) for a in arrays]
    for i, m in enumerate(mats):
        if m.ndim < 2:
            raise AttentionInputError(
                f"array {i} must have one row per token, shape (..., n, d) (got shape "
                f"{m.shape})"
            )
    n = mats[0].shape[-2]
    for i, m in enumerate(mats):
        if m.shape[-2] != n:
            raise AttentionInputError(
                f"every array must have the same number of rows, one per token (array 0 has "
                f"{n}, array {i} has {m.shape[-2]}: shape {m.shape})"
            )
    idx = as_permutation(order, n)
    return tuple(np.take(m, idx, axis=-2) for m in mats)


def equivariance_gap(Q: ArrayLike, K: ArrayLike, V: ArrayLike, order: ArrayLike) -> float:
    r"""How far attention is from equivariance: the largest entry of the difference.

    .. math:: \max \big|\mathrm{Attention}(PQ, PK, PV) - P\,\mathrm{Attention}(Q, K, V)\big|

    0 up to rounding (about 1e-16) for self-attention without positions: shuffling the
    tokens shuffles the outputs the same way.

    Parameters
    ----------
    Q : array_like, shape (n, d_k)
    K : array_like, shape (n, d_k)
    V : array_like, shape (n, d_v)
        One row per token of the same sentence.
    order : array_like of int, shape (n,)

    Returns
    -------
    float

    Raises
    ------
    AttentionInputError
        As :func:`course_lib.attention` and :func:`permute_rows`.

    Examples
    --------
    >>> from course_lib import the_cat_sat
    >>> ex = the_cat_sat()
    >>> equivariance_gap(ex.Q, ex.K, ex.V, [2, 0, 1]) < 1e-12
    True
    """
    out, _ = attention(Q, K, V)
    q, k, v = permute_rows(order, Q, K, V)
    shuffled_out, _ = attention(q, k, v)
    (expected,) = permute_rows(order, out)
    return float(np.abs(shuffled_out - expected).max())


def sinusoidal_positions(n: int, d: int, *, base: float = 10000.0) -> FloatArray:
    r"""The sinusoidal position vectors of Vaswani et al. (2017), one row per place.

    .. math:: p_{t, 2i} = \sin\!\big(t / b^{2i/d}\big), \qquad
              p_{t, 2i+1} = \cos\!\big(t / b^{2i/d}\big)

    for place :math:`t = 0 … n-1` and base :math:`b` (10000). With ``d = 2`` this is
    :math:`[\sin t, \cos t]`: a point going round the unit circle, one radian per place.

    Parameters
    ----------
    n : int
        Number of places (tokens), at least 1.
    d : int
        Length of each vector (the embedding size), at least 1.
    base : float, default 10000.0
        The base of the wavelengths; must be greater than 1.

    Returns
    -------
    ndarray, shape (n, d)

    Raises
    ------
    AttentionInputError
        If ``n`` or ``d`` is not a positive integer, or ``base`` is not > 1.

    Examples
    --------
    >>> sinusoidal_positions(3, 2).round(2)
    array([[ 0.  ,  1.  ],
           [ 0.84,  0.54],
           [ 0.91, -0.42]])
    """
    for name, value in (("n", n), ("d", d)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
            raise AttentionInputError(f"{name} must be a positive integer (got {value!r})")
    if not (np.isfinite(base) and base > 1):
        raise AttentionInputError(f"base must be a finite number greater than 1 (got {base!r})")
    t = np.arange(int(n), dtype=np.float64)[:, None]
    pair = np.arange(int(d)) // 2
    angle = t / np.power(float(base), 2.0 * pair / int(d))
    return np.where(np.arange(int(d)) % 2 == 0, np.sin(angle), np.cos(angle))


def sentence_orders(words: Sequence[str]) -> list[str]:
    """Every order of ``words`` as a sentence, the given order first.

    Parameters
    ----------
    words : sequence of str
        At most 5 distinct words without spaces (5! = 120 orders).

    Returns
    -------
    list of str

    Raises
    ------
    AttentionInputError
        If the words repeat, contain spaces or are more than 5.

    Examples
    --------
    >>> sentence_orders(["the", "cat", "sat"])
    ['the cat sat', 'the sat cat', 'cat the sat', 'cat sat the', 'sat the cat', 'sat cat the']
    """
    ws = [str(w) for w in words]
    if not 1 <= len(ws) <= 5 or len(set(ws)) != len(ws) or any(
            not w or " " in w for w in ws):
        raise AttentionInputError(
            f"words must be 1 to 5 distinct words without spaces (got {ws})"
        )
    return [" ".join(p) for p in itertools.permutations(ws)]


def attention_in_order(
    words: Sequence[str], *, positions: bool = False, example: WorkedExample | None = None
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Self-attention over ``words`` in the order given, each word with its own rows.

    Every word keeps its query, key and value rows from ``example`` wherever it stands.
    With ``positions``, the place's sinusoidal vector (:func:`sinusoidal_positions`) is
    added to each query and key row only; the values are left as they are. That is not the
    original Transformer's scheme, which adds it to the embeddings before the projections
    (so values carry the place too); touching only queries and keys is what rotary
    positions (RoPE) do, by a turn instead of a sum (lesson 10 says so).

    Parameters
    ----------
    words : sequence of str
        Some of the example's tokens, each at most once, in the order to use.
    positions : bool, default False
    example : WorkedExample, optional
        Default: :func:`course_lib.the_cat_sat`.

    Returns
    -------
    queries : ndarray, shape (n, d_k)
        The queries used (= the keys): the words' rows, plus positions if asked.
    weights : ndarray, shape (n, n)
    outputs : ndarray, shape (n, d_v)
        Row *i* is the output of ``words[i]``.

    Raises
    ------
    AttentionInputError
        If a word is not one of the example's tokens, or repeats.

    Examples
    --------
    >>> _, _, out = attention_in_order(["cat", "sat"])
    >>> _, _, swapped = attention_in_order(["sat", "cat"])
    >>> bool(np.allclose(out[0], swapped[1]))  # cat's output, wherever cat stands
    True
    >>> _, _, out = attention_in_order(["cat", "sat"], positions=True)
    >>> _, _, swapped = attention_in_order(["sat", "cat"], positions=True)
    >>> out[0].round(2), swapped[1].round(2)
    (array([0.69, 2.  ]), array([1.29, 2.  ]))
    """
    ex = the_cat_sat() if example is None else example
    ws = [str(w) for w in words]
    unknown = [w for w in ws if w not in ex.tokens]
    if unknown or not ws or len(set(ws)) != len(ws):
        raise AttentionInputError(
            f"words must be distinct tokens of the example {list(ex.tokens)} (got {ws})"
        )
    rows = [ex.tokens.index(w) for w in ws]
    shift = sinusoidal_positions(len(rows), ex.d_k) if positions else 0.0
    queries = ex.Q[rows] + shift
    out, weights = attention(queries, ex.K[rows] + shift, ex.V[rows])
    return queries, weights, out
