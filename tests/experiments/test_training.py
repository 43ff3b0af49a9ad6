"""Tests for course_lib.experiments.training: one head trained with and without 1/sqrt(d_k)."""

from __future__ import annotations

import json
import math
import os
import platform
import re
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from course_lib import AttentionInputError, attention, attention_backward
from course_lib.backward import numerical_gradient
from course_lib.experiments import training as T
from course_lib.experiments.training import (
    BATCH_SIZE,
    D_MODEL,
    LEARNING_RATES,
    LOSSES,
    NEAR_ZERO,
    TASKS,
    format_sweep,
    format_table,
    initial_weights,
    load_table,
    loss_and_gradients,
    main,
    row_gradients,
    sample_batch,
    train,
    training_table,
    tune_learning_rate,
)

ROOT = Path(__file__).resolve().parents[2]


def test_the_same_seed_gives_the_same_run_and_another_seed_another():
    a = train(8, steps=30, seed=4)
    b = train(8, steps=30, seed=4)
    c = train(8, steps=30, seed=5)
    for name in ("loss", "accuracy", "grad_norm_wq", "entropy", "near_zero", "score_move",
                 "W_Q", "W_K"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert a.final_loss == b.final_loss
    assert not np.array_equal(a.loss, c.loss)


@pytest.mark.parametrize("task", list(TASKS))
def test_scaled_and_unscaled_runs_see_the_same_data(task):
    """Same seed: the same start and batch, so step 0 differs only by the scale."""
    a = train(64, scale=True, task=task, steps=1, seed=0)
    b = train(64, scale=False, task=task, steps=1, seed=0)
    W_Q, W_K = initial_weights(64, seed=0)
    batch = sample_batch(task=task, seed=0)
    assert batch.keys.shape == (BATCH_SIZE, TASKS[task], D_MODEL)
    assert a.loss[0] == pytest.approx(loss_and_gradients(W_Q, W_K, batch, scale=True)[0])
    assert b.loss[0] == pytest.approx(loss_and_gradients(W_Q, W_K, batch, scale=False)[0])
    assert b.entropy[0] < a.entropy[0]  # unscaled scores are 8 times as large at d_k = 64


@pytest.mark.parametrize("task", list(TASKS))
def test_the_held_out_batch_is_what_a_run_is_measured_on_and_not_trained_on(task):
    run = train(16, task=task, steps=3, seed=2)
    held = T.held_out_batch(task=task, seed=2)
    after = row_gradients(run.W_Q, run.W_K, held)
    assert held.keys.shape == (T.EVAL_SIZE, TASKS[task], D_MODEL)
    assert float(after.correct.mean()) == run.final_accuracy
    assert float(after.loss.mean()) == run.final_loss and after.stuck == run.final_stuck
    trained_on = sample_batch(task=task, seed=2)  # the first of the run's batches
    assert not np.isin(held.queries[:, 0, 0], trained_on.queries[:, 0, 0]).any()
    with raises("task must be one of 'match', 'argmax' (got 'copy')"):
        T.held_out_batch(task="copy")
    with raises("seed must be an integer >= 0 (got -1)"):
        T.held_out_batch(seed=-1)


def test_the_argmax_task_targets_the_largest_hidden_score():
    batch = sample_batch(task="argmax", seed=3, n=50)
    U, V = T._hidden_rule("argmax", 3)
    hidden = np.einsum("nm,mr,nkl,lr->nk", batch.queries[:, 0], U, batch.keys, V)
    np.testing.assert_array_equal(batch.target, hidden.argmax(axis=1))
    match = sample_batch(task="match", seed=3, n=50)
    (rotation,) = T._hidden_rule("match", 3)
    key = match.keys[np.arange(50), match.target, :8]
    residual = key - match.queries[:, 0, :8] @ rotation.T
    assert 0.3 < residual.std() < 0.7  # NOISE = 0.5 around the rule


@pytest.mark.parametrize("task", list(TASKS))
@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("scale", [True, False])
def test_the_gradient_is_the_finite_differences_of_the_loss(task, loss, scale):
    W_Q, W_K = initial_weights(3, seed=1)
    W_Q, W_K = W_Q * 0.5, W_K * 0.5  # a start where the softmax is not saturated
    batch = sample_batch(task=task, seed=1, n=5)
    _, dW_Q, dW_K = loss_and_gradients(W_Q, W_K, batch, scale=scale, loss=loss)

    def loss_q(W):
        return loss_and_gradients(W, W_K, batch, scale=scale, loss=loss)[0]

    def loss_k(W):
        return loss_and_gradients(W_Q, W, batch, scale=scale, loss=loss)[0]

    np.testing.assert_allclose(dW_Q, numerical_gradient(loss_q, W_Q), rtol=1e-5, atol=1e-9)
    np.testing.assert_allclose(dW_K, numerical_gradient(loss_k, W_K), rtol=1e-5, atol=1e-9)


@pytest.mark.parametrize("scale", [True, False])
def test_the_output_error_gradient_is_lesson_12s_backward_pass(scale):
    """The loss on the output pV: attention_backward, then the chain rule through X W."""
    W_Q, W_K = initial_weights(16, seed=2)
    batch = sample_batch(seed=2, n=7)
    Q, K = batch.queries @ W_Q, batch.keys @ W_K
    values = np.eye(TASKS["match"])
    output, _ = attention(Q, K, values, scale=scale)
    dO = output.copy()
    dO[np.arange(7), 0, batch.target] -= 1.0
    dQ, dK, _ = attention_backward(Q, K, values, dO / 7, scale=scale)
    _, dW_Q, dW_K = loss_and_gradients(W_Q, W_K, batch, scale=scale)
    np.testing.assert_allclose(dW_Q, np.einsum("nqm,nqd->md", batch.queries, dQ), atol=1e-14)
    np.testing.assert_allclose(dW_K, np.einsum("nkm,nkd->md", batch.keys, dK), atol=1e-14)


def test_cross_entropy_hides_a_row_saturated_on_a_wrong_key():
    """A one-hot row on a wrong key: no gradient through softmax, |p - e| = sqrt 2 without."""
    W_Q, W_K = initial_weights(256, seed=0)
    batch = sample_batch(seed=0, n=512)
    through = row_gradients(W_Q, W_K, batch, scale=False, loss="output_error")
    direct = row_gradients(W_Q, W_K, batch, scale=False, loss="cross_entropy")
    wrong = (through.weights.max(axis=1) > 1 - 1e-6) & ~through.correct
    assert wrong.sum() >= 50
    assert through.score_grad[wrong].max() < 1e-5
    np.testing.assert_allclose(direct.score_grad[wrong], math.sqrt(2), rtol=1e-5)
    assert through.stuck == pytest.approx(((through.score_grad < NEAR_ZERO)
                                           & ~through.correct).mean())
    assert direct.stuck == 0.0


def test_row_gradients_are_each_examples_own():
    """The batch's dW_Q is the mean of the examples' dW_Q; each norm is |x_q| |dq|."""
    W_Q, W_K = initial_weights(8, seed=1)
    batch = sample_batch(seed=1, n=6)
    rows = row_gradients(W_Q, W_K, batch, scale=False)
    per_example = []
    for n in range(6):
        one = T.Batch("match", batch.queries[n:n + 1], batch.keys[n:n + 1], batch.target[n:n + 1])
        loss, dW_Q, _ = loss_and_gradients(W_Q, W_K, one, scale=False)
        assert loss == pytest.approx(rows.loss[n])
        assert np.linalg.norm(dW_Q) == pytest.approx(rows.wq_grad[n])
        per_example.append(dW_Q)
    np.testing.assert_allclose(np.mean(per_example, axis=0),
                               loss_and_gradients(W_Q, W_K, batch, scale=False)[1], atol=1e-15)
    assert rows.near_zero == float((rows.score_grad < NEAR_ZERO).mean())


@pytest.mark.parametrize("loss", LOSSES)
def test_train_steps_along_that_gradient(loss):
    """SGD: start minus rate times the gradient. Adam's first step: rate times g/|g|."""
    W_Q, W_K = initial_weights(4, seed=2)
    batch = sample_batch(seed=2)
    value, dW_Q, dW_K = loss_and_gradients(W_Q, W_K, batch, scale=False, loss=loss)
    sgd = train(4, scale=False, loss=loss, optimiser="sgd", learning_rate=0.5, steps=1, seed=2)
    np.testing.assert_allclose(sgd.W_Q, W_Q - 0.5 * dW_Q)
    np.testing.assert_allclose(sgd.W_K, W_K - 0.5 * dW_K)
    assert sgd.loss[0] == pytest.approx(value)
    assert sgd.grad_norm_wq[0] == pytest.approx(np.linalg.norm(dW_Q))
    adam = train(4, scale=False, loss=loss, learning_rate=0.01, steps=1, seed=2)
    np.testing.assert_allclose(adam.W_Q, W_Q - 0.01 * dW_Q / (np.abs(dW_Q) + 1e-8))
    # score_move is how far that step moved the scores of its batch
    moved = row_gradients(adam.W_Q, adam.W_K, batch, scale=False).scores
    before = row_gradients(W_Q, W_K, batch, scale=False).scores
    assert adam.score_move[0] == pytest.approx(np.abs(moved - before).mean())


def test_records_have_one_entry_per_step_in_their_ranges():
    run = train(16, task="argmax", steps=40, seed=0)
    for name in ("loss", "accuracy", "grad_norm_wq", "entropy", "row_grad_median",
                 "near_zero", "stuck", "score_move"):
        values = getattr(run, name)
        assert values.shape == (40,) and np.isfinite(values).all(), name
    for name in ("accuracy", "near_zero", "stuck"):
        assert ((getattr(run, name) >= 0) & (getattr(run, name) <= 1)).all()
    assert (run.stuck <= run.near_zero).all()
    assert ((run.entropy >= 0) & (run.entropy <= np.log(16) + 1e-12)).all()
    assert run.W_Q.shape == run.W_K.shape == (D_MODEL, 16)


def test_with_adam_the_scale_is_a_start_and_a_learning_rate():
    """Unscaled, started d_k^(1/4) times smaller with a rate d_k^(1/4) times smaller, trains
    as the scaled run does (Adam ignores the gradient's size; only its 1e-8 does not)."""
    for loss in LOSSES:
        f = 64 ** -0.25
        scaled = train(64, loss=loss, learning_rate=0.003, steps=60)
        folded = train(64, scale=False, loss=loss, learning_rate=0.003 * f, start_scale=f,
                       steps=60)
        np.testing.assert_allclose(folded.loss, scaled.loss, rtol=1e-4)
        assert folded.final_accuracy == scaled.final_accuracy
        plain = train(64, scale=False, loss=loss, learning_rate=0.003, steps=60)
        assert np.abs(plain.loss - scaled.loss).max() > 0.01  # without the fold: another run



def test_the_folds_difference_is_adams_epsilon(monkeypatch):
    """Lesson 13: "The difference is Adam's 1e-8 in its denominator, not the scale"."""
    f = 64 ** -0.25
    monkeypatch.setattr(T, "ADAM_EPS", 0.0)
    scaled = train(64, learning_rate=0.003, steps=20)
    folded = train(64, scale=False, learning_rate=0.003 * f, start_scale=f, steps=20)
    assert np.abs(folded.loss - scaled.loss).max() < 1e-13


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"),
                    reason="OpenBLAS core types are x86 names")
