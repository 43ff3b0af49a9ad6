"""The offline site in the browser: its size, how soon a lesson shows output, how long it runs.

Run:  .venv/bin/python benchmarks/site_load.py [--site _site] [--repeat 3] [--lesson NAME]
      .venv/bin/python benchmarks/site_load.py --site NEW --compare OLD [--repeat 5]
      .venv/bin/python benchmarks/site_load.py --smoke [--site _site]

Builds the site (course_site, into a temporary folder) unless ``--site`` names a built one,
serves it on 127.0.0.1 and opens lessons in Debian's Chromium (headless, a profile folder of
its own, every request not for 127.0.0.1 sent to a proxy that refuses it and counts it: the
browser's own services ask Google's servers too, so the hosts are printed). No request is
intercepted: Playwright's interception (a route) turns the browser's cache off, and with it
V8's cache of compiled WebAssembly and scripts, which a student's browser keeps. Per visit:

* ``kernel ready``: from opening the lesson's address to the first time the status bar reads
  Idle or Busy (the kernel has started; a notebook of Markdown only has none and reads No
  Kernel);
* ``first output``: from opening the lesson's address to the first code cell's result (its
  new execution number), with Run > Run All Cells pressed as soon as the notebook shows, as
  a student would (the kernel starts meanwhile; the first cell imports course_lib, numpy
  and ipywidgets; matplotlib comes with the lesson's first figure);
* ``every cell run`` (with ``--compare``): from opening the address to the last cell's
  result, in the same visits;
* ``run all`` (every lesson): with the kernel idle first (``ready``: from opening the
  address), from pressing Run All to the last cell's result.

*Cold* is a first visit: a new browser profile, nothing cached. *Warm* is a second visit:
the browser is closed and started again on the same profile (its disk cache and compiled
WebAssembly kept), as on a student's next day. Medians over ``--repeat`` visits of one
lesson, then one warm visit of every lesson for its run time. Goals (issue 14): site
<= 60 MB, warm first output < 10 s. A measurement, not a test: nothing is asserted. The
machine's load average (1 minute) is printed with each visit: on 2 shared cores a busy
machine doubles these times, so compare two builds in one run: ``--compare`` another built
site alternates the two (cold and warm visit of one, then of the other, the order flipped
each round) and gives both medians, without the per-lesson table.

``--smoke`` (seconds, run by the test suite: tests/site/test_site_load_smoke.py) checks that
the benchmark still works and prints the same kinds of figures from as little as it can: the
site's size, then one cold visit of the contents page (no kernel) and one cold visit of a
lesson until its kernel is ready, each once, without Run All.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "site"))
sys.path.insert(0, str(HERE.parent / "tests" / "browser"))
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "scripts"))

import lesson_index  # noqa: E402  (scripts/, on the path above)
from labdriver import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    missing_requirements,
    wait_kernel_idle,
    wait_kernel_settled,
)
from netguard import SITE_BROWSER_ARGS, OutsideGuard  # noqa: E402
from sitedriver import kernel_free, lesson_url, site_lessons  # noqa: E402

from course_site.build import build  # noqa: E402
from course_site.serve import SiteServer  # noqa: E402

GOAL_SIZE_MB = 60.0
GOAL_WARM_FIRST_S = 10.0

# Watch the first non-empty code cell's prompt (looked up afresh every 20 ms: JupyterLab may
# redraw it): when Run All queues it ([*]) and when it gets its new number. The stored
# notebook already shows numbers, so only a change counts. False for a notebook without code,
# null while its code cells are there but their text is not drawn yet (then a visit that
# looked for it too soon took the page's time as the first output, or waited forever).
WATCH_FIRST_JS = """() => {
  const firstPrompt = () => {
    const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
    const code = [...panel.querySelectorAll('.jp-CodeCell')].filter(c => {
      const src = c.querySelector('.jp-InputArea-editor .cm-content');
      return src && src.innerText.trim() !== '';
    });
    return code.length ? code[0].querySelector('.jp-InputArea-prompt') : null;
  };
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  if (!panel.querySelector('.jp-CodeCell')) return false;
  if (!firstPrompt()) return null;
  window.__first = {queued: null, done: null};
  const timer = setInterval(() => {
    const text = firstPrompt().innerText;
    if (text.includes('*')) window.__first.queued ??= Date.now();
    else if (window.__first.queued && /\\d/.test(text)) {
      window.__first.done = Date.now();
      clearInterval(timer);
    }
  }, 20);
  return true;
}"""
# Installed in every page before its own scripts: the first moment the status bar reads Idle
# or Busy (the kernel has started and answers; Busy when Run All was pressed before it was
# ready), in the page's clock (ms since the epoch).
WATCH_READY_JS = """(() => {
  window.__kernelReady = null;
  const timer = setInterval(() => {
    const bar = document.querySelector('#jp-main-statusbar');
    if (bar && /\\|\\s*(Idle|Busy)\\b/.test(bar.innerText)) {
      window.__kernelReady = Date.now();
      clearInterval(timer);
    }
  }, 20);
})();"""
NONE_QUEUED_JS = """() => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  return [...panel.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')]
    .every(p => !p.innerText.includes('*'));
}"""


def _press_run_all(page: Any) -> None:
    page.locator(".lm-MenuBar-item", has_text="Run").first.click()
    page.locator(".lm-Menu-item[data-command='runmenu:run-all']").click()


def _watch_first(page: Any, timeout_s: float = 60.0) -> bool:
    """Start watching the first code cell once its text shows (False: the lesson has none)."""
    deadline = time.time() + timeout_s
    while (found := page.evaluate(WATCH_FIRST_JS)) is None and time.time() < deadline:
        time.sleep(0.05)
    return bool(found)


def _run_all_until_queued(page: Any, tries: int = 3) -> None:
    """Run All, pressed again (as a student would) if the first cell shows no [*] after 20 s:
    a press while JupyterLab still sets the notebook up can come to nothing."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    for _ in range(tries):
        _press_run_all(page)
        try:
            page.wait_for_function("() => window.__first.queued !== null", polling=50,
                                   timeout=20_000)
            return
        except PlaywrightTimeout:
            print("  (Run All queued nothing after 20 s: pressed again)", flush=True)
    raise RuntimeError(f"Run All queued nothing after {tries} presses")


