r"""The task: a random segment seen twice, and the next token only the first copy can tell.

Each sequence is :data:`SEQ_LEN` letters. A *segment* of :data:`SEGMENT_MIN` to
:data:`SEGMENT_MAX` letters appears twice, at random places (the second copy after the
first, maybe right after it, maybe later); every other letter of the sequence is different
from all the rest, so a letter appears twice only when it belongs to the segment:

.. code-block:: text

    position  0 1 2 3 4 5 6 7 8 9 ...
    letters   q f [k w d j] x m b [k w d j] r ...
                   first copy        second copy

Inside the second copy, after its first letter, the next letter can be known: it is the
letter that followed the same letter in the first copy (after ``w`` comes ``d``). Nowhere
else can it be known: every other letter is new. Those positions, and only those, are
*scored*: the loss and the accuracy count them alone. Because the copies move from one
sequence to the next, no fixed offset ("look 6 back") finds the answer; the model has to
find the earlier occurrence of the current letter by its content and read the letter after
it. That takes two steps of attention, one per layer (:mod:`course_lib.tiny_gpt.circuit`).

A guess at random is right once in :data:`VOCAB_SIZE` = 26 (3.8 %); guessing among the
letters seen so far, about once in 15.

The sequences are generated, seeded by ``numpy.random.default_rng``: no text to ship.
"""

from __future__ import annotations

import string
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..errors import AttentionInputError

__all__ = [
    "LETTERS",
    "SEGMENT_MAX",
    "SEGMENT_MIN",
    "SEQ_LEN",
    "VOCAB_SIZE",
    "Batch",
    "letters",
    "make_batch",
]

#: the vocabulary: token ``i`` is the letter ``LETTERS[i]``
LETTERS = string.ascii_lowercase
#: how many different tokens there are
VOCAB_SIZE = len(LETTERS)
#: letters in every sequence
SEQ_LEN = 24
#: the shortest and longest segment that appears twice
SEGMENT_MIN, SEGMENT_MAX = 4, 10


@dataclass(frozen=True)
class Batch:
    """Sequences of the task, and which next tokens can be known.

    Attributes
    ----------
    tokens : ndarray of int, shape (batch, SEQ_LEN)
        The letters as numbers 0 … 25.
    targets : ndarray of int, shape (batch, SEQ_LEN)
        The next token at each position (the last position's is -1: there is none).
    scored : ndarray of bool, shape (batch, SEQ_LEN)
        True where the next token can be known: inside the second copy, from its first
        letter to its last but one.
    first, second : ndarray of int, shape (batch,)
        Where the segment's first and second copies start.
    length : ndarray of int, shape (batch,)
        The segment's length.
    """

    tokens: NDArray[np.int64]
    targets: NDArray[np.int64]
    scored: NDArray[np.bool_]
    first: NDArray[np.int64]
    second: NDArray[np.int64]
    length: NDArray[np.int64]

    def __len__(self) -> int:
        return int(self.tokens.shape[0])

    def text(self, i: int = 0) -> str:
        """Sequence ``i`` as letters separated by spaces.

        Examples
        --------
        >>> make_batch(1, seed=6).text()
        't c v b o u r l x z e w i g y u r l x z e w q s'
        """
        return " ".join(letters(self.tokens[i]))

    def marked(self, i: int = 0) -> str:
        """Sequence ``i`` with each copy of the segment in brackets.

        Examples
        --------
        >>> make_batch(1, seed=6).marked()
        't c v b o [u r l x z e w] i g y [u r l x z e w] q s'
        """
        words = letters(self.tokens[i])
        s, d, k = int(self.first[i]), int(self.second[i]), int(self.length[i])
        for start in (s, d):
            words[start] = "[" + words[start]
            words[start + k - 1] += "]"
        return " ".join(words)


def letters(tokens: NDArray[np.int64] | list[int]) -> list[str]:
    """The letters of a sequence of token numbers.

    Examples
    --------
    >>> letters([0, 1, 25])
    ['a', 'b', 'z']
    """
    arr = np.asarray(tokens)
    if arr.ndim != 1 or not np.issubdtype(arr.dtype, np.integer) or (
            arr.size and (arr.min() < 0 or arr.max() >= VOCAB_SIZE)):
        raise AttentionInputError(f"tokens must be a 1-D sequence of whole numbers 0 … "
                                  f"{VOCAB_SIZE - 1} (got {arr.dtype} of shape {arr.shape})")
    return [LETTERS[int(t)] for t in arr]


def _positive(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise AttentionInputError(f"{name} must be a positive whole number (got {value!r})")
    return int(value)


def make_batch(n: int, *, seed: int | np.random.Generator = 0) -> Batch:
    """``n`` sequences of the task, seeded.

    Parameters
    ----------
    n : int
        How many sequences.
    seed : int or numpy.random.Generator
        The same seed gives the same sequences; a generator is drawn from and advanced.

    Returns
    -------
    Batch

    Raises
    ------
    AttentionInputError
        If ``n`` is not a positive whole number.

    Examples
    --------
    >>> b = make_batch(2, seed=3)
    >>> b.tokens.shape, int(b.scored.sum(axis=1)[0]) == int(b.length[0]) - 1
    ((2, 24), True)
    >>> i, s, d, k = 0, int(b.first[0]), int(b.second[0]), int(b.length[0])
    >>> bool((b.tokens[0, s:s + k] == b.tokens[0, d:d + k]).all())
    True
    """
    n = _positive("n", n)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    tokens = np.empty((n, SEQ_LEN), dtype=np.int64)
    first = np.empty(n, dtype=np.int64)
    second = np.empty(n, dtype=np.int64)
    length = rng.integers(SEGMENT_MIN, SEGMENT_MAX + 1, size=n)
    for i in range(n):
        k = int(length[i])
        s = int(rng.integers(0, SEQ_LEN - 2 * k + 1))  # room for both copies after it
        d = int(rng.integers(s + k, SEQ_LEN - k + 1))  # the second copy, after the first
        fresh = rng.permutation(VOCAB_SIZE)[: SEQ_LEN - k]  # every letter different
        # the positions that are not the second copy (not np.r_, whose parsing cost more
        # than the rest of the loop in the site's Pyodide)
        rest = np.concatenate((np.arange(d), np.arange(d + k, SEQ_LEN)))
        tokens[i, rest] = fresh
        tokens[i, d:d + k] = tokens[i, s:s + k]
        first[i], second[i] = s, d
    targets = np.full((n, SEQ_LEN), -1, dtype=np.int64)
    targets[:, :-1] = tokens[:, 1:]
    positions = np.arange(SEQ_LEN)
    scored = (positions >= second[:, None]) & (positions < (second + length - 1)[:, None])
    return Batch(tokens, targets, scored, first, second, length)
