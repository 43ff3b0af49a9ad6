"""The lessons' interactive explorers, one per term of the equation, testable without a browser.

Each builder returns an :class:`~course_lib.explore.explorer.Explorer`. Its view is a pure
function of its controls' values (``explorer.compute(**values)`` returns a
:class:`~course_lib.explore.explorer.View`), so a notebook cell or a test can set a control in
Python and read the result, and the sliders on the page show what the code set:

>>> from course_lib.explore.widgets import softmax_budget
>>> budget = softmax_budget()
>>> budget.set(sat=3.0)  # doctest: +ELLIPSIS
"Softmax turns sat's scaled scores 0.71, 0.71, 3.00 ... the largest is sat at 0.83."
>>> budget.controls["sat"].value, float(budget.numbers["weights"].sum().round(6))
(3.0, 1.0)

Public API (names are stable; lessons may rely on them)
-------------------------------------------------------
``Explorer``, ``View``
    See :mod:`course_lib.explore.explorer`: ``.controls``, ``.widget``, ``.view``,
    ``.description``, ``.numbers``, ``.values()``, ``.compute(**values)``,
    ``.set(**values) -> str``. Displaying an explorer shows its widget; its
    ``text/plain`` is the description, so a stored notebook output (and strict nbval)
    carries the numbers in words.
``scores_explorer(Q=None, K=None, tokens=None, *, token=None, vector="query")``
    Lesson 02. Controls ``token`` (Dropdown), ``vector`` ("query"/"key"), ``x0``, ``x1``
    (…up to ``x3``: the first components of the chosen vector, steps of 0.1). Shows the
    score table :math:`QK^T` as a heatmap with the moved row (or column) outlined, and for
    d_k = 2 the vectors as arrows. Numbers: ``scores`` (n × n), ``row``, ``vector``.
``scaling_explorer(*, d_k=64, scaled=False, n_queries=256, n_keys=16, seed=0)``
    Lesson 03. Controls ``d_k`` (2, 4, … 4096) and ``scaled`` (Checkbox). Shows histograms
    of q·k (on one fixed axis per d_k, so the scaling visibly narrows them) and of each
    row's largest weight, and the numbers ``qk_std``, ``median_max_weight``,
    ``median_entropy``, ``median_jacobian_norm``, ``median_query_gradient_norm``.
``temperature_explorer(scores_row=None, tokens=None, *, query=None, temperature=1.0)``
    Lesson 03. Control ``temperature``, one of :data:`TEMPERATURES` (0.1 … 32, including
    sqrt(d_k) for d_k = 1, 2, 4, … 1024). Numbers: ``weights``, ``max_weight``,
    ``entropy``, ``equivalent_d_k`` (= T², the d_k whose scaling this temperature is).
``softmax_budget(scores_row=None, tokens=None, *, query=None)``
    Lesson 04. One slider per token, named by the token (``the``, ``cat``, ``sat``),
    steps of 0.1 (one arrow key; the row's own scores are on the slider too). Numbers:
    ``scores``, ``weights``, ``sum``.
``blend_explorer(weights_row=None, values=None, tokens=None, *, query=None)``
    Lesson 05. Controls ``weight <token>`` (the weights themselves, steps of 0.01, always
    summing to 1: moving one shares the rest among the others in proportion), ``token``
    (whose value vector to move), ``vx``, ``vy``. Numbers: ``weights``, ``values``,
    ``output``, ``inside``.
``step_explorer(Q=None, K=None, V=None, tokens=None, *, token="sat", step="scores")``
    Lessons 01 and 06. Controls ``token`` (Dropdown: whose query row) and ``step``
    (ToggleButtons: ``"scores"``, ``"scaled"``, ``"softmax"``, ``"output"``). Shows the
    whole table at that step (scores, scaled scores, weights, or the outputs) with the
    token's row outlined. Numbers: ``step`` (1 … 4), ``table``, ``row``, ``d_k``.
``causal_mask_explorer(Q=None, K=None, tokens=None, *, masked=False)``
    Lesson 07. Control ``masked`` (Checkbox). Numbers: ``weights``, ``mask``.
``projection_explorer(*, angle=0.0, scale=1.0, tied=False)``
    Lesson 08. Controls ``angle`` (degrees, steps of 15), ``scale`` (0 … 3) turning and
    stretching W_Q, and ``tied`` (K = Q). Numbers: ``W_Q``, ``Q``, ``K``, ``scores``,
    ``weights``, ``symmetric``.
``heads_explorer(*, h=2, query="sat")``
    Lesson 09. Controls ``h`` (1, 2, 4 heads of d_model = 4) and ``query``. Numbers:
    ``weights`` (h, n, n), ``output``, ``d_k``, ``row``.
``model_heads_explorer(*, sentence=0, layer=0, head=0)``
    Lesson 11 (defined in :mod:`course_lib.real_model`). Controls ``sentence`` (Dropdown),
    ``layer`` (0 … 5), ``head`` (0 … 11): one head of all-MiniLM-L6-v2 on a shipped
    sentence. Numbers: ``weights``, ``tokens``, ``patterns``.
``order_explorer(*, order=None, positions=False)``
    Lesson 10. Controls ``order`` (Dropdown: 'the cat sat' in any of its 6 orders) and
    ``positions`` (Checkbox: add sinusoidal position vectors to the queries and keys).
    Shows the queries, the weights and the outputs, rows labelled by token. Numbers:
    ``inputs``, ``weights``, ``outputs``, ``reference`` (each token's output in the original
    order), ``max_change``.

The pictures come from :mod:`course_lib.explore.render`, their words from
:mod:`course_lib.explore.describe`; ``benchmarks/widget_latency.py`` measures one slider move
against ``ipywidgets.interact`` redrawing a matplotlib figure.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape as _escape
from typing import Any

import ipywidgets as W
import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..attention import (
    attention,
    attention_weights,
    causal_mask,
    row_entropy,
    scaled_scores,
    scores,
    softmax,
)
from ..errors import AttentionInputError
from ..examples import the_cat_sat
from ..experiments.scaling import D_KS, ScalingStats, scaling_stats
from ..heads import heads_example, multi_head_attention
from ..order import attention_in_order, sentence_orders
from ..projections import embedded_example, rotation_scale
from ..real_model.recorded import (
    model_heads_explorer,  # lesson 11: the explorer lives with its data
)
from .describe import (
    asymmetry,
    blend_takeaway,
    describe_blend,
    describe_heads,
    describe_heatmap,
    describe_histogram,
    describe_row,
    describe_softmax,
    format_number,
    heatmap_takeaway,
    inside_hull,
    looks_most,
    row_takeaway,
)
from .explorer import (
    Explorer,
    View,
    checkbox,
    choice_slider,
    dropdown,
    make_view,
    number_slider,
    toggle_buttons,
)
from .render import bars_svg, blend_svg, heatmap_html, histogram_svg, vectors_svg
from .style import BLUE, ORANGE, VERMILION, heatmap_range

__all__ = [
    "TEMPERATURES",
    "Explorer",
    "View",
    "blend_explorer",
    "causal_mask_explorer",
    "heads_explorer",
    "model_heads_explorer",
    "order_explorer",
    "projection_explorer",
    "scaling_explorer",
    "scores_explorer",
    "softmax_budget",
    "step_explorer",
    "temperature_explorer",
]

_ROW = '<div style="display:flex;flex-wrap:wrap;align-items:center;gap:8px">{}</div>'


def _vec(x: NDArray[np.float64]) -> str:
    return "[" + ", ".join(format_number(c, 2) for c in x) + "]"


# --------------------------------------------------------------------------------------
# shared input handling (private)
# --------------------------------------------------------------------------------------


def _example_or(
    Q: ArrayLike | None, K: ArrayLike | None, tokens: Sequence[str] | None
) -> tuple[NDArray[np.float64], NDArray[np.float64], list[str]]:
    if Q is None and K is None:
        ex = the_cat_sat()
        q, k = ex.Q, ex.K
        toks = list(tokens) if tokens is not None else list(ex.tokens)
    else:
        if Q is None or K is None:
            raise AttentionInputError("give both Q and K, or neither for 'the cat sat'")
        q = np.array(Q, dtype=np.float64)
        k = np.array(K, dtype=np.float64)
        scores(q, k)  # validates shapes with the library's own messages
        if q.ndim != 2 or q.shape[0] != k.shape[0]:
            raise AttentionInputError(
                f"Q and K must be (n, d_k) for one sequence of n tokens (got Q shape "
                f"{q.shape}, K shape {k.shape})"
            )
        toks = [str(t) for t in tokens] if tokens is not None else [
            f"token {i}" for i in range(q.shape[0])
        ]
    if len(toks) != q.shape[0]:
        raise AttentionInputError(
            f"tokens must name each of the {q.shape[0]} tokens (got {len(toks)})"
        )
    if len(set(toks)) != len(toks):
        raise AttentionInputError(f"tokens must be distinct to be chosen by name (got {toks})")
    return q, k, toks


def _row_or(
    row: ArrayLike | None, tokens: Sequence[str] | None, query: str | None, *,
    scaled: bool = False,
) -> tuple[NDArray[np.float64], list[str], str | None]:
    """``row`` checked, or the row of 'sat' in the worked example: its raw scores, or its
    scaled scores to two decimals (``scaled=True``), where a slider can stand exactly."""
    if row is None:
        ex = the_cat_sat()
        r = (scaled_scores(ex.Q, ex.K)[2].round(2) if scaled else scores(ex.Q, ex.K)[2])
        return r, list(ex.tokens), query if query is not None else "sat"
    r = np.asarray(row, dtype=np.float64)
    if r.ndim != 1 or r.size < 2 or not np.isfinite(r).all():
        raise AttentionInputError(
            f"scores_row must be one row of at least 2 finite numbers, shape (n,) "
            f"(got shape {r.shape})"
        )
    toks = [str(t) for t in tokens] if tokens is not None else [f"token {i}" for i in
                                                                 range(r.size)]
    if len(toks) != r.size:
        raise AttentionInputError(
            f"tokens must name each of the {r.size} entries (got {len(toks)})"
        )
    return r, toks, query


def _limit(values: ArrayLike, floor: float) -> float:
    """A slider's symmetric limit: at least ``floor``, room for 1.5 × the largest value."""
    return float(max(floor, math.ceil(float(np.abs(values).max()) * 1.5)))


