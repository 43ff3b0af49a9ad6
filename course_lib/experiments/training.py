r"""Training, measured: what does dividing by :math:`\sqrt{d_k}` change when a head learns?

The tasks (small enough for numpy in seconds)
---------------------------------------------
Every example is one query token and some key tokens, each a vector of :data:`D_MODEL` =
256 numbers drawn from N(0, 1). One head of width ``d_k`` (16, 64 or 256: at most
``D_MODEL``, as in a real model) must learn where to look:

``"match"`` (lesson 13's task)
    8 keys; one of them, at a random position, *matches* the query by a hidden rule: its
    first :data:`MATCH_DIMS` = 8 numbers are a fixed hidden rotation of the query's first
    8, plus noise of standard deviation :data:`NOISE`. The other 248 numbers, and the other
    keys, are unrelated. The noise makes a perfect score impossible.
``"argmax"`` (the second task, to check a claim before it is generalised)
    16 keys; the target is the key with the largest hidden score :math:`x_q^T U V^T x_j`,
    a bilinear form of rank 8 (``U``, ``V``: fixed ``D_MODEL × 8`` Gaussian matrices), no
    noise.

The head computes :math:`q = x_q W_Q`, :math:`k_j = x_j W_K` and the weights
:math:`p = \mathrm{softmax}(S)` of the scores :math:`S = c\,qK^T`, with
:math:`c = 1/\sqrt{d_k}` (scaled) or :math:`c = 1` (unscaled). Each key's value is its
position (one-hot), so the output :math:`pV` is :math:`p` itself. Two losses:

``"output_error"``
    :math:`L = \tfrac12\lVert pV - v_{\text{target}}\rVert^2 = \tfrac12\lVert p -
    e_{\text{target}}\rVert^2`, a loss on the attention's *output*. Its gradient reaches the
    scores through softmax's Jacobian, :math:`\partial L/\partial S = p \odot (dP - \langle dP,
    p\rangle)` (lesson 12), as the gradient of any loss downstream of :math:`pV` does in a
    real model. A row whose weights are one-hot has a Jacobian of zeros, so its gradient is
    0 whichever key it picked.
``"cross_entropy"``
    :math:`L = -\log p_{\text{target}}`, a loss on the *scores* themselves, as a classifier's
    logits are trained. Its gradient is :math:`p - e_{\text{target}}`: the log cancels the
    exponential, the Jacobian never appears, and a row saturated on the wrong key has a
    gradient of norm about :math:`\sqrt 2`, not 0. It hides the saturation.

Only :math:`W_Q` and :math:`W_K` (each ``D_MODEL × d_k``) learn; they start with
N(0, 1/D_MODEL) entries, so queries and keys start with unit-variance entries and the
unscaled scores with standard deviation :math:`\sqrt{d_k}`, as in lesson 03. All products
are ``numpy.einsum`` sums, and the hidden rotation is made by Gram-Schmidt in plain numpy,
not by ``@`` or ``numpy.linalg`` (BLAS and LAPACK, whose kernels, chosen per CPU, add in
other orders): a run is the same bits whichever BLAS kernel the machine picks, and a busy
machine's BLAS threads do not slow it down. numpy's own ``exp`` and ``log`` are not the same
bits on every CPU (its AVX-512 loops differ from its AVX2 ones in the last bit), and 400
steps amplify the last bit: the stored table, re-made on a CPU with AVX-512, can differ in
the last digit it shows (38.0 % stuck where it says 37.9 %; the suite's second strict nbval
run of the lessons turns those loops off, see conftest.py).

What a run records (:class:`TrainingRun`)
-----------------------------------------
Per step, on that step's batch before the update: the loss, the accuracy (largest weight on
the target), :math:`\lVert\partial L/\partial W_Q\rVert` of the batch mean, the attention
entropy, and, *per example* (a mean can hide the rows that matter): the median of the rows'
:math:`\lVert\partial L_n/\partial S_n\rVert`, the fraction of rows where it is below
:data:`NEAR_ZERO` = 1e-3 ("near 0"), and the fraction of rows near 0 whose largest weight is
on a wrong key ("stuck": it sends back almost no gradient of its own); and how far the update
moved the scores :math:`S` of that batch (mean :math:`|\Delta S|`). :func:`row_gradients`
gives the per-row numbers of any weights and batch.

How the table is made (``python -m course_lib.experiments.training``)
---------------------------------------------------------
For each task, loss, ``d_k`` in :data:`D_KS` and scaled / unscaled, Adam's learning rate is
the one of :data:`LEARNING_RATES` with the lowest held-out final loss on a *tuning seed*
(``seed + 1000``) that the table does not use (the whole sweep is kept: loss against
learning rate). With that rate, training runs on ``seed, seed + 1, seed + 2``; the table
gives the mean held-out accuracy and loss with their spread (lowest and highest seed). The
same seed gives the same task, start and batches to the scaled and unscaled runs, so they
differ only in :math:`c`. ``--write`` stores the table, with the command and the versions
that made it, in ``data/training_table.json`` beside this module; :func:`load_table` reads
it back (lesson 13 shows it).
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import AttentionInputError

__all__ = [
    "D_KS",
    "D_MODEL",
    "LEARNING_RATES",
    "LOSSES",
    "NEAR_ZERO",
    "STEPS",
    "TABLE_PATH",
    "TASKS",
    "Batch",
    "RowGradients",
    "TableRow",
    "TrainingRun",
    "format_sweep",
    "format_table",
    "held_out_batch",
    "initial_weights",
    "load_table",
    "loss_and_gradients",
    "row_gradients",
    "sample_batch",
    "train",
    "training_table",
    "tune_learning_rate",
]

FloatArray = NDArray[np.float64]

#: numbers per token (every head here has d_k <= D_MODEL)
D_MODEL = 256
#: the tasks, and how many keys each example has
TASKS: dict[str, int] = {"match": 8, "argmax": 16}
#: the losses (see the module's docstring)
LOSSES: tuple[str, ...] = ("output_error", "cross_entropy")
#: the "match" task: how many of a token's numbers carry the hidden rule, and its noise
MATCH_DIMS = 8
NOISE = 0.5
#: the "argmax" task: the rank of its hidden bilinear form
ARGMAX_RANK = 8
#: examples per training step
BATCH_SIZE = 32
#: held-out examples for the final loss and accuracy
EVAL_SIZE = 1024
#: training steps of one run
STEPS = 400
#: the d_k of the table: small, a real head size, one head as wide as the model
D_KS: tuple[int, ...] = (16, 64, 256)
#: the grid each condition's learning rate is picked from
LEARNING_RATES: dict[str, tuple[float, ...]] = {
    "sgd": (0.03, 0.1, 0.3, 1.0, 3.0),
    "adam": (0.0003, 0.001, 0.003, 0.01, 0.03),
}
#: the learning rate of a run that names none (the best of the grid, scaled, both tasks)
DEFAULT_LEARNING_RATE: dict[str, float] = {"sgd": 1.0, "adam": 0.003}
#: the epsilon of Adam's step, lr * m / (sqrt(v) + ADAM_EPS); its running averages decay
#: by 0.9 and 0.999
ADAM_EPS = 1e-8
#: the tuning seed is the table's seed plus this
TUNING_OFFSET = 1000
#: a row's gradient |dL/dS| below this counts as "near 0"
NEAR_ZERO = 1e-3
#: where ``--write`` stores the table and :func:`load_table` reads it
TABLE_PATH = Path(__file__).resolve().parent / "data" / "training_table.json"


@dataclass(frozen=True)
class Batch:
    """Examples of a task.

    Attributes
    ----------
    task : str
    queries : ndarray, shape (n, 1, D_MODEL)
    keys : ndarray, shape (n, n_keys, D_MODEL)
    target : ndarray of int, shape (n,)
        The key each example should look at.
    """

    task: str
    queries: FloatArray
    keys: FloatArray
    target: NDArray[np.int64]


@dataclass(frozen=True)
class RowGradients:
    """The gradient of each example's own loss, one row (one query) per example.

    Attributes
    ----------
    loss : ndarray, shape (n,)
        Each example's loss :math:`L_n`.
    weights : ndarray, shape (n, n_keys)
        Each row's attention weights.
    scores : ndarray, shape (n, n_keys)
        The scores :math:`S` that softmax receives (already multiplied by c).
    score_grad : ndarray, shape (n,)
        :math:`\\lVert\\partial L_n/\\partial S_n\\rVert` per row.
    wq_grad : ndarray, shape (n,)
        :math:`\\lVert\\partial L_n/\\partial W_Q\\rVert` per example: the gradient that
        training steps along, one example at a time.
    correct : ndarray of bool, shape (n,)
        The largest weight is on the target key.
    """

    loss: FloatArray
    weights: FloatArray
    scores: FloatArray
    score_grad: FloatArray
    wq_grad: FloatArray
    correct: NDArray[np.bool_]

    @property
    def near_zero(self) -> float:
        """Fraction of rows with :math:`\\lVert\\partial L_n/\\partial S_n\\rVert <`
        :data:`NEAR_ZERO`."""
        return float((self.score_grad < NEAR_ZERO).mean())

    @property
    def stuck(self) -> float:
        """Fraction of rows near 0 whose largest weight is on a wrong key."""
        return float(((self.score_grad < NEAR_ZERO) & ~self.correct).mean())


@dataclass(frozen=True)
class TrainingRun:
    """One training run and what it recorded at every step.

    Attributes
    ----------
    d_k, scale, loss_kind, task, optimiser, learning_rate, seed, steps, start_scale
        The run's settings.
    loss, accuracy, grad_norm_wq, entropy : ndarray, shape (steps,)
        Per step, on that step's batch before the update: the mean loss; the fraction of
        examples whose largest weight is on the target; the Frobenius norm of the batch's
        :math:`\\partial L/\\partial W_Q`; the mean attention entropy in nats
        (:math:`\\log n_{keys}` is even, 0 one-hot).
    row_grad_median, near_zero, stuck : ndarray, shape (steps,)
        Per step, per example: the median of the rows'
        :math:`\\lVert\\partial L_n/\\partial S_n\\rVert`; the fraction of rows below
        :data:`NEAR_ZERO`; the fraction of rows below it whose largest weight is on a wrong
        key.
    score_move : ndarray, shape (steps,)
        How far that step's update moved the scores S of its batch: mean :math:`|\\Delta S|`.
    final_loss, final_accuracy, final_stuck : float
        After training, on :data:`EVAL_SIZE` held-out examples of the run's task and seed,
        measured when first read (a run that only shows its curve never pays for them: the
        evaluation costs as much as 64 steps).
    W_Q, W_K : ndarray, shape (D_MODEL, d_k)
        The weights after training.
    """

    d_k: int
    scale: bool
    loss_kind: str
    task: str
    optimiser: str
    learning_rate: float
    seed: int
    steps: int
    start_scale: float
    loss: FloatArray
    accuracy: FloatArray
    grad_norm_wq: FloatArray
    entropy: FloatArray
    row_grad_median: FloatArray
    near_zero: FloatArray
    stuck: FloatArray
    score_move: FloatArray
    W_Q: FloatArray = field(repr=False, compare=False)
    W_K: FloatArray = field(repr=False, compare=False)

    @cached_property
    def _held_out(self) -> RowGradients:
        return _backward(self.W_Q, self.W_K, held_out_batch(task=self.task, seed=self.seed),
                         self.scale, self.loss_kind)[0]

    @property
    def final_loss(self) -> float:
        """Mean loss on the held-out examples after training."""
        return float(self._held_out.loss.mean())

    @property
    def final_accuracy(self) -> float:
        """Fraction of held-out examples whose largest weight is on the target."""
        return float(self._held_out.correct.mean())

    @property
    def final_stuck(self) -> float:
        """Fraction of held-out rows stuck after training (see :class:`RowGradients`)."""
        return self._held_out.stuck


# ------------------------------------------------------------------------------ checks


def _check_int(name: str, value: object, minimum: int, maximum: int | None = None) -> int:
    if (isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum
            or (maximum is not None and value > maximum)):
        bound = f"between {minimum} and {maximum}" if maximum is not None else f">= {minimum}"
        raise AttentionInputError(f"{name} must be an integer {bound} (got {value!r})")
    return int(value)


def _check_choice(name: str, value: object, choices: Sequence[str]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise AttentionInputError(
            f"{name} must be one of {', '.join(repr(c) for c in choices)} (got {value!r})")
    return value


def _check_positive(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not (
            math.isfinite(value) and value > 0):
        raise AttentionInputError(f"{name} must be a positive finite number (got {value!r})")
    return float(value)


def _check_d_k(d_k: object) -> int:
    return _check_int("d_k", d_k, 1, D_MODEL)


# ------------------------------------------------------------------------------ the tasks


def _hidden_rule(task: str, seed: int) -> tuple[FloatArray, ...]:
    """The task's hidden rule, fixed by the seed: the rotation of "match", U and V of "argmax"."""
    rng = np.random.default_rng([seed, 0])
    if task == "match":
        return (_orthonormal_columns(rng.standard_normal((MATCH_DIMS, MATCH_DIMS))),)
    return (rng.standard_normal((D_MODEL, ARGMAX_RANK)),
            rng.standard_normal((D_MODEL, ARGMAX_RANK)))