def test_runs_are_the_same_bits_whichever_blas_kernel():
    """einsum, not BLAS: the same run under four OpenBLAS kernels. A BLAS product of the
    same arrays differs between them, so the kernels were really switched."""
    probe = ("import hashlib, numpy as np\n"
             "from course_lib.experiments.training import train\n"
             "r = train(16, scale=False, steps=25, seed=3)\n"
             "a = np.random.default_rng(0).standard_normal((64, 300))\n"
             "print(hashlib.sha256(r.W_Q.tobytes() + r.loss.tobytes()).hexdigest(),\n"
             "      hashlib.sha256((a @ a.T).tobytes()).hexdigest())\n")
    seen = {}
    for core in ("Haswell", "Sandybridge", "Nehalem", "Prescott"):
        env = {**os.environ, "OPENBLAS_CORETYPE": core, "PYTHONPATH": str(ROOT)}
        done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                              env=env, cwd=ROOT, timeout=300, check=True)
        seen[core] = done.stdout.split()
    assert len({run for run, _ in seen.values()}) == 1, seen
    assert len({blas for _, blas in seen.values()}) > 1, "the core types were not applied"



def _off_by_ulps(f, rng, share=0.2, ulps=1):
    """``f`` with ``share`` of its float64 results moved ``ulps`` units in the last place."""
    def g(x, *args, **kwargs):
        y = f(x, *args, **kwargs)
        for _ in range(ulps):
            towards = np.where(rng.random(y.shape) < 0.5, np.inf, -np.inf)
            y = np.where(rng.random(y.shape) < share, np.nextafter(y, towards), y)
        return y
    return g


