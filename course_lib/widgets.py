"""Interactive explorers for the lessons, built on ipywidgets and testable without a browser.

Each builder returns an :class:`Explorer`. Its update logic is a plain function of the
control values (``explorer.compute(**values)`` returns a :class:`View`), so a notebook cell
or a test can set a control in Python and read the result:

>>> from course_lib.widgets import softmax_budget
>>> budget = softmax_budget()
>>> budget.set(sat=3.0)  # doctest: +ELLIPSIS
"Softmax turns sat's scores 1.00, 1.00, 3.00 ... the largest is sat at 0.79."
>>> float(budget.numbers["weights"].sum().round(6))
1.0

Public API (names are stable; lessons may rely on them)
-------------------------------------------------------
``Explorer``
    ``.controls`` (dict name -> ipywidgets control), ``.widget`` (the ipywidgets
    ``VBox`` to display), ``.view`` (the current :class:`View`), ``.description`` (str),
    ``.numbers`` (dict), ``.values()`` (dict of control values), ``.compute(**values)``
    (pure: a :class:`View` for those values, nothing changes), ``.set(**values) -> str``
    (set several controls at once, redraw once, return the new description). Displaying
    an explorer shows its widget; its ``text/plain`` is the description, so a stored
    notebook output (and strict nbval) carries the numbers in words.
``View``
    ``html`` (what the browser shows: an HTML table or inline SVG plus the description),
    ``description`` (str), ``numbers`` (dict of floats/arrays).
``scores_explorer(Q=None, K=None, tokens=None, *, token=None, vector="query")``
    Lesson 02. Controls ``token`` (Dropdown), ``vector`` ("query"/"key"), ``x0``, ``x1``
    (…up to ``x3``: the first components of the chosen vector). Shows the score table
    :math:`QK^T` as a heatmap with the moved row (or column) outlined. Numbers:
    ``scores`` (n × n), ``row`` (the moved row or column), ``vector``.
``scaling_explorer(*, d_k=64, scaled=False, n_queries=256, n_keys=16, seed=0)``
    Lesson 03. Controls ``d_k`` (2 … 4096) and ``scaled`` (Checkbox). Shows histograms of
    q·k and of each row's largest weight, and the numbers ``qk_std``,
    ``median_max_weight``, ``median_entropy``, ``median_jacobian_norm``.
``temperature_explorer(scores_row=None, tokens=None, *, query=None, temperature=1.0)``
    Lesson 03. Control ``temperature`` (0.1 … 30, log scale). Numbers: ``weights``,
    ``max_weight``, ``entropy``, ``equivalent_d_k`` (= T², the d_k whose scaling is T).
``softmax_budget(scores_row=None, tokens=None, *, query=None)``
    Lesson 04. One slider per token, named by the token (``the``, ``cat``, ``sat``).
    Numbers: ``scores``, ``weights``, ``sum``.
``blend_explorer(weights_row=None, values=None, tokens=None, *, query=None)``
    Lesson 05. Controls ``weight <token>`` (shares, normalised to sum 1), ``token``
    (whose value vector to move), ``vx``, ``vy``. Numbers: ``weights``, ``values``,
    ``output``, ``inside``.
``step_explorer(Q=None, K=None, V=None, tokens=None, *, token="sat", step="scores")``
    Lessons 01 and 06. Controls ``token`` (Dropdown: whose query row) and ``step``
    (ToggleButtons: ``"scores"``, ``"scaled"``, ``"softmax"``, ``"output"``). Shows the
    whole table at that step (scores, scaled scores, weights, or the outputs) with the
    token's row outlined. Numbers: ``step`` (1 … 4), ``table``, ``row``, ``d_k``.
``causal_mask_explorer(Q=None, K=None, tokens=None, *, masked=False)``
    Lesson 07. Control ``masked`` (Checkbox). Numbers: ``weights``, ``mask``.

Renderers (public, not in ``__all__``): ``heatmap_html``, ``bars_svg``, ``histogram_svg``,
``blend_svg``, ``vectors_svg`` return HTML/SVG strings; ``MAX_TABLE`` (24) is the size above
which a heatmap is sent as a small PNG (built with numpy and zlib) instead of a table.

Rendering and speed
-------------------
A slider move must feel instant, so the explorers do not redraw matplotlib figures: the
heatmap is an HTML table coloured with the same ``cividis`` colour map as
:mod:`course_lib.plots`, bars, histograms and the triangle are small inline SVGs, and one
update sends a single ``HTML.value`` change to the browser. ``benchmarks/widget_latency.py``
measures this against ``ipywidgets.interact`` redrawing a matplotlib figure. Tables and
SVGs carry the description (``aria-label``, caption, ``aria-live``), so screen readers hear
every update.
"""

from __future__ import annotations

import base64
import html
import struct
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import ipywidgets as W
import matplotlib as mpl
import numpy as np
from numpy.typing import ArrayLike, NDArray

from .attention import (
    attention,
    attention_weights,
    causal_mask,
    row_entropy,
    scaled_scores,
    scores,
    softmax,
)
from .errors import AttentionInputError
from .examples import the_cat_sat
from .plots import (
    BLUE,
    CMAP,
    GREY,
    ORANGE,
    VERMILION,
    _fmt,
    _hull,
    describe_blend,
    describe_heatmap,
    describe_histogram,
    describe_row,
    inside_hull,
)
from .scaling import D_KS, ScalingStats, scaling_stats

__all__ = [
    "Explorer",
    "View",
    "blend_explorer",
    "causal_mask_explorer",
    "scaling_explorer",
    "scores_explorer",
    "softmax_budget",
    "step_explorer",
    "temperature_explorer",
]
# heatmap_html, bars_svg, histogram_svg, blend_svg and vectors_svg are public helpers too
# (documented below) but kept out of __all__: lessons use the explorers.


# --------------------------------------------------------------------------------------
# the explorer object
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class View:
    """What an explorer shows for one set of control values."""

    html: str
    description: str
    numbers: dict[str, Any] = field(default_factory=dict)


