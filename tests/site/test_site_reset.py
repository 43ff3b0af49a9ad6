"""A student's edits in the offline site: kept in the browser, and one lesson reset there.

JupyterLite saves a student's notebook into the browser's storage; the site's own copy stays
on the server. Deleting the lesson in the file browser deletes the browser's copy only: the
lesson stays listed, and opens as the course wrote it. The site's first page (and the
README) give that way to start a lesson again; this test reads it there and walks it in
Chromium, as a student would (the edit is saved through
the contents service that JupyterLab's Save uses; the reset goes through the file browser).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from labdriver import close_documents, wait_kernel_idle, wait_kernel_settled
from playwright.sync_api import expect
from sitedriver import open_lesson

from course_site.build import BuildReport
from course_site.serve import SiteServer

pytestmark = [pytest.mark.browser, pytest.mark.site, pytest.mark.timeout(600)]

LESSON = "04_softmax.ipynb"
MARKER = "My own notes on softmax, written in the site"

FIRST_CELL_JS = """async (path) => {
  const model = await window.jupyterapp.serviceManager.contents.get(path, {content: true});
  const source = model.content.cells[0].source;
  return Array.isArray(source) ? source.join('') : source;
}"""

SAVE_EDIT_JS = """async ([path, text]) => {
  const contents = window.jupyterapp.serviceManager.contents;
  const model = await contents.get(path, {content: true});
  model.content.cells[0].source = text;
  await contents.save(path, {type: 'notebook', format: 'json', content: model.content});
}"""


def shown_first_cell(page: Any) -> str:
    return page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell").first.inner_text()


def test_a_lesson_edited_in_the_site_is_kept_and_can_start_again(
        shared_site_page: Any, site_server: SiteServer,
        site_build: tuple[Path, BuildReport]) -> None:
    page = shared_site_page.page
    original = json.loads((site_build[0] / "files" / LESSON).read_text())["cells"][0]["source"]
    original = "".join(original) if isinstance(original, list) else original
    assert MARKER not in original

    # the page the site opens on says how
    page.goto(site_server.url)
    page.wait_for_selector(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell", timeout=180_000)
    note = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell").nth(1)
    expect(note).to_contain_text(
        "To start a lesson again, close it, then right-click it in the file browser",
        timeout=30_000)
    wait_kernel_settled(page, 180_000)  # the contents page opens without a kernel
    close_documents(page)

    open_lesson(page, site_server.url, LESSON)
    close_documents(page)
    page.evaluate(SAVE_EDIT_JS, [LESSON, MARKER])

    # kept: the lesson's address, loaded again, opens the student's version
    open_lesson(page, site_server.url, LESSON)
    assert MARKER in shown_first_cell(page)
    close_documents(page)

    # reset: File browser > right-click the lesson > Delete
    page.evaluate("() => window.jupyterapp.commands.execute('filebrowser:activate')")
    item = page.locator(".jp-DirListing-item", has_text=LESSON)
    item.click(button="right")
    page.locator(".lm-Menu-item", has_text="Delete").click()
    page.locator(".jp-Dialog .jp-mod-accept").click()
    page.wait_for_function(f"async () => !(await ({FIRST_CELL_JS})({json.dumps(LESSON)}))"
                           f".includes({json.dumps(MARKER)})", timeout=30_000)
    assert page.evaluate(FIRST_CELL_JS, LESSON) == original
    assert item.count() == 1, "the lesson left the file browser"

    # and it opens as the course wrote it
    item.dblclick()
    page.wait_for_selector(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell")
    assert MARKER not in shown_first_cell(page)
    wait_kernel_idle(page, 180_000)
    close_documents(page)
    shared_site_page.assert_offline(kernel_free=True)  # the contents page was opened
