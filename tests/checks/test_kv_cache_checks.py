"""Lesson 15's check of generate_with_cache names each mistake, and gives no number away."""

from __future__ import annotations

import numpy as np
import pytest

import course_lib as cl
from course_lib import checks
from course_lib.checks import kv_cache as kv_cache_checks


def causal(Q, K, V):
    return cl.attention(Q, K, V, mask=cl.causal_mask(len(Q)))[0]


def lists_solution(Q, K, V):  # the lesson's solution, as a student writes it
    keys, values, outputs = [], [], []
    for i in range(len(Q)):
        keys.append(K[i])
        values.append(V[i])
        scores = np.array(keys) @ Q[i] / np.sqrt(Q.shape[-1])
        outputs.append(cl.softmax(scores) @ np.array(values))
    return np.array(outputs)


def sees_the_future(Q, K, V):
    cache = cl.KVCache()
    cache.extend(K, V)
    return np.array([cache.attend(q) for q in Q])


def no_scale(Q, K, V):
    return np.array([cl.softmax(K[: i + 1] @ Q[i]) @ V[: i + 1] for i in range(len(Q))])


def after_its_output(Q, K, V):  # caches token i after computing its output
    keys, values, outputs = [], [], []
    for i in range(len(Q)):
        scores = np.array(keys).reshape(-1, Q.shape[1]) @ Q[i] / np.sqrt(Q.shape[-1])
        e = np.exp(scores)
        outputs.append(e @ np.array(values).reshape(-1, V.shape[1]) / e.sum())
        keys.append(K[i])
        values.append(V[i])
    return np.array(outputs)


def fresh_cache(Q, K, V):
    return np.array([cl.KVCache().step(Q[i], K[i], V[i]) for i in range(len(Q))])


def first_query(Q, K, V):
    cache = cl.KVCache()
    return np.array([cache.step(Q[0], K[i], V[i]) for i in range(len(Q))])


def stub(Q, K, V):
    raise NotImplementedError("Student exercise: generate row by row with a cache")


def test_right_answers_pass():
    for fn in (causal, lists_solution):
        verdict = checks.check_generate_with_cache(fn)
        assert verdict, verdict.message


@pytest.mark.parametrize("fn, mistake", [
    (stub, "not_written"), (sees_the_future, "sees_the_future"), (no_scale, "missing_scale"),
    (after_its_output, "cache_misses_itself"), (fresh_cache, "fresh_cache"),
    (first_query, "wrong_query"), (lambda Q, K, V: causal(Q, K, V)[:-1], "wrong_shape"),
    (lambda Q, K, V: causal(Q, K, V) + 0.1, "wrong_values"),
])
def test_each_mistake_is_named(fn, mistake):
    verdict = checks.check_generate_with_cache(fn)
    assert (bool(verdict), verdict.mistake) == (False, mistake), verdict.message


def test_each_named_mistake_has_its_own_sentence_and_no_expected_number():
    Q, K, V = kv_cache_checks._probe()
    want = causal(Q, K, V)
    numbers = {f"{v:.3f}" for v in want.ravel()}
    messages = set()
    for fn in (sees_the_future, no_scale, after_its_output, fresh_cache, first_query):
        message = checks.check_generate_with_cache(fn).message
        messages.add(message)
        assert not any(n in message for n in numbers), message
    assert len(messages) == 5


def test_the_probe_tells_the_mistakes_apart():
    """d_k = 3 (so the scale matters), K != Q, no row one-hot: every wrong answer differs."""
    Q, K, V = kv_cache_checks._probe()
    assert Q.shape == (5, 3) and not np.allclose(Q, K)
    wrongs = [fn(Q, K, V) for fn in (sees_the_future, no_scale, fresh_cache, first_query)]
    right = causal(Q, K, V)
    assert all(np.abs(w - right).max() > 1e-3 for w in wrongs)
    assert cl.attention_weights(Q, K, cl.causal_mask(5))[1:].max() < 0.99  # row 0: itself