# --------------------------------------------------------------------------------------
# lesson 02: the scores
# --------------------------------------------------------------------------------------


def scores_explorer(
    Q: ArrayLike | None = None,
    K: ArrayLike | None = None,
    tokens: Sequence[str] | None = None,
    *,
    token: str | None = None,
    vector: str = "query",
) -> Explorer:
    """Move one token's query or key vector and watch the score table :math:`QK^T` change.

    Parameters
    ----------
    Q, K : array_like, shape (n, d_k), optional
        Default: the 'the cat sat' example. Copied; the explorer edits its own copies.
    tokens : sequence of str, optional
    token : str, optional
        The token whose vector the sliders move (default: the last one).
    vector : {"query", "key"}
        Move the query (its row of scores changes) or the key (its column changes).

    Examples
    --------
    >>> ex = scores_explorer()
    >>> ex.numbers["row"]
    array([1., 1., 2.])
    >>> print(ex.set(x0=2.0))  # doctest: +ELLIPSIS
    sat's query is [2.00, 1.00]; its row of scores: 2.00 against the, 1.00 against cat,
    3.00 against sat. The largest is sat at 3.00. ...
    """
    q0, k0, toks = _example_or(Q, K, tokens)
    state = {"query": q0.copy(), "key": k0.copy()}
    d_k = q0.shape[1]
    n_dims = min(d_k, 4)
    if vector not in ("query", "key"):
        raise AttentionInputError(f"vector must be 'query' or 'key' (got {vector!r})")
    token = toks[-1] if token is None else token
    if token not in toks:
        raise AttentionInputError(f"token must be one of {toks} (got {token!r})")
    lim = _limit(np.vstack([q0, k0]), 3.0)
    i0 = toks.index(token)
    controls: dict[str, W.ValueWidget] = {
        "token": dropdown(toks, token, "token"),
        "vector": toggle_buttons(["query", "key"], vector, "move its"),
    }
    for d in range(n_dims):
        controls[f"x{d}"] = number_slider(state[vector][i0, d], -lim, lim, 0.1,
                                          f"{vector} component {d}")

    def compute(token: str, vector: str, **xs: float) -> View:
        i = toks.index(token)
        q, k = state["query"].copy(), state["key"].copy()
        moved = q if vector == "query" else k
        for d in range(n_dims):
            moved[i, d] = xs[f"x{d}"]
        s = scores(q, k)
        line = s[i] if vector == "query" else s[:, i]
        if vector == "query":
            row_text = describe_row(line, toks, kind="scores", query=token)
            row_text = row_text.replace(f"{token}'s scores:", "its row of scores:", 1)
            caption = row_takeaway(line, toks, kind="scores", query=token)
        else:
            row_text = (
                describe_row(line, toks, kind="scores")
                .replace(" against ", " from ")
                .replace("The row's scores:", f"its column (every query against {token}'s key):")
            )
            caption = f"Against {token}'s key, " + row_takeaway(
                line, toks, kind="scores").replace("Of these scores, ", "", 1)
        description = (f"{token}'s {vector} is {_vec(moved[i])}; {row_text} "
                       + describe_heatmap(s, toks, toks, kind="scores"))
        body = heatmap_html(s, toks, toks, kind="scores", description=description,
                            highlight_row=i if vector == "query" else None,
                            highlight_col=i if vector == "key" else None)
        if d_k == 2 and len(toks) <= 12:
            other, letter = (k, "k") if vector == "query" else (q, "q")
            arrows = vectors_svg(moved[i], f"{vector[0]}_{token}", other,
                                 [f"{letter}_{t}" for t in toks], lim=lim,
                                 description=row_text)
            body = _ROW.format(arrows + body)
        return make_view(body, description, caption,
                         {"scores": s, "row": line.copy(), "vector": moved[i].copy()})

    explorer: Explorer

    def on_change(changed: dict[str, Any]) -> None:
        c = explorer.controls
        i = toks.index(c["token"].value)
        which = c["vector"].value
        if "token" in changed or "vector" in changed:  # load the chosen vector
            for d in range(n_dims):
                c[f"x{d}"].description = f"{which} component {d}"
                if f"x{d}" not in changed:
                    explorer.put(f"x{d}", float(state[which][i, d]))
        for d in range(n_dims):
            state[which][i, d] = float(c[f"x{d}"].value)

    # the components start a row of their own: after token and "move its", a grid of three
    # columns put component 0 at the end of the first row and component 1 far below it
    explorer = Explorer(controls, compute, "QKᵀ: move one vector, watch its scores",
                        on_change, new_row=["x0"])
    return explorer


