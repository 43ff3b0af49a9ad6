r"""Training, measured: does dividing by :math:`\sqrt{d_k}` help a model learn where to look?

The task (small enough for numpy in seconds)
--------------------------------------------
Every example is one query token and :data:`N_KEYS` = 8 key tokens, each a vector of
:data:`D_MODEL` = 32 numbers drawn from N(0, 1). One key, at a random position, *matches*
the query by a hidden rule: its first :data:`MATCH_DIMS` = 8 numbers are a fixed hidden
rotation of the query's first 8, plus noise of standard deviation :data:`NOISE`; its other
24 numbers, and all of the other keys, are unrelated. Each key's value is its position
(one-hot), so the attention output is a copy of *where the query looks*, and the loss is
the squared distance of that output from the matching key's value:

.. math::

    q = x_q W_Q,\quad k_j = x_j W_K,\quad p = \mathrm{softmax}\bigl(q K^T c\bigr),\quad
    L = \tfrac12 \lVert p\,V - v_{\text{match}} \rVert^2 = \tfrac12 \lVert p - e_{\text{match}}
    \rVert^2,

with :math:`c = 1/\sqrt{d_k}` (scaled) or :math:`c = 1` (unscaled), averaged over a batch.
Chance accuracy is 1/8; the noise makes a perfect score impossible (about 0.9 is the best
seen here). Only :math:`W_Q` and :math:`W_K` (each ``D_MODEL × d_k``) are learnt; they start
with N(0, 1/D_MODEL) entries, so the queries and keys start with unit-variance entries and
the unscaled scores with standard deviation :math:`\sqrt{d_k}`, as in lesson 03. Their
gradients come from :func:`course_lib.attention_backward`.

How the table is made (``python -m course_lib.training``)
---------------------------------------------------------
For each ``d_k`` in :data:`D_KS` (16: small; 64: a real head size; 256: large), each
optimiser (plain SGD, Adam) and each of scaled / unscaled, the learning rate is the one of
:data:`LEARNING_RATES` with the lowest held-out final loss on a *tuning seed* (``seed +
1000``) that the table does not use. With that rate, training runs on ``seed, seed + 1,
seed + 2`` and the table prints the mean held-out loss and accuracy. The same seed gives the
same task, start and batches to the scaled and unscaled runs, so they differ only in
:math:`c`.

Public API
----------
``train(d_k, *, scale=True, optimiser="adam", learning_rate=None, steps=STEPS, seed=0)``
    One training run; returns a :class:`TrainingRun` with per-step loss, accuracy,
    :math:`\lVert\partial L/\partial W_Q\rVert` and attention entropy. A run at
    ``d_k = 64`` takes a fraction of a second (a lesson cell can afford it).
``loss_and_gradients(W_Q, W_K, batch, *, scale=True)``
    The training loss of one batch and its gradients with respect to ``W_Q`` and ``W_K``
    (the gradient :func:`train` uses); ``initial_weights(d_k, seed=0)`` and
    ``sample_batch(seed=0, n=BATCH_SIZE)`` give its start and its first batch.
``tune_learning_rate(d_k, *, scale, optimiser, steps=STEPS, seed=1000)``
    The rule above for one condition.
``training_table(d_ks=D_KS, *, seed=0, n_seeds=3, steps=STEPS)`` and ``format_table(rows)``
    The table, as data and as text.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from ..attention import attention, row_entropy
from ..backward import attention_backward
from ..errors import AttentionInputError

__all__ = [
    "D_KS",
    "LEARNING_RATES",
    "STEPS",
    "Batch",
    "TableRow",
    "TrainingRun",
    "format_table",
    "initial_weights",
    "loss_and_gradients",
    "sample_batch",
    "train",
    "training_table",
    "tune_learning_rate",
]

FloatArray = NDArray[np.float64]

#: tokens per example that the query can look at (one of them matches)
N_KEYS = 8
#: numbers per token
D_MODEL = 32
#: how many of a token's numbers carry the hidden rule
MATCH_DIMS = 8
#: standard deviation of the noise on the matching key's rule numbers
NOISE = 0.5
#: examples per training step
BATCH_SIZE = 32
#: held-out examples for the final loss and accuracy
EVAL_SIZE = 1024
#: training steps of one run
STEPS = 400
#: the d_k of the table: small, a real head size, large
D_KS: tuple[int, ...] = (16, 64, 256)
#: the grid each condition's learning rate is picked from
LEARNING_RATES: dict[str, tuple[float, ...]] = {
    "sgd": (0.1, 0.3, 1.0, 3.0),
    "adam": (0.001, 0.003, 0.01, 0.03),
}
#: the tuning seed is the table's seed plus this
TUNING_OFFSET = 1000

_VALUES = np.eye(N_KEYS)  # each key's value is its position, one-hot


@dataclass(frozen=True)
class Batch:
    """Examples of the task.

    Attributes
    ----------
    queries : ndarray, shape (n, 1, D_MODEL)
    keys : ndarray, shape (n, N_KEYS, D_MODEL)
    match : ndarray of int, shape (n,)
        Position of the matching key in each example.
    """

    queries: FloatArray
    keys: FloatArray
    match: NDArray[np.int64]


@dataclass(frozen=True)
class TrainingRun:
    """One training run and what it recorded at every step.

    Attributes
    ----------
    d_k, scale, optimiser, learning_rate, seed, steps
        The run's settings.
    loss, accuracy, grad_norm_wq, entropy : ndarray, shape (steps,)
        Per step, on that step's batch before the update: the loss; the fraction of
        examples whose largest weight is on the matching key; the Frobenius norm of
        :math:`\\partial L/\\partial W_Q`; the mean attention entropy in nats
        (:math:`\\log 8 \\approx 2.08` is even, 0 one-hot).
    final_loss, final_accuracy : float
        After training, on :data:`EVAL_SIZE` held-out examples.
    W_Q, W_K : ndarray, shape (D_MODEL, d_k)
        The weights after training.
    """

    d_k: int
    scale: bool
    optimiser: str
    learning_rate: float
    seed: int
    steps: int
    loss: FloatArray
    accuracy: FloatArray
    grad_norm_wq: FloatArray
    entropy: FloatArray
    final_loss: float
    final_accuracy: float
    W_Q: FloatArray = field(repr=False, compare=False)
    W_K: FloatArray = field(repr=False, compare=False)


def _check_int(name: str, value: object, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise AttentionInputError(f"{name} must be an integer >= {minimum} (got {value!r})")
    return int(value)


def _check_optimiser(optimiser: object) -> str:
    if optimiser not in LEARNING_RATES:
        raise AttentionInputError(
            f"optimiser must be one of {', '.join(repr(o) for o in LEARNING_RATES)} "
            f"(got {optimiser!r})"
        )
    return str(optimiser)


def _hidden_rule(seed: int) -> FloatArray:
    """The task's hidden rotation (MATCH_DIMS × MATCH_DIMS), fixed by the seed."""
    rng = np.random.default_rng([seed, 0])
    rotation, _ = np.linalg.qr(rng.standard_normal((MATCH_DIMS, MATCH_DIMS)))
    return rotation