class Explorer:
    """Controls, a compute function of their values, and the widget that shows the result.

    Parameters
    ----------
    controls : dict of str to ipywidgets value widgets
    compute : callable
        ``compute(**values) -> View``; must not change anything.
    title : str
        Shown above the controls.
    on_change : callable, optional
        Called with ``(name, new_value)`` before recomputing, e.g. to load a token's vector
        into the sliders when the token changes.
    """

    def __init__(
        self,
        controls: dict[str, W.ValueWidget],
        compute: Callable[..., View],
        title: str,
        on_change: Callable[[str, Any], None] | None = None,
    ) -> None:
        self.controls = controls
        self._compute = compute
        self._on_change = on_change
        self._hold = False
        self._output = W.HTML()
        heading = W.HTML(f"<b>{html.escape(title)}</b>")
        self.widget = W.VBox(
            [heading, W.HBox(list(controls.values()), layout=W.Layout(flex_flow="row wrap")),
             self._output]
        )
        for name, control in controls.items():
            control.observe(self._changed(name), names="value")
        self.view: View = self.compute(**self.values())
        self._output.value = self.view.html

    def _changed(self, name: str) -> Callable[[dict[str, Any]], None]:
        def handler(change: dict[str, Any]) -> None:
            if self._hold:
                return
            if self._on_change is not None:
                self._hold = True
                try:
                    self._on_change(name, change["new"])
                finally:
                    self._hold = False
            self.refresh()

        return handler

    def values(self) -> dict[str, Any]:
        """The current value of every control."""
        return {name: c.value for name, c in self.controls.items()}

    def compute(self, **values: Any) -> View:
        """The view for these control values (pure: changes nothing)."""
        unknown = set(values) - set(self.controls)
        if unknown:
            raise AttentionInputError(
                f"unknown control(s) {sorted(unknown)}; this explorer has "
                f"{sorted(self.controls)}"
            )
        return self._compute(**{**self.values(), **values})

    def refresh(self) -> None:
        """Recompute from the controls and send the new view to the browser."""
        self.view = self.compute()
        self._output.value = self.view.html

    def set(self, **values: Any) -> str:
        """Set controls by name (one redraw at the end) and return the new description."""
        unknown = set(values) - set(self.controls)
        if unknown:
            raise AttentionInputError(
                f"unknown control(s) {sorted(unknown)}; this explorer has "
                f"{sorted(self.controls)}"
            )
        for name, value in values.items():
            self._hold = True
            try:
                self.controls[name].value = value
            finally:
                self._hold = False
            if self._on_change is not None:
                self._hold = True
                try:
                    self._on_change(name, self.controls[name].value)
                finally:
                    self._hold = False
        self.refresh()
        return self.description

    @property
    def description(self) -> str:
        """The current view in words."""
        return self.view.description

    @property
    def numbers(self) -> dict[str, Any]:
        """The current numbers (floats and arrays)."""
        return self.view.numbers

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle = dict(self.widget._repr_mimebundle_(**kwargs))
        bundle["text/plain"] = self.description
        return bundle

    def __repr__(self) -> str:
        return self.description


# --------------------------------------------------------------------------------------
# fast renderers: HTML and inline SVG strings (private)
# --------------------------------------------------------------------------------------

_CMAP = mpl.colormaps[CMAP]


def _esc(s: str) -> str:
    return html.escape(s, quote=True)


def _caption(description: str) -> str:
    return (
        f'<p aria-live="polite" style="max-width:48em;font-size:0.9em;margin:4px 0">'
        f"{_esc(description)}</p>"
    )


def _colours(v: NDArray[np.float64], vmin: float, vmax: float) -> tuple[NDArray[Any], ...]:
    """Hex background colours and black/white text colours for each entry of ``v``."""
    t = np.clip((v - vmin) / ((vmax - vmin) or 1.0), 0.0, 1.0)
    rgba = _CMAP(np.nan_to_num(t))
    rgb8 = np.round(rgba[..., :3] * 255).astype(np.int64)
    code = (rgb8[..., 0] << 16) | (rgb8[..., 1] << 8) | rgb8[..., 2]
    lin = np.where(rgba[..., :3] <= 0.04045, rgba[..., :3] / 12.92,
                   ((rgba[..., :3] + 0.055) / 1.055) ** 2.4)
    lum = lin @ np.array([0.2126, 0.7152, 0.0722])
    dark_text = (lum + 0.05) / 0.05 >= 1.05 / (lum + 0.05)
    return code, dark_text


#: Above this many rows or columns the heatmap is sent as a small PNG instead of a table.
MAX_TABLE = 24


def _png(rgb: NDArray[np.uint8]) -> bytes:
    """Encode an (h, w, 3) uint8 image as PNG with zlib alone (no matplotlib: fast)."""
    h, w, _ = rgb.shape
    raw = np.concatenate([np.zeros((h, 1), np.uint8), rgb.reshape(h, w * 3)], axis=1)

    def chunk(tag: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + tag + data
                + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF))

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw.tobytes(), 6)) + chunk(b"IEND", b""))


