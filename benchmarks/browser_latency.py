"""Latency in the browser: from a student's key press (or click) on a widget to the new output.

Starts its own JupyterLab (127.0.0.1, free port, token, throw-away settings) on a notebook it
writes to a temporary folder, opens it in Debian's Chromium (/usr/bin/chromium) through
Playwright, runs all cells, then moves each widget ``--moves`` times (default 20). Each move
is timed inside the page: from the keydown/click/change event (a capture listener) to the
first DOM mutation after which the widget's cell shows a different output (text, image,
SVG), both read from ``performance.now()``. Prints the median, 10th and 90th percentile per
widget kind. A measurement, not a test: nothing here asserts a speed.

Run:  .venv/bin/python benchmarks/browser_latency.py [--moves 20]
      .venv/bin/python benchmarks/browser_latency.py --smoke   # one widget per kind, 2 moves
Needs what tests/browser needs (see docs/development.md, "The test suite").
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "browser"))

import nbformat  # noqa: E402
from labdriver import (  # noqa: E402
    CONTROL_SELECTOR,
    LabServer,
    launch_chromium,
    missing_requirements,
    open_notebook,
    page_problems,
    run_all_cells,
    wait_kernel_idle,
)
from nbformat.v4 import new_code_cell, new_notebook  # noqa: E402
from widget_notebooks import DROPDOWN, SETUP, SLIDER  # noqa: E402

# (label, kind, cell source). Each cell shows exactly one widget under test.
CASES: list[tuple[str, str, str]] = [
    ("IntSlider -> Output text (observe)", "slider",
     SETUP + "\n\n" + SLIDER.format(trait="value")),
    ("FloatSlider -> matplotlib figure (interact)", "slider", '''import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np


@widgets.interact(t=widgets.FloatSlider(value=1.0, min=0.1, max=3.0, step=0.1))
def curve(t=1.0):
    x = np.linspace(-3, 3, 200)
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot(x, np.exp(x / t) / np.exp(x / t).sum())
    plt.show()'''),
    ("Dropdown -> matplotlib figure (interact)", "dropdown", SETUP + "\n\n" + DROPDOWN),
]

# The course's own explorers (course_lib.explore.widgets), when that module exists.
COURSE_CASES: list[tuple[str, str, str]] = [
    ("scores_explorer slider -> HTML heatmap", "slider",
     "from course_lib.explore import widgets as cw\n\ncw.scores_explorer()"),
    ("scores_explorer dropdown (token) -> HTML heatmap", "dropdown",
     "from course_lib.explore import widgets as cw\n\ncw.scores_explorer()"),
    ("scores_explorer toggle (query/key) -> HTML heatmap", "toggle",
     "from course_lib.explore import widgets as cw\n\ncw.scores_explorer()"),
    ("temperature_explorer slider -> HTML bars", "slider",
     "from course_lib.explore import widgets as cw\n\ncw.temperature_explorer()"),
    ("softmax_budget slider -> HTML bars", "slider",
     "from course_lib.explore import widgets as cw\n\ncw.softmax_budget()"),
    ("blend_explorer slider -> SVG triangle", "slider",
     "from course_lib.explore import widgets as cw\n\ncw.blend_explorer()"),
    ("scaling_explorer d_k slider (cached after 1st) -> SVG", "slider",
     "from course_lib.explore import widgets as cw\n\ncw.scaling_explorer()"),
    ("scaling_explorer checkbox (cached after 1st) -> SVG", "checkbox",
     "from course_lib.explore import widgets as cw\n\ncw.scaling_explorer()"),
    ("causal_mask_explorer checkbox -> HTML heatmaps", "checkbox",
     "from course_lib.explore import widgets as cw\n\ncw.causal_mask_explorer()"),
]

SELECTORS = {
    "slider": ".widget-slider .noUi-handle",
    "dropdown": ".widget-dropdown select",
    "toggle": ".widget-toggle-buttons",
    "checkbox": ".widget-checkbox input[type=checkbox]",
}

# Arm: remember the time of the next input event, and resolve window.__changed with the time
# of the first mutation after which the cell's output (controls cut out) differs.
ARM_JS = """([cellIndex, controlSelector]) => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  const cell = panel.querySelectorAll('.jp-Cell')[cellIndex];
  const area = cell.querySelector('.jp-OutputArea');
  const sig = () => {
    const copy = area.cloneNode(true);
    copy.querySelectorAll(controlSelector).forEach(el => el.remove());
    const parts = [copy.textContent];
    copy.querySelectorAll('img').forEach(img => parts.push(img.getAttribute('src')));
    copy.querySelectorAll('svg').forEach(svg => parts.push(svg.outerHTML));
    return parts.join('|');
  };
  const before = sig();
  window.__t0 = null;
  const mark = () => { if (window.__t0 === null) window.__t0 = performance.now(); };
  for (const type of ['keydown', 'mousedown', 'change']) {
    document.addEventListener(type, mark, {capture: true, once: true});
  }
  window.__changed = new Promise(resolve => {
    const obs = new MutationObserver(() => {
      if (sig() !== before) { obs.disconnect(); resolve(performance.now()); }
    });
    obs.observe(area, {subtree: true, childList: true, characterData: true, attributes: true});
    setTimeout(() => { obs.disconnect(); resolve(null); }, 15000);
  });
  return true;
}"""


def _notebook(cases: list[tuple[str, str, str]]) -> nbformat.NotebookNode:
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)",
                                 "language": "python"}
    nb.cells = [new_code_cell(src) for _, _, src in cases]
    return nb


def _move(page: Any, cell: Any, kind: str, i: int) -> None:
    if kind == "slider":
        cell.locator(SELECTORS["slider"]).first.focus()
        page.keyboard.press("ArrowRight" if i % 2 == 0 else "ArrowLeft")
    elif kind == "dropdown":
        select = cell.locator(SELECTORS["dropdown"]).first
        options = select.locator("option").evaluate_all("os => os.map(o => o.value)")
        current = select.input_value()
        select.select_option(next(o for o in options if o != current))
    elif kind == "checkbox":
        cell.locator(SELECTORS["checkbox"]).first.click()
    else:
        cell.locator(f"{SELECTORS['toggle']} .widget-toggle-button:not(.mod-active)").first.click()


def measure(page: Any, cell_index: int, kind: str, moves: int) -> list[float]:
    """Milliseconds from input event to changed output, one figure per move."""
    cell = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell").nth(cell_index)
    cell.scroll_into_view_if_needed()
    times: list[float] = []
    for i in range(moves + 1):  # the first move warms up and is not counted
        wait_kernel_idle(page)
        page.evaluate(ARM_JS, [cell_index, CONTROL_SELECTOR])
        _move(page, cell, kind, i)
        done = page.evaluate("() => window.__changed")
        t0 = page.evaluate("() => window.__t0")
        if done is None or t0 is None:
            raise RuntimeError(f"move {i} of the {kind} in cell {cell_index} changed no output")
        if i:
            times.append(done - t0)
    return times


def smoke_cases(cases: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """The first case of each kind of widget (each kind is moved its own way)."""
    firsts: dict[str, tuple[str, str, str]] = {}
    for case in cases:
        firsts.setdefault(case[1], case)
    return list(firsts.values())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=20, help="timed moves per widget (>= 20)")
    parser.add_argument("--smoke", action="store_true",
                        help="the first widget of each kind, 2 timed moves: a check that it "
                        "runs (the suite's)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.moves = 2  # the percentiles need two
    missing = missing_requirements()
    if missing:
        print(missing, file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    cases = list(CASES)
    try:
        import course_lib.explore.widgets  # noqa: F401

        cases += COURSE_CASES
    except ImportError:
        print("(course_lib.explore.widgets not found: timing the generic widgets only)")
    if args.smoke:  # the course's explorers first: they are what a smoke run must keep working
        cases = smoke_cases(cases[len(CASES):] + cases[:len(CASES)])
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="browser-latency-") as tmp:
        root, scratch = Path(tmp) / "root", Path(tmp) / "scratch"
        root.mkdir()
        scratch.mkdir()
        nbformat.write(_notebook(cases), root / "latency.ipynb")
        with LabServer(root, scratch) as server, sync_playwright() as playwright:
            browser = launch_chromium(playwright)
            try:
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                open_notebook(page, server, "latency.ipynb", "latency")
                run_all_cells(page)
                problems = page_problems(page)
                if problems:
                    print("\n".join(problems), file=sys.stderr)
                    return 1
                rows = []
                for index, (label, kind, _) in enumerate(cases):
                    ms = measure(page, index, kind, args.moves)
                    q = statistics.quantiles(ms, n=10, method="inclusive")  # no extrapolation
                    rows.append((kind, label, len(ms), statistics.median(ms), q[0], q[-1]))
            finally:
                browser.close()
    print("Key press / click -> updated output, in Chromium "
          f"(JupyterLab, {args.moves} timed moves each after one warm-up):")
    print(f"{'kind':9} {'widget':54} {'n':>3} {'median ms':>10} {'p10':>7} {'p90':>7}")
    for kind, label, n, med, p10, p90 in rows:
        print(f"{kind:9} {label:54} {n:3d} {med:10.1f} {p10:7.1f} {p90:7.1f}")
    for kind in sorted({r[0] for r in rows}):
        meds = [r[3] for r in rows if r[0] == kind]
        print(f"median of medians, {kind}: {statistics.median(meds):.1f} ms")
    print(f"(whole run {time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
