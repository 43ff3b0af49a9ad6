"""Fill the checkpoint quiz's source notebook with the numbers of a variant.

The source notebook, ``quiz/source/checkpoint/checkpoint.ipynb``, is written and edited by
hand: its questions, its wording, its test cells. A variant changes numbers only: the
worked example of the setup cell, the inputs of the four hidden checks of
``attention_weights``, and the order of the multiple-choice options (with the right letter
that goes with it). The committed notebook is the public variant, whose answers are public
with the repository; an instructor who grades a class makes a variant from a seed only
they know::

    python -m course_grading.variants --seed "a secret of your own"   # rewrites quiz/source
    git checkout quiz/source/checkpoint/checkpoint.ipynb              # back to the public one

A variant is always made from the public notebook (its metadata says
``"course_variant": "public"``); making one from another variant is refused, so that the
option order and the right letters stay traceable.

Every variant is checked before it is written: each hidden check must fail for exactly its
own mistake (:data:`course_lib.checkpoint_spec.CHECKPOINT` ``.mistakes``) and pass for the
correct answer and for every other mistake, on inputs whose correct weights are not
saturated. Nothing is computed into the notebook: the grader computes every expected value
from these inputs when it grades.

Examples
--------
>>> v = make_variant(DEFAULT_SEED)
>>> v.Q.tolist()  # the default seed keeps the lesson's worked example
[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
>>> make_variant("another seed").Q.tolist() != v.Q.tolist()
True
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import re
import sys
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat
import numpy as np
from numpy.typing import NDArray

from course_lib.attention import attention, attention_weights
from course_lib.checkpoint_checks import answer_function
from course_lib.checkpoint_spec import CHECKPOINT
from course_lib.examples import the_cat_sat

from .check_calls import Literal, QuizSourceError, check_calls, setup_values

__all__ = [
    "DEFAULT_SEED",
    "SOURCE_PATH",
    "QuizFacts",
    "Variant",
    "fill",
    "isolation_table",
    "main",
    "make_variant",
    "quiz_facts",
]

#: The seed of the public, committed quiz source.
DEFAULT_SEED = "public"

#: Where the committed source lives, relative to the repository root.
SOURCE_PATH = Path("quiz") / "source" / "checkpoint" / "checkpoint.ipynb"

#: The multiple-choice questions: their answer cells' grade ids.
MC_QUESTIONS = tuple(q.id for q in CHECKPOINT.questions
                     if any(CHECKPOINT.check(c).kind == "letter" for c in q.checks))

#: The hidden checks of attention_weights, each built to catch one mistake.
HIDDEN_WEIGHT_CHECKS = tuple(c.grade_id for c in CHECKPOINT.checks
                             if c.kind == "weights" and c.mistake)

_SATURATED = 0.9  # a correct weight above this (or below _TINY) counts as saturated
_TINY = 0.01
_MARGIN = 0.02  # a mistake must move some weight by at least this much to count as caught
_OPTION = re.compile(r"^- \*\*([A-Z])\.\*\* (.+)$")


@dataclass(frozen=True)
class Variant:
    """The numbers of one variant of the quiz.

    Attributes
    ----------
    seed_id : str
        ``"public"`` for the public variant, else a short hash of the seed.
    Q, K, V : ndarray, shape (3, 2)
        The worked example ('the', 'cat', 'sat').
    mc_order : dict of str to tuple of int
        For each multiple-choice question (its answer cell's grade id), the order in which
        the public notebook's options appear in this variant (indices into that order).
    hidden_inputs : dict of str to (ndarray, ndarray)
        For each hidden check of ``attention_weights``, the ``(Q, K)`` it uses.
    """

    seed_id: str
    Q: NDArray[np.float64]
    K: NDArray[np.float64]
    V: NDArray[np.float64]
    mc_order: dict[str, tuple[int, ...]]
    hidden_inputs: dict[str, tuple[NDArray[np.float64], NDArray[np.float64]]] = field(
        repr=False)

    @property
    def sat_output(self) -> NDArray[np.float64]:
        """The attention output for 'sat' (row 2), computed by :mod:`course_lib`."""
        return attention(self.Q, self.K, self.V)[0][2]


# --------------------------------------------------------------------------------------
# the numbers
# --------------------------------------------------------------------------------------


def _rng(seed: str) -> np.random.Generator:
    digest = hashlib.sha256(f"attention-course/checkpoint/{seed}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:16], "big"))


def _r1(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """Round to one decimal, so the numbers read well in the notebook; +0.0, never -0.0."""
    return np.round(x, 1) + 0.0


def _unsaturated(w: NDArray[np.float64]) -> bool:
    return bool(w.max() <= _SATURATED and w.min() >= _TINY)


def _example(rng: np.random.Generator, seed: str) -> tuple[NDArray[np.float64], ...]:
    if seed == DEFAULT_SEED:
        ex = the_cat_sat()
        return ex.Q, ex.K, ex.V
    while True:
        Q = rng.integers(-1, 3, size=(3, 2)).astype(float)
        K = rng.integers(-1, 3, size=(3, 2)).astype(float)
        V = rng.integers(0, 4, size=(3, 2)).astype(float)
        if (
            np.linalg.matrix_rank(Q) == 2
            and np.linalg.matrix_rank(K) == 2
            and len({tuple(r) for r in V}) == 3
            and _unsaturated(attention_weights(Q, K))
        ):
            return Q, K, V


def _symmetric_circulant(first_row: Sequence[float]) -> NDArray[np.float64]:
    n = len(first_row)
    return np.array([[first_row[(j - i) % n] for j in range(n)] for i in range(n)])


def _hidden_inputs(
    rng: np.random.Generator,
) -> dict[str, tuple[NDArray[np.float64], NDArray[np.float64]]]:
    """Draw inputs on which each hidden check sees its own mistake and no other."""
    # missing scale: Q = K symmetric circulant and n = d_k. Then the scores are symmetric
    # with every row a permutation of the first, so a softmax over the wrong axis gives the
    # same weights, and d_k read from the wrong axis is the same number: only the scale
    # changes the answer.
    a, b, c = _r1(rng.uniform(-1.5, 1.5, size=3))
    q_scale = _symmetric_circulant([a, b, c, b])
    # wrong axis: every key is the same, so each row of scores is constant and the right
    # weights are uniform whatever the scale; a softmax over the queries is not.
    q_axis = _r1(rng.uniform(-2.0, 2.0, size=(3, 2)))
    k_axis = np.tile(_r1(rng.uniform(-2.0, 2.0, size=(1, 2))), (4, 1))
    # naive exp: every score is the same large number (above 709 after scaling, where
    # exp overflows in float64). The right weights are uniform, whatever the scale or axis.
    q_big = rng.integers(15, 31, size=(1, 2)).astype(float)
    k_big = rng.integers(15, 31, size=(1, 2)).astype(float)
    # d_k from the wrong axis: d_k = 1, so the scale is 1 (a missing scale changes
    # nothing) while n = 4; signs balanced so every row and column of exp(scores) has
    # the same sum and the axis does not matter either.
    signs = rng.permutation([1.0, 1.0, -1.0, -1.0])
    q_dk = _r1(signs * rng.uniform(0.7, 1.1))[:, None]
    return {
        "test_missing_scale": (q_scale, q_scale.copy()),
        "test_wrong_axis": (q_axis, k_axis),
        "test_naive_exp_overflow": (np.tile(q_big, (3, 1)), np.tile(k_big, (3, 1))),
        "test_dk_from_wrong_axis": (q_dk, q_dk.copy()),
    }


def isolation_table(variant: Variant) -> dict[str, dict[str, bool]]:
    """Which hidden check catches which answer, measured on the variant's inputs.

    Runs a correct answer (:func:`course_lib.attention_weights`) and every mistake of the
    spec on each hidden check's inputs.

    Returns
    -------
    dict
        ``table[answer][grade_id]`` is True when the check fails for that answer, where
        ``answer`` is ``"correct"`` or a mistake id.
    """
    answers = {"correct": attention_weights,
               **{m.id: answer_function(m.source) for m in CHECKPOINT.mistakes}}
    table: dict[str, dict[str, bool]] = {}
    for name, func in answers.items():
        row = {}
        for test_id, (Q, K) in variant.hidden_inputs.items():
            expected = attention_weights(Q, K)
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                got = np.asarray(func(Q.copy(), K.copy()), dtype=float)
            row[test_id] = not (got.shape == expected.shape and bool(
                np.allclose(got, expected, rtol=0, atol=CHECKPOINT.check(test_id).tolerance)))
        table[name] = row
    return table


def _check_variant(variant: Variant) -> str | None:
    """Return why the variant is unusable, or None if every hidden check isolates its mistake."""
    for test_id, (Q, K) in variant.hidden_inputs.items():
        if not _unsaturated(attention_weights(Q, K)):
            return f"{test_id}: the right weights are saturated"
    table = isolation_table(variant)
    own = {c.grade_id: c.mistake for c in CHECKPOINT.checks if c.mistake}
    for name, row in table.items():
        want = {t: name != "correct" and own[t] == name for t in row}
        if row != want:
            return f"{name}: fails {sorted(t for t, bad in row.items() if bad)}"
    for test_id, mistake_id in own.items():
        Q, K = variant.hidden_inputs[test_id]
        with np.errstate(all="ignore"):
            got = answer_function(CHECKPOINT.mistake(mistake_id).source)(Q, K)
        diff = np.abs(np.nan_to_num(got, nan=10.0) - attention_weights(Q, K)).max()
        if diff < _MARGIN:
            return f"{test_id}: the mistake moves the weights by only {diff:.3g}"
    return None


def make_variant(seed: str = DEFAULT_SEED) -> Variant:
    """Draw the numbers of the quiz variant for ``seed``.

    Parameters
    ----------
    seed : str
        Any text; keep it private to grade a class. :data:`DEFAULT_SEED` gives the
        public variant: the lessons' 'the cat sat' and the public notebook's option order.

    Raises
    ------
    ValueError
        If ``seed`` is empty.
    """
    if not isinstance(seed, str) or not seed:
        raise ValueError(f"seed must be a non-empty string (got {seed!r})")
    rng = _rng(seed)
    Q, K, V = _example(rng, seed)
    public = seed == DEFAULT_SEED
    mc_order = {q: tuple(range(len(CHECKPOINT.letters))) if public else
                tuple(int(i) for i in rng.permutation(len(CHECKPOINT.letters)))
                for q in MC_QUESTIONS}
    seed_id = "public" if public else hashlib.sha256(seed.encode()).hexdigest()[:12]
    for _attempt in range(1000):
        variant = Variant(seed_id, Q, K, V, mc_order, _hidden_inputs(rng))
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
    if isinstance(value, str):
        return json.dumps(value)  # "C", as the notebook writes strings
    return repr(value)


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
    """The numbers of one source notebook: its worked example and right letters.

    Attributes
    ----------
    Q, K, V : ndarray
        The worked example of the setup cell.
    right : dict of str to str
        Multiple-choice question (answer cell's grade id) -> its right letter.
    """

    Q: NDArray[np.float64]
    K: NDArray[np.float64]
    V: NDArray[np.float64]
    right: dict[str, str]

    def mc_answer(self, question: str) -> str:
        """The right letter of a question (``"mc_why_scale"`` or just ``"why_scale"``)."""
        return self.right[question if question in self.right else f"mc_{question}"]

    @property
    def sat_output(self) -> NDArray[np.float64]:
        """The attention output for 'sat' (row 2), computed by :mod:`course_lib`."""
        return attention(self.Q, self.K, self.V)[0][2]


def quiz_facts(nb: nbformat.NotebookNode) -> QuizFacts:
    """The numbers a source notebook holds: the worked example and the right letters."""
    cells = _cells(nb)
    setup = setup_values(cells["setup"].source)
    right = {}
    for question in MC_QUESTIONS:
        (test_id,) = CHECKPOINT.question(question).checks
        lit = _hidden_call(cells[test_id], test_id).inputs.get("right")
        if not isinstance(lit, Literal) or lit.value not in tuple(CHECKPOINT.letters):
            raise QuizSourceError(f"the hidden check of {test_id} must pass right=\"<letter>\"")
        right[question] = lit.value
    Q, K, V = (np.asarray(setup[n].value, dtype=float) for n in ("Q", "K", "V"))
    return QuizFacts(Q, K, V, right)


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
    setup.source = _replace(setup.source, [(values[n], getattr(variant, n).tolist())
                                           for n in ("Q", "K", "V")])
    for test_id, (Q, K) in variant.hidden_inputs.items():
        call = _hidden_call(cells[test_id], test_id)
        cells[test_id].source = _replace(cells[test_id].source, [
            (call.inputs["Q"], Q.tolist()), (call.inputs["K"], K.tolist())])
    right = quiz_facts(public).right
    for question in MC_QUESTIONS:
        order = variant.mc_order[question]
        letters = CHECKPOINT.letters
        markdown = _question_markdown(nb, question)
        lines = markdown.source.split("\n")
        where = [i for i, line in enumerate(lines) if _OPTION.match(line)]
        if len(where) != len(letters):
            raise QuizSourceError(f"the question before {question} must list {len(letters)} "
                                  f"options as '- **A.** ...' lines (found {len(where)})")
        texts = [_OPTION.match(lines[i]).group(2) for i in where]  # type: ignore[union-attr]
        for pos, i in enumerate(where):
            lines[i] = f"- **{letters[pos]}.** {texts[order[pos]]}"
        markdown.source = "\n".join(lines)
        new_right = letters[order.index(letters.index(right[question]))]
        (test_id,) = CHECKPOINT.question(question).checks
        call = _hidden_call(cells[test_id], test_id)
        cells[test_id].source = _replace(cells[test_id].source,
                                         [(call.inputs["right"], new_right)])
        answer = cells[question]
        answer.source = re.sub(r'= "[A-Z]"', f'= "{new_right}"', answer.source, count=1)
    nb.metadata["course_variant"] = variant.seed_id
    nbformat.validate(nb)
    return nb


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
                        help="notebook to write (default: the template, rewritten in place)")
    args = parser.parse_args(argv)
    if not args.seed:
        parser.error("--seed must not be empty")
    try:
        public = nbformat.read(args.template, as_version=4)
        nb = fill(public, make_variant(args.seed))
    except (OSError, QuizSourceError, nbformat.ValidationError) as exc:
        print(f"variants: {exc}", file=sys.stderr)
        return 2
    out = args.out or args.template
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")
    print(f"wrote {out} (variant {nb.metadata['course_variant']})")
    print("next: cd quiz && nbgrader generate_assignment checkpoint --force")
    return 0


if __name__ == "__main__":
    sys.exit(main())