def _sample(rule: FloatArray, rng: np.random.Generator, n: int) -> Batch:
    queries = rng.standard_normal((n, 1, D_MODEL))
    keys = rng.standard_normal((n, N_KEYS, D_MODEL))
    match = rng.integers(0, N_KEYS, n)
    keys[np.arange(n), match, :MATCH_DIMS] = (
        queries[:, 0, :MATCH_DIMS] @ rule.T + NOISE * rng.standard_normal((n, MATCH_DIMS))
    )
    return Batch(queries, keys, match)


def _forward(W_Q: FloatArray, W_K: FloatArray, batch: Batch, scale: bool):
    Q = batch.queries @ W_Q  # (n, 1, d_k)
    K = batch.keys @ W_K  # (n, N_KEYS, d_k)
    output, weights = attention(Q, K, _VALUES, scale=scale)  # output = weights here
    error = output.copy()
    error[np.arange(len(batch.match)), 0, batch.match] -= 1.0
    loss = 0.5 * float((error**2).sum(axis=-1).mean())
    return Q, K, weights, error, loss


def _step(W_Q: FloatArray, W_K: FloatArray, batch: Batch, scale: bool):
    """Loss, weights and (dW_Q, dW_K) of one batch: the one gradient training uses."""
    Q, K, weights, error, loss = _forward(W_Q, W_K, batch, scale)
    dQ, dK, _ = attention_backward(Q, K, _VALUES, error / len(batch.match), scale=scale)
    # einsum, not a BLAS product: multithreaded BLAS made these small products ten times
    # slower on a busy 2-core machine (measured: 400 products, 3.4 s against 0.28 s)
    grads = (np.einsum("nqm,nqd->md", batch.queries, dQ),
             np.einsum("nkm,nkd->md", batch.keys, dK))
    return loss, weights, grads


