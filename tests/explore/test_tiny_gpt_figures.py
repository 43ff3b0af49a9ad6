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
