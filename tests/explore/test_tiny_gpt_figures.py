"""course_lib.explore.tiny_gpt_figures: each figure's words come from its numbers."""

from __future__ import annotations

import re

import numpy as np
import pytest

from course_lib import AttentionInputError
from course_lib.explore import tiny_gpt_figures
from course_lib.tiny_gpt import forward, load_model, make_batch
from course_lib.tiny_gpt.model import init_model


def test_the_training_curve_says_the_recorded_numbers():
    loaded = load_model()
    curve = loaded.curve
    fig = tiny_gpt_figures.training_curve(loaded)
    assert f"{curve['loss'][0]:.2f} at step {curve['steps'][0]}" in fig.description
    assert f"{curve['held_out_accuracy'][-1]:.1%} at the end" in fig.description
    assert loaded.command in fig.description
    half = next(s for s, a in zip(curve["steps"], curve["held_out_accuracy"], strict=True)
                if a >= 0.5)
    assert f"past 50% at step {half}" in fig.description
    assert fig.svg().startswith(b"<?xml")
    with pytest.raises(AttentionInputError, match="loaded must be what"):
        tiny_gpt_figures.training_curve({"steps": []})


def test_the_head_maps_count_what_each_row_looks_at_most():
    model = init_model(seed=2)  # any weights: the words must follow the numbers
    batch = make_batch(2, seed=5)
    fig = tiny_gpt_figures.head_maps(model, batch, 1)
    w = forward(model, batch.tokens[1]).weights
    s, d, k = int(batch.first[1]), int(batch.second[1]), int(batch.length[1])
    for layer in range(2):
        for head in range(2):
            top = w[layer, head].argmax(axis=-1)
            previous = int(sum(top[t] == t - 1 for t in range(1, 24)))
            induction = int(sum(top[t] == s + t - d + 1 for t in range(d, d + k - 1)))
            said = re.search(rf"Head {layer}\.{head}: (\d+) of 23 positions look most at the "
                             rf"letter just before them;.*? (\d+) look most at the letter after",
                             fig.description)
            assert said and (int(said.group(1)), int(said.group(2))) == (previous, induction)
    assert batch.marked(1) in fig.caption
    assert not np.isnan(w).any()
    with pytest.raises(AttentionInputError, match=r"batch must be a course_lib\.tiny_gpt\.Batch"):
        tiny_gpt_figures.head_maps(model, batch, 2)


def test_the_head_maps_count_each_row_once():
    """Row 1's letter just before it is the first letter: the words count it as "just
    before" only, so "at the first letter" counts rows 2 on. On the lesson's sequence every
    head's row 1 was counted twice (0.1: "1 at the first letter", now none)."""
    model = load_model().model
    batch = make_batch(1, seed=6)
    description = tiny_gpt_figures.head_maps(model, batch).description
    w = forward(model, batch.tokens[0]).weights
    for layer in range(2):
        for head in range(2):
            top = w[layer, head].argmax(axis=-1)
            rows = np.arange(1, 24)
            top2 = np.sort(w[layer, head][rows], axis=-1)[:, -2:]
            assert (top2[:, 1] - top2[:, 0] > 1e-6).all()  # no argmax on a tie
            first = int((top[2:] == 0).sum())
            [words] = re.findall(rf"Head {layer}\.{head}: (.*?)(?:\. Head|\.$)", description)
            said = re.search(r"; (\d+) at the first letter", words)
            assert (int(said.group(1)) if said else 0) == first, (layer, head, words)
            counts = re.findall(r"(\d+)(?: of 23 positions look most at the letter just "
                                r"before them| at themselves| at the first letter)", words)
            assert sum(map(int, counts)) <= 23  # no row counted twice


def test_each_head_maps_title_sits_in_the_gap_clear_of_every_map():
    """Each title lies above its own map, and clear of the map above it: the lower row's
    titles once nearly touched the upper maps (issue 46: 9 px at 100 dpi, under a line)."""
    fig = tiny_gpt_figures.head_maps(load_model().model, make_batch(1, seed=6))
    figure = fig.figure
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(figure).get_renderer()
    [ax] = [a for a in figure.axes if a.images and a.texts]
    maps = ax.images[0].get_array()
    filled = ~np.ma.getmaskarray(maps) & ~np.isnan(np.ma.filled(maps, np.nan))
    rows = np.flatnonzero(filled.any(axis=1))
    # the maps' row bands in data rows: each band is a run of consecutive filled rows
    bands = np.split(rows, np.flatnonzero(np.diff(rows) > 1) + 1)
    assert len(bands) == 2, len(bands)
    to_data = ax.transData.inverted()
    line = 10 / 72 * figure.dpi  # one 10-point line, in pixels
    for text in ax.texts:
        box = text.get_window_extent(renderer)
        top, bottom = sorted(to_data.transform([(box.x0, box.y1), (box.x0, box.y0)])[:, 1])
        below = [b for b in bands if b[0] - 0.5 >= bottom]  # its own map: the next band
        above = [b for b in bands if b[-1] + 0.5 <= top]
        assert below, (text.get_text(), top, bottom)
        if above:  # a title between two maps: a whole line clear of the one above
            gap_px = (ax.transData.transform((0, top))[1]
                      - ax.transData.transform((0, above[-1][-1] + 0.5))[1])
            assert abs(gap_px) >= line, (text.get_text(), gap_px, line)
