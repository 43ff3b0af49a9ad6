"""benchmarks/proc_cpu.py: CPU time of processes from /proc, the benchmarks' one reader."""

from __future__ import annotations

import subprocess
import sys

import pytest
from benchmark_scripts import load_benchmark

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads Linux's /proc")


def test_a_process_its_parent_and_its_time():
    proc_cpu = load_benchmark("proc_cpu")
    busy = subprocess.Popen([sys.executable, "-c", "import time\nt = time.process_time()\n"
                             "while time.process_time() - t < 0.6: pass\n"
                             "print('done', flush=True)\ninput()"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        # Until its loop is done, as it says (it then waits on its stdin). Not a number of
        # polls: in a CI run at load 7 on 2 cores, 200 polls 50 ms apart once saw 0.59 s
        # of its CPU time, the loop not yet done.
        assert busy.stdout.readline() == "done\n"
        parent, ticks = proc_cpu.stat_of(busy.pid)
        assert parent == proc_cpu.os.getpid()
        assert 0.6 <= ticks / proc_cpu.HZ < 5
        assert proc_cpu.all_processes()[busy.pid] == proc_cpu.stat_of(busy.pid)
    finally:
        busy.communicate("\n")
    assert proc_cpu.stat_of(busy.pid) is None  # gone, and reaped
    assert busy.pid not in proc_cpu.all_processes()


def test_a_command_name_with_spaces_and_brackets_is_read_past(tmp_path):
    proc_cpu = load_benchmark("proc_cpu")
    odd = tmp_path / "a b) c"
    odd.symlink_to("/bin/sleep")
    sleeper = subprocess.Popen([str(odd), "5"])
    try:
        with open(f"/proc/{sleeper.pid}/stat") as stat:
            assert stat.read().startswith(f"{sleeper.pid} (a b) c) ")  # as named
        parent, ticks = proc_cpu.stat_of(sleeper.pid)
        assert parent == proc_cpu.os.getpid() and ticks >= 0
    finally:
        sleeper.kill()
        sleeper.wait()