# --------------------------------------------------------------------------------------
# lesson 03: the scaling and the temperature
# --------------------------------------------------------------------------------------


def scaling_explorer(
    *,
    d_k: int = 64,
    scaled: bool = False,
    n_queries: int = 256,
    n_keys: int = 16,
    seed: int = 0,
) -> Explorer:
    """Pick d_k and toggle the 1/sqrt(d_k) scaling; see the scores spread and softmax saturate.

    The random queries and keys come from ``numpy.random.default_rng(seed)`` (see
    :func:`course_lib.experiments.scaling.scaling_stats`); results are cached per (d_k, scaled). The
    histogram of q·k keeps one x-axis per d_k (± 4 sqrt(d_k)), so ticking the scaling
    shows the scores shrink by sqrt(d_k).

    Examples
    --------
    >>> ex = scaling_explorer(d_k=4096)
    >>> round(ex.numbers["median_max_weight"], 2)
    1.0
    >>> ex.set(scaled=True)[:45]
    'd_k = 4096, scaled by 1/sqrt(d_k): std of q·k'
    >>> round(ex.numbers["median_max_weight"], 2)
    0.22
    """
    if d_k not in D_KS:
        raise AttentionInputError(f"d_k must be one of {list(D_KS)} (got {d_k!r})")
    cache: dict[tuple[int, bool], ScalingStats] = {}
    controls: dict[str, W.ValueWidget] = {
        "d_k": choice_slider([(str(d), d) for d in D_KS], d_k, "d_k"),
        "scaled": checkbox(scaled, "divide by sqrt(d_k)"),
    }

    def compute(d_k: int, scaled: bool) -> View:
        key = (int(d_k), bool(scaled))
        if key not in cache:
            cache[key] = scaling_stats(key[0], scale=key[1], n_queries=n_queries,
                                       n_keys=n_keys, seed=seed)
        st = cache[key]
        max_w = softmax(st.dots.reshape(n_queries, n_keys)).max(axis=-1)
        label = "q·k / sqrt(d_k)" if scaled else "q·k (unscaled)"
        h1 = describe_histogram(st.dots, f"Histogram of {label}")
        h2 = describe_histogram(max_w, "Histogram of each row's largest weight",
                                unit="weights")
        description = f"{st.summary()}. {h1}. {h2}."
        spread = max(4.0, 4 * math.sqrt(d_k))  # the same axis, scaled or not
        shape = ("nearly one-hot" if st.median_max_weight > 0.9 else
                 "spread over many keys" if st.median_max_weight < 0.4 else "peaked")
        caption = (f"d_k = {d_k}, {'scaled' if scaled else 'unscaled'}: scores spread with "
                   f"std {st.qk_std:.3g}, and softmax is {shape} (median largest weight "
                   f"{st.median_max_weight:.2f}).")
        body = (
            histogram_svg(st.dots, value_range=(-spread, spread),
                          colour=BLUE if scaled else VERMILION,
                          title=f"{label}: std {st.qk_std:.3g}", xlabel="score",
                          description=h1)
            + histogram_svg(max_w, value_range=(0.0, 1.0), colour=ORANGE,
                            title=f"largest weight per row: median {st.median_max_weight:.2f}",
                            xlabel="weight", description=h2)
        )
        cell = 'style="text-align:left;padding:1px 12px 1px 0"'
        table = (
            '<table style="font-size:var(--jp-content-font-size1, 14px);margin:4px 0">'
            f"<tr><th {cell}>std of q·k</th><td>{st.qk_std:.3g}</td></tr>"
            f"<tr><th {cell}>median max weight</th><td>{st.median_max_weight:.2f} "
            f"(even: {1 / n_keys:.3g}, one-hot: 1)</td></tr>"
            f"<tr><th {cell}>median row entropy</th><td>{st.median_entropy:.3g} nats "
            f"(even: {st.max_entropy:.2f}, one-hot: 0)</td></tr>"
            f"<tr><th {cell}>softmax-Jacobian size |dw/ds|</th>"
            f"<td>{st.median_jacobian_norm:.3g}</td></tr>"
            f"<tr><th {cell}>query gradient |dw/dq|</th>"
            f"<td>{st.median_query_gradient_norm:.3g}</td></tr></table>"
        )
        numbers = {
            "qk_std": st.qk_std,
            "median_max_weight": st.median_max_weight,
            "median_entropy": st.median_entropy,
            "median_jacobian_norm": st.median_jacobian_norm,
            "median_query_gradient_norm": st.median_query_gradient_norm,
        }
        return make_view(_ROW.format(body) + table, description, caption, numbers)

    return Explorer(controls, compute, "/ sqrt(d_k): why the scores are scaled")


