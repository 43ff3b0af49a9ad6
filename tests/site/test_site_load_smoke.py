"""benchmarks/site_load.py still runs: its smoke mode, on the site the tests built.

A benchmark that nothing runs rots (it crashed once waiting for a kernel on the contents page,
which opens without one). The smoke mode takes seconds, not the minutes of a measurement: the
site's size, a cold visit of the contents page and one of a lesson until its kernel is ready.
This test runs it as a reader would (a separate process, the command of docs/site.md) and
checks that it ends well and prints each figure.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from labdriver import REPO, missing_requirements
from sitedriver import kernel_free, site_lessons

pytestmark = [pytest.mark.browser, pytest.mark.site, pytest.mark.timeout(300)]

BENCHMARK = REPO / "benchmarks" / "site_load.py"
RUN_ALL = REPO / "benchmarks" / "browser_run_all.py"


def _smoke(benchmark: Path, site: Path) -> str:
    """What ``benchmark --smoke --site site`` prints; skips where Chromium or the tools lack."""
    message = missing_requirements()
    if message:
        pytest.skip(message)
    done = subprocess.run([sys.executable, str(benchmark), "--smoke", "--site", str(site)],
                          capture_output=True, text=True, timeout=280, cwd=REPO,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, (f"exit {done.returncode}\n{done.stdout}\n"
                                  f"{done.stderr[-3000:]}")
    return done.stdout


def test_smoke_mode_completes_and_prints_its_figures(site_build: tuple[Path, object]) -> None:
    out = _smoke(BENCHMARK, site_build[0])
    assert re.search(r"^site size: \d+\.\d\d MB .*Pyodide and its packages \d+\.\d\d MB", out,
                     re.M), out
    # the contents page (a notebook without code): shown, and no kernel
    contents = re.escape(next(name for name in site_lessons() if kernel_free(name)))
    assert re.search(rf"^smoke, cold visit of {contents}: notebook shown \d+\.\d s, "
                     r"kernel ready no kernel", out, re.M), out
    # a lesson: shown, and its kernel ready after it shows
    lesson = re.search(rf"^smoke, cold visit of (?!{contents})\S+\.ipynb: notebook shown "
                       r"(\d+\.\d) s, kernel ready (\d+\.\d) s", out, re.M)
    assert lesson, out
    assert float(lesson.group(2)) >= float(lesson.group(1)) > 0, out
    assert re.search(r"^requests not for 127\.0\.0\.1 \(refused\): \d+", out, re.M), out



def test_run_all_smoke_times_one_lesson_in_the_site(site_build: tuple[Path, object]) -> None:
    """benchmarks/browser_run_all.py --smoke --site: one cold visit of the first lesson with
    code, its load and Run All times printed (docs/site.md)."""
    out = _smoke(RUN_ALL, site_build[0])
    first = next(name for name in site_lessons() if not kernel_free(name))
    row = re.search(rf"^{re.escape(first)} +(\d+\.\d) +(\d+\.\d) +(\d+\.\d) +(\d+\.\d) +"
                    r"(\d+\.\d) +\d+\.\d -> \d+\.\d$", out, re.M)
    assert row, out
    load_first, load_warm, run_first, run_warm, run = map(float, row.groups())
    # one visit: it is the first and the only one, and its kernel was ready before Run All
    assert load_first == load_warm > 0 and run_first == run_warm == run > 0, out
    assert re.search(r"^slowest median Run All \d+\.\d s \(target < 10 s: (met|NOT met)\)$",
                     out, re.M), out