def loss_and_gradients(
    W_Q: FloatArray, W_K: FloatArray, batch: Batch, *, scale: bool = True
) -> tuple[float, FloatArray, FloatArray]:
    r"""The training loss of one batch and its gradients with respect to W_Q and W_K.

    This is the gradient :func:`train` steps along. It goes back through
    :func:`course_lib.attention_backward`: :math:`dO = (O - V_{\text{match}})/n`, then
    :math:`\partial L/\partial W_Q = \sum x_q^T\, dQ` and
    :math:`\partial L/\partial W_K = \sum x_j^T\, dK` over the batch.

    Parameters
    ----------
    W_Q, W_K : ndarray, shape (D_MODEL, d_k)
    batch : Batch
    scale : bool, default True

    Returns
    -------
    loss : float
    dW_Q, dW_K : ndarray, shape (D_MODEL, d_k)

    Examples
    --------
    >>> batch = sample_batch(seed=0, n=4)
    >>> W_Q, W_K = initial_weights(16, seed=0)
    >>> loss, dW_Q, dW_K = loss_and_gradients(W_Q, W_K, batch)
    >>> dW_Q.shape, dW_K.shape
    ((32, 16), (32, 16))
    """
    loss, _, (dW_Q, dW_K) = _step(W_Q, W_K, batch, scale)
    return loss, dW_Q, dW_K


def initial_weights(d_k: int, *, seed: int = 0) -> tuple[FloatArray, FloatArray]:
    """The start of :func:`train`: W_Q, W_K with N(0, 1/D_MODEL) entries, fixed by the seed.

    Returns
    -------
    W_Q, W_K : ndarray, shape (D_MODEL, d_k)
    """
    d_k = _check_int("d_k", d_k, 1)
    rng = np.random.default_rng([_check_int("seed", seed, 0), 1])
    W_Q = rng.standard_normal((D_MODEL, d_k)) / math.sqrt(D_MODEL)
    W_K = rng.standard_normal((D_MODEL, d_k)) / math.sqrt(D_MODEL)
    return W_Q, W_K


def sample_batch(*, seed: int = 0, n: int = BATCH_SIZE) -> Batch:
    """``n`` fresh examples of the task whose hidden rule ``seed`` fixes (the first batch
    that :func:`train` sees with this seed, when ``n = BATCH_SIZE``)."""
    seed = _check_int("seed", seed, 0)
    return _sample(_hidden_rule(seed), np.random.default_rng([seed, 2]), _check_int("n", n, 1))


