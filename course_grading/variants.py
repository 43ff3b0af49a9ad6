"""Fill the checkpoint quiz's notebook with the numbers of a variant.

The source notebook, ``quiz/source/checkpoint/checkpoint.ipynb``, is written and edited by
hand: its questions, its wording, its test cells. A variant changes numbers only: the
example of the setup cell (four tokens' queries and keys, which row and which key the
derivation asks about, the shift ``c``, question 4's query and duplicated token), the
inputs of the four hidden checks of ``weights_without_self``, the measured table of
question 3 (measured afresh: its head sizes, keys and entries' size, and the order of its
two columns, drawn), and the multiple-choice options: each written with the variant's
numbers from the instructor's templates (:data:`course_grading.checkpoint_answers.OPTIONS`)
in an order drawn for the variant, with the right letter and the misconception of each
wrong letter that go with it. The committed notebook is the public variant, whose
answers are public with the repository. An instructor who grades a class gives a seed only
they know::

    python -m course_grading.variants --seed "a secret of your own"   # writes quiz/secret_source
    rm -r quiz/secret_source                                          # back to the public one

By default every student then gets numbers of their own, derived from the seed and their
id (:mod:`course_grading.personal`: the seed is kept in ``secret_source/variant_secret``,
and the notebook written is the class's template); ``--per-class`` makes one variant for
the whole class, as a small class may prefer. The written question's model answer and
rubric are the instructor's (``--written FILE``): the public notebook has neither.

The variant goes to ``quiz/secret_source/`` (:data:`SECRET_PATH`), which git ignores, so
that no ``git commit -a`` publishes its answers; ``quiz/nbgrader_config.py`` makes it the
course's source directory while it exists. Writing into a file git tracks (``--out
quiz/source/...``) is refused unless ``--overwrite-tracked`` is given.

:func:`fill` writes every number, letter and option of a variant into any form of the
notebook (the source, a release, a submission as the grader restores it), whatever it held
before. Even the public variant's numbers are drawn, not the lessons' worked example: no
number a lesson prints answers a graded item, and no other variant shows an option text of
the public notebook.

Every variant is checked before it is used: each hidden check must fail for exactly its
own mistake among the four it isolates (:data:`course_quiz.checkpoint_spec.CHECKPOINT`
``.mistakes``), for every mistake marked ``everywhere`` (what a copy of the lessons' code
gives), pass for the correct answer, and fail for every answer that never reads Q and K
(:func:`know_nothing_answers`; issue 42), on inputs whose right weights are neither one-hot
nor uniform in any row; the setup cell's example must show every mistake. Nothing is
computed into what students receive but the measured table and the options' numbers:
:mod:`course_lib` knows no answer, the visible checks confirm only the form of an answer,
and the grader computes every expected value from the inputs when it grades
(:mod:`course_grading.checkpoint_answers`).

Examples
--------
>>> v = make_variant(DEFAULT_SEED)
>>> v.Q.shape, v.seed_id
((4, 2), 'public')
>>> make_variant("another seed").Q.tolist() != v.Q.tolist()
True
"""

from __future__ import annotations

import argparse
import ast
import base64
import copy
import dataclasses
import functools
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
import warnings
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat
import numpy as np
from nbgrader.utils import compute_checksum
from numpy.typing import NDArray

from course_lib.attention import attention_weights, softmax
from course_quiz.checkpoint_spec import CHECKPOINT, PARTS, QuizSpec, parse_parts

from .check_calls import (
    BEGIN_HIDDEN,
    Literal,
    QuizSourceError,
    check_calls,
    setup_values,
)
from .checkpoint_answers import (
    MISCONCEIVED,
    MISTAKE_SOURCES,
    OPTIONS,
    answer_function,
    duplicated_key_weight,
    expected,
    multihead_sizes,
    online_softmax_state,
    option_numbers,
    shift_factors,
    shifted_key_row,
    weights_without_self,
)
from .option_bank import BANK_FILE, BankError, OptionBank, parse_bank, write_bank

__all__ = [
    "DEFAULT_SEED",
    "PARTS_FILE",
    "SECRET_PATH",
    "SOURCE_PATH",
    "QuizFacts",
    "Variant",
    "baseline_table",
    "encode_expected",
    "facts_of",
    "fill",
    "fill_setup",
    "isolation_table",
    "know_nothing_answers",
    "main",
    "make_variant",
    "mc_letters",
    "mc_options",
    "mc_templates",
    "measure_table",
    "multihead_draw",
    "multihead_know_nothing",
    "online_know_nothing",
    "online_scores",
    "quiz_facts",
    "read_parts",
    "read_rubric",
    "tracked_by_git",
    "with_written",
]

#: The seed of the public, committed quiz source.
DEFAULT_SEED = "public"

#: Where the committed source lives, relative to the repository root.
SOURCE_PATH = Path("quiz") / "source" / "checkpoint" / "checkpoint.ipynb"

#: The source directory of a secret variant, beside ``source/`` in the course directory:
#: ignored by git (``quiz/.gitignore``), and nbgrader's source while it exists
#: (``quiz/nbgrader_config.py``).
SECRET_SOURCE = "secret_source"

#: Where a variant is written by default, relative to the repository root.
SECRET_PATH = Path("quiz") / SECRET_SOURCE / "checkpoint" / "checkpoint.ipynb"

#: The multiple-choice questions: their answer cells' grade ids.
MC_QUESTIONS = tuple(q.id for q in CHECKPOINT.questions
                     if any(CHECKPOINT.check(c).kind == "letter" for c in q.checks))

#: The hidden checks of the function, each built to catch one mistake alone.
HIDDEN_WEIGHT_CHECKS = tuple(c.grade_id for c in CHECKPOINT.checks
                             if c.kind == "weights" and c.mistake)

#: The visible check of the function (on the setup cell's example).
VISIBLE_WEIGHT_CHECK = next(c.grade_id for c in CHECKPOINT.checks
                            if c.kind == "weights" and not c.mistake)

#: The derivation's checks: its intermediate quantities, then its result (the row).
SHIFT_CHECKS = CHECKPOINT.question("shifted_key").checks

#: The part-3 question's check (the online softmax's state).
ONLINE_CHECK = "test_online_state"

#: The part-2 question's check (the sizes and the cost inside a multi-head layer).
MULTIHEAD_CHECK = "test_multihead_sizes"

#: The part-2 question's sizes: tokens, heads, and each head's width d_k (d_model is
#: n_heads * d_k); d_k is never the number of tokens, so that a table of features against
#: features shows.
MULTIHEAD_TOKENS = tuple(range(5, 13))
MULTIHEAD_HEADS = (2, 3, 4, 6, 8)
MULTIHEAD_WIDTHS = tuple(range(3, 13))

#: The tokens' names in the setup cell.
TOKENS = ("we", "saw", "the", "dog")

#: The head sizes of the measured table, and its keys per row.
#: The measurements a variant's table of question 3 comes from: head sizes, keys per row,
#: the size of the queries' and keys' entries; each variant draws one of each.
TABLE_DKS = ((4, 16, 64, 256), (2, 8, 32, 128), (8, 32, 128, 512))
TABLE_KEYS = (8, 10, 12, 16, 20, 24)
TABLE_SCALES = (0.8, 0.9, 1.0, 1.1, 1.2)
_TABLE_ROWS = 400

#: Question 6: an online softmax reads a row of ONLINE_BLOCKS * ONLINE_BLOCK scores,
#: ONLINE_BLOCK at a time.
ONLINE_BLOCK = 2
ONLINE_BLOCKS = 3

_SATURATED = 0.9  # a correct weight above this (or below _TINY) counts as saturated
_TINY = 0.01
_MARGIN = 0.02  # a mistake must move some weight by at least this much to count as caught
_OPTION = re.compile(r"^- \*\*([A-Z])\.\*\* (.+)$")
BEGIN_SOLUTION = "### BEGIN SOLUTION"
_TABLE_KEYS = re.compile(r"over\s+\d+\s+rows\s+of\s+\d+\s+keys")
_TABLE_SCALE = re.compile(r"entries\s+of\s+size\s+about\s+\d+(?:\.\d+)?")
_TABLE_ROW = re.compile(r"^\| (\d+) \| ")


class _Answers:
    """The computed answers of a variant's numbers, for :class:`Variant` and
    :class:`QuizFacts` alike (each has the inputs the three questions read)."""

    @property
    def shifted_row(self) -> NDArray[np.float64]:
        """The derivation's answer (:mod:`course_grading.checkpoint_answers`)."""
        return shifted_key_row(_shift_inputs(self))

    @property
    def shift_factors(self) -> NDArray[np.float64]:
        """The derivation's intermediate quantities
        (:func:`course_grading.checkpoint_answers.shift_factors`)."""
        return shift_factors(_shift_inputs(self))

    @property
    def online_state(self) -> NDArray[np.float64]:
        """The part-3 question's answer (:mod:`course_grading.checkpoint_answers`)."""
        return online_softmax_state(_online_inputs(self))

    @property
    def multihead_sizes(self) -> NDArray[np.float64]:
        """The part-2 question's answer (:mod:`course_grading.checkpoint_answers`)."""
        return multihead_sizes(_multihead_inputs(self))