#: The temperature slider's values: below 1 (sharper than the raw scores), then
#: T = sqrt(d_k) for d_k = 1, 2, 4, ... 1024 (the scaling of that d_k). Exact, so that a
#: value set in code is the value the slider shows.
TEMPERATURES: tuple[float, ...] = (0.1, 0.2, 0.25, 0.5, 0.75,
                                   *(math.sqrt(2**i) for i in range(11)))


def temperature_explorer(
    scores_row: ArrayLike | None = None,
    tokens: Sequence[str] | None = None,
    *,
    query: str | None = None,
    temperature: float = 1.0,
) -> Explorer:
    """A temperature slider on one row of scores: softmax(scores / T).

    Dividing scores by sqrt(d_k) is a softmax at temperature T = sqrt(d_k), so the slider
    stops at T = sqrt(d_k) for d_k = 1, 2, 4, … 1024 (and at a few T below 1), and the
    description names the d_k whose scaling the temperature is.

    Examples
    --------
    >>> ex = temperature_explorer()  # 'sat': raw scores [1, 1, 2]
    >>> ex.set(temperature=2 ** 0.5)  # doctest: +ELLIPSIS
    "At temperature T = 1.41 (the scaling 1/sqrt(d_k) for d_k = 2): sat's attention
    weights: 0.25 to the, 0.25 to cat, 0.50 to sat. ..."
    >>> ex.set(temperature=4)[:60], ex.controls["temperature"].label
    ('At temperature T = 4.00 (the scaling 1/sqrt(d_k) for d_k = 1', '4.00')
    """
    r, toks, query = _row_or(scores_row, tokens, query)
    options = [(format_number(t, 2), t) for t in TEMPERATURES]
    start = next((t for t in TEMPERATURES if math.isclose(t, temperature)), None)
    if start is None:
        raise AttentionInputError(f"temperature must be one of {[o for o, _ in options]} "
                                  f"(got {temperature!r})")
    controls: dict[str, W.ValueWidget] = {
        "temperature": choice_slider(options, start, "temperature T"),
    }

    def compute(temperature: float) -> View:
        w = softmax(r, temperature=temperature)
        ent = float(row_entropy(w))
        dk = temperature**2
        if temperature < 1:
            which = "below 1: sharper than the raw scores"
        elif round(dk) == 1:
            which = "d_k = 1: the raw scores"
        else:
            which = f"the scaling 1/sqrt(d_k) for d_k = {round(dk)}"
        description = (
            f"At temperature T = {format_number(temperature, 2)} ({which}): "
            + describe_row(w, toks, kind="weights", query=query)
            + f" Row entropy {ent:.2f} nats (even: {np.log(len(toks)):.2f})."
        )
        body = bars_svg(r, toks, colour=BLUE, title="scores",
                        description=describe_row(r, toks, kind="scores", query=query))
        body += bars_svg(w, toks, colour=ORANGE, lo=0.0, hi=1.0,
                         title=f"softmax(scores / {format_number(temperature, 2)})",
                         description=description)
        return make_view(_ROW.format(body), description,
                         f"T = {format_number(temperature, 2)}: "
                         + row_takeaway(w, toks, query=query),
                         {"weights": w, "max_weight": float(w.max()), "entropy": ent,
                          "equivalent_d_k": dk})

    return Explorer(controls, compute, "softmax temperature: T = sqrt(d_k)")


# --------------------------------------------------------------------------------------
# lesson 04: the softmax budget
# --------------------------------------------------------------------------------------


def softmax_budget(
    scores_row: ArrayLike | None = None,
    tokens: Sequence[str] | None = None,
    *,
    query: str | None = None,
) -> Explorer:
    """One slider per score; the row's weights are always positive and sum to 1.

    Examples
    --------
    >>> b = softmax_budget([0.0, 0.0], ["a", "b"])
    >>> b.numbers["weights"]
    array([0.5, 0.5])
    >>> print(b.set(a=5.0))  # doctest: +ELLIPSIS
    Softmax turns the scaled scores 5.00, 0.00 (for a, b) into weights 0.99, 0.01: The row's ...
    """
    r, toks, query = _row_or(scores_row, tokens, query, scaled=True)
    lim = _limit(r, 10.0)
    controls: dict[str, W.ValueWidget] = {
        # steps of 0.1 (an arrow key), each score's start value kept as it is
        t: number_slider(x, -lim, lim, 0.1, t, keep_start=True)
        for t, x in zip(toks, r, strict=True)
    }

    def compute(**values: float) -> View:
        s = np.array([values[t] for t in toks], dtype=np.float64)
        w = softmax(s)
        description = describe_softmax(s, w, toks, query=query, what="scaled scores")
        body = bars_svg(s, toks, colour=BLUE, title="scaled scores",
                        description=describe_row(s, toks, kind="scores", query=query))
        body += bars_svg(w, toks, colour=ORANGE, lo=0.0, hi=1.0,
                         title=f"weights: sum {w.sum():.2f}", description=description)
        return make_view(_ROW.format(body), description,
                         row_takeaway(w, toks, query=query),
                         {"scores": s, "weights": w, "sum": float(w.sum())})

    return Explorer(controls, compute, "softmax: a budget of 1 per row")


# --------------------------------------------------------------------------------------
# lesson 05: the blend
# --------------------------------------------------------------------------------------


def _hundredths(weights: ArrayLike, total: int = 100) -> NDArray[np.float64]:
    """Non-negative weights rounded to hundredths that add up to ``total`` hundredths.

    Largest remainders get the leftover hundredths; all zero means equal shares.

    Examples
    --------
    >>> _hundredths([0.2483, 0.2483, 0.5035]).tolist()
    [0.25, 0.25, 0.5]
    >>> _hundredths([1.0, 1.0, 1.0]).tolist()
    [0.34, 0.33, 0.33]
    """
    a = np.clip(np.asarray(weights, dtype=np.float64), 0.0, None)
    a = np.ones_like(a) if a.sum() <= 0 else a
    exact = a / a.sum() * total
    whole = np.floor(exact + 1e-9).astype(int)
    order = np.argsort(-(exact - whole), kind="stable")
    whole[order[: total - int(whole.sum())]] += 1
    return np.round(whole / 100.0, 2)


