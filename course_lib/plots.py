"""Figures for the lessons, each with a text description generated from the same data.

Every function here returns a :class:`DescribedFigure`: the matplotlib figure **and** a
short plain-language description of it (which rows and columns, the values, the strongest
cell, what sums to 1). A screen-reader user, a reader of the plain ``.ipynb`` and the
notebook tests all get the description; nobody has to look at pixels.

Public API (names are stable; lessons may rely on them)
-------------------------------------------------------
``DescribedFigure``
    ``.figure`` (:class:`matplotlib.figure.Figure`), ``.description`` (str),
    ``.png(dpi=None) -> bytes``, ``.save(path)``. Displayed in Jupyter as an HTML
    ``<figure>``: the PNG with the description as its ``alt`` text and the description
    as a visible caption underneath. Its ``text/plain`` (and ``repr``/``str``) is the
    description.
``attention_heatmap(weights, tokens=None, *, key_tokens=None, title=None, decimals=2,
show_values=None, kind="weights", mask=None)``
    The n × n table with token labels and the values written in the cells (lessons 01,
    02, 04, 06, 07). ``kind="scores"`` words the description for raw or scaled scores.
``score_bars(scores_row, tokens=None, *, query=None, title=None, decimals=2)`` and
``weight_bars(weights_row, ...)`` and ``budget_bars(scores_row, tokens=None, *,
query=None, temperature=1.0, decimals=2)``
    One row as bars: its scores, its weights, or both side by side (lesson 04).
``dot_product_histograms(d_k, *, n_samples=4000, rng=None)``
    q·k for random unit-variance vectors, unscaled next to scaled (lesson 03).
``blend_triangle(weights_row, values, tokens=None, *, query=None)``
    The value vectors as a triangle (polygon) in 2-D and the output point inside it
    (lesson 05).
``causal_mask_pair(Q, K, tokens=None, *, scale=True)``
    The weights without and with a causal mask, side by side (lesson 07).
``scaling_curves(stats)``
    The three saturation numbers of :mod:`course_lib.scaling` against d_k (lesson 03).

Design notes
------------
* Figures are built with :class:`matplotlib.figure.Figure` directly, never through
  :mod:`matplotlib.pyplot`: nothing is registered with pyplot, so the inline backend never
  shows a figure a second time, and no figure has to be closed by hand.
* Importing this module changes no global state (no ``rcParams``, no seeds).
* Why the description and not the PNG carries the meaning in tests: strict nbval (0.11)
  compares every output mimetype except ``image/png``, ``image/jpeg``, widget views and
  metadata. The displayed HTML embeds the PNG (an ``<img>`` needs it inline to carry
  ``alt`` text in JupyterLab), so a notebook test should sanitise the base64 payload, see
  :data:`NBVAL_SANITIZE`; what remains compared is the description, three times (alt,
  caption, ``text/plain``). The PNG itself is byte-for-byte reproducible for a given
  matplotlib (its ``Software`` metadata is dropped).
* The colour map is ``cividis`` (designed to read the same for colour-blind viewers and in
  greyscale); the numbers in the cells switch between black and white by the cell's
  luminance so they stay legible on dark and light cells.
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import matplotlib as mpl
import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from numpy.typing import ArrayLike, NDArray

from .errors import AttentionInputError

__all__ = [
    "NBVAL_SANITIZE",
    "DescribedFigure",
    "attention_heatmap",
]

#: The colour map of every heatmap: perceptually uniform and colour-blind safe.
CMAP = "cividis"
#: Resolution of the PNGs shown in notebooks.
DPI = 100

#: nbval sanitize-file section that blanks the embedded PNG so that only the description
#: is compared (pass the file to ``pytest --nbval --nbval-sanitize-with FILE``).
NBVAL_SANITIZE = """[embedded figure PNG]
regex: data:image/png;base64,[A-Za-z0-9+/=]+
replace: data:image/png;base64,PNG
"""


# --------------------------------------------------------------------------------------
# the returned object
# --------------------------------------------------------------------------------------


@dataclass(eq=False)
class DescribedFigure:
    """A matplotlib figure together with its text description.

    Attributes
    ----------
    figure : matplotlib.figure.Figure
        The figure (not registered with pyplot).
    description : str
        Plain-language description generated from the same data as the figure.

    Examples
    --------
    >>> from course_lib import attention_weights, the_cat_sat
    >>> ex = the_cat_sat()
    >>> fig = attention_heatmap(attention_weights(ex.Q, ex.K), ex.tokens)
    >>> print(fig)  # doctest: +NORMALIZE_WHITESPACE
    A 3 by 3 heatmap of attention weights. Rows are the querying tokens the, cat, sat;
    columns are the attended tokens. Row values: the attends 0.40 to the, 0.20 to cat,
    0.40 to sat; cat attends 0.20, 0.40, 0.40; sat attends 0.25, 0.25, 0.50. Every row
    sums to 1; the strongest cell is sat attending to itself at 0.50.
    """

    figure: Figure
    description: str

    def png(self, dpi: float | None = None) -> bytes:
        """The figure as PNG bytes (reproducible: no software/time metadata)."""
        buf = io.BytesIO()
        self.figure.savefig(
            buf, format="png", dpi=dpi or DPI, bbox_inches="tight", metadata={"Software": None}
        )
        return buf.getvalue()

    def save(self, path: str | Path, dpi: float | None = None) -> Path:
        """Write the PNG to ``path`` and return the path."""
        p = Path(path)
        p.write_bytes(self.png(dpi))
        return p

    def html(self) -> str:
        """The ``<figure>`` shown in notebooks: image with alt text, visible caption."""
        data = base64.b64encode(self.png()).decode("ascii")
        text = html.escape(self.description, quote=True)
        return (
            '<figure class="course-figure" style="margin:0">'
            f'<img src="data:image/png;base64,{data}" alt="{text}"/>'
            f'<figcaption style="max-width:48em;font-size:0.9em">{text}</figcaption>'
            "</figure>"
        )

    def _repr_mimebundle_(
        self, include: Any = None, exclude: Any = None
    ) -> dict[str, str]:
        return {"text/html": self.html(), "text/plain": self.description}

    def __repr__(self) -> str:
        return self.description

    __str__ = __repr__


# --------------------------------------------------------------------------------------
# helpers (private)
# --------------------------------------------------------------------------------------


def _fmt(x: float, decimals: int) -> str:
    """Format a number for a cell or a description: fixed decimals, no '-0.00'."""
    if np.isneginf(x):
        return "−∞"
    if np.isposinf(x):
        return "+∞"
    s = f"{x:.{decimals}f}"
    if float(s) == 0.0:
        s = s.lstrip("-")
    return s


def _as_matrix(name: str, x: ArrayLike, *, allow_neginf: bool = False) -> NDArray[np.float64]:
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise AttentionInputError(
            f"{name} must be a 2-D array of numbers (got {type(x).__name__}: {exc})"
        ) from None
    if arr.ndim != 2 or 0 in arr.shape:
        raise AttentionInputError(
            f"{name} must be a non-empty 2-D array, shape (n_q, n_k) (got shape {arr.shape})"
        )
    bad = np.isnan(arr) | np.isposinf(arr) | (np.isneginf(arr) & (not allow_neginf))
    if bad.any():
        raise AttentionInputError(
            f"{name} must hold finite numbers"
            f"{' (or -inf for masked scores)' if allow_neginf else ''} "
            f"(got {arr[bad][0]} at index {tuple(int(i) for i in np.argwhere(bad)[0])})"
        )
    return arr


def _as_row(name: str, x: ArrayLike) -> NDArray[np.float64]:
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim != 1 or arr.size == 0:
        raise AttentionInputError(
            f"{name} must be one non-empty row of numbers, shape (n,) (got shape {arr.shape})"
        )
    if not np.isfinite(arr).all():
        raise AttentionInputError(f"{name} must hold finite numbers (got {arr.tolist()})")
    return arr


def _labels(name: str, tokens: Sequence[str] | None, n: int) -> list[str]:
    if tokens is None:
        return [f"token {i}" for i in range(n)]
    labels = [str(t) for t in tokens]
    if len(labels) != n:
        raise AttentionInputError(
            f"{name} must name each of the {n} rows/columns (got {len(labels)} labels: "
            f"{labels[:6]}{'...' if len(labels) > 6 else ''})"
        )
    return labels


def _text_colour(rgba: Sequence[float]) -> str:
    """Black on light cells, white on dark ones (relative luminance, WCAG formula)."""
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgba[:3]]
    lum = 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]
    # contrast against black (lum+0.05)/0.05 vs against white 1.05/(lum+0.05)
    return "black" if (lum + 0.05) / 0.05 >= 1.05 / (lum + 0.05) else "white"


def _join(items: Sequence[str]) -> str:
    return ", ".join(items)


def _short_list(items: Sequence[str], max_listed: int) -> str:
    if len(items) <= max_listed:
        return _join(items)
    return f"{items[0]}, {items[1]}, … {items[-1]} ({len(items)} in all)"


# --------------------------------------------------------------------------------------
# the heatmap
# --------------------------------------------------------------------------------------


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
    """Describe a heatmap in words (used by :func:`attention_heatmap` and the widgets).

    Lists every row's values when there are at most ``max_listed`` rows and columns,
    names the strongest cell (or cells, when tied at the shown precision) and says whether
    every row sums to 1.
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
    hidden = mask is not None and not mask.all()
    if n_q <= max_listed and n_k <= max_listed:
        row_texts = []
        for i in range(n_q):
            visible = [True] * n_k if mask is None else [bool(b) for b in mask[i]]
            cells = [_fmt(v[i, j], decimals) for j in range(n_k)]
            if i == 0:
                cells = [f"{c} {prep} {cols[j]}" for j, c in enumerate(cells)]
            cells = [c if visible[j] else f"{cols[j]} masked" for j, c in enumerate(cells)]
            listed = _join(cells)
            row_texts.append(f"{rows[i]} {verb} {listed}")
        parts.append("Row values: " + "; ".join(row_texts) + ".")
    else:
        finite = v[np.isfinite(v)]
        parts.append(
            f"Values range from {_fmt(finite.min(), decimals)} to {_fmt(finite.max(), decimals)}."
        )
    if hidden:
        n_hidden = int((~mask).sum())  # type: ignore[operator]
        causal = n_q == n_k and bool((mask == np.tril(np.ones((n_q, n_k), bool))).all())
        cells_word = f"{n_hidden} cell{'s' * (n_hidden != 1)}"
        parts.append(
            f"{cells_word} above the diagonal {'are' if n_hidden != 1 else 'is'} masked "
            "(causal mask): no token attends to a later one."
            if causal
            else f"{cells_word} {'are' if n_hidden != 1 else 'is'} masked."
        )
    ends = []
    if kind == "weights" and np.allclose(v.sum(axis=1), 1.0, atol=1e-6):
        ends.append("Every row sums to 1")
    elif kind == "weights":
        ends.append("The rows do not all sum to 1")
    shown = np.round(np.where(np.isfinite(v), v, -np.inf), decimals)
    top = shown.max()
    where = [tuple(int(x) for x in ij) for ij in np.argwhere(shown == top)]

    def cell(i: int, j: int) -> str:
        if same and i == j:
            return f"{rows[i]} {'attending to' if kind == 'weights' else 'scored against'} itself"
        return f"{rows[i]} {'attending to' if kind == 'weights' else 'scored against'} {cols[j]}"

    if len(where) == 1:
        ends.append(f"the strongest cell is {cell(*where[0])} at {_fmt(top, decimals)}")
    elif len(where) <= 4:
        ends.append(
            f"the strongest cells, tied at {_fmt(top, decimals)}, are "
            + _join([cell(i, j) for i, j in where])
        )
    else:
        ends.append(f"{len(where)} cells tie for the strongest value, {_fmt(top, decimals)}")
    text = "; ".join(ends)
    parts.append(text[0].upper() + text[1:] + ".")
    return " ".join(parts)