def _orthonormal_columns(A: FloatArray) -> FloatArray:
    """Gram-Schmidt on the columns of A (a rotation or reflection for a random square A),
    in plain numpy: ``numpy.linalg.qr`` runs on LAPACK and BLAS, whose last bits depend on
    the CPU's kernel, and every example of the task is made with this matrix."""
    columns: list[FloatArray] = []
    for a in A.T:
        v = a.copy()
        for u in columns:
            v = v - (u * v).sum() * u
        columns.append(v / np.sqrt((v * v).sum()))
    return np.stack(columns, axis=1)


def _sample(task: str, rule: tuple[FloatArray, ...], rng: np.random.Generator, n: int) -> Batch:
    n_keys = TASKS[task]
    queries = rng.standard_normal((n, 1, D_MODEL))
    keys = rng.standard_normal((n, n_keys, D_MODEL))
    if task == "match":
        target = rng.integers(0, n_keys, n)
        keys[np.arange(n), target, :MATCH_DIMS] = (
            np.einsum("nm,jm->nj", queries[:, 0, :MATCH_DIMS], rule[0])
            + NOISE * rng.standard_normal((n, MATCH_DIMS)))
    else:
        U, V = rule
        hidden = np.einsum("nr,nkr->nk", np.einsum("nm,mr->nr", queries[:, 0], U),
                           np.einsum("nkm,mr->nkr", keys, V))
        target = hidden.argmax(axis=-1)
    return Batch(task, queries, keys, target)


