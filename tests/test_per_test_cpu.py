"""benchmarks/per_test_cpu.py: CPU seconds per test, from the test process's tree."""

from __future__ import annotations

import sys

import pytest
from benchmark_scripts import load_benchmark

TESTS = '''
import subprocess
import sys
import time


def test_busy_child():
    subprocess.run([sys.executable, "-c", "import time\\nt = time.process_time()\\n"
                    "while time.process_time() - t < 1.5: pass"], check=True)


def test_waits():
    time.sleep(1.0)
'''


@pytest.mark.slow  # a pytest of its own and seconds of CPU: not for the quick loop
@pytest.mark.skipif(sys.platform != "linux", reason="reads Linux's /proc")
# in one pytest, and in an xdist worker (as the README runs it), where the controller, whose
# tree holds the worker, must not count the tests a second time
@pytest.mark.parametrize("workers", [["-p", "no:xdist"], ["-n", "1"]], ids=["alone", "xdist"])
def test_a_busy_child_counts_to_its_test_and_waiting_does_not(workers, tmp_path, capsys):
    (tmp_path / "test_cpu_pair.py").write_text(TESTS)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    out = tmp_path / "cpu.tsv"
    code = load_benchmark("per_test_cpu").main([
        "--out", str(out), "--", "-q", *workers, "-p", "no:cacheprovider",
        "-c", str(tmp_path / "pytest.ini"), "--rootdir", str(tmp_path),
        str(tmp_path / "test_cpu_pair.py")])
    assert code == 0
    rows = {line.split("\t")[0].split("::")[1]: [float(v) for v in line.split("\t")[1:]]
            for line in out.read_text().splitlines()}
    assert set(rows) == {"test_busy_child", "test_waits"}, rows
    (busy_wall, busy_cpu), (wait_wall, wait_cpu) = rows["test_busy_child"], rows["test_waits"]
    assert busy_cpu >= 0.9 and busy_wall >= 1.5, rows  # its last sample interval may be missed
    assert wait_cpu <= 0.3 and wait_wall >= 1.0, rows
    printed = capsys.readouterr().out
    assert printed.startswith("2 tests; CPU seen ")
    tests, modules = printed.split("\n\n")[1:3]
    assert tests.splitlines()[1].endswith("test_cpu_pair.py::test_busy_child"), printed
    assert modules.splitlines()[1].endswith("  2  test_cpu_pair.py"), printed