@dataclass(frozen=True)
class Variant(_Answers):
    """The numbers of one variant of the quiz.

    Attributes
    ----------
    seed_id : str
        ``"public"`` for the public variant, else a short hash of the seed.
    Q, K : ndarray, shape (4, 2)
        The setup cell's example.
    row, shift_key : int
        The derivation's row, and the key whose scores it raises.
    c : float
        How much that key's scaled scores are raised.
    table : ndarray, shape (4, 2)
        Measured mean largest weight per row: column 0 with the division by sqrt(d_k),
        column 1 without; one row per head size of ``table_setup``.
    unscaled_first : bool
        Whether the table shows the unscaled column first (as X).
    mc_order : dict of str to tuple of int
        For each multiple-choice question, the order in which its options
        (:data:`course_grading.checkpoint_answers.OPTIONS`, the public notebook's order)
        appear in this variant: ``mc_order[q][p]`` is the option shown at letter ``p``.
    hidden_inputs : dict of str to (ndarray, ndarray)
        For each hidden check of the function, the ``(Q, K)`` it uses.
    dup_query, dup_key : int
        Question 4: the query it asks about, and the token appended a second time.
    tokens : tuple of str
        The tokens' names.
    table_setup : (tuple of int, int, float)
        How the table was measured: the head sizes, the keys per row, the entries' size.
    block_scores, block : tuple of float, int
        The part-3 question: one row of scores an online softmax reads ``block`` at a
        time.
    n_tokens, d_model, n_heads : int
        The part-2 question: the sizes of a multi-head layer.
    parts : tuple of int
        The parts of the course the checkpoint covers (the instructor's choice,
        ``--parts``): :func:`fill` writes the questions of these parts only. A student's
        numbers do not depend on it.
    options : OptionBank or None
        The instructor's private option texts (``--options``,
        :mod:`course_grading.option_bank`), or None for the public templates. Only the
        texts depend on it: the option order and the right letter do not.
    """

    seed_id: str
    Q: NDArray[np.float64]
    K: NDArray[np.float64]
    row: int
    shift_key: int
    c: float
    table: NDArray[np.float64]
    unscaled_first: bool
    mc_order: dict[str, tuple[int, ...]]
    hidden_inputs: dict[str, tuple[NDArray[np.float64], NDArray[np.float64]]] = field(
        repr=False)
    dup_query: int = 0
    dup_key: int = 3
    tokens: tuple[str, ...] = TOKENS
    table_setup: tuple[tuple[int, ...], int, float] = (TABLE_DKS[0], 16, 1.0)
    block_scores: tuple[float, ...] = ()
    block: int = ONLINE_BLOCK
    n_tokens: int = 6
    d_model: int = 8
    n_heads: int = 2
    parts: tuple[int, ...] = tuple(PARTS)
    options: OptionBank | None = field(default=None, repr=False)

    @property
    def spec(self) -> QuizSpec:
        """The checkpoint as the class of this variant takes it (its parts only)."""
        return CHECKPOINT.for_parts(self.parts)



def _multihead_inputs(v: Any) -> dict[str, Any]:
    return {"n_tokens": v.n_tokens, "d_model": v.d_model, "n_heads": v.n_heads}


def _online_inputs(v: Any) -> dict[str, Any]:
    return {"scores": list(v.block_scores), "block": v.block}


def _shift_inputs(v: Any) -> dict[str, Any]:
    return {"Q": v.Q, "K": v.K, "row": v.row, "key": v.shift_key, "c": v.c}


# --------------------------------------------------------------------------------------
# the numbers
# --------------------------------------------------------------------------------------


class _Redraw(Exception):
    """The example drawn so far cannot make a usable variant: draw another."""


