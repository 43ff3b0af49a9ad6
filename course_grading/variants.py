"""Fill the checkpoint quiz's source notebook with the numbers of a variant.

The source notebook, ``quiz/source/checkpoint/checkpoint.ipynb``, is written and edited by
hand: its questions, its wording, its test cells. A variant changes numbers only: the
example of the setup cell (four tokens' queries and keys, which row and which key the
derivation asks about, and the shift ``c``), the inputs of the four hidden checks of
``weights_without_self``, the measured table of question 3 (measured afresh from the seed,
its two columns in an order drawn from it), and the order of the multiple-choice options
(with the right letter, and the misconception of each wrong letter, that go with it). The
committed notebook is the public variant, whose answers are public with the repository;
an instructor who grades a class makes a variant from a seed only they know::

    python -m course_grading.variants --seed "a secret of your own"   # writes quiz/secret_source
    rm -r quiz/secret_source                                          # back to the public one

The variant goes to ``quiz/secret_source/`` (:data:`SECRET_PATH`), which git ignores, so
that no ``git commit -a`` publishes its answers; ``quiz/nbgrader_config.py`` makes it the
course's source directory while it exists. Writing into a file git tracks (``--out
quiz/source/...``) is refused unless ``--overwrite-tracked`` is given.

A variant is always made from the public notebook (its metadata says
``"course_variant": "public"``); making one from another variant is refused, so that the
option order and the right letters stay traceable. Even the public variant's numbers are
drawn, not the lessons' worked example: no number a lesson prints answers a graded item.

Every variant is checked before it is written: each hidden check must fail for exactly its
own mistake among the four it isolates (:data:`course_lib.checkpoint_spec.CHECKPOINT`
``.mistakes``), for every mistake marked ``everywhere`` (what a copy of the lessons' code
gives), and pass for the correct answer, on inputs whose correct weights are not
saturated; the setup cell's example must show every mistake. Nothing is computed into
the notebook but the measured table and, in the locked ``check_data`` cell, what the
visible check compares with (the right weights of the setup cell's example and what each
mistake gives on it, encoded on a few lines: numbers the visible check reveals in effect
anyway). :mod:`course_lib` knows no answer; the grader computes every expected value from
the inputs when it grades (:mod:`course_grading.checkpoint_answers`).

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
import base64
import copy
import functools
import hashlib
import json
import re
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
from numpy.typing import NDArray

from course_lib.attention import attention_weights, softmax
from course_lib.checkpoint_spec import CHECKPOINT

from .check_calls import Literal, QuizSourceError, check_calls, setup_values
from .checkpoint_answers import (
    MISCONCEIVED,
    MISTAKE_SOURCES,
    answer_function,
    expected,
    shifted_key_row,
    weights_without_self,
)

__all__ = [
    "DEFAULT_SEED",
    "SECRET_PATH",
    "SOURCE_PATH",
    "QuizFacts",
    "Variant",
    "baseline_table",
    "encode_expected",
    "fill",
    "isolation_table",
    "know_nothing_answers",
    "main",
    "make_variant",
    "measure_table",
    "quiz_facts",
    "tracked_by_git",
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

#: The head sizes of the measured table, and its keys per row.
TABLE_DK = (4, 16, 64, 256)
TABLE_KEYS = 16
_TABLE_ROWS = 400

_SATURATED = 0.9  # a correct weight above this (or below _TINY) counts as saturated
_TINY = 0.01
_MARGIN = 0.02  # a mistake must move some weight by at least this much to count as caught
_OPTION = re.compile(r"^- \*\*([A-Z])\.\*\* (.+)$")
_TABLE_ROW = re.compile(r"^\| (\d+) \| ")


@dataclass(frozen=True)
class Variant:
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
    table : ndarray, shape (len(TABLE_DK), 2)
        Measured mean largest weight per row: column 0 with the division by sqrt(d_k),
        column 1 without.
    unscaled_first : bool
        Whether the table shows the unscaled column first (as X).
    mc_order : dict of str to tuple of int
        For each multiple-choice question, the order in which the public notebook's
        options appear in this variant (indices into that order).
    hidden_inputs : dict of str to (ndarray, ndarray)
        For each hidden check of the function, the ``(Q, K)`` it uses.
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

    @property
    def shifted_row(self) -> NDArray[np.float64]:
        """The derivation's answer (:mod:`course_grading.checkpoint_answers`)."""
        return shifted_key_row(_shift_inputs(self))


def _shift_inputs(v: Any) -> dict[str, Any]:
    return {"Q": v.Q, "K": v.K, "row": v.row, "key": v.shift_key, "c": v.c}


# --------------------------------------------------------------------------------------
# the numbers
# --------------------------------------------------------------------------------------


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
    """The derivation's row, key and c: every misconception must give other numbers."""
    tolerance = CHECKPOINT.check("test_shifted_key").tolerance
    while True:
        row, key = (int(i) for i in rng.choice(4, size=2, replace=False))
        c = float(np.round(rng.uniform(0.8, 2.0), 1))
        inputs = {"Q": Q, "K": K, "row": row, "key": key, "c": c}
        want = shifted_key_row(inputs)
        if all(np.abs(f(inputs) - want).max() > 4 * tolerance for f in MISCONCEIVED.values()):
            return row, key, c


