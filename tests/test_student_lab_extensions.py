"""The students' hub servers load the course's JupyterLab extensions, as ``./course lab`` does.

``deploy/student-jupyter-config`` (what every student's server on the hub reads, from its
``JUPYTER_CONFIG_PATH``) is given to a real JupyterLab of this environment, with nothing
else on the config path and nothing passed on the command line: the page it serves must list
every extension of ``course_lib/labextension`` (the course's, built from labextension/: the
slider names for screen readers, no kernel for a page of Markdown), serve the very files
the course ships, and still leave nbgrader's formgrader switched off. The whole hub runs in
tests/hub; this is the settings folder on its own.
"""

from __future__ import annotations

import html
import json
import os
import re
import secrets
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from localports import free_port

REPO = Path(__file__).resolve().parents[1]
STUDENT_SETTINGS = REPO / "deploy" / "student-jupyter-config"
COURSE_EXTENSIONS = sorted(json.loads(p.read_text())["name"] for p in
                           (REPO / "course_lib" / "labextension").glob("*/package.json"))
PAGE_CONFIG = re.compile(r'<script id="jupyter-config-data" type="application/json">(.*?)'
                         r"</script>", re.S)


@pytest.fixture(scope="module")
def student_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """JupyterLab started with only the students' settings on its config path: (its URL,
    its token). Its own config, data and runtime folders are empty throw-away ones."""
    scratch = tmp_path_factory.mktemp("student-lab")
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER")}
    for name in ("config", "data", "runtime", "root"):
        (scratch / name).mkdir()
    env.update(JUPYTER_CONFIG_PATH=str(STUDENT_SETTINGS),
               JUPYTER_CONFIG_DIR=str(scratch / "config"),
               JUPYTER_DATA_DIR=str(scratch / "data"),
               JUPYTER_RUNTIME_DIR=str(scratch / "runtime"), JUPYTER_PLATFORM_DIRS="1")
    port, token = free_port(), secrets.token_hex(16)
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
           f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
           f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={scratch / 'root'}"]
    if os.geteuid() == 0:
        cmd.append("--allow-root")
    log = scratch / "lab.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                urllib.request.urlopen(f"{url}api/status?token={token}", timeout=2)
                break
            except (urllib.error.URLError, ConnectionError):
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("JupyterLab with the students' settings did not "
                                       f"answer:\n{log.read_text()[-3000:]}") from None
                time.sleep(0.2)
        yield url, token
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=20) as answer:
        return answer.read()


def page_config(student_lab: tuple[str, str]) -> dict[str, Any]:
    url, token = student_lab
    found = PAGE_CONFIG.search(get(f"{url}lab?token={token}").decode())
    assert found, "no page configuration in /lab"
    return json.loads(html.unescape(found.group(1)))


def test_the_course_has_extensions_to_load() -> None:
    """The test below must not pass by finding nothing to look for."""
    assert COURSE_EXTENSIONS == ["attention-course-lab"]


def test_a_students_server_loads_the_course_extensions(student_lab: tuple[str, str]) -> None:
    config = page_config(student_lab)
    loaded = {ext["name"]: ext for ext in config["federated_extensions"]}
    missing = [name for name in COURSE_EXTENSIONS if name not in loaded]
    assert missing == [], f"the students' servers do not load {missing}"
    url, token = student_lab
    for name in COURSE_EXTENSIONS:
        load = loaded[name]["load"]
        code = get(f"{url}lab/extensions/{name}/{load}?token={token}")
        assert code == (REPO / "course_lib" / "labextension" / name / load).read_bytes(), name
    # the rest of the students' settings still holds: no grading tools
    assert "@jupyter/nbgrader:formgrader" in config["disabledExtensions"]
    with pytest.raises(urllib.error.HTTPError) as missing_page:
        get(f"{url}formgrader?token={token}")
    assert missing_page.value.code == 404
    # nor the written answer's rubric (course_grading.written_guide), even in an environment
    # where course_grading is installed: the students' config never loads its extension
    with pytest.raises(urllib.error.HTTPError) as no_rubric:
        get(f"{url}formgrader/course-written/{'0' * 32}?token={token}")
    assert no_rubric.value.code == 404
