"""The grading benchmarks that sandbox student code still run: their ``--smoke`` modes.

As tests/test_benchmarks_smoke.py (a benchmark nothing runs rots): ``python
benchmarks/<name>.py --smoke`` in a process of its own, as a reader runs it, must end with
status 0 and print each figure as a number. Here because they need bubblewrap.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(600)

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def run_smoke(name: str) -> str:
    """What ``python benchmarks/<name>.py --smoke`` printed; it must end with status 0."""
    done = subprocess.run([sys.executable, str(BENCHMARKS / f"{name}.py"), "--smoke"],
                          cwd=BENCHMARKS.parent, capture_output=True, text=True, timeout=540,
                          stdin=subprocess.DEVNULL, check=False)
    assert done.returncode == 0, (f"{name}.py --smoke: exit {done.returncode}\n{done.stdout}\n"
                                  f"{done.stderr[-3000:]}")
    return done.stdout


def numbers(pattern: str, out: str) -> list[float]:
    found = re.search(pattern, out, re.M)
    assert found, f"no line matches {pattern!r} in:\n{out}"
    return [float(g) for g in found.groups()]


def test_parallel_grading(bwrap_ok: None) -> None:
    out = run_smoke("parallel_grading")
    assert re.search(r"^1 submissions of the checkpoint quiz, \d+ cores, median of 1 run\(s\)",
                     out, re.M), out
    row = r" +(\d+\.\d) +(\d+\.\d\d) +(\d+\.\d\d) +(\d+)% +(\d+\.\d\d)x$"
    serial = numbers(r"^nbgrader autograde \(serial\)" + row, out)
    engine = numbers(r"^parallel engine, 1 worker\(s\)" + row, out)
    numbers(r"^  same, \d+ workers, --no-prestart" + row, out)
    assert serial[0] > 0 and serial[4] == 1.0 and engine[0] > 0, out
    assert "same scores in every run: True" in out, out
    kernel, _ = numbers(r"^fixed cost per submission: a sandboxed kernel starts in "
                            r"(\d+\.\d\d) s \(median of 1; .* bwrap sandbox alone (\d+) ms$", out)
    assert kernel > 0, out


def test_submission_shape(bwrap_ok: None) -> None:
    out = run_smoke("submission_shape")
    numbers(r"^machine: (\d+) cores, load average (\d+\.\d)$", out)
    numbers(r"^nbgrader's listing of +100 empty folders: +(\d+\.\d\d) s$", out)
    count = numbers(r"^count of a 1,001-folder submission: +(\d+\.\d{3}) s \(stopped at (\d+) "
                    r"entries\)$", out)
    assert count[1] == 1001, out  # one past the limit of 1000
    refused = numbers(r"^autograde of folders +(\d+\.\d{3}) s \(too many", out)
    graded = numbers(r"^autograde of honest +(\d+\.\d{3}) s \(graded\)$", out)
    # the refusal comes before any work: quicker than grading (it can take under 5 ms, which
    # printed as 0.00 s and failed a "> 0" here in CI)
    assert 0 <= refused[0] < graded[0], out