def measure_table(rng: np.random.Generator, dks: Sequence[int] = TABLE_DK,
                  n_keys: int = TABLE_KEYS, rows: int = _TABLE_ROWS) -> NDArray[np.float64]:
    """Measure the mean largest weight of a row, with and without the division by sqrt(d_k).

    Queries and keys have independent standard normal entries.

    Returns
    -------
    ndarray, shape (len(dks), 2)
        Column 0 with the division, column 1 without; rounded to two decimals.
    """
    out = []
    for d in dks:
        q = rng.standard_normal((rows, d))
        k = rng.standard_normal((n_keys, d))
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


def make_variant(seed: str = DEFAULT_SEED) -> Variant:
    """Draw the numbers of the quiz variant for ``seed``.

    Parameters
    ----------
    seed : str
        Any text; keep it private to grade a class. :data:`DEFAULT_SEED` gives the
        public variant (its numbers drawn like any other's) and the public notebook's
        option order.

    Raises
    ------
    ValueError
        If ``seed`` is empty.
    """
    if not isinstance(seed, str) or not seed:
        raise ValueError(f"seed must be a non-empty string (got {seed!r})")
    rng = _rng(seed)
    Q, K = _example(rng)
    row, shift_key, c = _shift(rng, Q, K)
    table = measure_table(rng)
    public = seed == DEFAULT_SEED
    unscaled_first = False if public else bool(rng.integers(2))
    mc_order = {q: tuple(range(len(CHECKPOINT.letters))) if public else
                tuple(int(i) for i in rng.permutation(len(CHECKPOINT.letters)))
                for q in MC_QUESTIONS}
    seed_id = "public" if public else hashlib.sha256(seed.encode()).hexdigest()[:12]
    hidden = _rng(seed, "hidden")
    for _attempt in range(1000):
        variant = Variant(seed_id, Q, K, row, shift_key, c, table, unscaled_first, mc_order,
                          _hidden_inputs(hidden))
        if _check_variant(variant) is None:
            return variant
    raise RuntimeError(f"could not draw isolating hidden-check inputs for seed {seed!r}")


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

    :func:`course_lib.checkpoint_checks.read_expected` reads it back; numbers are rounded
    to 8 decimals.

    Examples
    --------
    >>> from course_lib.checkpoint_checks import read_expected
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


def _hidden_call(cell: nbformat.NotebookNode, grade_id: str):
    calls = [c for c in check_calls(cell.source) if c.grade_id == grade_id and c.hidden]
    if len(calls) != 1:
        raise QuizSourceError(f"test cell {grade_id} must hold exactly one hidden "
                              f"check(\"{grade_id}\", ...) call (found {len(calls)})")
    return calls[0]


#: The derivation's check.
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
class QuizFacts:
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
    """

    Q: NDArray[np.float64]
    K: NDArray[np.float64]
    row: int
    shift_key: int
    c: float
    right: dict[str, str]
    wrong: dict[str, dict[str, str]]

    def mc_answer(self, question: str) -> str:
        """The right letter of a question (``"mc_read_table"`` or just ``"read_table"``)."""
        return self.right[question if question in self.right else f"mc_{question}"]

    def mc_letter_for(self, question: str, misconception: str) -> str:
        """The wrong letter that stands for ``misconception`` in ``question``."""
        q = question if question in self.wrong else f"mc_{question}"
        return next(letter for letter, m in self.wrong[q].items() if m == misconception)

    @property
    def shifted_row(self) -> NDArray[np.float64]:
        """The derivation's answer (:mod:`course_grading.checkpoint_answers`)."""
        return shifted_key_row(_shift_inputs(self))


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
    return QuizFacts(Q, K, int(setup["row"].value), int(setup["shift_key"].value),
                     float(setup["c"].value), right, wrong)


def _fill_table(markdown: nbformat.NotebookNode, variant: Variant) -> None:
    """Write the measured table into question 3's markdown, and name its columns."""
    lines = markdown.source.split("\n")
    where = [i for i, line in enumerate(lines) if _TABLE_ROW.match(line)]
    if len(where) != len(TABLE_DK):
        raise QuizSourceError(f"the table of mc_read_table must have {len(TABLE_DK)} rows "
                              f"'| d_k | X | Y |' (found {len(where)})")
    for i, d, (scaled, unscaled) in zip(where, TABLE_DK, variant.table, strict=True):
        x, y = (unscaled, scaled) if variant.unscaled_first else (scaled, unscaled)
        lines[i] = f"| {d} | {x:.2f} | {y:.2f} |"
    markdown.source = "\n".join(lines)


def _swap_xy(text: str) -> str:
    return re.sub(r"\b([XY])\b", lambda m: "Y" if m.group(1) == "X" else "X", text)