@pytest.mark.parametrize("scale", [True, False])
def test_a_run_does_not_hang_on_the_last_bit_of_exp_and_log(monkeypatch, scale):
    """numpy picks its float64 exp and log per CPU (on an AVX-512 machine its own SIMD code,
    elsewhere the C library's), and they may differ in the last bit. Lesson 13's live run
    (d_k 64, 120 steps) with a fifth of exp's and log's results one unit off prints the
    same numbers: the differences stay far below the digits it shows."""
    clean = train(64, scale=scale, steps=120)
    rng = np.random.default_rng(7)
    wobbly = types.SimpleNamespace(**{n: getattr(np, n) for n in dir(np)
                                      if not n.startswith("__")})
    wobbly.exp, wobbly.log = _off_by_ulps(np.exp, rng), _off_by_ulps(np.log, rng)
    monkeypatch.setattr(T, "np", wobbly)
    moved = train(64, scale=scale, steps=120)
    assert np.array_equal(moved.accuracy, clean.accuracy)
    assert np.array_equal(moved.stuck, clean.stuck)
    for name in ("loss", "score_move", "grad_norm_wq", "entropy"):
        a, b = getattr(clean, name), getattr(moved, name)
        assert np.abs(a - b).max() <= 1e-9 * np.abs(a).max(), name
    assert 0 < np.abs(clean.loss - moved.loss).max()  # exp and log were really disturbed

