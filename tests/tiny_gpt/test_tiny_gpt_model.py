"""course_lib.tiny_gpt.model: every backward piece, and the whole model, against finite
differences; the model with the course's attention, with another, and generating with a
KV cache."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course_lib import AttentionInputError, causal_mask
from course_lib.backward import numerical_gradient
from course_lib.tiny_gpt import model as m

TOLERANCE = {"rtol": 1e-5, "atol": 1e-7}


def _small_model(seed: int, *, d_model: int = 4, heads: int = 2, layers: int = 2,
                 vocab: int = 5, max_len: int = 6, unembedding_scale: float = 0.5) -> m.TinyGPT:
    """A model small enough for finite differences; its unembedding not zero (as at the
    start of training), so that every parameter has a gradient."""
    model = m.init_model(d_model=d_model, heads=heads, layers=layers, vocab=vocab,
                         max_len=max_len, seed=seed)
    rng = np.random.default_rng(seed + 7)
    return model.with_parameters(
        {"unembedding": rng.normal(scale=unembedding_scale, size=(d_model, vocab))})


@st.composite
def layer_problems(draw):
    heads = draw(st.sampled_from([1, 2]))
    d_model = heads * draw(st.integers(1, 3))
    n = draw(st.integers(1, 4))
    batch = draw(st.sampled_from([(), (2,)]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = rng.normal(size=(*batch, n, d_model))
    Ws = [rng.normal(scale=0.7, size=(d_model, d_model)) for _ in range(4)]
    G = rng.normal(size=(*batch, n, d_model))
    ablate = draw(st.lists(st.integers(0, heads - 1), max_size=1, unique=True))
    return x, Ws, heads, G, ablate


@settings(max_examples=30, deadline=None)
@given(layer_problems())
def test_attention_layer_backward_matches_finite_differences(problem):
    """dL/dx and dL/dW_Q, W_K, W_V, W_O of one layer, L = sum(G * output), heads ablated
    or not (an ablated head's projections get exactly 0)."""
    x, Ws, heads, G, ablate = problem

    def loss_of(which):
        def f(value):
            args = [x, *Ws]
            args[which] = value
            return float((m.attention_layer(*args, heads, ablate=ablate).output * G).sum())
        return f

    run = m.attention_layer(x, *Ws, heads, ablate=ablate)
    d_x, grads = m.attention_layer_backward(run, *Ws, G, ablate=ablate)
    np.testing.assert_allclose(d_x, numerical_gradient(loss_of(0), x), **TOLERANCE)
    for i, name in enumerate(("W_Q", "W_K", "W_V", "W_O"), start=1):
        np.testing.assert_allclose(grads[name], numerical_gradient(loss_of(i), Ws[i - 1]),
                                   **TOLERANCE, err_msg=name)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 5), st.sampled_from([(), (3,)]), st.integers(0, 2**32 - 1))
def test_embed_backward_matches_finite_differences(n, batch, seed):
    """A token that stands in several places gets the sum of their gradients."""
    rng = np.random.default_rng(seed)
    vocab, max_len, d = 3, 6, 2  # 3 letters in up to 15 places: repeats are certain
    tokens = rng.integers(0, vocab, size=(*batch, n))
    E, P = rng.normal(size=(vocab, d)), rng.normal(size=(max_len, d))
    G = rng.normal(size=(*batch, n, d))
    d_e, d_p = m.embed_backward(G, tokens, vocab, max_len)
    np.testing.assert_allclose(
        d_e, numerical_gradient(lambda e: float((m.embed(tokens, e, P) * G).sum()), E),
        **TOLERANCE)
    np.testing.assert_allclose(
        d_p, numerical_gradient(lambda p: float((m.embed(tokens, E, p) * G).sum()), P),
        **TOLERANCE)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 4), st.sampled_from([(), (2,)]), st.integers(0, 2**32 - 1))
def test_unembed_backward_matches_finite_differences(n, batch, seed):
    rng = np.random.default_rng(seed)
    x, U = rng.normal(size=(*batch, n, 3)), rng.normal(size=(3, 4))
    G = rng.normal(size=(*batch, n, 4))
    d_x, d_u = m.unembed_backward(x, U, G)
    np.testing.assert_allclose(
        d_x, numerical_gradient(lambda a: float((m.unembed(a, U) * G).sum()), x), **TOLERANCE)
    np.testing.assert_allclose(
        d_u, numerical_gradient(lambda u: float((m.unembed(x, u) * G).sum()), U), **TOLERANCE)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 5), st.sampled_from([0.3, 1.0, 5.0]), st.integers(0, 2**32 - 1))