def _heatmap_image(
    v: NDArray[np.float64],
    lo: float,
    hi: float,
    rows: Sequence[str],
    cols: Sequence[str],
    *,
    mask: NDArray[np.bool_] | None,
    highlight_row: int | None,
    highlight_col: int | None,
    description: str,
) -> str:
    """A large heatmap as an <img>: one block of pixels per cell, built with numpy."""
    n_q, n_k = v.shape
    code, _ = _colours(v, lo, hi)
    rgb = np.stack([(code >> 16) & 255, (code >> 8) & 255, code & 255], axis=-1).astype(np.uint8)
    if mask is not None:
        rgb[~mask] = (217, 217, 217)
    k = max(2, 384 // max(n_q, n_k))
    big = np.repeat(np.repeat(rgb, k, axis=0), k, axis=1)
    edge = np.array([0xD5, 0x5E, 0x00], np.uint8)  # vermillion outline, as in the table
    if highlight_row is not None:
        r0, r1 = highlight_row * k, (highlight_row + 1) * k - 1
        big[[r0, r1], :] = edge
        big[r0:r1 + 1, [0, -1]] = edge
    if highlight_col is not None:
        c0, c1 = highlight_col * k, (highlight_col + 1) * k - 1
        big[:, [c0, c1]] = edge
        big[[0, -1], c0:c1 + 1] = edge
    data = base64.b64encode(_png(big)).decode("ascii")
    axes = (
        f"rows: querying tokens {_esc(rows[0])} … {_esc(rows[-1])} (top to bottom); "
        f"columns: attended tokens {_esc(cols[0])} … {_esc(cols[-1])} (left to right)"
    )
    return (
        f'<div style="font-size:11px">{axes}</div>'
        f'<img src="data:image/png;base64,{data}" alt="{_esc(description)}" '
        f'width="{big.shape[1]}" height="{big.shape[0]}" style="image-rendering:pixelated"/>'
    )


def heatmap_html(
    values: ArrayLike,
    rows: Sequence[str],
    cols: Sequence[str],
    *,
    kind: str = "weights",
    decimals: int = 2,
    mask: NDArray[np.bool_] | None = None,
    highlight_row: int | None = None,
    highlight_col: int | None = None,
    vmin: float | None = None,
    vmax: float | None = None,
    description: str = "",
) -> str:
    """An HTML table heatmap: token labels, values in cells, ``cividis`` colours."""
    v = np.asarray(values, dtype=np.float64)
    n_q, n_k = v.shape
    finite = np.where(np.isfinite(v), v, np.nan)
    lo = float(np.nanmin(finite)) if vmin is None else vmin
    hi = float(np.nanmax(finite)) if vmax is None else vmax
    if max(n_q, n_k) > MAX_TABLE:
        return _heatmap_image(np.nan_to_num(finite, nan=lo), lo, hi, rows, cols, mask=mask,
                              highlight_row=highlight_row, highlight_col=highlight_col,
                              description=description)
    code, dark = _colours(np.nan_to_num(finite, nan=lo), lo, hi)
    show = max(n_q, n_k) <= 12
    size = 44 if show else max(6, min(20, 480 // max(n_q, n_k)))
    font = "13px" if show else "1px"
    cell = f"width:{size}px;height:{size}px;padding:0;text-align:center;font-size:{font}"
    parts = [
        f'<table role="table" aria-label="{_esc(description)}" '
        'style="border-collapse:collapse;margin:4px 0">',
        "<tr><th></th>",
    ]
    label_style = "font-size:11px;font-weight:normal;padding:1px 3px"
    step = 1 if n_k <= 24 else n_k // 16
    for j, c in enumerate(cols):
        text = _esc(c) if j % step == 0 else ""
        vert = "" if n_k <= 8 else ";writing-mode:vertical-rl"
        parts.append(f'<th scope="col" style="{label_style}{vert}">{text}</th>')
    parts.append("</tr>")
    fmt = f"{{:.{decimals}f}}"
    for i in range(n_q):
        rstep = 1 if n_q <= 24 else n_q // 16
        parts.append(
            f'<tr><th scope="row" style="{label_style};text-align:right">'
            f"{_esc(rows[i]) if i % rstep == 0 else ''}</th>"
        )
        for j in range(n_k):
            outline = ""
            if highlight_row == i or highlight_col == j:
                outline = ";outline:2px solid #D55E00;outline-offset:-2px"
            if mask is not None and not mask[i, j]:
                parts.append(
                    f'<td style="{cell};background:repeating-linear-gradient(45deg,#d9d9d9 0 '
                    f'4px,#f2f2f2 4px 8px);color:#404040;font-size:{"10px" if show else font}'
                    f'{outline}">{"masked" if show else ""}</td>'
                )
                continue
            text = fmt.format(v[i, j]) if show else ""
            if text.startswith("-") and float(text) == 0:
                text = text[1:]
            parts.append(
                f'<td style="{cell};background:#{int(code[i, j]):06x};'
                f'color:{"black" if dark[i, j] else "white"}{outline}">{text}</td>'
            )
        parts.append("</tr>")
    parts.append("</table>")
    return "".join(parts)


def bars_svg(
    values: ArrayLike,
    labels: Sequence[str],
    *,
    colour: str = ORANGE,
    lo: float | None = None,
    hi: float | None = None,
    title: str = "",
    decimals: int = 2,
    description: str = "",
) -> str:
    """A small inline-SVG bar chart with the values written above the bars."""
    v = np.asarray(values, dtype=np.float64)
    lo = min(0.0, float(v.min())) if lo is None else lo
    hi = max(0.0, float(v.max())) if hi is None else hi
    span = (hi - lo) or 1.0
    bw, gap, h, top, bottom = 46, 14, 150, 30, 24
    width = len(v) * (bw + gap) + gap
    def y(x: float) -> float:
        return top + (hi - x) / span * h
    parts = [
        f'<svg role="img" aria-label="{_esc(description)}" width="{width}" '
        f'height="{top + h + bottom}" style="font:11px sans-serif;margin-right:12px">',
        f'<text x="{width / 2}" y="14" text-anchor="middle" font-weight="bold">'
        f"{_esc(title)}</text>",
        f'<line x1="0" x2="{width}" y1="{y(0):.1f}" y2="{y(0):.1f}" stroke="black"/>',
    ]
    for k, (x, lab) in enumerate(zip(v, labels, strict=True)):
        left = gap + k * (bw + gap)
        y0, y1 = sorted((y(0.0), y(float(x))))
        parts.append(
            f'<rect x="{left}" y="{y0:.1f}" width="{bw}" height="{max(y1 - y0, 0.5):.1f}" '
            f'fill="{colour}" stroke="black" stroke-width="0.6"/>'
        )
        ty = y(float(x)) - 4 if x >= 0 else y(float(x)) + 12
        parts.append(
            f'<text x="{left + bw / 2}" y="{ty:.1f}" text-anchor="middle">'
            f"{_fmt(float(x), decimals)}</text>"
        )
        parts.append(
            f'<text x="{left + bw / 2}" y="{top + h + 16}" text-anchor="middle">'
            f"{_esc(lab)}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def histogram_svg(
    data: ArrayLike,
    *,
    bins: int = 40,
    value_range: tuple[float, float] | None = None,
    colour: str = BLUE,
    title: str = "",
    xlabel: str = "",
    description: str = "",
) -> str:
    """A small inline-SVG histogram with its range written under the x-axis."""
    d = np.asarray(data, dtype=np.float64)
    counts, edges = np.histogram(d, bins=bins, range=value_range)
    w, h, top, bottom = 320, 120, 22, 34
    peak = counts.max() or 1
    bw = w / bins
    parts = [
        f'<svg role="img" aria-label="{_esc(description)}" width="{w + 20}" '
        f'height="{top + h + bottom}" style="font:11px sans-serif;margin-right:12px">',
        f'<text x="{w / 2 + 10}" y="14" text-anchor="middle" font-weight="bold">'
        f"{_esc(title)}</text>",
    ]
    for k, c in enumerate(counts):
        bh = c / peak * h
        parts.append(
            f'<rect x="{10 + k * bw:.1f}" y="{top + h - bh:.1f}" width="{bw:.1f}" '
            f'height="{bh:.1f}" fill="{colour}" stroke="black" stroke-width="0.3"/>'
        )
    base = top + h
    parts.append(f'<line x1="10" x2="{w + 10}" y1="{base}" y2="{base}" stroke="black"/>')
    for x, anchor in ((10, "start"), (w / 2 + 10, "middle"), (w + 10, "end")):
        value = edges[0] + (x - 10) / w * (edges[-1] - edges[0])
        parts.append(
            f'<text x="{x}" y="{base + 13}" text-anchor="{anchor}">{value:.3g}</text>'
        )
    parts.append(
        f'<text x="{w / 2 + 10}" y="{base + 28}" text-anchor="middle">{_esc(xlabel)}</text>'
    )
    parts.append("</svg>")
    return "".join(parts)


def blend_svg(
    weights_row: ArrayLike,
    values: ArrayLike,
    labels: Sequence[str],
    *,
    decimals: int = 2,
    description: str = "",
) -> str:
    """Inline SVG: the values as the corners of their convex hull, the output as a star."""
    w = np.asarray(weights_row, dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    out = w @ v
    pts = np.vstack([v, out])
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    span = max(float((hi - lo).max()), 1.0)
    lo = lo - 0.2 * span
    scale = 260 / (1.4 * span)
    size = 300

    def xy(p: NDArray[np.float64]) -> tuple[float, float]:
        return 20 + (p[0] - lo[0]) * scale, size - 20 - (p[1] - lo[1]) * scale

    parts = [
        f'<svg role="img" aria-label="{_esc(description)}" width="{size + 120}" '
        f'height="{size}" style="font:12px sans-serif">'
    ]
    hull = _hull(v)
    if len(hull) >= 3:
        poly = " ".join(f"{x:.1f},{y:.1f}" for x, y in (xy(p) for p in hull))
        parts.append(f'<polygon points="{poly}" fill="{BLUE}" fill-opacity="0.12" '
                     f'stroke="{BLUE}" stroke-width="1.5"/>')
    ox, oy = xy(out)
    for p, lab, a in zip(v, labels, w, strict=True):
        x, y = xy(p)
        parts.append(
            f'<line x1="{x:.1f}" y1="{y:.1f}" x2="{ox:.1f}" y2="{oy:.1f}" stroke="{GREY}" '
            f'stroke-opacity="0.6" stroke-width="{0.8 + 6 * max(float(a), 0):.1f}"/>'
        )
        parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="6" fill="{BLUE}" stroke="black"/>')
        parts.append(f'<text x="{x + 9:.1f}" y="{y - 8:.1f}">v_{_esc(lab)} '
                     f"{_fmt(float(a), decimals)}</text>")
    star = " ".join(
        f"{ox + r * np.sin(t):.1f},{oy - r * np.cos(t):.1f}"
        for k, t in enumerate(np.linspace(0, 2 * np.pi, 11)[:-1])
        for r in [9 if k % 2 == 0 else 4]
    )
    parts.append(f'<polygon points="{star}" fill="{ORANGE}" stroke="black"/>')
    parts.append(f'<text x="{ox + 10:.1f}" y="{oy + 16:.1f}">output '
                 f"[{_fmt(out[0], decimals)}, {_fmt(out[1], decimals)}]</text>")
    parts.append("</svg>")
    return "".join(parts)


def vectors_svg(
    moved: NDArray[np.float64],
    moved_label: str,
    others: NDArray[np.float64],
    other_labels: Sequence[str],
    *,
    lim: float,
    description: str = "",
) -> str:
    """Inline SVG of 2-D vectors as arrows from the origin: one moved vector, the others.

    Used by the scores explorer when d_k = 2: the moved query (orange) against every key
    (blue), or the moved key against every query. The axes stay fixed at ``±lim``.
    """
    size, pad = 260, 16
    scale = (size / 2 - pad) / lim

    def xy(p: NDArray[np.float64]) -> tuple[float, float]:
        return size / 2 + p[0] * scale, size / 2 - p[1] * scale

    parts = [
        f'<svg role="img" aria-label="{_esc(description)}" width="{size}" height="{size}" '
        'style="font:11px sans-serif;margin-right:12px">',
        '<defs><marker id="arrow-head" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" '
        'markerHeight="6" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
        'fill="context-stroke"/></marker></defs>',
        f'<line x1="0" x2="{size}" y1="{size / 2}" y2="{size / 2}" stroke="#bbb"/>',
        f'<line y1="0" y2="{size}" x1="{size / 2}" x2="{size / 2}" stroke="#bbb"/>',
    ]
    for p, lab, colour, width in [
        *((o, t, BLUE, 1.5) for o, t in zip(others, other_labels, strict=True)),
        (moved, moved_label, ORANGE, 3.0),
    ]:
        x, y = xy(p)
        parts.append(
            f'<line x1="{size / 2}" y1="{size / 2}" x2="{x:.1f}" y2="{y:.1f}" '
            f'stroke="{colour}" stroke-width="{width}" marker-end="url(#arrow-head)"/>'
        )
        parts.append(f'<text x="{x + 4:.1f}" y="{y - 4:.1f}">{_esc(lab)}</text>')
    parts.append("</svg>")
    return "".join(parts)


# --------------------------------------------------------------------------------------
# shared input handling (private)
# --------------------------------------------------------------------------------------


def _example_or(
    Q: ArrayLike | None, K: ArrayLike | None, tokens: Sequence[str] | None
) -> tuple[NDArray[np.float64], NDArray[np.float64], list[str]]:
    if Q is None and K is None:
        ex = the_cat_sat()
        q, k = ex.Q, ex.K
        toks = list(tokens) if tokens is not None else list(ex.tokens)
    else:
        if Q is None or K is None:
            raise AttentionInputError("give both Q and K, or neither for 'the cat sat'")
        q = np.array(Q, dtype=np.float64)
        k = np.array(K, dtype=np.float64)
        scores(q, k)  # validates shapes with the library's own messages
        if q.ndim != 2 or q.shape[0] != k.shape[0]:
            raise AttentionInputError(
                f"Q and K must be (n, d_k) for one sequence of n tokens (got Q shape "
                f"{q.shape}, K shape {k.shape})"
            )
        toks = [str(t) for t in tokens] if tokens is not None else [
            f"token {i}" for i in range(q.shape[0])
        ]
    if len(toks) != q.shape[0]:
        raise AttentionInputError(
            f"tokens must name each of the {q.shape[0]} tokens (got {len(toks)})"
        )
    if len(set(toks)) != len(toks):
        raise AttentionInputError(f"tokens must be distinct to be chosen by name (got {toks})")
    return q, k, toks


def _row_or(
    row: ArrayLike | None, tokens: Sequence[str] | None, query: str | None
) -> tuple[NDArray[np.float64], list[str], str | None]:
    if row is None:
        ex = the_cat_sat()
        r = scores(ex.Q, ex.K)[2]
        toks = list(ex.tokens)
        return r, toks, query if query is not None else "sat"
    r = np.asarray(row, dtype=np.float64)
    if r.ndim != 1 or r.size < 2 or not np.isfinite(r).all():
        raise AttentionInputError(
            f"scores_row must be one row of at least 2 finite numbers, shape (n,) "
            f"(got shape {r.shape})"
        )
    toks = [str(t) for t in tokens] if tokens is not None else [f"token {i}" for i in
                                                                 range(r.size)]
    if len(toks) != r.size:
        raise AttentionInputError(
            f"tokens must name each of the {r.size} entries (got {len(toks)})"
        )
    return r, toks, query


def _slider(value: float, lo: float, hi: float, step: float, label: str) -> W.FloatSlider:
    return W.FloatSlider(value=float(value), min=lo, max=hi, step=step, description=label,
                         continuous_update=True, readout_format=".2f",
                         style={"description_width": "initial"})


# --------------------------------------------------------------------------------------
# lesson 02: the scores
# --------------------------------------------------------------------------------------


def scores_explorer(
    Q: ArrayLike | None = None,
    K: ArrayLike | None = None,
    tokens: Sequence[str] | None = None,
    *,
    token: str | None = None,
    vector: str = "query",
) -> Explorer:
    """Move one token's query or key vector and watch the score table :math:`QK^T` change.

    Parameters
    ----------
    Q, K : array_like, shape (n, d_k), optional
        Default: the 'the cat sat' example. Copied; the explorer edits its own copies.
    tokens : sequence of str, optional
    token : str, optional
        The token whose vector the sliders move (default: the last one).
    vector : {"query", "key"}
        Move the query (its row of scores changes) or the key (its column changes).

    Examples
    --------
    >>> ex = scores_explorer()
    >>> ex.numbers["row"]
    array([1., 1., 2.])
    >>> print(ex.set(x0=2.0))  # doctest: +ELLIPSIS
    sat's query is [2.00, 1.00]; its row of scores: 2.00 against the, 1.00 against cat,
    3.00 against sat. The largest is sat at 3.00. ...
    """
    q0, k0, toks = _example_or(Q, K, tokens)
    state = {"query": q0.copy(), "key": k0.copy()}
    d_k = q0.shape[1]
    n_dims = min(d_k, 4)
    if vector not in ("query", "key"):
        raise AttentionInputError(f"vector must be 'query' or 'key' (got {vector!r})")
    token = toks[-1] if token is None else token
    if token not in toks:
        raise AttentionInputError(f"token must be one of {toks} (got {token!r})")
    lim = max(3.0, float(np.abs(np.vstack([q0, k0])).max()) * 1.5)
    i0 = toks.index(token)
    controls: dict[str, W.ValueWidget] = {
        "token": W.Dropdown(options=toks, value=token, description="token"),
        "vector": W.ToggleButtons(options=["query", "key"], value=vector,
                                  description="move its"),
    }
    for d in range(n_dims):
        controls[f"x{d}"] = _slider(state[vector][i0, d], -lim, lim, 0.1, f"component {d}")

    def compute(token: str, vector: str, **xs: float) -> View:
        i = toks.index(token)
        q, k = state["query"].copy(), state["key"].copy()
        moved = q if vector == "query" else k
        for d in range(n_dims):
            moved[i, d] = xs[f"x{d}"]
        s = scores(q, k)
        line = s[i] if vector == "query" else s[:, i]
        vec = "[" + ", ".join(_fmt(x, 2) for x in moved[i]) + "]"
        if vector == "query":
            row_text = describe_row(line, toks, kind="scores", query=token)
            row_text = row_text.replace(f"{token}'s scores:", "its row of scores:", 1)
        else:
            row_text = (
                describe_row(line, toks, kind="scores")
                .replace(" against ", " from ")
                .replace("The row's scores:", f"its column (every query against {token}'s key):")
            )
        description = (
            f"{token}'s {vector} is {vec}; {row_text} "
            + describe_heatmap(s, toks, toks, kind="scores")
        )
        body = heatmap_html(
            s, toks, toks, kind="scores", description=description,
            highlight_row=i if vector == "query" else None,
            highlight_col=i if vector == "key" else None,
        )
        if d_k == 2 and len(toks) <= 12:
            other, letter = (k, "k") if vector == "query" else (q, "q")
            arrows = vectors_svg(
                moved[i], f"{vector[0]}_{token}", other, [f"{letter}_{t}" for t in toks],
                lim=lim, description=row_text,
            )
            body = (f'<div style="display:flex;flex-wrap:wrap;align-items:center">{arrows}'
                    f"{body}</div>")
        return View(body + _caption(description),
                    description, {"scores": s, "row": line.copy(), "vector": moved[i].copy()})

    explorer: Explorer

    def on_change(name: str, new: Any) -> None:
        v = explorer.controls
        if name.startswith("x"):
            i = toks.index(v["token"].value)
            state[v["vector"].value][i, int(name[1:])] = float(new)
        else:  # a new token or vector: load its components into the sliders
            i = toks.index(v["token"].value)
            for d in range(n_dims):
                v[f"x{d}"].value = float(state[v["vector"].value][i, d])

    explorer = Explorer(controls, compute, "QKᵀ: move one vector, watch its scores",
                        on_change)
    return explorer


# --------------------------------------------------------------------------------------
# lesson 03: the scaling and the temperature
# --------------------------------------------------------------------------------------


def scaling_explorer(
    *,
    d_k: int = 64,
    scaled: bool = False,
    n_queries: int = 256,
    n_keys: int = 16,
    seed: int = 0,
) -> Explorer:
    """Pick d_k and toggle the 1/sqrt(d_k) scaling; see the scores spread and softmax saturate.

    The random queries and keys come from ``numpy.random.default_rng(seed)`` (see
    :func:`course_lib.scaling.scaling_stats`); results are cached per (d_k, scaled).

    Examples
    --------
    >>> ex = scaling_explorer(d_k=4096)
    >>> round(ex.numbers["median_max_weight"], 2)
    1.0
    >>> ex.set(scaled=True)[:45]
    'd_k = 4096, scaled by 1/sqrt(d_k): std of q·k'
    >>> round(ex.numbers["median_max_weight"], 2)
    0.22
    """
    if d_k not in D_KS:
        raise AttentionInputError(f"d_k must be one of {list(D_KS)} (got {d_k!r})")
    cache: dict[tuple[int, bool], ScalingStats] = {}
    controls: dict[str, W.ValueWidget] = {
        "d_k": W.SelectionSlider(options=list(D_KS), value=d_k, description="d_k",
                                 continuous_update=True),
        "scaled": W.Checkbox(value=scaled, description="divide by sqrt(d_k)"),
    }

    def compute(d_k: int, scaled: bool) -> View:
        key = (int(d_k), bool(scaled))
        if key not in cache:
            cache[key] = scaling_stats(key[0], scale=key[1], n_queries=n_queries,
                                       n_keys=n_keys, seed=seed)
        st = cache[key]
        max_w = softmax(st.dots.reshape(n_queries, n_keys)).max(axis=-1)
        label = "q·k / sqrt(d_k)" if scaled else "q·k (unscaled)"
        h1 = describe_histogram(st.dots, f"Histogram of {label}")
        h2 = describe_histogram(max_w, "Histogram of each row's largest weight")
        description = f"{st.summary()}. {h1}. {h2}."
        spread = max(4.0, 4 * st.qk_std)
        body = (
            histogram_svg(st.dots, value_range=(-spread, spread),
                          colour=BLUE if scaled else VERMILION,
                          title=f"{label}: std {st.qk_std:.3g}", xlabel="score",
                          description=h1)
            + histogram_svg(max_w, value_range=(0.0, 1.0), colour=ORANGE,
                            title=f"largest weight per row: median {st.median_max_weight:.2f}",
                            xlabel="weight", description=h2)
        )
        table = (
            '<table style="font-size:13px;margin:4px 0"><tr><th style="text-align:left">'
            "std of q·k</th><td>" f"{st.qk_std:.3g}</td></tr>"
            '<tr><th style="text-align:left">median max weight</th><td>'
            f"{st.median_max_weight:.2f} (even: {1 / n_keys:.3g}, one-hot: 1)</td></tr>"
            '<tr><th style="text-align:left">median row entropy</th><td>'
            f"{st.median_entropy:.3g} nats (even: {st.max_entropy:.2f}, one-hot: 0)</td></tr>"
            '<tr><th style="text-align:left">softmax-Jacobian size</th><td>'
            f"{st.median_jacobian_norm:.3g}</td></tr></table>"
        )
        numbers = {
            "qk_std": st.qk_std,
            "median_max_weight": st.median_max_weight,
            "median_entropy": st.median_entropy,
            "median_jacobian_norm": st.median_jacobian_norm,
        }
        return View(f'<div style="display:flex;flex-wrap:wrap">{body}</div>{table}'
                    + _caption(description), description, numbers)

    return Explorer(controls, compute, "/ sqrt(d_k): why the scores are scaled")


def temperature_explorer(
    scores_row: ArrayLike | None = None,
    tokens: Sequence[str] | None = None,
    *,
    query: str | None = None,
    temperature: float = 1.0,
) -> Explorer:
    """A temperature slider on one row of scores: softmax(scores / T).

    Dividing scores by sqrt(d_k) is a softmax at temperature T = sqrt(d_k), so the
    explorer also names the d_k = T² whose scaling this temperature is.

    Examples
    --------
    >>> ex = temperature_explorer()  # 'sat': raw scores [1, 1, 2]
    >>> ex.set(temperature=2 ** 0.5)  # doctest: +ELLIPSIS
    "At temperature T = 1.41 (the scaling 1/sqrt(d_k) for d_k = 2): sat's attention
    weights: 0.25 to the, 0.25 to cat, 0.50 to sat. ..."
    """
    r, toks, query = _row_or(scores_row, tokens, query)
    controls: dict[str, W.ValueWidget] = {
        "temperature": W.FloatLogSlider(value=temperature, base=10, min=-1, max=1.5,
                                        step=0.01, description="temperature T",
                                        readout_format=".2f",
                                        style={"description_width": "initial"}),
    }

    def compute(temperature: float) -> View:
        w = softmax(r, temperature=temperature)
        ent = float(row_entropy(w))
        dk = temperature**2
        description = (
            f"At temperature T = {temperature:.2f} (the scaling 1/sqrt(d_k) for d_k = "
            f"{dk:.3g}): " + describe_row(w, toks, kind="weights", query=query)
            + f" Row entropy {ent:.2f} nats (even: {np.log(len(toks)):.2f})."
        )
        body = bars_svg(w, toks, colour=ORANGE, lo=0.0, hi=1.0,
                        title=f"softmax(scores / {temperature:.2f})", description=description)
        body = bars_svg(r, toks, colour=BLUE, title="scores", description=describe_row(
            r, toks, kind="scores", query=query)) + body
        return View(f"<div>{body}</div>" + _caption(description), description,
                    {"weights": w, "max_weight": float(w.max()), "entropy": ent,
                     "equivalent_d_k": dk})

    return Explorer(controls, compute, "softmax temperature: T = sqrt(d_k)")


# --------------------------------------------------------------------------------------
# lesson 04: the softmax budget
# --------------------------------------------------------------------------------------


def softmax_budget(
    scores_row: ArrayLike | None = None,
    tokens: Sequence[str] | None = None,
    *,
    query: str | None = None,
) -> Explorer:
    """One slider per score; the row's weights are always positive and sum to 1.

    Examples
    --------
    >>> b = softmax_budget([0.0, 0.0], ["a", "b"])
    >>> b.numbers["weights"]
    array([0.5, 0.5])
    >>> print(b.set(a=5.0))  # doctest: +ELLIPSIS
    Softmax turns the scores 5.00, 0.00 (for a, b) into weights 0.99, 0.01: The row's ...
    """
    r, toks, query = _row_or(scores_row, tokens, query)
    lim = max(10.0, float(np.abs(r).max()))
    controls: dict[str, W.ValueWidget] = {
        t: _slider(x, -lim, lim, 0.1, t) for t, x in zip(toks, r, strict=True)
    }

    def compute(**values: float) -> View:
        s = np.array([values[t] for t in toks], dtype=np.float64)
        w = softmax(s)
        whose = f"{query}'s " if query else "the "
        description = (
            f"Softmax turns {whose}scores {', '.join(_fmt(x, 2) for x in s)} "
            f"(for {', '.join(toks)}) into weights {', '.join(_fmt(x, 2) for x in w)}: "
            + describe_row(w, toks, kind="weights", query=query)
        )
        body = bars_svg(s, toks, colour=BLUE, title="scores",
                        description=describe_row(s, toks, kind="scores", query=query))
        body += bars_svg(w, toks, colour=ORANGE, lo=0.0, hi=1.0,
                         title=f"weights: sum {w.sum():.2f}", description=description)
        return View(f"<div>{body}</div>" + _caption(description), description,
                    {"scores": s, "weights": w, "sum": float(w.sum())})

    return Explorer(controls, compute, "softmax: a budget of 1 per row")


# --------------------------------------------------------------------------------------
# lesson 05: the blend
# --------------------------------------------------------------------------------------


def blend_explorer(
    weights_row: ArrayLike | None = None,
    values: ArrayLike | None = None,
    tokens: Sequence[str] | None = None,
    *,
    query: str | None = None,
) -> Explorer:
    """Move the weights or a value vector; the output stays inside the values' triangle.

    The ``weight <token>`` sliders are shares: they are divided by their total, so the
    weights always sum to 1 (all zero means equal weights).

    Examples
    --------
    >>> ex = blend_explorer()  # 'sat' in 'the cat sat'
    >>> ex.numbers["output"].round(2)
    array([1.26, 1.5 ])
    >>> ex.set(**{"weight the": 1.0, "weight cat": 0.0, "weight sat": 0.0})[:60]
    'The value vectors are the corners of a triangle: the [1.00, '
    >>> ex.numbers["output"]
    array([1., 0.])
    """
    if weights_row is None and values is None:
        ex = the_cat_sat()
        w0 = attention_weights(ex.Q, ex.K)[2]
        v0 = ex.V.copy()
        toks = list(tokens) if tokens is not None else list(ex.tokens)
        query = "sat" if query is None else query
    else:
        if weights_row is None or values is None:
            raise AttentionInputError("give both weights_row and values, or neither")
        w0 = np.asarray(weights_row, dtype=np.float64)
        v0 = np.array(values, dtype=np.float64)
        if w0.ndim != 1 or v0.shape != (w0.size, 2) or (w0 < 0).any():
            raise AttentionInputError(
                f"weights_row must be (n,) non-negative and values (n, 2) (got shapes "
                f"{w0.shape} and {v0.shape}{', negative weights' if (w0 < 0).any() else ''})"
            )
        toks = [str(t) for t in tokens] if tokens is not None else [
            f"token {i}" for i in range(w0.size)]
    if len(toks) != w0.size:
        raise AttentionInputError(f"tokens must name each of the {w0.size} values")
    state = {"values": v0.copy()}
    lim = max(3.0, float(np.abs(v0).max()) * 1.5)
    controls: dict[str, W.ValueWidget] = {
        f"weight {t}": _slider(a, 0.0, 1.0, 0.01, f"weight {t}") for t, a in zip(toks, w0,
                                                                                   strict=True)
    }
    controls["token"] = W.Dropdown(options=toks, value=toks[-1], description="move value of")
    controls["vx"] = _slider(v0[-1, 0], -lim, lim, 0.1, "value dim 0")
    controls["vy"] = _slider(v0[-1, 1], -lim, lim, 0.1, "value dim 1")

    def compute(token: str, vx: float, vy: float, **shares: float) -> View:
        a = np.array([shares[f"weight {t}"] for t in toks], dtype=np.float64)
        w = a / a.sum() if a.sum() > 0 else np.full(a.size, 1.0 / a.size)
        v = state["values"].copy()
        v[toks.index(token)] = [vx, vy]
        out = w @ v
        description = describe_blend(w, v, toks, query=query)
        body = blend_svg(w, v, toks, description=description)
        return View(body + _caption(description), description,
                    {"weights": w, "values": v, "output": out,
                     "inside": inside_hull(out, v)})

    explorer: Explorer

    def on_change(name: str, new: Any) -> None:
        c = explorer.controls
        i = toks.index(c["token"].value)
        if name == "token":
            c["vx"].value, c["vy"].value = (float(x) for x in state["values"][i])
        elif name in ("vx", "vy"):
            state["values"][i, 0 if name == "vx" else 1] = float(new)

    explorer = Explorer(controls, compute, "· V: the output is a blend of the values",
                        on_change)
    return explorer


# --------------------------------------------------------------------------------------
# lesson 07: the causal mask
# --------------------------------------------------------------------------------------


def causal_mask_explorer(
    Q: ArrayLike | None = None,
    K: ArrayLike | None = None,
    tokens: Sequence[str] | None = None,
    *,
    masked: bool = False,
) -> Explorer:
    """Toggle a causal mask on the attention weights; masked rows still sum to 1.

    Examples
    --------
    >>> ex = causal_mask_explorer()
    >>> ex.numbers["weights"][0].round(2)
    array([0.4, 0.2, 0.4])
    >>> ex.set(masked=True)  # doctest: +ELLIPSIS
    'A 3 by 3 heatmap ... the attends 1.00 to the, cat masked, sat masked; ...'
    >>> ex.numbers["weights"][0]
    array([1., 0., 0.])
    """
    q, k, toks = _example_or(Q, K, tokens)
    n = q.shape[0]
    m = causal_mask(n)
    controls: dict[str, W.ValueWidget] = {
        "masked": W.Checkbox(value=masked, description="causal mask (−inf above diagonal)",
                             style={"description_width": "initial"}),
    }

    def compute(masked: bool) -> View:
        w = attention_weights(q, k, mask=m if masked else None)
        mk = m if masked else None
        description = describe_heatmap(w, toks, toks, kind="weights", mask=mk)
        body = heatmap_html(w, toks, toks, kind="weights", vmin=0.0, vmax=1.0, mask=mk,
                            description=description)
        return View(body + _caption(description), description,
                    {"weights": w, "mask": m if masked else np.ones_like(m)})

    return Explorer(controls, compute, "causal mask: no looking ahead")


# --------------------------------------------------------------------------------------
# lessons 01 and 06: the whole equation, one step at a time
# --------------------------------------------------------------------------------------

#: The steps of :func:`step_explorer`, in order: (control value, button label).
STEPS = (
    ("scores", "1 · scores QKᵀ"),
    ("scaled", "2 · ÷ sqrt(d_k)"),
    ("softmax", "3 · softmax"),
    ("output", "4 · output · V"),
)


def step_explorer(
    Q: ArrayLike | None = None,
    K: ArrayLike | None = None,
    V: ArrayLike | None = None,
    tokens: Sequence[str] | None = None,
    *,
    token: str | None = None,
    step: str = "scores",
) -> Explorer:
    """Step through softmax(QK^T / sqrt(d_k)) V for one query row.

    Pick a token (whose query row to follow) and a step: the scores QKᵀ, the scores
    divided by sqrt(d_k), the softmax weights, or the output (the weights times V).

    Examples
    --------
    >>> ex = step_explorer()  # 'the cat sat', sat's row
    >>> print(ex.set(step="softmax"))  # doctest: +NORMALIZE_WHITESPACE
    Step 3 of 4, softmax: each row of scaled scores becomes weights that sum to 1.
    sat's attention weights: 0.25 to the, 0.25 to cat, 0.50 to sat. They sum to 1.00;
    the largest is sat at 0.50.
    >>> ex.numbers["row"].round(2)
    array([0.25, 0.25, 0.5 ])
    >>> ex.set(token="the", step="scores")[:60]
    'Step 1 of 4, scores QKᵀ: each query dotted with every key. t'
    """
    if Q is None and K is None and V is None:
        ex = the_cat_sat()
        q, k, toks = _example_or(None, None, tokens)
        v = ex.V.copy()
    else:
        if V is None:
            raise AttentionInputError("give Q, K and V together, or none for 'the cat sat'")
        q, k, toks = _example_or(Q, K, tokens)
        v = np.array(V, dtype=np.float64)
        if v.ndim != 2 or v.shape[0] != k.shape[0]:
            raise AttentionInputError(
                f"V must be (n_k, d_v) with one value per key, n_k = {k.shape[0]} "
                f"(got V shape {v.shape})"
            )
    token = toks[-1] if token is None else token
    steps = [name for name, _ in STEPS]
    if token not in toks:
        raise AttentionInputError(f"token must be one of {toks} (got {token!r})")
    if step not in steps:
        raise AttentionInputError(f"step must be one of {steps} (got {step!r})")
    d_k = int(q.shape[-1])
    out, w = attention(q, k, v)
    tables = {
        "scores": scores(q, k),
        "scaled": scaled_scores(q, k),
        "softmax": w,
        "output": out,
    }
    dims = [f"dim {j}" for j in range(v.shape[1])]
    controls: dict[str, W.ValueWidget] = {
        "token": W.Dropdown(options=toks, value=token, description="query row"),
        "step": W.ToggleButtons(options=[(label, name) for name, label in STEPS], value=step,
                                description="step", style={"button_width": "auto"}),
    }

    def vec(x: NDArray[np.float64]) -> str:
        return "[" + ", ".join(_fmt(c, 2) for c in x) + "]"

    def compute(token: str, step: str) -> View:
        i = toks.index(token)
        n = steps.index(step) + 1
        table = tables[step]
        row = table[i]
        head = f"Step {n} of 4, "
        if step == "scores":
            description = (
                head + "scores QKᵀ: each query dotted with every key. "
                + f"{token}'s query is {vec(q[i])}; "
                + describe_row(row, toks, kind="scores", query=token)
            )
        elif step == "scaled":
            description = (
                head + f"scaled ÷ sqrt(d_k) = ÷ sqrt({d_k}) = ÷ {np.sqrt(d_k):.2f}: "
                + f"{token}'s scores {', '.join(_fmt(x, 2) for x in tables['scores'][i])} "
                + f"become {', '.join(_fmt(x, 2) for x in row)}. "
                + describe_row(row, toks, kind="scores", query=token)
            )
        elif step == "softmax":
            description = (
                head + "softmax: each row of scaled scores becomes weights that sum to 1. "
                + describe_row(row, toks, kind="weights", query=token)
            )
        else:
            description = (
                head + f"output · V: {token}'s output is the value vectors mixed with its "
                + "weights. " + describe_blend(w[i], v, toks, query=token)
            )
        kind = "weights" if step in ("softmax",) else "scores"
        cols = dims if step == "output" else toks
        body = heatmap_html(
            table, toks, cols, kind=kind, highlight_row=i, description=description,
            vmin=0.0 if step == "softmax" else None, vmax=1.0 if step == "softmax" else None,
        )
        if step == "output" and v.shape[1] == 2:
            body = (f'<div style="display:flex;flex-wrap:wrap;align-items:center">{body}'
                    f"{blend_svg(w[i], v, toks, description=description)}</div>")
        else:
            colour = ORANGE if step == "softmax" else BLUE
            body = (f'<div style="display:flex;flex-wrap:wrap;align-items:center">{body}'
                    + bars_svg(row, toks, colour=colour,
                               lo=0.0 if step == "softmax" else None,
                               hi=1.0 if step == "softmax" else None,
                               title=f"{token}'s row: {dict(STEPS)[step][4:]}",
                               description=description)
                    + "</div>")
        return View(body + _caption(description), description,
                    {"step": n, "table": table.copy(), "row": row.copy(), "d_k": d_k})

    return Explorer(controls, compute, "the whole equation, one step at a time")
