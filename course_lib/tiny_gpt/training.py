r"""Training the model: Adam on batches of the task, the learning rate falling to 0.

:class:`Adam` is the optimiser of Kingma and Ba (2015), written out: for each parameter
:math:`\theta` with gradient :math:`g` at step :math:`t`,

.. math::

    m &\leftarrow \beta_1 m + (1 - \beta_1) g, \qquad
    v \leftarrow \beta_2 v + (1 - \beta_2) g^2, \\
    \theta &\leftarrow \theta - \eta_t\, \frac{m / (1 - \beta_1^t)}
        {\sqrt{v / (1 - \beta_2^t)} + \epsilon},

with :math:`\eta_t = \eta\,(1 - t / (T + 1))` over a run of :math:`T` steps: the steps
shrink as training ends, so the weights settle instead of jumping around the minimum.

:func:`train` draws a fresh batch of the task for every step (from ``seed + 1``; the start
from ``seed``) and measures the accuracy on held-out sequences (:func:`held_out`, from a
seed training never uses) every :attr:`TrainingConfig.eval_every` steps. The same seed
gives the same run, number for number, on the same machine and numpy: a different BLAS
may round the last bit of a matrix product differently, and training amplifies that, so
another machine's run is another run of the same recipe, not the same numbers.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from ..errors import AttentionInputError
from .model import TinyGPT, forward, init_model, loss_and_gradients
from .task import Batch, make_batch

__all__ = [
    "EVAL_SEED",
    "Adam",
    "TrainingConfig",
    "TrainingRun",
    "accuracy",
    "held_out",
    "train",
]

FloatArray = NDArray[np.float64]

#: the seed of the held-out sequences; training draws from ``seed`` and ``seed + 1``
EVAL_SEED = 1_000_003


class Adam:
    """Adam, one step at a time, for a dict of parameters.

    Parameters
    ----------
    learning_rate : float
    beta1, beta2, eps : float
        The usual defaults.

    Examples
    --------
    Minimise (x - 3)² from x = 0:

    >>> adam = Adam(learning_rate=0.1)
    >>> params = {"x": np.zeros(1)}
    >>> for _ in range(200):
    ...     params = adam.step(params, {"x": 2 * (params["x"] - 3)})
    >>> params["x"].round(2)
    array([3.])
    """

    def __init__(self, learning_rate: float = 0.01, beta1: float = 0.9, beta2: float = 0.999,
                 eps: float = 1e-8) -> None:
        for name, value, ok, want in (
                ("learning_rate", learning_rate, 0 < learning_rate < math.inf, "> 0"),
                ("beta1", beta1, 0 <= beta1 < 1, "in [0, 1)"),
                ("beta2", beta2, 0 <= beta2 < 1, "in [0, 1)"),
                ("eps", eps, 0 < eps < math.inf, "> 0")):
            if not ok:
                raise AttentionInputError(f"{name} must be a number {want} (got {value!r})")
        self.learning_rate = float(learning_rate)
        self.beta1, self.beta2, self.eps = float(beta1), float(beta2), float(eps)
        self.t = 0
        self._m: dict[str, FloatArray] = {}
        self._v: dict[str, FloatArray] = {}

    def step(self, params: Mapping[str, FloatArray], grads: Mapping[str, FloatArray], *,
             scale: float = 1.0) -> dict[str, FloatArray]:
        """New parameters after one step (``scale`` times the learning rate); the old
        arrays are not written to."""
        if set(grads) != set(params):
            raise AttentionInputError(f"grads must name the same parameters as params "
                                      f"(got {sorted(grads)} for {sorted(params)})")
        self.t += 1
        b1, b2, t = self.beta1, self.beta2, self.t
        rate = self.learning_rate * scale
        new = {}
        for name, p in params.items():
            g = grads[name]
            if g.shape != p.shape:
                raise AttentionInputError(f"the gradient of {name} must have its shape "
                                          f"{p.shape} (got {g.shape})")
            m = self._m[name] = b1 * self._m.get(name, 0.0) + (1 - b1) * g
            v = self._v[name] = b2 * self._v.get(name, 0.0) + (1 - b2) * g * g
            new[name] = p - rate * (m / (1 - b1**t)) / (np.sqrt(v / (1 - b2**t)) + self.eps)
        return new


@dataclass(frozen=True)
class TrainingConfig:
    """The recipe of a run; the shipped model's is the default.

    Attributes
    ----------
    d_model, heads, layers : int
        The model's shape (:func:`course_lib.tiny_gpt.model.init_model`).
    steps : int
        Adam steps, one batch each.
    batch_size : int
        Sequences per batch.
    learning_rate : float
        At the first step; it falls linearly to 0 after the last.
    seed : int
        The start (``seed``) and the batches (``seed + 1``).
    eval_every : int
        Steps between two measurements on the held-out sequences.
    eval_size : int
        Held-out sequences measured during training.
    """

    d_model: int = 32
    heads: int = 2
    layers: int = 2
    steps: int = 1500
    batch_size: int = 32
    learning_rate: float = 0.01
    seed: int = 0
    eval_every: int = 50
    eval_size: int = 500

    def __post_init__(self) -> None:
        for name in ("d_model", "heads", "layers", "steps", "batch_size", "eval_every",
                     "eval_size"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise AttentionInputError(f"{name} must be a positive whole number "
                                          f"(got {value!r})")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise AttentionInputError(f"seed must be a whole number ≥ 0 (got {self.seed!r})")
        if not (isinstance(self.learning_rate, int | float) and 0 < self.learning_rate < 1):
            raise AttentionInputError(f"learning_rate must be a number in (0, 1) (got "
                                      f"{self.learning_rate!r})")


@dataclass(frozen=True)
class TrainingRun:
    """What :func:`train` did.

    Attributes
    ----------
    model : TinyGPT
        The weights after the last step.
    config : TrainingConfig
    losses : ndarray, shape (steps,)
        The loss of each step's batch, before that step's update.
    eval_steps : tuple of int
        The steps after which the held-out accuracy was measured (0: before training).
    eval_accuracy : tuple of float
        The held-out accuracy then.
    cpu_seconds, wall_seconds : float
        What the run took (this process's CPU time, and the clock).
    """

    model: TinyGPT
    config: TrainingConfig
    losses: FloatArray
    eval_steps: tuple[int, ...]
    eval_accuracy: tuple[float, ...]
    cpu_seconds: float = field(compare=False)
    wall_seconds: float = field(compare=False)


def held_out(n: int = 2000) -> Batch:
    """``n`` sequences from :data:`EVAL_SEED`, a seed training never draws from."""
    return make_batch(n, seed=EVAL_SEED)


def accuracy(model: TinyGPT, batch: Batch, *, ablate: Iterable[tuple[int, int]] = ()
             ) -> float:
    """The share of the scored positions where the model's most likely next token is right.

    Examples
    --------
    >>> b = make_batch(50, seed=1)
    >>> 0 <= accuracy(init_model(seed=0), b) <= 1
    True
    """
    predicted = forward(model, batch.tokens, ablate=ablate).predictions()
    return float((predicted[batch.scored] == batch.targets[batch.scored]).mean())


def train(config: TrainingConfig = TrainingConfig(), *, start: TinyGPT | None = None,
          stop_after: int | None = None, log: Callable[[str], None] | None = None
          ) -> TrainingRun:
    """Train a model with Adam, from scratch or from ``start``.

    Parameters
    ----------
    config : TrainingConfig
    start : TinyGPT, optional
        Weights to start from, of the config's shape; by default, random ones from
        ``config.seed``.
    stop_after : int, optional
        Stop after this many steps of the recipe (the learning rate still falls as for
        ``config.steps``): the first steps of the full run, number for number.
    log : callable, optional
        Called with one line of text after each measurement (the command prints them).

    Returns
    -------
    TrainingRun

    Examples
    --------
    >>> run = train(TrainingConfig(steps=3, eval_every=3, eval_size=20))
    >>> run.losses.shape, run.eval_steps
    ((3,), (0, 3))
    """
    steps = config.steps if stop_after is None else stop_after
    if isinstance(steps, bool) or not isinstance(steps, int) or not 1 <= steps <= config.steps:
        raise AttentionInputError(f"stop_after must be a whole number from 1 to "
                                  f"{config.steps} (got {stop_after!r})")
    cpu, wall = time.process_time(), time.perf_counter()
    model = init_model(d_model=config.d_model, heads=config.heads, layers=config.layers,
                       seed=config.seed) if start is None else start
    if not isinstance(model, TinyGPT) or (model.d_model, model.heads, model.layers) != (
            config.d_model, config.heads, config.layers):
        raise AttentionInputError(
            f"start must be a TinyGPT of the config's shape, d_model = {config.d_model}, "
            f"{config.heads} heads, {config.layers} layers (got {start!r})")
    batches = np.random.default_rng(config.seed + 1)
    evaluation = held_out(config.eval_size)
    adam = Adam(config.learning_rate)
    losses = np.empty(steps)
    eval_steps, eval_accuracy = [0], [accuracy(model, evaluation)]
    if log:
        log(f"step     0  held-out accuracy {eval_accuracy[0]:6.1%}")
    for step in range(1, steps + 1):
        batch = make_batch(config.batch_size, seed=batches)
        losses[step - 1], grads = loss_and_gradients(model, batch.tokens, batch.targets,
                                                     batch.scored)
        model = model.with_parameters(
            adam.step(model.parameters(), grads, scale=1 - step / (config.steps + 1)))
        if step % config.eval_every == 0 or step == steps:
            eval_steps.append(step)
            eval_accuracy.append(accuracy(model, evaluation))
            if log:
                recent = losses[max(0, step - config.eval_every):step].mean()
                log(f"step {step:5d}  loss {recent:6.3f}  held-out accuracy "
                    f"{eval_accuracy[-1]:6.1%}")
    return TrainingRun(model, config, losses, tuple(eval_steps), tuple(eval_accuracy),
                       time.process_time() - cpu, time.perf_counter() - wall)
