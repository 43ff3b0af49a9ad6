"""The course's one palette and its one theme rule, shared by figures and widgets.

Figures (:mod:`course_lib.explore.plots`) and widgets (:mod:`course_lib.explore.render`) take
every colour from here, so a colour changes in one place and the two never drift apart.

Palette
-------
``BLUE``, ``ORANGE``, ``GREEN``, ``VERMILION``, ``GREY``
    Okabe–Ito colours: told apart with every common colour-vision deficiency. Blue draws
    scores and value vectors, orange weights and outputs, vermilion what goes wrong.
``CMAP``
    The colour map of every heatmap, ``magma``: perceptually uniform, its lightness rises
    monotonically (so it reads in greyscale and with any colour-vision deficiency).
``MASKED``, ``MASKED_STRIPE``, ``MASKED_TEXT``, ``HATCH``
    A masked (hidden) cell, its second stripe, the word "masked" written on it, and the
    hatching over it in figures.
``PAPER``, ``PAPER_INK``
    A figure's own background and its lines and text: figures keep a white page, so they
    read the same in JupyterLab's light and dark themes.
``RING``
    The outline of a highlighted heatmap cell: a white ring inside a black one (CSS),
    visible on any cell colour and any page.

Rules
-----
``heatmap_range(values, kind)``
    The colour scale of a heatmap: weights always from 0 to 1, the whole budget of a row,
    in every lesson (weights 0.1 apart are told apart even in greyscale; the numbers in the
    cells tell closer ones apart), scores from their smallest to largest.
``text_colour(rgb)``
    Black or white, whichever contrasts more with a coloured background (WCAG relative
    luminance); the better of the two always reaches 4.58:1, above WCAG AA's 4.5:1.
``cell_colours(values, vmin, vmax)``
    Hex colours of heatmap cells and, for each, the text colour from :func:`text_colour`.
``INK``
    Text and lines of the widgets that sit on the page itself (axis labels, values above
    bars, arrow names) are drawn in ``currentColor``: the colour JupyterLab gives the text
    of an output, which follows its light and dark themes (``--jp-content-font-color1``).
    Only what has a background of its own (a heatmap cell) gets a fixed text colour.

Examples
--------
>>> text_colour((0.0, 0.0, 0.0)), text_colour((1.0, 1.0, 0.8))
('white', 'black')
>>> heatmap_range([[0.4, 0.2, 0.4], [0.25, 0.25, 0.5]], "weights")
(0.0, 1.0)
>>> round(contrast_ratio((0, 0, 0), (1, 1, 1)), 1)
21.0
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "BLUE",
    "CMAP",
    "GREEN",
    "GREY",
    "HATCH",
    "INK",
    "MASKED",
    "MASKED_STRIPE",
    "MASKED_TEXT",
    "ORANGE",
    "PAPER",
    "PAPER_INK",
    "RING",
    "VERMILION",
    "cell_colours",
    "contrast_ratio",
    "heatmap_range",
    "luminance",
    "text_colour",
]

#: Okabe–Ito colours: distinguishable with every common colour-vision deficiency.
BLUE, ORANGE, GREEN, VERMILION, GREY = "#0072B2", "#E69F00", "#009E73", "#D55E00", "#7f7f7f"
#: The colour map of every heatmap (figures and widgets).
CMAP = "magma"
#: A masked cell (striped in two greys), and the text written on it (contrast >= 7.3:1).
MASKED, MASKED_STRIPE, MASKED_TEXT = "#d9d9d9", "#f2f2f2", "#404040"
#: The hatching over masked cells in figures.
HATCH = "#8c8c8c"
#: Text and lines drawn on the page itself: the theme's text colour.
INK = "currentColor"
#: A figure's background, and its lines and text.
PAPER, PAPER_INK = "white", "black"
#: CSS for the outline of a highlighted cell: white inside black, visible on any colour.
RING = "box-shadow:inset 0 0 0 2px #fff,inset 0 0 0 4px #000"


def _rgb(colour: str | Sequence[float]) -> NDArray[np.float64]:
    if isinstance(colour, str):
        from matplotlib.colors import to_rgb  # matplotlib when first needed, see plots._figure

        return np.asarray(to_rgb(colour), dtype=np.float64)
    return np.asarray(colour, dtype=np.float64)[..., :3]


def luminance(colour: str | ArrayLike) -> Any:
    """WCAG relative luminance of an sRGB colour (0 = black, 1 = white).

    ``colour`` is a colour name or hex string, or an array of RGB(A) values in 0 … 1 whose
    last axis holds the channels (then an array of luminances is returned).
    """
    c = _rgb(colour)  # type: ignore[arg-type]
    lin = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return lin @ np.array([0.2126, 0.7152, 0.0722])


def contrast_ratio(a: str | ArrayLike, b: str | ArrayLike) -> float:
    """WCAG contrast ratio of two colours, from 1 (none) to 21 (black on white)."""
    la, lb = float(luminance(a)), float(luminance(b))
    return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)


def _black_wins(lum: Any) -> Any:
    """Whether black text contrasts more than white with a background of luminance ``lum``."""
    return (lum + 0.05) / 0.05 >= 1.05 / (lum + 0.05)


def text_colour(background: str | ArrayLike) -> Literal["black", "white"]:
    """Black or white text, whichever contrasts more with ``background``."""
    return "black" if _black_wins(float(luminance(background))) else "white"


def heatmap_range(values: ArrayLike, kind: Literal["weights", "scores"]) -> tuple[float, float]:
    """The (vmin, vmax) of a heatmap's colour scale; ``-inf`` and NaN entries are ignored.

    Weights always run from 0 to 1, the whole budget of a row, in every figure and widget
    of every lesson: a weight of 0.50 is half the colour scale wherever it is drawn (a
    scale that ended at the largest weight once made 0.50 look like "all attention" in
    lessons 01 and 06, issue 30). Scores run from their smallest to their largest value
    (one either side when all are equal).

    Examples
    --------
    >>> heatmap_range([[0.25, 0.25, 0.5]], "weights")
    (0.0, 1.0)
    >>> heatmap_range([[-2.0, 3.0]], "scores")
    (-2.0, 3.0)
    """
    if kind == "weights":
        return (0.0, 1.0)
    v = np.asarray(values, dtype=np.float64)
    finite = v[np.isfinite(v)]
    if finite.size == 0:
        return (0.0, 1.0)
    lo, hi = float(finite.min()), float(finite.max())
    return (lo - 1.0, hi + 1.0) if lo == hi else (lo, hi)


def cell_colours(
    values: ArrayLike, vmin: float, vmax: float
) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
    """Heatmap cell colours as 24-bit integers, and whether each cell takes black text.

    NaN and infinite entries get the colour of ``vmin`` (callers draw masked cells
    themselves).
    """
    v = np.nan_to_num(np.asarray(values, dtype=np.float64), nan=vmin, posinf=vmax,
                      neginf=vmin)
    t = np.clip((v - vmin) / ((vmax - vmin) or 1.0), 0.0, 1.0)
    from matplotlib import colormaps  # matplotlib when first needed, see plots._figure

    rgba = colormaps[CMAP](t)
    rgb8 = np.round(rgba[..., :3] * 255).astype(np.int64)
    code = (rgb8[..., 0] << 16) | (rgb8[..., 1] << 8) | rgb8[..., 2]
    return code, _black_wins(luminance(rgba))