def test_cross_entropy_backward_matches_finite_differences(n, spread, seed):
    """Unscored positions get exactly 0; the scored ones (softmax - one-hot) / N."""
    rng = np.random.default_rng(seed)
    logits = rng.normal(scale=spread, size=(2, n, 4))
    targets = rng.integers(0, 4, size=(2, n))
    scored = rng.random((2, n)) < 0.6
    scored[0, 0] = True
    got = m.cross_entropy_backward(logits, targets, scored)
    want = numerical_gradient(lambda z: m.cross_entropy(z, targets, scored), logits)
    np.testing.assert_allclose(got, want, **TOLERANCE)
    assert (got[~scored] == 0).all()


def test_cross_entropy_is_log_of_the_vocabulary_for_equal_logits_and_refuses_nothing_scored():
    logits = np.zeros((1, 3, 26))
    targets = np.array([[4, 7, -1]])
    assert m.cross_entropy(logits, targets, np.array([[True, True, False]])) == pytest.approx(
        np.log(26), rel=1e-12)
    with pytest.raises(AttentionInputError, match="scored marks no position"):
        m.cross_entropy(logits, targets, np.zeros((1, 3), dtype=bool))
    with pytest.raises(AttentionInputError, match=r"targets and scored must have the logits' "
                                                  r"shape without its last axis, \(1, 3\)"):
        m.cross_entropy(logits, targets[:, :2], np.ones((1, 2), dtype=bool))


@settings(max_examples=6, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([(1, 4), (2, 4), (2, 2)]))
def test_the_whole_models_gradient_matches_finite_differences(seed, shape):
    """End to end: every parameter of a two-layer model, through the loss of a batch."""
    heads, d_model = shape
    model = _small_model(seed % 1000, d_model=d_model, heads=heads)
    rng = np.random.default_rng(seed)
    tokens = rng.integers(0, model.vocab, size=(2, model.max_len))
    targets = rng.integers(0, model.vocab, size=(2, model.max_len))
    scored = rng.random((2, model.max_len)) < 0.5
    scored[1, -1] = True
    loss, grads = m.loss_and_gradients(model, tokens, targets, scored)
    assert loss == pytest.approx(m.cross_entropy(m.forward(model, tokens).logits, targets,
                                                 scored), rel=1e-14)
    params = model.parameters()
    for name, value in params.items():
        def loss_of(v, name=name):
            changed = model.with_parameters({name: v})
            return m.cross_entropy(m.forward(changed, tokens).logits, targets, scored)
        np.testing.assert_allclose(grads[name], numerical_gradient(loss_of, value),
                                   **TOLERANCE, err_msg=name)
        assert grads[name].shape == value.shape


def test_the_end_to_end_check_catches_a_backward_piece_that_drops_the_residual(monkeypatch):
    """The end-to-end check can fail: with a layer's backward that forgets the residual
    (dL/dx gets the branch's gradient only), the embeddings' gradients are wrong."""
    model = _small_model(3)
    tokens = np.array([[0, 1, 2, 3, 4, 0]])
    targets = np.array([[1, 2, 3, 4, 0, 1]])
    scored = np.ones((1, 6), dtype=bool)
    right = m.attention_layer_backward

    def forgets_the_residual(run, W_Q, W_K, W_V, W_O, d_output, **kw):
        d_x, grads = right(run, W_Q, W_K, W_V, W_O, d_output, **kw)
        return d_x - d_output, grads

    def loss_of(E):
        return m.cross_entropy(m.forward(model.with_parameters({"token_embedding": E}),
                                         tokens).logits, targets, scored)
    numerical = numerical_gradient(loss_of, model.token_embedding)
    np.testing.assert_allclose(m.loss_and_gradients(model, tokens, targets, scored)[1][
        "token_embedding"], numerical, **TOLERANCE)
    monkeypatch.setattr(m, "attention_layer_backward", forgets_the_residual)
    wrong = m.loss_and_gradients(model, tokens, targets, scored)[1]["token_embedding"]
    assert not np.allclose(wrong, numerical, **TOLERANCE)


def test_forward_with_a_plain_numpy_attention_gives_the_same_logits():
    """attend= takes any function (Q, K, V, mask) -> output; numpy's equation gives the
    library's logits, and its weights are missing (it returned the output only)."""
    model = _small_model(1, d_model=8, heads=2, max_len=7, vocab=6)

    def plain(Q, K, V, mask):
        s = np.where(mask, Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]), -np.inf)
        w = np.exp(s - s.max(axis=-1, keepdims=True))
        return (w / w.sum(axis=-1, keepdims=True)) @ V

    tokens = np.array([[0, 5, 2, 2, 1, 3, 4], [1, 1, 0, 4, 3, 2, 5]])
    mine = m.forward(model, tokens, attend=plain)
    np.testing.assert_allclose(mine.logits, m.forward(model, tokens).logits, rtol=1e-12,
                               atol=1e-12)
    with pytest.raises(AttentionInputError, match="returned no weights"):
        _ = mine.weights
    with pytest.raises(AttentionInputError, match=r"attend must return the heads' outputs, "
                                                  r"shape \(\.\.\., heads, n, d_v\) = "
                                                  r"\(2, 2, 7, 4\) \(got shape \(2, 7, 7\)\)"):
        m.forward(model, tokens, attend=lambda Q, K, V, mask: mask * np.ones((2, 7, 7)))