def train(
    d_k: int,
    *,
    scale: bool = True,
    optimiser: str = "adam",
    learning_rate: float | None = None,
    steps: int = STEPS,
    seed: int = 0,
) -> TrainingRun:
    """Train W_Q and W_K on the task of this module and record every step.

    Parameters
    ----------
    d_k : int
        Width of the queries and keys.
    scale : bool, default True
        Divide the scores by :math:`\\sqrt{d_k}`.
    optimiser : {"adam", "sgd"}, default "adam"
        Adam with the usual constants (0.9, 0.999, 1e-8), or plain gradient descent.
    learning_rate : float, optional
        Default: the middle of the optimiser's grid in :data:`LEARNING_RATES` (0.01 for
        Adam, 1.0 for SGD). The table tunes it per condition instead.
    steps : int, default STEPS
    seed : int, default 0
        Fixes the hidden rule, the start, the batches and the held-out set; the same seed
        gives the same run, and the same data to the scaled and unscaled runs.

    Returns
    -------
    TrainingRun

    Raises
    ------
    AttentionInputError
        If ``d_k`` or ``steps`` is not a positive integer, ``optimiser`` is unknown or
        ``learning_rate`` is not a positive finite number.

    Examples
    --------
    >>> run = train(16, steps=50, seed=0)
    >>> run.loss.shape, bool(run.loss[-10:].mean() < run.loss[:10].mean())
    ((50,), True)
    """
    d_k = _check_int("d_k", d_k, 1)
    steps = _check_int("steps", steps, 1)
    seed = _check_int("seed", seed, 0)
    optimiser = _check_optimiser(optimiser)
    if learning_rate is None:
        learning_rate = LEARNING_RATES[optimiser][2]
    if isinstance(learning_rate, bool) or not isinstance(learning_rate, int | float) or not (
        math.isfinite(learning_rate) and learning_rate > 0
    ):
        raise AttentionInputError(
            f"learning_rate must be a positive finite number (got {learning_rate!r})"
        )
    rule = _hidden_rule(seed)
    data_rng = np.random.default_rng([seed, 2])
    W_Q, W_K = initial_weights(d_k, seed=seed)
    moments = [np.zeros_like(W_Q), np.zeros_like(W_K), np.zeros_like(W_Q), np.zeros_like(W_K)]
    record = {k: np.empty(steps) for k in ("loss", "accuracy", "grad_norm_wq", "entropy")}
    for step in range(steps):
        batch = _sample(rule, data_rng, BATCH_SIZE)
        loss, weights, grads = _step(W_Q, W_K, batch, scale)
        record["loss"][step] = loss
        record["accuracy"][step] = (weights[:, 0].argmax(axis=-1) == batch.match).mean()
        record["grad_norm_wq"][step] = np.linalg.norm(grads[0])
        record["entropy"][step] = row_entropy(weights[:, 0]).mean()
        for i, (W, g) in enumerate(zip((W_Q, W_K), grads, strict=True)):
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
                W -= learning_rate * m_hat / (np.sqrt(v_hat) + 1e-8)
    held_out = _sample(rule, np.random.default_rng([seed, 3]), EVAL_SIZE)
    _, _, weights, _, final_loss = _forward(W_Q, W_K, held_out, scale)
    final_accuracy = float((weights[:, 0].argmax(axis=-1) == held_out.match).mean())
    return TrainingRun(d_k, bool(scale), optimiser, float(learning_rate), seed, steps,
                       final_loss=final_loss, final_accuracy=final_accuracy, W_Q=W_Q, W_K=W_K,
                       **record)


def tune_learning_rate(
    d_k: int, *, scale: bool, optimiser: str, steps: int = STEPS, seed: int = TUNING_OFFSET
) -> float:
    """The rate of :data:`LEARNING_RATES` with the lowest held-out final loss on ``seed``.

    Ties go to the smaller rate. Use a seed that the runs you compare do not use.

    Examples
    --------
    >>> tune_learning_rate(16, scale=True, optimiser="adam", steps=30) in LEARNING_RATES["adam"]
    True
    """
    optimiser = _check_optimiser(optimiser)
    losses = [train(d_k, scale=scale, optimiser=optimiser, learning_rate=lr, steps=steps,
                    seed=seed).final_loss for lr in LEARNING_RATES[optimiser]]
    return LEARNING_RATES[optimiser][int(np.argmin(losses))]


@dataclass(frozen=True)
class TableRow:
    """One line of the table: one ``d_k`` and optimiser, scaled against unscaled.

    ``loss_*`` and ``accuracy_*`` are means over ``seeds`` of the held-out final numbers;
    ``lr_*`` are the tuned learning rates.
    """

    d_k: int
    optimiser: str
    lr_scaled: float
    lr_unscaled: float
    loss_scaled: float
    loss_unscaled: float
    accuracy_scaled: float
    accuracy_unscaled: float
    seeds: tuple[int, ...]


