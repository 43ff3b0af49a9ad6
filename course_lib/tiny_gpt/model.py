r"""A decoder-only transformer small enough to read: two layers of attention, nothing else.

The model (:class:`TinyGPT`), for a sequence of ``n`` tokens:

.. math::

    x_0 &= E[\text{tokens}] + P[0..n-1]
        &&\text{token and position embeddings, } (n, d_\text{model}) \\
    x_{l+1} &= x_l + \mathrm{Concat}_h\!\bigl(\mathrm{attention}(x_l W_Q^{h}, x_l W_K^{h},
        x_l W_V^{h}, \text{causal})\bigr)\, W_O
        &&\text{each layer: every head, then } W_O \text{, added back} \\
    \text{logits} &= x_L\, U
        &&\text{one score per letter, per position}

and the loss is the cross-entropy of the next token, at the positions whose next token
can be known (:mod:`course_lib.tiny_gpt.task`).

**Attention only.** Lesson 15's block also has LayerNorm and an MLP after attention. This
model leaves them out, as the first models in which induction heads were found did
(Elhage et al., "A Mathematical Framework for Transformer Circuits", 2021): the task needs
no per-token computation, and without them everything the model writes into a position's
row comes from one head or another, through :math:`W_O`, and is added up. So a head's
contribution can be read (its map of weights) and removed (zero its output: what breaks
is what it did), and the backward pass is short enough to read in full. There are no
biases either, for the same reason.

Every head's attention is the course's :func:`course_lib.attention` with the causal mask,
unless you pass your own function (``attend=``); the backward pass goes through the
course's :func:`course_lib.attention_backward`. Each piece's backward is its own function,
checked against finite differences in ``tests/tiny_gpt/test_tiny_gpt_model.py``:

============================  ============================================================
forward                       backward
============================  ============================================================
:func:`embed`                 :func:`embed_backward`
:func:`attention_layer`       :func:`attention_layer_backward`
:func:`unembed`               :func:`unembed_backward`
:func:`cross_entropy`         :func:`cross_entropy_backward`
:func:`forward`               :func:`loss_and_gradients` (the whole model)
============================  ============================================================

:func:`generate` writes tokens one at a time with a :class:`course_lib.KVCache` per layer,
and gives the same logits as :func:`forward` on the whole sequence.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..attention import attention, causal_mask
from ..backward import attention_backward
from ..errors import AttentionInputError
from ..heads import merge_heads, split_heads
from ..kv_cache import KVCache
from .task import SEQ_LEN, VOCAB_SIZE

__all__ = [
    "PARAMETERS",
    "Forward",
    "Generated",
    "TinyGPT",
    "attention_layer",
    "attention_layer_backward",
    "cross_entropy",
    "cross_entropy_backward",
    "embed",
    "embed_backward",
    "forward",
    "generate",
    "init_model",
    "library_attend",
    "loss_and_gradients",
    "reset_weights",
    "unembed",
    "unembed_backward",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: A function ``(Q, K, V, mask) -> output`` (or ``(output, weights)``), each of ``Q, K, V``
#: of shape (..., heads, n, d_k) and the mask (n, n), True where a query may look.
Attend = Callable[[FloatArray, FloatArray, FloatArray, NDArray[np.bool_]], object]

#: The model's parameters, in the order of :meth:`TinyGPT.parameters`.
PARAMETERS = ("token_embedding", "position_embedding", "W_Q", "W_K", "W_V", "W_O",
              "unembedding")


@dataclass(frozen=True)
class TinyGPT:
    """The weights of the model; a matrix is ``(d_in, d_out)``: a row times the matrix.

    Attributes
    ----------
    token_embedding : ndarray, shape (vocab, d_model)
        :math:`E`: row ``t`` is token ``t``'s vector.
    position_embedding : ndarray, shape (max_len, d_model)
        :math:`P`: row ``i`` is added at position ``i``.
    W_Q, W_K, W_V, W_O : ndarray, shape (layers, d_model, d_model)
        Layer ``l``'s projections; head ``h`` of a layer uses columns ``h·d_k … (h+1)·d_k - 1``
        of ``W_Q[l]``, ``W_K[l]``, ``W_V[l]`` and the same rows of ``W_O[l]``.
    unembedding : ndarray, shape (d_model, vocab)
        :math:`U`: the last row times ``U`` is one score (logit) per token.
    heads : int
        Heads per layer.
    """

    token_embedding: FloatArray
    position_embedding: FloatArray
    W_Q: FloatArray
    W_K: FloatArray
    W_V: FloatArray
    W_O: FloatArray
    unembedding: FloatArray
    heads: int

    def __post_init__(self) -> None:
        d = self.token_embedding.shape[1]
        layers = self.W_Q.shape[0]
        want = {
            "token_embedding": (self.token_embedding.shape[0], d),
            "position_embedding": (self.position_embedding.shape[0], d),
            **{name: (layers, d, d) for name in ("W_Q", "W_K", "W_V", "W_O")},
            "unembedding": (d, self.token_embedding.shape[0]),
        }
        for name, shape in want.items():
            arr = getattr(self, name)
            if not isinstance(arr, np.ndarray) or arr.shape != shape:
                raise AttentionInputError(
                    f"{name} must be an array of shape {shape} for this model (got "
                    f"{getattr(arr, 'shape', type(arr).__name__)})")
            if not np.isfinite(arr).all():
                raise AttentionInputError(f"{name} must hold finite numbers")
        if (isinstance(self.heads, bool) or not isinstance(self.heads, int | np.integer)
                or self.heads < 1 or d % self.heads):
            raise AttentionInputError(f"heads must be a positive whole number that divides "
                                      f"d_model = {d} (got {self.heads!r})")

    @property
    def d_model(self) -> int:
        """The width of a token's row."""
        return int(self.token_embedding.shape[1])

    @property
    def layers(self) -> int:
        """How many attention layers."""
        return int(self.W_Q.shape[0])

    @property
    def d_k(self) -> int:
        """The width of one head's queries, keys and values."""
        return self.d_model // self.heads

    @property
    def vocab(self) -> int:
        """How many different tokens."""
        return int(self.token_embedding.shape[0])

    @property
    def max_len(self) -> int:
        """The longest sequence the position embeddings cover."""
        return int(self.position_embedding.shape[0])

    def parameters(self) -> dict[str, FloatArray]:
        """Every parameter by name (the arrays themselves, not copies)."""
        return {name: getattr(self, name) for name in PARAMETERS}

    def with_parameters(self, params: Mapping[str, FloatArray]) -> TinyGPT:
        """The same model with new values for the named parameters."""
        unknown = set(params) - set(PARAMETERS)
        if unknown:
            raise AttentionInputError(f"unknown parameter(s) {sorted(unknown)}; the model's "
                                      f"are {list(PARAMETERS)}")
        return TinyGPT(**{**self.parameters(), **params}, heads=self.heads)

    def size(self) -> int:
        """How many numbers the parameters hold."""
        return sum(a.size for a in self.parameters().values())

    def __repr__(self) -> str:
        return (f"TinyGPT({self.layers} layers × {self.heads} heads of d_k = {self.d_k}, "
                f"d_model = {self.d_model}, {self.vocab} tokens, up to {self.max_len} "
                f"positions; {self.size():,} parameters)")