def test_tuning_picks_a_rate_of_the_grid_by_held_out_loss():
    lr = tune_learning_rate(8, scale=True, optimiser="sgd", steps=20, seed=1000)
    losses = [train(8, optimiser="sgd", learning_rate=r, steps=20, seed=1000).final_loss
              for r in LEARNING_RATES["sgd"]]
    assert lr == LEARNING_RATES["sgd"][int(np.argmin(losses))]


def test_table_sweep_and_their_text(tmp_path):
    rows = training_table([8], tasks=["match"], seed=3, n_seeds=2, steps=10)
    assert [(r.task, r.loss, r.d_k, r.scale) for r in rows] == [
        ("match", "output_error", 8, True), ("match", "output_error", 8, False),
        ("match", "cross_entropy", 8, True), ("match", "cross_entropy", 8, False)]
    row = rows[1]
    assert [s[0] for s in row.sweep] == list(LEARNING_RATES["adam"])
    assert row.learning_rate == row.sweep[int(np.argmin([s[1] for s in row.sweep]))][0]
    runs = [train(8, scale=False, learning_rate=row.learning_rate, steps=10, seed=s)
            for s in (3, 4)]
    assert [r[0] for r in row.runs] == [3, 4]
    assert row.accuracy()[0] == pytest.approx(np.mean([r.final_accuracy for r in runs]))
    assert row.final_loss()[1] == min(r.final_loss for r in runs)
    lines = format_table(rows).splitlines()
    assert len(lines) == 3 and lines[1].split()[:3] == ["match", "output_error", "8"]
    sweep = format_sweep(rows, loss="cross_entropy").splitlines()
    assert len(sweep) == 4 and sweep[3].startswith("  8 unscaled") and sweep[3].count("*") == 1
    T.write_table(rows, tmp_path / "t.json", ["--d-k", "8"])
    provenance, back = load_table(tmp_path / "t.json")
    assert back == rows
    assert provenance["command"] == "python -m course_lib.experiments.training --d-k 8"