def fill(public: nbformat.NotebookNode, variant: Variant) -> nbformat.NotebookNode:
    """The public source notebook with the numbers of ``variant``.

    Raises
    ------
    QuizSourceError
        If ``public`` is not the public variant, or a cell is not in the form expected.
    """
    made_from = public.metadata.get("course_variant")
    if made_from != "public":
        raise QuizSourceError(
            f"this notebook is variant {made_from!r}, not the public one: make variants from "
            f"the public notebook (git checkout {SOURCE_PATH}) or pass --template")
    nb = copy.deepcopy(public)
    cells = _cells(nb)
    setup = cells["setup"]
    values = setup_values(setup.source)
    setup.source = _replace(setup.source, [
        (values["Q"], variant.Q.tolist()), (values["K"], variant.K.tolist()),
        (values["row"], variant.row), (values["shift_key"], variant.shift_key),
        (values["c"], variant.c)])
    visible_call = _hidden_call(cells[VISIBLE_WEIGHT_CHECK], VISIBLE_WEIGHT_CHECK)
    cells[VISIBLE_WEIGHT_CHECK].source = _replace(cells[VISIBLE_WEIGHT_CHECK].source, [
        (_expected_literal(visible_call, VISIBLE_WEIGHT_CHECK), _Encoded(encode_expected(
            expected(VISIBLE_WEIGHT_CHECK, {"Q": variant.Q, "K": variant.K}))))])
    for test_id, (Q, K) in variant.hidden_inputs.items():
        call = _hidden_call(cells[test_id], test_id)
        cells[test_id].source = _replace(cells[test_id].source, [
            (call.inputs["Q"], Q.tolist()), (call.inputs["K"], K.tolist()),
            (_expected_literal(call, test_id), _Encoded(encode_expected(
                expected(test_id, {"Q": Q, "K": K}))))])
    shift_call = _hidden_call(cells[SHIFT_CHECK], SHIFT_CHECK)
    cells[SHIFT_CHECK].source = _replace(cells[SHIFT_CHECK].source, [
        (_expected_literal(shift_call, SHIFT_CHECK),
         _Encoded(encode_expected(expected(SHIFT_CHECK, _shift_inputs(variant)))))])
    table_md = _question_markdown(nb, "mc_read_table")
    _fill_table(table_md, variant)
    facts = quiz_facts(public)
    letters = CHECKPOINT.letters
    for question in MC_QUESTIONS:
        order = variant.mc_order[question]
        markdown = _question_markdown(nb, question)
        lines = markdown.source.split("\n")
        where = [i for i, line in enumerate(lines) if _OPTION.match(line)]
        if len(where) != len(letters):
            raise QuizSourceError(f"the question before {question} must list {len(letters)} "
                                  f"options as '- **A.** ...' lines (found {len(where)})")
        texts = [_OPTION.match(lines[i]).group(2) for i in where]  # type: ignore[union-attr]
        if question == "mc_read_table" and variant.unscaled_first:
            texts = [_swap_xy(t) for t in texts]
        for pos, i in enumerate(where):
            lines[i] = f"- **{letters[pos]}.** {texts[order[pos]]}"
        markdown.source = "\n".join(lines)
        new_letter = {letters[order.index(old)]: letters[old] for old in range(len(letters))}
        new_letter = {old: new for new, old in new_letter.items()}
        new_right = new_letter[facts.right[question]]
        new_wrong = {new_letter[old]: m for old, m in facts.wrong[question].items()}
        new_wrong = dict(sorted(new_wrong.items()))
        (test_id,) = CHECKPOINT.question(question).checks
        call = _hidden_call(cells[test_id], test_id)
        cells[test_id].source = _replace(cells[test_id].source, [
            (call.inputs["right"], new_right), (call.inputs["wrong"], new_wrong)])
        answer = cells[question]
        answer.source = re.sub(r'= "[A-Z]"', f'= "{new_right}"', answer.source, count=1)
    nb.metadata["course_variant"] = variant.seed_id
    nbformat.validate(nb)
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
    args = parser.parse_args(argv)
    if not args.seed:
        parser.error("--seed must not be empty")
    out = args.out or _default_out(args.template)
    if not args.overwrite_tracked and tracked_by_git(out):
        print(f"variants: {out} is tracked by git, so a variant written there is one "
              f"'git commit -a' away from publishing its answers; leave out --out (it goes "
              f"to {_default_out(args.template)}, which git ignores) or pass "
              f"--overwrite-tracked", file=sys.stderr)
        return 2
    try:
        public = nbformat.read(args.template, as_version=4)
        nb = fill(public, make_variant(args.seed))
    except (OSError, QuizSourceError, nbformat.ValidationError) as exc:
        print(f"variants: {exc}", file=sys.stderr)
        return 2
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")
    print(f"wrote {out} (variant {nb.metadata['course_variant']})")
    print("next: cd quiz && nbgrader generate_assignment checkpoint --force")
    return 0


if __name__ == "__main__":
    sys.exit(main())
