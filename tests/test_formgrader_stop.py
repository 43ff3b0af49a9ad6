"""`python -m course_grading.formgrader_csp` stops as `jupyter lab` does (instructors, step 5).

The command runs JupyterLab as a child process. Here a stand-in for JupyterLab (it asks
"Shut down this Jupyter server (y/[n])?" on Ctrl+C, as JupyterLab does, and records the
signals it gets) is started through the command's own ``main``, in a pseudo-terminal, so
that Ctrl+C is typed as an instructor types it.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(os.name != "posix", reason="signals and pseudo-terminals")

# JupyterLab's behaviour, reduced: on SIGINT it asks and shuts down on "y"; on SIGTERM it
# stops at once. It writes what happened to a file, since its terminal is shared.
STAND_IN = textwrap.dedent("""\
    import signal, sys, time
    log = open(sys.argv[1], "a", buffering=1)
    def ask(signum, frame):
        print("Shut down this Jupyter server (y/[n])? ", end="", flush=True)
        if sys.stdin.readline().strip() == "y":
            log.write("shut down after y\\n")
            raise SystemExit(0)
    def term(signum, frame):
        log.write("stopped by SIGTERM\\n")
        raise SystemExit(0)
    signal.signal(signal.SIGINT, ask)
    signal.signal(signal.SIGTERM, term)
    log.write("running\\n")
    print("is running at", flush=True)
    while True:
        time.sleep(0.05)
""")

# main() of the command, with the stand-in in place of `python -m jupyterlab`.
LAUNCH = textwrap.dedent("""\
    import sys
    import course_grading.formgrader_csp as fc
    fc.formgrader_command = lambda course, extra: [sys.executable, {stand_in!r}, {log!r}]
    sys.exit(fc.main([{course!r}]))
""")


def _launch_code(tmp_path: Path) -> tuple[str, Path]:
    course = tmp_path / "quiz"
    course.mkdir()
    (course / "nbgrader_config.py").write_text("c = get_config()\n")
    stand_in = tmp_path / "fake_lab.py"
    stand_in.write_text(STAND_IN)
    log = tmp_path / "lab.log"
    code = LAUNCH.format(stand_in=str(stand_in), log=str(log), course=str(course))
    return code, log


def _wait_for(predicate, seconds: float = 20) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def test_ctrl_c_asks_and_y_shuts_it_down(tmp_path):
    """Ctrl+C in the terminal, then y: the server's own question is answered, no traceback."""
    import pty

    code, log = _launch_code(tmp_path)
    pid, fd = pty.fork()
    if pid == 0:  # the child: the command, in the pseudo-terminal
        os.execv(sys.executable, [sys.executable, "-c", code])
    out = bytearray()

    def read(seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.05)
            if ready:
                try:
                    out.extend(os.read(fd, 65536))
                except OSError:
                    return

    try:
        assert _wait_for(lambda: log.exists() and "running" in log.read_text())
        read(0.5)
        os.write(fd, b"\x03")  # Ctrl+C, as typed: the terminal signals the process group
        read(1.5)  # before the fix the command killed the server within 0.25 s
        assert b"(y/[n])?" in out, out.decode(errors="replace")
        os.write(fd, b"y\n")
        assert _wait_for(lambda: os.waitpid(pid, os.WNOHANG)[0] == pid, 20)
        read(0.2)
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.close(fd)
    assert log.read_text().splitlines() == ["running", "shut down after y"]
    assert b"Traceback" not in out and b"KeyboardInterrupt" not in out, out.decode(
        errors="replace")


def test_sigterm_to_the_command_stops_the_server(tmp_path):
    """Stopping the command by its process id stops the server too: none is left behind."""
    code, log = _launch_code(tmp_path)
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, start_new_session=True)
    try:
        assert _wait_for(lambda: log.exists() and "running" in log.read_text())
        proc.send_signal(signal.SIGTERM)  # to the command only, not its process group
        assert proc.wait(20) == 0
        assert _wait_for(lambda: "stopped by SIGTERM" in log.read_text(), 10), log.read_text()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