def test_ablating_a_head_removes_its_output_and_nothing_else():
    model = _small_model(2, d_model=8, heads=2, max_len=5, vocab=6)
    tokens = np.array([3, 1, 4, 1, 5])
    full = m.forward(model, tokens)
    without = m.forward(model, tokens, ablate=[(1, 0)])
    # layer 0 is untouched; layer 1's head 0 writes nothing, head 1 as before
    np.testing.assert_array_equal(without.layers[0].output, full.layers[0].output)
    assert (without.layers[1].head_outputs[0] == 0).all()
    np.testing.assert_array_equal(without.layers[1].head_outputs[1],
                                  full.layers[1].head_outputs[1])
    expected = full.layers[1].x + m.merge_heads(without.layers[1].head_outputs) @ model.W_O[1]
    np.testing.assert_allclose(without.layers[1].output, expected, rtol=1e-14)
    for bad in ([(2, 0)], [(0, 2)], [(0,)], ["0.1"]):
        with pytest.raises(AttentionInputError, match=r"ablate must list \(layer, head\) "
                                                      r"pairs, layer 0 … 1 and head 0 … 1"):
            m.forward(model, tokens, ablate=bad)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 6), st.integers(0, 5))
def test_generating_with_the_kv_cache_equals_the_uncached_run(seed, prompt_len, new):
    """Token by token with a cache per layer: the logits of the whole sequence at once, and
    each written token the most likely one."""
    model = _small_model(seed % 100, d_model=8, heads=2, max_len=12, vocab=7)
    prompt = np.random.default_rng(seed).integers(0, 7, size=prompt_len)
    g = m.generate(model, prompt, new)
    assert len(g.tokens) == prompt_len + new
    np.testing.assert_array_equal(g.tokens[:prompt_len], prompt)
    full = m.forward(model, g.tokens)
    np.testing.assert_allclose(g.logits, full.logits, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(g.tokens[prompt_len:], full.predictions()[prompt_len - 1:-1])
    for layer, cache in enumerate(g.caches):
        np.testing.assert_allclose(cache.keys, full.layers[layer].k, rtol=1e-10, atol=1e-12)


def test_bad_input_is_refused_with_what_was_expected():
    model = m.init_model(seed=0)
    with pytest.raises(AttentionInputError, match=r"tokens must be whole numbers 0 … 25, "
                                                  r"shape \(\.\.\., n\) with n ≥ 1 \(got "
                                                  r"float64 of shape \(2,\)\)"):
        m.forward(model, np.array([1.0, 2.0]))
    with pytest.raises(AttentionInputError, match="tokens must be at most 24 long"):
        m.forward(model, np.zeros(25, dtype=int))
    with pytest.raises(AttentionInputError, match=r"new_tokens must be a whole number from 0 "
                                                  r"to 21: the prompt has 3 tokens"):
        m.generate(model, [1, 2, 3], 22)
    with pytest.raises(AttentionInputError, match=r"prompt must be one sequence"):
        m.generate(model, [[1, 2]], 1)
    with pytest.raises(AttentionInputError, match=r"W_O must be an array of shape "
                                                  r"\(2, 32, 32\) for this model"):
        model.with_parameters({"W_O": np.zeros((2, 32, 31))})
    with pytest.raises(AttentionInputError, match=r"unknown parameter\(s\) \['W_X'\]"):
        model.with_parameters({"W_X": np.zeros(1)})
    with pytest.raises(AttentionInputError, match="heads must be a positive whole number that "
                                                  "divides d_model = 32"):
        m.init_model(heads=3)


def test_the_causal_mask_holds_a_later_token_changes_no_earlier_logit():
    model = _small_model(4, d_model=8, heads=2, max_len=6, vocab=6)
    a = m.forward(model, np.array([0, 1, 2, 3, 4, 5])).logits
    b = m.forward(model, np.array([0, 1, 2, 3, 4, 0])).logits
    np.testing.assert_array_equal(a[:5], b[:5])
    assert not np.array_equal(a[5], b[5])
    assert causal_mask(2).sum() == 3
