"""course_lib.explore.style: one palette, one theme rule, a heatmap scale that tells apart."""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib as mpl
import numpy as np
import pytest

from course_lib import attention_weights, the_cat_sat
from course_lib.explore.style import (
    CMAP,
    MASKED,
    MASKED_STRIPE,
    MASKED_TEXT,
    cell_colours,
    contrast_ratio,
    heatmap_range,
    luminance,
    text_colour,
)

LIBRARY = Path(__file__).resolve().parents[2] / "course_lib"


def test_contrast_ratio_is_wcags():
    assert contrast_ratio("black", "white") == pytest.approx(21.0)
    assert contrast_ratio("#777777", "white") == pytest.approx(4.48, abs=0.01)
    assert contrast_ratio("white", "#777777") == contrast_ratio("#777777", "white")
    assert float(luminance("white")) == pytest.approx(1.0)


def test_text_on_every_heatmap_colour_passes_wcag_aa():
    values = np.linspace(0.0, 1.0, 257)
    codes, black = cell_colours(values, 0.0, 1.0)
    for code, is_black in zip(codes, black, strict=True):
        background = f"#{int(code):06x}"
        ink = "black" if is_black else "white"
        assert ink == text_colour(background)
        assert contrast_ratio(ink, background) >= 4.5, background


def test_masked_cells_are_legible():
    for background in (MASKED, MASKED_STRIPE):
        assert contrast_ratio(MASKED_TEXT, background) >= 4.5


def test_heatmap_range():
    """Weights: always 0 … 1, one scale in every lesson (issue 30); scores: their range."""
    ex = the_cat_sat()
    assert heatmap_range(attention_weights(ex.Q, ex.K), "weights") == (0.0, 1.0)
    assert heatmap_range([[0.51, 0.49]], "weights") == (0.0, 1.0)
    assert heatmap_range([[1.0, 0.0]], "weights") == (0.0, 1.0)
    assert heatmap_range([[0.01, 0.0]], "weights") == (0.0, 1.0)
    assert heatmap_range([[-2.0, np.inf, 3.0, -np.inf]], "scores") == (-2.0, 3.0)
    assert heatmap_range([[2.0, 2.0]], "scores") == (1.0, 3.0)


# Simulated colour-vision deficiencies (Machado, Oliveira & Fernandes 2009, severity 1.0),
# applied to linear RGB.
CVD = {
    "normal": np.eye(3),
    "protanopia": np.array([[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216],
                            [-0.003882, -0.048116, 1.051998]]),
    "deuteranopia": np.array([[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413],
                              [-0.011820, 0.042940, 0.968881]]),
    "tritanopia": np.array([[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602],
                            [0.004733, 0.691367, 0.303900]]),
}


def _lab(linear_rgb: np.ndarray) -> np.ndarray:
    xyz = linear_rgb @ np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722],
                                 [0.0193, 0.1192, 0.9505]]).T
    t = xyz / np.array([0.95047, 1.0, 1.08883])
    f = np.where(t > (6 / 29) ** 3, np.cbrt(t), t / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.stack([116 * f[:, 1] - 16, 500 * (f[:, 0] - f[:, 1]),
                     200 * (f[:, 1] - f[:, 2])], axis=-1)


@pytest.mark.parametrize("vision", list(CVD))
def test_weights_a_tenth_apart_are_told_apart(vision):
    """On the 0 … 1 weights scale, weights 0.1 apart are >= 7 CIELAB units apart, in any vision.

    The worked example's 0.20, 0.40 and 0.50 are told apart by colour; 0.20 and 0.25 only by
    the numbers written in the cells (on one 0 … 1 scale, 0.05 cannot span 10 units).
    """
    ex = the_cat_sat()
    lo, hi = heatmap_range(attention_weights(ex.Q, ex.K), "weights")
    weights = np.round(np.arange(0.0, 1.01, 0.1), 2)
    rgb = mpl.colormaps[CMAP]((weights - lo) / (hi - lo))[:, :3]
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    lab = _lab(np.clip(linear @ CVD[vision].T, 0.0, 1.0))
    gaps = np.linalg.norm(np.diff(lab, axis=0), axis=-1)
    assert gaps.min() >= 7, f"{vision}: a 0.1 step only {gaps.min():.1f} apart"
    assert np.all(np.diff(lab[:, 0]) > 0), "lightness must rise with the weight (greyscale)"


def test_one_palette_one_luminance_rule():
    """Colours and the luminance formula are written once, in style.py."""
    for path in LIBRARY.glob("*.py"):
        if path.name == "style.py":
            continue
        source = path.read_text(encoding="utf-8")
        assert not re.search(r"#[0-9A-Fa-f]{6}\b", source), f"{path.name}: a colour literal"
        assert "0.2126" not in source and "0.04045" not in source, f"{path.name}: luminance"
