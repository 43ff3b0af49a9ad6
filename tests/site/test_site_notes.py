"""What the site shows where the browser falls short, and what it keeps from JupyterLab.

- A lesson that cannot run fully in a browser (here one that imports ``subprocess`` and runs
  a shell command) opens with a note that says so and why: a second site is built from the
  course's lessons plus that one. Its lessons import what the course's do, so its run under
  Node.js is the session site's, reused from the build's cache (course_site.run_cache): the
  files that run made must be the same, byte for byte.
- The arrow keys still move between cells (the site gives them to widgets only when a
  widget has the focus; the lessons' test moves sliders with them).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from labdriver import save_screenshot
from sitedriver import NOTEBOOKS, open_lesson, site_lessons

from course_site.build import BuildReport, build
from course_site.serve import SiteServer

pytestmark = [pytest.mark.browser, pytest.mark.site, pytest.mark.timeout(600)]

ACTIVE_INDEX_JS = """() => [...document.querySelectorAll(
  '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell')].findIndex(
  c => c.classList.contains('jp-mod-active'))"""


# What the build's run under Node.js writes into the site's Pyodide folder.
FROM_THE_RUN = ("python_stdlib.zip", "pyodide_bytecode-*.whl", "matplotlib_fontlist-*.whl")


@pytest.mark.slow
def test_a_lesson_the_browser_cannot_run_says_so(site_page: Any, tmp_path: Path,
                                                 artifacts: Path,
                                                 site_build: tuple[Path, BuildReport]) -> None:
    lessons = tmp_path / "notebooks"
    shutil.copytree(NOTEBOOKS, lessons, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    # as the course's lessons: the site's kernel is chosen by the language (python)
    metadata = {"kernelspec": {"name": "python3", "display_name": "Python 3",
                               "language": "python"}, "language_info": {"name": "python"}}
    notebook = {"nbformat": 4, "nbformat_minor": 5, "metadata": metadata, "cells": [
        {"cell_type": "markdown", "id": "t", "metadata": {}, "source": "# Needs a shell"},
        {"cell_type": "code", "id": "c", "metadata": {}, "outputs": [],
         "execution_count": None, "source": "import subprocess\n!ls"},
    ]}
    (lessons / "01_shell.ipynb").write_text(json.dumps(notebook))
    report = build(tmp_path / "site", notebooks=lessons, log=lambda line: None)
    assert report.lessons["01_shell.ipynb"] == [
        "`import subprocess`: a browser tab cannot start other programs.",
        "`!ls`: shell and package-manager commands do not run in the browser.",
    ]
    assert report.pyodide_run_reused, "the same inputs as the session's site: not run again"
    session_site = site_build[0] / "static" / "pyodide"
    for pattern in FROM_THE_RUN:
        [mine] = (tmp_path / "site" / "static" / "pyodide").glob(pattern)
        [theirs] = session_site.glob(pattern)
        assert mine.read_bytes() == theirs.read_bytes(), pattern
    with SiteServer(tmp_path / "site") as server:
        open_lesson(site_page.page, server.url, "01_shell.ipynb")
        first = site_page.page.locator(".jp-NotebookPanel .jp-Cell").first
        text = first.inner_text()
        save_screenshot(site_page.page, artifacts, "note_cannot_run")
        assert "cannot run completely in the browser" in text
        assert "import subprocess" in text and "a browser tab cannot start other programs" in text
        assert "!ls" in text
        site_page.assert_offline()


def test_arrow_keys_still_move_between_cells(site_page: Any, site_server: SiteServer) -> None:
    lesson = next(name for name in site_lessons()
                  if len(json.loads((NOTEBOOKS / name).read_text())["cells"]) >= 3)
    page = site_page.page
    open_lesson(page, site_server.url, lesson)
    page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell").first.locator(
        ".jp-InputPrompt").click()
    page.keyboard.press("Escape")  # command mode
    before = page.evaluate(ACTIVE_INDEX_JS)
    page.keyboard.press("ArrowDown")
    page.wait_for_timeout(200)
    assert page.evaluate(ACTIVE_INDEX_JS) == before + 1
    page.keyboard.press("ArrowUp")
    page.wait_for_timeout(200)
    assert page.evaluate(ACTIVE_INDEX_JS) == before
    site_page.assert_offline()