def sample_batch(*, task: str = "match", seed: int = 0, n: int = BATCH_SIZE) -> Batch:
    """``n`` fresh examples of ``task`` whose hidden rule ``seed`` fixes (the first batch
    that :func:`train` sees with this task and seed, when ``n = BATCH_SIZE``).

    Examples
    --------
    >>> batch = sample_batch(n=4)
    >>> batch.queries.shape, batch.keys.shape, batch.target.shape
    ((4, 1, 256), (4, 8, 256), (4,))
    """
    task = _check_choice("task", task, tuple(TASKS))
    seed = _check_int("seed", seed, 0)
    return _sample(task, _hidden_rule(task, seed), np.random.default_rng([seed, 2]),
                   _check_int("n", n, 1))


def held_out_batch(*, task: str = "match", seed: int = 0) -> Batch:
    """The :data:`EVAL_SIZE` held-out examples that a run of ``task`` and ``seed`` is
    measured on after training (its ``final_loss``, ``final_accuracy``, ``final_stuck``):
    the same hidden rule as its training batches, drawn from another stream, so none of
    them is a training example.

    Examples
    --------
    >>> held_out_batch(task="argmax", seed=1).keys.shape
    (1024, 16, 256)
    """
    task = _check_choice("task", task, tuple(TASKS))
    seed = _check_int("seed", seed, 0)
    return _sample(task, _hidden_rule(task, seed), np.random.default_rng([seed, 3]), EVAL_SIZE)


