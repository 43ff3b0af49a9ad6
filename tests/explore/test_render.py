"""course_lib.explore.render: the widgets' pictures follow the theme and carry their words."""

from __future__ import annotations

import html
import re

import numpy as np
import pytest

from course_lib.explore import widgets
from course_lib.explore.render import (
    bars_svg,
    blend_svg,
    caption_html,
    heatmap_html,
    histogram_svg,
    vectors_svg,
)
from course_lib.explore.style import contrast_ratio

PICTURES = {
    "bars": lambda: bars_svg([1.0, -0.5, 2.0], ["a", "b", "c"], title="scores",
                             description="d"),
    "histogram": lambda: histogram_svg(np.linspace(-1, 1, 50), title="q·k", xlabel="score",
                                       description="d"),
    "blend": lambda: blend_svg([0.25, 0.25, 0.5], [[1, 0], [0, 2], [2, 2]], ["a", "b", "c"],
                               description="d"),
    "vectors": lambda: vectors_svg(np.array([1.0, 1.0]), "q_c", np.eye(2), ["k_a", "k_b"],
                                   lim=3.0, description="d"),
}


def every_view_html() -> dict[str, str]:
    """What each lesson explorer shows, in a few states."""
    out = {}
    for name in widgets.__all__:
        builder = getattr(widgets, name)
        if not callable(builder) or name in ("Explorer", "View"):
            continue
        ex = builder()
        out[name] = ex.view.html
        if name == "causal_mask_explorer":
            ex.set(masked=True)
            out[name + " masked"] = ex.view.html
        if name == "step_explorer":
            for step in ("scaled", "softmax", "output"):
                ex.set(step=step)
                out[f"{name} {step}"] = ex.view.html
    return out


@pytest.mark.parametrize("name", list(PICTURES))
def test_svg_text_and_lines_take_the_themes_colour(name):
    """In the dark theme, fixed black text vanishes: SVG ink is currentColor."""
    svg = PICTURES[name]()
    assert re.match(r'<svg [^>]*fill="currentColor"', svg)
    assert not re.search(r"<text[^>]* fill=", svg), "text must inherit the theme's colour"
    assert "black" not in svg and "#000" not in svg
    assert 'role="img" aria-label="d"' in svg


def test_explorer_pictures_set_no_text_colour_outside_coloured_cells():
    for name, page in every_view_html().items():
        outside_cells = re.sub(r"<td [^>]*>[^<]*</td>", "", page)
        assert not re.search(r"(?<![-\w])color:", outside_cells), name
        assert not re.search(r'fill="(black|#000)', outside_cells), name


def test_text_in_coloured_cells_passes_wcag_aa():
    for name, page in every_view_html().items():
        for style in re.findall(r'<td style="([^"]*)"', page):
            colour = re.search(r"(?<![-\w])color:([^;]+)", style).group(1)
            background = re.search(r"background:(#[0-9a-f]{6}|repeating-linear-gradient"
                                   r"\(45deg,(#[0-9a-f]{6}))", style)
            assert background, style
            ground = background.group(2) or background.group(1)
            assert contrast_ratio(colour, ground) >= 4.5, (name, style)


def test_caption_is_full_size_text_at_a_normal_line_height():
    """JupyterLab sets widget HTML at a 28 px line height: the caption sets its own."""
    page = caption_html("The output lies inside the triangle.")
    assert "line-height:1.5" in page and "font-size:var(--jp-content-font-size1, 14px)" in page
    assert 'aria-live="polite"' in page
    assert html.unescape(re.sub(r"<[^>]+>", "", page)) == "The output lies inside the triangle."


def test_heatmap_ring_marks_the_highlighted_row():
    page = heatmap_html([[0.2, 0.8], [0.5, 0.5]], ["a", "b"], ["a", "b"], highlight_row=1)
    rows = re.findall(r"<tr>(.*?)</tr>", page)
    assert ["box-shadow:inset" in r for r in rows[1:]] == [False, True]


@pytest.mark.parametrize("tip", [(3, 0), (3, 3), (-3, 3), (-3, -3), (0, 3), (2.9, -0.2)])
def test_vector_names_stay_inside_the_picture(tip):
    """A name at an arrow's tip near the edge used to be cut off ("q_")."""
    svg = vectors_svg(np.array(tip, float), "q_sat", np.zeros((0, 2)), [], lim=3.0)
    width = float(re.search(r'width="([\d.]+)"', svg).group(1))
    x, y, anchor = re.search(r'<text x="([-\d.]+)" y="([-\d.]+)" text-anchor="(\w+)"',
                             svg).groups()
    x, y = float(x), float(y)
    text_width = 7.5 * len("q_sat")  # 12 px sans-serif: at most 7.5 px a character
    left = {"start": x, "middle": x - text_width / 2, "end": x - text_width}[anchor]
    assert 0 <= left and left + text_width <= width, (tip, x, y)
    assert 12 <= y <= width
