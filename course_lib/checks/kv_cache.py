r"""Self-check of lesson 15: causal attention generated one token at a time from a cache.

The student writes ``generate_with_cache(Q, K, V)``: for each token ``i`` in turn, add its
key and value to lists (the cache), then compute its output from its own query against
every cached key, :math:`\mathrm{softmax}(q_i K_{0..i}^T/\sqrt{d_k})\,V_{0..i}`.
:func:`check_generate_with_cache` compares it with
``attention(Q, K, V, mask=causal_mask(n))`` and names these mistakes:

=======================  =================================================================
mistake                  what the generation did
=======================  =================================================================
``sees_the_future``      every token attended to every key, also later ones (the whole
                         K and V cached before the first step)
``missing_scale``        scores without the division by :math:`\sqrt{d_k}`
``cache_misses_itself``  token ``i`` attended to keys ``0 … i-1`` only: its own key and
                         value were cached after its output (token 0 then has nothing)
``fresh_cache``          the cache emptied every step: each token attended to itself only
``wrong_query``          every step used the first token's query
=======================  =================================================================

It works like the checks of :mod:`course_lib.checks` (a
:class:`~course_lib.checks.CheckResult`; it raises under nbgrader's *Validate*) and
never prints an expected number. The probe: 5 tokens, :math:`d_k = 3` (so
:math:`\sqrt{d_k}` is not 1), values of dimension 2, keys not equal to the queries.

Examples
--------
>>> from course_lib import attention, causal_mask
>>> check_generate_with_cache(lambda Q, K, V: attention(Q, K, V, mask=causal_mask(len(Q)))[0])
Well done: each of the 5 tokens attended, in turn, to its own key and every earlier one,
the same rows as causal attention over all 5 at once.
>>> check_generate_with_cache(lambda Q, K, V: attention(Q, K, V)[0]).mistake
'sees_the_future'
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..attention import attention, causal_mask, softmax
from .core import CheckResult, _as_array, _call, _diagnose, _name_of, _ok, _run

__all__ = ["check_generate_with_cache"]


def _probe() -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    rng = np.random.default_rng(15)
    Q = rng.normal(scale=0.8, size=(5, 3))
    K = rng.normal(scale=0.8, size=(5, 3))
    V = rng.normal(size=(5, 2))
    return Q, K, V


def _missing_itself(Q: NDArray, K: NDArray, V: NDArray) -> NDArray[np.float64]:
    """Token i over keys 0 … i-1; token 0 over nothing (NaN, as 0/0 would give)."""
    rows = [np.full(V.shape[1], np.nan)]
    for i in range(1, len(Q)):
        w = softmax(K[:i] @ Q[i] / np.sqrt(Q.shape[1]))
        rows.append(w @ V[:i])
    return np.array(rows)


def check_generate_with_cache(generate_with_cache: Any) -> CheckResult:
    """Check a function ``(Q, K, V) -> outputs`` that generates causal attention row by row.

    Parameters
    ----------
    generate_with_cache : callable
        Takes ``Q, K`` of shape ``(n, d_k)`` and ``V`` of shape ``(n, d_v)``; returns the
        ``(n, d_v)`` outputs, row ``i`` computed from keys and values ``0 … i``.

    Returns
    -------
    CheckResult
    """
    what = _name_of(generate_with_cache, "generate_with_cache")

    def body() -> CheckResult:
        Q, K, V = _probe()
        n = len(Q)
        args = [("Q", Q), ("K", K), ("V", V)]
        got = _as_array(_call(generate_with_cache, args, what), what, (n, V.shape[1]))
        want = attention(Q, K, V, mask=causal_mask(n))[0]
        mistakes = [
            ("sees_the_future", lambda: attention(Q, K, V)[0],
             "each token attended to every key, also the ones after it: add one token's "
             "key and value per step, before its output, and never the later ones."),
            ("missing_scale",
             lambda: attention(Q * np.sqrt(3), K, V, mask=causal_mask(n))[0],
             "the scores are not divided by sqrt(d_k); d_k is the dimension of one query."),
            ("cache_misses_itself", lambda: _missing_itself(Q, K, V),
             "token i looked only at the tokens before it: cache its own key and value "
             "first, then compute its output (a token attends to itself too)."),
            ("fresh_cache", lambda: V.copy(),
             "every output is the token's own value: the cache was emptied each step, so "
             "each token saw only itself. Keep the keys and values of earlier steps."),
            ("wrong_query",
             lambda: np.array([attention(Q[:1], K[: i + 1], V[: i + 1])[0][0]
                               for i in range(n)]),
             "every step used the first token's query; step i needs token i's own query."),
        ]
        _diagnose(got, want, what, mistakes, args)
        return _ok(f"each of the {n} tokens attended, in turn, to its own key and every "
                   f"earlier one,\nthe same rows as causal attention over all {n} at once.")

    return _run(body)
