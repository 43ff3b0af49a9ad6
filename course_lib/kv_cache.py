r"""The KV cache: generate one token at a time without recomputing the earlier ones.

With a causal mask, query *i* sees keys ``0 … i`` only, so appending token ``n`` changes no
earlier row of the output. To produce the new token's output a model needs only its own
query against the keys and values of every token so far:

.. math:: o_n = \mathrm{softmax}\!\left(\frac{q_n K_{0..n}^T}{\sqrt{d_k}}\right) V_{0..n}.

:class:`KVCache` keeps ``K`` and ``V`` as they grow (appending is amortised :math:`O(d)`:
the buffers double when full) and :meth:`KVCache.attend` computes that one row with
:func:`course_lib.attention` (one query, so a ``1 × n`` table): :math:`O(n d)` time and
:math:`O(n)` memory per new token, against :math:`O(n^2 d)` and :math:`O(n^2)` for
recomputing the whole causal attention. The output of each step equals row ``n`` of
``attention(Q, K, V, mask=causal_mask(n + 1))``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .attention import _as_float_array, _check_finite, attention
from .errors import AttentionInputError

__all__ = ["KVCache"]

FloatArray = NDArray[np.float64]


class KVCache:
    """The keys and values of the tokens so far, and attention for one new query.

    Leading (batch/head) dimensions are fixed by the first :meth:`append` or
    :meth:`extend`; so are ``d_k`` and ``d_v``.

    Attributes
    ----------
    keys : ndarray, shape (..., n, d_k)
        The cached keys (a read-only view).
    values : ndarray, shape (..., n, d_v)
        The cached values (a read-only view).

    Examples
    --------
    >>> from course_lib import attention, causal_mask
    >>> rng = np.random.default_rng(0)
    >>> Q, K, V = (rng.normal(size=(5, 4)) for _ in range(3))
    >>> cache = KVCache()
    >>> rows = [cache.step(Q[i], K[i], V[i]) for i in range(5)]  # one token at a time
    >>> len(cache), cache.keys.shape
    (5, (5, 4))
    >>> full = attention(Q, K, V, mask=causal_mask(5))[0]
    >>> float(np.abs(np.array(rows) - full).max()) < 1e-12
    True
    """

    def __init__(self) -> None:
        self._k: FloatArray | None = None
        self._v: FloatArray | None = None
        self._n = 0

    def __len__(self) -> int:
        return self._n

    def __repr__(self) -> str:
        if self._k is None or self._v is None:
            return "KVCache(empty)"
        tokens = f"{self._n} token{'s' * (self._n != 1)}"
        return f"KVCache({tokens}, keys {self.keys.shape}, values {self.values.shape})"

    @property
    def keys(self) -> FloatArray:
        """The cached keys, shape ``(..., n, d_k)`` (a read-only view)."""
        return self._view(self._k, "keys")

    @property
    def values(self) -> FloatArray:
        """The cached values, shape ``(..., n, d_v)`` (a read-only view)."""
        return self._view(self._v, "values")

    def _view(self, buffer: FloatArray | None, name: str) -> FloatArray:
        if buffer is None:
            raise AttentionInputError(f"the cache is empty: it has no {name} yet (append a "
                                      "token's key and value first)")
        view = buffer[..., : self._n, :]
        view.flags.writeable = False
        return view

    def append(self, k: ArrayLike, v: ArrayLike) -> None:
        """Add one token's key and value.

        Parameters
        ----------
        k : array_like, shape (..., d_k)
        v : array_like, shape (..., d_v)
            The same leading dimensions as ``k`` (and as every earlier token's).

        Raises
        ------
        AttentionInputError
            If ``k`` or ``v`` is empty, not finite, or its shape does not match the cache.

        Examples
        --------
        >>> cache = KVCache()
        >>> cache.append([1.0, 0.0], [5.0])
        >>> cache
        KVCache(1 token, keys (1, 2), values (1, 1))
        """
        key = _as_float_array("k", k, min_ndim=1, layout="(..., d_k)")
        value = _as_float_array("v", v, min_ndim=1, layout="(..., d_v)")
        self._check_tokens(key, value, ("k", "v"), per_token=True)
        self._store(key[..., None, :], value[..., None, :])

    def extend(self, K: ArrayLike, V: ArrayLike) -> None:
        """Add several tokens at once (the prompt, before generating).

        Parameters
        ----------
        K : array_like, shape (..., m, d_k)
        V : array_like, shape (..., m, d_v)

        Raises
        ------
        AttentionInputError
            If the shapes do not match each other or the cache, or a number is not finite.

        Examples
        --------
        >>> cache = KVCache()
        >>> cache.extend(np.zeros((2, 3, 4)), np.ones((2, 3, 5)))  # 2 heads, 3 tokens
        >>> len(cache), cache.values.shape
        (3, (2, 3, 5))
        """
        key = _as_float_array("K", K, min_ndim=2, layout="(..., m, d_k)")
        value = _as_float_array("V", V, min_ndim=2, layout="(..., m, d_v)")
        self._check_tokens(key, value, ("K", "V"), per_token=False)
        self._store(key, value)

    def _check_tokens(self, key: FloatArray, value: FloatArray, names: tuple[str, str], *,
                      per_token: bool) -> None:
        """Raise unless the keys and values fit each other and the cache."""
        k_name, v_name = names
        if key.shape[-1] == 0 or value.shape[-1] == 0:
            raise AttentionInputError(
                f"{k_name} and {v_name} need at least one number per token (got shapes "
                f"{key.shape} and {value.shape})"
            )
        if key.shape[:-1] != value.shape[:-1]:
            raise AttentionInputError(
                f"{k_name} and {v_name} must have the same leading dimensions: every key "
                f"needs exactly one value (got {k_name} shape {key.shape}, {v_name} shape "
                f"{value.shape})"
            )
        _check_finite(k_name, key)
        _check_finite(v_name, value)
        if self._k is not None and self._v is not None:
            _check_fits(k_name, key, self._k, "keys", per_token)
            _check_fits(v_name, value, self._v, "values", per_token)

    def _store(self, key: FloatArray, value: FloatArray) -> None:
        """Copy checked ``(..., m, d)`` keys and values after the cached ones."""
        m = key.shape[-2]
        self._grow(key, value, self._n + m)
        if self._k is None or self._v is None:  # _grow has made them
            raise RuntimeError("the cache's buffers are missing")
        self._k[..., self._n : self._n + m, :] = key
        self._v[..., self._n : self._n + m, :] = value
        self._n += m

    def _grow(self, key: FloatArray, value: FloatArray, needed: int) -> None:
        """Make room for ``needed`` tokens, doubling the buffers (amortised O(1) per token)."""
        capacity = 0 if self._k is None else self._k.shape[-2]
        if needed <= capacity:
            return
        new_capacity = max(needed, 2 * capacity, 16)
        lead = key.shape[:-2]
        k_buffer = np.empty((*lead, new_capacity, key.shape[-1]))
        v_buffer = np.empty((*lead, new_capacity, value.shape[-1]))
        if self._k is not None and self._v is not None:
            k_buffer[..., : self._n, :] = self._k[..., : self._n, :]
            v_buffer[..., : self._n, :] = self._v[..., : self._n, :]
        self._k, self._v = k_buffer, v_buffer

    def attend(self, q: ArrayLike) -> FloatArray:
        """The output for one query against every cached key: one row of attention.

        Parameters
        ----------
        q : array_like, shape (..., d_k)
            The new token's query, with the cache's leading dimensions.

        Returns
        -------
        ndarray, shape (..., d_v)

        Raises
        ------
        AttentionInputError
            If the cache is empty (append the token's own key and value first: a token
            attends to itself), or ``q`` does not fit the cached keys.

        Examples
        --------
        >>> cache = KVCache()
        >>> cache.extend([[1.0, 0.0], [0.0, 1.0]], [[10.0], [20.0]])
        >>> cache.attend([0.0, 0.0])  # equal scores: the plain average
        array([15.])
        """
        if self._n == 0:
            raise AttentionInputError(
                "the cache is empty: append the new token's key and value before attending "
                "(with a causal mask a token attends to itself and every earlier token)"
            )
        query = _as_float_array("q", q, min_ndim=1, layout="(..., d_k)")
        keys = self.keys
        if query.shape[:-1] != keys.shape[:-2] or query.shape[-1] != keys.shape[-1]:
            raise AttentionInputError(
                f"q must have shape {(*keys.shape[:-2], keys.shape[-1])} to match the cached "
                f"keys, "
                f"shape {keys.shape} = (..., n, d_k) (got shape {query.shape})"
            )
        out, _ = attention(query[..., None, :], keys, self.values)
        return out[..., 0, :]

    def step(self, q: ArrayLike, k: ArrayLike, v: ArrayLike) -> FloatArray:
        """One generated token: :meth:`append` its key and value, then :meth:`attend`.

        Parameters
        ----------
        q, k : array_like, shape (..., d_k)
        v : array_like, shape (..., d_v)

        Returns
        -------
        ndarray, shape (..., d_v)
            Equal to the last row of causal attention over every token so far.

        Examples
        --------
        >>> cache = KVCache()
        >>> cache.step([1.0, 0.0], [1.0, 0.0], [3.0, 4.0])  # the first token sees itself
        array([3., 4.])
        """
        self.append(k, v)
        return self.attend(q)


def _check_fits(name: str, arr: FloatArray, buffer: FloatArray, what: str,
                per_token: bool) -> None:
    """Raise unless ``arr`` has the leading dimensions and width of the cached ``what``."""
    lead = arr.shape[:-1] if per_token else arr.shape[:-2]
    if lead == buffer.shape[:-2] and arr.shape[-1] == buffer.shape[-1]:
        return
    if per_token:
        want = str((*buffer.shape[:-2], buffer.shape[-1]))
    else:
        want = "(" + ", ".join([*(str(s) for s in buffer.shape[:-2]), "m",
                                str(buffer.shape[-1])]) + ")"
    raise AttentionInputError(
        f"{name} must have shape {want} like the {what} already in the cache (got shape "
        f"{arr.shape})"
    )