def blend_explorer(
    weights_row: ArrayLike | None = None,
    values: ArrayLike | None = None,
    tokens: Sequence[str] | None = None,
    *,
    query: str | None = None,
) -> Explorer:
    """Move the weights or a value vector; the output stays inside the values' triangle.

    The ``weight <token>`` sliders are the weights themselves, in steps of 0.01, and
    always sum to 1: moving one shares what is left among the others in proportion to
    their weights (a softmax row is a budget of 1). Setting several weights in code sets
    them together (scaled to sum to 1).

    Examples
    --------
    >>> ex = blend_explorer()  # 'sat' in 'the cat sat', its weights rounded to 0.01
    >>> ex.numbers["weights"], ex.numbers["output"]
    (array([0.25, 0.25, 0.5 ]), array([1.25, 1.5 ]))
    >>> ex.set(**{"weight the": 0.5, "weight cat": 0.5, "weight sat": 0.0})[:60]
    'The value vectors are the corners of a triangle: the [1.00, '
    >>> ex.numbers["output"]
    array([0.5, 1. ])
    >>> ex.set(**{"weight sat": 0.8})[-36:], ex.values()["weight the"]
    ('so the output is a weighted average.', 0.1)
    """
    if weights_row is None and values is None:
        ex = the_cat_sat()
        w0 = attention_weights(ex.Q, ex.K)[2]
        v0 = ex.V.copy()
        toks = list(tokens) if tokens is not None else list(ex.tokens)
        query = "sat" if query is None else query
    else:
        if weights_row is None or values is None:
            raise AttentionInputError("give both weights_row and values, or neither")
        w0 = np.asarray(weights_row, dtype=np.float64)
        v0 = np.array(values, dtype=np.float64)
        if w0.ndim != 1 or v0.shape != (w0.size, 2) or (w0 < 0).any():
            raise AttentionInputError(
                f"weights_row must be (n,) non-negative and values (n, 2) (got shapes "
                f"{w0.shape} and {v0.shape}{', negative weights' if (w0 < 0).any() else ''})"
            )
        toks = [str(t) for t in tokens] if tokens is not None else [
            f"token {i}" for i in range(w0.size)]
    if len(toks) != w0.size:
        raise AttentionInputError(f"tokens must name each of the {w0.size} values")
    state = {"values": v0.copy()}
    lim = _limit(v0, 3.0)
    names = [f"weight {t}" for t in toks]
    controls: dict[str, W.ValueWidget] = {
        n: number_slider(a, 0.0, 1.0, 0.01, n) for n, a in zip(names, _hundredths(w0),
                                                               strict=True)
    }
    controls["token"] = dropdown(toks, toks[-1], "move value of")
    controls["vx"] = number_slider(v0[-1, 0], -lim, lim, 0.1, "value dim 0")
    controls["vy"] = number_slider(v0[-1, 1], -lim, lim, 0.1, "value dim 1")

    def compute(token: str, vx: float, vy: float, **weights: float) -> View:
        w = np.array([weights[n] for n in names], dtype=np.float64)
        v = state["values"].copy()
        v[toks.index(token)] = [vx, vy]
        out = w @ v
        description = describe_blend(w, v, toks, query=query)
        return make_view(blend_svg(w, v, toks, description=description), description,
                         blend_takeaway(w, v, toks, query=query),
                         {"weights": w, "values": v, "output": out,
                          "inside": inside_hull(out, v)})

    explorer: Explorer

    def on_change(changed: dict[str, Any]) -> None:
        c = explorer.controls
        i = toks.index(c["token"].value)
        if "token" in changed:
            for name, x in zip(("vx", "vy"), state["values"][i], strict=True):
                if name not in changed:
                    explorer.put(name, float(x))
        state["values"][i] = [c["vx"].value, c["vy"].value]
        fixed = [n for n in names if n in changed]
        if not fixed:
            return
        if len(fixed) == len(names):  # all set together: scale them to sum to 1
            shares = _hundredths([c[n].value for n in names])
        else:  # the others share what is left, in proportion
            kept = _hundredths([c[n].value for n in fixed], 100) if sum(
                c[n].value for n in fixed) > 1 else np.array([c[n].value for n in fixed])
            rest = [n for n in names if n not in fixed]
            left = round(100 * (1 - float(kept.sum())))
            others = _hundredths([c[n].value for n in rest], left) if left > 0 else (
                np.zeros(len(rest)))
            by_name = dict(zip(fixed, kept, strict=True)) | dict(zip(rest, others,
                                                                     strict=True))
            shares = np.array([by_name[n] for n in names])
        for n, x in zip(names, shares, strict=True):
            explorer.put(n, float(x))

    explorer = Explorer(controls, compute, "· V: the output is a blend of the values",
                        on_change)
    return explorer


# --------------------------------------------------------------------------------------
# lesson 07: the causal mask
# --------------------------------------------------------------------------------------


def causal_mask_explorer(
    Q: ArrayLike | None = None,
    K: ArrayLike | None = None,
    tokens: Sequence[str] | None = None,
    *,
    masked: bool = False,
) -> Explorer:
    """Toggle a causal mask on the attention weights; masked rows still sum to 1.

    Both states share one colour scale, so a colour means the same weight in both.

    Examples
    --------
    >>> ex = causal_mask_explorer()
    >>> ex.numbers["weights"][0].round(2)
    array([0.4, 0.2, 0.4])
    >>> ex.set(masked=True)  # doctest: +ELLIPSIS
    'A 3 by 3 heatmap ... the attends 1.00 to the, cat masked, sat masked; ...'
    >>> ex.numbers["weights"][0]
    array([1., 0., 0.])
    """
    q, k, toks = _example_or(Q, K, tokens)
    m = causal_mask(q.shape[0])
    both = {False: attention_weights(q, k), True: attention_weights(q, k, mask=m)}
    lo, hi = heatmap_range(np.concatenate(list(both.values())), "weights")
    controls: dict[str, W.ValueWidget] = {
        "masked": checkbox(masked, "causal mask (−inf above the diagonal)"),
    }

    def compute(masked: bool) -> View:
        w = both[bool(masked)]
        mk = m if masked else None
        description = describe_heatmap(w, toks, toks, kind="weights", mask=mk)
        body = heatmap_html(w, toks, toks, kind="weights", vmin=lo, vmax=hi, mask=mk,
                            description=description)
        return make_view(body, description, heatmap_takeaway(w, toks, toks, mask=mk),
                         {"weights": w, "mask": m if masked else np.ones_like(m)})

    return Explorer(controls, compute, "causal mask: no looking ahead")


