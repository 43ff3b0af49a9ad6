"""Building the offline site leaves the students' JupyterLab as it was.

The site's build tools (JupyterLite and its Pyodide kernel, the extra ``site``) install a
JupyterLab extension meant for JupyterLite only. ``./course site`` used to install them into
the students' ``.venv``: from then on ``./course lab`` loaded that extension too, and every
page logged "Shared module @jupyterlite/server doesn't exist in shared scope default". Here
the site's install step runs for real (``course.forget_site_tools`` and
``course.site_setup``, what ``./course site`` does before it builds), then ``./course lab``
runs for real: the students' environment holds the same packages and JupyterLab extensions
as before the step, the page loads exactly those extensions (and the course's own), none of
JupyterLite's, and the browser's console shows no error (but ipywidgets' known one about a
notebook without a kernel, labdriver.NO_KERNEL_WIDGETS_ERROR).
"""

from __future__ import annotations

import html
import importlib.machinery
import importlib.util
import json
import re
import subprocess
import sys
import urllib.request
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from labdriver import (
    LABEXTENSIONS,
    NO_KERNEL_WIDGETS_ERROR,
    REPO,
    CourseLab,
    save_screenshot,
)

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

PAGE_CONFIG = re.compile(r'<script id="jupyter-config-data" type="application/json">(.*?)'
                         r"</script>", re.S)
# what a broken extension set logs (JupyterLab's module federation)
BROKEN = re.compile(r"Shared module .* doesn't exist|Unsatisfied version|No satisfying "
                    r"version|Failed to create module|Failed to load resource|Uncaught", re.I)


def _course_script() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader("course_script", str(REPO / "course"))
    spec = importlib.util.spec_from_loader("course_script", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def _students_environment() -> tuple[list[str], dict[str, str]]:
    """What this environment (the students' .venv when run by ./course test) holds: its
    packages (pip freeze) and its JupyterLab extensions (name -> version)."""
    frozen = subprocess.run([sys.executable, "-m", "pip", "freeze", "--all"],
                            capture_output=True, text=True, check=True, timeout=120).stdout
    extensions = {}
    for package in sorted((Path(sys.prefix) / "share" / "jupyter" / "labextensions")
                          .glob("**/package.json")):
        meta = json.loads(package.read_text())
        if "jupyterlab" in meta:
            extensions[meta["name"]] = meta["version"]
    return sorted(frozen.splitlines()), extensions


def test_lab_after_the_sites_install_step_loads_what_it_did_before(
        chromium: Any, tmp_path: Path, artifacts: Path) -> None:
    course = _course_script()
    if Path(course.VENV).resolve() != Path(sys.prefix).resolve():
        pytest.skip(f"the tests run in {sys.prefix}, not in the students' {course.VENV}")
    before = _students_environment()
    course.forget_site_tools()
    course.site_setup()
    assert (Path(course.SITE_VENV) / ".course-installed").is_file()
    after = _students_environment()
    assert after[0] == before[0], "the site's install step changed the students' packages"
    assert after[1] == before[1], "the site's install step changed their JupyterLab extensions"
    jupyterlite = sorted(name for name in after[1] if name.startswith("@jupyterlite/"))
    assert jupyterlite == [], f"the students' JupyterLab has JupyterLite's {jupyterlite}"

    own = sorted(json.loads(p.read_text())["name"] for p in LABEXTENSIONS.glob("*/package.json"))
    lab = CourseLab(tmp_path / "jupyter", env={"MPLBACKEND": None})
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    console: list[str] = []
    with lab:
        url = f"{lab.base_url}lab?token={lab.token}"
        with urllib.request.urlopen(url, timeout=30) as answer:
            found = PAGE_CONFIG.search(answer.read().decode())
        assert found, "no page configuration in /lab"
        config = json.loads(html.unescape(found.group(1)))
        loaded = sorted(ext["name"] for ext in config["federated_extensions"])
        assert loaded == sorted({*after[1], *own}), (
            f"./course lab loads {loaded}; the students' environment has {sorted(after[1])} "
            f"and the course {own}")
        page = context.new_page()
        page.set_default_timeout(60_000)
        page.on("console", lambda m: console.append(f"{m.type}: {m.text}")
                if m.type in ("error", "warning") else None)
        page.on("pageerror", lambda err: console.append(f"Uncaught: {err}"))
        page.goto(f"{lab.base_url}?token={lab.token}")  # the contents page, as a student
        page.wait_for_selector(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell")
        page.wait_for_timeout(3000)  # late extension loads log within a second or two
        save_screenshot(page, artifacts, "lab-after-site")
        context.close()  # before the server stops: its page would log the refused requests
    # the contents page has no kernel: ipywidgets' known error about that may come once
    if NO_KERNEL_WIDGETS_ERROR in console:
        console.remove(NO_KERNEL_WIDGETS_ERROR)
    errors = [line for line in console if line.startswith("error") or BROKEN.search(line)]
    assert errors == [], "the browser console shows:\n" + "\n".join(errors)
