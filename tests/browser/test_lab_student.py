"""A student's first minutes: `./course lab` opens the contents page, quietly; Validate is honest.

* ``./course lab`` (the README's command, run for real) fills the student's workspace with
  copies of the lessons and serves JupyterLab there; the browser lands on the copy of
  ``00_contents.ipynb``, with no Launcher and no notification asking about news or
  updates, and no kernel (the contents page has no code; a lesson's link starts its kernel).
  A notebook saved in the browser changes the copy, never ``notebooks/``.
* nbgrader's Validate button on a lesson names each exercise still to do, and says
  "Success!" only once they are all done (before, it said "Success!" on a lesson nobody
  had touched).
"""

from __future__ import annotations

import json
import re
import urllib.request
from pathlib import Path
from typing import Any

import nbformat
import pytest
from labdriver import (
    REPO,
    CourseLab,
    LabServer,
    open_notebook,
    press_validate,
    replace_cell_and_validate,
    save_screenshot,
    save_with_keyboard,
    wait_kernel_idle,
)

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


def test_course_lab_opens_the_contents_and_asks_nothing(chromium: Any, tmp_path: Path,
                                                        artifacts: Path) -> None:
    course_files = {p: p.read_bytes() for p in (REPO / "notebooks").glob("*.ipynb")}
    lab = CourseLab(tmp_path / "jupyter", ["--LabApp.expose_app_in_browser=True"],
                    env={"MPLBACKEND": None})
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    with lab:
        copy = lab.workspace / "00_contents.ipynb"
        assert copy.read_bytes() == course_files[REPO / "notebooks" / "00_contents.ipynb"]
        page = context.new_page()
        page.set_default_timeout(60_000)
        page.goto(f"{lab.base_url}?token={lab.token}")  # what the printed link opens
        page.wait_for_selector(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell")
        page.wait_for_timeout(3000)  # a news prompt would come up within a second or two
        save_screenshot(page, artifacts, "student-first-start")
        assert "/lab/tree/00_contents.ipynb" in page.url
        tabs = page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab")
        active = tabs.locator("xpath=self::*[contains(@class, 'lm-mod-current')]")
        assert tabs.count() == 1, tabs.all_inner_texts()
        assert [t.strip() for t in active.all_inner_texts()] == ["00_contents.ipynb"]
        assert page.locator(".jp-Launcher").count() == 0, "the Launcher opened too"
        # opening changes nothing: no autosave will write into the lesson
        assert tabs.locator("xpath=self::*[contains(@class, 'jp-mod-dirty')]").count() == 0
        toasts = page.locator(".Toastify__toast").all_inner_texts()
        assert toasts == [], f"notifications: {toasts}"
        assert "Attention, Term by Term" in page.locator(
            ".jp-NotebookPanel:not(.lm-mod-hidden)").inner_text()
        # the contents page is Markdown only: it opened without a kernel (the course's
        # extension, labextension/src/noKernel.ts; before it, a Python process started)
        assert running_kernels(lab) == [], "opening the contents page started a kernel"
        assert "No Kernel" in page.locator("#jp-main-statusbar").inner_text()
        assert "your own copies of the lessons are in" in lab.output()
        # the student writes a cell and saves: the copy changes, the course's files do not
        page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell").first.click()
        page.keyboard.press("Escape")
        page.keyboard.press("b")  # a new cell below
        page.keyboard.press("Enter")  # edit it
        page.keyboard.type("my_note = 'written by the student'")
        page.keyboard.press("Escape")
        page.wait_for_selector(".lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current.jp-mod-dirty")
        save_with_keyboard(page)
        saved = nbformat.read(copy, as_version=4)
        assert any("written by the student" in c.source for c in saved.cells)
        # the contents page's links open the student's copies
        page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) a",
                     has_text="01 · The whole equation at a glance").click()
        page.wait_for_url("**/lab/tree/01_overview.ipynb")
        assert [t.strip() for t in active.all_inner_texts()] == ["01_overview.ipynb"]
        wait_kernel_idle(page)  # a lesson with code starts its kernel as before
        assert [k["name"] for k in running_kernels(lab)] == ["python3"]
        context.close()
    assert {p: p.read_bytes() for p in (REPO / "notebooks").glob("*.ipynb")} == course_files


def running_kernels(lab: CourseLab) -> list[dict[str, Any]]:
    """The server's kernels (GET /api/kernels)."""
    with urllib.request.urlopen(f"{lab.base_url}api/kernels?token={lab.token}",
                                timeout=10) as answer:
        return list(json.loads(answer.read()))


LESSON = "04_softmax"


def test_validate_on_a_lesson_names_the_exercises_still_to_do(lab_page: Any,
                                                              fresh_kernels: LabServer,
                                                              artifacts: Path) -> None:
    relpath = f"validate/{LESSON}.ipynb"
    target = fresh_kernels.root_dir / relpath
    target.parent.mkdir(exist_ok=True)
    target.write_bytes((REPO / "notebooks" / f"{LESSON}.ipynb").read_bytes())
    open_notebook(lab_page, fresh_kernels, relpath, "validate-lesson")
    verdict = press_validate(lab_page)
    save_screenshot(lab_page, artifacts, "validate-lesson-not-done")
    assert "Success" not in verdict, verdict
    assert "The following cell failed:" in verdict, verdict
    assert "ExerciseNotDone: Not yet: `my_softmax` is not written yet" in verdict, verdict
    lab_page.locator(".jp-Dialog button").last.click()

    # Solve the exercises one at a time, as a student would: until the last, Validate names
    # the next one still to do (and no longer the solved one); after the last, "Success!".
    nb = nbformat.read(target, as_version=4)
    solutions = [c.source.split("```python\n", 1)[1].split("```", 1)[0]
                 for c in nb.cells if "solution" in c.metadata.get("tags", [])]
    names = [re.match(r"def (\w+)\(", code).group(1) for code in solutions]
    assert names[0] == "my_softmax" and len(names) >= 2, names
    for k, (name, code) in enumerate(zip(names, solutions, strict=True)):
        verdict = replace_cell_and_validate(lab_page, f"def {name}(", code)
        if k + 1 < len(names):
            assert f"`{name}` is not written yet" not in verdict, verdict
            assert f"Not yet: `{names[k + 1]}` is not written yet" in verdict, verdict
        lab_page.locator(".jp-Dialog button").last.click()
    save_screenshot(lab_page, artifacts, "validate-lesson-done")
    assert "Success! Your notebook passes all the tests." in verdict, verdict
