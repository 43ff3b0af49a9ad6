"""Make the checkpoint quiz's instructor source notebook from a seed.

The committed ``quiz/source/checkpoint/checkpoint.ipynb`` is what this module makes for
:data:`DEFAULT_SEED`; its answers are public, with the repository. An instructor who grades
a class makes a fresh variant from a private seed: the same questions, different numbers
(the worked example, the hidden tests' inputs) and a different order of the
multiple-choice options. The hidden tests' expectations are computed with
:mod:`course_lib` here, for each variant, and written into the tests as literals: the
graded checks compare them with real-float arithmetic and call nothing that a student's
code, running in the same kernel before them, could have replaced.

Every variant is checked before it is written: each hidden test must fail for exactly its
own mistake in :data:`course_grading.mistakes.MISTAKES` and pass for the correct
answer and for every other mistake, on inputs whose correct weights are not saturated.

Command line (from the repository root)::

    python -m course_grading.variants                      # the public default
    python -m course_grading.variants --seed "my secret"   # a private variant
    python -m course_grading.variants --seed "my secret" --out /tmp/checkpoint.ipynb

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
import hashlib
import sys
import textwrap
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import numpy as np
from numpy.typing import NDArray

from course_lib.attention import attention, attention_weights
from course_lib.examples import the_cat_sat

from .mistakes import CORRECT_ANSWER, MISTAKES, answer_function, hidden_test_id

__all__ = [
    "DEFAULT_SEED",
    "GRADE_IDS",
    "HIDDEN_TEST_IDS",
    "SOURCE_PATH",
    "Variant",
    "build_notebook",
    "isolation_table",
    "main",
    "make_variant",
    "notebook_text",
]

#: The seed of the public, committed quiz source.
DEFAULT_SEED = "public"

#: Where the committed source lives, relative to the repository root.
SOURCE_PATH = Path("quiz") / "source" / "checkpoint" / "checkpoint.ipynb"

#: Hidden tests of attention_weights, one per mistake (in notebook order).
HIDDEN_TEST_IDS = tuple(
    hidden_test_id(m)
    for m in ("missing_scale", "wrong_axis", "naive_exp_overflow", "dk_from_wrong_axis")
)

#: grade id -> points, for every graded cell of the quiz (the contract with other tools).
GRADE_IDS = {
    "test_attention_weights_visible": 1,
    **dict.fromkeys(HIDDEN_TEST_IDS, 1),
    "test_sat_output": 1,
    "test_mc_why_scale": 1,
    "test_mc_causal_mask": 1,
    "written_scaling": 2,
}

LETTERS = "ABCD"

#: The options of the two multiple-choice questions; the first of each is the right one.
MC_OPTIONS = {
    "why_scale": (
        "Scores are sums of d_k products, so they grow like sqrt(d_k); dividing by "
        "sqrt(d_k) keeps them near size 1, so softmax does not saturate to nearly "
        "one-hot.",
        "Without it the rows would not sum to 1: dividing by sqrt(d_k) normalises the "
        "scores, so that the softmax of every row adds up to exactly 1 whatever d_k is.",
        "It makes attention cheaper to compute: smaller numbers multiply faster, so the "
        "softmax and the weighted sum over V take less time when d_k is large.",
        "It keeps every score positive: dividing by sqrt(d_k) lifts negative dot "
        "products above 0, so that no token ever gets a weight of exactly 0.",
    ),
    "causal_mask": (
        "Each token attends only to itself and to earlier tokens: later tokens get a "
        "weight of exactly 0, and each row still sums to 1 over the tokens it can see.",
        "It divides the scores by a number larger than sqrt(d_k), so that softmax does "
        "not saturate and each row of weights stays spread over all the tokens.",
        "It hides each token from itself: the weight on the diagonal becomes exactly 0, "
        "and each row sums to 1 over the other tokens, so no output copies its own value.",
        "It sets the weights on later tokens to 0 after the softmax and leaves the rest "
        "unchanged, so the rows of the first tokens sum to less than 1.",
    ),
}

_SATURATED = 0.9  # a correct weight above this (or below _TINY) counts as saturated
_TINY = 0.01
_MARGIN = 0.02  # a mistake must move some weight by at least this much to count as caught


@dataclass(frozen=True)
class Variant:
    """The numbers of one variant of the quiz.

    Attributes
    ----------
    Q, K, V : ndarray, shape (3, 2)
        The worked example ('the', 'cat', 'sat').
    mc_order : dict of str to tuple of int
        For each multiple-choice question, the order in which its options appear
        (indices into :data:`MC_OPTIONS`; index 0 is the right option).
    hidden_inputs : dict of str to (ndarray, ndarray)
        For each hidden test id, the ``(Q, K)`` it calls ``attention_weights`` with.
    """

    Q: NDArray[np.float64]
    K: NDArray[np.float64]
    V: NDArray[np.float64]
    mc_order: dict[str, tuple[int, ...]]
    hidden_inputs: dict[str, tuple[NDArray[np.float64], NDArray[np.float64]]] = field(repr=False)

    def mc_answer(self, question: str) -> str:
        """The right letter of a multiple-choice question ("why_scale" or "causal_mask")."""
        return LETTERS[self.mc_order[question].index(0)]

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
    """Draw inputs on which each hidden test sees its own mistake and no other."""
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
    """Which hidden test catches which answer, measured on the variant's inputs.

    Runs :data:`~course_grading.mistakes.CORRECT_ANSWER` and every mistake on each
    hidden test's inputs, as the hidden test does (any numpy warning counts as a failure,
    as nbgrader scores a test cell that writes to stderr 0).

    Returns
    -------
    dict
        ``table[answer][test_id]`` is True when the test fails for that answer, where
        ``answer`` is ``"correct"`` or a mistake name.
    """
    answers = {"correct": CORRECT_ANSWER, **MISTAKES}
    table: dict[str, dict[str, bool]] = {}
    for name, source in answers.items():
        func = answer_function(source)
        row = {}
        for test_id, (Q, K) in variant.hidden_inputs.items():
            expected = attention_weights(Q, K)
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                try:
                    got = np.asarray(func(Q.copy(), K.copy()), dtype=float)
                except (ArithmeticError, RuntimeWarning):
                    row[test_id] = True
                    continue
            row[test_id] = not (
                got.shape == expected.shape and np.allclose(got, expected, rtol=0, atol=1e-6)
            )
        table[name] = row
    return table


def _check_variant(variant: Variant) -> str | None:
    """Return why the variant is unusable, or None if every hidden test isolates its mistake."""
    for test_id, (Q, K) in variant.hidden_inputs.items():
        if not _unsaturated(attention_weights(Q, K)):
            return f"{test_id}: the right weights are saturated"
    table = isolation_table(variant)
    for name, row in table.items():
        want = {t: name != "correct" and t == hidden_test_id(name) for t in row}
        if row != want:
            return f"{name}: fails {sorted(t for t, bad in row.items() if bad)}"
    for mistake in MISTAKES:
        test_id = hidden_test_id(mistake)
        Q, K = variant.hidden_inputs[test_id]
        with np.errstate(all="ignore"):
            got = answer_function(MISTAKES[mistake])(Q, K)
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
        public variant, whose worked example is the lessons' 'the cat sat'.

    Returns
    -------
    Variant

    Raises
    ------
    ValueError
        If ``seed`` is empty.
    """
    if not isinstance(seed, str) or not seed:
        raise ValueError(f"seed must be a non-empty string (got {seed!r})")
    rng = _rng(seed)
    Q, K, V = _example(rng, seed)
    mc_order = {q: tuple(int(i) for i in rng.permutation(len(MC_OPTIONS[q]))) for q in MC_OPTIONS}
    for _attempt in range(1000):
        variant = Variant(Q=Q, K=K, V=V, mc_order=mc_order, hidden_inputs=_hidden_inputs(rng))
        if _check_variant(variant) is None:
            return variant
    raise RuntimeError(f"could not draw isolating hidden-test inputs for seed {seed!r}")