def attention_heatmap(
    weights: ArrayLike,
    tokens: Sequence[str] | None = None,
    *,
    key_tokens: Sequence[str] | None = None,
    title: str | None = None,
    decimals: int = 2,
    show_values: bool | None = None,
    kind: Literal["weights", "scores"] = "weights",
    mask: ArrayLike | None = None,
    ax: Any = None,
) -> DescribedFigure:
    """Draw an n_q × n_k table of weights (or scores) with token labels and cell values.

    Parameters
    ----------
    weights : array_like, shape (n_q, n_k)
        Attention weights (rows sum to 1) or, with ``kind="scores"``, scores. With a
        ``mask``, hidden cells may hold ``-inf``.
    tokens : sequence of str, length n_q, optional
        Row labels (the querying tokens); ``"token 0"``, ``"token 1"``, ... by default.
    key_tokens : sequence of str, length n_k, optional
        Column labels; the same as ``tokens`` by default.
    title : str, optional
        Figure title; a sensible one by default.
    decimals : int, default 2
        Decimals shown in the cells and the description.
    show_values : bool, optional
        Write the values in the cells; by default only when both sides are at most 12.
    kind : {"weights", "scores"}
        Words the description for weights ("the attends 0.40 to cat") or scores.
    mask : array_like of bool, shape (n_q, n_k), optional
        ``True`` = visible. Hidden cells are drawn hatched grey and described as masked.
    ax : matplotlib Axes, optional
        Draw into this axes (its figure is returned) instead of a new figure.

    Returns
    -------
    DescribedFigure

    Raises
    ------
    AttentionInputError
        If ``weights`` is not a non-empty 2-D finite array or labels do not match.

    Examples
    --------
    >>> attention_heatmap([[0.5, 0.5], [1.0, 0.0]], ["a", "b"]).description
    'A 2 by 2 heatmap of attention weights. Rows are the querying tokens a, b; columns are
    the attended tokens. Row values: a attends 0.50 to a, 0.50 to b; b attends 1.00, 0.00.
    Every row sums to 1; the strongest cell is b attending to a at 1.00.'
    """
    m = None if mask is None else np.asarray(mask, dtype=bool)
    v = _as_matrix("weights", weights, allow_neginf=m is not None)
    n_q, n_k = v.shape
    if m is not None and m.shape != v.shape:
        raise AttentionInputError(
            f"mask must have the weights' shape {v.shape} (got shape {m.shape})"
        )
    rows = _labels("tokens", tokens, n_q)
    cols = _labels("key_tokens", key_tokens, n_k) if key_tokens is not None else (
        rows if n_q == n_k else _labels("key_tokens", None, n_k)
    )
    if show_values is None:
        show_values = max(n_q, n_k) <= 12
    description = describe_heatmap(v, rows, cols, kind=kind, decimals=decimals, mask=m)

    if ax is None:
        side = min(0.62 * max(n_q, n_k) + 1.6, 9.0)
        fig = Figure(figsize=(side + 0.9, side), layout="constrained")
        ax = fig.add_subplot()
    else:
        fig = ax.figure
    shown = np.ma.masked_invalid(np.where(m, v, np.nan) if m is not None else v)
    if kind == "weights":
        vmin, vmax = 0.0, max(1.0, float(shown.max()))
    else:
        vmin, vmax = float(shown.min()), float(shown.max())
        if vmin == vmax:
            vmin, vmax = vmin - 1.0, vmax + 1.0
    cmap = mpl.colormaps[CMAP].with_extremes(bad="#d9d9d9")
    image = ax.imshow(shown, cmap=cmap, vmin=vmin, vmax=vmax, aspect="equal")
    if m is not None and not m.all():
        for i, j in np.argwhere(~m):
            ax.add_patch(
                Rectangle(
                    (j - 0.5, i - 0.5), 1, 1, fill=False, hatch="///", edgecolor="#8c8c8c",
                    linewidth=0,
                )
            )
    cbar = fig.colorbar(image, ax=ax, shrink=0.8)
    cbar.set_label("weight" if kind == "weights" else "score")
    label_size = 11 if max(n_q, n_k) <= 12 else 9
    step_k, step_q = max(1, n_k // 16), max(1, n_q // 16)
    ax.set_xticks(range(0, n_k, step_k), cols[::step_k], fontsize=label_size,
                  rotation=0 if n_k <= 8 else 90)
    ax.set_yticks(range(0, n_q, step_q), rows[::step_q], fontsize=label_size)
    ax.xaxis.tick_top()
    ax.xaxis.set_label_position("top")
    ax.set_xlabel("attended token (key)", fontsize=11)
    ax.set_ylabel("querying token (query)", fontsize=11)
    ax.tick_params(length=0)
    if show_values:
        size = 12 if max(n_q, n_k) <= 5 else (10 if max(n_q, n_k) <= 8 else 8)
        for i in range(n_q):
            for j in range(n_k):
                if m is not None and not m[i, j]:
                    ax.text(j, i, "masked", ha="center", va="center", fontsize=size - 2,
                            color="#404040")
                    continue
                colour = _text_colour(cmap(image.norm(v[i, j])))
                ax.text(j, i, _fmt(v[i, j], decimals), ha="center", va="center",
                        fontsize=size, color=colour)
    default_title = "attention weights" if kind == "weights" else "attention scores"
    ax.set_title(title if title is not None else default_title, fontsize=12, pad=10)
    return DescribedFigure(fig, description)