def _rng(seed: str, stream: str = "") -> np.random.Generator:
    """The generator of one stream of a seed's numbers. The hidden checks' inputs have a
    stream of their own, so that nothing a student sees (the example, the table) is drawn
    from the generator state that drew them."""
    tag = f"/{stream}" if stream else ""
    digest = hashlib.sha256(f"attention-course/checkpoint/v2{tag}/{seed}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:16], "big"))


def _r1(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """Round to one decimal, so the numbers read well in the notebook; +0.0, never -0.0."""
    return np.round(x, 1) + 0.0


def _off_diagonal(w: NDArray[np.float64]) -> NDArray[np.float64]:
    return w[~np.eye(w.shape[0], dtype=bool)]


def _unsaturated(w: NDArray[np.float64]) -> bool:
    off = _off_diagonal(w)
    return bool(off.max() <= _SATURATED and off.min() >= _TINY)


def _informative(w: NDArray[np.float64]) -> bool:
    """Whether no row of ``w`` is one-hot and the table is not uniform over the other
    tokens: each row has at least two weights in [0.01, 0.9], and some weight is at least
    :data:`_MARGIN` from 1 / (n - 1)."""
    n = w.shape[0]
    mask = ~np.eye(n, dtype=bool)
    inside = (w >= _TINY) & (w <= _SATURATED) & mask
    return bool(inside.sum(axis=1).min() >= 2
                and np.abs(w[mask] - 1.0 / (n - 1)).max() >= _MARGIN)


@functools.cache
def _mistaken_functions() -> dict[str, Any]:
    return {m.id: answer_function(MISTAKE_SOURCES[m.id]) for m in CHECKPOINT.mistakes}


def _answers() -> dict[str, Any]:
    return {"correct": weights_without_self, **_mistaken_functions()}


def _moved(func: Any, Q: NDArray[np.float64], K: NDArray[np.float64],
           want: NDArray[np.float64] | None = None) -> float:
    """How far ``func``'s weights are from the right ones ``want`` (computed when None;
    NaN counts as far)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        got = np.asarray(func(Q.copy(), K.copy()), dtype=float)
    if want is None:
        want = weights_without_self(Q, K)
    if got.shape != want.shape:
        return np.inf
    return float(np.abs(np.nan_to_num(got, nan=10.0, posinf=10.0, neginf=10.0) - want).max())


def _example(rng: np.random.Generator) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Four tokens' queries and keys on which every mistake shows in the visible check."""
    answers = _answers()
    while True:
        Q = rng.integers(-1, 3, size=(4, 2)).astype(float)
        K = rng.integers(-1, 3, size=(4, 2)).astype(float)
        if (np.linalg.matrix_rank(Q) < 2 or np.linalg.matrix_rank(K) < 2
                or len({tuple(r) for r in K}) < 4 or np.array_equal(Q, K)
                or not _unsaturated(weights_without_self(Q, K))):
            continue
        if all(_moved(f, Q, K) >= _MARGIN for name, f in answers.items()
               if name not in ("correct", "naive_exp_overflow")):
            return Q, K


def _shift(rng: np.random.Generator, Q: NDArray[np.float64], K: NDArray[np.float64]
           ) -> tuple[int, int, float]:
    """The derivation's row, key and c: every misconception, and a uniform row (what an
    answer that never reads the inputs can give), must give other numbers."""
    while True:
        row, key = (int(i) for i in rng.choice(4, size=2, replace=False))
        c = float(np.round(rng.uniform(0.8, 2.0), 1))
        inputs = {"Q": Q, "K": K, "row": row, "key": key, "c": c}
        if all(_shift_check_tells_apart(test_id, inputs) for test_id in SHIFT_CHECKS):
            return row, key, c


def _shift_check_tells_apart(test_id: str, inputs: dict[str, Any]) -> bool:
    """Whether, on these inputs, every misconception one of the derivation's checks names
    (and an answer that never reads the inputs: a uniform row, every factor 1) is more than
    four tolerances from the right numbers, and the misconceptions from one another."""
    check_ = CHECKPOINT.check(test_id)
    want = expected(test_id, inputs)["want"]
    wrong = [np.asarray(MISCONCEIVED[m.id](inputs)) for m in
             CHECKPOINT.misconceptions_of_check(test_id)]
    known = [*wrong, np.full(len(want), 1 / len(want)), np.ones(len(want))]
    far = 4 * check_.tolerance
    return (all(np.abs(w - np.asarray(want)).max() > far for w in known)
            and all(np.abs(a - b).max() > far for i, a in enumerate(wrong)
                    for b in wrong[i + 1:]))


def _duplicate(rng: np.random.Generator, Q: NDArray[np.float64], K: NDArray[np.float64],
               avoid: set[str] | frozenset[str] = frozenset()) -> tuple[int, int]:
    """Question 4's query and duplicated key: two tokens, the key's weight between 0.1 and
    0.4 (so that doubling it leaves some weight for the others), every option's numbers
    different at two decimals, and no option reading as one of ``avoid`` (the public
    notebook's)."""
    pairs = [(q, k) for q in range(4) for k in range(4) if q != k]
    for i in rng.permutation(len(pairs)):
        query, key = pairs[int(i)]
        inputs = {"Q": Q, "K": K, "dup_query": query, "dup_key": key, "tokens": TOKENS}
        w = duplicated_key_weight(inputs)
        if not 0.1 <= w <= 0.4:
            continue
        numbers = option_numbers("mc_duplicate_key", inputs)
        shown = [numbers[k] for k in ("w", "half", "one_plus_w", "pair", "shrink",
                                      "double", "rest")]
        texts = {text.format(**numbers) for _, text in OPTIONS["mc_duplicate_key"]}
        if len(set(shown)) == len(shown) and not texts & avoid:
            return query, key
    raise _Redraw("no query and key of this example give question 4 distinct options")


def online_scores(rng: np.random.Generator) -> tuple[float, ...]:
    """Question 6's row of scores: the second block raises the maximum (by at least 0.5, so
    that forgetting to rescale the running sum shows) and the last block's largest score is
    below the running maximum (by at least 0.5, so that keeping a block's own maximum
    shows); every misconception of the question, the whole row's state written for every
    block (what a call of softmax on the row gives) and any constant answer are more than
    four tolerances from the right state, and the misconceptions from one another."""
    tolerance = CHECKPOINT.check(ONLINE_CHECK).tolerance
    names = [m.id for m in CHECKPOINT.misconceptions_of(CHECKPOINT.check(ONLINE_CHECK).question)]
    while True:
        scores = _r1(rng.uniform(-2.0, 3.0, size=ONLINE_BLOCK * ONLINE_BLOCKS))
        first, second, last = (scores[i:i + ONLINE_BLOCK] for i in
                               range(0, scores.size, ONLINE_BLOCK))
        if not (second.max() >= first.max() + 0.5 and last.max() <= second.max() - 0.5):
            continue
        inputs = {"scores": scores.tolist(), "block": ONLINE_BLOCK}
        want = online_softmax_state(inputs)
        wrong = [MISCONCEIVED[m](inputs) for m in names]
        known = [*wrong, *online_know_nothing(inputs).values()]
        if (all(np.abs(w - want).max() > 4 * tolerance for w in known)
                and all(np.abs(a - b).max() > 4 * tolerance
                        for i, a in enumerate(wrong) for b in wrong[i + 1:])):
            return tuple(float(x) for x in scores)


def multihead_draw(rng: np.random.Generator) -> tuple[int, int, int]:
    """The part-2 question's sizes (n_tokens, d_model, n_heads): every misconception of the
    question, and each :func:`multihead_know_nothing` answer, is more than four tolerances
    from the right sizes, and the misconceptions from one another."""
    tolerance = CHECKPOINT.check(MULTIHEAD_CHECK).tolerance
    names = [m.id for m in CHECKPOINT.misconceptions_of("multihead_sizes")]
    while True:
        n = int(rng.choice(MULTIHEAD_TOKENS))
        h = int(rng.choice(MULTIHEAD_HEADS))
        d_k = int(rng.choice(MULTIHEAD_WIDTHS))
        if d_k == n:
            continue
        inputs = {"n_tokens": n, "d_model": h * d_k, "n_heads": h}
        want = multihead_sizes(inputs)
        wrong = [MISCONCEIVED[m](inputs) for m in names]
        known = [*wrong, *multihead_know_nothing(inputs).values()]
        if (all(np.abs(w - want).max() > 4 * tolerance for w in known)
                and all(np.abs(a - b).max() > 4 * tolerance
                        for i, a in enumerate(wrong) for b in wrong[i + 1:])):
            return n, h * d_k, h


def multihead_know_nothing(inputs: dict[str, Any]) -> dict[str, NDArray[np.float64]]:
    """Answers to the part-2 question that work nothing out (name -> sizes): constants,
    and the setup cell's own numbers written back."""
    n, d_model, h = (float(inputs[k]) for k in ("n_tokens", "d_model", "n_heads"))
    out = {f"constant_{v:g}": np.full(6, float(v)) for v in (0.0, 1.0)}
    out["setup_echoed"] = np.array([d_model, n, n, n * n, d_model, n * n * d_model])
    out["heads_as_width"] = np.array([h, n, n, h * n * n, d_model, n * n * h])
    return out


def online_know_nothing(inputs: dict[str, Any]) -> dict[str, NDArray[np.float64]]:
    """Answers to question 6 that never work through the blocks (name -> state): constant
    states, and the state of the whole row (its maximum and sum, as a call of softmax on the
    row gives them) written for every block."""
    scores = np.asarray(inputs["scores"], dtype=float)
    n = 2 * (scores.size // int(inputs["block"]))
    whole = [scores.max(), float(np.exp(scores - scores.max()).sum())]
    out = {f"constant_{v:g}": np.full(n, float(v)) for v in (0.0, 0.5, 1.0, 2.0)}
    out["whole_row_each_block"] = np.array(whole * (n // 2))
    return out


def measure_table(rng: np.random.Generator, dks: Sequence[int] = TABLE_DKS[0],
                  n_keys: int = 16, rows: int = _TABLE_ROWS, scale: float = 1.0
                  ) -> NDArray[np.float64]:
    """Measure the mean largest weight of a row, with and without the division by sqrt(d_k).

    Queries and keys have independent normal entries of standard deviation ``scale``.

    Returns
    -------
    ndarray, shape (len(dks), 2)
        Column 0 with the division, column 1 without; rounded to two decimals.
    """
    out = []
    for d in dks:
        q = scale * rng.standard_normal((rows, d))
        k = scale * rng.standard_normal((n_keys, d))
        scaled = attention_weights(q, k).max(axis=-1).mean()
        unscaled = softmax(q @ k.T).max(axis=-1).mean()
        out.append([scaled, unscaled])
    return np.round(np.array(out), 2) + 0.0


def _symmetric_circulant(first_row: Sequence[float]) -> NDArray[np.float64]:
    n = len(first_row)
    return np.array([[first_row[(j - i) % n] for j in range(n)] for i in range(n)])


def _derangement(rng: np.random.Generator, n: int) -> NDArray[np.int64]:
    """A random permutation of ``range(n)`` that moves every index."""
    while True:
        perm = rng.permutation(n)
        if not np.any(perm == np.arange(n)):
            return perm


def _far_key_inputs(rng: np.random.Generator, near: NDArray[np.float64],
                    diagonal: NDArray[np.float64]
                    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Four tokens, d_k = 4, whose scores are ``near[i]`` on two keys of row i, far below on
    the third (a different key in each row and each column), ``diagonal[i]`` on itself.

    The right weights of each row are then 1/2, 1/2 and 0 (to float precision) whatever the
    scale: far keys get a weight below 1e-13 with or without the division, and the two
    near keys share the row. Integer entries keep equal scores exactly equal. The keys are
    a signed permutation matrix and the queries the scores carried over, so that
    ``Q @ K.T`` is exactly the table of scores.
    """
    n = len(near)
    far = _derangement(rng, n)
    drop = rng.integers(61, 81, size=n).astype(float)
    scores = np.tile(near[:, None], (1, n))
    scores[np.arange(n), far] = near - drop
    scores[np.arange(n), np.arange(n)] = diagonal
    keys = np.eye(n)[rng.permutation(n)] * rng.choice([-1.0, 1.0], size=n)[:, None]
    queries = scores @ keys  # keys is orthogonal: queries @ keys.T == scores
    return queries + 0.0, keys + 0.0


def _hidden_inputs(
    rng: np.random.Generator,
) -> dict[str, tuple[NDArray[np.float64], NDArray[np.float64]]]:
    """Draw inputs on which each hidden check sees its own mistake and no other of the four.

    All are four tokens, so that hiding the diagonal matters in every check, and on none is
    the right answer uniform over the other tokens (issue 42): an answer that never reads
    Q and K fails every one.
    """
    # missing scale: Q = K symmetric circulant and n = d_k. The scores are symmetric with
    # every row a permutation of the first, so every row (diagonal hidden) has the same
    # total: a softmax over the wrong axis gives the same weights, and d_k read from the
    # wrong axis is the same number. Only the scale changes the answer.
    a, b, c = _r1(rng.uniform(-1.5, 1.5, size=3))
    q_scale = _symmetric_circulant([a, b, c, b])
    # wrong axis: in each row two equal scores and one far below (weights 1/2, 1/2, 0, so
    # neither the scale nor d_k can matter: n = d_k = 4), the equal scores differing from
    # row to row, so that a softmax down a column, over the queries, gives other weights.
    near = rng.choice(np.arange(-3.0, 4.0), size=4, replace=False)
    q_axis, k_axis = _far_key_inputs(rng, near, near.copy())
    # naive exp: the same pattern with every near score the same large number (above 709
    # after scaling, where exp overflows in float64; the far ones too): each column then
    # has two near scores and one far, like each row, so the axis does not matter either.
    big = np.full(4, float(rng.integers(1500, 2501)))
    q_big, k_big = _far_key_inputs(rng, big, big.copy())
    # d_k from the wrong axis: d_k = 1, so the scale is 1 (a missing scale changes
    # nothing) while n = 4; two signs of each kind, so every row's visible scores are one
    # of each sign and one like it: every row and column has the same total.
    signs = rng.permutation([1.0, 1.0, -1.0, -1.0])
    q_dk = _r1(signs * rng.uniform(0.7, 1.1))[:, None]
    return {
        "test_missing_scale": (q_scale, q_scale.copy()),
        "test_wrong_axis": (q_axis, k_axis),
        "test_naive_exp_overflow": (q_big, k_big),
        "test_dk_from_wrong_axis": (q_dk, q_dk.copy()),
    }


def know_nothing_answers(variant: Variant) -> dict[str, Any]:
    """Answers to ``weights_without_self`` that never read Q and K (name -> function).

    Uniform weights over the other tokens (0 on the diagonal), uniform over every token,
    the right table of the setup cell's example replayed on any input, and constant
    tables. A student who knows nothing of attention can hand in any of these; each must
    fail every hidden check of the function (issue 42).
    """
    replay = weights_without_self(variant.Q, variant.K)

    def const(value: float, hide: bool) -> Any:
        def answer(Q: Any, K: Any) -> NDArray[np.float64]:
            n = np.shape(Q)[0]
            out = np.full((n, n), value)
            if hide:
                np.fill_diagonal(out, 0.0)
            return out
        return answer

    answers: dict[str, Any] = {
        "uniform_over_others": lambda Q, K: (1.0 - np.eye(np.shape(Q)[0]))
        / (np.shape(Q)[0] - 1),
        "uniform_over_all": lambda Q, K: np.full((np.shape(Q)[0],) * 2, 1.0 / np.shape(Q)[0]),
        "visible_example_replayed": lambda Q, K: replay.copy(),
    }
    for value in (0.0, 0.25, 1 / 3, 0.5, 1.0):
        answers[f"constant_{value:.3g}"] = const(value, hide=False)
        answers[f"constant_{value:.3g}_zero_diagonal"] = const(value, hide=True)
    return answers


def baseline_table(variant: Variant) -> dict[str, dict[str, float]]:
    """How far each :func:`know_nothing_answers` answer is from the right weights, on each
    hidden check of the function (``table[answer][grade_id]``: largest difference)."""
    right = {test_id: weights_without_self(Q, K)
             for test_id, (Q, K) in variant.hidden_inputs.items()}
    return {name: {test_id: _moved(func, Q, K, right[test_id])
                   for test_id, (Q, K) in variant.hidden_inputs.items()}
            for name, func in know_nothing_answers(variant).items()}


def isolation_table(variant: Variant) -> dict[str, dict[str, bool]]:
    """Which check of the function catches which answer, measured on the variant's inputs.

    Runs a correct answer and every mistake of the spec on the visible check's inputs (the
    setup cell's example) and on each hidden check's.

    Returns
    -------
    dict
        ``table[answer][grade_id]`` is True when the check fails for that answer, where
        ``answer`` is ``"correct"`` or a mistake id.
    """
    inputs = {VISIBLE_WEIGHT_CHECK: (variant.Q, variant.K), **variant.hidden_inputs}
    right = {test_id: weights_without_self(Q, K) for test_id, (Q, K) in inputs.items()}
    table: dict[str, dict[str, bool]] = {}
    for name, func in _answers().items():
        table[name] = {test_id: _moved(func, Q, K, right[test_id])
                       > CHECKPOINT.check(test_id).tolerance
                       for test_id, (Q, K) in inputs.items()}
    return table


def _check_variant(variant: Variant) -> str | None:
    """Return why the variant is unusable, or None if every check catches what it must."""
    for test_id, (Q, K) in variant.hidden_inputs.items():
        if not _informative(weights_without_self(Q, K)):
            return f"{test_id}: the right weights are one-hot or uniform in some row"
    for name, row in baseline_table(variant).items():
        passed = sorted(t for t, moved in row.items() if moved < _MARGIN)
        if passed:
            return f"{name}, which never reads Q and K, passes {passed}"
    table = isolation_table(variant)
    own = {c.grade_id: c.mistake for c in CHECKPOINT.checks if c.mistake}
    every = {m.id for m in CHECKPOINT.mistakes if m.everywhere}
    for name, row in table.items():
        if name == "correct":
            want = dict.fromkeys(row, False)
        elif name in every:
            want = dict.fromkeys(row, True)
        elif name in own.values():  # the visible check may catch it too
            want = {t: own.get(t) == name for t in row}
            want[VISIBLE_WEIGHT_CHECK] = row[VISIBLE_WEIGHT_CHECK]
        else:  # caught by the visible check and by at least one hidden one
            if not (row[VISIBLE_WEIGHT_CHECK] and sum(row.values()) >= 2):
                return f"{name}: caught only by {sorted(t for t, bad in row.items() if bad)}"
            continue
        if row != want:
            return f"{name}: fails {sorted(t for t, bad in row.items() if bad)}"
    for test_id, mistake_id in own.items():
        Q, K = variant.hidden_inputs[test_id]
        moved = _moved(answer_function(MISTAKE_SOURCES[mistake_id]), Q, K)
        if moved < _MARGIN:
            return f"{test_id}: the mistake moves the weights by only {moved:.3g}"
    return None


def make_variant(seed: str = DEFAULT_SEED, parts: str | Sequence[int] | None = None,
                 options: OptionBank | None = None) -> Variant:
    """Draw the numbers of the quiz variant for ``seed``.

    Parameters
    ----------
    seed : str
        Any text; keep it private to grade a class. :data:`DEFAULT_SEED` gives the
        public variant (its numbers drawn like any other's) and the public notebook's
        option order.
    parts : str or sequence of int, optional
        The parts of the course the checkpoint covers (:func:`parse_parts`; default:
        every part). Every part's numbers are drawn whatever the choice, each from a
        stream of its own, so a student's numbers do not depend on it.
    options : OptionBank, optional
        The instructor's option texts (:mod:`course_grading.option_bank`; default: the
        public templates). The numbers, the option order and the right letters do not
        depend on it.

    Raises
    ------
    ValueError
        If ``seed`` is empty, or ``parts`` names a part the course does not have.
    """
    if not isinstance(seed, str) or not seed:
        raise ValueError(f"seed must be a non-empty string (got {seed!r})")
    chosen = tuple(PARTS) if parts is None else parse_parts(parts)
    return dataclasses.replace(_draw(seed), parts=chosen, options=options)


@functools.lru_cache(maxsize=256)
def _draw(seed: str) -> Variant:
    """Every number of the variant of ``seed``, for every part (see :func:`make_variant`)."""
    public = seed == DEFAULT_SEED
    avoid = {} if public else _public_option_texts()
    rng = _rng(seed)
    while True:
        Q, K = _example(rng)
        row, shift_key, c = _shift(rng, Q, K)
        try:
            dup_query, dup_key = _duplicate(rng, Q, K, avoid.get("mc_duplicate_key", set()))
        except _Redraw:
            continue
        break
    order = _rng(seed, "order")
    mc_order = {q: tuple(range(len(CHECKPOINT.letters))) if public else
                tuple(int(i) for i in order.permutation(len(CHECKPOINT.letters)))
                for q in MC_QUESTIONS}
    table_setup, table, unscaled_first = _table(
        _rng(seed, "table"), public, avoid.get("mc_read_table", set()), mc_order)
    seed_id = "public" if public else hashlib.sha256(seed.encode()).hexdigest()[:12]
    block_scores = online_scores(_rng(seed, "online"))
    n_tokens, d_model, n_heads = multihead_draw(_rng(seed, "multihead"))
    hidden = _rng(seed, "hidden")
    for _attempt in range(1000):
        variant = Variant(seed_id, Q, K, row, shift_key, c, table, unscaled_first, mc_order,
                          _hidden_inputs(hidden), dup_query, dup_key, TOKENS, table_setup,
                          block_scores, ONLINE_BLOCK, n_tokens, d_model, n_heads)
        if _check_variant(variant) is None:
            return variant
    raise RuntimeError(f"could not draw isolating hidden-check inputs for seed {seed!r}")


@functools.cache
def _public_option_texts() -> dict[str, frozenset[str]]:
    """The option texts of the public notebook, which no other variant may show."""
    public = make_variant(DEFAULT_SEED)
    return {q: frozenset(mc_options(public, q)) for q in MC_QUESTIONS}


def _table(rng: np.random.Generator, public: bool, avoid: set[str] | frozenset[str],
           mc_order: dict[str, tuple[int, ...]]
           ) -> tuple[tuple[tuple[int, ...], int, float], NDArray[np.float64], bool]:
    """Question 3's measurement: how it was made, the table, and which column is X.

    The undivided column must climb (by at least 0.3) and the divided one stay flat (within
    0.05), as the question says they do; and no option may read as one of ``avoid`` (the
    public notebook's).
    """
    while True:
        if public:
            setup: tuple[tuple[int, ...], int, float] = (TABLE_DKS[0], 16, 1.0)
        else:
            setup = (TABLE_DKS[int(rng.integers(len(TABLE_DKS)))],
                     int(rng.choice(TABLE_KEYS)), float(rng.choice(TABLE_SCALES)))
        table = measure_table(rng, setup[0], setup[1], scale=setup[2])
        unscaled_first = False if public else bool(rng.integers(2))
        scaled, unscaled = table[:, 0], table[:, 1]
        if not (np.all(np.diff(unscaled) > 0) and unscaled[-1] - unscaled[0] >= 0.3
                and scaled.max() - scaled.min() <= 0.05):
            continue
        numbers = option_numbers("mc_read_table", {
            "table": table, "unscaled_first": unscaled_first, "table_setup": setup})
        texts = {text.format(**numbers) for _, text in OPTIONS["mc_read_table"]}
        if not texts & avoid:
            return setup, table, unscaled_first


# --------------------------------------------------------------------------------------
# the notebook
# --------------------------------------------------------------------------------------


def _number(x: float) -> str:
    return repr(float(x) + 0.0)


def _format(value: Any, indent: int, multiline: bool) -> str:
    """A literal's text: one row per line (indented) when ``multiline``."""
    if isinstance(value, list) and value and isinstance(value[0], list):
        rows = ["[" + ", ".join(_number(x) for x in row) + "]" for row in value]
        if not multiline:
            return "[" + ", ".join(rows) + "]"
        pad = " " * (indent + 4)
        return "[\n" + "".join(f"{pad}{r},\n" for r in rows) + " " * indent + "]"
    if isinstance(value, list) and all(isinstance(x, str) for x in value):
        return "[" + ", ".join(json.dumps(x) for x in value) + "]"
    if isinstance(value, list):
        return "[" + ", ".join(_number(x) for x in value) + "]"
    if isinstance(value, _Encoded):
        step = 88
        return ("\n" + " " * indent).join(f'"{value[i:i + step]}"'
                                           for i in range(0, len(value), step))
    if isinstance(value, dict):
        return "{" + ", ".join(f'"{k}": "{v}"' for k, v in value.items()) + "}"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, float):
        return _number(value)
    return repr(value)


#: Decimals of the expected weights written into the visible check (its tolerance is 1e-6).
_EXPECTED_DECIMALS = 8


def encode_expected(value: dict[str, Any]) -> str:
    """``value`` as the one line the visible test cell holds (base64 of zlib'd JSON).

    :func:`course_quiz.checkpoint_checks.read_expected` reads it back; numbers are rounded
    to 8 decimals.

    Examples
    --------
    >>> from course_quiz.checkpoint_checks import read_expected
    >>> read_expected(encode_expected({"want": [[0.0, 1 / 3]]}))
    {'want': [[0.0, 0.33333333]]}
    """
    def rounded(x: Any) -> Any:
        if isinstance(x, dict):
            return {k: rounded(v) for k, v in x.items()}
        if isinstance(x, list):
            return [rounded(v) for v in x]
        return round(float(x), _EXPECTED_DECIMALS) + 0.0
    text = json.dumps(rounded(value), separators=(",", ":"))
    return base64.b64encode(zlib.compress(text.encode(), 9)).decode()


class _Encoded(str):
    """An :func:`encode_expected` text, written as one string literal per line."""


def _replace(source: str, edits: list[tuple[Literal, Any]]) -> str:
    """Replace literals (by their positions) with new values, keeping their layout."""
    lines = source.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    out = source
    for lit, value in sorted(edits, key=lambda e: e[0].start, reverse=True):
        start = offsets[lit.start[0] - 1] + lit.start[1]
        end = offsets[lit.end[0] - 1] + lit.end[1]
        line = lines[lit.start[0] - 1]
        indent = len(line) - len(line.lstrip(" "))
        out = out[:start] + _format(value, indent, lit.start[0] != lit.end[0]) + out[end:]
    return out


def _cells(nb: nbformat.NotebookNode) -> dict[str, nbformat.NotebookNode]:
    return {c.metadata["nbgrader"]["grade_id"]: c for c in nb.cells
            if "grade_id" in c.metadata.get("nbgrader", {})}


def _hidden_call(cell: nbformat.NotebookNode, grade_id: str) -> Any:
    return _hidden_calls(cell, grade_id, required=True)[0]


#: The derivation's check of its result (the row).
SHIFT_CHECK = "test_shifted_key"


def _expected_literal(call: Any, grade_id: str) -> Literal:
    """The ``expected=`` literal of a hidden check call (what plain nbgrader, running the
    check in the kernel, compares with; the grader computes its own)."""
    lit = call.inputs.get("expected")
    if not isinstance(lit, Literal):
        raise QuizSourceError(f"the hidden check of {grade_id} must pass expected=(\"...\")")
    return lit


def _question_markdown(nb: nbformat.NotebookNode, answer_id: str) -> nbformat.NotebookNode:
    """The markdown cell right before an answer cell (where its options are listed)."""
    for i, cell in enumerate(nb.cells):
        if cell.metadata.get("nbgrader", {}).get("grade_id") == answer_id:
            for before in reversed(nb.cells[:i]):
                if before.cell_type == "markdown":
                    return before
    raise QuizSourceError(f"no markdown cell before the answer cell {answer_id}")


@dataclass(frozen=True)
class QuizFacts(_Answers):
    """The numbers of one source notebook: its example and its right letters.

    Attributes
    ----------
    Q, K : ndarray
        The setup cell's example.
    row, shift_key : int
    c : float
    right : dict of str to str
        Multiple-choice question (answer cell's grade id) -> its right letter.
    wrong : dict of str to dict of str to str
        Multiple-choice question -> wrong letter -> the misconception it stands for.
    dup_query, dup_key : int
        Question 4's query and the token appended twice.
    block_scores, block : tuple of float, int
        The part-3 question's row of scores and block size.
    n_tokens, d_model, n_heads : int
        The part-2 question's sizes.
    questions : tuple of str
        The questions (answer cells' grade ids) the notebook has: those of the parts its
        checkpoint covers.
    """

    Q: NDArray[np.float64]
    K: NDArray[np.float64]
    row: int
    shift_key: int
    c: float
    right: dict[str, str]
    wrong: dict[str, dict[str, str]]
    dup_query: int = 0
    dup_key: int = 3
    block_scores: tuple[float, ...] = ()
    block: int = ONLINE_BLOCK
    questions: tuple[str, ...] = tuple(q.id for q in CHECKPOINT.questions)
    n_tokens: int = 6
    d_model: int = 8
    n_heads: int = 2

    def mc_answer(self, question: str) -> str:
        """The right letter of a question (``"mc_read_table"`` or just ``"read_table"``)."""
        return self.right[question if question in self.right else f"mc_{question}"]

    def mc_letter_for(self, question: str, misconception: str) -> str:
        """The wrong letter that stands for ``misconception`` in ``question``."""
        q = question if question in self.wrong else f"mc_{question}"
        return next(letter for letter, m in self.wrong[q].items() if m == misconception)



def quiz_facts(nb: nbformat.NotebookNode) -> QuizFacts:
    """The numbers a source notebook holds: the example and the right letters."""
    cells = _cells(nb)
    setup = setup_values(cells["setup"].source)
    right, wrong = {}, {}
    for question in MC_QUESTIONS:
        (test_id,) = CHECKPOINT.question(question).checks
        call = _hidden_call(cells[test_id], test_id)
        lit = call.inputs.get("right")
        if not isinstance(lit, Literal) or lit.value not in tuple(CHECKPOINT.letters):
            raise QuizSourceError(f"the hidden check of {test_id} must pass right=\"<letter>\"")
        named = call.inputs.get("wrong")
        names = {m.id for m in CHECKPOINT.misconceptions_of(question)}
        if (not isinstance(named, Literal) or not isinstance(named.value, dict)
                or set(named.value) | {lit.value} != set(CHECKPOINT.letters)
                or set(named.value.values()) != names):
            raise QuizSourceError(f"the hidden check of {test_id} must pass wrong={{letter: "
                                  f"misconception}} for every other letter, naming each of "
                                  f"{sorted(names)} once")
        right[question] = lit.value
        wrong[question] = dict(named.value)
    Q, K = (np.asarray(setup[n].value, dtype=float) for n in ("Q", "K"))
    online = "block_scores" in setup and "block" in setup
    return QuizFacts(Q, K, int(setup["row"].value), int(setup["shift_key"].value),
                     float(setup["c"].value), right, wrong, int(setup["dup_query"].value),
                     int(setup["dup_key"].value),
                     tuple(float(x) for x in setup["block_scores"].value) if online else (),
                     int(setup["block"].value) if online else ONLINE_BLOCK,
                     tuple(q.id for q in CHECKPOINT.questions if q.id in cells),
                     *(int(setup[k].value) if k in setup else default for k, default in
                       (("n_tokens", 6), ("d_model", 8), ("n_heads", 2))))


def facts_of(variant: Variant) -> QuizFacts:
    """What :func:`quiz_facts` reads from a notebook filled with ``variant``, without one."""
    right, wrong = {}, {}
    for question in MC_QUESTIONS:
        right[question], wrong[question] = mc_letters(variant, question)
    return QuizFacts(variant.Q, variant.K, variant.row, variant.shift_key, variant.c, right,
                     wrong, variant.dup_query, variant.dup_key, variant.block_scores,
                     variant.block, tuple(q.id for q in variant.spec.questions),
                     variant.n_tokens, variant.d_model, variant.n_heads)


def _option_inputs(v: Any) -> dict[str, Any]:
    return {"table": v.table, "unscaled_first": v.unscaled_first, "Q": v.Q, "K": v.K,
            "tokens": v.tokens, "dup_query": v.dup_query, "dup_key": v.dup_key,
            "table_setup": v.table_setup}


def mc_templates(variant: Variant, question: str) -> tuple[tuple[str, str], ...]:
    """A question's ``(key, template)`` options for ``variant``: the instructor's bank when
    the variant has one, else the public templates, in the public templates' key order."""
    if variant.options is not None:
        return variant.options.templates(question)
    return OPTIONS[question]


def mc_options(variant: Variant, question: str) -> list[str]:
    """A multiple-choice question's option texts in ``variant``, in letter order (A, B...),
    each filled with the variant's numbers (from the instructor's bank, when the variant
    has one: :attr:`Variant.options`)."""
    options = mc_templates(variant, question)
    numbers = option_numbers(question, _option_inputs(variant))
    return [options[i][1].format(**numbers) for i in variant.mc_order[question]]


def mc_letters(variant: Variant, question: str) -> tuple[str, dict[str, str]]:
    """The right letter of a question in ``variant``, and the misconception of each wrong
    letter (letter -> misconception id, in letter order)."""
    keys = [mc_templates(variant, question)[i][0] for i in variant.mc_order[question]]
    letters = CHECKPOINT.letters
    right = letters[keys.index("right")]
    return right, {letters[p]: k for p, k in enumerate(keys) if k != "right"}


def _fill_table(markdown: nbformat.NotebookNode, variant: Variant) -> None:
    """Write the measured table into question 3's markdown (column X first), and how it
    was measured into its stem."""
    dks, n_keys, scale = variant.table_setup
    text = markdown.source
    for pattern, said in ((_TABLE_KEYS, f"over {_TABLE_ROWS} rows of {n_keys} keys"),
                          (_TABLE_SCALE, f"entries of size about {scale:g}")):
        text, found = pattern.subn(said, text)
        if found != 1:
            raise QuizSourceError(f"the question before mc_read_table must say once how the "
                                  f"table was measured ('{said}'; found {found})")
    lines = text.split("\n")
    where = [i for i, line in enumerate(lines) if _TABLE_ROW.match(line)]
    if len(where) != len(dks):
        raise QuizSourceError(f"the table of mc_read_table must have {len(dks)} rows "
                              f"'| d_k | X | Y |' (found {len(where)})")
    for i, d, (scaled, unscaled) in zip(where, dks, variant.table, strict=True):
        x, y = (unscaled, scaled) if variant.unscaled_first else (scaled, unscaled)
        lines[i] = f"| {d} | {x:.2f} | {y:.2f} |"
    markdown.source = "\n".join(lines)


def _fill_options(markdown: nbformat.NotebookNode, variant: Variant, question: str) -> None:
    lines = markdown.source.split("\n")
    where = [i for i, line in enumerate(lines) if _OPTION.match(line)]
    letters = CHECKPOINT.letters
    if len(where) != len(letters):
        raise QuizSourceError(f"the question before {question} must list {len(letters)} "
                              f"options as '- **A.** ...' lines (found {len(where)})")
    for letter, i, text in zip(letters, where, mc_options(variant, question), strict=True):
        lines[i] = f"- **{letter}.** {text}"
    markdown.source = "\n".join(lines)


def _hidden_calls(cell: nbformat.NotebookNode, grade_id: str, required: bool) -> list[Any]:
    """The hidden check call of a test cell: exactly one where the cell has hidden tests
    (the source, or a submission as the grader restores it), none in a release."""
    calls = [c for c in check_calls(cell.source) if c.grade_id == grade_id and c.hidden]
    if len(calls) > 1 or (required and not calls):
        raise QuizSourceError(f"test cell {grade_id} must hold exactly one hidden "
                              f"check(\"{grade_id}\", ...) call (found {len(calls)})")
    return calls


def _edit_call(cells: dict[str, nbformat.NotebookNode], grade_id: str, required: bool,
               values: dict[str, Any]) -> None:
    """Set the given inputs of a test cell's hidden call (``expected`` as its encoding)."""
    cell = cells[grade_id]
    for call in _hidden_calls(cell, grade_id, required):
        edits = []
        for name, value in values.items():
            lit = _expected_literal(call, grade_id) if name == "expected" else \
                call.inputs.get(name)
            if not isinstance(lit, Literal):
                raise QuizSourceError(f"the hidden check of {grade_id} must pass {name}= as "
                                      "a literal")
            edits.append((lit, _Encoded(encode_expected(value)) if name == "expected"
                          else value))
        cell.source = _replace(cell.source, edits)


def fill_setup(source: str, variant: Variant) -> str:
    """The setup cell's source with the literals of ``variant``.

    Raises
    ------
    QuizSourceError
        If the cell does not assign every name of the spec's setup.
    """
    values = setup_values(source)
    spec = variant.spec
    missing = [n for n in spec.setup_names if n not in values]
    if missing:
        raise QuizSourceError(f"the setup cell must assign {', '.join(missing)}")
    extra = sorted(n for n in CHECKPOINT.setup_names
                   if n in values and n not in spec.setup_names)
    if extra:
        raise QuizSourceError(f"the setup cell assigns {', '.join(extra)}, which only questions "
                              f"of parts the checkpoint does not cover use (it covers parts "
                              f"{_listed(spec.covers)})")
    new = {"Q": variant.Q.tolist(), "K": variant.K.tolist(), "row": variant.row,
           "shift_key": variant.shift_key, "c": variant.c, "dup_query": variant.dup_query,
           "dup_key": variant.dup_key, "tokens": list(variant.tokens),
           "block_scores": list(variant.block_scores), "block": variant.block,
           "n_tokens": variant.n_tokens, "d_model": variant.d_model,
           "n_heads": variant.n_heads}
    return _replace(source, [(values[n], new[n]) for n in spec.setup_names])


def _listed(parts: Sequence[int]) -> str:
    return ", ".join(str(p) for p in parts)


_HEADING = re.compile(r"^##\s")
_QUESTION_NUMBER = re.compile(r"\bQuestion (\d+)\b")
_SUMMARY = re.compile(r"^(\w+) questions?, (\d+) points?, about (\d+) minutes")
_SUMMARY_PART = re.compile(r"^- \*\*Part (\d+)\b[^*]*\*\* \((\d+) points?, about (\d+) minutes\)")
_COUNTS = ("No", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine", "Ten")


def _grade_id_of(cell: nbformat.NotebookNode) -> str | None:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def _keep_parts(nb: nbformat.NotebookNode, spec: QuizSpec) -> None:
    """Take out of a source or release every cell, setup value and summary line of the
    questions of parts ``spec`` does not cover; renumber the questions left."""
    dropped = [q for q in CHECKPOINT.questions if q.id not in {x.id for x in spec.questions}]
    gone = {q.id for q in dropped} | {c for q in dropped for c in q.checks}
    blocks: list[list[nbformat.NotebookNode]] = [[]]
    for cell in nb.cells:
        if cell.cell_type == "markdown" and _HEADING.match(cell.source):
            blocks.append([])
        blocks[-1].append(cell)
    kept = []
    for block in blocks:
        ids = {_grade_id_of(c) for c in block}
        if ids & gone:
            others = sorted(i for i in ids - gone if i is not None)
            if others:
                raise QuizSourceError(f"the cells of {', '.join(sorted(ids & gone))} share a "
                                      f"'## ' section with {', '.join(others)}: each "
                                      "question needs a heading of its own")
            continue
        kept.extend(block)
    nb.cells = kept
    cells = _cells(nb)
    if "setup" in cells:
        cells["setup"].source = _drop_setup(cells["setup"].source,
                                            {n for q in dropped for n in q.setup})
    numbers = [int(m.group(1)) for c in nb.cells if c.cell_type == "markdown"
               for m in [re.match(r"^## Question (\d+)", c.source)] if m]
    renumber = {str(old): str(new) for new, old in enumerate(numbers, start=1)}
    for cell in nb.cells:
        if cell.cell_type == "markdown" or _grade_id_of(cell) == "setup":
            cell.source = _QUESTION_NUMBER.sub(
                lambda m: f"Question {renumber.get(m.group(1), m.group(1))}", cell.source)


def _summary(text: str, spec: QuizSpec) -> str:
    """The first cell's summary for the questions of ``spec``: one line per part covered
    (each must give the spec's points), and the count, points and minutes of them all."""
    lines = text.split("\n")
    first = [i for i, line in enumerate(lines) if _SUMMARY.match(line)]
    if len(first) != 1:
        raise QuizSourceError("the first cell must say once 'N questions, P points, about M "
                              f"minutes' (found {len(first)})")
    out, minutes, dropping = [], 0, False
    for line in lines:
        part = _SUMMARY_PART.match(line)
        if dropping and line.startswith("  ") and line.strip():
            continue  # the rest of a dropped part's list item
        dropping = False
        if part:
            number, points = int(part.group(1)), int(part.group(2))
            if number not in spec.parts:
                dropping = True
                continue
            if points != spec.points_of_part(number):
                raise QuizSourceError(f"the first cell gives part {number} {points} points; "
                                      f"its questions have {spec.points_of_part(number)}")
            minutes += int(part.group(3))
        out.append(line)
    said = {int(m.group(1)) for m in map(_SUMMARY_PART.match, out) if m}
    if said != set(spec.parts):
        raise QuizSourceError(f"the first cell must have a line '- **Part N ...** (P points, "
                              f"about M minutes): ...' for each of parts {_listed(spec.parts)} "
                              f"(found {_listed(sorted(said))})")
    n = len(spec.questions)
    count = _COUNTS[n] if n < len(_COUNTS) else str(n)
    i = first[0]
    out[out.index(lines[i])] = _SUMMARY.sub(
        f"{count} question{'s' * (n != 1)}, {spec.total_points} points, about {minutes} "
        "minutes", lines[i])
    return "\n".join(out)


def _drop_setup(source: str, names: set[str]) -> str:
    """The setup cell without the assignments of ``names`` (those it has: a notebook
    already without them is left as it is), and without a comment line whose statements
    (up to the next comment or blank line) all went with them."""
    if not names:
        return source
    lines = source.split("\n")
    remove: set[int] = set()
    for node in ast.parse(source).body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id in names):
            remove.update(range(node.lineno - 1, node.end_lineno or node.lineno))
    for i, line in enumerate(lines):
        if line.lstrip().startswith("#"):
            below = []
            for j in range(i + 1, len(lines)):
                if not lines[j].strip() or lines[j].lstrip().startswith("#"):
                    break
                below.append(j)
            if below and all(j in remove for j in below):
                remove.add(i)
    return "\n".join(line for i, line in enumerate(lines) if i not in remove)


def _require_parts(nb: nbformat.NotebookNode, spec: QuizSpec) -> None:
    """Refuse a notebook whose graded cells are not those of the parts ``spec`` covers."""
    present = set(_cells(nb))
    want = set(spec.grade_ids) | {q.id for q in spec.questions}
    other = sorted((set(CHECKPOINT.grade_ids) | {q.id for q in CHECKPOINT.questions})
                   & present - want)
    if other:
        raise QuizSourceError(
            f"the notebook has {', '.join(other)}, of parts the checkpoint does not cover (it "
            f"covers parts {_listed(spec.covers)}): generate the assignment again from the "
            "source written with the same --parts")
    missing = sorted(want - present)
    if missing:
        raise QuizSourceError(
            f"the notebook has no cell {', '.join(missing)}, which parts "
            f"{_listed(spec.covers)} of the checkpoint need: write its source again with "
            "python -m course_grading.variants --parts, from the public source")


def fill(template: nbformat.NotebookNode, variant: Variant, *,
         questions: bool = True) -> nbformat.NotebookNode:
    """A quiz notebook with the numbers of ``variant``.

    ``template`` may be the source (hidden tests and solutions included: they get the
    variant's inputs, expected values and right letters), a release (no hidden tests: its
    setup cell, table and options get the variant's numbers, and each read-only cell whose
    source changed its nbgrader checksum anew), or a submission as the grader restores it.
    Whatever numbers ``template`` held, the result is the same.

    The result has the questions of ``variant.parts`` only (the instructor's choice):
    with ``questions``, every cell of another part's question (its markdown, answer and
    test cells, from its ``## Question`` heading to the next heading), the setup values it
    alone uses, and its line of the first cell's summary are taken out, the questions after
    it renumbered and the summary's count and points written anew. A submission must hold
    exactly the chosen parts' graded cells, as nbgrader restores them from the gradebook.

    Parameters
    ----------
    template : NotebookNode
    variant : Variant
    questions : bool
        Also write the question cells (the measured table, the options) and the solutions
        of the answer cells. False for a student's submission, whose markdown and answer
        cells are the student's own (whatever they hold, solution markers included).

    Raises
    ------
    QuizSourceError
        If a cell is not in the form expected.
    """
    nb = copy.deepcopy(template)
    spec = variant.spec
    before = {gid: cell.source for gid, cell in _cells(nb).items()}
    if questions:
        _keep_parts(nb, spec)
    _require_parts(nb, spec)
    if questions and nb.cells and nb.cells[0].cell_type == "markdown":
        nb.cells[0].source = _summary(nb.cells[0].source, spec)
    cells = _cells(nb)
    source_form = any(BEGIN_HIDDEN in c.source for c in nb.cells if c.cell_type == "code")
    if "setup" not in cells:
        raise QuizSourceError("the notebook has no setup cell (grade id 'setup')")
    cells["setup"].source = fill_setup(cells["setup"].source, variant)
    _edit_call(cells, VISIBLE_WEIGHT_CHECK, source_form, {
        "expected": expected(VISIBLE_WEIGHT_CHECK, {"Q": variant.Q, "K": variant.K})})
    for test_id, (Q, K) in variant.hidden_inputs.items():
        _edit_call(cells, test_id, source_form, {
            "Q": Q.tolist(), "K": K.tolist(), "expected": expected(test_id, {"Q": Q, "K": K})})
    for test_id in SHIFT_CHECKS:
        _edit_call(cells, test_id, source_form, {
            "expected": expected(test_id, _shift_inputs(variant))})
    if ONLINE_CHECK in spec.autograded:
        _edit_call(cells, ONLINE_CHECK, source_form, {
            "expected": expected(ONLINE_CHECK, _online_inputs(variant))})
    if MULTIHEAD_CHECK in spec.autograded:
        _edit_call(cells, MULTIHEAD_CHECK, source_form, {
            "expected": expected(MULTIHEAD_CHECK, _multihead_inputs(variant))})
    for question in MC_QUESTIONS:
        right, wrong = mc_letters(variant, question)
        (test_id,) = CHECKPOINT.question(question).checks
        _edit_call(cells, test_id, source_form, {"right": right, "wrong": wrong})
        answer = cells[question]
        if questions and BEGIN_SOLUTION in answer.source:  # a submission's are the student's
            answer.source = re.sub(r'= "[A-Z]"', f'= "{right}"', answer.source, count=1)
        if questions:
            _fill_options(_question_markdown(nb, question), variant, question)
    if questions:
        _fill_table(_question_markdown(nb, "mc_read_table"), variant)
    for gid, cell in cells.items():
        meta = cell.metadata["nbgrader"]
        if cell.source != before[gid] and "checksum" in meta:
            meta["checksum"] = compute_checksum(cell)
    nb.metadata["course_variant"] = variant.seed_id
    nbformat.validate(nb)
    return nb


#: The grade id of the written answer (graded by hand).
WRITTEN = next(q.id for q in CHECKPOINT.questions if q.manual)

_RUBRIC_LINE = re.compile(r"^\s*[-*]\s+(\d+)\s+points?:\s*(\S.*)$")


def read_rubric(text: str, question: str = WRITTEN) -> list[tuple[int, str]]:
    """The rubric of a written answer's model answer: its ``- N point(s): criterion`` lines.

    Parameters
    ----------
    text : str
        The instructor's model answer and rubric (markdown), as the written answer's cell
        of their private source holds it.
    question : str
        The written question (its points are the spec's).

    Raises
    ------
    QuizSourceError
        If there are no rubric lines, or their points do not add up to the question's.

    Examples
    --------
    >>> read_rubric("She is not right...\\n\\n- 2 points: shift\\n- 1 point: training\\n")
    [(2, 'shift'), (1, 'training')]
    """
    points = CHECKPOINT.question(question).points
    rubric = [(int(m.group(1)), m.group(2).strip()) for m in map(_RUBRIC_LINE.match,
                                                                  text.splitlines()) if m]
    if sum(p for p, _ in rubric) != points:
        raise QuizSourceError(
            f"the rubric of {question} must give its {points} points as lines "
            f"'- N point(s): what earns them' (got {len(rubric)} lines, "
            f"{sum(p for p, _ in rubric)} points)")
    return rubric


def with_written(nb: nbformat.NotebookNode, text: str,
                 question: str = WRITTEN) -> nbformat.NotebookNode:
    """A copy of a source notebook whose written answer holds ``text``: the instructor's
    model answer and rubric (checked with :func:`read_rubric`)."""
    read_rubric(text, question)
    nb = copy.deepcopy(nb)
    _cells(nb)[question].source = text.strip()
    return nb


def tracked_by_git(path: Path) -> bool:
    """Whether git tracks ``path`` (False outside a repository, or without git).

    Examples
    --------
    >>> tracked_by_git(Path("/nonexistent/checkpoint.ipynb"))
    False
    """
    folder = path.resolve().parent
    while not folder.is_dir():
        folder = folder.parent
    try:
        run = subprocess.run(["git", "-C", str(folder), "ls-files", "--error-unmatch", "--",
                              str(path.resolve())], capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return run.returncode == 0


#: The file of the per-student secret in the secret source directory
#: (:mod:`course_grading.personal`).
SECRET_FILE = "variant_secret"


def _secret_file(out: Path) -> Path | None:
    """Where the per-student secret goes for a variant written to ``out``: beside the
    assignment folders of a ``secret_source/`` directory; None elsewhere (a variant written
    to some other place is one for the class)."""
    source_dir = out.resolve().parent.parent
    return source_dir / SECRET_FILE if source_dir.name == SECRET_SOURCE else None


#: The file of the parts the checkpoint covers, beside :data:`SECRET_FILE`: ``1, 3``.
PARTS_FILE = "variant_parts"


def _parts_file(out: Path) -> Path | None:
    """Where the choice of parts goes for a variant written to ``out``: beside the
    assignment folders of a ``secret_source/`` directory; None elsewhere."""
    source_dir = out.resolve().parent.parent
    return source_dir / PARTS_FILE if source_dir.name == SECRET_SOURCE else None


def read_parts(folder: str | os.PathLike[str]) -> tuple[int, ...]:
    """The parts of the course a class's checkpoint covers, as the instructor chose them.

    ``folder`` is the course directory (its ``secret_source/``) or the ``secret_source/``
    folder itself. Without a recorded choice (no ``secret_source/``: the public quiz; or a
    variant made before parts could be chosen) the checkpoint covers every part.

    Raises
    ------
    ValueError
        If the recorded choice is not a list of the course's parts.

    Examples
    --------
    >>> read_parts("/nonexistent")
    (1, 2, 3)
    """
    folder = Path(folder)
    path = folder / PARTS_FILE if folder.name == SECRET_SOURCE else \
        folder / SECRET_SOURCE / PARTS_FILE
    try:
        text = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return tuple(PARTS)
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path} must hold the parts the checkpoint covers, e.g. '1, 3' "
                         f"({type(exc).__name__}: {exc})") from None
    try:
        return parse_parts(text)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


def _default_out(template: Path) -> Path:
    """``<course>/source/<assignment>/<nb>`` -> ``<course>/secret_source/<assignment>/<nb>``."""
    return template.parent.parent.parent / SECRET_SOURCE / template.parent.name / template.name


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: write a variant of the source notebook (see the module docstring)."""
    parser = argparse.ArgumentParser(
        prog="python -m course_grading.variants",
        description="Write a variant of the checkpoint quiz's instructor source notebook.")
    parser.add_argument("--seed", default=DEFAULT_SEED,
                        help=f"any text; keep it private to grade a class (default: "
                             f"{DEFAULT_SEED!r}, the public variant)")
    parser.add_argument("--template", type=Path, default=SOURCE_PATH,
                        help=f"the public source notebook (default: {SOURCE_PATH})")
    parser.add_argument("--out", type=Path, default=None,
                        help=f"notebook to write (default: {SECRET_SOURCE}/ beside the "
                             f"template's source/, e.g. {SECRET_PATH}, which git ignores "
                             "and nbgrader uses as the course's source)")
    parser.add_argument("--overwrite-tracked", action="store_true",
                        help="allow --out to name a file tracked by git (its answers are "
                             "then one 'git commit -a' away from being published)")
    parser.add_argument("--per-class", action="store_true",
                        help="one variant for the whole class (a small class); by default "
                             "each student gets numbers of their own, derived from the seed "
                             "and their id (course_grading.personal)")
    parser.add_argument("--parts", default=None, metavar="N[,N...]",
                        help="the parts of the course the checkpoint covers, e.g. 1 or 1,3 "
                             f"(parts: {'; '.join(f'{n} {t}' for n, t in PARTS.items())}; "
                             "default: every part; part 1 is always covered). Kept in "
                             f"{SECRET_SOURCE}/{PARTS_FILE}, which the grader, the grade "
                             "table and the report read")
    parser.add_argument("--written", type=Path, default=None, metavar="FILE",
                        help="your model answer and rubric of the written question "
                             "(markdown, with '- N point(s): ...' lines adding up to its "
                             "points); the public notebook has neither")
    parser.add_argument("--options", type=Path, default=None, metavar="FILE",
                        help="your own texts of the multiple-choice options (markdown: a "
                             "'## question' heading per question, '- right: ...' and "
                             "'- <misconception>: ...' items with the placeholders of "
                             "option_numbers; example: docs/examples/options.md). Kept in "
                             f"{SECRET_SOURCE}/{BANK_FILE} (mode 0600); without it the "
                             "options are the public templates, which a reader of the "
                             "repository can answer")
    args = parser.parse_args(argv)
    if not args.seed:
        parser.error("--seed must not be empty")
    try:
        parts = tuple(PARTS) if args.parts is None else parse_parts(args.parts)
    except ValueError as exc:
        print(f"variants: --{exc}", file=sys.stderr)
        return 2
    out = args.out or _default_out(args.template)
    record = _parts_file(out)
    if record is None and parts != tuple(PARTS):
        print(f"variants: --parts {args.parts} needs the variant written into a "
              f"{SECRET_SOURCE}/<assignment>/ folder, where the choice is kept beside it for "
              f"the grader ({SECRET_SOURCE}/{PARTS_FILE}); got --out {out}", file=sys.stderr)
        return 2
    if not args.overwrite_tracked and tracked_by_git(out):
        print(f"variants: {out} is tracked by git, so a variant written there is one "
              f"'git commit -a' away from publishing its answers; leave out --out (it goes "
              f"to {_default_out(args.template)}, which git ignores) or pass "
              f"--overwrite-tracked", file=sys.stderr)
        return 2
    bank = None
    if args.options is not None:
        try:
            bank = parse_bank(args.options.read_text(encoding="utf-8"), parts,
                              origin=str(args.options))
        except (OSError, UnicodeDecodeError) as exc:
            print(f"variants: --options {args.options} could not be read ({exc})",
                  file=sys.stderr)
            return 2
        except BankError as exc:
            print(f"variants: {exc}", file=sys.stderr)
            return 2
    try:
        public = nbformat.read(args.template, as_version=4)
        nb = fill(public, make_variant(args.seed, parts, bank))
        if args.written is not None:
            nb = with_written(nb, args.written.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, QuizSourceError, nbformat.ValidationError) as exc:
        print(f"variants: {exc}", file=sys.stderr)
        return 2
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")
    if record is not None:
        record.write_text(_listed(parts) + "\n", encoding="utf-8")
        kept = record.parent / BANK_FILE
        if bank is not None:
            write_bank(kept, bank)
            print(f"wrote {kept} (mode 0600): every notebook of the class shows your "
                  "option texts")
        elif kept.exists():
            kept.unlink()  # a bank left from before would give the releases other texts
    secret = _secret_file(out)
    if args.per_class or secret is None:
        print(f"wrote {out} (variant {nb.metadata['course_variant']}, one for the class)")
        if secret is not None and secret.exists():
            secret.unlink()  # a per-student secret left from before would still be used
    else:
        fd = os.open(secret, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(args.seed + "\n")
        os.chmod(secret, 0o600)
        print(f"wrote {out} (the class's template) and {secret} (mode 0600): each student "
              "gets numbers of their own, derived from the seed and their id")
    if record is not None:
        covered = CHECKPOINT.for_parts(parts)
        print(f"covers parts {_listed(parts)} of the course: {len(covered.questions)} "
              f"questions, {covered.total_points} points (recorded in {record})")
    if args.written is None:
        print(f"variants: the written question ({WRITTEN}) has no model answer or rubric "
              f"yet: write yours into its cell in {out}, or run again with --written FILE",
              file=sys.stderr)
    if bank is None:
        print("variants: the multiple-choice options are the public templates, whose "
              "wording a reader of the repository can answer: write your own and run again "
              "with --options FILE (docs/instructors.md, section 1)", file=sys.stderr)
    print(_next_step(out))
    return 0


def _next_step(out: Path) -> str:
    """What to run after writing ``out``: in the course folder that holds its
    ``secret_source/`` (``quiz/`` in a clone, ``.`` in ``~/attention-course`` on the hub)."""
    generate = f"nbgrader generate_assignment {out.parent.name} --force"
    if out.parent.parent.name != SECRET_SOURCE:
        return (f"next: copy it to <course>/{SECRET_SOURCE}/{out.parent.name}/{out.name}, "
                f"then in <course>: {generate}")
    course = out.parent.parent.parent
    if course.resolve() == Path.cwd().resolve():
        return f"next: {generate}"
    return f"next: cd {shlex.quote(str(course))} && {generate}"


if __name__ == "__main__":
    sys.exit(main())