# --------------------------------------------------------------------------------------
# the notebook
# --------------------------------------------------------------------------------------


def _num(x: float) -> str:
    return repr(float(x) + 0.0)


def _array(a: NDArray[np.float64], *, multiline: bool = False) -> str:
    rows = ["[" + ", ".join(_num(x) for x in row) + "]" for row in np.atleast_2d(a)]
    if not multiline:
        return f"np.array([{', '.join(rows)}])"
    return "np.array([\n" + "".join(f"    {r},\n" for r in rows) + "])"


def _nbgrader(
    grade_id: str, *, grade: bool, solution: bool, locked: bool, points: int | None = None
) -> dict[str, object]:
    meta: dict[str, object] = {
        "grade": grade,
        "grade_id": grade_id,
        "locked": locked,
        "schema_version": 3,
        "solution": solution,
        "task": False,
    }
    if grade:
        meta["points"] = points
    return meta


def _md(cell_id: str, text: str, nbgrader: dict[str, object] | None = None):
    cell = nbformat.v4.new_markdown_cell(text.strip("\n"))
    cell.id = cell_id
    if nbgrader:
        cell.metadata["nbgrader"] = nbgrader
    return cell


def _code(cell_id: str, source: str, nbgrader: dict[str, object]):
    cell = nbformat.v4.new_code_cell(source.strip("\n"))
    cell.id = cell_id
    cell.metadata["nbgrader"] = nbgrader
    return cell


