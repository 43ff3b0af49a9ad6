"""tests/hub/classroom.py: a hub that died while starting leaves no proxy behind.

JupyterHub starts configurable-http-proxy in a session of its own, so stopping the hub's
process group does not reach it; the hub's proxy pid file does. Quick: stand-in processes.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent / "hub"))

from classroom import Hub


def _process(argv0: str) -> subprocess.Popen[bytes]:
    """A sleep that calls itself argv0, in a session of its own as JupyterHub's proxy is.

    Returned once it runs as argv0: a signal that reaches the shell before its ``exec``
    can be lost (seen under xdist), and a real orphaned proxy has long been running.
    """
    proc = subprocess.Popen(["bash", "-c", f'exec -a "{argv0}" sleep 60'],
                            start_new_session=True)
    deadline = time.monotonic() + 10
    while not Path(f"/proc/{proc.pid}/cmdline").read_bytes().startswith(argv0.encode()):
        if time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"the stand-in never ran as {argv0!r}")
        time.sleep(0.02)
    return proc


def _stopped(proc: subprocess.Popen[bytes]) -> bool:
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        return False
    return True


def test_the_proxy_named_in_the_pid_file_is_stopped(tmp_path: Path) -> None:
    proxy = _process("node /usr/bin/configurable-http-proxy --ip 127.0.0.1")
    try:
        (tmp_path / "jupyterhub-proxy.pid").write_text(f"{proxy.pid}\n")
        Hub._stop_orphaned_proxy(SimpleNamespace(state=tmp_path))
        assert _stopped(proxy), "the proxy still runs"
    finally:
        proxy.kill()


def test_a_pid_file_naming_another_program_stops_nothing(tmp_path: Path) -> None:
    other = _process("sleep")  # the pid was reused by something that is not the proxy
    try:
        (tmp_path / "jupyterhub-proxy.pid").write_text(f"{other.pid}\n")
        Hub._stop_orphaned_proxy(SimpleNamespace(state=tmp_path))
        assert other.poll() is None, "a process that is not the proxy was stopped"
    finally:
        other.kill()
        other.wait()


def test_no_pid_file_or_a_garbled_one_is_no_error(tmp_path: Path) -> None:
    Hub._stop_orphaned_proxy(SimpleNamespace(state=tmp_path))
    (tmp_path / "jupyterhub-proxy.pid").write_text("not a pid")
    Hub._stop_orphaned_proxy(SimpleNamespace(state=tmp_path))
