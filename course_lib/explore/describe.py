"""Figures in words: the sentences that go with every figure and widget of the lessons.

Each figure (:mod:`course_lib.explore.plots`) and each explorer
(:mod:`course_lib.explore.widgets`) is described twice, from the same numbers it draws:

* a **description** with the numbers (every row of a small heatmap, the weights and the
  output of a blend): the figure's ``alt`` text, its ``text/plain`` in the notebook, what a
  screen-reader user or a reader of the plain ``.ipynb`` gets instead of the picture;
* a **takeaway**, one short sentence saying what the figure shows: its visible caption.

Screen readers read the ``alt`` text and the caption one after the other, so the two say
different things: the numbers once, the point once.

Public API
----------
``describe_heatmap``, ``heatmap_takeaway``
    An n_q × n_k table of weights or scores.
``describe_row``, ``row_takeaway``, ``describe_softmax``
    One row of scores or weights; a row of scores and the weights softmax makes of it.
``describe_blend``, ``blend_takeaway``
    One output row as a weighted average of 2-D value vectors.
``describe_histogram``
    A sample of scores: count, spread, the middle 95 %.
``looks_most``, ``top_weights``
    Where one row of weights looks most (ties said as ties, token names quoted), and a
    short table of every row's largest weights instead of a wall of numbers.
``format_number``
    A number as the lessons print it (fixed decimals, no ``-0.00``, ``−∞`` for masked).
``convex_hull``, ``inside_hull``
    The 2-D geometry behind "the output stays inside the triangle of the values".
``asymmetry``
    Whether a score table is symmetric, and which pairs (i, j) differ from (j, i) (lessons
    02 and 08).
``describe_heads``
    Every head's weight map, and where each token looks most in each (lesson 09).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import AttentionInputError

__all__ = [
    "asymmetry",
    "blend_takeaway",
    "convex_hull",
    "describe_blend",
    "describe_heads",
    "describe_heatmap",
    "describe_histogram",
    "describe_row",
    "describe_softmax",
    "format_number",
    "heatmap_takeaway",
    "inside_hull",
    "looks_most",
    "row_takeaway",
    "top_weights",
]


def format_number(x: float, decimals: int = 2) -> str:
    """Format a number for a cell or a description: fixed decimals, no '-0.00'.

    Examples
    --------
    >>> format_number(-0.001), format_number(0.2483), format_number(float("-inf"))
    ('0.00', '0.25', '−∞')
    """
    if np.isneginf(x):
        return "−∞"
    if np.isposinf(x):
        return "+∞"
    s = f"{x:.{decimals}f}"
    if float(s) == 0.0:
        s = s.lstrip("-")
    return s


def _quoted_list(names: Sequence[str]) -> str:
    """'a', 'a' and 'b', 'a', 'b' and 'c'."""
    quoted = [f"'{t}'" for t in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def looks_most(row: ArrayLike, tokens: Sequence[str], decimals: int = 2) -> str:
    """Where one row of weights looks most, in words: a tie is said as a tie.

    Weights are compared as shown (rounded to ``decimals``), so three weights shown as
    0.33 are a tie, never "looks most at" the first of them. Token names are quoted, so
    'the' reads as a token and not as English.

    Parameters
    ----------
    row : array_like, shape (n,)
        One query's weights.
    tokens : sequence of str, length n
        The attended tokens.
    decimals : int, default 2

    Returns
    -------
    str
        A phrase that follows the query's name.

    Raises
    ------
    AttentionInputError
        If ``row`` is not one row with a weight per token.

    Examples
    --------
    >>> looks_most([0.25, 0.5, 0.25], ["the", "cat", "sat"])
    "looks most at 'cat' (0.50)"
    >>> looks_most([0.4, 0.2, 0.4], ["the", "cat", "sat"])
    "looks most at 'the' and 'sat', tied at 0.40"
    >>> looks_most([1 / 3, 1 / 3, 1 / 3], ["the", "cat", "sat"])
    'spreads its weight evenly (0.33 to each)'
    """
    r = np.round(np.asarray(row, dtype=np.float64), decimals)
    if r.ndim != 1 or r.size != len(tokens) or r.size == 0:
        raise AttentionInputError(f"row must be one row of {len(tokens)} weights, one per token "
                         f"(got shape {r.shape})")
    top = r.max()
    best = [tokens[j] for j in np.flatnonzero(r == top)]
    shown = format_number(float(top), decimals)
    if len(best) == len(tokens) and len(best) > 1:
        return f"spreads its weight evenly ({shown} to each)"
    if len(best) == 1:
        return f"looks most at {_quoted_list(best)} ({shown})"
    return f"looks most at {_quoted_list(best)}, tied at {shown}"


def top_weights(
    weights: ArrayLike, tokens: Sequence[str], *, top: int = 2, decimals: int = 2
) -> str:
    """A short table: each query token and its ``top`` largest weights, largest first.

    What to print instead of every weight of a big table (a 12 × 12 map is 144 numbers).

    Parameters
    ----------
    weights : array_like, shape (n, n)
    tokens : sequence of str, length n
        Names of the rows (queries) and the columns (keys).
    top : int, default 2
        How many weights per row.
    decimals : int, default 2

    Returns
    -------
    str
        One line per token.

    Raises
    ------
    AttentionInputError
        If ``weights`` is not n × n for the n tokens, or ``top`` is not 1 … n.

    Examples
    --------
    >>> print(top_weights([[0.4, 0.2, 0.4], [0.1, 0.6, 0.3], [0.25, 0.25, 0.5]],
    ...                   ["the", "cat", "sat"]))
    query   largest weights
    'the'   'the' 0.40, 'sat' 0.40
    'cat'   'cat' 0.60, 'sat' 0.30
    'sat'   'sat' 0.50, 'the' 0.25
    """
    w = np.asarray(weights, dtype=np.float64)
    n = len(tokens)
    if w.shape != (n, n):
        raise AttentionInputError(f"weights must be {n} × {n}, one row and one column per token "
                         f"(got shape {w.shape})")
    if not 1 <= top <= n:
        raise AttentionInputError(f"top must be between 1 and {n} (got {top})")
    names = [f"'{t}'" for t in tokens]
    width = max(len("query"), *(len(t) for t in names)) + 3
    lines = ["query".ljust(width) + "largest weights"]
    for name, row in zip(names, w, strict=True):
        order = np.argsort(-np.round(row, decimals), kind="stable")[:top]
        lines.append(name.ljust(width) + ", ".join(
            f"{names[j]} {format_number(float(row[j]), decimals)}" for j in order))
    return "\n".join(lines)


def _join(items: Sequence[str]) -> str:
    return ", ".join(items)


def _short_list(items: Sequence[str], max_listed: int) -> str:
    if len(items) <= max_listed:
        return _join(items)
    return f"{items[0]}, {items[1]}, … {items[-1]} ({len(items)} in all)"


def _vector(x: NDArray[np.float64], decimals: int) -> str:
    return "[" + ", ".join(format_number(c, decimals) for c in x) + "]"


# --------------------------------------------------------------------------------------
# heatmaps
# --------------------------------------------------------------------------------------


def heatmap_takeaway(
    values: ArrayLike,
    rows: Sequence[str],
    cols: Sequence[str],
    *,
    kind: Literal["weights", "scores"] = "weights",
    decimals: int = 2,
    mask: NDArray[np.bool_] | None = None,
) -> str:
    """What a heatmap shows, in one or two sentences: masked cells, row sums, its maximum.

    Examples
    --------
    >>> heatmap_takeaway([[0.4, 0.6], [0.5, 0.5]], ["a", "b"], ["a", "b"])
    'Every row sums to 1; the strongest cell is a attending to b at 0.60.'
    """
    v = np.asarray(values, dtype=np.float64)
    n_q, n_k = v.shape
    same = list(rows) == list(cols)
    parts = []
    if mask is not None and not mask.all():
        n_hidden = int((~mask).sum())
        causal = n_q == n_k and bool((mask == np.tril(np.ones((n_q, n_k), bool))).all())
        cells_word = f"{n_hidden} cell{'s' * (n_hidden != 1)}"
        verb = "are" if n_hidden != 1 else "is"
        parts.append(
            f"{cells_word} above the diagonal {verb} masked (causal mask): no token attends "
            "to a later one." if causal else f"{cells_word} {verb} masked."
        )
    ends = []
    if kind == "weights" and np.allclose(v.sum(axis=1), 1.0, atol=1e-6):
        ends.append("Every row sums to 1")
    elif kind == "weights":
        ends.append("The rows do not all sum to 1")
    shown = np.round(np.where(np.isfinite(v), v, -np.inf), decimals)
    top = shown.max()
    where = [tuple(int(x) for x in ij) for ij in np.argwhere(shown == top)]
    verb = "attending to" if kind == "weights" else "scored against"

    def cell(i: int, j: int) -> str:
        return f"{rows[i]} {verb} {'itself' if same and i == j else cols[j]}"

    if len(where) == 1:
        ends.append(f"the strongest cell is {cell(*where[0])} at {format_number(top, decimals)}")
    elif len(where) <= 4:
        ends.append(f"the strongest cells, tied at {format_number(top, decimals)}, are "
                    + _join([cell(i, j) for i, j in where]))
    else:
        ends.append(f"{len(where)} cells tie for the strongest value, "
                    f"{format_number(top, decimals)}")
    text = "; ".join(ends)
    parts.append(text[0].upper() + text[1:] + ".")
    return " ".join(parts)


def describe_heatmap(
    values: ArrayLike,
    rows: Sequence[str],
    cols: Sequence[str],
    *,
    kind: Literal["weights", "scores"] = "weights",
    decimals: int = 2,
    mask: NDArray[np.bool_] | None = None,
    max_listed: int = 8,
) -> str:
    """Describe a heatmap in words: its size, its labels, its values, then its takeaway.

    Lists every row's values when there are at most ``max_listed`` rows and columns,
    names the strongest cell (or cells, when tied at the shown precision) and says whether
    every row sums to 1.

    Examples
    --------
    >>> print(describe_heatmap([[0.5, 0.5], [1.0, 0.0]], ["a", "b"], ["a", "b"]))
    A 2 by 2 heatmap of attention weights. Rows are the querying tokens a, b; columns are
    the attended tokens. Row values: a attends 0.50 to a, 0.50 to b; b attends 1.00, 0.00.
    Every row sums to 1; the strongest cell is b attending to a at 1.00.
    """
    v = np.asarray(values, dtype=np.float64)
    n_q, n_k = v.shape
    what = "attention weights" if kind == "weights" else "attention scores"
    verb = "attends" if kind == "weights" else "scores"
    prep = "to" if kind == "weights" else "against"
    same = list(rows) == list(cols)
    parts = [
        f"A {n_q} by {n_k} heatmap of {what}.",
        f"Rows are the querying tokens {_short_list(rows, max_listed)}; columns are the "
        "attended tokens" + ("." if same else f" {_short_list(cols, max_listed)}."),
    ]
    if n_q <= max_listed and n_k <= max_listed:
        row_texts = []
        for i in range(n_q):
            visible = [True] * n_k if mask is None else [bool(b) for b in mask[i]]
            cells = [format_number(v[i, j], decimals) for j in range(n_k)]
            if i == 0:
                cells = [f"{c} {prep} {cols[j]}" for j, c in enumerate(cells)]
            cells = [c if visible[j] else f"{cols[j]} masked" for j, c in enumerate(cells)]
            row_texts.append(f"{rows[i]} {verb} {_join(cells)}")
        parts.append("Row values: " + "; ".join(row_texts) + ".")
    else:
        finite = v[np.isfinite(v)]
        parts.append(f"Values range from {format_number(finite.min(), decimals)} to "
                     f"{format_number(finite.max(), decimals)}.")
    parts.append(heatmap_takeaway(v, rows, cols, kind=kind, decimals=decimals, mask=mask))
    return " ".join(parts)


# --------------------------------------------------------------------------------------
# one row
# --------------------------------------------------------------------------------------


def _largest(r: NDArray[np.float64], tokens: Sequence[str], decimals: int) -> str:
    shown = np.round(r, decimals)
    top = [t for x, t in zip(shown, tokens, strict=True) if x == shown.max()]
    if len(top) == 1:
        return f"the largest is {top[0]} at {format_number(shown.max(), decimals)}"
    return f"the largest, tied at {format_number(shown.max(), decimals)}, are {_join(top)}"


def row_takeaway(
    row: ArrayLike,
    tokens: Sequence[str],
    *,
    kind: Literal["scores", "weights"] = "weights",
    query: str | None = None,
    decimals: int = 2,
) -> str:
    """What one row shows, in one sentence: its largest entry (and, for weights, its sum).

    Examples
    --------
    >>> row_takeaway([0.25, 0.25, 0.5], ["the", "cat", "sat"], query="sat")
    "sat's weights sum to 1.00; the largest is sat at 0.50."
    >>> row_takeaway([1.0, 1.0, 2.0], ["the", "cat", "sat"], kind="scores")
    'Of these scores, the largest is sat at 2.00.'
    """
    r = np.asarray(row, dtype=np.float64)
    largest = _largest(r, tokens, decimals)
    if kind == "weights":
        whose = f"{query}'s weights" if query else "The weights"
        return f"{whose} sum to {format_number(r.sum(), decimals)}; {largest}."
    return f"Of {query + chr(39) + 's' if query else 'these'} scores, {largest}."


def describe_row(
    row: ArrayLike,
    tokens: Sequence[str],
    *,
    kind: Literal["scores", "weights"] = "weights",
    query: str | None = None,
    decimals: int = 2,
    max_listed: int = 8,
) -> str:
    """Describe one row of scores or weights in a sentence (figures and widgets).

    Rows longer than ``max_listed`` are summarised (smallest and largest entry) instead of
    listed.

    Examples
    --------
    >>> describe_row([0.25, 0.25, 0.5], ["the", "cat", "sat"], query="sat")
    "sat's attention weights: 0.25 to the, 0.25 to cat, 0.50 to sat. They sum to 1.00; the
    largest is sat at 0.50."
    """
    r = np.asarray(row, dtype=np.float64)
    whose = f"{query}'s " if query else "The row's "
    prep = "to" if kind == "weights" else "against"
    noun = "attention weights" if kind == "weights" else "scores"
    if r.size <= max_listed:
        listed = _join([f"{format_number(x, decimals)} {prep} {t}"
                        for x, t in zip(r, tokens, strict=True)])
    else:
        lo = int(np.argmin(r))
        listed = (f"{r.size} values from {format_number(r[lo], decimals)} ({prep} "
                  f"{tokens[lo]}) to {format_number(r.max(), decimals)}")
    text = f"{whose}{noun}: {listed}."
    largest = _largest(r, tokens, decimals)
    if kind == "weights":
        return f"{text} They sum to {format_number(r.sum(), decimals)}; {largest}."
    return f"{text} {largest[0].upper()}{largest[1:]}."


def describe_softmax(
    scores_row: ArrayLike,
    weights_row: ArrayLike,
    tokens: Sequence[str],
    *,
    query: str | None = None,
    temperature: str | None = None,
    decimals: int = 2,
    what: str = "scores",
) -> str:
    """Describe softmax turning one row of scores into weights (figure and widget alike).

    ``what`` names the row: ``"scaled scores"`` where the scaling is already in (lesson 04's
    budget), so that its weights are not taken for those of the raw scores.

    Examples
    --------
    >>> print(describe_softmax([0.0, 2.0], [0.12, 0.88], ["a", "b"], temperature="1"))
    Softmax turns the scores 0.00, 2.00 (for a, b) into weights 0.12, 0.88 at temperature 1:
    The row's attention weights: 0.12 to a, 0.88 to b. They sum to 1.00; the largest is b at
    0.88.
    """
    whose = f"{query}'s " if query else "the "
    at = f" at temperature {temperature}" if temperature is not None else ""
    return (
        f"Softmax turns {whose}{what} "
        f"{_join([format_number(x, decimals) for x in scores_row])}"
        f" (for {_join(tokens)}) into weights "
        f"{_join([format_number(x, decimals) for x in weights_row])}{at}: "
        + describe_row(weights_row, tokens, kind="weights", query=query, decimals=decimals)
    )


# --------------------------------------------------------------------------------------
# a sample of scores
# --------------------------------------------------------------------------------------


def describe_histogram(dots: ArrayLike, label: str, *, unit: str = "scores") -> str:
    """One sentence about a sample: count, standard deviation, the middle 95 %.

    ``unit`` names what was counted (``"scores"``, ``"weights"``).

    Examples
    --------
    >>> describe_histogram([-1.0, 0.0, 1.0], "Scores")
    'Scores: 3 scores with standard deviation 0.816; 95% lie between -0.95 and 0.95'
    >>> describe_histogram([0.5, 1.0], "Largest weights", unit="weights")[:36]
    'Largest weights: 2 weights with stan'
    """
    d = np.asarray(dots, dtype=np.float64)
    lo, hi = np.percentile(d, [2.5, 97.5])
    return (
        f"{label}: {d.size} {unit} with standard deviation {d.std():.3g}; "
        f"95% lie between {lo:.3g} and {hi:.3g}"
    )


# --------------------------------------------------------------------------------------
# the blend: geometry and words
# --------------------------------------------------------------------------------------


def convex_hull(points: ArrayLike) -> NDArray[np.float64]:
    """Convex hull of 2-D points, counter-clockwise (Andrew's monotone chain).

    Examples
    --------
    >>> convex_hull([[0, 0], [1, 0], [0, 1], [0.2, 0.2]]).tolist()
    [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]
    """
    pts = sorted({(float(x), float(y)) for x, y in np.asarray(points, dtype=np.float64)})
    if len(pts) <= 2:
        return np.array(pts)

    def cross(o: tuple[float, float], a: tuple[float, float], b: tuple[float, float]) -> float:
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    lower: list[tuple[float, float]] = []
    for p in pts:
        while len(lower) >= 2 and cross(lower[-2], lower[-1], p) <= 0:
            lower.pop()
        lower.append(p)
    upper: list[tuple[float, float]] = []
    for p in reversed(pts):
        while len(upper) >= 2 and cross(upper[-2], upper[-1], p) <= 0:
            upper.pop()
        upper.append(p)
    return np.array(lower[:-1] + upper[:-1])


def inside_hull(point: ArrayLike, values: ArrayLike, tol: float = 1e-9) -> bool:
    """Whether a 2-D point lies in the convex hull of the 2-D value vectors (edges count).

    Examples
    --------
    >>> inside_hull([1.25, 1.5], [[1, 0], [0, 2], [2, 2]])
    True
    """
    p = np.asarray(point, dtype=np.float64)
    hull = convex_hull(values)
    if len(hull) == 1:
        return bool(np.allclose(p, hull[0]))
    if len(hull) == 2:
        a, b = hull
        ab, ap = b - a, p - a
        t = float(ap @ ab / (ab @ ab))
        return bool(-tol <= t <= 1 + tol and np.linalg.norm(ap - t * ab) <= tol * 10)
    for k in range(len(hull)):
        a, b = hull[k], hull[(k + 1) % len(hull)]
        if (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0]) < -tol:
            return False
    return True


def _blend(weights_row: ArrayLike, values: ArrayLike) -> tuple[NDArray[np.float64], ...]:
    """The weights, the values and the output they make, as float arrays."""
    w = np.asarray(weights_row, dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    return w, v, w @ v


def _where(out: NDArray[np.float64], v: NDArray[np.float64], n: int) -> str:
    if not inside_hull(out, v):
        return "OUTSIDE the values' convex hull"
    return "inside the triangle of the values" if n == 3 else "inside their convex hull"


def blend_takeaway(
    weights_row: ArrayLike,
    values: ArrayLike,
    tokens: Sequence[str],
    *,
    query: str | None = None,
    decimals: int = 2,
) -> str:
    """Where one output lands, in one sentence.

    Examples
    --------
    >>> blend_takeaway([0.25, 0.25, 0.5], [[1, 0], [0, 2], [2, 2]], ["the", "cat", "sat"],
    ...                query="sat")
    'The output for sat, [1.25, 1.50], lies inside the triangle of the values.'
    """
    _, v, out = _blend(weights_row, values)
    name = f"The output for {query}" if query else "The output"
    return f"{name}, {_vector(out, decimals)}, lies {_where(out, v, len(tokens))}."


def describe_blend(
    weights_row: ArrayLike,
    values: ArrayLike,
    tokens: Sequence[str],
    *,
    query: str | None = None,
    decimals: int = 2,
) -> str:
    """Describe the output of one row as a weighted average of the value vectors.

    Examples
    --------
    >>> print(describe_blend([0.5, 0.5], [[0, 0], [2, 2]], ["a", "b"]))
    The value vectors are the corners of a segment: a [0.00, 0.00], b [2.00, 2.00]. With
    weights 0.50, 0.50, the output is 0.50·[0.00, 0.00] + 0.50·[2.00, 2.00] = [1.00, 1.00],
    a point inside their convex hull: the weights are non-negative and sum to 1, so the
    output is a weighted average.

    The sum is worked with the weights as printed, so that it adds up by hand; when the
    unrounded weights give another result, the sentence says both:

    >>> print(describe_blend([0.254, 0.254, 0.492], [[1, 0], [0, 2], [2, 2]],
    ...                      ["the", "cat", "sat"]))  # doctest: +NORMALIZE_WHITESPACE
    The value vectors are the corners of a triangle: the [1.00, 0.00], cat [0.00, 2.00],
    sat [2.00, 2.00]. With weights 0.25, 0.25, 0.49, the output is 0.25·[1.00, 0.00] +
    0.25·[0.00, 2.00] + 0.49·[2.00, 2.00] = [1.23, 1.48] with these rounded weights
    (≈ [1.24, 1.49] with the unrounded ones), a point inside the triangle of the values:
    the weights are non-negative and sum to 1, so the output is a weighted average.
    """
    w, v, out = _blend(weights_row, values)
    shape = {3: "a triangle", 2: "a segment"}.get(len(tokens), "a polygon")
    corners = _join([f"{t} {_vector(x, decimals)}" for t, x in zip(tokens, v, strict=True)])
    terms = " + ".join(f"{format_number(a, decimals)}·{_vector(x, decimals)}"
                       for a, x in zip(w, v, strict=True))
    why = (
        "the weights are non-negative and sum to 1, so the output is a weighted average"
        if (w >= 0).all() and np.isclose(w.sum(), 1.0)
        else f"the weights sum to {format_number(w.sum(), decimals)}"
        + (" and some are negative" if (w < 0).any() else "")
        + ", so this is not a weighted average"
    )
    name = f"the output for {query}" if query else "the output"
    # The sum as written, with the weights as shown (rounded): it must add up on paper.
    shown = np.round(w, decimals) @ v
    result = _vector(shown, decimals)
    if _vector(out, decimals) != result:
        result += (f" with these rounded weights (≈ {_vector(out, decimals)} with the "
                   "unrounded ones)")
    return (
        f"The value vectors are the corners of {shape}: {corners}. "
        f"With weights {_join([format_number(a, decimals) for a in w])}, {name} is {terms} = "
        f"{result}, a point {_where(out, v, len(tokens))}: {why}."
    )


def asymmetry(table: ArrayLike, tokens: Sequence[str], decimals: int = 2) -> str:
    """Say in words whether a square score table is symmetric, and where it is not.

    Parameters
    ----------
    table : array_like, shape (n, n)
    tokens : sequence of str, length n
    decimals : int, default 2
        Entries equal at this precision count as equal.

    Returns
    -------
    str

    Raises
    ------
    AttentionInputError
        If the table is not square or the tokens do not name its rows.

    Examples
    --------
    >>> asymmetry([[1, 0], [0, 1]], ["a", "b"])
    'The table is symmetric: every score of i against j equals j against i.'
    >>> asymmetry([[1, 2], [0, 1]], ["a", "b"])
    "The table is not symmetric: a's query · b's key = 2.00, but b's query · a's key = 0.00."
    """
    t = np.asarray(table, dtype=np.float64)
    if t.ndim != 2 or t.shape[0] != t.shape[1] or len(tokens) != t.shape[0]:
        raise AttentionInputError(
            f"table must be square, shape (n, n), with one token per row (got shape "
            f"{t.shape} and {len(tokens)} tokens)"
        )
    r = np.round(t, decimals)
    pairs = [(i, j) for i in range(len(r)) for j in range(i + 1, len(r)) if r[i, j] != r[j, i]]
    if not pairs:
        return "The table is symmetric: every score of i against j equals j against i."
    said = [f"{tokens[i]}'s query · {tokens[j]}'s key = {format_number(t[i, j], decimals)}, "
            f"but {tokens[j]}'s query · {tokens[i]}'s key = {format_number(t[j, i], decimals)}"
            for i, j in pairs[:3]]
    more = f" ({len(pairs)} pairs differ)" if len(pairs) > 3 else ""
    return "The table is not symmetric: " + "; ".join(said) + more + "."


def _head_top(w: NDArray[np.float64], tokens: Sequence[str], decimals: int) -> str:
    """Where each query looks most, for one head, in a few words (ties named as ties)."""
    shown = np.round(w, decimals)
    tops = []
    for row in shown:
        best = [f"'{tokens[j]}'" for j in np.flatnonzero(row == row.max())]
        tops.append("all evenly" if len(best) == len(tokens) else " and ".join(best))
    if len(set(tops)) == 1:
        return ("every token spreads evenly" if tops[0] == "all evenly"
                else f"every token looks most at {tops[0]}")
    return ", ".join(f"'{t}' → {top}" for t, top in zip(tokens, tops, strict=True))


def describe_heads(weights: ArrayLike, tokens: Sequence[str], decimals: int = 2) -> str:
    """Every head's weight map in words: its rows, then where each token looks most.

    Parameters
    ----------
    weights : array_like, shape (h, n, n)
    tokens : sequence of str, length n

    Returns
    -------
    str

    Raises
    ------
    AttentionInputError
        If ``weights`` is not ``(h, n, n)`` or the tokens do not name its rows.

    Examples
    --------
    >>> from course_lib.heads import heads_example, multi_head_attention
    >>> ex = heads_example()
    >>> _, w = multi_head_attention(ex.X, ex.W_Q, ex.W_K, ex.W_V, ex.W_O, h=2)
    >>> print(describe_heads(w, ex.tokens))  # doctest: +ELLIPSIS, +NORMALIZE_WHITESPACE
    2 heads, each with its own 3 by 3 map of attention weights. Head 0: ...
    sat attends 0.25, 0.50, 0.25. ... Where each token looks most: head 0: 'the' → all
    evenly, 'cat' → 'cat', 'sat' → 'cat'; head 1: every token looks most at 'the'.
    """
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 3 or w.shape[1] != w.shape[2] or len(tokens) != w.shape[1]:
        raise AttentionInputError(
            f"weights must be (h, n, n), one n × n map per head, with n tokens named "
            f"(got shape {w.shape} and {len(tokens)} tokens)"
        )
    h, n, _ = w.shape
    toks = list(tokens)
    strip = f"A {n} by {n} heatmap of attention weights. "
    parts = [f"{h} heads, each with its own {n} by {n} map of attention weights." if h > 1
             else f"1 head, one {n} by {n} map of attention weights."]
    for i in range(h):
        parts.append(f"Head {i}: " + describe_heatmap(w[i], toks, toks, decimals=decimals)
                     .removeprefix(strip))
    parts.append("Where each token looks most: " + "; ".join(
        f"head {i}: {_head_top(w[i], toks, decimals)}" for i in range(h)) + ".")
    return " ".join(parts)