def initial_weights(d_k: int, *, seed: int = 0) -> tuple[FloatArray, FloatArray]:
    """The start of :func:`train`: W_Q, W_K with N(0, 1/D_MODEL) entries, fixed by the seed.

    Returns
    -------
    W_Q, W_K : ndarray, shape (D_MODEL, d_k)
    """
    d_k = _check_d_k(d_k)
    rng = np.random.default_rng([_check_int("seed", seed, 0), 1])
    W_Q = rng.standard_normal((D_MODEL, d_k)) / math.sqrt(D_MODEL)
    W_K = rng.standard_normal((D_MODEL, d_k)) / math.sqrt(D_MODEL)
    return W_Q, W_K


# ------------------------------------------------------------------ forward and backward


def _scores(W_Q: FloatArray, W_K: FloatArray, batch: Batch, c: float):
    """The queries q = x_q W_Q, and the scores S = c q K^T with K = X W_K, computed as
    c (q W_K^T) x_j: the same sums grouped so that no key is ever projected (a key's
    projection costs d_model d_k per key, this d_model per key)."""
    q = np.einsum("nm,md->nd", batch.queries[:, 0], W_Q)
    q_back = np.einsum("nd,md->nm", q, W_K)  # q W_K^T: the query seen in the keys' space
    return q, c * np.einsum("nm,nkm->nk", q_back, batch.keys)


def _softmax(S: FloatArray) -> tuple[FloatArray, FloatArray]:
    shifted = S - S.max(axis=-1, keepdims=True)
    e = np.exp(shifted)
    total = e.sum(axis=-1, keepdims=True)
    return e / total, shifted - np.log(total)  # weights, log-weights


def _backward(W_Q: FloatArray, W_K: FloatArray, batch: Batch, scale: bool, loss: str):
    """Everything one step needs: per-row numbers, and the batch-mean dW_Q, dW_K.

    Lesson 12's equations, dQ = c dS K and dK = c dS^T Q, then dW_Q = X_q^T dQ and
    dW_K = sum_j x_j^T dK_j, grouped so that no key is projected: with
    r_n = sum_j dS_nj x_nj, dq_n = c r_n W_K and dW_K = c sum_n r_n^T q_n.
    """
    c = 1 / math.sqrt(W_Q.shape[1]) if scale else 1.0
    q, S = _scores(W_Q, W_K, batch, c)
    p, log_p = _softmax(S)
    n = len(batch.target)
    rows = np.arange(n)
    onehot = np.zeros_like(p)
    onehot[rows, batch.target] = 1.0
    if loss == "output_error":
        dP = p - onehot  # dL/dp of 1/2 |p - e|^2 (the output is p: one-hot values)
        losses = 0.5 * (dP**2).sum(axis=-1)
        dS = p * (dP - (dP * p).sum(axis=-1, keepdims=True))  # softmax's Jacobian, lesson 12
    else:
        losses = -log_p[rows, batch.target]
        dS = p - onehot  # the log cancels the exponential: no Jacobian
    r = np.einsum("nk,nkm->nm", dS, batch.keys)  # each row's keys, weighted by dS
    dq = c * np.einsum("nm,md->nd", r, W_K)
    dW_Q = np.einsum("nm,nd->md", batch.queries[:, 0], dq) / n
    dW_K = c * np.einsum("nm,nd->md", r, q) / n
    per_row = RowGradients(
        loss=losses, weights=p, scores=S, score_grad=np.sqrt((dS**2).sum(axis=-1)),
        wq_grad=np.sqrt((batch.queries[:, 0] ** 2).sum(axis=-1) * (dq**2).sum(axis=-1)),
        correct=p.argmax(axis=-1) == batch.target)
    return per_row, dW_Q, dW_K


