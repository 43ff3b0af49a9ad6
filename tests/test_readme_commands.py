"""The README's lab command really starts JupyterLab (then the test stops it)."""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_readme_shows_the_two_commands_and_ci_runs_the_test_one():
    readme = (ROOT / "README.md").read_text()
    assert "./course lab" in readme and "./course test" in readme
    ci = (ROOT / ".ci" / "run").read_text()
    assert "./course test" in ci
    for line in ci.splitlines():
        cmd = line.strip()
        if cmd and not cmd.startswith("#") and not cmd.startswith(("set ", "cd ")):
            assert cmd in readme, f".ci/run runs {cmd!r}, which the README does not show"


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_make_lab_serves_jupyterlab_on_localhost(tmp_path):
    port, token = free_port(), secrets.token_hex(16)
    env = dict(os.environ)
    env.update(
        JUPYTER_CONFIG_DIR=str(tmp_path / "config"),
        JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
        JUPYTERLAB_SETTINGS_DIR=str(tmp_path / "settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(tmp_path / "workspaces"),
    )
    args = ["--no-browser", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
            "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}"]
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "course"), "lab", *args],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline, status = time.monotonic() + 90, None
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                req = urllib.request.Request(
                    f"http://127.0.0.1:{port}/api/status",
                    headers={"Authorization": f"token {token}"},
                )
                with urllib.request.urlopen(req, timeout=2) as r:
                    status = json.load(r)
                break
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.5)
        assert status is not None, proc.stdout.read().decode() if proc.poll() is not None else ""
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/lab?token={token}", timeout=5) as r:
            page = r.read().decode()
        assert "JupyterLab" in page
        # the start page is the contents notebook, not the Launcher
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/?token={token}", timeout=5) as r:
            assert r.url.split("?")[0].endswith("/lab/tree/notebooks/00_contents.ipynb"), r.url
        # no news or update prompt: the notification extension's settings, as the lab sees them
        req = urllib.request.Request(
            f"http://127.0.0.1:{port}/lab/api/settings/"
            "@jupyterlab/apputils-extension:notification",
            headers={"Authorization": f"token {token}"})
        with urllib.request.urlopen(req, timeout=5) as r:
            plugin = json.load(r)
        # a student's own value, else the default (where the lab folds in overrides.json)
        effective = {k: plugin["settings"].get(k, plugin["schema"]["properties"][k]["default"])
                     for k in ("fetchNews", "checkForUpdates")}
        assert effective == {"fetchNews": "false", "checkForUpdates": False}
        # without the token the API refuses
        with pytest.raises(urllib.error.HTTPError) as denied:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/contents", timeout=5)
        assert denied.value.code == 403
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", port)) != 0, "JupyterLab still listening after stop"


def test_readme_library_example_runs():
    import doctest

    failures, tried = doctest.testfile(
        str(ROOT / "README.md"), module_relative=False,
        optionflags=doctest.NORMALIZE_WHITESPACE,
    )
    assert tried >= 4 and failures == 0