def _answer(grade_id: str, source: str):
    return _code(grade_id, source, _nbgrader(grade_id, grade=False, solution=True, locked=False))


def _test(grade_id: str, source: str):
    points = GRADE_IDS[grade_id]
    meta = _nbgrader(grade_id, grade=True, solution=False, locked=True, points=points)
    return _code(grade_id, source, meta)


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line if line else line for line in text.splitlines())


_HIDDEN_WHAT = {
    "test_missing_scale": (
        "Catches a missing 1/sqrt(d_k): on these scores only the scale changes the weights.",
        "the weights should be softmax(Q K^T / sqrt(d_k)); they look unscaled",
    ),
    "test_wrong_axis": (
        "Catches a softmax over the wrong axis: every key is the same, so each row is uniform.",
        "each row (one query) must sum to 1; the softmax ran over the wrong axis",
    ),
    "test_naive_exp_overflow": (
        "Catches exp overflow: every score is above 709, where exp overflows in float64.",
        "equal large scores must give uniform weights: subtract each row max first",
    ),
    "test_dk_from_wrong_axis": (
        "Catches d_k read from the wrong axis: here d_k = 1 while there are 4 tokens.",
        "d_k is the length of each query vector, Q.shape[-1], not the number of tokens",
    ),
}


def _exact(x: float) -> str:
    """A float literal with 12 significant digits (stable across platforms' libm)."""
    return repr(float(f"{float(x):.12g}") + 0.0)


def _tuple_literal(w: NDArray[np.float64]) -> str:
    rows = "".join("    (" + ", ".join(_exact(x) for x in row) + "),\n" for row in w)
    return "(\n" + rows + ")"


# The graded comparisons never trust a name that the student's code, which runs in the same
# kernel before them, could have replaced (np.allclose, course_lib.attention_weights, a
# global called abs ...): the expectations are literals computed by course_lib when the
# variant is generated, and they are compared with the arithmetic of real floats, whose type
# is reached through a literal ((0.0).__class__), not through a name.
_REAL_FLOAT = "(0.0).__class__"