def training_table(
    d_ks: Sequence[int] = D_KS,
    *,
    optimisers: Sequence[str] = ("sgd", "adam"),
    seed: int = 0,
    n_seeds: int = 3,
    steps: int = STEPS,
) -> list[TableRow]:
    """Tune, then train on ``n_seeds`` seeds, per ``d_k``, optimiser and scaled/unscaled.

    Examples
    --------
    >>> [row] = training_table([8], optimisers=["adam"], n_seeds=1, steps=20)
    >>> row.d_k, row.optimiser, row.seeds
    (8, 'adam', (0,))
    """
    if len(d_ks) == 0 or len(optimisers) == 0:
        raise AttentionInputError(
            f"d_ks and optimisers must each list at least one entry (got {list(d_ks)!r} "
            f"and {list(optimisers)!r})"
        )
    seed = _check_int("seed", seed, 0)
    n_seeds = _check_int("n_seeds", n_seeds, 1)
    seeds = tuple(range(seed, seed + n_seeds))
    rows = []
    for d_k in d_ks:
        for optimiser in optimisers:
            numbers = {}
            for scale in (True, False):
                lr = tune_learning_rate(d_k, scale=scale, optimiser=optimiser, steps=steps,
                                        seed=seed + TUNING_OFFSET)
                runs = [train(d_k, scale=scale, optimiser=optimiser, learning_rate=lr,
                              steps=steps, seed=s) for s in seeds]
                numbers[scale] = (lr, float(np.mean([r.final_loss for r in runs])),
                                  float(np.mean([r.final_accuracy for r in runs])))
            rows.append(TableRow(
                int(d_k), optimiser, numbers[True][0], numbers[False][0], numbers[True][1],
                numbers[False][1], numbers[True][2], numbers[False][2], seeds))
    return rows


def format_table(rows: Sequence[TableRow]) -> str:
    """The table as text, one line per ``d_k`` and optimiser."""
    lines = [
        "  d_k  optimiser   final loss: scaled  unscaled   accuracy: scaled  unscaled"
        "   learning rate: scaled  unscaled   seeds",
    ]
    for r in rows:
        lines.append(
            f"{r.d_k:5d}  {r.optimiser:9s}   {r.loss_scaled:18.3f}  {r.loss_unscaled:8.3f}"
            f"   {r.accuracy_scaled:16.2f}  {r.accuracy_unscaled:8.2f}"
            f"   {r.lr_scaled:21g}  {r.lr_unscaled:8g}   {', '.join(map(str, r.seeds))}"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m course_lib.training [--seed N] [--seeds N] [--steps N] [--d-k D ...]``."""
    parser = argparse.ArgumentParser(
        prog="python -m course_lib.training",
        description="Train W_Q, W_K with and without 1/sqrt(d_k) and print the final "
                    "losses (see the docstring of course_lib.training for the task and "
                    "the learning-rate rule).")
    parser.add_argument("--seed", type=int, default=0, help="first seed of the table (0)")
    parser.add_argument("--seeds", type=int, default=3, help="seeds per condition (3)")
    parser.add_argument("--steps", type=int, default=STEPS, help=f"steps per run ({STEPS})")
    parser.add_argument("--d-k", type=int, nargs="+", default=list(D_KS), dest="d_ks",
                        help=f"the d_k values ({' '.join(map(str, D_KS))})")
    args = parser.parse_args(argv)
    try:
        for d in args.d_ks:
            _check_int("--d-k", d, 1)
        _check_int("--steps", args.steps, 1)
        _check_int("--seeds", args.seeds, 1)
        _check_int("--seed", args.seed, 0)
        start = time.perf_counter()
        rows = training_table(args.d_ks, seed=args.seed, n_seeds=args.seeds, steps=args.steps)
    except AttentionInputError as exc:
        parser.error(str(exc))
    print(f"{N_KEYS} keys, one matching (chance accuracy {1 / N_KEYS:.3f}); {args.steps} "
          f"steps of {BATCH_SIZE} examples; learning rate: the best held-out final loss of "
          f"the grid on seed {args.seed + TUNING_OFFSET}; loss and accuracy: means over "
          f"{EVAL_SIZE} held-out examples and the seeds.")
    print(format_table(rows))
    print(f"({time.perf_counter() - start:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
