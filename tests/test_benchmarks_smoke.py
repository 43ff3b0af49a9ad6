"""Every benchmark still runs: its ``--smoke`` mode, run as a reader would run it.

A benchmark that nothing runs rots (issue 45). Each test here runs ``python
benchmarks/<name>.py --smoke`` in a process of its own (the smallest sizes, one round, the
same code as a measurement) and checks that it ends with status 0 and prints each of its
figures as a number. Nothing here judges a speed. The benchmarks that need bubblewrap,
Chromium or a hub have theirs beside those tests (tests/sandbox, tests/browser, tests/hub);
grading_time, report_time and tiled_memory, beside their own tests.
"""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path

import pytest
from benchmark_scripts import BENCHMARKS, figures, run_smoke

pytestmark = pytest.mark.timeout(300)


def test_every_benchmark_has_a_smoke_mode_that_a_test_runs():
    """A new benchmark comes with its --smoke and a test that runs it (proc_cpu.py is the
    /proc reader the benchmarks share, not a script)."""
    scripts = sorted(p.stem for p in BENCHMARKS.glob("*.py")
                     if 'if __name__ == "__main__":' in p.read_text(encoding="utf-8"))
    assert len(scripts) >= 18, scripts
    tests = [p.read_text(encoding="utf-8") for p in Path(__file__).parent.rglob("test_*.py")]
    without = [name for name in scripts
               if "--smoke" not in (BENCHMARKS / f"{name}.py").read_text(encoding="utf-8")
               or not any(f'"{name}' in text and "--smoke" in text for text in tests)]
    assert not without, f"benchmarks without a --smoke mode that a test runs: {without}"


def test_attention_speed():
    out = run_smoke("attention_speed").stdout
    assert "median of 1 interleaved rounds" in out, out
    # n, course_lib, bare numpy (torch SDPA when torch is there), the two ratios
    lib, bare, ratio, paired = figures(
        r"^ +64 +(\d+\.\d{3})ms +(\d+\.\d{3})ms(?: +\d+\.\d{3}ms)? +(\d+\.\d\d) +(\d+\.\d\d)$",
        out)
    assert lib > 0 and bare > 0 and ratio > 0 and paired > 0, out


@pytest.mark.slow  # seconds of CPU in processes of its own
def test_hidden_check_bits():
    out = run_smoke("hidden_check_bits").stdout
    rows = re.findall(r"^(test_\w+) +(\d+) +(\d+\.\d\d) +(\d+) \(", out, re.M)
    assert rows, out
    for name, verdicts, bits, _named in rows:
        assert float(bits) == pytest.approx(math.log2(int(verdicts)), abs=0.005), name
    assert "leaves 2 verdicts: 1 bit" in out, out


@pytest.mark.slow  # seconds of CPU in processes of its own
def test_import_cost():
    out = run_smoke("import_cost").stdout
    fast, slow, _ = figures(r"^jsonschema +(\d+\.\d\d)s +(\d+\.\d\d)s +(\d+\.\d)$", out)
    assert fast > 0 and slow > 0, out
    assert "medians of 1 fresh interpreters each" in out, out


@pytest.mark.slow  # seconds of CPU in processes of its own
def test_widget_latency():
    out = run_smoke("widget_latency").stdout
    assert out.startswith("one update (median of 1)"), out
    # ours, its bytes, the baseline, its bytes, the speed-up; then ours alone
    ours, sent, base, base_sent, _ = figures(
        r"^scores heatmap, 3 tokens +(\d+\.\d)ms +(\d+) +(\d+\.\d)ms +(\d+) +(\d+\.\d)x$", out)
    assert ours > 0 and sent > 0 and base > 0 and base_sent > 0, out
    figures(r"^blend triangle +(\d+\.\d)ms +(\d+)$", out)
    figures(r"^scaling, first visit of d_k=4096 \(median of 1\) +(\d+\.\d)ms +(\d+\.\d)ms "
            r"+(\d+\.\d)x$", out)


@pytest.mark.slow  # a kernel
def test_lesson_times():
    out = run_smoke("lesson_times").stdout
    cells, total, _, cpu = figures(r"^01_\w+\.ipynb +(\d+\.\d\d) +(\d+\.\d\d) +(\d+\.\d\d) "
                                   r"+(\d+\.\d\d)$", out)
    assert 0 < cells <= total, out
    assert 0 < cpu, out  # the kernel's own CPU time, read from /proc
    assert re.search(r"^load average \d+\.\d\d \d+\.\d\d \d+\.\d\d \(\d+ cores\)$", out, re.M), out
    assert re.search(r"^medians of 1 run\(s\); slowest lesson \d+\.\d\d s", out, re.M), out


@pytest.mark.slow  # a pytest of its own
@pytest.mark.skipif(sys.platform != "linux", reason="reads Linux's /proc")
def test_per_test_cpu():
    out = run_smoke("per_test_cpu").stdout
    count, _ = figures(r"^(\d+) tests; CPU seen (\d+) s", out)
    assert count >= 1, out
    _, wall = figures(r"^ *(\d+\.\d) +(\d+\.\d)  tests/test_proc_cpu\.py::\w+", out)
    assert wall > 0, out


@pytest.mark.slow  # a pytest of its own
@pytest.mark.skipif(sys.platform != "linux", reason="reads Linux's /proc")
def test_suite_cpu():
    err = run_smoke("suite_cpu").stderr  # it prints to stderr, after the command's output
    _, busy, _ = figures(r"^wall (\d+) s; machine busy (\d+) s of CPU; sampled (\d+) s$", err)
    assert busy > 0, err
    assert figures(r"^ *(\d+\.\d)  py -m pytest$", err)[0] > 0, err