def _hidden_test(test_id: str, Q: NDArray[np.float64], K: NDArray[np.float64]) -> str:
    what, message = _HIDDEN_WHAT[test_id]
    k_source = "_Q.copy()" if np.array_equal(Q, K) else _array(K, multiline=True)
    expected = attention_weights(Q, K)
    n_q, n_k = expected.shape
    return f'''
# A hidden check runs here when the quiz is graded.
### BEGIN HIDDEN TESTS
"""{what}"""
import numpy as np

_Q = {_array(Q, multiline=True)}
_K = {k_source}
_got = attention_weights(_Q.copy(), _K.copy())
assert np.shape(_got) == {(n_q, n_k)!r}, f"expected shape {(n_q, n_k)!r}, got {{np.shape(_got)}}"
# expected weights: computed by course_lib when this variant of the quiz was generated
_expected = {_tuple_literal(expected)}
_F = {_REAL_FLOAT}
_close = 1
for _i in {tuple(range(n_q))!r}:
    for _j in {tuple(range(n_k))!r}:
        _d = _F(_got[_i][_j]) - _expected[_i][_j]
        if not _d * _d <= 1e-12:  # |difference| > 1e-6, or NaN
            _close = 0
assert _close == 1, "{message}"
### END HIDDEN TESTS
'''


def _mc_markdown(number: int, question: str, title: str, prompt: str, variant: Variant) -> str:
    options = "\n".join(
        f"- **{LETTERS[pos]}.** {MC_OPTIONS[question][idx]}"
        for pos, idx in enumerate(variant.mc_order[question])
    )
    return f"""
## Question {number} (1 point): {title}

{prompt}

{options}

Assign the letter of your choice, as a string, to `answer_{question}` in the cell below,
for example `answer_{question} = "A"`.
"""


def _mc_test(question: str, variant: Variant) -> str:
    name = f"answer_{question}"
    return f'''
"""Checks that {name} is a letter from A to D (the right one is checked when graded)."""
_letters = {{"A", "B", "C", "D"}}
assert isinstance({name}, str) and {name}.strip().upper() in _letters, (
    f"{name} must be one of the strings 'A', 'B', 'C', 'D' (got {{{name}!r}})"
)
### BEGIN HIDDEN TESTS
assert ("").__class__({name}).strip().upper() == "{variant.mc_answer(question)}", "not right"
### END HIDDEN TESTS
'''