# --------------------------------------------------------------------------------------
# lessons 01 and 06: the whole equation, one step at a time
# --------------------------------------------------------------------------------------

#: The steps of :func:`step_explorer`, in order: (control value, button label).
STEPS = (
    ("scores", "1 · scores QKᵀ"),
    ("scaled", "2 · ÷ sqrt(d_k)"),
    ("softmax", "3 · softmax"),
    ("output", "4 · output · V"),
)


def step_explorer(
    Q: ArrayLike | None = None,
    K: ArrayLike | None = None,
    V: ArrayLike | None = None,
    tokens: Sequence[str] | None = None,
    *,
    token: str | None = None,
    step: str = "scores",
) -> Explorer:
    """Step through softmax(QK^T / sqrt(d_k)) V for one query row.

    Pick a token (whose query row to follow) and a step: the scores QKᵀ, the scores
    divided by sqrt(d_k), the softmax weights, or the output (the weights times V).

    Examples
    --------
    >>> ex = step_explorer()  # 'the cat sat', sat's row
    >>> print(ex.set(step="softmax"))  # doctest: +NORMALIZE_WHITESPACE
    Step 3 of 4, softmax: each row of scaled scores becomes weights that sum to 1.
    sat's attention weights: 0.25 to the, 0.25 to cat, 0.50 to sat. They sum to 1.00;
    the largest is sat at 0.50.
    >>> ex.numbers["row"].round(2)
    array([0.25, 0.25, 0.5 ])
    >>> ex.set(token="the", step="scores")[:60]
    'Step 1 of 4, scores QKᵀ: each query dotted with every key. t'
    """
    if Q is None and K is None and V is None:
        q, k, toks = _example_or(None, None, tokens)
        v = the_cat_sat().V.copy()
    else:
        if V is None:
            raise AttentionInputError("give Q, K and V together, or none for 'the cat sat'")
        q, k, toks = _example_or(Q, K, tokens)
        v = np.array(V, dtype=np.float64)
        if v.ndim != 2 or v.shape[0] != k.shape[0]:
            raise AttentionInputError(
                f"V must be (n_k, d_v) with one value per key, n_k = {k.shape[0]} "
                f"(got V shape {v.shape})"
            )
    token = toks[-1] if token is None else token
    steps = [name for name, _ in STEPS]
    if token not in toks:
        raise AttentionInputError(f"token must be one of {toks} (got {token!r})")
    if step not in steps:
        raise AttentionInputError(f"step must be one of {steps} (got {step!r})")
    d_k = int(q.shape[-1])
    out, w = attention(q, k, v)
    tables = {"scores": scores(q, k), "scaled": scaled_scores(q, k), "softmax": w,
              "output": out}
    dims = [f"dim {j}" for j in range(v.shape[1])]
    controls: dict[str, W.ValueWidget] = {
        "token": dropdown(toks, token, "query row"),
        "step": toggle_buttons([(label, name) for name, label in STEPS], step, "step"),
    }

    def compute(token: str, step: str) -> View:
        i = toks.index(token)
        n = steps.index(step) + 1
        table = tables[step]
        row = table[i]
        head = f"Step {n} of 4, "
        label = dict(STEPS)[step][4:]
        if step == "scores":
            description = (head + "scores QKᵀ: each query dotted with every key. "
                           f"{token}'s query is {_vec(q[i])}; "
                           + describe_row(row, toks, kind="scores", query=token))
            caption = row_takeaway(row, toks, kind="scores", query=token)
        elif step == "scaled":
            description = (
                head + f"scaled ÷ sqrt(d_k) = ÷ sqrt({d_k}) = ÷ {np.sqrt(d_k):.2f}: "
                f"{token}'s scores {', '.join(format_number(x) for x in tables['scores'][i])} "
                f"become {', '.join(format_number(x) for x in row)}. "
                + describe_row(row, toks, kind="scores", query=token))
            caption = row_takeaway(row, toks, kind="scores", query=token)
        elif step == "softmax":
            description = (head + "softmax: each row of scaled scores becomes weights that "
                           "sum to 1. " + describe_row(row, toks, kind="weights", query=token))
            caption = row_takeaway(row, toks, kind="weights", query=token)
        else:
            description = (head + f"output · V: {token}'s output is the value vectors mixed "
                           "with its weights. " + describe_blend(w[i], v, toks, query=token))
            caption = blend_takeaway(w[i], v, toks, query=token)
        kind = "weights" if step == "softmax" else "scores"
        body = heatmap_html(table, toks, dims if step == "output" else toks, kind=kind,
                            highlight_row=i, description=description)
        if step == "output" and v.shape[1] == 2:
            body += blend_svg(w[i], v, toks, description=description)
        else:
            weights_scale = step == "softmax"
            body += bars_svg(row, toks, colour=ORANGE if weights_scale else BLUE,
                             lo=0.0 if weights_scale else None,
                             hi=1.0 if weights_scale else None,
                             title=f"{token}'s row: {label}", description=description)
        return make_view(_ROW.format(body), description, f"Step {n} of 4, {label}: {caption}",
                         {"step": n, "table": table.copy(), "row": row.copy(), "d_k": d_k})

    return Explorer(controls, compute, "the whole equation, one step at a time",
                    wide=["step"])


# --------------------------------------------------------------------------------------
# lessons 08 and 09: where Q, K and V come from; many heads (issue 13)
# --------------------------------------------------------------------------------------



def _titled(title: str, picture: str) -> str:
    """A picture with a short bold title above it (lessons 08-10), in the page's font; the
    text colour is the page's own (no colour set: it follows the light and dark themes)."""
    return ('<div><div style="font-family:var(--jp-ui-font-family, sans-serif);'
            'font-size:12px;font-weight:bold;text-align:center;margin:4px 0 2px">'
            f"{_escape(title)}</div>{picture}</div>")