def row_gradients(W_Q: FloatArray, W_K: FloatArray, batch: Batch, *, scale: bool = True,
                  loss: str = "output_error") -> RowGradients:
    r"""Each example's own gradient: :math:`\lVert\partial L_n/\partial S_n\rVert` and
    :math:`\lVert\partial L_n/\partial W_Q\rVert`, with its weights and scores.

    One query per example, so :math:`\partial L_n/\partial W_Q = x_{q,n}^T\, dq_n` has the
    norm :math:`\lVert x_{q,n}\rVert\,\lVert dq_n\rVert`. The batch's gradient (what
    :func:`loss_and_gradients` returns) is the mean of these matrices: a few large ones can
    carry it while most rows give nothing.

    Parameters
    ----------
    W_Q, W_K : ndarray, shape (D_MODEL, d_k)
    batch : Batch
    scale : bool, default True
    loss : {"output_error", "cross_entropy"}

    Examples
    --------
    >>> W_Q, W_K = initial_weights(256)
    >>> rows = row_gradients(W_Q, W_K, sample_batch(n=512), scale=False)
    >>> rows.score_grad.shape, 0.3 < rows.near_zero < 0.8
    ((512,), True)
    """
    loss = _check_choice("loss", loss, LOSSES)
    return _backward(*_check_weights(W_Q, W_K), batch, scale, loss)[0]


def _check_weights(W_Q: object, W_K: object) -> tuple[FloatArray, FloatArray]:
    W_Q, W_K = np.asarray(W_Q, dtype=float), np.asarray(W_K, dtype=float)
    if W_Q.ndim != 2 or W_Q.shape[0] != D_MODEL or W_K.shape != W_Q.shape:
        raise AttentionInputError(
            f"W_Q and W_K must both have shape ({D_MODEL}, d_k) (got {W_Q.shape} and "
            f"{W_K.shape})")
    return W_Q, W_K


def loss_and_gradients(
    W_Q: FloatArray, W_K: FloatArray, batch: Batch, *, scale: bool = True,
    loss: str = "output_error",
) -> tuple[float, FloatArray, FloatArray]:
    r"""The mean loss of one batch and its gradients with respect to W_Q and W_K.

    This is the gradient :func:`train` steps along: :math:`dS` per row (softmax's Jacobian
    for ``"output_error"``, :math:`p - e` for ``"cross_entropy"``), then, as in lesson 12,
    :math:`dQ = c\, dS\, K` and :math:`dK = c\, dS^T Q`, and by the chain rule through
    :math:`Q = XW_Q`, :math:`\partial L/\partial W_Q = \frac1n\sum_n x_{q,n}^T\, dq_n`
    (the same for :math:`W_K`).

    Returns
    -------
    loss : float
    dW_Q, dW_K : ndarray, shape (D_MODEL, d_k)

    Examples
    --------
    >>> W_Q, W_K = initial_weights(16)
    >>> loss, dW_Q, dW_K = loss_and_gradients(W_Q, W_K, sample_batch(n=4))
    >>> dW_Q.shape, dW_K.shape
    ((256, 16), (256, 16))
    """
    loss = _check_choice("loss", loss, LOSSES)
    rows, dW_Q, dW_K = _backward(*_check_weights(W_Q, W_K), batch, scale, loss)
    return float(rows.loss.mean()), dW_Q, dW_K


# ------------------------------------------------------------------------------ training


def _train(d_k: int, scale: bool, loss: str, task: str, optimiser: str, learning_rate: float,
           steps: int, seed: int, start_scale: float, record_moves: bool) -> TrainingRun:
    rule = _hidden_rule(task, seed)
    data_rng = np.random.default_rng([seed, 2])
    W_Q, W_K = initial_weights(d_k, seed=seed)
    W_Q *= start_scale
    W_K *= start_scale
    c = 1 / math.sqrt(d_k) if scale else 1.0
    moments = [np.zeros_like(W_Q) for _ in range(4)]
    names = ("loss", "accuracy", "grad_norm_wq", "entropy", "row_grad_median", "near_zero",
             "stuck", "score_move")
    record = {k: np.full(steps, np.nan) for k in names}
    for step in range(steps):
        batch = _sample(task, rule, data_rng, BATCH_SIZE)
        rows, dW_Q, dW_K = _backward(W_Q, W_K, batch, scale, loss)
        p = rows.weights
        record["loss"][step] = rows.loss.mean()
        record["accuracy"][step] = rows.correct.mean()
        record["grad_norm_wq"][step] = np.sqrt((dW_Q**2).sum())
        record["entropy"][step] = -(p * np.log(np.where(p > 0, p, 1.0))).sum(axis=-1).mean()
        record["row_grad_median"][step] = np.median(rows.score_grad)
        record["near_zero"][step] = rows.near_zero
        record["stuck"][step] = rows.stuck
        for i, (W, g) in enumerate(((W_Q, dW_Q), (W_K, dW_K))):
            if optimiser == "sgd":
                W -= learning_rate * g
            else:
                m, v = moments[i], moments[i + 2]
                m *= 0.9
                m += 0.1 * g
                v *= 0.999
                v += 0.001 * g * g
                m_hat = m / (1 - 0.9 ** (step + 1))
                v_hat = v / (1 - 0.999 ** (step + 1))
                W -= learning_rate * m_hat / (np.sqrt(v_hat) + ADAM_EPS)
        if record_moves:
            record["score_move"][step] = np.abs(_scores(W_Q, W_K, batch, c)[1]
                                                - rows.scores).mean()
    return TrainingRun(d_k, bool(scale), loss, task, optimiser, float(learning_rate), seed,
                       steps, float(start_scale), W_Q=W_Q, W_K=W_K, **record)


