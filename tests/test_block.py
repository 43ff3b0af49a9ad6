"""Tests for course_lib.block: one transformer block, step by step, and which steps mix tokens."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import course_lib as cl
from course_lib import block
from course_lib.real_model import model_forward


def small(seed=0):
    return block.random_block(d_model=12, heads=3, d_ff=20, seed=seed)


def by_hand(x, w, mask=None):
    """The block written out in one piece, as BERT's layer computes it (post-LayerNorm)."""
    n, d = x.shape
    d_k = d // w.heads

    def split(a):
        return a.reshape(n, w.heads, d_k).transpose(1, 0, 2)

    q, k, v = split(x @ w.W_Q + w.b_Q), split(x @ w.W_K + w.b_K), split(x @ w.W_V + w.b_V)
    s = q @ k.transpose(0, 2, 1) / np.sqrt(d_k)
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    h = (p @ v).transpose(1, 0, 2).reshape(n, d) @ w.W_O + w.b_O

    def ln(a, g, b):
        m = a.mean(axis=-1, keepdims=True)
        return (a - m) / np.sqrt(a.var(axis=-1, keepdims=True) + w.eps) * g + b

    h = ln(x + h, w.ln1_gain, w.ln1_bias)
    from math import erf
    hidden = h @ w.W_1 + w.b_1
    hidden = hidden * 0.5 * (1 + np.vectorize(erf)(hidden / np.sqrt(2)))
    return ln(h + hidden @ w.W_2 + w.b_2, w.ln2_gain, w.ln2_bias)


@pytest.mark.parametrize("causal", [False, True])
def test_block_steps_is_the_block_written_out(causal):
    w = small()
    x = np.random.default_rng(3).normal(size=(5, 12))
    run = block.block_steps(x, w, causal=causal)
    mask = cl.causal_mask(5) if causal else None
    np.testing.assert_allclose(run.output, by_hand(x, w, mask), atol=1e-12)
    assert list(run.steps) == list(block.STEPS)
    assert run.q.shape == (3, 5, 4) and run.weights.shape == (3, 5, 5)
    np.testing.assert_allclose(run.weights.sum(axis=-1), 1.0)
    normed = run.steps["LayerNorm"]  # before its gain and bias: mean 0, variance 1
    plain = (normed - w.ln1_bias) / w.ln1_gain
    np.testing.assert_allclose(plain.mean(axis=-1), 0.0, atol=1e-12)
    np.testing.assert_allclose(plain.var(axis=-1), 1.0, atol=1e-9)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 6), heads=st.sampled_from([1, 2, 4]), seed=st.integers(0, 10**6),
       causal=st.booleans(), data=st.data())
def test_only_attention_mixes_tokens(n, heads, seed, causal, data):
    w = block.random_block(d_model=8, heads=heads, d_ff=12, seed=seed)
    x = np.random.default_rng(seed).normal(size=(n, 8))
    token = data.draw(st.integers(0, n - 1))
    changed = block.rows_each_step_changes(x, w, token=token, causal=causal)
    assert list(changed) == list(block.STEPS)
    assert changed["attention"] == tuple(range(token if causal else 0, n))
    for name in block.STEPS[1:]:
        assert changed[name] == (token,), name


def test_a_causal_block_keeps_the_earlier_rows_exactly():
    w = small(1)
    x = np.random.default_rng(4).normal(size=(6, 12))
    other = x.copy()
    other[-1] += 1.0
    a, b = block.block_steps(x, w, causal=True), block.block_steps(other, w, causal=True)
    assert all(np.array_equal(a.steps[s][:5], b.steps[s][:5]) for s in block.STEPS)
    unmasked = block.block_steps(x, w).output, block.block_steps(other, w).output
    assert np.all(np.abs(unmasked[0] - unmasked[1]).max(axis=1) > 0)


def test_random_block_is_seeded_and_shaped_like_minilm():
    w = block.random_block()
    assert (w.d_model, w.heads, w.d_ff) == (384, 12, 1536)
    assert repr(w) == "BlockWeights(random weights (seed 0): d_model = 384, 12 heads, d_ff = 1536)"
    np.testing.assert_array_equal(w.W_Q, block.random_block().W_Q)
    assert not np.array_equal(w.W_Q, block.random_block(seed=1).W_Q)


@pytest.mark.parametrize("kwargs, message", [
    ({"d_model": 10, "heads": 3}, r"heads must divide d_model \(got d_model = 10, heads = 3\)"),
    ({"d_ff": 0}, r"d_ff must be a positive integer \(got 0\)"),
    ({"heads": True}, r"heads must be a positive integer \(got True\)"),
])
def test_random_block_refuses_bad_sizes(kwargs, message):
    with pytest.raises(cl.AttentionInputError, match=message):
        block.random_block(**kwargs)