def projection_explorer(*, angle: float = 0.0, scale: float = 1.0,
                        tied: bool = False) -> Explorer:
    """Turn and stretch W_Q; watch the scores and weights of 'the cat sat' change (lesson 08).

    The queries are ``X (W_Q R)`` where ``R`` = :func:`course_lib.projections.rotation_scale`
    turns every query by ``angle`` degrees and stretches it by ``scale``; the keys are
    ``X W_K`` (or, with ``tied``, ``X W_Q R`` too, K = Q as in lessons 01-07). Controls:
    ``angle`` (−180 … 180 degrees, steps of 15), ``scale`` (0 … 3, steps of 0.25), ``tied``
    (Checkbox). Numbers: ``W_Q``, ``Q``, ``K``, ``scores``, ``weights``, ``symmetric``.

    Examples
    --------
    >>> ex = projection_explorer()
    >>> ex.numbers["weights"][2].round(2)  # sat's weights: most on cat
    array([0.25, 0.5 , 0.25])
    >>> ex.set(angle=90)[:70]
    'W_Q turned by 90° and scaled by 1.00: the queries are the [0.00, 1.00]'
    >>> ex.numbers["Q"]
    array([[ 0.,  1.],
           [-1.,  0.],
           [-1.,  1.]])
    >>> text = ex.set(tied=True)
    >>> bool(ex.numbers["symmetric"]), text[-60:]
    (True, ...)
    """
    base = embedded_example()
    toks = list(base.tokens)
    controls: dict[str, W.ValueWidget] = {
        "angle": number_slider(angle, -180.0, 180.0, 15.0, "turn W_Q by (degrees)",
                               decimals=0),
        "scale": number_slider(scale, 0.0, 3.0, 0.25, "stretch W_Q by"),
        "tied": checkbox(tied, "tie the keys: W_K = W_Q"),
    }
    lim = 4.5

    def compute(angle: float, scale: float, tied: bool) -> View:
        w_q = base.W_Q @ rotation_scale(angle, scale)
        Q = base.X @ w_q
        K = Q.copy() if tied else base.X @ base.W_K
        s = scores(Q, K)
        w = attention_weights(Q, K)
        queries = ", ".join(f"{t} {_vec(q)}" for t, q in zip(toks, Q, strict=True))
        keys = "the same (tied)" if tied else ", ".join(
            f"{t} {_vec(k)}" for t, k in zip(toks, K, strict=True))
        sym = asymmetry(s, toks)
        description = (f"W_Q turned by {angle:.0f}° and scaled by {scale:.2f}: the queries are "
                       f"{queries}; the keys are {keys}. {sym} "
                       + describe_heatmap(w, toks, toks, kind="weights"))
        caption = (("Scores symmetric" if sym.startswith("The table is symmetric")
                    else "Scores not symmetric") + "; "
                   + row_takeaway(w[-1], toks, query=toks[-1]))
        # keys that coincide share one arrow and one name (no names drawn over each other)
        moved_name, others, names = f"q_{toks[-1]}", [], []
        for t, k in zip(toks, K, strict=True):
            if np.allclose(k, Q[-1]):
                moved_name += f" = k_{t}"
            elif any(np.allclose(k, o) for o in others):
                j = next(j for j, o in enumerate(others) if np.allclose(k, o))
                names[j] += f" = k_{t}"
            else:
                others.append(k)
                names.append(f"k_{t}")
        arrows = vectors_svg(Q[-1], moved_name, np.array(others).reshape(-1, 2), names, lim=lim,
                             description=f"{toks[-1]}'s query {_vec(Q[-1])} drawn against "
                             f"the keys {keys}.")
        score_map = heatmap_html(s, toks, toks, kind="scores", highlight_row=len(toks) - 1,
                                 description=describe_heatmap(s, toks, toks, kind="scores"))
        weight_map = heatmap_html(w, toks, toks, kind="weights", highlight_row=len(toks) - 1,
                                  description=description)
        body = _ROW.format(arrows + _titled("scores QKᵀ", score_map)
                           + _titled("weights", weight_map))
        return make_view(body, description, caption,
                         {"W_Q": w_q, "Q": Q, "K": K, "scores": s, "weights": w,
                          "symmetric": bool(np.allclose(s, s.T))})

    return Explorer(controls, compute, "W_Q: turn and stretch the queries")


#: The head counts of :func:`heads_explorer` (d_model = 4): (button label, h).
HEAD_COUNTS = (("1 head, d_k = 4", 1), ("2 heads, d_k = 2", 2), ("4 heads, d_k = 1", 4))


def heads_explorer(*, h: int = 2, query: str = "sat") -> Explorer:
    """Split d_model = 4 into 1, 2 or 4 heads; see each head's map of weights (lesson 09).

    The same four matrices (:func:`course_lib.heads.heads_example`) cut into ``h`` heads.
    Controls: ``h`` (ToggleButtons 1, 2, 4) and ``query`` (Dropdown: whose row is ringed
    and described). Numbers: ``weights`` (h, n, n), ``output`` (n, 4), ``d_k``, ``row``
    (the query's row in every head, (h, n)).

    Examples
    --------
    >>> ex = heads_explorer()
    >>> ex.numbers["row"].round(2)  # sat in head 0, in head 1
    array([[0.25, 0.5 , 0.25],
           [0.67, 0.16, 0.16]])
    >>> ex.set(h=1)[:71]
    "1 head of d_k = 4. The weights of 'sat': head 0: 0.51 to 'the', 0.31 to"
    >>> _ = ex.set(h=2, query="the")
    >>> print(ex.view.caption)  # three weights shown as 0.33: a tie, said as one
    2 heads of d_k = 2: in head 0, 'the' spreads its weight evenly (0.33 to each); in head 1,
    'the' looks most at 'the' (0.67).
    """
    ex = heads_example()
    toks = list(ex.tokens)
    counts = [c for _, c in HEAD_COUNTS]
    if h not in counts:
        raise AttentionInputError(f"h must be one of {counts} (got {h!r})")
    if query not in toks:
        raise AttentionInputError(f"query must be one of {toks} (got {query!r})")
    controls: dict[str, W.ValueWidget] = {
        "h": toggle_buttons(list(HEAD_COUNTS), h, "split into"),
        "query": dropdown(toks, query, "whose row"),
    }
    d_model = ex.X.shape[1]

    def compute(h: int, query: str) -> View:
        out, w = multi_head_attention(ex.X, ex.W_Q, ex.W_K, ex.W_V, ex.W_O, h)
        i = toks.index(query)
        d_k = d_model // h
        rows = "; ".join(f"head {k}: " + ", ".join(
            f"{format_number(x)} to '{t}'" for x, t in zip(w[k, i], toks, strict=True))
            for k in range(h))
        head_word = "head" if h == 1 else "heads"
        description = (f"{h} {head_word} of d_k = {d_k}. The weights of '{query}': {rows}. "
                       + describe_heads(w, toks))
        caption = (f"{h} {head_word} of d_k = {d_k}: " + "; ".join(
            f"in head {k}, '{query}' {looks_most(w[k, i], toks)}" for k in range(h)) + ".")
        maps = "".join(
            _titled(f"head {k}: columns {k * d_k}–{(k + 1) * d_k - 1}" if d_k > 1
                    else f"head {k}: column {k}",
                    heatmap_html(w[k], toks, toks, kind="weights", highlight_row=i, vmin=0.0,
                                 vmax=1.0, description=f"Head {k}: " + describe_heatmap(
                                     w[k], toks, toks)))
            for k in range(h))
        # the group's name is the whole description; each table's is its own head
        group = (f'<div role="group" aria-label="{_escape(description, quote=True)}">'
                 + _ROW.format(maps) + "</div>")
        return make_view(group, description, caption,
                         {"weights": w, "output": out, "d_k": d_k, "row": w[:, i].copy()})

    return Explorer(controls, compute, "many heads: one map per head", wide=["h"])