def train(
    d_k: int,
    *,
    scale: bool = True,
    loss: str = "output_error",
    task: str = "match",
    optimiser: str = "adam",
    learning_rate: float | None = None,
    steps: int = STEPS,
    seed: int = 0,
    start_scale: float = 1.0,
) -> TrainingRun:
    """Train W_Q and W_K on a task of this module and record every step.

    Parameters
    ----------
    d_k : int
        Width of the queries and keys, 1 to D_MODEL.
    scale : bool, default True
        Divide the scores by :math:`\\sqrt{d_k}`.
    loss : {"output_error", "cross_entropy"}, default "output_error"
        A loss on the output :math:`pV` (through softmax's Jacobian, as in a model), or
        cross-entropy on the scores (see the module's docstring).
    task : {"match", "argmax"}, default "match"
    optimiser : {"adam", "sgd"}, default "adam"
        Adam with the usual constants (0.9, 0.999 and :data:`ADAM_EPS` = 1e-8), or plain
        gradient descent.
    learning_rate : float, optional
        Default: :data:`DEFAULT_LEARNING_RATE` (0.003 for Adam, 1.0 for SGD). The table
        tunes it per condition instead.
    steps : int, default STEPS
    seed : int, default 0
        Fixes the hidden rule, the start, the batches and the held-out set; the same seed
        gives the same run, and the same data to the scaled and unscaled runs.
    start_scale : float, default 1.0
        Multiplies the initial W_Q and W_K (lesson 13 folds the scale into the start).

    Returns
    -------
    TrainingRun

    Raises
    ------
    AttentionInputError
        If ``d_k`` is not an integer from 1 to D_MODEL, ``steps`` not a positive integer,
        ``loss``, ``task`` or ``optimiser`` unknown, or ``learning_rate`` or
        ``start_scale`` not a positive finite number.

    Examples
    --------
    >>> run = train(16, steps=60, seed=0)
    >>> run.loss.shape, bool(run.loss[-10:].mean() < run.loss[:10].mean())
    ((60,), True)
    """
    d_k = _check_d_k(d_k)
    loss = _check_choice("loss", loss, LOSSES)
    task = _check_choice("task", task, tuple(TASKS))
    optimiser = _check_choice("optimiser", optimiser, tuple(LEARNING_RATES))
    if learning_rate is None:
        learning_rate = DEFAULT_LEARNING_RATE[optimiser]
    return _train(d_k, bool(scale), loss, task, optimiser,
                  _check_positive("learning_rate", learning_rate),
                  _check_int("steps", steps, 1), _check_int("seed", seed, 0),
                  _check_positive("start_scale", start_scale), record_moves=True)


def _sweep(d_k: int, *, scale: bool, loss: str, task: str, optimiser: str, steps: int,
           seed: int) -> list[tuple[float, float, float]]:
    """(learning rate, held-out loss, held-out accuracy) for each rate of the grid."""
    runs = [_train(d_k, scale, loss, task, optimiser, lr, steps, seed, 1.0, False)
            for lr in LEARNING_RATES[optimiser]]
    return [(r.learning_rate, r.final_loss, r.final_accuracy) for r in runs]


def tune_learning_rate(
    d_k: int, *, scale: bool, loss: str = "output_error", task: str = "match",
    optimiser: str = "adam", steps: int = STEPS, seed: int = TUNING_OFFSET,
) -> float:
    """The rate of :data:`LEARNING_RATES` with the lowest held-out final loss on ``seed``.

    Ties go to the smaller rate. Use a seed that the runs you compare do not use.

    Examples
    --------
    >>> tune_learning_rate(16, scale=True, steps=30) in LEARNING_RATES["adam"]
    True
    """
    sweep = _sweep(_check_d_k(d_k), scale=bool(scale), loss=_check_choice("loss", loss, LOSSES),
                   task=_check_choice("task", task, tuple(TASKS)),
                   optimiser=_check_choice("optimiser", optimiser, tuple(LEARNING_RATES)),
                   steps=_check_int("steps", steps, 1), seed=_check_int("seed", seed, 0))
    return sweep[int(np.argmin([s[1] for s in sweep]))][0]


# ------------------------------------------------------------------------------ the table