def test_bad_inputs_get_clear_errors():
    w = small()
    with pytest.raises(cl.AttentionInputError, match=r"x must have shape \(n, 12\) = \(n, "
                       r"d_model\), or \(batch, n, 12\), for this block \(got shape "
                       r"\(3, 5\)\)"):
        block.block_steps(np.ones((3, 5)), w)
    with pytest.raises(cl.AttentionInputError, match=r"key_mask must hold one boolean per "
                       r"token of x, shape \(2, 3\), True for a real token \(got dtype "
                       r"int64, shape \(2, 3\)\)"):
        block.block_steps(np.ones((2, 3, 12)), w, key_mask=np.ones((2, 3), dtype=np.int64))
    with pytest.raises(cl.AttentionInputError, match=r"shape \(3,\), True for a real token "
                       r"\(got dtype bool, shape \(2,\)\)"):
        block.block_steps(np.ones((3, 12)), w, key_mask=np.array([True, False]))
    with pytest.raises(cl.AttentionInputError, match=r"one sentence \(got shape \(2, 3, 12\)"):
        block.rows_each_step_changes(np.ones((2, 3, 12)), w, token=0)
    with pytest.raises(cl.AttentionInputError, match="weights must be BlockWeights"):
        block.block_steps(np.ones((3, 12)), {"W_Q": 1})
    with pytest.raises(cl.AttentionInputError, match=r"x must hold finite numbers"):
        block.block_steps(np.full((2, 12), np.nan), w)
    with pytest.raises(cl.AttentionInputError, match=r"token must be a row of x, 0 to 2 "
                       r"\(got 3\)"):
        block.rows_each_step_changes(np.ones((3, 12)), w, token=3)


def test_load_block_reads_a_layer_as_run_model_uses_it(tmp_path):
    """A tiny model folder in MiniLM's format: load_block's block is the layer run_model runs."""
    from tests.real_model.test_model_forward import _write_safetensors

    rng = np.random.default_rng(0)
    d, ff, layers = 8, 16, 2
    tensors = {}
    for i in range(layers):
        p = f"encoder.layer.{i}"
        for name, (o, inp) in {"attention.self.query": (d, d), "attention.self.key": (d, d),
                               "attention.self.value": (d, d),
                               "attention.output.dense": (d, d),
                               "intermediate.dense": (ff, d), "output.dense": (d, ff)}.items():
            tensors[f"{p}.{name}.weight"] = rng.normal(size=(o, inp)).astype("<f4")
            tensors[f"{p}.{name}.bias"] = rng.normal(size=o).astype("<f4")
        for name in ("attention.output.LayerNorm", "output.LayerNorm"):
            tensors[f"{p}.{name}.weight"] = (1 + 0.1 * rng.normal(size=d)).astype("<f4")
            tensors[f"{p}.{name}.bias"] = (0.1 * rng.normal(size=d)).astype("<f4")
    _write_safetensors(tmp_path / "model.safetensors", tensors)
    (tmp_path / "config.json").write_text(json.dumps({
        "num_attention_heads": 2, "hidden_size": d, "layer_norm_eps": 1e-12,
        "num_hidden_layers": layers}))
    w = model_forward.load_block(1, folder=tmp_path)
    assert (w.d_model, w.heads, w.d_ff, w.source) == (8, 2, 16, "all-MiniLM-L6-v2, layer 1")
    # PyTorch's Linear is x @ weight.T + bias
    np.testing.assert_array_equal(w.W_1, tensors["encoder.layer.1.intermediate.dense.weight"].T)
    x = rng.normal(size=(4, d))
    np.testing.assert_allclose(block.block_steps(x, w).output, by_hand(x, w), atol=1e-12)
    with pytest.raises(cl.AttentionInputError, match=r"layer must be 0 to 1 \(got 2\)"):
        model_forward.load_block(2, folder=tmp_path)


def test_a_padded_batch_with_its_key_mask_equals_each_sentence_alone():
    """Issue 44: two sentences of 5 and 3 tokens padded to 5, in one batch; with the key
    mask every real token's every step equals its sentence run alone, whatever the padding
    holds; without it, the shorter sentence's real rows change (the padding's keys draw
    weight), and a causal mask combines with it."""
    from course_lib import padding

    w = small()
    rng = np.random.default_rng(3)
    long, short = rng.normal(size=(5, 12)), rng.normal(size=(3, 12))
    real = padding.padding_mask([5, 3])
    for fill in (0.0, 7.0):
        batch = np.stack([long, np.vstack([short, np.full((2, 12), fill)])])
        for causal in (False, True):
            masked = block.block_steps(batch, w, key_mask=real, causal=causal)
            for b, rows in enumerate((long, short)):
                alone = block.block_steps(rows, w, causal=causal)
                n = len(rows)
                for step in block.STEPS:
                    np.testing.assert_allclose(masked.steps[step][b, :n], alone.steps[step],
                                               rtol=1e-12, atol=1e-12)
                np.testing.assert_allclose(masked.weights[b, :, :n, :n], alone.weights,
                                           atol=1e-15)
            assert (masked.weights[1, :, :, 3:] == 0).all()  # no weight on the padding
        unmasked = block.block_steps(batch, w).output[1, :3]
        assert np.abs(unmasked - block.block_steps(short, w).output).max() > 1e-2