def visit(playwright: Any, profile: Path, url: str, wait_ready: bool,
          run: bool = True) -> dict[str, Any]:
    """Open ``url`` in Chromium on ``profile`` and run all its cells.

    With ``wait_ready`` Run All is pressed once the kernel is idle (``run_all`` is then the
    cells' own time); without, as soon as the notebook shows (``first`` is then what a
    student waits for). Without ``run`` nothing is run: the visit ends once the kernel is
    ready (``first`` is then that time too). Times in seconds from opening the address;
    ``ready`` is None for a notebook of Markdown only, which opens without a kernel.
    """
    with OutsideGuard() as guard:
        # Chromium sends everything not for 127.0.0.1 (loopback never goes to a proxy) to
        # the guard's proxy, the browser's own services included: no route (see above)
        proxy = guard.context_options()["proxy"]["server"]
        context = playwright.chromium.launch_persistent_context(
            str(profile), executable_path=str(CHROMIUM), headless=True,
            args=[*CHROMIUM_ARGS, *SITE_BROWSER_ARGS, f"--proxy-server={proxy}"],
            viewport={"width": 1400, "height": 1000})
        try:
            context.add_init_script(WATCH_READY_JS)
            page = context.pages[0] if context.pages else context.new_page()
            page.set_default_timeout(300_000)
            start = time.time()
            page.goto(url)
            page.wait_for_selector(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell")
            shown = time.time()
            if wait_ready or not run:
                wait_kernel_settled(page, 300_000)
            begun = time.time()
            first = begun
            if run and _watch_first(page):
                _run_all_until_queued(page)
                page.wait_for_function("() => window.__first.done !== null", polling=50)
                first = page.evaluate("() => window.__first.done") / 1000
                page.wait_for_function(NONE_QUEUED_JS, polling=50)
                wait_kernel_idle(page, 300_000)
            else:
                wait_kernel_settled(page, 300_000)  # a notebook of Markdown only: No Kernel
            done = time.time()
            ready_ms = page.evaluate("() => window.__kernelReady")
        finally:
            context.close()
        blocked = guard.take()
    return {"shown": shown - start,
            "ready": None if ready_ms is None else ready_ms / 1000 - start,
            "first": first - start, "run_all": done - begun, "done": done - start,
            "blocked": blocked}


def _seconds(value: float | None) -> str:
    return "no kernel" if value is None else f"{value:.1f} s"


def _median(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def _blocked_summary(blocked: list[str]) -> str:
    """How many requests the proxy refused, and the hosts they were for."""
    targets = [a.split()[-1] for a in blocked]  # "CONNECT host:443", "GET http://host/..."
    hosts = sorted({urllib.parse.urlsplit(t if "://" in t else "//" + t).hostname or t
                    for t in targets})
    return (f"requests not for 127.0.0.1 (refused): {len(blocked)}"
            + (f", for {', '.join(hosts)}" if hosts else ""))


def _size_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6


def smoke(playwright: Any, server: SiteServer, tmp: Path, lessons: list[str],
          lesson: str) -> list[str]:
    """One cold visit of the contents page (no kernel) and one of ``lesson`` until its
    kernel is ready; prints their figures and returns the requests refused."""
    blocked: list[str] = []
    contents = next((name for name in lessons if kernel_free(name)), None)
    for name in ([contents] if contents else []) + [lesson]:
        r = visit(playwright, tmp / f"profile-smoke-{len(blocked)}-{name}",
                  lesson_url(server.url, name), wait_ready=False, run=False)
        blocked += r["blocked"]
        print(f"smoke, cold visit of {name}: notebook shown {r['shown']:.1f} s, kernel ready "
              f"{_seconds(r['ready'])} (load average {os.getloadavg()[0]:.1f})", flush=True)
    return blocked


def default_lesson() -> str:
    """The lesson the figures are taken on: the second lesson of part 1 (QK^T, the scores)."""
    part_1 = lesson_index.lessons(part=1)
    return part_1[min(1, len(part_1) - 1)].path.name


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--site", type=Path, help="a built site (default: build one now)")
    parser.add_argument("--repeat", type=int, default=3, help="cold and warm visits each")
    parser.add_argument("--lesson", help="the lesson timed cold and warm (default: the "
                        "first one whose code makes widgets and figures: the second lesson)")
    parser.add_argument("--compare", type=Path, metavar="OTHER_SITE",
                        help="another built site, visited in turn with the first")
    parser.add_argument("--smoke", action="store_true",
                        help="seconds: the size, one cold visit of the contents page and "
                        "one of the lesson until its kernel is ready (what the suite runs)")
    args = parser.parse_args(argv)
    if args.smoke and args.compare is not None:
        parser.error("--smoke measures one site: leave out --compare")
    message = missing_requirements()
    if message:
        raise SystemExit(message)
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        site = args.site
        if site is None:
            site = Path(tmp) / "site"
            report = build(site, log=lambda line: None)
            print(f"built the site in {report.seconds:.0f} s")
        if not (site / "index.html").is_file():
            raise SystemExit(f"--site must be a built site with an index.html (got {site})")
        size = _size_mb(site)
        pyodide = _size_mb(site / "static" / "pyodide")
        print(f"site size: {size:.2f} MB (goal <= {GOAL_SIZE_MB:.0f} MB; "
              f"ratio {size / GOAL_SIZE_MB:.2f}); of which Pyodide and its packages "
              f"{pyodide:.2f} MB, JupyterLab and the rest {size - pyodide:.2f} MB")
        lessons = site_lessons()
        # by default the first lesson of part 1 with a figure and a widget: the scores
        # lesson (chosen by its metadata, never by its number or place in the list)
        lesson = args.lesson or default_lesson()
        if args.smoke:
            with SiteServer(site) as server, sync_playwright() as playwright:
                blocked = smoke(playwright, server, Path(tmp), lessons, lesson)
            print("\n" + _blocked_summary(blocked))
            return
        if args.compare is not None:
            print(f"compared with {args.compare}: {_size_mb(args.compare):.2f} MB")
        sites = [site] if args.compare is None else [site, args.compare]
        with contextlib.ExitStack() as stack, sync_playwright() as playwright:
            servers = [stack.enter_context(SiteServer(s)) for s in sites]
            server = servers[0]
            cold: dict[int, list[dict[str, Any]]] = {k: [] for k in range(len(sites))}
            warm: dict[int, list[dict[str, Any]]] = {k: [] for k in range(len(sites))}
            for i in range(args.repeat):
                for k in (range(len(sites)) if i % 2 == 0 else reversed(range(len(sites)))):
                    profile = Path(tmp) / f"profile-{k}-{i}"
                    url = lesson_url(servers[k].url, lesson)
                    cold[k].append(visit(playwright, profile, url, wait_ready=False))
                    warm[k].append(visit(playwright, profile, url, wait_ready=False))
                    print(f"  visit {i + 1}, {sites[k]}: kernel ready cold "
                          f"{_seconds(cold[k][-1]['ready'])}, warm "
                          f"{_seconds(warm[k][-1]['ready'])}; first output cold "
                          f"{cold[k][-1]['first']:.1f} s, warm {warm[k][-1]['first']:.1f} s "
                          f"(load average {os.getloadavg()[0]:.1f})", flush=True)
            for k, name in enumerate(sites):
                cold_first = statistics.median(r["first"] for r in cold[k])
                warm_first = statistics.median(r["first"] for r in warm[k])
                cold_all = statistics.median(r["done"] for r in cold[k])
                warm_all = statistics.median(r["done"] for r in warm[k])
                cold_ready = _median([r["ready"] for r in cold[k]])
                warm_ready = _median([r["ready"] for r in warm[k]])
                print(f"\n{name}: {lesson}, median of {args.repeat}: kernel ready cold "
                      f"{_seconds(cold_ready)}, warm {_seconds(warm_ready)}; first output "
                      f"cold {cold_first:.1f} s, warm {warm_first:.1f} s (warm/cold "
                      f"{warm_first / cold_first:.2f}); goal warm < {GOAL_WARM_FIRST_S:.0f} s: "
                      f"ratio {warm_first / GOAL_WARM_FIRST_S:.2f}; every cell run: cold "
                      f"{cold_all:.1f} s, warm {warm_all:.1f} s")
            blocked = [a for k in cold for r in cold[k] + warm[k] for a in r["blocked"]]
            if args.compare is not None:
                print("\n" + _blocked_summary(blocked))
                return
            print("\nevery lesson, a warm visit each, Run All once the kernel is idle (s):")
            print(f"{'lesson':36} {'ready':>9} {'run all':>8}")
            profile = Path(tmp) / "profile-lessons"
            visit(playwright, profile, lesson_url(server.url, lessons[0]), wait_ready=True)
            for name in lessons:
                r = visit(playwright, profile, lesson_url(server.url, name), wait_ready=True)
                blocked += r["blocked"]
                ready = "no kernel" if r["ready"] is None else f"{r['ready']:.1f}"
                print(f"{name:36} {ready:>9} {r['run_all']:8.1f}", flush=True)
        print("\n" + _blocked_summary(blocked))


if __name__ == "__main__":
    main()
