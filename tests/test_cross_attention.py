"""Cross-attention (n_q != n_k): the library takes it, the example is right, the check names
each likely mistake (following tests/checks/test_checks.py)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from course_lib import AttentionInputError, attention, attention_weights, checks
from course_lib.cross_attention import translation_example

finite = st.floats(-30, 30, allow_nan=False, allow_infinity=False)


@st.composite
def cross_qkv(draw):
    n_q, n_k = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    d_k, d_v = draw(st.integers(1, 5)), draw(st.integers(1, 4))
    return (draw(hnp.arrays(np.float64, (n_q, d_k), elements=finite)),
            draw(hnp.arrays(np.float64, (n_k, d_k), elements=finite)),
            draw(hnp.arrays(np.float64, (n_k, d_v), elements=finite)))


@settings(max_examples=100, deadline=None)
@given(cross_qkv())
def test_shapes_for_any_n_q_and_n_k(args):
    Q, K, V = args
    out, w = attention(Q, K, V)
    assert w.shape == (Q.shape[0], K.shape[0])
    assert out.shape == (Q.shape[0], V.shape[1])
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, atol=1e-12)


def test_translation_example_each_french_word_looks_at_its_english_word():
    ex = translation_example()
    w = attention_weights(ex.Q, ex.K)
    assert w.shape == (2, 3)
    assert [ex.sources[j] for j in w.argmax(axis=1)] == ["cat", "sat"]
    np.testing.assert_allclose(w.round(2), [[0.07, 0.62, 0.31], [0.16, 0.16, 0.67]])
    assert (w.max(axis=1) < 0.9).all()  # not saturated: the other words still count


@pytest.mark.parametrize(("K", "V", "message"), [
    (np.ones((3, 2)), np.ones((2, 2)), r"V has 2 rows but K has n_k=3"),
    (np.ones((3, 4)), np.ones((3, 2)), r"K has d_k=4 columns but Q has d_k=2"),
])
def test_mismatched_shapes_name_both(K, V, message):
    with pytest.raises(AttentionInputError, match=message):
        attention(translation_example().Q, K, V)


# ------------------------------------------------------------------------------ the check


def _softmax_rows(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _right(Q, K, V):
    return _softmax_rows(Q @ K.T / np.sqrt(Q.shape[-1])) @ V


def _not_written(Q, K, V):
    raise NotImplementedError("Student exercise: write it")


WRONG = [
    ("keys_cut_to_queries",
     lambda Q, K, V: _softmax_rows(Q @ K[:len(Q)].T / np.sqrt(Q.shape[-1])) @ V[:len(Q)]),
    ("keys_cut_to_queries",  # a loop over the keys that runs over the queries
     lambda Q, K, V: np.array([_softmax_rows(np.array([Q[i] @ K[j] for j in range(len(Q))])
                                             / np.sqrt(Q.shape[-1])) @ V[:len(Q)]
                               for i in range(len(Q))])),
    ("keys_cut_to_queries",  # the table itself cut square: an (n_q, n_q) result
     lambda Q, K, V: _softmax_rows(Q @ K[:len(Q)].T / np.sqrt(Q.shape[-1]))),
    ("wrong_transpose", lambda Q, K, V: _softmax_rows(Q.T @ K / np.sqrt(Q.shape[-1])) @ V),
    ("wrong_transpose", lambda Q, K, V: _softmax_rows(K @ Q.T / np.sqrt(Q.shape[-1])) @ V),
    ("wrong_transpose", lambda Q, K, V: _softmax_rows(Q @ K / np.sqrt(Q.shape[-1])) @ V),
    ("softmax_wrong_axis",
     lambda Q, K, V: _softmax_rows(Q @ K.T / np.sqrt(Q.shape[-1]), axis=0) @ V),
    ("missing_scale", lambda Q, K, V: _softmax_rows(Q @ K.T) @ V),
    ("dk_wrong_axis", lambda Q, K, V: _softmax_rows(Q @ K.T / np.sqrt(len(Q))) @ V),
    ("dk_wrong_axis", lambda Q, K, V: _softmax_rows(Q @ K.T / np.sqrt(len(K))) @ V),
    ("no_softmax", lambda Q, K, V: (Q @ K.T / np.sqrt(Q.shape[-1])) @ V),
    ("wrong_shape", lambda Q, K, V: _softmax_rows(Q @ K.T / np.sqrt(Q.shape[-1]))),
    ("not_written", _not_written),
]

PHRASES = {
    "keys_cut_to_queries": "key",
    "wrong_transpose": "which array you transposed",
    "softmax_wrong_axis": "row",
    "missing_scale": "sqrt(d_k)",
    "dk_wrong_axis": "d_k is the dimension",
    "no_softmax": "softmax",
    "wrong_shape": "shape",
    "not_written": "not written yet",
}
ANSWER_CODE = ("K.T", "@ V", "axis=-1", "axis=1", "shape[-1]", "shape[1]", "np.sqrt(")


def test_check_accepts_a_correct_function_and_the_library():
    for fn in (_right, attention, lambda Q, K, V: attention(Q, K, V)[0]):
        result = checks.check_cross_attention(fn)
        assert result and result.mistake is None, result.message


@pytest.mark.parametrize(("mistake", "wrong"), WRONG,
                         ids=[f"{i}-{m}" for i, (m, _) in enumerate(WRONG)])
def test_check_names_each_mistake_without_writing_the_answer(mistake, wrong):
    result = checks.check_cross_attention(wrong)
    assert not result, f"a '{mistake}' answer passed"
    assert result.mistake == mistake, result.message
    assert result.message.startswith("Not yet: ") and "\n" not in result.message
    assert PHRASES[mistake] in result.message
    assert not [code for code in ANSWER_CODE if code in result.message], result.message


def test_check_probes_both_ways():
    """The second probe (more queries than keys) catches what the first cannot."""
    def my_cross_attention(Q, K, V):
        out = _right(Q, K, V)
        return out if len(Q) < len(K) else out + 1  # wrong only when n_q > n_k

    result = checks.check_cross_attention(my_cross_attention)
    assert result.mistake == "wrong_values" and "row 0" in result.message
