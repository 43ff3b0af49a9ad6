r"""One transformer block, step by step: which steps mix tokens, and which work per token.

A BERT-style encoder layer (all-MiniLM-L6-v2's, lesson 11) runs seven steps on the rows
``x`` of shape ``(n, d_model)``, one row per token:

=================  ===================================================  ===============
step               what it computes                                     mixes tokens?
=================  ===================================================  ===============
``attention``      every head's :math:`\mathrm{softmax}(QK^T/\sqrt{d_k})V`,  yes
                   heads concatenated back to ``d_model`` columns
``W_O``            ``attention @ W_O + b_O``                            no
``residual``       ``x + W_O``: the block's input added back            no
``LayerNorm``      each row to mean 0 and variance 1, then a gain       no
                   and a bias
``MLP``            ``gelu(h @ W_1 + b_1) @ W_2 + b_2``                   no
``residual 2``     ``LayerNorm + MLP``                                   no
``LayerNorm 2``    the block's output                                   no
=================  ===================================================  ===============

Only attention lets one token's row depend on another's; every other step works on each
row alone (with the same weights for every row). :func:`rows_each_step_changes` measures
this: it changes one row of what a step reads and lists the rows of the step's output that
change. With a causal mask attention changes only the rows at and after that token, so in
a decoder no step changes an earlier row, and every layer's KV cache stays valid
(:mod:`course_lib.kv_cache`).

:func:`course_lib.real_model.model_forward.load_block` reads one layer of the real model (when its
weights are installed), :func:`random_block` makes a seeded stand-in of any shape;
:func:`block_steps` runs either, and :func:`course_lib.real_model.model_forward.run_model` runs its
six layers with it.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .attention import _as_float_array, _check_finite, attention_weights, causal_mask
from .errors import AttentionInputError
from .heads import merge_heads, split_heads

__all__ = [
    "STEPS",
    "BlockSteps",
    "BlockWeights",
    "block_steps",
    "gelu",
    "layer_norm",
    "random_block",
    "rows_each_step_changes",
]

FloatArray = NDArray[np.float64]

#: The block's steps in order (post-LayerNorm, as BERT and MiniLM run them).
STEPS = ("attention", "W_O", "residual", "LayerNorm", "MLP", "residual 2", "LayerNorm 2")


@dataclass(frozen=True)
class BlockWeights:
    """The weights of one block; matrices are ``(d_in, d_out)``: a row times the matrix.

    Attributes
    ----------
    W_Q, W_K, W_V, W_O : ndarray, shape (d_model, d_model)
    b_Q, b_K, b_V, b_O : ndarray, shape (d_model,)
    ln1_gain, ln1_bias, ln2_gain, ln2_bias : ndarray, shape (d_model,)
    W_1 : ndarray, shape (d_model, d_ff)
    b_1 : ndarray, shape (d_ff,)
    W_2 : ndarray, shape (d_ff, d_model)
    b_2 : ndarray, shape (d_model,)
    heads : int
        ``d_model`` splits into ``heads`` heads of ``d_k = d_model // heads`` columns.
    eps : float
        LayerNorm's small number under the square root.
    source : str
        Where the weights come from, in words.
    """

    W_Q: FloatArray
    b_Q: FloatArray
    W_K: FloatArray
    b_K: FloatArray
    W_V: FloatArray
    b_V: FloatArray
    W_O: FloatArray
    b_O: FloatArray
    ln1_gain: FloatArray
    ln1_bias: FloatArray
    W_1: FloatArray
    b_1: FloatArray
    W_2: FloatArray
    b_2: FloatArray
    ln2_gain: FloatArray
    ln2_bias: FloatArray
    heads: int
    eps: float
    source: str

    @property
    def d_model(self) -> int:
        """The width of a token's row."""
        return int(self.W_Q.shape[0])

    @property
    def d_ff(self) -> int:
        """The width of the MLP's hidden layer."""
        return int(self.W_1.shape[1])

    def __repr__(self) -> str:
        return (f"BlockWeights({self.source}: d_model = {self.d_model}, {self.heads} heads, "
                f"d_ff = {self.d_ff})")