def init_model(*, d_model: int = 32, heads: int = 2, layers: int = 2, vocab: int = VOCAB_SIZE,
               max_len: int = SEQ_LEN, seed: int = 0) -> TinyGPT:
    """A model with seeded random weights, before training.

    Embeddings are drawn from N(0, 1); the matrices of the layers from
    :math:`N(0, 1/d_\\text{model})`, so that a row keeps a size near that of its input.
    The unembedding starts at zero: every logit is 0, the model's first guess is every
    letter alike, and its first loss is exactly log 26 (it learns from the first step: its
    gradient, the rows times the loss's, is not zero).

    Examples
    --------
    >>> init_model(seed=0)
    TinyGPT(2 layers × 2 heads of d_k = 16, d_model = 32, 26 tokens, up to 24 positions; \
10,624 parameters)
    """
    for name, value in (("d_model", d_model), ("heads", heads), ("layers", layers),
                        ("vocab", vocab), ("max_len", max_len)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
            raise AttentionInputError(f"{name} must be a positive whole number (got {value!r})")
    rng = np.random.default_rng(seed)
    scale = 1 / math.sqrt(d_model)
    return TinyGPT(
        token_embedding=rng.normal(size=(vocab, d_model)),
        position_embedding=rng.normal(size=(max_len, d_model)),
        W_Q=rng.normal(scale=scale, size=(layers, d_model, d_model)),
        W_K=rng.normal(scale=scale, size=(layers, d_model, d_model)),
        W_V=rng.normal(scale=scale, size=(layers, d_model, d_model)),
        W_O=rng.normal(scale=scale, size=(layers, d_model, d_model)),
        unembedding=np.zeros((d_model, vocab)),
        heads=int(heads),
    )


def reset_weights(model: TinyGPT, layer: int, names: Iterable[str] = ("W_Q", "W_K"), *,
                  seed: int = 1) -> TinyGPT:
    """The model with some matrices of one layer drawn again, as before training.

    Parameters
    ----------
    model : TinyGPT
    layer : int
    names : iterable of str
        Some of ``W_Q``, ``W_K``, ``W_V``, ``W_O``.
    seed : int
        Of the new numbers, drawn as :func:`init_model` draws them.

    Examples
    --------
    >>> model = init_model(seed=0)
    >>> again = reset_weights(model, 1, ["W_Q"])
    >>> bool((again.W_Q[0] == model.W_Q[0]).all()), bool((again.W_Q[1] == model.W_Q[1]).all())
    (True, False)
    """
    if isinstance(layer, bool) or not isinstance(layer, int | np.integer) or not (
            0 <= layer < model.layers):
        raise AttentionInputError(f"layer must be 0 … {model.layers - 1} (got {layer!r})")
    names = list(names)
    for name in names:
        if name not in ("W_Q", "W_K", "W_V", "W_O"):
            raise AttentionInputError(f"names must be among W_Q, W_K, W_V, W_O (got {name!r})")
    fresh = init_model(d_model=model.d_model, heads=model.heads, layers=model.layers,
                       vocab=model.vocab, max_len=model.max_len, seed=seed)
    changed = {}
    for name in names:
        changed[name] = getattr(model, name).copy()
        changed[name][layer] = getattr(fresh, name)[layer]
    return model.with_parameters(changed)


# --------------------------------------------------------------------------------------
# the pieces, each with its backward
# --------------------------------------------------------------------------------------


def embed(tokens: IntArray, token_embedding: FloatArray, position_embedding: FloatArray
          ) -> FloatArray:
    """:math:`x_0 = E[\\text{tokens}] + P[0..n-1]`: each token's row, plus its position's.

    Parameters
    ----------
    tokens : ndarray of int, shape (..., n)
    token_embedding : ndarray, shape (vocab, d_model)
    position_embedding : ndarray, shape (max_len, d_model), ``max_len >= n``

    Returns
    -------
    ndarray, shape (..., n, d_model)
    """
    n = tokens.shape[-1]
    return token_embedding[tokens] + position_embedding[:n]


def embed_backward(d_x: FloatArray, tokens: IntArray, vocab: int, max_len: int
                   ) -> tuple[FloatArray, FloatArray]:
    """The gradients of :func:`embed`'s two tables, given ``d_x`` = dL/dx_0.

    A token's row of :math:`E` gets the sum of ``d_x`` over every place the token stands
    (``np.add.at``, which adds a repeated index more than once); a position's row of
    :math:`P`, the sum over the batch at that position.

    Returns
    -------
    d_token_embedding : ndarray, shape (vocab, d_model)
    d_position_embedding : ndarray, shape (max_len, d_model)
    """
    d = d_x.shape[-1]
    n = tokens.shape[-1]
    d_e = np.zeros((vocab, d))
    np.add.at(d_e, tokens.reshape(-1), d_x.reshape(-1, d))
    d_p = np.zeros((max_len, d))
    d_p[:n] = d_x.reshape(-1, n, d).sum(axis=0)
    return d_e, d_p


def library_attend(Q: FloatArray, K: FloatArray, V: FloatArray, mask: NDArray[np.bool_]
                   ) -> tuple[FloatArray, FloatArray]:
    """The course's attention, as the model calls it: ``attention(Q, K, V, mask=mask)``."""
    return attention(Q, K, V, mask=mask)


@dataclass(frozen=True)
class LayerRun:
    """What one attention layer computed (kept for its backward pass and for reading).

    Attributes
    ----------
    x : ndarray, shape (..., n, d_model)
        The layer's input.
    q, k, v : ndarray, shape (..., heads, n, d_k)
    head_outputs : ndarray, shape (..., heads, n, d_k)
        Every head's output, ablated heads as zeros.
    weights : ndarray, shape (..., heads, n, n), or None
        Every head's attention weights (None when ``attend`` returned the output only).
    output : ndarray, shape (..., n, d_model)
        ``x`` plus the heads through :math:`W_O`: the next layer's input.
    """

    x: FloatArray
    q: FloatArray
    k: FloatArray
    v: FloatArray
    head_outputs: FloatArray
    weights: FloatArray | None
    output: FloatArray


def _call_attend(attend: Attend, q: FloatArray, k: FloatArray, v: FloatArray,
                 mask: NDArray[np.bool_]) -> tuple[FloatArray, FloatArray | None]:
    got = attend(q, k, v, mask)
    weights = None
    if isinstance(got, tuple) and len(got) == 2:
        got, weights = got
    out = np.asarray(got, dtype=np.float64)
    if out.shape != (*q.shape[:-1], v.shape[-1]):
        raise AttentionInputError(
            f"attend must return the heads' outputs, shape (..., heads, n, d_v) = "
            f"{(*q.shape[:-1], v.shape[-1])} (got shape {out.shape})")
    return out, None if weights is None else np.asarray(weights, dtype=np.float64)


def attention_layer(x: FloatArray, W_Q: FloatArray, W_K: FloatArray, W_V: FloatArray,
                    W_O: FloatArray, heads: int, *, attend: Attend = library_attend,
                    ablate: Iterable[int] = ()) -> LayerRun:
    """One layer: every head's causal attention, concatenated, through ``W_O``, added to ``x``.

    Parameters
    ----------
    x : ndarray, shape (..., n, d_model)
    W_Q, W_K, W_V, W_O : ndarray, shape (d_model, d_model)
    heads : int
    attend : callable, default :func:`library_attend`
        ``(Q, K, V, mask) -> output`` or ``(output, weights)``.
    ablate : iterable of int
        Heads whose output is replaced by zeros (the head removed).

    Returns
    -------
    LayerRun
    """
    n = x.shape[-2]
    q, k, v = (split_heads(x @ W, heads) for W in (W_Q, W_K, W_V))
    out, weights = _call_attend(attend, q, k, v, causal_mask(n))
    for h in ablate:
        out[..., h, :, :] = 0.0
    return LayerRun(x, q, k, v, out, weights, x + merge_heads(out) @ W_O)


def _weight_gradient(rows: FloatArray, d_rows: FloatArray) -> FloatArray:
    """:math:`\\sum` over the sequences of ``rows^T @ d_rows``: the gradient of a matrix that
    every row was multiplied by.

    One small product per sequence, then the sum, rather than one product of all the rows:
    numpy hands a large product to a multi-threaded BLAS, whose threads cost far more CPU
    time than they save at these sizes (10 times the CPU time of a training run measured
    on 2 busy cores); a product of one sequence's rows stays on one thread.
    """
    if rows.ndim == 2:
        return rows.T @ d_rows
    d_in, d_out = rows.shape[-1], d_rows.shape[-1]
    per_sequence = np.swapaxes(rows, -1, -2).reshape(-1, d_in, rows.shape[-2]) @ \
        d_rows.reshape(-1, d_rows.shape[-2], d_out)
    return per_sequence.sum(axis=0)


def attention_layer_backward(run: LayerRun, W_Q: FloatArray, W_K: FloatArray, W_V: FloatArray,
                             W_O: FloatArray, d_output: FloatArray, *,
                             ablate: Iterable[int] = ()
                             ) -> tuple[FloatArray, dict[str, FloatArray]]:
    """The gradients of :func:`attention_layer`, given ``d_output`` = dL/d(its output).

    Backwards through the layer: the residual passes ``d_output`` straight to ``x``; the
    branch gives :math:`dW_O = Z^T d` and :math:`dZ = d\\,W_O^T` (``Z`` the concatenated
    heads); each head's ``dQ, dK, dV`` come from :func:`course_lib.attention_backward`; and
    each projection gives :math:`dW = x^T dQ` and adds :math:`dQ\\,W^T` to ``dx``.

    Returns
    -------
    d_x : ndarray, shape of ``run.x``
    grads : dict
        ``W_Q``, ``W_K``, ``W_V``, ``W_O``: each (d_model, d_model).
    """
    heads = run.q.shape[-3]
    z = merge_heads(run.head_outputs)
    d_w_o = _weight_gradient(z, d_output)
    d_heads = split_heads(d_output @ W_O.T, heads)
    for h in ablate:
        d_heads[..., h, :, :] = 0.0
    d_q, d_k, d_v = attention_backward(run.q, run.k, run.v, d_heads,
                                       mask=causal_mask(run.x.shape[-2]))
    d_x = d_output.copy()
    grads = {"W_O": d_w_o}
    for name, W, g in (("W_Q", W_Q, d_q), ("W_K", W_K, d_k), ("W_V", W_V, d_v)):
        g_rows = merge_heads(g)
        grads[name] = _weight_gradient(run.x, g_rows)
        d_x += g_rows @ W.T
    return d_x, grads


def unembed(x: FloatArray, unembedding: FloatArray) -> FloatArray:
    """The logits: each position's last row times :math:`U`, shape (..., n, vocab)."""
    return x @ unembedding


def unembed_backward(x: FloatArray, unembedding: FloatArray, d_logits: FloatArray
                     ) -> tuple[FloatArray, FloatArray]:
    """The gradients of :func:`unembed`: ``(d_x, d_unembedding)``."""
    return d_logits @ unembedding.T, _weight_gradient(x, d_logits)


def _log_softmax(logits: FloatArray) -> FloatArray:
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def _check_scored(targets: IntArray, scored: NDArray[np.bool_], shape: tuple[int, ...]
                  ) -> None:
    if targets.shape != shape[:-1] or scored.shape != shape[:-1]:
        raise AttentionInputError(f"targets and scored must have the logits' shape without "
                                  f"its last axis, {shape[:-1]} (got {targets.shape} and "
                                  f"{scored.shape})")
    if not scored.any():
        raise AttentionInputError("scored marks no position: the loss would be 0/0")


def cross_entropy(logits: FloatArray, targets: IntArray, scored: NDArray[np.bool_]) -> float:
    r"""The mean of :math:`-\log \mathrm{softmax}(\text{logits})_{\text{target}}` over the
    scored positions.

    Parameters
    ----------
    logits : ndarray, shape (..., n, vocab)
    targets : ndarray of int, shape (..., n)
        The next token at each position (ignored where not scored).
    scored : ndarray of bool, shape (..., n)

    Returns
    -------
    float
        In nats; guessing evenly among 26 letters gives log 26 = 3.26.

    Examples
    --------
    >>> logits = np.zeros((1, 2, 26))
    >>> round(cross_entropy(logits, np.array([[3, -1]]), np.array([[True, False]])), 2)
    3.26
    """
    _check_scored(targets, scored, logits.shape)
    logp = _log_softmax(logits[scored])
    return float(-logp[np.arange(len(logp)), targets[scored]].mean())


def cross_entropy_backward(logits: FloatArray, targets: IntArray, scored: NDArray[np.bool_]
                           ) -> FloatArray:
    """dL/d(logits) of :func:`cross_entropy`: (softmax − one-hot) / N at the N scored
    positions, 0 elsewhere."""
    _check_scored(targets, scored, logits.shape)
    d = np.zeros_like(logits)
    rows = logits[scored]
    p = np.exp(_log_softmax(rows))
    p[np.arange(len(p)), targets[scored]] -= 1.0
    d[scored] = p / len(p)
    return d


# --------------------------------------------------------------------------------------
# the whole model
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Forward:
    """One run of the model.

    Attributes
    ----------
    tokens : ndarray of int, shape (..., n)
    logits : ndarray, shape (..., n, vocab)
        At position ``i``, the model's scores for the token at ``i + 1``.
    layers : list of LayerRun
        What each layer computed.
    """

    tokens: IntArray
    logits: FloatArray
    layers: list[LayerRun] = field(repr=False)

    @property
    def weights(self) -> FloatArray:
        """Every head's attention weights, shape (layers, ..., heads, n, n)."""
        if any(run.weights is None for run in self.layers):
            raise AttentionInputError("this run's attend function returned no weights "
                                      "(only the outputs)")
        return np.stack([run.weights for run in self.layers])

    def predictions(self) -> IntArray:
        """The most likely next token at every position, shape (..., n)."""
        return self.logits.argmax(axis=-1)


def _check_tokens(model: TinyGPT, tokens: ArrayLike) -> IntArray:
    arr = np.asarray(tokens)
    if (arr.ndim < 1 or arr.shape[-1] == 0 or not np.issubdtype(arr.dtype, np.integer)
            or arr.min() < 0 or arr.max() >= model.vocab):
        raise AttentionInputError(
            f"tokens must be whole numbers 0 … {model.vocab - 1}, shape (..., n) with n ≥ 1 "
            f"(got {arr.dtype} of shape {arr.shape})")
    if arr.shape[-1] > model.max_len:
        raise AttentionInputError(f"tokens must be at most {model.max_len} long, the "
                                  f"positions the model knows (got {arr.shape[-1]})")
    return arr.astype(np.int64)


def _check_ablate(model: TinyGPT, ablate: Iterable[tuple[int, int]]) -> dict[int, list[int]]:
    by_layer: dict[int, list[int]] = {}
    for pair in ablate:
        ok = (isinstance(pair, tuple) and len(pair) == 2
              and all(isinstance(i, int | np.integer) and not isinstance(i, bool)
                      for i in pair))
        if not ok or not (0 <= pair[0] < model.layers and 0 <= pair[1] < model.heads):
            raise AttentionInputError(
                f"ablate must list (layer, head) pairs, layer 0 … {model.layers - 1} and head "
                f"0 … {model.heads - 1} (got {pair!r})")
        by_layer.setdefault(int(pair[0]), []).append(int(pair[1]))
    return by_layer


def forward(model: TinyGPT, tokens: ArrayLike, *, attend: Attend = library_attend,
            ablate: Iterable[tuple[int, int]] = ()) -> Forward:
    """Run the model on ``tokens``.

    Parameters
    ----------
    model : TinyGPT
    tokens : array_like of int, shape (..., n)
        One sequence, or a batch of them; ``n`` at most ``model.max_len``.
    attend : callable, default :func:`library_attend`
        How every head attends: ``(Q, K, V, mask) -> output`` or ``(output, weights)``,
        ``Q, K, V`` of shape (..., heads, n, d_k) and the causal ``mask`` (n, n). Pass your
        own function to run the model on it.
    ablate : iterable of (layer, head)
        Heads whose output is replaced by zeros.

    Returns
    -------
    Forward

    Raises
    ------
    AttentionInputError
        For tokens out of the vocabulary or too long, or an ``ablate`` entry that names no
        head.

    Examples
    --------
    >>> model = init_model(seed=0)
    >>> run = forward(model, [0, 1, 2])
    >>> run.logits.shape, run.weights.shape
    ((3, 26), (2, 2, 3, 3))
    """
    tok = _check_tokens(model, tokens)
    by_layer = _check_ablate(model, ablate)
    x = embed(tok, model.token_embedding, model.position_embedding)
    runs = []
    for layer in range(model.layers):
        run = attention_layer(x, model.W_Q[layer], model.W_K[layer], model.W_V[layer],
                              model.W_O[layer], model.heads, attend=attend,
                              ablate=by_layer.get(layer, ()))
        runs.append(run)
        x = run.output
    return Forward(tok, unembed(x, model.unembedding), runs)


def loss_and_gradients(model: TinyGPT, tokens: ArrayLike, targets: IntArray,
                       scored: NDArray[np.bool_]) -> tuple[float, dict[str, FloatArray]]:
    """The loss of a batch and its gradient with respect to every parameter.

    The forward pass (:func:`forward`), the loss (:func:`cross_entropy`), then every
    backward piece in reverse order.

    Returns
    -------
    loss : float
    grads : dict of str to ndarray
        One array per name of :data:`PARAMETERS`, with that parameter's shape.

    Examples
    --------
    >>> from course_lib.tiny_gpt.task import make_batch
    >>> b = make_batch(4, seed=0)
    >>> loss, grads = loss_and_gradients(init_model(seed=0), b.tokens, b.targets, b.scored)
    >>> sorted(grads) == sorted(PARAMETERS), grads["W_Q"].shape
    (True, (2, 32, 32))
    """
    run = forward(model, tokens)
    loss = cross_entropy(run.logits, targets, scored)
    d_logits = cross_entropy_backward(run.logits, targets, scored)
    d_x, d_u = unembed_backward(run.layers[-1].output, model.unembedding, d_logits)
    grads = {name: np.zeros_like(getattr(model, name)) for name in ("W_Q", "W_K", "W_V", "W_O")}
    for layer in reversed(range(model.layers)):
        d_x, g = attention_layer_backward(run.layers[layer], model.W_Q[layer],
                                          model.W_K[layer], model.W_V[layer], model.W_O[layer],
                                          d_x)
        for name, value in g.items():
            grads[name][layer] = value
    d_e, d_p = embed_backward(d_x, run.tokens, model.vocab, model.max_len)
    return loss, {"token_embedding": d_e, "position_embedding": d_p, **grads,
                  "unembedding": d_u}


# --------------------------------------------------------------------------------------
# generating, one token at a time
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Generated:
    """Tokens written one at a time with a KV cache.

    Attributes
    ----------
    tokens : ndarray of int, shape (n,)
        The prompt, then the generated tokens.
    logits : ndarray, shape (n, vocab)
        The logits computed at each position, one step at a time (row ``i`` scores the
        token at ``i + 1``).
    caches : list of KVCache
        Each layer's cache at the end: keys and values of shape (heads, n, d_k).
    """

    tokens: IntArray
    logits: FloatArray
    caches: list[KVCache] = field(repr=False)


def _step_with_cache(model: TinyGPT, token: int, position: int, caches: list[KVCache]
                     ) -> FloatArray:
    """One new token's logits: its row through every layer, against the cached rows."""
    x = model.token_embedding[token] + model.position_embedding[position]  # (d_model,)
    for layer, cache in enumerate(caches):
        q, k, v = (split_heads((x @ W[layer])[None, :], model.heads)[:, 0, :]
                   for W in (model.W_Q, model.W_K, model.W_V))  # each (heads, d_k)
        out = cache.step(q, k, v)  # (heads, d_k): this token against every cached one
        x = x + out.reshape(-1) @ model.W_O[layer]
    return x @ model.unembedding


def generate(model: TinyGPT, prompt: ArrayLike, new_tokens: int) -> Generated:
    """Write ``new_tokens`` tokens after ``prompt``, each the most likely one, one at a time.

    Every token, the prompt's too, goes through the model once: its query against the keys
    and values cached for the tokens before it (lesson 15), in every layer.

    Parameters
    ----------
    model : TinyGPT
    prompt : array_like of int, shape (m,), m ≥ 1
    new_tokens : int
        ``m + new_tokens`` must be at most ``model.max_len``.

    Returns
    -------
    Generated

    Examples
    --------
    >>> model = init_model(seed=0)
    >>> g = generate(model, [0, 1, 2], 2)
    >>> len(g.tokens), g.caches[0].keys.shape
    (5, (2, 5, 16))
    >>> full = forward(model, g.tokens).logits
    >>> bool(np.abs(full - g.logits).max() < 1e-12)
    True
    """
    tok = _check_tokens(model, prompt)
    if tok.ndim != 1:
        raise AttentionInputError(f"prompt must be one sequence, shape (m,) (got {tok.shape})")
    if (isinstance(new_tokens, bool) or not isinstance(new_tokens, int | np.integer)
            or new_tokens < 0 or len(tok) + new_tokens > model.max_len):
        raise AttentionInputError(
            f"new_tokens must be a whole number from 0 to {model.max_len - len(tok)}: the "
            f"prompt has {len(tok)} tokens and the model knows {model.max_len} positions "
            f"(got {new_tokens!r})")
    caches = [KVCache() for _ in range(model.layers)]
    tokens = [int(t) for t in tok]
    logits = []
    for position in range(len(tok) + new_tokens):
        if position == len(tokens):  # past the prompt: write the most likely token
            tokens.append(int(logits[-1].argmax()))
        logits.append(_step_with_cache(model, tokens[position], position, caches))
    return Generated(np.array(tokens, dtype=np.int64), np.array(logits), caches)
