"""course_lib.experiments.training: the training run that measures what 1/sqrt(d_k) does."""

from __future__ import annotations

import re

import numpy as np
import pytest

from course_lib import AttentionInputError
from course_lib.backward import numerical_gradient
from course_lib.experiments.training import (
    BATCH_SIZE,
    D_MODEL,
    LEARNING_RATES,
    format_table,
    initial_weights,
    loss_and_gradients,
    main,
    sample_batch,
    train,
    training_table,
    tune_learning_rate,
)


def test_the_same_seed_gives_the_same_run_and_another_seed_another():
    a = train(8, optimiser="adam", steps=30, seed=4)
    b = train(8, optimiser="adam", steps=30, seed=4)
    c = train(8, optimiser="adam", steps=30, seed=5)
    for name in ("loss", "accuracy", "grad_norm_wq", "entropy", "W_Q", "W_K"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert a.final_loss == b.final_loss
    assert not np.array_equal(a.loss, c.loss)


def test_scaled_and_unscaled_runs_see_the_same_data():
    """Same seed: the same start, so the first step's entropy differs only by the scale."""
    a = train(64, scale=True, steps=1, seed=0)
    b = train(64, scale=False, steps=1, seed=0)
    W_Q, W_K = initial_weights(64, seed=0)
    batch = sample_batch(seed=0)
    assert a.loss[0] == pytest.approx(loss_and_gradients(W_Q, W_K, batch, scale=True)[0])
    assert b.loss[0] == pytest.approx(loss_and_gradients(W_Q, W_K, batch, scale=False)[0])
    assert b.entropy[0] < a.entropy[0]  # unscaled scores are 8 times as large at d_k = 64


@pytest.mark.parametrize("scale", [True, False])
def test_training_gradient_matches_finite_differences_of_the_training_loss(scale):
    W_Q, W_K = initial_weights(3, seed=1)
    W_Q, W_K = W_Q * 0.5, W_K * 0.5  # a start where the softmax is not saturated
    batch = sample_batch(seed=1, n=5)
    _, dW_Q, dW_K = loss_and_gradients(W_Q, W_K, batch, scale=scale)

    def loss_q(W):
        return loss_and_gradients(W, W_K, batch, scale=scale)[0]

    def loss_k(W):
        return loss_and_gradients(W_Q, W, batch, scale=scale)[0]

    np.testing.assert_allclose(dW_Q, numerical_gradient(loss_q, W_Q), rtol=1e-5, atol=1e-9)
    np.testing.assert_allclose(dW_K, numerical_gradient(loss_k, W_K), rtol=1e-5, atol=1e-9)


@pytest.mark.parametrize("scale", [True, False])
def test_train_steps_along_that_gradient(scale):
    """One SGD step of train() is the start minus the rate times loss_and_gradients'."""
    run = train(4, scale=scale, optimiser="sgd", learning_rate=0.5, steps=1, seed=2)
    W_Q, W_K = initial_weights(4, seed=2)
    loss, dW_Q, dW_K = loss_and_gradients(W_Q, W_K, sample_batch(seed=2), scale=scale)
    np.testing.assert_allclose(run.W_Q, W_Q - 0.5 * dW_Q)
    np.testing.assert_allclose(run.W_K, W_K - 0.5 * dW_K)
    assert run.loss[0] == loss
    assert run.grad_norm_wq[0] == pytest.approx(np.linalg.norm(dW_Q))


def test_records_have_one_entry_per_step_in_their_ranges():
    run = train(16, steps=40, seed=0)
    for name in ("loss", "accuracy", "grad_norm_wq", "entropy"):
        assert getattr(run, name).shape == (40,)
    assert ((run.accuracy >= 0) & (run.accuracy <= 1)).all()
    assert ((run.entropy >= 0) & (run.entropy <= np.log(8) + 1e-12)).all()
    assert run.W_Q.shape == run.W_K.shape == (D_MODEL, 16)
    assert sample_batch(seed=0).queries.shape == (BATCH_SIZE, 1, D_MODEL)


def test_a_small_run_shows_what_the_table_shows():
    """Adam at the rate the table tunes: the scale hardly matters at d_k = 16, at 256 it does.

    (The table's numbers, python -m course_lib.experiments.training: d_k 16, final loss 0.081
    scaled / 0.088 unscaled; d_k 256, 0.076 / 0.199.)
    """
    small = [train(16, scale=s, learning_rate=0.003, seed=0).final_loss for s in (True, False)]
    large = [train(256, scale=s, learning_rate=0.003, seed=0).final_loss for s in (True, False)]
    assert abs(small[1] - small[0]) < 0.25 * small[0]
    assert large[1] > 1.8 * large[0]
    # and both learnt something at d_k = 16: the uniform start has loss 0.4375
    assert max(small) < 0.15


def test_tuning_picks_a_rate_of_the_grid_by_held_out_loss():
    lr = tune_learning_rate(8, scale=True, optimiser="sgd", steps=20, seed=1000)
    losses = [train(8, optimiser="sgd", learning_rate=r, steps=20, seed=1000).final_loss
              for r in LEARNING_RATES["sgd"]]
    assert lr == LEARNING_RATES["sgd"][int(np.argmin(losses))]


def test_table_and_its_text():
    rows = training_table([8], seed=3, n_seeds=2, steps=10)
    assert [(r.d_k, r.optimiser, r.seeds) for r in rows] == [(8, "sgd", (3, 4)),
                                                              (8, "adam", (3, 4))]
    run = train(8, scale=False, optimiser="adam", learning_rate=rows[1].lr_unscaled, steps=10,
                seed=4)
    other = train(8, scale=False, optimiser="adam", learning_rate=rows[1].lr_unscaled,
                  steps=10, seed=3)
    assert rows[1].loss_unscaled == pytest.approx((run.final_loss + other.final_loss) / 2)
    lines = format_table(rows).splitlines()
    assert len(lines) == 3 and "final loss: scaled  unscaled" in lines[0]
    assert lines[2].split()[:2] == ["8", "adam"] and lines[2].endswith("3, 4")


def test_command_prints_the_table_and_is_deterministic(capsys):
    args = ["--d-k", "8", "--seeds", "1", "--steps", "10", "--seed", "7"]
    assert main(args) == 0
    first = capsys.readouterr().out
    main(args)
    assert capsys.readouterr().out == first
    lines = first.splitlines()
    assert "learning rate: the best held-out final loss of the grid on seed 1007" in lines[0]
    assert [ln.split()[:2] for ln in lines[2:]] == [["8", "sgd"], ["8", "adam"]]


def raises(match: str):
    return pytest.raises(AttentionInputError, match=re.escape(match))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"d_k": 0}, "d_k must be an integer >= 1 (got 0)"),
        ({"d_k": 2.0}, "d_k must be an integer >= 1 (got 2.0)"),
        ({"d_k": 4, "steps": 0}, "steps must be an integer >= 1 (got 0)"),
        ({"d_k": 4, "seed": -1}, "seed must be an integer >= 0 (got -1)"),
        ({"d_k": 4, "optimiser": "rmsprop"},
         "optimiser must be one of 'sgd', 'adam' (got 'rmsprop')"),
        ({"d_k": 4, "learning_rate": -0.1},
         "learning_rate must be a positive finite number (got -0.1)"),
        ({"d_k": 4, "learning_rate": float("nan")},
         "learning_rate must be a positive finite number (got nan)"),
        ({"d_k": 4, "learning_rate": "0.1"},
         "learning_rate must be a positive finite number (got '0.1')"),
    ],
)
def test_bad_arguments_are_named(kwargs, message):
    with raises(message):
        train(**kwargs)


def test_bad_table_and_command_arguments(capsys):
    with raises("d_ks and optimisers must each list at least one entry (got [] and"):
        training_table([])
    with raises("n_seeds must be an integer >= 1 (got 0)"):
        training_table([8], n_seeds=0)
    with pytest.raises(SystemExit) as exit_info:
        main(["--d-k", "0"])
    assert exit_info.value.code == 2
    assert "--d-k must be an integer >= 1 (got 0)" in capsys.readouterr().err
    for flag, value, message in (("--seeds", "0", "--seeds must be an integer >= 1 (got 0)"),
                                 ("--seed", "-2", "--seed must be an integer >= 0 (got -2)"),
                                 ("--steps", "0", "--steps must be an integer >= 1 (got 0)")):
        with pytest.raises(SystemExit):
            main([flag, value])
        assert message in capsys.readouterr().err