@dataclass(frozen=True)
class TableRow:
    """One condition of the table: a task, a loss, a ``d_k``, scaled or not.

    ``sweep`` holds (learning rate, held-out loss, accuracy) on the tuning seed for every
    rate of the grid; ``learning_rate`` is the one with the lowest loss; ``runs`` holds
    (seed, held-out loss, accuracy, stuck fraction) of the runs at that rate.
    """

    task: str
    loss: str
    d_k: int
    scale: bool
    optimiser: str
    steps: int
    learning_rate: float
    sweep: tuple[tuple[float, float, float], ...]
    runs: tuple[tuple[int, float, float, float], ...]

    def accuracy(self) -> tuple[float, float, float]:
        """Mean, lowest and highest held-out accuracy over the seeds."""
        values = [r[2] for r in self.runs]
        return float(np.mean(values)), min(values), max(values)

    def final_loss(self) -> tuple[float, float, float]:
        """Mean, lowest and highest held-out loss over the seeds."""
        values = [r[1] for r in self.runs]
        return float(np.mean(values)), min(values), max(values)


def training_table(
    d_ks: Sequence[int] = D_KS,
    *,
    tasks: Sequence[str] = tuple(TASKS),
    losses: Sequence[str] = LOSSES,
    optimiser: str = "adam",
    seed: int = 0,
    n_seeds: int = 3,
    steps: int = STEPS,
    log: Any = None,
) -> list[TableRow]:
    """Tune, then train on ``n_seeds`` seeds, per task, loss, ``d_k`` and scaled/unscaled.

    Examples
    --------
    >>> rows = training_table([8], tasks=["match"], losses=["cross_entropy"], n_seeds=1,
    ...                       steps=20)
    >>> [(r.task, r.loss, r.d_k, r.scale, len(r.runs)) for r in rows]
    [('match', 'cross_entropy', 8, True, 1), ('match', 'cross_entropy', 8, False, 1)]
    """
    for name, values in (("d_ks", d_ks), ("tasks", tasks), ("losses", losses)):
        if len(values) == 0:
            raise AttentionInputError(f"{name} must list at least one entry (got {list(values)!r})")
    d_ks = [_check_d_k(d) for d in d_ks]
    tasks = [_check_choice("task", t, tuple(TASKS)) for t in tasks]
    losses = [_check_choice("loss", x, LOSSES) for x in losses]
    optimiser = _check_choice("optimiser", optimiser, tuple(LEARNING_RATES))
    seed = _check_int("seed", seed, 0)
    n_seeds = _check_int("n_seeds", n_seeds, 1)
    steps = _check_int("steps", steps, 1)
    rows = []
    for task in tasks:
        for loss in losses:
            for d_k in d_ks:
                for scale in (True, False):
                    start = time.perf_counter()
                    sweep = _sweep(d_k, scale=scale, loss=loss, task=task, optimiser=optimiser,
                                   steps=steps, seed=seed + TUNING_OFFSET)
                    lr = sweep[int(np.argmin([s[1] for s in sweep]))][0]
                    runs = [_train(d_k, scale, loss, task, optimiser, lr, steps, s, 1.0, False)
                            for s in range(seed, seed + n_seeds)]
                    rows.append(TableRow(
                        task, loss, d_k, scale, optimiser, steps, lr, tuple(sweep),
                        tuple((r.seed, r.final_loss, r.final_accuracy, r.final_stuck)
                              for r in runs)))
                    if log is not None:
                        log(f"{task} {loss} d_k={d_k} {'scaled' if scale else 'unscaled'}: "
                            f"{time.perf_counter() - start:.0f} s")
    return rows


def _pairs(rows: Sequence[TableRow]) -> list[tuple[TableRow, TableRow]]:
    by = {(r.task, r.loss, r.d_k, r.scale): r for r in rows}
    keys = sorted({(r.task, r.loss, r.d_k) for r in rows},
                  key=lambda k: (list(TASKS).index(k[0]), LOSSES.index(k[1]), k[2]))
    return [(by[(*k, True)], by[(*k, False)]) for k in keys
            if (*k, True) in by and (*k, False) in by]


def format_table(rows: Sequence[TableRow]) -> str:
    """The table as text: per task, loss and ``d_k``, the held-out accuracy scaled and
    unscaled (mean over the seeds, lowest to highest in brackets) and the tuned rates."""
    lines = ["task    loss           d_k   accuracy: scaled          unscaled"
             "           learning rate: scaled  unscaled"]
    for s, u in _pairs(rows):
        (sm, slo, shi), (um, ulo, uhi) = s.accuracy(), u.accuracy()
        lines.append(
            f"{s.task:7s} {s.loss:13s} {s.d_k:4d}   {sm:5.2f} ({slo:.2f}-{shi:.2f})"
            f"    {um:5.2f} ({ulo:.2f}-{uhi:.2f})   {s.learning_rate:14g}  "
            f"{u.learning_rate:8g}")
    return "\n".join(lines)