@dataclass(frozen=True)
class BlockSteps:
    """What each step of one block computed.

    Attributes
    ----------
    q, k, v : ndarray, shape (heads, n, d_k)
        Every head's queries, keys and values.
    weights : ndarray, shape (heads, n, n)
        Every head's attention weights.
    steps : dict of str to ndarray, shape (n, d_model)
        The output of each step of :data:`STEPS`, in order.
    """

    q: FloatArray
    k: FloatArray
    v: FloatArray
    weights: FloatArray
    steps: dict[str, FloatArray]

    @property
    def output(self) -> FloatArray:
        """The block's output, shape ``(n, d_model)``: the last step's."""
        return self.steps[STEPS[-1]]


def layer_norm(x: ArrayLike, gain: ArrayLike, bias: ArrayLike, eps: float) -> FloatArray:
    """Each row to mean 0 and variance 1 (plus ``eps``), then times ``gain`` plus ``bias``.

    Parameters
    ----------
    x : array_like, shape (..., d)
    gain, bias : array_like, shape (d,)
    eps : float

    Returns
    -------
    ndarray, shape (..., d)

    Examples
    --------
    >>> layer_norm([[1.0, 3.0], [10.0, 10.0]], [1.0, 1.0], [0.0, 0.5], 1e-12)
    array([[-1. ,  1.5],
           [ 0. ,  0.5]])
    """
    x = np.asarray(x, dtype=np.float64)
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gain + bias


_erf = np.frompyfunc(math.erf, 1, 1)


def gelu(x: ArrayLike) -> FloatArray:
    """BERT's GELU, the exact one: x · Φ(x) = x/2 · (1 + erf(x / √2)), entry by entry.

    Examples
    --------
    >>> gelu([-1.0, 0.0, 1.0]).round(4)
    array([-0.1587,  0.    ,  0.8413])
    """
    x = np.asarray(x, dtype=np.float64)
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)).astype(np.float64))


def _heads(x: FloatArray, w: BlockWeights, mask: NDArray[np.bool_] | None
           ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray]:
    """Every head's q, k, v, weights, and their outputs concatenated to (n, d_model)."""
    # (n, d_model) -> (heads, n, d_k): head h takes columns h·d_k … (h+1)·d_k - 1 (lesson 09)
    q, k, v = (split_heads(x @ W + b, w.heads)
               for W, b in ((w.W_Q, w.b_Q), (w.W_K, w.b_K), (w.W_V, w.b_V)))
    weights = attention_weights(q, k, mask)  # the equation of the course, every head
    return q, k, v, weights, merge_heads(weights @ v)


def _step(name: str, reads: FloatArray, w: BlockWeights, skip: FloatArray) -> FloatArray:
    """One step after attention: its output from what it reads (``skip``: what a
    residual adds back)."""
    if name == "W_O":
        return reads @ w.W_O + w.b_O
    if name in ("residual", "residual 2"):
        return skip + reads
    if name == "LayerNorm":
        return layer_norm(reads, w.ln1_gain, w.ln1_bias, w.eps)
    if name == "LayerNorm 2":
        return layer_norm(reads, w.ln2_gain, w.ln2_bias, w.eps)
    if name == "MLP":
        return gelu(reads @ w.W_1 + w.b_1) @ w.W_2 + w.b_2
    raise AttentionInputError(f"step must be one of {STEPS[1:]} (got {name!r})")


