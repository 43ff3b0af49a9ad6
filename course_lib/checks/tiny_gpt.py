r"""Self-checks of lesson 16: your attention in the trained model, and the circuit by hand.

:func:`check_attend_in_model` runs the student's ``attend(Q, K, V, mask)`` in every head of
the trained model (:mod:`course_lib.tiny_gpt`), on arrays of shape
``(sequences, heads, n, d_k)``. It first calls it on the queries, keys and values of the
model's first layer for two sequences of the task and compares the output with
``attention(Q, K, V, mask=mask)``; then runs the whole model with it and compares the
logits. It names these mistakes:

========================  ===================================================================
mistake                   what the function did
========================  ===================================================================
``sees_the_future``       no mask: every position attended to the later ones too
``missing_scale``         scores not divided by :math:`\sqrt{d_k}`
``softmax_wrong_axis``    softmax down the columns (over the queries), not along each row
``masked_to_zero``        hidden scores set to 0 instead of :math:`-\infty` (0 is a score
                          like any other: hidden keys still get weight)
``mask_after_softmax``    weights of hidden keys zeroed after softmax, rows not summing to 1
``returned_weights``      the weights returned, not the weights times V
``shapes_clash``          a product of shapes that do not fit (``K.T`` on a 4-D array
                          reverses all four axes, lesson 09)
========================  ===================================================================

:func:`check_induction_by_hand` asks which letters the circuit's two heads look at, in the
sequence of :func:`course_lib.tiny_gpt.circuit.exercise_sequence`, and names the letters
one position off.

Examples
--------
>>> from course_lib import attention
>>> check_attend_in_model(lambda Q, K, V, mask: attention(Q, K, V, mask=mask)[0]).passed
True
>>> check_attend_in_model(lambda Q, K, V, mask: attention(Q, K, V)[0]).mistake
'sees_the_future'
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..attention import attention, causal_mask, softmax
from ..tiny_gpt.circuit import exercise_sequence
from ..tiny_gpt.model import forward
from ..tiny_gpt.shipped import load_model
from ..tiny_gpt.task import letters, make_batch
from .core import (
    CheckResult,
    _as_array,
    _call,
    _diagnose,
    _fail,
    _matches,
    _name_of,
    _ok,
    _run,
    _Stop,
)

__all__ = ["check_attend_in_model", "check_induction_by_hand"]

#: the sequences the check runs the model on
PROBE_SEED = 16

_SHAPES_HINT = (" With Q, K and V of shape (sequences, heads, n, d_k), `K.T` reverses all four "
                "axes; swap the last two only: `np.swapaxes(K, -1, -2)` (lesson 09).")


def _masked_scores(Q: np.ndarray, K: np.ndarray, mask: np.ndarray, fill: float) -> np.ndarray:
    s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    return np.where(mask, s, fill)


def check_attend_in_model(attend: Any) -> CheckResult:
    """Check ``attend(Q, K, V, mask) -> output`` in every head of the trained model.

    Parameters
    ----------
    attend : callable
        Takes ``Q, K, V`` of shape ``(sequences, heads, n, d_k)`` and the causal ``mask``
        ``(n, n)`` (True where a query may look); returns the output, shape of ``V``
        (or ``(output, weights)`` as :func:`course_lib.attention` does).

    Returns
    -------
    CheckResult
    """
    what = _name_of(attend, "attend")

    def body() -> CheckResult:
        model = load_model().model
        batch = make_batch(2, seed=PROBE_SEED)
        library = forward(model, batch.tokens)
        first = library.layers[0]
        Q, K, V = first.q, first.k, first.v
        mask = causal_mask(Q.shape[-2])
        args = [("Q", Q), ("K", K), ("V", V), ("mask", mask)]
        raw = _call(attend, args, what, hint=_SHAPES_HINT, shape_mistake="shapes_clash")
        got = _as_array(raw, what, V.shape, accept_pair=True)
        if got.shape == (*Q.shape[:-1], K.shape[-2]) and got.shape != V.shape:
            raise _Stop(_fail("returned_weights", f"`{what}` returned the weights, shape "
                              f"{got.shape}; return the weights times V, shape {V.shape}."))
        want = attention(Q, K, V, mask=mask)[0]
        d_k = Q.shape[-1]
        mistakes = [
            ("sees_the_future", lambda: attention(Q, K, V)[0],
             "every position attended to the letters after it too: set the scores the mask "
             "hides (mask False) to -inf before softmax."),
            ("missing_scale", lambda: attention(Q * np.sqrt(d_k), K, V, mask=mask)[0],
             "the scores are not divided by sqrt(d_k); d_k is the last axis of Q."),
            ("softmax_wrong_axis",
             lambda: softmax(_masked_scores(Q, K, mask, -np.inf), axis=-2) @ V,
             "softmax ran down each column (over the queries); each query's row of weights "
             "must sum to 1: softmax along the last axis."),
            ("masked_to_zero", lambda: softmax(_masked_scores(Q, K, mask, 0.0)) @ V,
             "the hidden scores were set to 0, and 0 is a score like any other: the later "
             "letters still got weight. Hide them with -inf."),
            ("mask_after_softmax",
             lambda: (softmax(_masked_scores(Q, K, np.ones_like(mask), 0.0)) * mask) @ V,
             "the weights of hidden keys were zeroed after softmax, so a row no longer sums "
             "to 1: mask the scores (with -inf) before softmax."),
        ]
        _diagnose(got, want, what, mistakes, args)
        mine = forward(model, batch.tokens, attend=lambda q, k, v, m: _call(
            attend, [("Q", q), ("K", k), ("V", v), ("mask", m)], what))
        if not _matches(mine.logits, library.logits):
            raise _Stop(_fail("wrong_in_model", f"`{what}` gives the right output on the "
                              "first layer but not in the whole model: does it depend on "
                              "something other than Q, K, V and mask?"))
        n_sequences, n = batch.tokens.shape
        return _ok(f"the trained model with your attention in all of its {model.layers} × "
                   f"{model.heads} heads gives the\nsame logits as with the course's, at "
                   f"every one of the {n} positions of {n_sequences} sequences.")

    return _run(body)


def _letter(x: Any) -> Any:
    return x.strip().lower() if isinstance(x, str) else x


def check_induction_by_hand(answer: Any) -> CheckResult:
    """The circuit by hand: which letter each of its two heads looks at.

    In :func:`~course_lib.tiny_gpt.circuit.exercise_sequence`, the model is at the last
    letter (the second letter of the segment's second copy). The student returns
    ``[what the induction head looks at, what the previous-token head wrote into that
    position's row]``: the letter after the earlier occurrence of the last letter, and the
    last letter itself.

    Examples
    --------
    >>> check_induction_by_hand(lambda: ["c", "i"]).mistake
    'the_earlier_copy_itself'
    """
    what = _name_of(answer, "induction_by_hand")
    seq = letters(exercise_sequence())
    last = seq[-1]
    earlier = seq.index(last)  # its first occurrence
    target, before = seq[earlier + 1], seq[earlier - 1]
    after_target = seq[earlier + 2]

    def body() -> CheckResult:
        got = _call(answer, [], what) if callable(answer) else answer
        if not (isinstance(got, list | tuple) and len(got) == 2
                and all(isinstance(g, str) for g in got)):
            return _fail("not_two_letters", f"`{what}` should return two letters, like "
                         f"[\"a\", \"b\"] (got {got!r}).")
        looked, written = (_letter(g) for g in got)
        if (looked, written) == (target, last):
            return _ok(f"at the last {last}, the induction head finds the position whose "
                       f"row says\n'after {last}' (the previous-token head wrote {last} into "
                       f"{target}'s row) and looks there, at {target}: the letter to copy.")
        if (looked, written) == (last, target):
            return _fail("swapped", "the two letters are swapped: the first is where the "
                         "induction head looks, the second what that position's row says "
                         "came before it.")
        if looked == last:
            return _fail("the_earlier_copy_itself", f"{last} is the earlier {last} itself. "
                         f"The induction head looks one letter further: at the letter that "
                         f"came after {last}, the one to copy.")
        if looked == before:
            return _fail("one_before", f"{before} is the letter before the earlier {last}; "
                         f"the induction head looks at the one after it.")
        if looked != target:
            return _fail("wrong_letter", f"the induction head does not look at {looked}: "
                         f"find the earlier {last} in the sequence, then the letter after it.")
        if written == target:
            return _fail("wrote_itself", f"the previous-token head writes into {target}'s "
                         "row the letter *before* it, not the letter itself.")
        if written == after_target:
            return _fail("wrote_the_next", f"{after_target} comes after {target}; the "
                         "previous-token head looks one back, at the letter before.")
        return _fail("wrong_letter", f"the first letter is right; the second is the letter "
                     f"the previous-token head, at {target}'s position, looks at.")

    return _run(body)
