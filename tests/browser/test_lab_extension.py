"""The course's JupyterLab extension (labextension/, built into course_lib/labextension) in a
real JupyterLab, each of its two plugins on a notebook the test writes or opens itself.

* ``slider-names``: an ipywidgets slider's handle says the slider's name and the value its
  readout shows, after the notebook runs and after each move.
* ``no-kernel-without-code``: it holds every notebook's kernel back until the file is read,
  then lets it start for a notebook with code. A new notebook from the Launcher starts its
  kernel with no dialog; and should the session context decide before the file is read (the
  test makes it so: it holds the file back and asks the session context to decide), a
  notebook with code still gets its kernel. The contents page, Markdown only, opening
  without one is in test_lab_student.py.

The lessons' own sliders, in both themes, are checked in test_lab_lessons.py.
"""

from __future__ import annotations

import re
import time
from typing import Any

import nbformat
import pytest
from labdriver import (
    LabServer,
    open_notebook,
    page_state,
    run_all_cells,
    sliders_unannounced,
)

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

# The current notebook's kernel, once it has one: its name and status.
CURRENT_KERNEL_JS = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const kernel = panel && panel.sessionContext && panel.sessionContext.session
    && panel.sessionContext.session.kernel;
  return kernel ? {name: kernel.name, status: kernel.status} : null;
}"""
IDLE_KERNEL_JS = (f"() => {{ const k = ({CURRENT_KERNEL_JS})(); "
                  "return !!k && k.status === 'idle'; }")


def wait_for_idle_kernel(page: Any, server: LabServer, what: str) -> None:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(IDLE_KERNEL_JS, timeout=60_000)
    except PlaywrightTimeout:
        raise AssertionError(f"{what}: no idle kernel within 60 s\n"
                             + page_state(page, server)) from None


def test_a_slider_says_its_name_and_the_value_it_shows(lab_page: Any,
                                                       fresh_kernels: LabServer) -> None:
    open_notebook(lab_page, fresh_kernels, "selftest/widgets_ok.ipynb", "extension-sliders")
    run_all_cells(lab_page)
    handle = lab_page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .widget-slider "
                              "[role='slider']").first
    handle.wait_for()
    assert sliders_unannounced(lab_page) == []
    assert (handle.get_attribute("aria-label"), handle.get_attribute("aria-valuetext")) == (
        "n", "3")
    handle.focus()
    lab_page.keyboard.press("ArrowRight")
    lab_page.wait_for_function(
        "(h) => h.getAttribute('aria-valuetext') === '4'", arg=handle.element_handle())
    assert sliders_unannounced(lab_page) == []


# What the Launcher's tile for a kernel runs: a new notebook, opened with that kernel.
# Resolves with the notebook's path.
NEW_FROM_LAUNCHER_JS = """async () => {
  const app = window.jupyterapp;
  const panel = await app.commands.execute(
    'notebook:create-new', {cwd: 'selftest', kernelName: 'python3', isLauncher: true});
  return panel.context.path;
}"""


def test_a_new_notebook_from_the_launcher_starts_its_kernel(lab_page: Any,
                                                            fresh_kernels: LabServer) -> None:
    """Held back until the file is read, the kernel of a new notebook (one empty code cell)
    starts as the student chose it in the Launcher, with no dialog."""
    open_notebook(lab_page, fresh_kernels, "notebooks/00_contents.ipynb", "extension-new")
    assert fresh_kernels.api("GET", "api/kernels") == [], "the contents page started a kernel"
    path = lab_page.evaluate(NEW_FROM_LAUNCHER_JS)
    try:
        wait_for_idle_kernel(lab_page, fresh_kernels, path)
        assert lab_page.evaluate(CURRENT_KERNEL_JS)["name"] == "python3"
        assert lab_page.locator(".jp-Dialog").count() == 0, "a dialog came up"
        assert [k["name"] for k in fresh_kernels.api("GET", "api/kernels")] == ["python3"]
    finally:
        (fresh_kernels.root_dir / path).unlink(missing_ok=True)


# Opens ``path`` and has its session context decide at once, before the file is read (the
# test holds the file back): JupyterLab's own order is the other way round. The preference's
# kernel name is what JupyterLab would have taken from the file by then.
DECIDE_BEFORE_READING_JS = """async (path) => {
  const app = window.jupyterapp;
  const widget = await app.commands.execute('docmanager:open', {path, factory: 'Notebook'});
  app.shell.activateById(widget.id);
  const session = widget.sessionContext;
  session.kernelPreference = {...session.kernelPreference, name: 'python3'};
  const held = session.kernelPreference.shouldStart;
  const needsSelection = await session.initialize();
  return {held, needsSelection, read: widget.context.isReady, kernel: !!session.session};
}"""
# Whether the current notebook's file has been read.
READ_JS = "() => window.jupyterapp.shell.currentWidget.context.isReady"


def decide_before_reading(page: Any, server: LabServer, cells: list[Any], name: str) -> str:
    """Write a notebook of ``cells``, open it, and have its session context decide while the
    file is held back for 3 s; check that the decision came first; return its path."""
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)",
                                 "language": "python"}
    relpath = f"selftest/{name}.ipynb"
    nbformat.write(nb, server.root_dir / relpath)
    the_file = re.compile(rf".*/api/contents/selftest/{name}\.ipynb(\?.*)?$")

    def late_file(route: Any) -> None:
        if route.request.method == "GET":
            time.sleep(3)  # the session context asks which sessions run meanwhile
        route.continue_()

    page.route(the_file, late_file)
    try:
        decided = page.evaluate(DECIDE_BEFORE_READING_JS, relpath)
        page.wait_for_function(READ_JS)
    finally:
        page.unroute(the_file)
    # the case under test: held, decided (no kernel, no dialog) while the file was unread
    assert decided == {"held": False, "needsSelection": False, "read": False,
                       "kernel": False}, decided
    return relpath


def test_the_kernel_waits_for_the_file_even_when_jupyterlab_decides_first(
        lab_page: Any, fresh_kernels: LabServer) -> None:
    """A notebook with code gets its kernel, with no dialog; one of Markdown only none."""
    open_notebook(lab_page, fresh_kernels, "notebooks/00_contents.ipynb", "extension-early")
    relpath = decide_before_reading(lab_page, fresh_kernels,
                                    [nbformat.v4.new_code_cell("1 + 1")], "decided_early")
    wait_for_idle_kernel(lab_page, fresh_kernels, relpath)
    assert lab_page.evaluate(CURRENT_KERNEL_JS)["name"] == "python3"
    assert lab_page.locator(".jp-Dialog").count() == 0, "a dialog came up"

    decide_before_reading(lab_page, fresh_kernels, [nbformat.v4.new_markdown_cell("# Notes")],
                          "decided_early_markdown")
    lab_page.wait_for_timeout(3000)  # time enough for a kernel to start
    assert lab_page.evaluate(CURRENT_KERNEL_JS) is None
    assert [k["name"] for k in fresh_kernels.api("GET", "api/kernels")] == ["python3"]
    assert "No Kernel" in lab_page.locator("#jp-main-statusbar").inner_text()