def test_a_bad_table_file_is_named(tmp_path):
    bad = tmp_path / "t.json"
    bad.write_text(json.dumps({"rows": [{"task": "match"}]}))
    with pytest.raises(AttentionInputError, match=re.escape(f"{bad} must be the table")):
        load_table(bad)
    with pytest.raises(AttentionInputError, match="FileNotFoundError"):
        load_table(tmp_path / "missing.json")


def test_command_prints_the_table_writes_it_and_is_deterministic(capsys, monkeypatch,
                                                                 tmp_path):
    args = ["--d-k", "8", "--seeds", "1", "--steps", "10", "--seed", "7", "--task", "argmax",
            "--loss", "cross_entropy"]
    assert main(args) == 0
    first = capsys.readouterr().out
    monkeypatch.setattr(T, "TABLE_PATH", tmp_path / "table.json")
    main([*args, "--write"])
    out = capsys.readouterr().out
    assert out.startswith(first) and f"stored in {tmp_path / 'table.json'}" in out
    lines = first.splitlines()
    assert "the lowest held-out loss of the grid on seed 1007" in lines[0]
    assert [ln.split()[:3] for ln in lines[2:]] == [["argmax", "cross_entropy", "8"]]
    provenance, rows = load_table(tmp_path / "table.json")
    assert provenance["command"] == " ".join(
        ["python -m course_lib.experiments.training", *args, "--write"])
    assert provenance["numpy"] == np.__version__ and len(rows) == 2


def test_the_stored_table_is_what_the_code_makes():
    """One condition of the stored table, rerun: the same held-out numbers (a scaled run at
    d_k = 16; einsum sums, so the same bits on any BLAS)."""
    provenance, rows = load_table()
    assert provenance["command"].startswith("python -m course_lib.experiments.training")
    assert provenance["command"].endswith("--write")
    assert {(r.task, r.loss, r.d_k) for r in rows} == {
        (t, x, d) for t in TASKS for x in LOSSES for d in T.D_KS}
    [row] = [r for r in rows if (r.task, r.loss, r.d_k, r.scale)
             == ("match", "output_error", 16, True)]
    seed, loss, accuracy, stuck = row.runs[0]
    run = train(16, learning_rate=row.learning_rate, steps=row.steps, seed=seed)
    assert (run.final_loss, run.final_accuracy, run.final_stuck) == pytest.approx(
        (loss, accuracy, stuck), abs=1e-12)


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"),
                    reason="the table was made with x86's AVX2 loops of exp and log")