def build_notebook(variant: Variant) -> nbformat.NotebookNode:
    """Build the instructor source notebook (solutions and hidden tests included).

    Parameters
    ----------
    variant : Variant
        The numbers, from :func:`make_variant`.

    Returns
    -------
    nbformat.NotebookNode
        An nbformat 4.5 notebook with kernelspec ``python3``, deterministic cell ids and
        nbgrader metadata on every graded cell (grade ids: :data:`GRADE_IDS`).
    """
    w = attention_weights(variant.Q, variant.K)
    w_rounded = ", ".join("(" + ", ".join(f"{x:.2f}" for x in row) + ")" for row in w)
    cells = [
        _md(
            "intro",
            """
# Checkpoint quiz: the attention equation

$$\\mathrm{Attention}(Q, K, V) = \\mathrm{softmax}\\!\\left(\\frac{QK^T}{\\sqrt{d_k}}\\right) V$$

Five questions, 10 points: a function to write (5 points), one number to compute
(1 point), two multiple-choice questions (1 point each) and a short written answer
(2 points, read by your instructor).

**How to answer.** Replace each `raise NotImplementedError()` with your answer. Use numpy
only (no `course_lib`). Run the whole notebook (*Run > Run All Cells*): the checks after
each answer tell you at once whether it is on track. When your notebook is graded, hidden
checks run as well; their cells are empty here. Do not rename this notebook or delete cells.
""",
        ),
        _code(
            "setup",
            f"""
import numpy as np

# The worked example: three tokens, each with a 2-dimensional query, key and value.
tokens = ["the", "cat", "sat"]
Q = {_array(variant.Q)}
K = {_array(variant.K)}
V = {_array(variant.V)}
""",
            _nbgrader("setup", grade=False, solution=False, locked=True),
        ),
        _md(
            "q1",
            """
## Question 1 (5 points): the attention weights

Write `attention_weights(Q, K)`. `Q` has shape `(n_q, d_k)` (one query per row), `K` has
shape `(n_k, d_k)` (one key per row). Return the `(n_q, n_k)` array

$$\\mathrm{softmax}\\!\\left(\\frac{QK^T}{\\sqrt{d_k}}\\right)$$

with the softmax taken over each row, so that every row is one query's weights and sums
to 1. It must also work when the scores are large (in the hundreds or thousands).

The check below tries your function on the worked example. Four hidden checks, one
point each, try it on other inputs when the quiz is graded.
""",
        ),
        _answer(
            "attention_weights",
            f'''
def attention_weights(Q, K):
    """Return softmax(Q K^T / sqrt(d_k)), taken over each row (one row per query)."""
    ### BEGIN SOLUTION
{_indent(textwrap.dedent(CORRECT_ANSWER.split('"""', 2)[2].strip(chr(10))))}
    ### END SOLUTION
''',
        ),
        _test(
            "test_attention_weights_visible",
            f'''
"""Checks attention_weights on the worked example: shape, rows summing to 1, the weights."""
_w = attention_weights(Q.copy(), K.copy())
assert np.shape(_w) == (3, 3), f"expected a 3 x 3 array of weights, got shape {{np.shape(_w)}}"
_rounded = ({w_rounded})
_F = (0.0).__class__  # the real float type
for _i in (0, 1, 2):
    _row = (_F(_w[_i][0]), _F(_w[_i][1]), _F(_w[_i][2]))
    assert -1e-9 < _row[0] + _row[1] + _row[2] - 1.0 < 1e-9, f"row {{_i}} must sum to 1: {{_row}}"
    for _j in (0, 1, 2):
        assert -0.006 < _row[_j] - _rounded[_i][_j] < 0.006, (
            f"row {{_i}} of the weights should round to {{_rounded[_i]}}, "
            f"got {{[round(x, 2) for x in _row]}}"
        )
''',
        ),
        *(_test(t, _hidden_test(t, *variant.hidden_inputs[t])) for t in HIDDEN_TEST_IDS),
        _md(
            "q2",
            """
## Question 2 (1 point): the output for 'sat'

Compute the attention output for the token 'sat' (the third row of
`softmax(QK^T / sqrt(d_k)) V`) for the worked example in the setup cell, and assign it
to `sat_output` as an array of 2 numbers. You may use your `attention_weights`.
Two decimals are precise enough.
""",
        ),
        _answer(
            "sat_output",
            """
# sat_output = an array of 2 numbers: the attention output for 'sat'
### BEGIN SOLUTION
sat_output = attention_weights(Q, K)[2] @ V
### END SOLUTION
""",
        ),
        _test(
            "test_sat_output",
            f'''
"""Checks that sat_output holds 2 finite numbers; their values are checked when graded."""
_sat = np.asarray(sat_output, dtype=float)
assert _sat.shape == (2,), f"sat_output must hold 2 numbers (got shape {{_sat.shape}})"
assert np.isfinite(_sat).all(), f"sat_output must be finite (got {{_sat}})"
### BEGIN HIDDEN TESTS
# the output for 'sat': computed by course_lib when this variant of the quiz was generated
_expected_sat = ({_exact(variant.sat_output[0])}, {_exact(variant.sat_output[1])})
_F = {_REAL_FLOAT}
_d0 = _F(sat_output[0]) - _expected_sat[0]
_d1 = _F(sat_output[1]) - _expected_sat[1]
assert -0.01 < _d0 < 0.01 and -0.01 < _d1 < 0.01, "not the output for 'sat'"
### END HIDDEN TESTS
''',
        ),
        _md(
            "q3",
            _mc_markdown(
                3,
                "why_scale",
                "why divide by sqrt(d_k)?",
                "Why does the equation divide the scores by $\\sqrt{d_k}$?",
                variant,
            ),
        ),
        _answer(
            "mc_why_scale",
            f"""
# answer_why_scale = one letter as a string: "A", "B", "C" or "D"
### BEGIN SOLUTION
answer_why_scale = "{variant.mc_answer("why_scale")}"
### END SOLUTION
""",
        ),
        _test("test_mc_why_scale", _mc_test("why_scale", variant)),
        _md(
            "q4",
            _mc_markdown(
                4,
                "causal_mask",
                "what does a causal mask change?",
                "A text generator applies a causal mask to the scores before the softmax. "
                "What does it change?",
                variant,
            ),
        ),
        _answer(
            "mc_causal_mask",
            f"""
# answer_causal_mask = one letter as a string: "A", "B", "C" or "D"
### BEGIN SOLUTION
answer_causal_mask = "{variant.mc_answer("causal_mask")}"
### END SOLUTION
""",
        ),
        _test("test_mc_causal_mask", _mc_test("causal_mask", variant)),
        _md(
            "q5",
            """
## Question 5 (2 points): in your own words

A model uses heads with $d_k = 512$ and forgets to divide the scores by $\\sqrt{d_k}$.
In two or three sentences: what happens to the attention weights early in training, and
why does that make the model learn slowly? Write your answer in the cell below.
""",
        ),
        _md(
            "written_scaling",
            """
A dot product of two 512-dimensional vectors with entries of size about 1 is a sum of
512 terms, so its typical size is about sqrt(512) ≈ 23, and the scores in a row differ by
tens. Softmax turns differences that large into nearly one-hot weights (saturation).
Where softmax is saturated its gradient is almost zero, so almost no learning signal
reaches the queries and keys, and the attention pattern barely changes during training.

*Rubric (2 points): 1 point for "scores grow like sqrt(d_k), so softmax saturates / becomes
nearly one-hot"; 1 point for "saturated softmax has near-zero gradients, so learning is
slow".*
""",
            _nbgrader("written_scaling", grade=True, solution=True, locked=False, points=2),
        ),
        _md(
            "end",
            """
## Done?

Save the notebook, then run *Kernel > Restart Kernel and Run All Cells* once more and
check that every visible check passes. Your instructor grades the notebook as saved, by
running it from the top in a fresh kernel.
""",
        ),
    ]
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata = {
        "kernelspec": {
            "display_name": "Python 3 (ipykernel)",
            "language": "python",
            "name": "python3",
        },
        "language_info": {"name": "python"},
    }
    nbformat.validate(nb)
    return nb


def notebook_text(seed: str = DEFAULT_SEED) -> str:
    """The source notebook for ``seed``, exactly as it is written to disk."""
    return nbformat.writes(build_notebook(make_variant(seed))) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: write the source notebook of a variant (see the module docstring)."""
    parser = argparse.ArgumentParser(
        prog="python -m course_grading.variants",
        description="Write the checkpoint quiz's instructor source notebook for a seed.",
    )
    parser.add_argument(
        "--seed",
        default=DEFAULT_SEED,
        help=f"any text; keep it private to grade a class (default: {DEFAULT_SEED!r}, "
        "the public variant committed in the repository)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=SOURCE_PATH,
        help=f"notebook to write (default: {SOURCE_PATH})",
    )
    args = parser.parse_args(argv)
    if not args.seed:
        parser.error("--seed must not be empty")
    text = notebook_text(args.seed)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out} (seed {'default' if args.seed == DEFAULT_SEED else 'private'})")
    print("next: cd quiz && nbgrader generate_assignment checkpoint --force")
    return 0


if __name__ == "__main__":
    sys.exit(main())
