"""How long does one slider move take: our explorers versus ``ipywidgets.interact`` + matplotlib?

Run:  .venv/bin/python benchmarks/widget_latency.py [--rounds 25]
      .venv/bin/python benchmarks/widget_latency.py --smoke   # one round of each, no warm-up

One *update* is everything between the kernel receiving a slider's new value and the
bytes the browser receives being ready:

* ours (``course_lib.explore.widgets``): the slider's comm ``update`` message is handled as in a
  kernel (``Widget._handle_msg``), the explorer recomputes and sets its ``HTML.value``,
  and every comm message the widgets send back (the echo of the slider value, the new
  HTML) is serialised to JSON bytes.
* baseline: the common notebook pattern, ``ipywidgets.interactive`` around a function that
  draws the figure with pyplot (``imshow`` with the values written in the cells, or
  ``bar``/``hist``) under the inline backend: the same comm message arrives,
  ``interactive.update`` clears the output, the function redraws the whole figure, the
  inline backend renders it to PNG, and the ``clear_output``/``display_data`` messages
  are serialised to JSON bytes.

Both run in this one process, interleaved round by round so machine noise hits both
alike, and the script prints medians (the machine is shared and noisy) and the ratio.
Goal (issue 3): ours at least 5x faster, under 50 ms for the 3-token example and under
100 ms at 64 tokens.
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

import comm
import numpy as np
from comm.base_comm import BaseComm

SENT: list[int] = []


class RecordingComm(BaseComm):
    """A comm that serialises what it would send to the browser and counts the bytes."""

    def publish_msg(self, msg_type: str, data: Any = None, metadata: Any = None,
                    buffers: Any = None, **keys: Any) -> None:
        payload = json.dumps({"msg_type": msg_type, "content": {"comm_id": self.comm_id,
                                                                "data": data},
                              "metadata": metadata or {}}).encode()
        SENT.append(len(payload) + sum(len(b) for b in buffers or []))


comm.create_comm = RecordingComm  # must happen before any widget is created

import ipywidgets as W  # noqa: E402  (after the comm factory is replaced)
import matplotlib.pyplot as plt  # noqa: E402
from IPython.core.interactiveshell import InteractiveShell  # noqa: E402
from IPython.utils.capture import capture_output  # noqa: E402

from course_lib import attention_weights, causal_mask, scores, softmax, the_cat_sat  # noqa: E402
from course_lib.experiments.scaling import scaling_stats  # noqa: E402
from course_lib.explore.widgets import (  # noqa: E402
    blend_explorer,
    causal_mask_explorer,
    scaling_explorer,
    scores_explorer,
    softmax_budget,
    temperature_explorer,
)


def move(slider: W.Widget, value: Any) -> None:
    """Deliver a slider move the way the browser does: a comm 'update' message."""
    if isinstance(slider, W.SelectionSlider):  # the browser sends the index, not the value
        values = [o[1] if isinstance(o, tuple) else o for o in slider.options]
        state = {"index": values.index(value)}
    else:
        state = {"value": value}
    slider._handle_msg({"content": {"data": {"method": "update", "state": state,
                                             "buffer_paths": []}}, "buffers": []})


def time_ours(slider: W.Widget, value: Any) -> tuple[float, int]:
    SENT.clear()
    t0 = time.perf_counter()
    move(slider, value)
    return time.perf_counter() - t0, sum(SENT)


def time_baseline(slider: W.Widget, value: Any) -> tuple[float, int]:
    SENT.clear()
    t0 = time.perf_counter()
    with capture_output() as cap:
        move(slider, value)
    sent = [json.dumps({"msg_type": "display_data", "content": {"data": o.data,
                                                                "metadata": o.metadata}})
            for o in cap.outputs]
    sent.append(json.dumps({"msg_type": "clear_output", "content": {"wait": True}}))
    elapsed = time.perf_counter() - t0
    return elapsed, sum(len(s.encode()) for s in sent) + sum(SENT)


# --- the baseline figures: what a notebook author typically writes ----------------------


def heatmap_baseline(values_of: Callable[..., tuple[np.ndarray, list[str]]], **sliders: Any
                     ) -> W.interactive:
    def draw(**kw: float) -> None:
        v, labels = values_of(**kw)
        fig, ax = plt.subplots(figsize=(5, 4))
        im = ax.imshow(v, cmap="magma")
        fig.colorbar(im, ax=ax)
        ax.set_xticks(range(len(labels)), labels)
        ax.set_yticks(range(len(labels)), labels)
        if len(labels) <= 12:
            for i in range(v.shape[0]):
                for j in range(v.shape[1]):
                    ax.text(j, i, f"{v[i, j]:.2f}", ha="center", va="center", color="w")
        plt.show()

    return W.interactive(draw, **sliders)


def bars_baseline(tokens: list[str], **sliders: Any) -> W.interactive:
    def draw(**kw: float) -> None:
        s = np.array([kw[t] for t in tokens])
        _fig, (a1, a2) = plt.subplots(1, 2, figsize=(8, 3))
        a1.bar(tokens, s)
        a2.bar(tokens, softmax(s))
        a2.set_ylim(0, 1)
        plt.show()

    return W.interactive(draw, **sliders)


def hist_baseline(cached: bool = True, **sliders: Any) -> W.interactive:
    # cached like ours by default, so that only the drawing differs
    stats = functools.cache(scaling_stats) if cached else scaling_stats

    def draw(d_k: int, scaled: bool) -> None:
        st = stats(d_k, scale=scaled)
        _fig, (a1, a2) = plt.subplots(1, 2, figsize=(8, 3))
        a1.hist(st.dots, bins=40)
        a2.hist(softmax(st.dots.reshape(256, 16)).max(axis=-1), bins=40, range=(0, 1))
        plt.title(st.summary()[:40])
        plt.show()

    return W.interactive(draw, **sliders)


def cases() -> list[tuple[str, W.Widget, list[Any], W.Widget | None, list[Any]]]:
    """(name, our slider, values, baseline slider or None, values)."""
    ex = the_cat_sat()
    toks = list(ex.tokens)
    rng = np.random.default_rng(0)
    q64 = rng.normal(size=(64, 2))
    toks64 = [f"t{i}" for i in range(64)]
    xs = [float(x) for x in np.linspace(-2, 2, 9)]

    def sat_scores(x0: float, q: np.ndarray = ex.Q, k: np.ndarray = ex.K,
                   labels: list[str] = toks) -> tuple[np.ndarray, list[str]]:
        q = q.copy()
        q[-1, 0] = x0
        return scores(q, k), labels

    out = []
    ours3 = scores_explorer()
    base3 = heatmap_baseline(sat_scores, x0=W.FloatSlider(value=1.0, min=-3, max=3))
    out.append(("scores heatmap, 3 tokens", ours3.controls["x0"], xs, base3.children[0], xs))

    ours64 = scores_explorer(q64, q64.copy())
    base64 = heatmap_baseline(
        lambda x0: sat_scores(x0, q64, q64, toks64),
        x0=W.FloatSlider(value=1.0, min=-3, max=3),
    )
    out.append(("scores heatmap, 64 tokens", ours64.controls["x0"], xs, base64.children[0],
                xs))

    mask_ours = causal_mask_explorer()
    mask_base = heatmap_baseline(
        lambda masked: (attention_weights(ex.Q, ex.K, mask=causal_mask(3) if masked else None),
                        toks),
        masked=W.Checkbox(value=False),
    )
    out.append(("causal mask toggle, 3 tokens", mask_ours.controls["masked"], [True, False],
                mask_base.children[0], [True, False]))

    budget = softmax_budget()
    budget_base = bars_baseline(toks, **{t: W.FloatSlider(value=1.0, min=-10, max=10)
                                         for t in toks})
    out.append(("softmax budget bars", budget.controls["sat"], xs, budget_base.children[2], xs))

    scal = scaling_explorer(d_k=64)
    scal_base = hist_baseline(d_k=W.SelectionSlider(options=[2, 64, 4096], value=64),
                              scaled=W.Checkbox(value=False))
    out.append(("scaling histograms (d_k 64 <-> 4096)", scal.controls["d_k"], [4096, 64],
                scal_base.children[0], [4096, 64]))

    temp = temperature_explorer()
    out.append(("temperature bars", temp.controls["temperature"], [0.5, 1.0, 2.0], None, []))
    blend = blend_explorer()
    out.append(("blend triangle", blend.controls["weight the"], [0.2, 0.5, 0.8], None, []))
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=25, help="updates timed per case")
    parser.add_argument("--smoke", action="store_true",
                        help="one timed round of each case, no warm-up: a check that it runs "
                        "(the suite's)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.rounds = 1

    class Shell(InteractiveShell):
        def enable_gui(self, gui: Any = None) -> None:  # no event loop: the inline backend
            pass

    shell = Shell.instance()
    shell.enable_matplotlib("inline")  # the notebook default: figures -> PNG on display

    print(f"{'one update (median of ' + str(args.rounds) + ')':42s} {'ours':>9s} {'bytes':>8s}"
          f" {'baseline':>9s} {'bytes':>8s} {'speed-up':>8s}")
    with capture_output():  # interactive() draws once when built; keep that off the screen
        all_cases = cases()
    warm_up = 0 if args.smoke else 2
    for name, ours, ours_values, base, base_values in all_cases:
        t_ours, t_base, b_ours, b_base = [], [], [], []
        for r in range(args.rounds + warm_up):  # the warm-up rounds are not counted
            t, b = time_ours(ours, ours_values[r % len(ours_values)])
            if r >= warm_up:
                t_ours.append(t)
                b_ours.append(b)
            if base is not None:
                t, b = time_baseline(base, base_values[r % len(base_values)])
                if r >= warm_up:
                    t_base.append(t)
                    b_base.append(b)
        mo = statistics.median(t_ours) * 1e3
        line = f"{name:42s} {mo:7.1f}ms {statistics.median(b_ours):8.0f}"
        if base is not None:
            mb = statistics.median(t_base) * 1e3
            line += f" {mb:7.1f}ms {statistics.median(b_base):8.0f} {mb / mo:7.1f}x"
        print(line, flush=True)
        plt.close("all")

    # The scaling explorer caches its statistics per (d_k, scaled); the first visit of a
    # d_k has to draw the random vectors and measure. Time that too, against a baseline
    # that recomputes every time.
    t_ours, t_base = [], []
    rounds = 1 if args.smoke else max(3, args.rounds // 3)
    for _ in range(rounds):
        with capture_output():
            fresh = scaling_explorer(d_k=64)
            base = hist_baseline(d_k=W.SelectionSlider(options=[2, 64, 4096], value=64),
                                 scaled=W.Checkbox(value=False), cached=False)
        t_ours.append(time_ours(fresh.controls["d_k"], 4096)[0])
        t_base.append(time_baseline(base.children[0], 4096)[0])
        plt.close("all")
    mo, mb = statistics.median(t_ours) * 1e3, statistics.median(t_base) * 1e3
    print(f"{'scaling, first visit of d_k=4096 (median of ' + str(rounds) + ')':42s} "
          f"{mo:7.1f}ms {'':8s} {mb:7.1f}ms {'':8s} {mb / mo:7.1f}x")


if __name__ == "__main__":
    main()