def test_the_stored_table_is_re_made_with_avx2_loops_and_differs_in_the_last_digit():
    """The stored table was made where numpy's exp and log ran their AVX2 loops: a run of it
    re-made with the AVX-512 loops turned off is the same bits, and with them on (on a CPU
    that has them) it differs, by less than the last digit the lesson shows (a tenth of a
    per cent of the rows; the module docstring and lesson 13 say so)."""
    import importlib.util

    # the checkout's conftest.py by path (under pytest every conftest.py is module "conftest")
    spec = importlib.util.spec_from_file_location("course_root_conftest", ROOT / "conftest.py")
    conftest = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conftest)
    _, rows = load_table()
    [row] = [r for r in rows if (r.task, r.loss, r.d_k, r.scale)
             == ("match", "output_error", 64, False)]
    seed, _, accuracy, stuck = row.runs[0]
    probe = ("import sys\nfrom course_lib.experiments.training import train\n"
             f"r = train(64, scale=False, learning_rate={row.learning_rate}, seed={seed})\n"
             "print(repr(r.final_stuck), repr(r.final_accuracy))\n")
    made = {}
    for off in ("", conftest.haswell_numpy()):
        done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                              check=True, timeout=300, cwd=ROOT,
                              env={**os.environ, "NPY_DISABLE_CPU_FEATURES": off,
                                   "PYTHONPATH": str(ROOT)})
        made[off] = tuple(float(x) for x in done.stdout.split())
    avx2 = made[conftest.haswell_numpy()]
    assert avx2 == (stuck, accuracy)
    here = made[""]
    assert abs(here[0] - stuck) <= 0.002 and abs(here[1] - accuracy) <= 0.002
    doc = " ".join(T.__doc__.split())
    assert "38.0 % stuck where it says 37.9 %" in doc
    if conftest.haswell_numpy():
        assert here != avx2 and f"{here[0]:.1%}" == "38.0%" and f"{stuck:.1%}" == "37.9%"


def raises(match: str):
    return pytest.raises(AttentionInputError, match=re.escape(match))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"d_k": 0}, "d_k must be an integer between 1 and 256 (got 0)"),
        ({"d_k": 512}, "d_k must be an integer between 1 and 256 (got 512)"),
        ({"d_k": 2.0}, "d_k must be an integer between 1 and 256 (got 2.0)"),
        ({"d_k": 4, "steps": 0}, "steps must be an integer >= 1 (got 0)"),
        ({"d_k": 4, "seed": -1}, "seed must be an integer >= 0 (got -1)"),
        ({"d_k": 4, "optimiser": "rmsprop"},
         "optimiser must be one of 'sgd', 'adam' (got 'rmsprop')"),
        ({"d_k": 4, "loss": "mse"},
         "loss must be one of 'output_error', 'cross_entropy' (got 'mse')"),
        ({"d_k": 4, "task": "copy"}, "task must be one of 'match', 'argmax' (got 'copy')"),
        ({"d_k": 4, "learning_rate": -0.1},
         "learning_rate must be a positive finite number (got -0.1)"),
        ({"d_k": 4, "learning_rate": float("nan")},
         "learning_rate must be a positive finite number (got nan)"),
        ({"d_k": 4, "learning_rate": "0.1"},
         "learning_rate must be a positive finite number (got '0.1')"),
        ({"d_k": 4, "start_scale": 0},
         "start_scale must be a positive finite number (got 0)"),
    ],
)
def test_bad_arguments_are_named(kwargs, message):
    with raises(message):
        train(**kwargs)


def test_bad_weights_table_and_command_arguments(capsys):
    with raises("W_Q and W_K must both have shape (256, d_k) (got (32, 4) and (32, 4))"):
        row_gradients(np.zeros((32, 4)), np.zeros((32, 4)), sample_batch(n=2))
    with raises("d_ks must list at least one entry (got [])"):
        training_table([])
    with raises("n_seeds must be an integer >= 1 (got 0)"):
        training_table([8], n_seeds=0)
    with raises("no rows of task 'argmax' and loss 'output_error' in the table"):
        format_sweep([], task="argmax")
    for argv, message in ((["--d-k", "0"], "d_k must be an integer between 1 and 256 (got 0)"),
                          (["--seeds", "0"], "n_seeds must be an integer >= 1 (got 0)"),
                          (["--seed", "-2"], "seed must be an integer >= 0 (got -2)"),
                          (["--steps", "0"], "steps must be an integer >= 1 (got 0)"),
                          (["--task", "copy"], "task must be one of 'match', 'argmax'")):
        with pytest.raises(SystemExit) as exit_info:
            main(argv)
        assert exit_info.value.code == 2
        assert message in capsys.readouterr().err
