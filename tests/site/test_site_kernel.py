"""The site's kernel, on JupyterLite's own terms: the contents page starts none, a lesson's
kernel reads the site's drive through JupyterLite's service worker (left as it ships), and
a second visit still works with the worker in control of the page."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from labdriver import save_screenshot
from sitedriver import kernel_free, open_lesson, site_lessons

from course_site.serve import SiteServer

pytestmark = [pytest.mark.browser, pytest.mark.site, pytest.mark.timeout(600)]


def _first_kernel_lesson() -> str:
    return next(lesson for lesson in site_lessons() if not kernel_free(lesson))


def test_the_contents_page_starts_no_kernel(site_page: Any, site_server: Any) -> None:
    """A notebook of Markdown only, opened by its address (as the site's front page opens
    the contents), starts no Pyodide: no worker, no request for Pyodide's files, and the
    status bar says No Kernel."""
    free = [lesson for lesson in site_lessons() if kernel_free(lesson)]
    assert free, "the site has a contents page without code"
    page = site_page.page
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url) if "/static/pyodide/" in r.url else None)
    for lesson in free:
        open_lesson(page, site_server.url, lesson)
        page.wait_for_timeout(5000)  # a kernel asked for once the notebook was read shows
        status = page.locator("#jp-main-statusbar").inner_text()
        assert "No Kernel" in status, f"{lesson}: the status bar reads {status!r}"
        assert [w.url for w in page.workers] == [], f"{lesson} started a worker"
        assert asked == [], f"{lesson} asked for Pyodide: {asked}"
    site_page.assert_offline(kernel_free=True)


def test_a_second_visit_reads_the_drive_through_the_service_worker(
        site_page: Any, site_server: SiteServer, artifacts: Path) -> None:
    """A second visit (JupyterLite's service worker controls the page from the start): the
    lesson opens, and its kernel lists the site's files (os.listdir reads /api/drive, which
    only that worker answers)."""
    page = site_page.page
    lesson = _first_kernel_lesson()
    open_lesson(page, site_server.url, lesson, timeout_ms=240_000)
    page.wait_for_function("() => navigator.serviceWorker.controller !== null")
    # the manager's one heartbeat of this visit (it pings once, 20 s after it holds the
    # registration; a slow open can outlast that): watched from the visit's start
    beats: list[str] = []
    page.on("request", lambda r: beats.append(r.url)
            if r.url.endswith("/api/service-worker-heartbeat") else None)
    open_lesson(page, site_server.url, lesson, timeout_ms=240_000)
    assert page.evaluate("() => navigator.serviceWorker.controller !== null")
    # JupyterLite mounts the drive in a kernel only if its service worker manager holds a
    # registration when the kernel is made; on a busy machine the kernel can come first (its
    # files are then not the drive's: a race of JupyterLite's own). The manager pings the
    # worker 20 s after it holds the registration: a kernel restarted after that ping must
    # read the drive.
    for _ in range(240):
        if beats:
            break
        page.wait_for_timeout(500)
    assert beats, ("JupyterLite's service worker manager sent no heartbeat within 120 s of "
                   "the second visit: it holds no registration")
    page.locator(".lm-MenuBar-item", has_text="Kernel").first.click()
    page.locator(".lm-Menu-item[data-command='kernelmenu:restart']").click()
    page.locator(".jp-Dialog .jp-mod-accept").click()
    panel = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)")
    cell = panel.locator(".jp-CodeCell").first
    editor = cell.locator(".cm-content")
    try:
        # focus, not a click: a click can land while JupyterLab still lays the notebook
        # out and leave it in command mode, where Ctrl+A selects cells, not text
        editor.focus()
        page.wait_for_function("el => el.closest('.cm-editor').classList.contains("
                               "'cm-focused')", arg=editor.element_handle(), timeout=30_000)
        page.keyboard.press("Control+a")
        page.keyboard.press("Delete")
        page.keyboard.insert_text("import os\nprint(sorted(os.listdir()))")
        page.wait_for_function("el => el.innerText.includes('os.listdir')",
                               arg=editor.element_handle(), timeout=30_000)
        page.keyboard.press("Shift+Enter")
        output = cell.locator(".jp-OutputArea-output").first
        output.wait_for(timeout=120_000)
        assert lesson in output.inner_text(), output.inner_text()
    finally:
        save_screenshot(page, artifacts, "service_worker_drive")
    site_page.assert_offline()