def _check(x: ArrayLike, w: BlockWeights, causal: bool, key_mask: ArrayLike | None = None
           ) -> tuple[FloatArray, NDArray | None]:
    if not isinstance(w, BlockWeights):
        raise AttentionInputError(f"weights must be BlockWeights, from random_block() or "
                                  f"model_forward.load_block() (got {type(w).__name__})")
    rows = _as_float_array("x", x, min_ndim=2, layout="(n, d_model)")
    if rows.shape[-1] != w.d_model or rows.shape[-2] == 0:
        raise AttentionInputError(f"x must have shape (n, {w.d_model}) = (n, d_model), or "
                                  f"(batch, n, {w.d_model}), for this block (got shape "
                                  f"{rows.shape})")
    _check_finite("x", rows)
    mask = causal_mask(rows.shape[-2]) if causal else None
    if key_mask is not None:
        keys = np.asarray(key_mask)
        if keys.dtype != np.bool_ or keys.shape != rows.shape[:-1]:
            raise AttentionInputError(
                f"key_mask must hold one boolean per token of x, shape {rows.shape[:-1]}, "
                f"True for a real token (got dtype {keys.dtype}, shape {keys.shape})")
        keys = keys[..., None, None, :]  # the same keys hidden from every head and query
        mask = keys if mask is None else mask & keys
    return rows, mask


def block_steps(x: ArrayLike, weights: BlockWeights, *, causal: bool = False,
                key_mask: ArrayLike | None = None) -> BlockSteps:
    """Run one block on the rows ``x``, keeping what every step computed.

    Parameters
    ----------
    x : array_like, shape (n, d_model) or (batch, n, d_model)
        One row per token (of each sentence of a batch).
    weights : BlockWeights
    causal : bool, default False
        Attention with the causal mask (a decoder's block); MiniLM uses none.
    key_mask : array_like of bool, shape (n,) or (batch, n), optional
        Which tokens are real in a padded batch (:func:`course_lib.padding.padding_mask`):
        every head of every query attends to those keys only. Only attention mixes tokens,
        so a real token's rows are then those of its sentence run alone.

    Returns
    -------
    BlockSteps

    Raises
    ------
    AttentionInputError
        If ``x`` does not have ``d_model`` columns or holds a number that is not finite, or
    ``key_mask`` is not one boolean per token.

    Examples
    --------
    >>> w = random_block(d_model=8, heads=2, d_ff=16)
    >>> run = block_steps(np.ones((3, 8)), w)
    >>> list(run.steps) == list(STEPS), run.output.shape, run.weights.shape
    (True, (3, 8), (2, 3, 3))
    >>> x = np.random.default_rng(0).normal(size=(3, 8))
    >>> padded = np.vstack([x[:2], 9.0 * np.ones((1, 8))])  # 2 real tokens, 1 of padding
    >>> alone = block_steps(x[:2], w).output
    >>> masked = block_steps(padded, w, key_mask=np.array([True, True, False])).output
    >>> bool(np.allclose(masked[:2], alone)), bool(np.allclose(block_steps(padded, w).output[:2],
    ...                                                        alone))
    (True, False)
    """
    rows, mask = _check(x, weights, causal, key_mask)
    q, k, v, attn_weights, concatenated = _heads(rows, weights, mask)
    steps = {"attention": concatenated}
    for before, name in itertools.pairwise(STEPS):
        skip = steps["LayerNorm"] if name == "residual 2" else rows
        steps[name] = _step(name, steps[before], weights, skip)
    return BlockSteps(q, k, v, attn_weights, steps)