# --------------------------------------------------------------------------------------
# lesson 10: word order (permutation equivariance, and positions that break it)
# --------------------------------------------------------------------------------------


def order_explorer(*, order: str | None = None, positions: bool = False) -> Explorer:
    """Shuffle 'the cat sat'; each token's output moves with it, unless positions are added.

    Each token keeps its own query, key and value rows (those of 'the cat sat') wherever it
    stands. Without positions, every token's output is the one it had in the original
    order, moved to its new place (permutation equivariance). Ticking ``positions`` adds
    the sinusoidal position vector of each place (:func:`course_lib.order.
    sinusoidal_positions`) to the queries and keys: now the outputs depend on the order.
    The colour scales are fixed across all orders, so a colour means the same number.

    Examples
    --------
    >>> ex = order_explorer()
    >>> ex.set(order="sat cat the")[:57]
    "Word order 'sat cat the', no position vectors. Each token"
    >>> ex.numbers["outputs"][0].round(2), ex.numbers["max_change"] < 1e-12
    (array([1.26, 1.5 ]), True)
    >>> ex.set(positions=True)[-62:]
    'largest change 1.03: the order now changes what a token reads.'
    """
    example = the_cat_sat()
    toks = list(example.tokens)
    d_k = example.d_k
    orders = sentence_orders(toks)
    order = orders[0] if order is None else order
    if order not in orders:
        raise AttentionInputError(f"order must be one of {orders} (got {order!r})")
    dims = [f"dim {j}" for j in range(d_k)]

    def run(sentence: str, with_positions: bool) -> tuple[NDArray[np.float64], ...]:
        return attention_in_order(sentence.split(), positions=with_positions)

    every = [run(s, p) for s in orders for p in (False, True)]
    in_range = (min(float(r[0].min()) for r in every), max(float(r[0].max()) for r in every))
    out_range = (min(float(r[2].min()) for r in every), max(float(r[2].max()) for r in every))
    controls: dict[str, W.ValueWidget] = {
        "order": dropdown(orders, order, "word order"),
        "positions": checkbox(positions, "add position vectors"),
    }

    def compute(order: str, positions: bool) -> View:
        words = order.split()
        q, w, out = run(order, bool(positions))
        _, _, first = run(orders[0], bool(positions))
        reference = first[[toks.index(t) for t in words]]  # each token's original output
        change = np.abs(out - reference).max(axis=1)
        pos = "with position vectors" if positions else "no position vectors"
        what = "query (= key) plus its place's position vector" if positions else (
            "query (= key)")
        rows = [f"{t} {_vec(x)}" for t, x in zip(words, q, strict=True)]
        outs = [f"{t} {_vec(x)}" for t, x in zip(words, out, strict=True)]
        description = (f"Word order '{order}', {pos}. Each token's {what}: "
                       f"{', '.join(rows)}. Outputs: {', '.join(outs)}. ")
        if order == orders[0]:
            verdict = ("This is the original order; pick another to compare each token's "
                       "output with this one.")
        elif change.max() < 1e-9:
            verdict = (f"Every token's output is the one it had in '{orders[0]}', only moved "
                       "to its new place: attention is permutation-equivariant.")
        else:
            moved = [f"{t} {_vec(a)} instead of {_vec(b)}" for t, a, b, c in
                     zip(words, out, reference, change, strict=True) if c >= 0.005]
            verdict = (f"With positions, the outputs depend on the order: {', '.join(moved)} "
                       f"(in '{orders[0]}'); largest change {change.max():.2f}: the order now "
                       "changes what a token reads.")
        description += verdict
        body = (
            _titled("queries (= keys)" + (" + positions" if positions else ""),
                    heatmap_html(q, words, dims, kind="scores", vmin=in_range[0],
                                 vmax=in_range[1],
                                 description=f"Queries (= keys), {pos}: {', '.join(rows)}."))
            + _titled("attention weights",
                      heatmap_html(w, words, words, kind="weights", vmin=0.0, vmax=1.0,
                                   description=describe_heatmap(w, words, words,
                                                                kind="weights")))
            + _titled("outputs", heatmap_html(out, words, dims, kind="scores",
                                              vmin=out_range[0], vmax=out_range[1],
                                              description=description))
        )
        if order == orders[0]:
            caption = "The original order: each output row belongs to the token on its left."
        elif change.max() < 1e-9:
            caption = "Each output moved with its token: the same numbers, in the new order."
        else:
            caption = (f"With positions, the same tokens get different outputs in this order "
                       f"(largest change {change.max():.2f}).")
        return make_view(_ROW.format(body), description, caption,
                         {"inputs": q, "weights": w, "outputs": out, "reference": reference,
                          "max_change": float(change.max())})

    return Explorer(controls, compute, "word order: shuffle the tokens, watch the outputs")
