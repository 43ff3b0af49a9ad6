"""How long a lesson's Run All takes in the browser: in JupyterLab, and in the offline site.

Run:  .venv/bin/python benchmarks/browser_run_all.py [--repeat 3] [LESSON ...]
      .venv/bin/python benchmarks/browser_run_all.py --site _site [--repeat 3] [LESSON ...]
      .venv/bin/python benchmarks/browser_run_all.py --smoke   # the suite's: one lesson, once

LESSON is a notebook's file name (``13_training.ipynb``); by default every lesson with code.
``benchmarks/lesson_times.py`` times the kernel alone; this is what the student waits for
in Debian's Chromium (headless, a profile of its own), with the page drawing every output:

* in JupyterLab (default): a JupyterLab of this environment on 127.0.0.1, on a copy of the
  lessons; each run opens the lesson in the loaded app (every document before it closed and
  its kernel shut down), waits until its new kernel is idle, presses Run > Run All Cells and
  stops the clock when no cell is queued and the kernel is idle again (the last cell's
  output is on the page). Beside the wall time, the CPU seconds the kernel spent meanwhile,
  and those of every other process of the run (Chromium, the server): wall time grows with
  the machine's load, CPU time hardly does;
* in the offline site (``--site``, a folder ``./course site`` built): each run is a visit
  with Chromium's cache kept between visits of one lesson; the first visit of a lesson is
  cold (a new profile: Pyodide and the packages come from the site's server). ``load`` is
  from opening the lesson's address to the kernel reading Idle; ``run all`` from pressing
  Run All with the kernel idle to the end, as above (``benchmarks/site_load.py``'s visit).
  The first import of numpy and course_lib happens in the first cell, inside ``run all``.

Medians over ``--repeat`` runs (the machine is shared: 2 cores; the load average is printed
before and after each lesson). Target: every lesson's Run All under 10 s. A measurement,
not a test: nothing is asserted. ``--smoke`` runs the first lesson with code once in
JupyterLab (tests/browser/test_browser_benchmarks.py); ``--smoke --site`` one visit of it
in the site (tests/site/test_site_load_smoke.py).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "site"))
sys.path.insert(0, str(HERE.parent / "tests" / "browser"))
sys.path.insert(0, str(HERE.parent))

import proc_cpu  # noqa: E402  (benchmarks/)
from labdriver import (  # noqa: E402
    REPO,
    LabServer,
    copy_tree,
    launch_chromium,
    missing_requirements,
    open_in_app,
    open_notebook,
    page_problems,
    wait_kernel_idle,
)
from site_load import (  # noqa: E402  (benchmarks/, on the path above)
    NONE_QUEUED_JS,
    _run_all_until_queued,
    _watch_first,
    visit,
)
from sitedriver import kernel_free, lesson_url, site_lessons  # noqa: E402

TARGET_S = 10.0

# After Run All: every non-empty code cell shows a number (none stopped early).
UNRUN_JS = """() => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  return [...panel.querySelectorAll('.jp-CodeCell')].map((cell, i) => {
    const src = cell.querySelector('.jp-InputArea-editor .cm-content');
    const prompt = cell.querySelector('.jp-InputArea-prompt');
    const empty = !src || src.innerText.trim() === '';
    return empty || /\\d/.test(prompt ? prompt.innerText : '') ? -1 : i;
  }).filter(i => i >= 0);
}"""


def load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def descendants_cpu(kernels: list[int]) -> tuple[float, float]:
    """CPU seconds so far of ``kernels`` and of every other process under this one
    (Chromium, Playwright's driver, the JupyterLab server), from /proc."""
    table = proc_cpu.all_processes()
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in table.items():
        children.setdefault(parent, []).append(pid)
    found, todo = [], [os.getpid()]
    while todo:
        found += (kids := children.get(todo.pop(), []))
        todo += kids
    kernel = sum(table[pid][1] for pid in found if pid in kernels)
    rest = sum(table[pid][1] for pid in found if pid not in kernels)
    return kernel / proc_cpu.HZ, rest / proc_cpu.HZ


def run_all_in_page(page: Any) -> float:
    """Press Run All in the open notebook (its kernel idle); seconds until every cell has
    run and the kernel is idle again. Raises if a cell did not run or showed an error."""
    if not _watch_first(page):
        raise RuntimeError("the open notebook has no code cell to run")
    start = time.perf_counter()
    _run_all_until_queued(page)
    page.wait_for_function("() => window.__first.done !== null", polling=50, timeout=300_000)
    page.wait_for_function(NONE_QUEUED_JS, polling=50, timeout=300_000)
    wait_kernel_idle(page, 300_000)
    seconds = time.perf_counter() - start
    check_ran(page)
    return seconds


def check_ran(page: Any) -> None:
    unrun = page.evaluate(UNRUN_JS)
    problems = page_problems(page)
    if unrun or problems:
        raise RuntimeError(f"Run All did not finish cleanly: code cells {unrun} did not run; "
                           + "\n".join(problems))


def in_lab(lessons: list[str], repeat: int, tmp: Path) -> dict[str, list[float]]:
    """Run All of each lesson ``repeat`` times in one JupyterLab page; prints per lesson the
    median wall time, each run's, the median CPU seconds of the kernel and of the rest
    (browser and server) during a run, and the load average before and after."""
    from playwright.sync_api import sync_playwright

    root = copy_tree(REPO / "notebooks", tmp / "notebooks")
    times: dict[str, list[float]] = {}
    with LabServer(root, tmp / "lab-scratch", ["--LabApp.expose_app_in_browser=True"]) as server, \
            sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(300_000)
            open_notebook(page, server, lessons[0], "bench", timeout_ms=180_000)
            for name in lessons:
                before = load()
                runs, kernel_cpu, rest_cpu = [], [], []
                for _ in range(repeat):
                    open_in_app(page, server, name, timeout_ms=180_000)
                    kernels = server.kernel_pids()
                    cpu_before = descendants_cpu(kernels)
                    runs.append(run_all_in_page(page))
                    cpu_after = descendants_cpu(kernels)
                    kernel_cpu.append(cpu_after[0] - cpu_before[0])
                    rest_cpu.append(cpu_after[1] - cpu_before[1])
                times[name] = runs
                print(f"{name:36} {statistics.median(runs):8.1f} "
                      f"{' '.join(f'{r:.1f}' for r in runs):>20} "
                      f"{statistics.median(kernel_cpu):11.1f} {statistics.median(rest_cpu):9.1f}"
                      f"   {before} -> {load()}", flush=True)
        finally:
            browser.close()
    return times


def in_site(site: Path, lessons: list[str], repeat: int, tmp: Path) -> dict[str, list[float]]:
    from playwright.sync_api import sync_playwright

    from course_site.serve import SiteServer

    times: dict[str, list[float]] = {}
    with SiteServer(site) as server, sync_playwright() as playwright:
        for name in lessons:
            before = load()
            profile = tmp / f"profile-{name}"  # new: the first visit is cold
            visits = [visit(playwright, profile, lesson_url(server.url, name), wait_ready=True)
                      for _ in range(repeat)]
            warm = visits[1:] or visits
            times[name] = [v["run_all"] for v in warm]
            runs = " ".join(f"{v['run_all']:.1f}" for v in visits)
            print(f"{name:36} {visits[0]['ready']:9.1f} "
                  f"{statistics.median(v['ready'] for v in warm):9.1f} "
                  f"{visits[0]['run_all']:9.1f} "
                  f"{statistics.median(v['run_all'] for v in warm):9.1f} "
                  f"{runs:>20}   {before} -> {load()}", flush=True)
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lessons", nargs="*", help="notebook file names (default: every "
                        "lesson with code)")
    parser.add_argument("--site", type=Path, help="a built site: time it instead of "
                        "JupyterLab")
    parser.add_argument("--repeat", type=int, default=3, help="runs (visits) per lesson")
    parser.add_argument("--smoke", action="store_true", help="one lesson, once (the suite's)")
    args = parser.parse_args(argv)
    message = missing_requirements()
    if message:
        raise SystemExit(message)
    with_code = [name for name in site_lessons() if not kernel_free(name)]
    for name in args.lessons:
        if name not in with_code:
            parser.error(f"LESSON must be a lesson with code, as its file name, one of "
                         f"{', '.join(with_code)} (got {name!r})")
    if args.smoke:
        args.repeat, args.lessons = 1, args.lessons or with_code[:1]
    lessons = args.lessons or with_code
    if args.site is not None and not (args.site / "index.html").is_file():
        raise SystemExit(f"--site must be a built site with an index.html (got {args.site})")
    print(f"load average before: {' '.join(f'{x:.1f}' for x in os.getloadavg())} "
          f"({os.cpu_count()} cores)")
    with tempfile.TemporaryDirectory() as tmp:
        if args.site is None:
            print(f"JupyterLab, Run All with the kernel idle, {args.repeat} run(s) (s):")
            print(f"{'lesson':36} {'median':>8} {'runs':>20} {'kernel CPU':>11} "
                  f"{'other CPU':>9}   load average")
            times = in_lab(lessons, args.repeat, Path(tmp))
        else:
            print(f"offline site {args.site}, {args.repeat} visit(s) per lesson, the first "
                  "cold (s):")
            print(f"{'lesson':36} {'load 1st':>9} {'load warm':>9} {'run 1st':>9} "
                  f"{'run warm':>9} {'runs':>20}   load average")
            times = in_site(args.site, lessons, args.repeat, Path(tmp))
    slowest = max(statistics.median(r) for r in times.values())
    print(f"load average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"slowest median Run All {slowest:.1f} s (target < {TARGET_S:.0f} s: "
          f"{'met' if slowest < TARGET_S else 'NOT met'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
