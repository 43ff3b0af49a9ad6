r"""Self-checks of lessons 12 and 13: a backward pass, a finite-difference gradient, dW_Q.

The student writes two functions:

* ``attention_backward(Q, K, V, dO, mask=None) -> (dQ, dK, dV)``, the backward pass of
  :func:`course_lib.attention_backward`; :func:`check_attention_backward` runs it;
* ``numerical_gradient(loss, X, h) -> dX``, central differences
  :math:`(L(X + h e_i) - L(X - h e_i)) / 2h` entry by entry; :func:`check_numerical_gradient`
  runs it;
* (lesson 13) ``weight_gradient(X, dQ) -> dW_Q``, the chain rule through
  :math:`Q = X W_Q` over a batch; :func:`check_weight_gradient` runs it.

They work like the checks of :mod:`course_lib.checks` (they return a
:class:`~course_lib.checks.CheckResult` and raise under nbgrader's *Validate*) and reuse
their helpers. :func:`check_attention_backward` names these mistakes:

=======================  =================================================================
mistake                  what the backward pass did
=======================  =================================================================
``missing_scale_dq``     dQ without the factor :math:`1/\sqrt{d_k}`
``missing_scale_dk``     dK without the factor :math:`1/\sqrt{d_k}`
``missing_scale``        neither dQ nor dK has it
``transposed_ds``        dQ from :math:`dS^T` and dK from :math:`dS`
``rowsum_wrong_axis``    the row sum :math:`\sum_l dP_{il} P_{il}` taken down the columns
``no_rowsum``            :math:`dS = P \odot dP`, without the row sum (only diag(p) of the
                         Jacobian)
``dv_not_transposed``    :math:`dV = P\,dO` instead of :math:`P^T dO`
``mask_ignored``         the mask left out of the forward weights
``wrong_order``          the right three arrays in another order
=======================  =================================================================

Feedback never prints an expected number: it names the array (dQ, dK or dV), the row and
the probe (with or without a mask) where the answer goes wrong.

The probe: 4 tokens attending to each other with keys of their own (:math:`K \ne Q`, so
swapping the roles of Q and K shows), :math:`d_k = 3` (so :math:`\sqrt{d_k}` is not 1 or
2), values of dimension 2, scores within 2 of each other (no saturated row), and a ``dO``
with no two rows alike; then the same with a causal mask.

Examples
--------
>>> from course_lib import attention_backward
>>> check_attention_backward(attention_backward)
Well done: your dQ, dK and dV match the equations on 4 tokens with d_k = 3, without a mask
and with a causal one (masked positions get no gradient).
>>> def no_scale(Q, K, V, dO, mask=None):
...     dQ, dK, dV = attention_backward(Q, K, V, dO, mask)
...     return dQ * np.sqrt(3), dK * np.sqrt(3), dV
>>> check_attention_backward(no_scale).mistake
'missing_scale'
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..attention import attention_weights, causal_mask
from ..backward import attention_backward
from .core import (
    CheckResult,
    _as_array,
    _call,
    _fail,
    _matches,
    _name_of,
    _ok,
    _run,
    _Stop,
)

__all__ = [
    "check_attention_backward",
    "check_numerical_gradient",
    "check_terms_with_the_scale",
    "check_weight_gradient",
    "check_what_went_wrong",
]

FloatArray = NDArray[np.float64]
NAMES = ("dQ", "dK", "dV")

# 4 tokens, d_k = 3, d_v = 2; K != Q; every scaled score within 2 of its row's others
_Q = np.array([[0.9, -0.4, 0.6], [-0.3, 0.8, 0.5], [0.5, 0.5, -0.7], [0.2, -0.6, -0.4]])
_K = np.array([[0.7, 0.2, -0.5], [-0.6, 0.9, 0.3], [0.4, 0.4, 0.8], [0.1, -0.7, 0.2]])
_V = np.array([[1.0, 0.0], [0.0, 2.0], [2.0, 2.0], [-1.0, 1.0]])
_DO = np.array([[0.5, -1.0], [1.5, 0.3], [-0.7, 0.8], [0.2, 1.1]])
_MASK = causal_mask(4)


def _variant(*, scale_q: bool = True, scale_k: bool = True, transpose_ds: bool = False,
             rowsum: str = "rows", transpose_dv: bool = True, use_mask: bool = True
             ) -> Callable[..., tuple[FloatArray, FloatArray, FloatArray]]:
    """A backward pass with one mistake (what a student's function would return)."""

    def backward(Q: FloatArray, K: FloatArray, V: FloatArray, dO: FloatArray,
                 mask: Any = None) -> tuple[FloatArray, FloatArray, FloatArray]:
        P = attention_weights(Q, K, mask if use_mask else None)
        c = 1.0 / math.sqrt(Q.shape[-1])
        dV = P.T @ dO if transpose_dv else P @ dO
        dP = dO @ V.T
        if rowsum == "rows":
            dS = P * (dP - (dP * P).sum(axis=-1, keepdims=True))
        elif rowsum == "columns":
            dS = P * (dP - (dP * P).sum(axis=0, keepdims=True))
        else:
            dS = P * dP
        left = dS.T if transpose_ds else dS
        dQ = left @ K * (c if scale_q else 1.0)
        dK = left.T @ Q * (c if scale_k else 1.0)
        return dQ, dK, dV

    return backward


_MISTAKES: tuple[tuple[str, Callable[..., tuple], str], ...] = (
    ("missing_scale", _variant(scale_q=False, scale_k=False),
     "your dV is right, but dQ and dK are both too large by the same factor: the forward "
     "pass divided QK^T by sqrt(d_k), so the chain rule brings that factor into every "
     "gradient that goes back through the scores."),
    ("missing_scale_dq", _variant(scale_q=False),
     "your dK and dV are right, but dQ is too large by a constant factor: the scores are "
     "QK^T / sqrt(d_k), so dS reaches Q through that division too, not only K."),
    ("missing_scale_dk", _variant(scale_k=False),
     "your dQ and dV are right, but dK is too large by a constant factor: the scores are "
     "QK^T / sqrt(d_k), so dS reaches K through that division too, not only Q."),
    ("transposed_ds", _variant(transpose_ds=True),
     "your dV is right, but dQ and dK use dS the wrong way round: row i of dS belongs to "
     "query i (how the loss changes with query i's scores), so dQ takes dS as it is and dK "
     "its transpose."),
    ("rowsum_wrong_axis", _variant(rowsum="columns"),
     "your dV is right, but in dS the sum of dP ⊙ P runs down the columns: each query's "
     "softmax mixes only its own row, so the sum runs along that row (over the keys)."),
    ("no_rowsum", _variant(rowsum="none"),
     "your dV is right, but dS is P ⊙ dP: that is only the diag(p) part of the softmax "
     "Jacobian diag(p) - pp^T. Raising one weight lowers the others in its row, and the "
     "row sum of dP ⊙ P is that second part."),
    ("dv_not_transposed", _variant(transpose_dv=False),
     "your dQ and dK are right, but dV is P·dO: value j is used by every query i with "
     "weight P[i, j], so its gradient collects column j of P, which P^T brings into a row."),
)

_MASKED_MISTAKES: tuple[tuple[str, Callable[..., tuple], str], ...] = (
    ("mask_ignored", _variant(use_mask=False),
     "right without a mask, but with the causal mask your gradients are those of the "
     "unmasked equation: the forward weights must use the mask (a hidden key has weight 0, "
     "so it gets no gradient through that query)."),
)


def _three_arrays(value: Any, what: str) -> tuple[FloatArray, FloatArray, FloatArray]:
    if value is None:
        raise _Stop(_fail("returned_none", f"`{what}` returned None: did you forget `return`?"))
    if not isinstance(value, tuple | list) or len(value) != 3:
        length = f" of length {len(value)}" if isinstance(value, tuple | list) else ""
        raise _Stop(_fail("wrong_type", f"`{what}` should return three arrays, dQ, dK and "
                          f"dV, in that order (got {type(value).__name__}{length})."))
    shapes = (_Q.shape, _K.shape, _V.shape)
    return tuple(_as_array(a, f"{what}(...)'s {name}", shape)  # type: ignore[return-value]
                 for a, name, shape in zip(value, NAMES, shapes, strict=True))


def _same(got: tuple[FloatArray, ...], want: tuple[Any, ...]) -> bool:
    return all(_matches(g, np.asarray(w, dtype=float)) for g, w in zip(got, want, strict=True))


def _judge(got: tuple[FloatArray, FloatArray, FloatArray], mask: Any, probe: str) -> None:
    """Raise a verdict unless ``got`` is the backward pass of the probe."""
    args = (_Q, _K, _V, _DO, mask)
    want = attention_backward(*args)
    if _same(got, want):
        return
    for order in ((1, 0, 2), (0, 2, 1), (2, 1, 0), (1, 2, 0), (2, 0, 1)):
        if all(g.shape == want[i].shape for g, i in zip(got, order, strict=True)) and _same(
                got, tuple(want[i] for i in order)):
            raise _Stop(_fail("wrong_order", "you compute the right three gradients but "
                              "return them in another order: return dQ, dK, then dV."))
    for code, mistake, sentence in _MISTAKES + (_MASKED_MISTAKES if mask is not None else ()):
        if _same(got, mistake(*args)):
            raise _Stop(_fail(code, sentence))
    for g, w, name in zip(got, want, NAMES, strict=True):
        if g.shape != w.shape:
            raise _Stop(_fail("wrong_shape", f"your {name} has shape {g.shape} but should have "
                              f"{w.shape}, the shape of {name[1]}: a gradient has one entry "
                              f"per entry of what it is the gradient of."))
        if not np.isfinite(g).all():
            raise _Stop(_fail("not_finite", f"your {name} holds NaN or infinity {probe}."))
        close = np.isclose(g, w, rtol=1e-6, atol=1e-9)
        if not close.all():
            row = int(np.argwhere(~close)[0][0])
            rows = int((~close).any(axis=-1).sum())
            raise _Stop(_fail("wrong_values", f"your {name} is off {probe}, first in row "
                              f"{row} ({rows} of {g.shape[0]} rows differ); compare each "
                              "step with the lesson's equations, one array at a time."))


def check_attention_backward(fn: Callable[..., Any]) -> CheckResult:
    """Check a student's ``attention_backward(Q, K, V, dO, mask=None) -> (dQ, dK, dV)``.

    Parameters
    ----------
    fn : callable
        The student's backward pass, for 2-D ``Q`` (n_q, d_k), ``K`` (n_k, d_k), ``V``
        (n_k, d_v), ``dO`` (n_q, d_v) and an optional boolean ``mask`` (n_q, n_k).

    Returns
    -------
    CheckResult
        Passed, or the mistake (see the table of this module) in one sentence.

    Examples
    --------
    >>> from course_lib import attention_backward
    >>> def columns(Q, K, V, dO, mask=None):
    ...     P = attention_weights(Q, K, mask)
    ...     dP = dO @ V.T
    ...     dS = P * (dP - (dP * P).sum(axis=0, keepdims=True))
    ...     return dS @ K / np.sqrt(3), dS.T @ Q / np.sqrt(3), P.T @ dO
    >>> check_attention_backward(columns).mistake
    'rowsum_wrong_axis'
    """
    what = _name_of(fn, "attention_backward")

    def body() -> CheckResult:
        args = [("Q", _Q), ("K", _K), ("V", _V), ("dO", _DO)]
        _judge(_three_arrays(_call(fn, args, what), what), None, "without a mask")
        got = _three_arrays(_call(fn, [*args, ("mask", _MASK)], what), what)
        _judge(got, _MASK, "with the causal mask")
        return _ok("your dQ, dK and dV match the equations on 4 tokens with d_k = 3, without "
                   "a mask and with a causal one (masked positions get no gradient).")

    return _run(body)


# --------------------------------------------------------------------------------------
# the finite-difference gradient
# --------------------------------------------------------------------------------------

_X = np.array([[0.3, -1.2, 0.8], [1.5, 0.1, -0.6]])
_H = 1e-3
# a loss whose second derivative is large (so a one-sided difference is visibly off at
# h = 1e-3) and whose entries interact (so a perturbation left in place shows)
_A = np.array([[1.0, -2.0, 0.5], [0.7, 1.3, -1.1]])


def _probe_loss(X: FloatArray) -> float:
    X = np.asarray(X, dtype=float)
    return float(np.sum(_A * np.sin(2.0 * X)) + 0.5 * np.sum(X) ** 2 + np.sum(X**3))


def _probe_gradient(X: FloatArray) -> FloatArray:
    return 2.0 * _A * np.cos(2.0 * X) + np.sum(X) + 3.0 * X**2


def _differences(loss: Callable[[FloatArray], float], X: FloatArray, h: float, *,
                 kind: str = "central", divide: float = 2.0, restore: bool = True
                 ) -> FloatArray:
    X = np.array(X, dtype=float)
    grad = np.zeros_like(X)
    for i in np.ndindex(X.shape):
        old = X[i]
        X[i] = old + h
        up = loss(X)
        X[i] = old - h if kind == "central" else old
        down = loss(X)
        grad[i] = (up - down) / (divide * h if kind == "central" else h)
        if restore:
            X[i] = old
    return grad


_FD_MISTAKES: tuple[tuple[str, Callable[[], FloatArray], str], ...] = (
    ("divided_by_h", lambda: _differences(_probe_loss, _X, _H, divide=1.0),
     "your differences are twice the gradient: from X - h to X + h is a step of 2h, so "
     "that is what the change in the loss is divided by."),
    ("not_restored", lambda: _differences(_probe_loss, _X, _H, restore=False),
     "your first entry is right but later ones drift: after nudging an entry, put it back "
     "to its old value before nudging the next one."),
    ("one_sided", lambda: _differences(_probe_loss, _X, _H, kind="forward"),
     "your differences are one-sided, (L(X + h) - L(X)) / h: at h = 0.001 that is off by "
     "about h/2 times the curvature; the central difference (L(X + h) - L(X - h)) / 2h "
     "cancels that error."),
)


def check_numerical_gradient(fn: Callable[..., Any]) -> CheckResult:
    """Check a student's ``numerical_gradient(loss, X, h) -> dX`` (central differences).

    The probe is a 2 × 3 ``X`` and a loss with curvature, at ``h = 1e-3``; the answer must
    be within 1e-5 of the exact gradient (central differences are within about 1e-6 there,
    one-sided ones about 1e-2 off), have ``X``'s shape, and leave ``X`` as it was.

    Examples
    --------
    >>> check_numerical_gradient(lambda loss, X, h: _differences(loss, X, h))
    Well done: your central differences agree with the exact gradient to 1e-5 on a
    2 × 3 input, and leave X as it was.
    >>> check_numerical_gradient(lambda loss, X, h: _differences(loss, X, h, divide=1.0)).mistake
    'divided_by_h'
    """
    what = _name_of(fn, "numerical_gradient")

    def body() -> CheckResult:
        X = _X.copy()
        got = _as_array(_call(fn, [("loss", _probe_loss), ("X", X), ("h", _H)], what),
                        what, _X.shape)
        want = _probe_gradient(_X)
        if got.shape == want.shape and np.allclose(got, want, rtol=0, atol=1e-5):
            return _ok("your central differences agree with the exact gradient to 1e-5 on "
                       "a 2 × 3 input, and leave X as it was.")
        for code, candidate, sentence in _FD_MISTAKES:
            if got.shape == want.shape and np.allclose(got, candidate(), rtol=0, atol=1e-7):
                return _fail(code, sentence)
        if got.shape != want.shape:
            return _fail("wrong_shape", f"`{what}` returned shape {got.shape}; the gradient "
                         f"has one entry per entry of X, shape {want.shape}.")
        off = np.argwhere(~np.isclose(got, want, rtol=0, atol=1e-5))[0]
        return _fail("wrong_values", f"entry {tuple(int(i) for i in off)} of your gradient "
                     "is off by more than 1e-5: nudge one entry by +h and by -h, divide the "
                     "change in the loss by 2h, put the entry back, then go on to the next.")

    return _run(body)


# --------------------------------------------------------------------------------------
# lesson 13: from dQ to dW_Q
# --------------------------------------------------------------------------------------

# 3 examples of 2 tokens, 4 numbers per token, d_k = 5: every axis a different length, so a
# product over the wrong axis cannot be computed or gives another shape
_XB = np.round(np.sin(np.arange(24.0) * 1.7).reshape(3, 2, 4), 2)
_DQB = np.round(np.cos(np.arange(30.0) * 0.9).reshape(3, 2, 5), 2)


def _weight_gradient(X: FloatArray, dQ: FloatArray) -> FloatArray:
    return np.einsum("nqm,nqd->md", X, dQ)


def check_weight_gradient(fn: Callable[..., Any]) -> CheckResult:
    r"""Check a student's ``weight_gradient(X, dQ) -> dW_Q`` for :math:`Q = X W_Q` in a batch.

    ``X`` has shape (n, tokens, d_model) and ``dQ`` (n, tokens, d_k); the answer is
    :math:`\sum_n X_n^T dQ_n`, shape (d_model, d_k): every example used the same
    :math:`W_Q`, so their gradients add up. The probe has 3 examples of 2 tokens, d_model 4
    and d_k 5.

    Examples
    --------
    >>> check_weight_gradient(lambda X, dQ: np.einsum("nqm,nqd->md", X, dQ))
    Well done: your dW_Q has W_Q's shape (4, 5) and adds up X^T dQ over the 3 examples.
    >>> check_weight_gradient(lambda X, dQ: np.einsum("nqm,nqd->md", X, dQ) / 3).mistake
    'mean_not_sum'
    """
    what = _name_of(fn, "weight_gradient")

    def body() -> CheckResult:
        args = [("X", _XB), ("dQ", _DQB)]
        got = _as_array(_call(fn, args, what), what, (4, 5))
        want = _weight_gradient(_XB, _DQB)
        if _matches(got, want):
            return _ok("your dW_Q has W_Q's shape (4, 5) and adds up X^T dQ over the 3 "
                       "examples.")
        if got.shape == (3, 4, 5):
            return _fail("not_summed", "you return one X^T dQ per example, shape (3, 4, 5): "
                         "all 3 examples used the same W_Q, so its gradient is their sum, one "
                         "(4, 5) array.")
        if got.shape == (5, 4):
            return _fail("transposed_result", "your dW_Q has shape (5, 4), the transpose of "
                         "W_Q's (4, 5): a gradient has the shape of what it is the gradient of.")
        if got.shape == want.shape and _matches(got * 3, want):
            return _fail("mean_not_sum", "your dW_Q is the mean over the examples: each "
                         "example's loss reaches W_Q on its own path, so the gradients add up "
                         "(any averaging is already in dQ).")
        if got.shape == want.shape and _matches(got * 6, want):
            return _fail("mean_not_sum", "your dW_Q is divided by the number of tokens in the "
                         "batch: the gradients of all uses of W_Q add up.")
        if got.shape != want.shape:
            return _fail("wrong_shape", f"`{what}` returned shape {got.shape}; dW_Q has W_Q's "
                         "shape (d_model, d_k) = (4, 5) here.")
        return _fail("wrong_values", "the shape is right but the numbers are not X^T dQ added "
                     "over the examples; Q = X W_Q for each example, so dW_Q pairs the columns "
                     "of X (d_model) with the columns of dQ (d_k), summed over the tokens.")

    return _run(body)


# --------------------------------------------------------------------------------------
# the exercises that are not fill-ins: which terms carry the scale (12), what went wrong (13)
# --------------------------------------------------------------------------------------

_GRADIENT_NAMES = ("dQ", "dK", "dV", "dS")


def _answer_of(fn: Callable[[], Any], what: str) -> Any:
    return _call(fn, [], what)


def check_terms_with_the_scale(fn: Callable[[], Any]) -> CheckResult:
    r"""Which of dQ, dK, dV, dS carry the factor :math:`1/\sqrt{d_k}`? (lesson 12)

    ``fn()`` returns the names, e.g. a list of strings.

    Examples
    --------
    >>> check_terms_with_the_scale(lambda: ["dQ", "dK", "dV"]).mistake
    'dv_scaled'
    """
    what = _name_of(fn, "terms_with_the_scale")

    def body() -> CheckResult:
        got = _answer_of(fn, what)
        if isinstance(got, str) or not isinstance(got, list | tuple | set | frozenset):
            return _fail("wrong_type", f"`{what}` should return a list of names, some of "
                         f"{', '.join(map(repr, _GRADIENT_NAMES))} (got {type(got).__name__}).")
        names = set(got)
        unknown = sorted(str(n) for n in names if n not in _GRADIENT_NAMES)
        if unknown:
            return _fail("unknown_name", f"{', '.join(map(repr, unknown))} is not one of "
                         f"{', '.join(map(repr, _GRADIENT_NAMES))}.")
        if "dV" in names:
            return _fail("dv_scaled", "dV carries no factor: V enters only through O = PV, "
                         "and P is already the weights after the division, so dV = P^T dO.")
        if "dS" in names:
            return _fail("ds_scaled", "dS carries no factor: it is the gradient with respect to "
                         "the scaled scores S themselves; the factor appears one step further "
                         "back, where S = c QK^T is differentiated.")
        if names != {"dQ", "dK"}:
            return _fail("one_side", "S = c QK^T has the factor in front of a product of Q "
                         "and K, so differentiating by either one keeps it.")
        return _ok("dQ and dK carry 1/sqrt(d_k), from S = QK^T / sqrt(d_k); dV and dS do "
                   "not.")

    return _run(body)


def check_what_went_wrong(fn: Callable[[], Any]) -> CheckResult:
    """Lesson 13: which statement do its numbers support for the unscaled run at d_k 256?

    A: the batch's gradient on W_Q was smaller unscaled from the start; B: about half of
    the rows started near 0, and training freed most of them (far fewer stuck after it);
    C: about half started near 0, and training did not bring their share down (on the
    table's seeds more of the same held-out rows were stuck after it than at the start);
    D: Adam's steps on W_Q were larger unscaled; E: with cross-entropy on the scores as many
    rows start stuck. Each wrong letter is answered
    with the printed numbers that contradict it.

    Examples
    --------
    >>> check_what_went_wrong(lambda: "A").mistake
    'batch_gradient_vanished'
    """
    what = _name_of(fn, "what_went_wrong")

    def body() -> CheckResult:
        got = _answer_of(fn, what)
        if got not in ("A", "B", "C", "D", "E"):
            return _fail("wrong_type",
                         f'`{what}` should return "A", "B", "C", "D" or "E" (got {got!r}).')
        if got == "A":
            return _fail("batch_gradient_vanished", "look at the size of the batch's gradient "
                         "on W_Q that section 3 printed for d_k = 256: is the unscaled one "
                         "smaller than the scaled one?")
        if got == "B":
            return _fail("training_frees_them", "look at section 7: after 400 steps, what "
                         "share of the held-out rows is stuck unscaled at d_k = 256, and what "
                         "share of the same rows was stuck at the start?")
        if got == "D":
            return _fail("adam_steps", "look at the first step section 6 measured: how "
                         "does the size of Adam's step on W_Q unscaled compare with scaled? "
                         "And at which learning rate did the table train each head?")
        if got == "E":
            return _fail("loss_does_not_matter", "look at section 4: how many rows are "
                         "stuck with cross-entropy, against the output error?")
        return _ok("about half of the unscaled rows start near 0, most stuck on a wrong key, "
                   "and send almost nothing back through softmax, while the batch's gradient is "
                   "larger, carried by the rows that are not saturated; training does not "
                   "bring their share down: on the table's seeds more of the same held-out "
                   "rows are stuck after 400 steps than at the start (row by row it frees "
                   "some and sticks others). Adam's first step on W_Q is the same size, and "
                   "cross-entropy, whose gradient skips the Jacobian, leaves no row stuck.")

    return _run(body)