def rows_each_step_changes(x: ArrayLike, weights: BlockWeights, token: int, *,
                           causal: bool = False, seed: int = 0
                           ) -> dict[str, tuple[int, ...]]:
    """For each step alone: change one token's row of what it reads; which output rows change?

    The block runs once on ``x``. Then, for each step, a random vector (seeded) is added to
    row ``token`` of the array that step reads (for a residual: of the branch it adds, the
    skip kept as it was), the step runs again on that, and the rows of its output that
    differ at all from before are listed. (Adding the same number to every entry would not
    do: LayerNorm subtracts each row's mean, so it would not see that change.)

    Parameters
    ----------
    x : array_like, shape (n, d_model)
    weights : BlockWeights
    token : int
        The row to change, ``0 <= token < n``.
    causal : bool, default False
    seed : int, default 0
        Of the random vector added to the row.

    Returns
    -------
    dict of str to tuple of int
        For each step of :data:`STEPS`, the rows of its output that changed.

    Raises
    ------
    AttentionInputError
        For a bad ``x`` or a ``token`` out of range.

    Examples
    --------
    >>> w = random_block(d_model=8, heads=2, d_ff=16)
    >>> x = np.random.default_rng(0).normal(size=(4, 8))
    >>> changed = rows_each_step_changes(x, w, token=1, causal=True)
    >>> changed["attention"], changed["MLP"]
    ((1, 2, 3), (1,))
    """
    rows, mask = _check(x, weights, causal)
    if rows.ndim != 2:
        raise AttentionInputError(f"x must have shape (n, {weights.d_model}) = (n, d_model): "
                                  f"one sentence (got shape {rows.shape})")
    n = rows.shape[0]
    if isinstance(token, bool) or not isinstance(token, int | np.integer) or not 0 <= token < n:
        raise AttentionInputError(f"token must be a row of x, 0 to {n - 1} (got {token!r})")
    run = block_steps(rows, weights, causal=causal)
    change = np.random.default_rng(seed).normal(size=rows.shape[1])
    changed = {}
    for before, name in zip((None, *STEPS), STEPS, strict=False):
        reads = (rows if before is None else run.steps[before]).copy()
        reads[token] += change
        if name == "attention":
            again = _heads(reads, weights, mask)[-1]
        else:
            skip = run.steps["LayerNorm"] if name == "residual 2" else rows
            again = _step(name, reads, weights, skip)
        differs = np.any(again != run.steps[name], axis=-1)
        changed[name] = tuple(int(i) for i in np.flatnonzero(differs))
    return changed


def random_block(d_model: int = 384, heads: int = 12, d_ff: int = 1536, *, seed: int = 0,
                 eps: float = 1e-12) -> BlockWeights:
    """A block with seeded random weights: MiniLM's shapes by default, not its numbers.

    Matrices are drawn from :math:`N(0, 1/d_\\text{in})` (so rows keep a size near 1),
    biases from :math:`N(0, 0.1^2)`, LayerNorm gains near 1 and biases near 0.

    Parameters
    ----------
    d_model, heads, d_ff : int
        ``heads`` must divide ``d_model``.
    seed : int, default 0
    eps : float, default 1e-12
        MiniLM's.

    Returns
    -------
    BlockWeights

    Raises
    ------
    AttentionInputError
        If a size is not a positive integer or ``heads`` does not divide ``d_model``.

    Examples
    --------
    >>> random_block(8, 2, 16)
    BlockWeights(random weights (seed 0): d_model = 8, 2 heads, d_ff = 16)
    """
    for name, value in (("d_model", d_model), ("heads", heads), ("d_ff", d_ff)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
            raise AttentionInputError(f"{name} must be a positive integer (got {value!r})")
    if d_model % heads:
        raise AttentionInputError(f"heads must divide d_model (got d_model = {d_model}, "
                                  f"heads = {heads})")
    rng = np.random.default_rng(seed)

    def matrix(d_in: int, d_out: int) -> FloatArray:
        return rng.normal(scale=1 / math.sqrt(d_in), size=(d_in, d_out))

    def vector(d: int, centre: float = 0.0) -> FloatArray:
        return centre + rng.normal(scale=0.1, size=d)

    return BlockWeights(
        W_Q=matrix(d_model, d_model), b_Q=vector(d_model),
        W_K=matrix(d_model, d_model), b_K=vector(d_model),
        W_V=matrix(d_model, d_model), b_V=vector(d_model),
        W_O=matrix(d_model, d_model), b_O=vector(d_model),
        ln1_gain=vector(d_model, 1.0), ln1_bias=vector(d_model),
        W_1=matrix(d_model, d_ff), b_1=vector(d_ff),
        W_2=matrix(d_ff, d_model), b_2=vector(d_model),
        ln2_gain=vector(d_model, 1.0), ln2_bias=vector(d_model),
        heads=int(heads), eps=float(eps), source=f"random weights (seed {seed})",
    )
