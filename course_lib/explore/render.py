"""Fast HTML and inline-SVG pictures for the widgets: heatmaps, bars, histograms, the blend.

A slider move must feel instant, so the explorers (:mod:`course_lib.explore.widgets`) do not
redraw matplotlib figures: each picture here is a string of HTML or SVG, built in well
under a millisecond, sent to the browser as one ``HTML.value`` change
(``benchmarks/widget_latency.py`` measures it).

Every picture carries the numbers in words as its accessible name (``aria-label`` with
the description from :mod:`course_lib.explore.describe`); :func:`caption_html` writes the one-line
takeaway shown under it, in a live region, so a screen reader hears each update once.

Themes: colours come from :mod:`course_lib.explore.style`. Text and lines on the page use
``currentColor`` (JupyterLab's text colour, light or dark theme); a heatmap cell has its own
background and takes black or white text by :func:`course_lib.explore.style.text_colour`.

Public API
----------
``heatmap_html(values, rows, cols, *, kind, decimals, mask, highlight_row, highlight_col,
vmin, vmax, description)``
    An HTML table, one coloured cell per entry; above :data:`MAX_TABLE` rows or columns a
    small PNG (built with numpy and zlib, :func:`encode_png`) instead.
``bars_svg``, ``histogram_svg``, ``blend_svg``, ``vectors_svg``
    Small inline SVGs.
``caption_html(text)``
    The caption paragraph under a picture.
"""

from __future__ import annotations

import base64
import html
import struct
import zlib
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .describe import convex_hull, format_number
from .style import (
    BLUE,
    GREY,
    INK,
    MASKED,
    MASKED_STRIPE,
    MASKED_TEXT,
    ORANGE,
    RING,
    VERMILION,
    cell_colours,
    heatmap_range,
)

__all__ = [
    "MAX_TABLE",
    "bars_svg",
    "blend_svg",
    "caption_html",
    "encode_png",
    "feedback_html",
    "heatmap_html",
    "histogram_svg",
    "vectors_svg",
]

#: Above this many rows or columns the heatmap is sent as a small PNG instead of a table.
MAX_TABLE = 24
# Text of every picture: the page's font at a readable size, the theme's colour.
_FONT = "font-family:var(--jp-ui-font-family, sans-serif);font-size:12px"


def _esc(s: str) -> str:
    return html.escape(s, quote=True)


def caption_html(text: str) -> str:
    """The caption under a widget's picture: full-size text at a normal line height.

    A live region (``aria-live="polite"``), so a screen reader reads the new takeaway
    after every move of a control.
    """
    return (
        '<p class="course-caption" aria-live="polite" style="max-width:48em;margin:6px 0;'
        "font-size:var(--jp-content-font-size1, 14px);line-height:1.5;white-space:normal\">"
        f"{_esc(text)}</p>"
    )


def feedback_html(text: str) -> str:
    """A self-check's verdict as a paragraph in the page's own font.

    JupyterLab sets ``text/plain`` in monospace and breaks it anywhere, even inside a word
    ("as l" / "ong"); this paragraph wraps between words and keeps the message's line
    breaks.

    Examples
    --------
    >>> feedback_html("Not yet: <x> & y")[-31:]
    '>Not yet: &lt;x&gt; &amp; y</p>'
    """
    return (
        '<p class="course-feedback" style="white-space:pre-wrap;overflow-wrap:break-word;'
        'margin:0;font-size:var(--jp-content-font-size1, 14px);line-height:1.5">'
        f"{_esc(text)}</p>"
    )


# --------------------------------------------------------------------------------------
# heatmaps
# --------------------------------------------------------------------------------------


def encode_png(rgb: NDArray[np.uint8]) -> bytes:
    """Encode an (h, w, 3) uint8 image as PNG with zlib alone (no matplotlib: fast).

    Examples
    --------
    >>> encode_png(np.zeros((2, 3, 3), np.uint8))[:8]
    b'\\x89PNG\\r\\n\\x1a\\n'
    """
    h, w, _ = rgb.shape
    raw = np.concatenate([np.zeros((h, 1), np.uint8), rgb.reshape(h, w * 3)], axis=1)

    def chunk(tag: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + tag + data
                + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF))

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw.tobytes(), 6)) + chunk(b"IEND", b""))


