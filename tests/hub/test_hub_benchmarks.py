"""The benchmarks of a whole class on JupyterHub still run: their ``--smoke`` modes.

As tests/test_benchmarks_smoke.py (a benchmark nothing runs rots): ``python
benchmarks/<name>.py --smoke`` in a process of its own, as the deployment guide runs it
(as root), must end with status 0 and print each figure as a number. Needs root, the hub's
proxy and PostgreSQL, as the other tests here.
"""

from __future__ import annotations

import re
import shutil

import pytest
from benchmark_scripts import figures, run_smoke
from classroom import postgres_bindir

pytestmark = [pytest.mark.hub, pytest.mark.slow, pytest.mark.timeout(900)]


def test_class_flow(class_ready: None) -> None:
    out = run_smoke("class_flow", timeout=840).stdout
    assert out.startswith("class flow, gradebook=sqlite, median of 1 run(s), seconds"), out
    # release ... fetch_feedback, instructor, total; seconds per student; the ratio to itself
    total, per_student = figures(r"^ +1(?: +\d+\.\d){8} +(\d+\.\d) +(\d+\.\d\d)  "
                                 r"\(x1\.00 per student vs 1\)$", out)
    assert per_student == pytest.approx(total, abs=0.06) and total > 0, out  # a class of 1


@pytest.mark.parametrize("personal", [False, True], ids=["one-release", "per-student"])
def test_ngshare_load(class_ready: None, personal: bool) -> None:
    """The load benchmark's smoke run, with the class-wide release and with per-student
    variants (``--personal``: every fetch carries every student's notebook)."""
    if shutil.which("configurable-http-proxy") is None or postgres_bindir() is None:
        pytest.skip("needs configurable-http-proxy and PostgreSQL: "
                    "run scripts/install-system-packages.sh")
    out = run_smoke("ngshare_load", *(["--personal"] if personal else []), timeout=840).stdout
    own = ", each student their own notebook" if personal else ""
    assert re.search(rf"^ngshare load: 2 students fetch and submit at once .*PostgreSQL behind "
                     rf"ngshare{own}$", out, re.M), out
    figures(r"^  generate and release: (\d+\.\d) s$", out)
    rate, size, fetch_median, fetch_p95, median, p95, longest = figures(
        r"^  round 1: \d+\.\d s, (\d+\.\d) submissions/s; fetch (\d+\.\d\d) MB each, "
        r"latency median (\d+\.\d{3}) s, p95 (\d+\.\d{3}) s; submit latency median "
        r"(\d+\.\d{3}) s, p95 (\d+\.\d{3}) s, max (\d+\.\d{3}) s; CPU s: ngshare \d+\.\d, "
        r"hub \d+\.\d", out)
    assert rate > 0 and size > 0 and 0 < fetch_median <= fetch_p95, out
    assert 0 < median <= p95 <= longest, out
    figures(r"^  median of 1 rounds: (\d+\.\d) submissions/s, p95 submit latency (\d+\.\d{3}) s$",
            out)
    figures(r"^  instructor's collect of 2 \(the last round's\): (\d+\.\d) s$", out)
    assert figures(r"^  error responses (\d+), lost (\d+), mixed up (\d+)$", out) == [0, 0, 0]
