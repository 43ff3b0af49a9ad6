"""A student's copies, end to end: `./course lab` in Chromium, the site, `git pull`, a reset.

On two local clones (the course's authors' "upstream" and the student's), as in
tests/test_course_workspace.py but through the student's own tools: the student's clone runs
`./course lab` (on this environment, COURSE_VENV), solves lesson 04's exercise in
JupyterLab and saves; the course's files stay as they were and the site built from the clone
holds the unsolved exercise; upstream changes 04, the student pulls and `./course copies`
names 04 and keeps the solved copy (JupyterLab still shows the solution); `./course reset
04` then brings the new version, and JupyterLab shows it, unsolved.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from labdriver import REPO, CourseLab, save_screenshot, save_with_keyboard, type_into_cell

sys.path.insert(0, str(REPO / "tests"))
from test_course_workspace import EXERCISE, edit_markdown, git, solve_exercise

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

LESSON = "04_softmax.ipynb"
NEWS = "New in this version of lesson 04."


def course_command(clone: Path, *args: str) -> str:
    """``./course <args>`` in ``clone`` on this environment; what it printed."""
    env = {k: v for k, v in os.environ.items() if k != "COURSE_WORKSPACE"}
    env["COURSE_VENV"] = sys.prefix
    done = subprocess.run([sys.executable, str(clone / "course"), *args], cwd=clone, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def open_copy(page: Any, lab: CourseLab, name: str) -> Any:
    """Open the copy ``name`` in a fresh JupyterLab workspace; its notebook panel."""
    page.goto(f"{lab.base_url}lab/workspaces/round-trip/tree/{name}?reset&token={lab.token}")
    panel = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)")
    panel.locator(".jp-Cell").first.wait_for()
    return panel


def code_sources(path: Path) -> list[str]:
    """The sources of the code cells of the notebook at ``path``, as it is on disk."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]


# The server takes 1.5 s to write the lesson, as a busy machine may. CI once read the file
# before JupyterLab's save had landed (the stub still there): the wait for a tab "not
# dirty" matched the side bar's tab, and the answer's line it then polled the file for is
# also in the lesson's collapsed solution, so nothing waited. The test must wait for the
# save itself (save_with_keyboard); with this delay the old steps fail every time.
SLOW_SAVE = f"""import time


def slow_save(model, path, contents_manager, **kwargs):
    if path.endswith({LESSON!r}):
        time.sleep(1.5)


c.ContentsManager.pre_save_hook = slow_save
"""


def shown_sources(page: Any, name: str) -> dict[str, list[str]]:
    """The sources of the notebook ``name``'s code and markdown cells as JupyterLab holds it
    (every cell, drawn or not yet: JupyterLab draws a long notebook's cells as they scroll
    into view)."""
    page.wait_for_function("(name) => { const w = window.jupyterapp.shell.currentWidget; "
                           "return !!w && w.context.path === name && w.context.isReady; }",
                           arg=name)
    cells = page.evaluate("() => window.jupyterapp.shell.currentWidget.context.model"
                          ".sharedModel.cells.map(c => [c.cell_type, c.getSource()])")
    return {kind: [source for t, source in cells if t == kind] for kind in ("code", "markdown")}


def test_solve_build_pull_and_reset_through_the_students_tools(chromium: Any, tmp_path: Path,
                                                               artifacts: Path) -> None:
    upstream = tmp_path / "upstream"
    upstream.mkdir()
    for name in ("course", ".gitignore", "pyproject.toml"):  # pyproject: the env's stamp
        shutil.copy2(REPO / name, upstream / name)
    shutil.copytree(REPO / "notebooks", upstream / "notebooks", ignore=shutil.ignore_patterns(
        "my-work", ".ipynb_checkpoints"))
    git(upstream, "init", "-q", "-b", "main")
    git(upstream, "add", ".")
    git(upstream, "commit", "-q", "-m", "the course")
    student = tmp_path / "student"
    git(tmp_path, "clone", "-q", str(upstream), str(student))
    code = code_sources(student / "notebooks" / LESSON)
    [exercise] = [i for i, source in enumerate(code) if EXERCISE in source]
    answer = solve_exercise(shutil.copy(student / "notebooks" / LESSON, tmp_path / LESSON))
    work = student / "notebooks" / "my-work"

    lab = CourseLab(tmp_path / "jupyter", ["--LabApp.expose_app_in_browser=True"],
                    course=student / "course",
                    env={"COURSE_WORKSPACE": None, "COURSE_VENV": sys.prefix,
                         "MPLBACKEND": None})
    (Path(lab.env["JUPYTER_CONFIG_DIR"]) / "jupyter_server_config.py").write_text(SLOW_SAVE)
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(60_000)
    with lab:
        assert lab.workspace == work and (work / LESSON).is_file(), lab.output()
        # the student solves 04's exercise in JupyterLab and saves
        open_copy(page, lab, LESSON)
        type_into_cell(page, EXERCISE, answer)
        save_with_keyboard(page)
        saved = code_sources(work / LESSON)
        assert saved[exercise] == answer, (answer, saved[exercise])
        assert saved[:exercise] + saved[exercise + 1:] == code[:exercise] + code[exercise + 1:]
        assert git(student, "status", "--porcelain") == "", "the course's files changed"

        # the site, built from the student's clone, has the exercise unsolved
        from course_site.tools import ToolsError, find_tools

        try:  # the tools live in .site-venv, not in the running Python (course_site.tools)
            find_tools()
        except ToolsError as err:
            pytest.skip(f"the site's build tools are missing: {err}")
        from course_site.build import build

        site = tmp_path / "site"
        build(site, notebooks=student / "notebooks", log=lambda line: None)
        published = json.loads((site / "files" / LESSON).read_text())
        sources = ["".join(c["source"]) for c in published["cells"]]
        assert any(EXERCISE in s for s in sources) and answer not in sources
        assert not list(site.rglob("my-work"))

        # the authors change 04; the student pulls; the copies are checked
        edit_markdown(upstream / "notebooks" / LESSON, NEWS)
        git(upstream, "commit", "-q", "-am", "lesson 04 says more")
        git(student, "pull", "-q", "--ff-only")
        told = course_command(student, "copies")
        assert ("the course changed 04_softmax.ipynb since your copy was made; your copy is "
                "kept as it is. `./course reset 04`") in told, told
        open_copy(page, lab, LESSON)
        shown = shown_sources(page, LESSON)
        assert answer.strip() in [c.strip() for c in shown["code"]], "the solution is gone"
        assert not any(NEWS in m for m in shown["markdown"])
        save_screenshot(page, artifacts, "round-trip-kept")

        # `./course reset 04`: the new version, unsolved, in JupyterLab too
        told = course_command(student, "reset", "04")
        assert "notebooks/my-work/backups/04_softmax-1.ipynb" in told, told
        open_copy(page, lab, LESSON)
        shown = shown_sources(page, LESSON)
        assert any(NEWS in m for m in shown["markdown"])
        assert any(EXERCISE in c for c in shown["code"])
        assert answer.strip() not in [c.strip() for c in shown["code"]]
        save_screenshot(page, artifacts, "round-trip-reset")
        assert git(student, "status", "--porcelain") == ""
    context.close()