def format_sweep(rows: Sequence[TableRow], *, task: str = "match",
                 loss: str = "output_error") -> str:
    """Held-out accuracy against the learning rate, on the tuning seed, per ``d_k`` and
    scaled/unscaled (the rate the table chose marked with *)."""
    chosen = [r for r in rows if r.task == task and r.loss == loss]
    if not chosen:
        raise AttentionInputError(f"no rows of task {task!r} and loss {loss!r} in the table")
    rates = [s[0] for s in chosen[0].sweep]
    lines = [f"{task}, {loss}: held-out accuracy on the tuning seed, by Adam's learning rate",
             "d_k            " + "".join(f"{lr:>9g}" for lr in rates)]
    for s, u in _pairs(chosen):
        for r in (s, u):
            cells = "".join(f"{acc:8.2f}{'*' if lr == r.learning_rate else ' '}"
                            for lr, _, acc in r.sweep)
            lines.append(f"{r.d_k:3d} {'scaled  ' if r.scale else 'unscaled'}   {cells}".rstrip())
    return "\n".join(lines)


# ------------------------------------------------------------------------- stored table


def _provenance(argv: Sequence[str]) -> dict[str, Any]:
    return {
        "command": "python -m course_lib.experiments.training " + " ".join(argv),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "machine": platform.machine(),
        "made": time.strftime("%Y-%m-%d"),
        "d_model": D_MODEL,
        "batch_size": BATCH_SIZE,
        "eval_size": EVAL_SIZE,
        "learning_rates": LEARNING_RATES,
        "tuning_seed_offset": TUNING_OFFSET,
        "near_zero": NEAR_ZERO,
    }


def write_table(rows: Sequence[TableRow], path: Path, argv: Sequence[str]) -> None:
    """Store ``rows`` as JSON at ``path``, with the command and versions that made them."""
    data = {"provenance": _provenance(argv), "rows": [asdict(r) for r in rows]}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def load_table(path: Path | str = TABLE_PATH) -> tuple[dict[str, Any], list[TableRow]]:
    """The stored table: its provenance (the command that made it, versions) and its rows.

    Raises
    ------
    AttentionInputError
        If the file is not a table that ``python -m course_lib.experiments.training --write`` wrote.

    Examples
    --------
    >>> provenance, rows = load_table()
    >>> provenance["command"].startswith("python -m course_lib.experiments.training")
    True
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        rows = [TableRow(**{**r, "sweep": tuple(tuple(s) for s in r["sweep"]),
                            "runs": tuple(tuple(x) for x in r["runs"])}) for r in data["rows"]]
        provenance = dict(data["provenance"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise AttentionInputError(
            f"{path} must be the table `python -m course_lib.experiments.training --write` stores "
            f"(got {type(exc).__name__}: {exc})") from None
    return provenance, rows


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m course_lib.experiments.training [--write] [--seed N] [--steps N] ...``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(
        prog="python -m course_lib.experiments.training",
        description="Train one head (W_Q, W_K) with and without 1/sqrt(d_k), on two tasks "
                    "and two losses, and print the held-out accuracies (see the docstring of "
                    "course_lib.experiments.training for the tasks and the learning-rate rule).")
    parser.add_argument("--seed", type=int, default=0, help="first seed of the table (0)")
    parser.add_argument("--seeds", type=int, default=3, help="seeds per condition (3)")
    parser.add_argument("--steps", type=int, default=STEPS, help=f"steps per run ({STEPS})")
    parser.add_argument("--d-k", type=int, nargs="+", default=list(D_KS), dest="d_ks",
                        help=f"the d_k values ({' '.join(map(str, D_KS))})")
    parser.add_argument("--task", nargs="+", default=list(TASKS), dest="tasks",
                        help=f"the tasks ({' '.join(TASKS)})")
    parser.add_argument("--loss", nargs="+", default=list(LOSSES), dest="losses",
                        help=f"the losses ({' '.join(LOSSES)})")
    parser.add_argument("--optimiser", default="adam", help="adam (default) or sgd")
    parser.add_argument("--write", action="store_true",
                        help=f"store the table in {TABLE_PATH.relative_to(TABLE_PATH.parents[3])}")
    args = parser.parse_args(argv)
    try:
        start = time.perf_counter()
        rows = training_table(args.d_ks, tasks=args.tasks, losses=args.losses,
                              optimiser=args.optimiser, seed=args.seed, n_seeds=args.seeds,
                              steps=args.steps,
                              log=lambda line: print(line, file=sys.stderr, flush=True))
    except AttentionInputError as exc:
        parser.error(str(exc))
    print(f"{args.steps} steps of {BATCH_SIZE} examples, d_model {D_MODEL}; learning rate: "
          f"the lowest held-out loss of the grid on seed {args.seed + TUNING_OFFSET}; "
          f"accuracy on {EVAL_SIZE} held-out examples, mean (lowest-highest) over seeds "
          f"{args.seed}-{args.seed + args.seeds - 1}. Chance: 1/8 (match), 1/16 (argmax).")
    print(format_table(rows))
    if args.write:
        write_table(rows, TABLE_PATH, argv)
        print(f"stored in {TABLE_PATH}")
    print(f"({time.perf_counter() - start:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