def _hex_rgb(colour: str) -> tuple[int, int, int]:
    code = int(colour.lstrip("#"), 16)
    return (code >> 16) & 255, (code >> 8) & 255, code & 255


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
    code, _ = cell_colours(v, lo, hi)
    rgb = np.stack([(code >> 16) & 255, (code >> 8) & 255, code & 255], axis=-1).astype(np.uint8)
    if mask is not None:
        rgb[~mask] = _hex_rgb(MASKED)
    k = max(2, 384 // max(n_q, n_k))
    big = np.repeat(np.repeat(rgb, k, axis=0), k, axis=1)
    edge = np.array(_hex_rgb(VERMILION), np.uint8)
    if highlight_row is not None:
        r0, r1 = highlight_row * k, (highlight_row + 1) * k - 1
        big[[r0, r1], :] = edge
        big[r0:r1 + 1, [0, -1]] = edge
    if highlight_col is not None:
        c0, c1 = highlight_col * k, (highlight_col + 1) * k - 1
        big[:, [c0, c1]] = edge
        big[[0, -1], c0:c1 + 1] = edge
    data = base64.b64encode(encode_png(big)).decode("ascii")
    axes = (
        f"rows: querying tokens {_esc(rows[0])} … {_esc(rows[-1])} (top to bottom); "
        f"columns: attended tokens {_esc(cols[0])} … {_esc(cols[-1])} (left to right)"
    )
    return (
        f'<div style="{_FONT}">{axes}</div>'
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
    """An HTML table heatmap: token labels, values in cells, the course's colour map.

    The colour scale is :func:`course_lib.explore.style.heatmap_range` unless ``vmin``/``vmax``
    are given; masked cells are striped grey and say "masked".

    Examples
    --------
    >>> page = heatmap_html([[0.2, 0.8]], ["a"], ["a", "b"], description="a: 0.2, 0.8")
    >>> page.count("<td"), 'aria-label="a: 0.2, 0.8"' in page
    (2, True)
    """
    v = np.asarray(values, dtype=np.float64)
    n_q, n_k = v.shape
    auto_lo, auto_hi = heatmap_range(np.where(mask, v, np.nan) if mask is not None else v,
                                     "weights" if kind == "weights" else "scores")
    lo = auto_lo if vmin is None else vmin
    hi = auto_hi if vmax is None else vmax
    finite = np.nan_to_num(np.where(np.isfinite(v), v, lo), nan=lo)
    if max(n_q, n_k) > MAX_TABLE:
        return _heatmap_image(finite, lo, hi, rows, cols, mask=mask,
                              highlight_row=highlight_row, highlight_col=highlight_col,
                              description=description)
    code, black = cell_colours(finite, lo, hi)
    show = max(n_q, n_k) <= 12
    size = 46 if show else max(6, min(20, 480 // max(n_q, n_k)))
    font = "14px" if show else "1px"
    cell = f"width:{size}px;height:{size}px;padding:0;text-align:center;font-size:{font}"
    parts = [
        f'<table role="table" aria-label="{_esc(description)}" '
        f'style="border-collapse:collapse;margin:4px 0;{_FONT}">',
        "<tr><th></th>",
    ]
    label_style = "font-weight:normal;padding:1px 4px"
    step = 1 if n_k <= 24 else n_k // 16
    for j, c in enumerate(cols):
        text = _esc(c) if j % step == 0 else ""
        vert = "" if n_k <= 8 else ";writing-mode:vertical-rl"
        parts.append(f'<th scope="col" style="{label_style}{vert}">{text}</th>')
    parts.append("</tr>")
    for i in range(n_q):
        rstep = 1 if n_q <= 24 else n_q // 16
        parts.append(
            f'<tr><th scope="row" style="{label_style};text-align:right">'
            f"{_esc(rows[i]) if i % rstep == 0 else ''}</th>"
        )
        for j in range(n_k):
            ring = f";{RING}" if highlight_row == i or highlight_col == j else ""
            if mask is not None and not mask[i, j]:
                parts.append(
                    f'<td style="{cell};background:repeating-linear-gradient(45deg,{MASKED} 0 '
                    f"4px,{MASKED_STRIPE} 4px 8px);color:{MASKED_TEXT};"
                    f'font-size:{"11px" if show else font}{ring}">{"masked" if show else ""}</td>'
                )
                continue
            text = format_number(v[i, j], decimals) if show else ""
            parts.append(
                f'<td style="{cell};background:#{int(code[i, j]):06x};'
                f'color:{"black" if black[i, j] else "white"}{ring}">{text}</td>'
            )
        parts.append("</tr>")
    parts.append("</table>")
    return "".join(parts)


# --------------------------------------------------------------------------------------
# bars, histograms
# --------------------------------------------------------------------------------------


def _svg_open(width: float, height: float, description: str) -> str:
    return (f'<svg role="img" aria-label="{_esc(description)}" width="{width:g}" '
            f'height="{height:g}" viewBox="0 0 {width:g} {height:g}" '
            f'style="{_FONT};margin-right:12px;overflow:visible" fill="{INK}">')


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
    """A small inline-SVG bar chart with the values written above the bars.

    Examples
    --------
    >>> svg = bars_svg([0.25, 0.75], ["a", "b"], title="weights")
    >>> svg.count("<rect"), ">0.75</text>" in svg
    (2, True)
    """
    v = np.asarray(values, dtype=np.float64)
    lo = min(0.0, float(v.min())) if lo is None else lo
    hi = max(0.0, float(v.max())) if hi is None else hi
    span = (hi - lo) or 1.0
    bw, gap, h, top = 50, 14, 150, 34
    # a negative bar's value is written under the bar's end, which can reach the axis's
    # bottom (a score of -10 on a -10..10 scale): the names then move one line further down
    below = 16 if (v < 0).any() else 0
    bottom = 26 + below
    width = max(len(v) * (bw + gap) + gap, 8 * len(title) + 16)
    left0 = (width - len(v) * (bw + gap) + gap) / 2

    def y(x: float) -> float:
        return top + (hi - x) / span * h

    parts = [
        _svg_open(width, top + h + bottom, description),
        f'<text x="{width / 2:g}" y="15" text-anchor="middle" font-weight="bold">'
        f"{_esc(title)}</text>",
        f'<line x1="0" x2="{width:g}" y1="{y(0):.1f}" y2="{y(0):.1f}" stroke="{INK}"/>',
    ]
    for k, (x, lab) in enumerate(zip(v, labels, strict=True)):
        left = left0 + k * (bw + gap)
        y0, y1 = sorted((y(0.0), y(float(x))))
        parts.append(
            f'<rect x="{left:g}" y="{y0:.1f}" width="{bw}" height="{max(y1 - y0, 0.5):.1f}" '
            f'fill="{colour}" stroke="{INK}" stroke-width="0.6"/>'
        )
        ty = y(float(x)) - 5 if x >= 0 else y(float(x)) + 14
        parts.append(f'<text x="{left + bw / 2:g}" y="{ty:.1f}" text-anchor="middle">'
                     f"{format_number(float(x), decimals)}</text>")
        parts.append(f'<text x="{left + bw / 2:g}" y="{top + h + 18 + below}" text-anchor="middle">'
                     f"{_esc(lab)}</text>")
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
    """A small inline-SVG histogram with its range written under the x-axis.

    Examples
    --------
    >>> svg = histogram_svg([0.0, 0.1, 0.9], bins=2, value_range=(0.0, 1.0))
    >>> svg.count("<rect")
    2
    """
    d = np.asarray(data, dtype=np.float64)
    counts, edges = np.histogram(d, bins=bins, range=value_range)
    w, h, top, bottom, pad = 330, 120, 24, 38, 24
    peak = counts.max() or 1
    bw = w / bins
    parts = [
        _svg_open(w + 2 * pad, top + h + bottom, description),
        f'<text x="{w / 2 + pad:g}" y="15" text-anchor="middle" font-weight="bold">'
        f"{_esc(title)}</text>",
    ]
    for k, c in enumerate(counts):
        bh = c / peak * h
        parts.append(
            f'<rect x="{pad + k * bw:.1f}" y="{top + h - bh:.1f}" width="{bw:.1f}" '
            f'height="{bh:.1f}" fill="{colour}" stroke="{INK}" stroke-width="0.3"/>'
        )
    base = top + h
    parts.append(f'<line x1="{pad}" x2="{w + pad}" y1="{base}" y2="{base}" stroke="{INK}"/>')
    for x in (pad, w / 2 + pad, w + pad):
        value = edges[0] + (x - pad) / w * (edges[-1] - edges[0])
        parts.append(f'<text x="{x:g}" y="{base + 14}" text-anchor="middle">{value:.3g}</text>')
    parts.append(f'<text x="{w / 2 + pad:g}" y="{base + 31}" text-anchor="middle">'
                 f"{_esc(xlabel)}</text>")
    parts.append("</svg>")
    return "".join(parts)


# --------------------------------------------------------------------------------------
# 2-D pictures: the blend, vectors as arrows
# --------------------------------------------------------------------------------------


def blend_svg(
    weights_row: ArrayLike,
    values: ArrayLike,
    labels: Sequence[str],
    *,
    decimals: int = 2,
    description: str = "",
) -> str:
    """Inline SVG: the values as the corners of their convex hull, the output as a star.

    Examples
    --------
    >>> svg = blend_svg([0.5, 0.5, 0.0], [[1, 0], [0, 2], [2, 2]], ["the", "cat", "sat"])
    >>> ">output [0.50, 1.00]</text>" in svg
    True
    """
    w = np.asarray(weights_row, dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    out = w @ v
    pts = np.vstack([v, out])
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    span = max(float((hi - lo).max()), 1.0)
    lo = lo - 0.2 * span
    scale = 260 / (1.4 * span)
    size, right = 300, 140

    def xy(p: NDArray[np.float64]) -> tuple[float, float]:
        return 20 + (p[0] - lo[0]) * scale, size - 20 - (p[1] - lo[1]) * scale

    parts = [_svg_open(size + right, size, description)]
    hull = convex_hull(v)
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
        parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="6" fill="{BLUE}" '
                     f'stroke="{INK}"/>')
        parts.append(f'<text x="{x + 9:.1f}" y="{max(y - 8, 12):.1f}">v_{_esc(lab)} '
                     f"{format_number(float(a), decimals)}</text>")
    star = " ".join(
        f"{ox + r * np.sin(t):.1f},{oy - r * np.cos(t):.1f}"
        for k, t in enumerate(np.linspace(0, 2 * np.pi, 11)[:-1])
        for r in [9 if k % 2 == 0 else 4]
    )
    parts.append(f'<polygon points="{star}" fill="{ORANGE}" stroke="{INK}"/>')
    parts.append(f'<text x="{ox + 10:.1f}" y="{oy + 16:.1f}">output '
                 f"[{format_number(out[0], decimals)}, {format_number(out[1], decimals)}]"
                 "</text>")
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
    (blue), or the moved key against every query. The axes stay fixed at ``±lim``; a name
    near the right or top edge is written on the inner side of its arrow's tip, so it is
    never cut off.

    Examples
    --------
    >>> svg = vectors_svg(np.array([3.0, 0.0]), "q_sat", np.eye(2), ["k_a", "k_b"], lim=3.0)
    >>> 'text-anchor="end">q_sat</text>' in svg
    True
    """
    size, pad = 280, 40
    scale = (size / 2 - pad) / lim
    parts = [
        _svg_open(size, size, description),
        '<defs><marker id="arrow-head" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" '
        'markerHeight="6" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
        'fill="context-stroke"/></marker></defs>',
        f'<line x1="0" x2="{size}" y1="{size / 2:g}" y2="{size / 2:g}" stroke="{INK}" '
        'stroke-opacity="0.35"/>',
        f'<line y1="0" y2="{size}" x1="{size / 2:g}" x2="{size / 2:g}" stroke="{INK}" '
        'stroke-opacity="0.35"/>',
    ]
    for p, lab, colour, width in [
        *((o, t, BLUE, 1.5) for o, t in zip(others, other_labels, strict=True)),
        (moved, moved_label, ORANGE, 3.0),
    ]:
        x, y = size / 2 + p[0] * scale, size / 2 - p[1] * scale
        parts.append(
            f'<line x1="{size / 2:g}" y1="{size / 2:g}" x2="{x:.1f}" y2="{y:.1f}" '
            f'stroke="{colour}" stroke-width="{width}" marker-end="url(#arrow-head)"/>'
        )
        # The name goes just beyond the tip, along the arrow (so names of arrows that
        # start together do not overlap), pulled back inside the picture near its edges.
        length = float(np.hypot(*p)) or 1.0
        ux, uy = p[0] / length, -p[1] / length
        tx, ty = x + 10 * ux, y + 10 * uy + 4
        anchor = "start" if ux > 0.35 else "end" if ux < -0.35 else "middle"
        if tx > size - 60:
            anchor, tx = "end", min(tx, size - 2.0)
        elif tx < 60 and anchor != "start":
            anchor, tx = "start", max(tx, 2.0)
        ty = min(max(ty, 14.0), size - 4.0)
        parts.append(f'<text x="{tx:.1f}" y="{ty:.1f}" text-anchor="{anchor}">'
                     f"{_esc(lab)}</text>")
    parts.append("</svg>")
    return "".join(parts)
