"""The checkpoint's answers, on the instructor's side only: what every check expects.

Nothing here is in :mod:`course_lib`, the students' library (STYLE.md habit 9: the graded
quiz keeps its solutions in the instructor's source). It holds the right answer of
``weights_without_self(Q, K)`` and of the shifted-key derivation, the answer cell of a
student who made each :class:`~course_quiz.checkpoint_spec.Mistake` of the spec, and what
each derivation :class:`~course_quiz.checkpoint_spec.Misconception` gives; from them
:func:`expected` computes the ``expected`` mapping that
:func:`course_quiz.checkpoint_checks.judge` compares an answer with. The grader
(:mod:`course_grading.verdicts`) calls it for every check; the variant generator
(:mod:`course_grading.variants`) writes it, for the setup cell's example only, into the
visible check's cell, which is how the check a student runs names a mistake without
:mod:`course_lib` knowing the answer.

Examples
--------
>>> import numpy as np
>>> weights_without_self(np.ones((3, 1)), np.ones((3, 1)))
array([[0. , 0.5, 0.5],
       [0.5, 0. , 0.5],
       [0.5, 0.5, 0. ]])
>>> sorted(expected("test_weights_visible", {"Q": np.eye(3), "K": np.eye(3)}))
['mistaken', 'want']
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

import numpy as np
from numpy.typing import NDArray

from course_lib.attention import attention_weights, scaled_scores, softmax
from course_quiz.checkpoint_spec import CHECKPOINT, QuizSpec

__all__ = [
    "CORRECT_ANSWER",
    "MISCONCEIVED",
    "MISTAKE_SOURCES",
    "OPTIONS",
    "answer_function",
    "duplicated_key_weight",
    "expected",
    "mistaken_weights",
    "online_softmax_state",
    "option_numbers",
    "shift_factors",
    "shifted_key_row",
    "weights_without_self",
]

_CORRECT_BODY = '''\
    Q = np.asarray(Q, dtype=float)
    K = np.asarray(K, dtype=float)
    scores = Q @ K.T / np.sqrt(Q.shape[-1])
    np.fill_diagonal(scores, -np.inf)
    scores = scores - scores.max(axis=-1, keepdims=True)
    e = np.exp(scores)
    return e / e.sum(axis=-1, keepdims=True)
'''


def _answer(doc: str, body: str) -> str:
    return f'def weights_without_self(Q, K):\n    """{doc}"""\n{body}'


#: A correct answer: stable row-wise softmax of QK^T / sqrt(d_k) with the diagonal hidden.
CORRECT_ANSWER = _answer("Row-wise softmax of Q K^T / sqrt(d_k), each token hidden from itself.",
                         _CORRECT_BODY)

_HIDE = "    np.fill_diagonal(scores, -np.inf)\n"

#: Mistake id -> the answer cell of a student who made exactly that mistake (read-only).
MISTAKE_SOURCES: Mapping[str, str] = MappingProxyType({
    "missing_scale": _answer(
        "Q K^T with the diagonal hidden, row-wise softmax (the scale is missing).",
        _CORRECT_BODY.replace(" / np.sqrt(Q.shape[-1])", "")),
    "wrong_axis": _answer(
        "The diagonal hidden, softmax over axis 0 (the columns), not the rows.",
        _CORRECT_BODY.replace("axis=-1", "axis=0")),
    "naive_exp_overflow": _answer(
        "The diagonal hidden, without subtracting the row maximum.",
        _CORRECT_BODY.replace("    scores = scores - scores.max(axis=-1, keepdims=True)\n", "")),
    "dk_from_wrong_axis": _answer(
        "The diagonal hidden, d_k read from the wrong axis (the tokens).",
        _CORRECT_BODY.replace("np.sqrt(Q.shape[-1])", "np.sqrt(Q.shape[0])")),
    "no_mask": _answer(
        "softmax(Q K^T / sqrt(d_k)) as in the lessons: the diagonal is not hidden.",
        _CORRECT_BODY.replace(_HIDE, "")),
    "causal_mask": _answer(
        "Lesson 07's causal mask instead of hiding the diagonal.",
        _CORRECT_BODY.replace(
            _HIDE, "    scores = np.where(np.tril(np.ones(scores.shape, dtype=bool)), scores,"
                   " -np.inf)\n")),
    "mask_after_softmax": _answer(
        "The diagonal zeroed after the softmax, the rows not renormalised.",
        _CORRECT_BODY.replace(_HIDE, "").replace(
            "    return e / e.sum(axis=-1, keepdims=True)\n",
            "    w = e / e.sum(axis=-1, keepdims=True)\n    np.fill_diagonal(w, 0.0)\n"
            "    return w\n")),
    "zero_score": _answer(
        "The diagonal's scores set to 0 instead of -inf.",
        _CORRECT_BODY.replace("np.fill_diagonal(scores, -np.inf)",
                              "np.fill_diagonal(scores, 0.0)")),
})


def answer_function(source: str, name: str = "weights_without_self") -> Callable[..., Any]:
    """Run an answer cell's source and return the function ``name`` it defines.

    Parameters
    ----------
    source : str
        Python source of an answer cell, such as a value of :data:`MISTAKE_SOURCES`. It
        runs with ``np`` (numpy) available, as in the quiz.
    name : str
        The function to return.

    Raises
    ------
    ValueError
        If the source does not define ``name``.
    """
    namespace: dict[str, object] = {"np": np, "__name__": "__main__"}
    exec(compile(source, "<answer cell>", "exec"), namespace)
    func = namespace.get(name)
    if not callable(func):
        raise ValueError(
            f"the answer source must define a function {name}(Q, K) "
            f"(got names: {', '.join(sorted(k for k in namespace if not k.startswith('__')))})"
        )
    return func


@functools.cache
def _mistake_function(mistake_id: str) -> Callable[..., Any]:
    return answer_function(MISTAKE_SOURCES[mistake_id])


def weights_without_self(Q: Any, K: Any) -> NDArray[np.float64]:
    """softmax(Q K^T / sqrt(d_k)) over each row with the diagonal hidden (the grader's).

    Parameters
    ----------
    Q, K : array_like, shape (n, d_k)
        As many keys as queries, n >= 2.

    Returns
    -------
    ndarray, shape (n, n)
        Zero on the diagonal; each row sums to 1 over the other tokens.
    """
    Q = np.asarray(Q, dtype=float)
    return attention_weights(Q, K, mask=~np.eye(Q.shape[0], dtype=bool))


def _unshifted_row(inputs: Mapping[str, Any]) -> NDArray[np.float64]:
    return attention_weights(np.asarray(inputs["Q"], dtype=float),
                             np.asarray(inputs["K"], dtype=float))[int(inputs["row"])]


def shifted_key_row(inputs: Mapping[str, Any]) -> NDArray[np.float64]:
    """Row ``row`` of softmax(scaled scores) after key ``key``'s scores were raised by ``c``.

    Parameters
    ----------
    inputs : mapping
        ``Q``, ``K`` (shape (n, d_k)), ``row``, ``key`` and ``c``.

    Returns
    -------
    ndarray, shape (n,)
    """
    s = scaled_scores(np.asarray(inputs["Q"], dtype=float), np.asarray(inputs["K"], dtype=float))
    s[:, int(inputs["key"])] += float(inputs["c"])
    return softmax(s)[int(inputs["row"])]


def _raised_weight(inputs: Mapping[str, Any]) -> tuple[float, float]:
    """The raised key's weight w_j in the row before the shift, and e^c."""
    return float(_unshifted_row(inputs)[int(inputs["key"])]), float(np.exp(float(inputs["c"])))


def shift_factors(inputs: Mapping[str, Any]) -> NDArray[np.float64]:
    """The derivation's intermediate quantities: the factor the new normaliser is of the
    old one, and the factors the raised key's weight and each other weight are multiplied by.

    With w_j the raised key's weight before the shift, the normaliser (the sum of e^score
    over the row) becomes Z' = Z - Z w_j + Z w_j e^c, so Z'/Z = 1 + w_j (e^c - 1); the raised
    key's weight is multiplied by e^c / (Z'/Z) and every other weight by 1 / (Z'/Z).

    Parameters
    ----------
    inputs : mapping
        ``Q``, ``K`` (shape (n, d_k)), ``row``, ``key`` and ``c``.

    Returns
    -------
    ndarray, shape (3,)
        ``[Z'/Z, e^c / (Z'/Z), 1 / (Z'/Z)]``.

    Examples
    --------
    >>> Q = K = np.zeros((2, 1))  # every weight 1/2
    >>> shift_factors({"Q": Q, "K": K, "row": 0, "key": 1, "c": np.log(3.0)}).round(3).tolist()
    [2.0, 1.5, 0.5]
    """
    w, e_c = _raised_weight(inputs)
    grown = 1.0 + w * (e_c - 1.0)
    return np.array([grown, e_c / grown, 1.0 / grown])


def _factors_unchanged(inputs: Mapping[str, Any]) -> NDArray[np.float64]:
    return np.ones(3)


def _normaliser_as_weight_sum(inputs: Mapping[str, Any]) -> NDArray[np.float64]:
    """The weights' factors read off the two rows (new over old) and the normaliser's as
    the ratio of their sums of weights, which is 1."""
    right = shift_factors(inputs)
    return np.array([1.0, right[1], right[2]])


def _every_score_raised(inputs: Mapping[str, Any]) -> NDArray[np.float64]:
    _, e_c = _raised_weight(inputs)
    return np.array([e_c, 1.0, 1.0 / e_c])


def _times_e_c(inputs: Mapping[str, Any]) -> NDArray[np.float64]:
    w = _unshifted_row(inputs)
    w[int(inputs["key"])] *= np.exp(float(inputs["c"]))
    return w


def _plus_c(inputs: Mapping[str, Any]) -> NDArray[np.float64]:
    w = _unshifted_row(inputs)
    w[int(inputs["key"])] += float(inputs["c"])
    return w


def _blocks(inputs: Mapping[str, Any]) -> list[NDArray[np.float64]]:
    scores = np.asarray(inputs["scores"], dtype=float)
    size = int(inputs["block"])
    if scores.ndim != 1 or size < 1 or scores.size % size:
        raise ValueError(f"scores must be one row whose length is a multiple of block={size} "
                         f"(got shape {scores.shape})")
    return [scores[i:i + size] for i in range(0, scores.size, size)]


def _online(inputs: Mapping[str, Any], rescale: Callable[[float, float], float],
            running_max: bool = True, shifted: bool = True) -> NDArray[np.float64]:
    """The state (m, l) after each block of an online softmax: ``rescale(m_old, m_new)`` is
    the factor the running sum is multiplied by when a block moves the maximum."""
    state: list[float] = []
    m, total = -np.inf, 0.0
    for block in _blocks(inputs):
        new = max(m, float(block.max())) if running_max else float(block.max())
        if shifted:
            total = (total * rescale(m, new) if np.isfinite(m) else 0.0) + float(
                np.exp(block - new).sum())
        else:
            total += float(np.exp(block).sum())
        m = new
        state += [m, total]
    return np.array(state)


def online_softmax_state(inputs: Mapping[str, Any]) -> NDArray[np.float64]:
    """The running maximum m and running sum l = sum of e^(s - m) after each block.

    Parameters
    ----------
    inputs : mapping
        ``scores`` (one row) and ``block`` (how many scores each block holds).

    Returns
    -------
    ndarray
        ``[m_1, l_1, m_2, l_2, ...]``, one pair per block.

    Examples
    --------
    >>> online_softmax_state({"scores": [0.0, 0.0, 1.0, 0.0], "block": 2}).round(3).tolist()
    [0.0, 2.0, 1.0, 2.104]
    """
    return _online(inputs, lambda old, new: float(np.exp(old - new)))


def _sizes(inputs: Mapping[str, Any], width: str = "d_k", table: str = "tokens",
           tables: str = "heads", cost: str = "d_k") -> NDArray[np.float64]:
    n, d_model, h = (int(inputs[k]) for k in ("n_tokens", "d_model", "n_heads"))
    d_k = d_model // h
    head = d_model if width == "d_model" else d_k
    side = d_k if table == "features" else n
    dot = d_model if cost == "d_model" else head
    return np.array([head, side, side, (h if tables == "heads" else 1) * side * side,
                     h * head, side * side * (dot if table == "tokens" else n)], dtype=float)


def multihead_sizes(inputs: Mapping[str, Any]) -> NDArray[np.float64]:
    """The sizes and the cost inside a multi-head layer (lessons 09 and 10).

    Parameters
    ----------
    inputs : mapping
        ``n_tokens``, ``d_model`` and ``n_heads`` (which divides ``d_model``).

    Returns
    -------
    ndarray
        ``[d_k, rows, columns of one head's weights, weights of all heads, width of the
        concatenated heads, multiply-adds of one head's Q K^T]``.

    Examples
    --------
    >>> multihead_sizes({"n_tokens": 5, "d_model": 12, "n_heads": 3}).astype(int).tolist()
    [4, 5, 5, 75, 12, 100]
    """
    return _sizes(inputs)


#: An output check's expected numbers, by :attr:`~course_quiz.checkpoint_spec.Check.computes`.
_EXPECTED_OUTPUT: dict[str, Callable[[Mapping[str, Any]], NDArray[np.float64]]] = {
    "shifted_key_row": shifted_key_row,
    "shift_factors": shift_factors,
    "online_softmax_state": online_softmax_state,
    "multihead_sizes": multihead_sizes,
}
#: What each misconception of a derivation gives instead.
MISCONCEIVED: dict[str, Callable[[Mapping[str, Any]], NDArray[np.float64]]] = {
    "factors_unchanged": _factors_unchanged,
    "normaliser_as_weight_sum": _normaliser_as_weight_sum,
    "every_score_raised": _every_score_raised,
    "row_shift_rule": _unshifted_row,
    "times_e_c": _times_e_c,
    "plus_c": _plus_c,
    "no_rescale": lambda inputs: _online(inputs, lambda old, new: 1.0),
    "rescale_inverted": lambda inputs: _online(inputs, lambda old, new: float(np.exp(new - old))),
    "unshifted_sum": lambda inputs: _online(inputs, lambda old, new: 1.0, shifted=False),
    "block_max": lambda inputs: _online(inputs, lambda old, new: float(np.exp(old - new)),
                                        running_max=False),
    "full_width_heads": lambda inputs: _sizes(inputs, width="d_model"),
    "features_table": lambda inputs: _sizes(inputs, table="features"),
    "shared_table": lambda inputs: _sizes(inputs, tables="one"),
    "cost_with_d_model": lambda inputs: _sizes(inputs, cost="d_model"),
}


#: The options of each multiple-choice question, in the public notebook's order (letters A,
#: B, C, D): ``(key, text)`` with ``key`` "right" or the misconception the option stands
#: for, and ``text`` a template that :func:`course_grading.variants.mc_options` fills with
#: one variant's numbers (:func:`option_numbers`). Every option carries the student's own
#: numbers, and the right one has a twin worded the same way that only the student's
#: numbers tell apart from it (question 3: the other column; question 4: what doubling the
#: weight would give), so that the public notebook's wording narrows the choice to two at
#: best (issue 41: the same texts in every variant let a reader of the public source pick
#: the right one whatever its letter). A variant shuffles their order.
OPTIONS: Mapping[str, tuple[tuple[str, str], ...]] = MappingProxyType({
    "mc_read_table": (
        ("division_sharpens",
         "{U} is the one with the division: dividing the scores by sqrt(d_k) makes softmax "
         "more peaked, which is why {U}'s largest weight climbs from {u_first} to {u_last} "
         "as d_k grows, while {D}, without it, stays near {d_mean}."),
        ("right",
         "{U} is the one without the division: undivided scores spread like sqrt(d_k), so "
         "its rows head for one-hot as d_k grows ({U}'s largest weight goes from {u_first} "
         "to {u_last}), while dividing keeps {D}'s largest weight near {d_mean}."),
        ("scale_like_shift",
         "Neither column needs the division to explain it: dividing every score of a row by "
         "the same number leaves softmax unchanged, so {u_last} against {d_last} at "
         "d_k = {dk_last} is only the randomness of the queries and keys."),
        ("misreads_table",
         "{D} is the one without the division: undivided scores spread like sqrt(d_k), so "
         "its rows head for one-hot as d_k grows ({D}'s largest weight goes from {d_first} "
         "to {d_last}), while dividing keeps {U}'s largest weight near {u_mean}."),
    ),
    "mc_duplicate_key": (
        ("copies_share_weight",
         "Nothing changes: the two copies of '{dup}' split between them the {w} it had "
         "({half} each), so every other weight, and the output, stay as they were."),
        ("no_renormalising",
         "Each copy of '{dup}' gets the {w} it had before and every other weight stays as "
         "it was, so the row now sums to {one_plus_w} and the output grows."),
        ("right",
         "'{dup}' takes more of the budget: its two copies together get {pair} (one copy "
         "had {w}), every other weight shrinks by the factor {shrink}, and the output moves "
         "towards the value of '{dup}'."),
        ("doubles_weight",
         "'{dup}' takes more of the budget: its two copies together get {double} (one copy "
         "had {w}), every other weight shrinks by the factor {rest}, and the output moves "
         "towards the value of '{dup}'."),
    ),
})


def option_numbers(question: str, inputs: Mapping[str, Any]) -> dict[str, str]:
    """The numbers (as the options print them) of one variant for a question's options.

    Parameters
    ----------
    question : str
        ``"mc_read_table"`` or ``"mc_duplicate_key"``.
    inputs : mapping
        For the table: ``table`` (rows of (divided, undivided) largest weights, d_k
        growing), ``unscaled_first`` (whether column X is the undivided one) and
        ``table_setup`` (its head sizes first); for the
        duplicated key: ``Q``, ``K``, ``tokens``, ``dup_query``, ``dup_key``.
    """
    if question == "mc_read_table":
        table = np.asarray(inputs["table"], dtype=float)
        undivided, divided = ("X", "Y") if inputs["unscaled_first"] else ("Y", "X")
        dks = inputs["table_setup"][0]
        return {"U": undivided, "D": divided, "u_first": f"{table[0, 1]:.2f}",
                "u_last": f"{table[-1, 1]:.2f}", "u_mean": f"{table[:, 1].mean():.2f}",
                "d_first": f"{table[0, 0]:.2f}", "d_last": f"{table[-1, 0]:.2f}",
                "d_mean": f"{table[:, 0].mean():.2f}", "dk_last": str(dks[-1])}
    if question == "mc_duplicate_key":
        w = float(duplicated_key_weight(inputs))
        return {"dup": str(inputs["tokens"][int(inputs["dup_key"])]), "w": f"{w:.2f}",
                "half": f"{w / 2:.2f}", "one_plus_w": f"{1 + w:.2f}",
                "pair": f"{2 * w / (1 + w):.2f}", "shrink": f"{1 / (1 + w):.2f}",
                "double": f"{2 * w:.2f}", "rest": f"{(1 - 2 * w) / (1 - w):.2f}"}
    raise KeyError(f"no options for {question!r}: expected one of {', '.join(OPTIONS)}")


def duplicated_key_weight(inputs: Mapping[str, Any]) -> float:
    """The weight of query ``dup_query`` on key ``dup_key`` (no mask, one copy of each)."""
    w = attention_weights(np.asarray(inputs["Q"], dtype=float),
                          np.asarray(inputs["K"], dtype=float))
    return float(w[int(inputs["dup_query"]), int(inputs["dup_key"])])


def mistaken_weights(Q: Any, K: Any, spec: QuizSpec = CHECKPOINT
                     ) -> dict[str, NDArray[np.float64]]:
    """What each of the spec's mistakes gives on these inputs (mistake id -> weights)."""
    out = {}
    for mistake in spec.mistakes:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            func = _mistake_function(mistake.id)
            out[mistake.id] = np.asarray(func(np.array(Q, dtype=float),
                                              np.array(K, dtype=float)), dtype=float)
    return out


def expected(grade_id: str, inputs: Mapping[str, Any], spec: QuizSpec = CHECKPOINT
             ) -> dict[str, Any] | None:
    """What :func:`course_quiz.checkpoint_checks.judge` compares an answer with.

    Parameters
    ----------
    grade_id : str
        The check.
    inputs : mapping
        The check's inputs (``Q``, ``K`` for weights; ``Q``, ``K``, ``row``, ``key``, ``c``
        for the derivation; ``scores``, ``block`` for the online softmax).
    spec : QuizSpec

    Returns
    -------
    dict or None
        ``{"want": ..., "mistaken": {id: ...}}`` for a weights check (nested lists: plain
        data), ``{"want": ..., "misconceived": {id: ...}}`` for an output check with
        inputs, None for a letter or an output check without inputs.
    """
    check_ = spec.check(grade_id)
    if check_.kind == "weights":
        return {"want": weights_without_self(inputs["Q"], inputs["K"]).tolist(),
                "mistaken": {k: v.tolist() for k, v in
                             mistaken_weights(inputs["Q"], inputs["K"], spec).items()}}
    if check_.kind == "output" and inputs:
        return {"want": _EXPECTED_OUTPUT[str(check_.computes)](inputs).tolist(),
                "misconceived": {m.id: MISCONCEIVED[m.id](inputs).tolist()
                                 for m in spec.misconceptions_of_check(grade_id)}}
    return None
