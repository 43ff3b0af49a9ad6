"""course_lib.tiny_gpt.train: Adam as written, and training deterministic for a seed."""

from __future__ import annotations

import numpy as np
import pytest

from course_lib import AttentionInputError
from course_lib.tiny_gpt import training as tr
from course_lib.tiny_gpt.model import init_model, reset_weights


def test_adam_is_kingma_and_ba_step_by_step():
    """Two steps by hand: bias-corrected moments, then the step."""
    adam = tr.Adam(learning_rate=0.1, beta1=0.9, beta2=0.99, eps=1e-8)
    p = {"w": np.array([1.0, -2.0])}
    g1, g2 = np.array([0.5, -1.0]), np.array([0.1, 0.3])
    p1 = adam.step(p, {"w": g1})
    np.testing.assert_allclose(p1["w"], p["w"] - 0.1 * g1 / (np.abs(g1) + 1e-8))
    p2 = adam.step(p1, {"w": g2}, scale=0.5)
    m = (0.9 * 0.1 * g1 + 0.1 * g2) / (1 - 0.9**2)
    v = (0.99 * 0.01 * g1**2 + 0.01 * g2**2) / (1 - 0.99**2)
    np.testing.assert_allclose(p2["w"], p1["w"] - 0.05 * m / (np.sqrt(v) + 1e-8))
    assert (p["w"] == [1.0, -2.0]).all(), "the old arrays are not written to"
    with pytest.raises(AttentionInputError, match="grads must name the same parameters"):
        adam.step(p, {"v": g1})
    with pytest.raises(AttentionInputError, match=r"beta2 must be a number in \[0, 1\)"):
        tr.Adam(beta2=1.0)


def test_training_is_deterministic_and_stop_after_is_the_start_of_the_run():
    config = tr.TrainingConfig(steps=12, eval_every=4, eval_size=30)
    a, b = tr.train(config), tr.train(config)
    np.testing.assert_array_equal(a.losses, b.losses)
    for name, value in a.model.parameters().items():
        np.testing.assert_array_equal(value, b.model.parameters()[name])
    first = tr.train(config, stop_after=5)
    np.testing.assert_array_equal(first.losses, a.losses[:5])
    assert a.eval_steps == (0, 4, 8, 12) and first.eval_steps == (0, 4, 5)
    assert a.losses[0] == pytest.approx(np.log(26), rel=1e-12)  # the unembedding starts at 0
    other = tr.train(tr.TrainingConfig(steps=12, eval_every=4, eval_size=30, seed=1))
    assert not np.array_equal(other.losses, a.losses)


def test_training_from_start_lowers_the_loss_of_an_erased_layer():
    """The lesson's live run, shorter: layer 1's W_Q and W_K drawn again, 12 steps."""
    from course_lib.tiny_gpt import load_model

    erased = reset_weights(load_model().model, 1)
    run = tr.train(tr.TrainingConfig(eval_every=6, eval_size=100), start=erased,
                   stop_after=12)
    assert run.losses[-3:].mean() < run.losses[:3].mean() - 0.3
    assert run.eval_accuracy[-1] > run.eval_accuracy[0] + 0.1
    with pytest.raises(AttentionInputError, match=r"start must be a TinyGPT of the config's "
                                                  r"shape, d_model = 32, 2 heads, 2 layers"):
        tr.train(start=init_model(d_model=8))
    with pytest.raises(AttentionInputError, match=r"stop_after must be a whole number from 1 "
                                                  r"to 1500 \(got 0\)"):
        tr.train(stop_after=0)
    with pytest.raises(AttentionInputError, match=r"learning_rate must be a number in \(0, 1\)"):
        tr.TrainingConfig(learning_rate=2.0)
