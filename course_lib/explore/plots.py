"""Figures for the lessons, each with a text description generated from the same data.

Every function here returns a :class:`DescribedFigure`: the matplotlib figure, a
plain-language **description** of it with its numbers (which rows and columns, the values,
the strongest cell, what sums to 1) and a one-line **caption**, its takeaway. The
description is the image's ``alt`` text and the output's ``text/plain``: a screen-reader
user, a reader of the plain ``.ipynb`` and the notebook tests all get the numbers. The
caption is shown under the image; the two differ, so a screen reader never reads the same
long sentence twice. The sentences come from :mod:`course_lib.explore.describe`, the colours from
:mod:`course_lib.explore.style` (shared with the widgets).

Public API (names are stable; lessons may rely on them)
-------------------------------------------------------
``DescribedFigure``
    ``.figure`` (:class:`matplotlib.figure.Figure`), ``.description`` (str), ``.caption``
    (str), ``.svg() -> bytes``, ``.png(dpi=None) -> bytes``, ``.save(path)`` (SVG or PNG by
    the suffix). Displayed in Jupyter as an HTML ``<figure>``: the figure as SVG (sharp at
    any zoom and on HiDPI screens, about the size of a 100-dpi PNG) with the description as
    its ``alt`` text, and the caption underneath. Its ``text/plain`` (and ``repr``/``str``)
    is the description.
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
    The saturation numbers and gradient sizes of :mod:`course_lib.experiments.scaling`
    against d_k (lesson 03).
``tied_and_separate_keys(example=None)``
    The scores with keys tied to queries (K = Q) next to keys of their own (lesson 08).
``head_maps(weights, tokens, *, decimals=2)``
    Each head's map of attention weights, side by side on one scale (lesson 09).

``NBVAL_SANITIZE``
    The nbval sanitize section that blanks the embedded image (also in
    ``tests/nbval_sanitize.cfg``).

Design notes
------------
* Figures are built with :class:`matplotlib.figure.Figure` directly, never through
  :mod:`matplotlib.pyplot`: nothing is registered with pyplot, so the inline backend never
  shows a figure a second time, and no figure has to be closed by hand.
* Importing this module changes no global state (no ``rcParams``, no seeds), and does not
  import matplotlib: the first figure does (:func:`_figure`), so a lesson's setup cell
  stays quick (tested for every lesson's setup cell).
* Why the description and not the image carries the meaning in tests: strict nbval (0.11)
  compares every output mimetype except ``image/png``, ``image/jpeg``, widget views and
  metadata. The displayed HTML embeds the image (an ``<img>`` needs it inline to carry
  ``alt`` text in JupyterLab), so a notebook test should sanitise the base64 payload, see
  :data:`NBVAL_SANITIZE`; what remains compared is the description (alt, ``text/plain``)
  and the caption. The SVG and the PNG are byte-for-byte reproducible for a given
  matplotlib (no date or software metadata, a fixed id salt).
* Figures keep a white background, so they read the same in JupyterLab's light and dark
  themes. Heatmaps use :data:`course_lib.explore.style.CMAP` on the scale of
  :func:`course_lib.explore.style.heatmap_range`; the numbers in the cells are black or white by
  :func:`course_lib.explore.style.text_colour`, so they stay legible on dark and light cells.
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import AttentionInputError
from .describe import (
    _head_top,
    asymmetry,
    blend_takeaway,
    convex_hull,
    describe_blend,
    describe_heads,
    describe_heatmap,
    describe_histogram,
    describe_row,
    describe_softmax,
    format_number,
    heatmap_takeaway,
    row_takeaway,
)
from .style import (
    BLUE,
    CMAP,
    GREY,
    HATCH,
    MASKED,
    MASKED_TEXT,
    ORANGE,
    PAPER,
    PAPER_INK,
    VERMILION,
    heatmap_range,
)
from .style import text_colour as _text_colour

if TYPE_CHECKING:  # matplotlib is imported when the first figure is drawn (_figure)
    from matplotlib.figure import Figure

    from ..projections import EmbeddedExample

__all__ = [
    "NBVAL_SANITIZE",
    "DescribedFigure",
    "attention_heatmap",
    "blend_triangle",
    "budget_bars",
    "causal_mask_pair",
    "dot_product_histograms",
    "head_maps",
    "scaling_curves",
    "score_bars",
    "tied_and_separate_keys",
    "training_curves",
    "weight_bars",
]

#: Resolution of :meth:`DescribedFigure.png` (notebooks show SVG).
DPI = 100
# Reproducible SVG: text stays text (small, sharp), element ids come from a fixed salt.
_SVG_RC = {"svg.fonttype": "none", "svg.hashsalt": "attention-term-by-term"}

#: nbval sanitize-file section that blanks the embedded figure so that only the words are
#: compared (pass the file to ``pytest --nbval --nbval-sanitize-with FILE``).
NBVAL_SANITIZE = """[embedded figure]
regex: data:image/(png|svg\\+xml);base64,[A-Za-z0-9+/=]+
replace: data:image/\\1;base64,FIGURE
"""


# --------------------------------------------------------------------------------------
# the returned object
# --------------------------------------------------------------------------------------


def _figure(figsize: tuple[float, float], *, margins: dict[str, float] | None = None) -> Figure:
    """A new figure, laid out by matplotlib's constrained layout, or by fixed ``margins``.

    ``margins`` (``left``, ``right``, ``bottom``, ``top``, ``wspace``, ``hspace`` as
    :meth:`~matplotlib.figure.Figure.subplots_adjust` takes them) is for a figure whose
    labels are known to fit: constrained layout measures every label and tick of the figure
    once more before the draw, a second draw in all but name (in the offline site's Pyodide
    about a third of lesson 13's training figure, ``benchmarks/pyodide_cells.mjs``).

    matplotlib is imported here, when a lesson draws its first figure, not when the lesson's
    setup cell imports this module: that import (its figure and artist classes) is most of
    the setup cell's time, in the browser above all, and the lesson's first cells need none
    of it.
    """
    from matplotlib.figure import Figure

    if margins is None:
        return Figure(figsize=figsize, layout="constrained")
    fig = Figure(figsize=figsize)
    fig.subplots_adjust(**margins)
    return fig


@dataclass(eq=False)
class DescribedFigure:
    """A matplotlib figure together with its description (numbers) and caption (takeaway).

    Attributes
    ----------
    figure : matplotlib.figure.Figure
        The figure (not registered with pyplot).
    description : str
        Plain-language description generated from the same data as the figure: the
        image's ``alt`` text and the output's ``text/plain``.
    caption : str
        One sentence, the figure's takeaway, shown under it.

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
    >>> fig.caption
    'Every row sums to 1; the strongest cell is sat attending to itself at 0.50.'
    """

    figure: Figure
    description: str
    caption: str = ""

    def svg(self) -> bytes:
        """The figure as SVG bytes, text as text (reproducible: no date, fixed ids).

        Drawn once and kept: a constrained layout moves by a fraction of a point on each
        new draw, and a notebook must show the same bytes on every run. The figure is saved
        at its own size, not cropped (``bbox_inches="tight"``): every figure here is laid out
        to fit inside it (by constrained layout, or by its own margins), and cropping
        measured every label of the figure once more, one more draw: in the offline site's
        Pyodide that was 40% of lesson 13's training figure and 70% of lesson 16's head
        maps (``benchmarks/pyodide_cells.mjs``).
        """
        cached = self.__dict__.get("_svg")
        if cached is None:
            buf = io.BytesIO()
            import matplotlib as mpl

            with mpl.rc_context(_SVG_RC):
                self.figure.savefig(buf, format="svg", facecolor=PAPER,
                                    metadata={"Date": None, "Creator": None})
            cached = self.__dict__["_svg"] = buf.getvalue()
        return cached

    def png(self, dpi: float | None = None) -> bytes:
        """The figure as PNG bytes (reproducible: no software/time metadata)."""
        buf = io.BytesIO()
        self.figure.savefig(buf, format="png", dpi=dpi or DPI, bbox_inches="tight",
                            facecolor=PAPER, metadata={"Software": None})
        return buf.getvalue()

    def save(self, path: str | Path, dpi: float | None = None) -> Path:
        """Write the figure to ``path`` (SVG for a ``.svg`` suffix, else PNG); return it."""
        p = Path(path)
        p.write_bytes(self.svg() if p.suffix.lower() == ".svg" else self.png(dpi))
        return p

    def html(self) -> str:
        """The ``<figure>`` shown in notebooks: SVG with the description as alt, caption."""
        data = base64.b64encode(self.svg()).decode("ascii")
        alt = html.escape(self.description, quote=True)
        caption = html.escape(self.caption or self.description, quote=True)
        return (
            '<figure class="course-figure" style="margin:0">'
            f'<img src="data:image/svg+xml;base64,{data}" alt="{alt}" '
            'style="max-width:100%;height:auto"/>'
            '<figcaption style="max-width:48em;font-size:0.95em;line-height:1.5;'
            f'margin-top:0.25em">{caption}</figcaption></figure>'
        )

    def _repr_mimebundle_(
        self, include: Any = None, exclude: Any = None
    ) -> dict[str, str]:
        return {"text/html": self.html(), "text/plain": self.description}

    def __repr__(self) -> str:
        return self.description

    __str__ = __repr__


# --------------------------------------------------------------------------------------
# input checks (private)
# --------------------------------------------------------------------------------------


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


def _plain_axes(ax: Any) -> None:
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)


# --------------------------------------------------------------------------------------
# the heatmap
# --------------------------------------------------------------------------------------


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
    value_range: tuple[float, float] | None = None,
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
    value_range : (float, float), optional
        The colour scale; :func:`course_lib.explore.style.heatmap_range` by default.
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
    caption = heatmap_takeaway(v, rows, cols, kind=kind, decimals=decimals, mask=m)

    if ax is None:
        side = min(0.62 * max(n_q, n_k) + 1.6, 9.0)
        fig = _figure((side + 0.9, side))
        ax = fig.add_subplot()
    else:
        fig = ax.figure
    shown = np.ma.masked_invalid(np.where(m, v, np.nan) if m is not None else v)
    vmin, vmax = value_range if value_range is not None else heatmap_range(shown.filled(
        np.nan), kind)
    import matplotlib as mpl
    from matplotlib.patches import Rectangle

    cmap = mpl.colormaps[CMAP].with_extremes(bad=MASKED)
    image = ax.imshow(shown, cmap=cmap, vmin=vmin, vmax=vmax, aspect="equal")
    if m is not None and not m.all():
        for i, j in np.argwhere(~m):
            ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, hatch="///",
                                   edgecolor=HATCH, linewidth=0))
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
                            color=MASKED_TEXT)
                    continue
                colour = _text_colour(cmap(image.norm(v[i, j])))
                ax.text(j, i, format_number(v[i, j], decimals), ha="center", va="center",
                        fontsize=size, color=colour)
    default_title = "attention weights" if kind == "weights" else "attention scores"
    ax.set_title(title if title is not None else default_title, fontsize=12, pad=10)
    return DescribedFigure(fig, description, caption)


# --------------------------------------------------------------------------------------
# one row: scores, weights, the softmax budget
# --------------------------------------------------------------------------------------


def _bars(ax: Any, row: NDArray[np.float64], labels: list[str], colour: str, decimals: int,
          ylabel: str, title: str) -> None:
    x = np.arange(row.size)
    ax.bar(x, row, color=colour, edgecolor=PAPER_INK, linewidth=0.6)
    ax.axhline(0, color=PAPER_INK, linewidth=0.8)
    ax.set_xticks(x, labels, rotation=0 if row.size <= 8 else 90, fontsize=10)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=11)
    lo, hi = min(0.0, float(row.min())), max(0.0, float(row.max()))
    pad = 0.12 * (hi - lo or 1.0)
    ax.set_ylim(lo - (pad if lo < 0 else 0), hi + pad)
    if row.size <= 16:
        for xi, v in zip(x, row, strict=True):
            ax.text(xi, v + (pad * 0.15 if v >= 0 else -pad * 0.15), format_number(v, decimals),
                    ha="center", va="bottom" if v >= 0 else "top", fontsize=9)
    _plain_axes(ax)


def score_bars(
    scores_row: ArrayLike,
    tokens: Sequence[str] | None = None,
    *,
    query: str | None = None,
    title: str | None = None,
    decimals: int = 2,
) -> DescribedFigure:
    """One query's row of scores as bars, one bar per key (lessons 02 and 04).

    Examples
    --------
    >>> print(score_bars([1.0, 1.0, 2.0], ["the", "cat", "sat"], query="sat"))
    sat's scores: 1.00 against the, 1.00 against cat, 2.00 against sat. The largest is sat at
    2.00.
    """
    r = _as_row("scores_row", scores_row)
    labels = _labels("tokens", tokens, r.size)
    fig = _figure((max(3.5, 0.7 * r.size + 1.5), 3.0))
    _bars(fig.add_subplot(), r, labels, BLUE, decimals, "score",
          title or (f"scores of {query}'s query" if query else "scores"))
    return DescribedFigure(
        fig, describe_row(r, labels, kind="scores", query=query, decimals=decimals),
        row_takeaway(r, labels, kind="scores", query=query, decimals=decimals))


def weight_bars(
    weights_row: ArrayLike,
    tokens: Sequence[str] | None = None,
    *,
    query: str | None = None,
    title: str | None = None,
    decimals: int = 2,
) -> DescribedFigure:
    """One query's row of attention weights as bars that share a budget of 1 (lesson 04).

    Examples
    --------
    >>> weight_bars([0.4, 0.2, 0.4], ["the", "cat", "sat"], query="the").description[:40]
    "the's attention weights: 0.40 to the, 0."
    """
    r = _as_row("weights_row", weights_row)
    labels = _labels("tokens", tokens, r.size)
    fig = _figure((max(3.5, 0.7 * r.size + 1.5), 3.0))
    ax = fig.add_subplot()
    _bars(ax, r, labels, ORANGE, decimals, "weight",
          title or (f"{query}'s attention weights" if query else "attention weights"))
    ax.set_ylim(0, max(1.05, float(r.max()) * 1.1))
    return DescribedFigure(
        fig, describe_row(r, labels, kind="weights", query=query, decimals=decimals),
        row_takeaway(r, labels, kind="weights", query=query, decimals=decimals))


def budget_bars(
    scores_row: ArrayLike,
    tokens: Sequence[str] | None = None,
    *,
    query: str | None = None,
    temperature: float = 1.0,
    decimals: int = 2,
) -> DescribedFigure:
    """A row of scores next to the weights softmax makes of them (lessons 03 and 04).

    Examples
    --------
    >>> fig = budget_bars([1.0, 1.0, 2.0], ["the", "cat", "sat"], query="sat")
    >>> print(fig)
    Softmax turns sat's scores 1.00, 1.00, 2.00 (for the, cat, sat) into weights 0.21, 0.21,
    0.58 at temperature 1: sat's attention weights: 0.21 to the, 0.21 to cat, 0.58 to sat.
    They sum to 1.00; the largest is sat at 0.58.
    >>> fig.caption
    "sat's weights sum to 1.00; the largest is sat at 0.58."
    """
    from ..attention import softmax

    r = _as_row("scores_row", scores_row)
    labels = _labels("tokens", tokens, r.size)
    w = softmax(r, temperature=temperature)
    fig = _figure((2 * max(3.2, 0.6 * r.size + 1.2), 3.0))
    ax1, ax2 = fig.subplots(1, 2)
    _bars(ax1, r, labels, BLUE, decimals, "score", "scores")
    t = f"{temperature:g}"
    _bars(ax2, w, labels, ORANGE, decimals, "weight", f"weights (softmax, T = {t}), sum 1")
    ax2.set_ylim(0, 1.1)
    return DescribedFigure(
        fig, describe_softmax(r, w, labels, query=query, temperature=t, decimals=decimals),
        row_takeaway(w, labels, kind="weights", query=query, decimals=decimals))


# --------------------------------------------------------------------------------------
# lesson 03: the scaling
# --------------------------------------------------------------------------------------


def dot_product_histograms(
    d_k: int,
    *,
    n_queries: int = 256,
    n_keys: int = 16,
    rng: np.random.Generator | None = None,
    seed: int = 0,
) -> DescribedFigure:
    """Histograms of q·k for random unit-variance vectors, unscaled and scaled (lesson 03).

    Both panels use the same queries and keys and share one x-axis, so the only difference
    is the division by :math:`\\sqrt{d_k}`: the scaled scores are a narrow spike in the
    middle of the unscaled ones' spread.

    Examples
    --------
    >>> fig = dot_product_histograms(64)
    >>> print(fig.description)  # doctest: +ELLIPSIS
    Two histograms of q·k for d_k = 64 on one x-axis, random unit-variance queries and keys
    (256 × 16 scores each). Unscaled: 4096 scores with standard deviation 8.2; ... Scaled by
    1/sqrt(64) = 1/8: 4096 scores with standard deviation 1.03; ...
    >>> fig.caption
    'Unscaled, q·k spreads 8 times as wide as scaled (standard deviation 8.2 against 1.03).'
    """
    from ..experiments.scaling import scaling_stats

    if rng is not None:
        seed = int(rng.integers(2**32))
    raw = scaling_stats(d_k, scale=False, n_queries=n_queries, n_keys=n_keys, seed=seed)
    ok = scaling_stats(d_k, scale=True, n_queries=n_queries, n_keys=n_keys, seed=seed)
    fig = _figure((8.0, 3.0))
    axes = fig.subplots(1, 2, sharex=True)
    root = np.sqrt(d_k)
    for ax, st, colour, name in (
        (axes[0], raw, VERMILION, "unscaled q·k"),
        (axes[1], ok, BLUE, f"q·k / sqrt({d_k})"),
    ):
        ax.hist(st.dots, bins=40, color=colour, edgecolor=PAPER_INK, linewidth=0.3)
        ax.set_title(f"{name}: std {st.qk_std:.3g}", fontsize=11)
        ax.set_xlabel("score (same axis in both panels)")
        ax.set_ylabel("count")
        _plain_axes(ax)
    axes[1].tick_params(labelbottom=True)
    description = (
        f"Two histograms of q·k for d_k = {d_k} on one x-axis, random unit-variance queries "
        f"and keys ({n_queries} × {n_keys} scores each). "
        + describe_histogram(raw.dots, "Unscaled")
        + ". "
        + describe_histogram(ok.dots, f"Scaled by 1/sqrt({d_k}) = 1/{root:.3g}")
        + "."
    )
    caption = (f"Unscaled, q·k spreads {raw.qk_std / ok.qk_std:.3g} times as wide as scaled "
               f"(standard deviation {raw.qk_std:.3g} against {ok.qk_std:.3g}).")
    return DescribedFigure(fig, description, caption)


def _gradient_comparison(raw: Sequence[Any], ok: Sequence[Any]) -> str:
    """Where the unscaled |dw/dq| is above the scaled one and where below, from the numbers."""
    above = [s.d_k for s, t in zip(raw, ok, strict=True)
             if s.median_query_gradient_norm > t.median_query_gradient_norm]
    below = [s.d_k for s, t in zip(raw, ok, strict=True)
             if s.median_query_gradient_norm <= t.median_query_gradient_norm]
    parts = []
    if above:
        parts.append(f"larger unscaled than scaled at d_k = {', '.join(map(str, above))}")
    if below:
        smallest = min(raw, key=lambda s: s.median_query_gradient_norm)
        parts.append(f"smaller at d_k = {', '.join(map(str, below))} (unscaled, down to "
                     f"{smallest.median_query_gradient_norm:.2g} at d_k = {smallest.d_k})")
    return "The gradient that reaches the query, |dw/dq|, is " + "; ".join(parts)


def scaling_curves(sweep: dict[str, list[Any]]) -> DescribedFigure:
    r"""Saturation and gradient sizes against d_k, unscaled and scaled (lesson 03).

    Four panels: median max weight, median row entropy, the softmax Jacobian's size
    :math:`\lVert\partial w/\partial s\rVert` (``s`` is the softmax's input: the raw
    scores unscaled, the scaled scores scaled) and :math:`\lVert\partial w/\partial
    q\rVert`, the same variable in both and the one that reaches :math:`W_Q`. Caption and
    description say what the numbers show and nothing else: the caption where softmax
    saturates, the description also on which ``d_k`` the unscaled query gradient is above
    or below the scaled one.

    Parameters
    ----------
    sweep : dict
        The result of :func:`course_lib.experiments.scaling.scaling_sweep`.

    Examples
    --------
    >>> from course_lib.experiments.scaling import scaling_sweep
    >>> fig = scaling_curves(scaling_sweep([2, 64, 4096]))
    >>> print(fig)  # doctest: +ELLIPSIS
    Four line charts against d_k = 2, 64, 4096, unscaled (dashed) and scaled (solid).
    Median max weight: unscaled 0.28, 0.91, 1.00; scaled 0.21, 0.22, 0.22. ... The
    gradient that reaches the query, |dw/dq|, is larger unscaled than scaled at d_k = 2,
    64; smaller at d_k = 4096 (unscaled, down to 5.8e-08 at d_k = 4096).
    >>> print(fig.caption)
    Unscaled, softmax saturates as d_k grows (median max weight 0.28 at d_k = 2, 1.00 at
    d_k = 4096); scaled, it stays between 0.21 and 0.22.
    """
    try:
        raw, ok = sweep["unscaled"], sweep["scaled"]
    except (KeyError, TypeError):
        raise AttentionInputError(
            "sweep must be the dict returned by scaling_sweep(), with keys 'scaled' and "
            f"'unscaled' (got {type(sweep).__name__})"
        ) from None
    d_ks = [s.d_k for s in ok]
    from matplotlib import ticker

    fig = _figure((12.0, 3.0))
    axes = fig.subplots(1, 4)
    rows = (
        ("median max weight", "median_max_weight", "{:.2f}", False),
        ("median row entropy (nats)", "median_entropy", "{:.2f}", False),
        ("softmax-Jacobian size |dw/ds|", "median_jacobian_norm", "{:.2g}", True),
        ("query gradient |dw/dq|", "median_query_gradient_norm", "{:.2g}", True),
    )
    parts = [
        f"Four line charts against d_k = {', '.join(str(d) for d in d_ks)}, unscaled "
        "(dashed) and scaled (solid)."
    ]
    for ax, (name, attr, fmt, log) in zip(axes, rows, strict=True):
        r = [getattr(s, attr) for s in raw]
        o = [getattr(s, attr) for s in ok]
        ax.plot(d_ks, r, "--o", color=VERMILION, label="unscaled", markersize=4)
        ax.plot(d_ks, o, "-s", color=BLUE, label="scaled", markersize=4)
        ax.set_xscale("log", base=2)
        # ticks where the data is (2, 8, 32, ...), not at matplotlib's own powers of 2
        ax.set_xticks(d_ks, [str(d) for d in d_ks])
        ax.xaxis.set_minor_locator(ticker.NullLocator())
        if log:
            ax.set_yscale("log")
        ax.set_xlabel("d_k")
        ax.set_title(name, fontsize=10)
        _plain_axes(ax)
        parts.append(
            f"{name[0].upper()}{name[1:]}: unscaled {', '.join(fmt.format(x) for x in r)}; "
            f"scaled {', '.join(fmt.format(x) for x in o)}."
        )
        if attr == "median_jacobian_norm":
            parts.append("(s is what softmax is given: QK^T unscaled, QK^T/sqrt(d_k) scaled, "
                         "so these two lines are derivatives by different variables.)")
    axes[0].legend(frameon=False)
    top_raw = [s.median_max_weight for s in raw]
    top_ok = [s.median_max_weight for s in ok]
    caption = (
        f"Unscaled, softmax saturates as d_k grows (median max weight {top_raw[0]:.2f} at "
        f"d_k = {d_ks[0]}, {top_raw[-1]:.2f} at d_k = {d_ks[-1]}); scaled, it stays between "
        f"{min(top_ok):.2f} and {max(top_ok):.2f}."
    )
    parts.append(f"{_gradient_comparison(raw, ok)}.")
    return DescribedFigure(fig, " ".join(parts), caption)


def _window_means(x: NDArray[np.float64], window: int) -> NDArray[np.float64]:
    """Means of consecutive blocks of ``window`` steps (the per-batch numbers are noisy)."""
    n = len(x) // window
    return x[: n * window].reshape(n, window).mean(axis=1)


def training_curves(runs: Sequence[Any], *, window: int = 30) -> DescribedFigure:
    r"""Accuracy, attention entropy, rows stuck and how far the scores move, over training.

    One row of four panels per ``d_k``, scaled (solid) and unscaled (dashed) runs drawn
    together, each point the mean over ``window`` steps (lesson 13). A row is *stuck* when
    its gradient :math:`\lVert\partial L/\partial S\rVert` is below
    :data:`course_lib.experiments.training.NEAR_ZERO` while its largest weight is on a wrong
    key; the last panel is the mean :math:`|\Delta S|` that one step moved the scores. The
    description gives, for every run, each quantity's mean over its first and its last
    ``window`` steps; the caption the held-out accuracies.

    Parameters
    ----------
    runs : sequence of :class:`course_lib.experiments.training.TrainingRun`
        Pairs of runs (scaled and unscaled) for one or more ``d_k``, same task, loss and
        number of steps.
    window : int, default 30

    Examples
    --------
    >>> from course_lib.experiments.training import train
    >>> runs = [train(8, scale=s, steps=40) for s in (True, False)]
    >>> fig = training_curves(runs, window=20)
    >>> print(fig)  # doctest: +ELLIPSIS
    Training curves, 40 steps of Adam, loss output_error, task match; per run, the mean
    over the first 20 steps -> the last 20. d_k = 8: accuracy scaled ... -> ..., unscaled ...
    """
    from ..experiments.training import TASKS

    runs = list(runs)
    if not runs or not all(hasattr(r, "stuck") for r in runs):
        raise AttentionInputError(
            "runs must be a non-empty list of TrainingRun (from "
            "course_lib.experiments.training.train) "
            f"(got {type(runs).__name__} of {len(runs)})")
    steps = {r.steps for r in runs}
    if len(steps) != 1 or min(steps) < 2 * window:
        raise AttentionInputError(
            f"runs must all have the same number of steps, at least 2 * window = {2 * window} "
            f"(got {sorted(steps)})")
    kinds = {(r.task, r.loss_kind, r.optimiser) for r in runs}
    if len(kinds) != 1:
        raise AttentionInputError(
            f"runs must share one task, loss and optimiser (got {sorted(kinds)})")
    [(task, loss, optimiser)] = kinds
    d_ks = sorted({r.d_k for r in runs})
    height = 2.6 * len(d_ks)
    # Margins in inches (a title above each panel, "step" below, tick labels of at most
    # four characters on the left): the labels fit, so no layout pass measures them.
    fig = _figure((12.0, height), margins={
        "left": 0.5 / 12.0, "right": 1 - 0.1 / 12.0, "bottom": 0.45 / height,
        "top": 1 - 0.3 / height, "wspace": 0.28, "hspace": 0.75 / 2.6})
    axes = np.atleast_2d(fig.subplots(len(d_ks), 4, squeeze=False))
    panels = (("accuracy", "accuracy"), ("attention entropy (nats)", "entropy"),
              ("rows stuck", "stuck"), ("score move per step", "score_move"))
    n_steps = runs[0].steps
    parts = [f"Training curves, {n_steps} steps of {'Adam' if optimiser == 'adam' else 'SGD'}, "
             f"loss {loss}, task {task}; per run, the mean over the first {window} steps -> "
             f"the last {window}."]
    x = (np.arange(n_steps // window) + 0.5) * window
    for row, d_k in enumerate(d_ks):
        pair = {r.scale: r for r in runs if r.d_k == d_k}
        words = []
        for col, (name, attr) in enumerate(panels):
            ax = axes[row, col]
            bits = []
            for scale, style, colour, label in ((True, "-", BLUE, "scaled"),
                                                (False, "--", VERMILION, "unscaled")):
                if scale not in pair:
                    continue
                values = getattr(pair[scale], attr)
                ax.plot(x, _window_means(values, window), style, color=colour, label=label)
                first, last = values[:window].mean(), values[-window:].mean()
                bits.append(f"{label} {first:.2f} -> {last:.2f}")
            ax.set_title(f"{name}, d_k = {d_k}", fontsize=10)
            ax.set_xlabel("step")
            if attr == "entropy":
                ax.axhline(np.log(TASKS[task]), color=PAPER_INK, linewidth=0.6, linestyle=":")
            _plain_axes(ax)
            words.append(f"{name} {', '.join(bits)}")
        parts.append(f"d_k = {d_k}: {'; '.join(words)}.")
    axes[0, 0].legend(frameon=False)
    parts.append(f"The dotted line in the entropy panels is log {TASKS[task]} = "
                 f"{np.log(TASKS[task]):.2f} nats, weights spread evenly over the "
                 f"{TASKS[task]} keys. A row is stuck when its gradient through softmax is "
                 "near 0 while its largest weight is on a wrong key.")
    finals = [f"d_k = {r.d_k} {'scaled' if r.scale else 'unscaled'} {r.final_accuracy:.2f}"
              for r in sorted(runs, key=lambda r: (r.d_k, not r.scale))]
    caption = "Held-out accuracy after training: " + ", ".join(finals) + "."
    return DescribedFigure(fig, " ".join(parts), caption)


# --------------------------------------------------------------------------------------
# lesson 05: the blend
# --------------------------------------------------------------------------------------


def blend_triangle(
    weights_row: ArrayLike,
    values: ArrayLike,
    tokens: Sequence[str] | None = None,
    *,
    query: str | None = None,
    decimals: int = 2,
) -> DescribedFigure:
    """The value vectors as a triangle (their convex hull) and the output point (lesson 05).

    Parameters
    ----------
    weights_row : array_like, shape (n,)
        One row of attention weights.
    values : array_like, shape (n, 2)
        The value vectors; 2-D so they can be drawn.
    tokens : sequence of str, optional
    query : str, optional
        Whose output this is, for the description.

    Examples
    --------
    >>> from course_lib import the_cat_sat
    >>> ex = the_cat_sat()
    >>> fig = blend_triangle([0.25, 0.25, 0.5], ex.V, ex.tokens, query="sat")
    >>> print(fig)
    The value vectors are the corners of a triangle: the [1.00, 0.00], cat [0.00, 2.00], sat
    [2.00, 2.00]. With weights 0.25, 0.25, 0.50, the output for sat is 0.25·[1.00, 0.00] +
    0.25·[0.00, 2.00] + 0.50·[2.00, 2.00] = [1.25, 1.50], a point inside the triangle of the
    values: the weights are non-negative and sum to 1, so the output is a weighted average.
    >>> fig.caption
    'The output for sat, [1.25, 1.50], lies inside the triangle of the values.'
    """
    w = _as_row("weights_row", weights_row)
    v = _as_matrix("values", values)
    if v.shape != (w.size, 2):
        raise AttentionInputError(
            f"values must have one 2-D vector per weight, shape ({w.size}, 2) (got shape "
            f"{v.shape}); the blend plot draws d_v = 2 only"
        )
    labels = _labels("tokens", tokens, w.size)
    out = w @ v
    fig = _figure((4.6, 4.2))
    ax = fig.add_subplot()
    hull = convex_hull(v)
    if len(hull) >= 3:
        ax.fill(hull[:, 0], hull[:, 1], color=BLUE, alpha=0.12, zorder=0)
        closed = np.vstack([hull, hull[:1]])
        ax.plot(closed[:, 0], closed[:, 1], color=BLUE, linewidth=1.2, zorder=1)
    for (x, y), t, a in zip(v, labels, w, strict=True):
        ax.plot([x, out[0]], [y, out[1]], color=GREY, linewidth=0.8 + 4 * max(a, 0),
                alpha=0.6, zorder=1)
        ax.scatter([x], [y], s=60, color=BLUE, edgecolor=PAPER_INK, zorder=3)
        ax.annotate(f"v_{t} {format_number(a, decimals)}", (x, y), textcoords="offset points",
                    xytext=(6, 6), fontsize=10)
    ax.scatter([out[0]], [out[1]], s=140, marker="*", color=ORANGE, edgecolor=PAPER_INK,
               zorder=4)
    ax.annotate(f"output [{format_number(out[0], decimals)}, {format_number(out[1], decimals)}]",
                out, textcoords="offset points", xytext=(8, -14), fontsize=10, color=PAPER_INK)
    pts = np.vstack([v, out])
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    pad = 0.25 * max(float((hi - lo).max()), 1.0)
    ax.set_xlim(lo[0] - pad, hi[0] + pad * 2)
    ax.set_ylim(lo[1] - pad, hi[1] + pad)
    ax.set_aspect("equal")
    ax.set_xlabel("value dimension 0")
    ax.set_ylabel("value dimension 1")
    ax.set_title(f"the output for {query}: a blend of the values" if query else "the blend",
                 fontsize=11)
    _plain_axes(ax)
    return DescribedFigure(fig, describe_blend(w, v, labels, query=query, decimals=decimals),
                           blend_takeaway(w, v, labels, query=query, decimals=decimals))


# --------------------------------------------------------------------------------------
# lesson 07: the causal mask
# --------------------------------------------------------------------------------------


def causal_mask_pair(
    Q: ArrayLike,
    K: ArrayLike,
    tokens: Sequence[str] | None = None,
    *,
    scale: bool = True,
    decimals: int = 2,
) -> DescribedFigure:
    """The attention weights without and with a causal mask, side by side (lesson 07).

    Both heatmaps share one colour scale, so a colour means the same weight in both.

    Examples
    --------
    >>> from course_lib import the_cat_sat
    >>> ex = the_cat_sat()
    >>> fig = causal_mask_pair(ex.Q, ex.K, ex.tokens)
    >>> print(fig)  # doctest: +ELLIPSIS
    Two 3 by 3 heatmaps of attention weights, before and after a causal mask. Before: ...
    the attends 0.40 to the, 0.20 to cat, 0.40 to sat; ... After: ... the attends 1.00 to
    the, cat masked, sat masked; cat attends 0.33, 0.67, sat masked; ...
    >>> fig.caption
    'After the mask no token attends to a later one, and every row still sums to 1.'
    """
    from ..attention import attention_weights, causal_mask

    before = attention_weights(Q, K, scale=scale)
    n = before.shape[-1]
    if before.ndim != 2 or before.shape[0] != n:
        raise AttentionInputError(
            f"causal_mask_pair needs one sequence: Q and K with the same number of rows, "
            f"shape (n, d_k) (got weights of shape {before.shape})"
        )
    m = causal_mask(n)
    after = attention_weights(Q, K, mask=m, scale=scale)
    labels = _labels("tokens", tokens, n)
    side = min(0.62 * n + 1.6, 7.0)
    fig = _figure((2 * side + 1.8, side))
    ax1, ax2 = fig.subplots(1, 2)
    shared = heatmap_range(np.concatenate([before, after]), "weights")
    d1 = attention_heatmap(before, labels, ax=ax1, title="before: no mask", decimals=decimals,
                           value_range=shared)
    d2 = attention_heatmap(after, labels, ax=ax2, mask=m, title="after: causal mask",
                           decimals=decimals, value_range=shared)
    strip = f"A {n} by {n} heatmap of attention weights. "
    sums = "every row still sums to 1" if np.allclose(after.sum(axis=1), 1.0) else (
        "the rows do not all sum to 1")
    return DescribedFigure(
        fig,
        f"Two {n} by {n} heatmaps of attention weights, before and after a causal mask. "
        f"Before: {d1.description.removeprefix(strip)} "
        f"After: {d2.description.removeprefix(strip)}",
        f"After the mask no token attends to a later one, and {sums}.",
    )


def head_maps(
    weights: ArrayLike, tokens: Sequence[str], *, decimals: int = 2
) -> DescribedFigure:
    """Figure: each head's map of attention weights, side by side, on one colour scale.

    Parameters
    ----------
    weights : array_like, shape (h, n, n)
    tokens : sequence of str, length n

    Returns
    -------
    course_lib.explore.plots.DescribedFigure

    Examples
    --------
    >>> from course_lib.heads import heads_example, multi_head_attention
    >>> ex = heads_example()
    >>> _, w = multi_head_attention(ex.X, ex.W_Q, ex.W_K, ex.W_V, ex.W_O, h=2)
    >>> head_maps(w, ex.tokens).caption
    "Two heads, two patterns: in head 0 'sat' → 'cat'; in head 1 every token looks most at 'the'."
    """
    description = describe_heads(weights, tokens, decimals)
    w = np.asarray(weights, dtype=np.float64)
    h, n, _ = w.shape
    side = min(0.62 * n + 1.6, 6.0)
    fig = _figure((h * side + 0.9 * h, side))
    axes = np.atleast_1d(fig.subplots(1, h))
    for i, ax in enumerate(axes):
        attention_heatmap(w[i], list(tokens), ax=ax, title=f"head {i}", decimals=decimals,
                          value_range=(0.0, 1.0))
    tops = [_head_top(w[i], tokens, decimals) for i in range(h)]
    if h == 2:
        first = tops[0]
        if "→" in first:  # name the row that differs most from looking at itself
            first = next((p for p in first.split(", ")
                          if p.split(" → ")[0] != p.split(" → ")[1]
                          and p.split(" → ")[1] != "all evenly"), first)
        caption = f"Two heads, two patterns: in head 0 {first}; in head 1 {tops[1]}."
    elif h == 1:
        caption = f"One head, one map: {tops[0]}."
    else:
        caption = f"{h} heads, {len(set(tops))} different patterns of where tokens look most."
    return DescribedFigure(fig, description, caption)


def tied_and_separate_keys(example: EmbeddedExample | None = None) -> DescribedFigure:
    """Figure: the score table with keys tied to queries next to keys of their own.

    Left, ``W_K = W_Q`` (so ``K = Q``, as in lessons 01-07): the table is symmetric and
    each token's diagonal entry is its own squared length. Right, ``K = X W_K``.

    Returns
    -------
    course_lib.explore.plots.DescribedFigure

    Examples
    --------
    >>> print(tied_and_separate_keys())  # doctest: +ELLIPSIS, +NORMALIZE_WHITESPACE
    Two 3 by 3 heatmaps of scores QKᵀ. Left, keys tied to queries (W_K = W_Q, so K = Q): ...
    The table is symmetric: ... Right, keys with their own matrix W_K: ... sat scores
    1.00, 2.00, 1.00. ... The table is not symmetric: the's query · cat's key = 1.00, but
    cat's query · the's key = 0.00; ...
    """
    from ..attention import scores
    from ..projections import embedded_example, project

    ex = embedded_example() if example is None else example
    Q, K, _ = project(ex.X, ex.W_Q, ex.W_K, ex.W_V)
    tied, separate = scores(Q, Q), scores(Q, K)
    n = len(ex.tokens)
    side = min(0.62 * n + 1.6, 7.0)
    fig = _figure((2 * side + 1.8, side))
    ax1, ax2 = fig.subplots(1, 2)
    shared = heatmap_range(np.concatenate([tied, separate]), "scores")
    d1 = attention_heatmap(tied, ex.tokens, ax=ax1, kind="scores", value_range=shared,
                           title="K = Q (W_K = W_Q)")
    d2 = attention_heatmap(separate, ex.tokens, ax=ax2, kind="scores", value_range=shared,
                           title="K = X W_K (its own matrix)")
    strip = f"A {n} by {n} heatmap of attention scores. "
    description = (
        f"Two {n} by {n} heatmaps of scores QKᵀ. Left, keys tied to queries (W_K = W_Q, so "
        f"K = Q): {d1.description.removeprefix(strip)} {asymmetry(tied, ex.tokens)} "
        f"Right, keys with their own matrix W_K: {d2.description.removeprefix(strip)} "
        f"{asymmetry(separate, ex.tokens)}"
    )
    last, top = ex.tokens[-1], ex.tokens[int(np.argmax(separate[-1]))]
    where = "itself" if top == last else f"{top}, not on itself"
    caption = ("With K = Q the table mirrors across its diagonal; with its own W_K "
               + ("it does not" if asymmetry(separate, ex.tokens).startswith("The table is not")
                  else "it happens to mirror too")
               + f", and {last} scores highest on {where}.")
    return DescribedFigure(fig, description, caption)
