"""Tests for course_lib.tiled: tiled attention is attention, in tiles, skipping hidden ones."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course_lib import AttentionInputError, attention, causal_mask
from course_lib import tiled as tiled_module
from course_lib.tiled import computed_tiles, tiled_attention


@st.composite
def attention_inputs(draw):
    """Q, K, V with 0-2 broadcasting batch dims, n_q != n_k allowed, values up to ±10."""
    batch = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    n_q, n_k = draw(st.integers(1, 40)), draw(st.integers(1, 40))
    d_k, d_v = draw(st.integers(1, 6)), draw(st.integers(1, 5))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    scale = draw(st.floats(0.1, 10.0))

    def some_batch():  # each array may drop leading dims or have 1s: they broadcast
        dims = tuple(draw(st.sampled_from([b, 1])) for b in batch)
        return dims[draw(st.integers(0, len(batch))):]

    Q = rng.uniform(-scale, scale, size=(*some_batch(), n_q, d_k))
    K = rng.uniform(-scale, scale, size=(*some_batch(), n_k, d_k))
    V = rng.uniform(-10, 10, size=(*some_batch(), n_k, d_v))
    return Q, K, V, rng


BLOCK = st.integers(1, 50)


@settings(max_examples=150, deadline=None)
@given(attention_inputs(), BLOCK, BLOCK)
def test_equals_attention_for_any_block_size(inputs, block_q, block_k):
    Q, K, V, _ = inputs
    np.testing.assert_allclose(tiled_attention(Q, K, V, block_q=block_q, block_k=block_k),
                               attention(Q, K, V)[0], rtol=0, atol=1e-12)


@settings(max_examples=150, deadline=None)
@given(attention_inputs(), BLOCK, BLOCK)
def test_equals_attention_with_a_random_mask(inputs, block_q, block_k):
    """Random masks that keep one key per row, some hiding whole tiles (padding at the end)."""
    Q, K, V, rng = inputs
    n_q, n_k = Q.shape[-2], K.shape[-2]
    mask = rng.random((*Q.shape[:-2], n_q, n_k)) < rng.uniform(0.1, 0.9)
    padded = int(rng.integers(0, n_k))  # the last keys hidden from every query
    mask[..., n_k - padded:] = False
    rows = np.arange(n_q)
    mask[..., rows, rng.integers(0, n_k - padded, n_q)] = True  # one visible key per row
    np.testing.assert_allclose(
        tiled_attention(Q, K, V, block_q=block_q, block_k=block_k, mask=mask),
        attention(Q, K, V, mask=mask)[0], rtol=0, atol=1e-12)


@settings(max_examples=150, deadline=None)
@given(attention_inputs(), BLOCK, BLOCK)
def test_causal_equals_attention_with_causal_mask(inputs, block_q, block_k):
    Q, K, V, _ = inputs
    n = K.shape[-2]
    Q = Q[..., :n, :] if Q.shape[-2] >= n else np.concatenate(
        [Q, np.ones((*Q.shape[:-2], n - Q.shape[-2], Q.shape[-1]))], axis=-2)
    want = attention(Q, K, V, mask=causal_mask(n))[0]
    for kwargs in ({"causal": True}, {"mask": causal_mask(n)}):
        np.testing.assert_allclose(
            tiled_attention(Q, K, V, block_q=block_q, block_k=block_k, **kwargs), want,
            rtol=0, atol=1e-12)


def test_causal_and_a_mask_combine():
    rng = np.random.default_rng(5)
    Q, K, V = (rng.normal(size=(9, 3)) for _ in range(3))
    pad = np.ones((9, 9), dtype=bool)
    pad[:, 7:] = False  # the last two tokens are padding
    np.testing.assert_allclose(tiled_attention(Q, K, V, block_q=2, block_k=4, causal=True,
                                               mask=pad),
                               attention(Q, K, V, mask=causal_mask(9) & pad)[0],
                               rtol=0, atol=1e-12)


# ------------------------------------------------------------------- tiles skipped, not computed


@pytest.fixture
def counted_tiles(monkeypatch):
    """Record (q rows, k columns) of every tile that tiled_attention takes into a state."""
    seen = []
    real_step = tiled_module._step
    real_matmul = np.matmul
    products = []

    def counting_step(m, total, o, tile, v):
        seen.append(tile.shape[-2:])
        return real_step(m, total, o, tile, v)

    class CountingNumpy:  # the module's np, with matmul counted (the scores of each tile)
        def __getattr__(self, name):
            return getattr(np, name)

        @staticmethod
        def matmul(a, b, *args, **kwargs):
            products.append((a.shape, b.shape))
            return real_matmul(a, b, *args, **kwargs)

    monkeypatch.setattr(tiled_module, "_step", counting_step)
    monkeypatch.setattr(tiled_module, "np", CountingNumpy())
    return seen, products


def _tiles(n_q, n_k, bq, bk, visible):
    """The tiles holding at least one visible entry, by reading the mask (the expectation)."""
    return [(q0, k0) for q0 in range(0, n_q, bq) for k0 in range(0, n_k, bk)
            if visible[q0:q0 + bq, k0:k0 + bk].any()]


@pytest.mark.parametrize(("n", "bq", "bk"), [(10, 3, 4), (64, 16, 16), (100, 64, 64), (7, 1, 1)])
def test_causal_skips_the_tiles_above_the_diagonal(counted_tiles, n, bq, bk):
    seen, products = counted_tiles
    rng = np.random.default_rng(0)
    Q, K, V = (rng.normal(size=(n, 4)) for _ in range(3))
    for kwargs in ({"causal": True}, {"mask": causal_mask(n)}):
        seen.clear()
        products.clear()
        tiled_attention(Q, K, V, block_q=bq, block_k=bk, **kwargs)
        expected = _tiles(n, n, bq, bk, causal_mask(n))
        all_tiles = -(-n // bq) * -(-n // bk)
        assert len(seen) == len(products) == len(expected)
        grid = computed_tiles(n, n, block_q=bq, block_k=bk, **kwargs)
        assert grid.size == all_tiles and int(grid.sum()) == len(expected)
        if n > max(bq, bk):
            assert len(expected) < all_tiles  # some were skipped
    seen.clear()
    tiled_attention(Q, K, V, block_q=bq, block_k=bk)
    assert len(seen) == -(-n // bq) * -(-n // bk)  # no mask: every tile


def test_a_padding_mask_skips_the_padded_tiles(counted_tiles):
    seen, _ = counted_tiles
    rng = np.random.default_rng(1)
    Q, K, V = (rng.normal(size=(2, 12, 3)) for _ in range(3))
    mask = np.ones((2, 12, 12), dtype=bool)
    mask[:, :, 8:] = False  # keys 8..11 hidden in both batch entries: the third key block
    mask[1, :, 5] = False
    tiled_attention(Q, K, V, block_q=4, block_k=4, mask=mask)
    assert len(seen) == 3 * 2
    seen.clear()
    mask[0, 0, 9] = True  # one visible entry in the block: it must be computed again
    tiled_attention(Q, K, V, block_q=4, block_k=4, mask=mask)
    assert len(seen) == 3 * 2 + 1
    np.testing.assert_array_equal(computed_tiles(12, 12, block_q=4, block_k=4, mask=mask),
                                  [[True, True, True], [True, True, False],
                                   [True, True, False]])


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: computed_tiles(0, 4), "n_q must be a positive integer"),
        (lambda: computed_tiles(4, 4, block_k=0), "block_k must be a positive integer"),
        (lambda: computed_tiles(3, 4, causal=True), "n_q=3, n_k=4"),
        (lambda: computed_tiles(2, 2, mask=np.ones((2, 2))), "mask must be a boolean array"),
        (lambda: computed_tiles(2, 2, mask=np.ones((3, 2), dtype=bool)), "does not broadcast"),
    ],
)
def test_computed_tiles_checks_its_arguments(call, message):
    with pytest.raises(AttentionInputError, match=message):
        call()


# ------------------------------------------------------------------------------- input checks

BAD_INPUTS = [
    ("K d_k", lambda r: (r((3, 2)), r((4, 3)), r((4, 2))), {}),
    ("V rows", lambda r: (r((3, 2)), r((4, 2)), r((5, 2))), {}),
    ("empty Q", lambda r: (r((0, 2)), r((4, 2)), r((4, 2))), {}),
    ("nan in K", lambda r: (r((3, 2)), np.full((4, 2), np.nan), r((4, 2))), {}),
    ("inf in V", lambda r: (r((3, 2)), r((4, 2)), np.full((4, 2), np.inf)), {}),
    ("1-D Q", lambda r: (r((2,)), r((4, 2)), r((4, 2))), {}),
    ("strings", lambda r: ([["a", "b"]], r((4, 2)), r((4, 2))), {}),
    ("batch", lambda r: (r((2, 3, 2)), r((3, 4, 2)), r((3, 4, 2))), {}),
    ("mask dtype", lambda r: (r((3, 2)), r((4, 2)), r((4, 2))), {"mask": np.ones((3, 4))}),
    ("mask shape", lambda r: (r((3, 2)), r((4, 2)), r((4, 2))),
     {"mask": np.ones((4, 3), dtype=bool)}),
    ("mask row", lambda r: (r((3, 2)), r((4, 2)), r((4, 2))),
     {"mask": np.array([[True] * 4, [False] * 4, [True] * 4])}),
]


@pytest.mark.parametrize(("case", "make", "kwargs"), BAD_INPUTS, ids=[c for c, _, _ in BAD_INPUTS])
def test_bad_input_gets_the_same_message_as_attention(case, make, kwargs):
    rng = np.random.default_rng(0)
    args = make(lambda shape: rng.normal(size=shape))
    with pytest.raises(AttentionInputError) as from_attention:
        attention(*args, **kwargs)
    with pytest.raises(AttentionInputError) as from_tiled:
        tiled_attention(*args, **kwargs)
    assert str(from_tiled.value) == str(from_attention.value)


@pytest.mark.parametrize("name", ["block_q", "block_k"])
@pytest.mark.parametrize("value", [0, -3, 2.5, True, "64"])
def test_block_sizes_must_be_positive_integers(name, value):
    ones = np.ones((4, 2))
    with pytest.raises(AttentionInputError,
                       match=f"{name} must be a positive integer number of rows per block "
                             rf"\(got {value!r}\)"):
        tiled_attention(ones, ones, ones, **{name: value})


def test_causal_needs_a_square_table_and_a_visible_key():
    rng = np.random.default_rng(0)
    with pytest.raises(AttentionInputError, match="n_q=3, n_k=4"):
        tiled_attention(rng.normal(size=(3, 2)), rng.normal(size=(4, 2)),
                        rng.normal(size=(4, 2)), causal=True)
    ones = np.ones((3, 2))
    mask = np.ones((3, 3), dtype=bool)
    mask[1, :2] = False  # row 1 sees key 2 only, which causal hides
    with pytest.raises(AttentionInputError, match="hides every key from query row 1"):
        tiled_attention(ones, ones, ones, mask=mask, causal=True)
    with pytest.raises(AttentionInputError, match="causal must be True or False"):
        tiled_attention(ones, ones, ones, causal="yes")


def test_inputs_are_not_written_to():
    rng = np.random.default_rng(2)
    Q, K, V = (rng.normal(size=(5, 3)) for _ in range(3))
    copies = [a.copy() for a in (Q, K, V)]
    tiled_attention(Q, K, V, block_q=2, block_k=2, causal=True)
    for a, b in zip((Q, K, V), copies, strict=True):
        np.testing.assert_array_equal(a, b)
