"""The benchmarks that drive JupyterLab in Chromium still run: their ``--smoke`` modes.

As tests/test_benchmarks_smoke.py (a benchmark nothing runs rots): ``python
benchmarks/<name>.py --smoke`` in a process of its own, as a reader runs it, must end with
status 0 and print each figure as a number. Each starts its own JupyterLab and Chromium
(the benchmarks' own, not this folder's fixtures), as short as a lab start allows.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from labdriver import REPO

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]


def run_smoke(name: str) -> str:
    """What ``python benchmarks/<name>.py --smoke`` printed; it must end with status 0."""
    done = subprocess.run([sys.executable, str(REPO / "benchmarks" / f"{name}.py"), "--smoke"],
                          cwd=REPO, capture_output=True, text=True, timeout=540,
                          stdin=subprocess.DEVNULL, check=False)
    assert done.returncode == 0, (f"{name}.py --smoke: exit {done.returncode}\n{done.stdout}\n"
                                  f"{done.stderr[-3000:]}")
    return done.stdout


def test_browser_latency(browser_requirements: None) -> None:
    out = run_smoke("browser_latency")
    assert "(JupyterLab, 2 timed moves each after one warm-up)" in out, out
    for kind in ("slider", "dropdown", "toggle", "checkbox"):  # one widget of each kind
        row = re.search(rf"^{kind} +.+? +2 +(\d+\.\d) +(\d+\.\d) +(\d+\.\d)$", out, re.M)
        assert row, (kind, out)
        median, p10, p90 = map(float, row.groups())
        assert 0 < p10 <= median <= p90, (kind, out)
        assert re.search(rf"^median of medians, {kind}: \d+\.\d ms$", out, re.M), (kind, out)


def test_first_run(browser_requirements: None) -> None:
    out = run_smoke("first_run")
    assert "smoke: one start on this environment" in out, out
    assert re.search(r"^ +1 +\d+\.\ds +\d+\.\ds +\d+\.\ds +\d+\.\ds +\d+ +\d+ ", out, re.M), out
    medians = json.loads(out.strip().splitlines()[-1])["medians"]
    # `course lab` printed its command, the server answered, the contents page was shown
    assert 0 <= medians["installed"] <= medians["server"] <= medians["open"], medians
    assert medians["cpu"] > 0 and medians["size_mb"] > 50 and medians["apparent_mb"] > 50, medians
    assert re.search(r"^target open < 45 s: median \d+\.\d s", out, re.M), out


def test_browser_run_all(browser_requirements: None) -> None:
    out = run_smoke("browser_run_all")
    assert "JupyterLab, Run All with the kernel idle, 1 run(s) (s):" in out, out
    # the first lesson with code: its median, its one run, the kernel's and the rest's CPU
    row = re.search(r"^(\S+\.ipynb) +(\d+\.\d) +(\d+\.\d) +(\d+\.\d) +(\d+\.\d) +"
                    r"\d+\.\d -> \d+\.\d$", out, re.M)
    assert row, out
    median, run, kernel_cpu, other_cpu = map(float, row.groups()[1:])
    assert median == run > 0 and kernel_cpu > 0 and other_cpu > 0, out
    assert re.search(r"^slowest median Run All \d+\.\d s \(target < 10 s: (met|NOT met)\)$",
                     out, re.M), out
