"""course_site.service_worker: the site's own files bypass JupyterLite's service worker,
which still serves the kernel's reads of the drive."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from labdriver import save_screenshot
from sitedriver import open_lesson, site_lessons

from course_site.serve import SiteServer
from course_site.service_worker import PRELUDE, SERVICE_WORKER, ServiceWorkerError, install

# The pieces of JupyterLite's worker the prelude relies on, in a stand-in for it.
WORKER = ('"use strict";const x=1;function onActivate(e){const t=new URL(location.href)'
          '.searchParams;enableCache="true"===t.get("enableCache")}function shouldDrop(e,t)'
          '{return t.pathname.includes("/api/")}self.addEventListener("fetch",onFetch);')


# What JupyterLite's worker still answers: the kernel's reads of the drive, input(), and the
# manager's heartbeat (which the test waits for below, so it is among the responses).
WORKER_SERVES = ("/api/drive", "/api/stdin/", "/api/service-worker-heartbeat")


def _site(tmp_path: Path, worker: str | None = WORKER, **config: Any) -> Path:
    if worker is not None:
        (tmp_path / SERVICE_WORKER).write_text(worker)
    (tmp_path / "jupyter-lite.json").write_text(json.dumps({"jupyter-config-data": config}))
    return tmp_path


def test_the_prelude_comes_first_after_the_strict_directive(tmp_path: Path) -> None:
    install(_site(tmp_path))
    text = (tmp_path / SERVICE_WORKER).read_text()
    assert text.startswith('"use strict";\n' + PRELUDE)
    assert text.endswith(WORKER.removeprefix('"use strict";'))
    assert "stopImmediatePropagation" in PRELUDE


@pytest.mark.parametrize(("worker", "config", "expected"), [
    (None, {}, "expected JupyterLite's service worker"),
    (WORKER.replace('"fetch",onFetch', '"fetch",other'), {}, "not made as expected"),
    (WORKER, {"enableServiceWorkerCache": "true"}, "cache on"),
])
def test_a_worker_not_as_expected_stops_the_build(tmp_path: Path, worker: str | None,
                                                  config: dict[str, str], expected: str
                                                  ) -> None:
    site = _site(tmp_path, worker, **config)
    with pytest.raises(ServiceWorkerError, match=expected):
        install(site)
    if worker is not None:
        assert (site / SERVICE_WORKER).read_text() == worker, "left as it was"


def test_the_prelude_goes_in_once(tmp_path: Path) -> None:
    install(_site(tmp_path))
    with pytest.raises(ServiceWorkerError, match="already"):
        install(tmp_path)


@pytest.mark.browser
@pytest.mark.site
@pytest.mark.timeout(600)
def test_files_bypass_the_service_worker_and_the_kernel_still_reads_the_drive(
        site_page: Any, site_server: SiteServer, artifacts: Path) -> None:
    """A second visit (the worker controls the page from the start): no file of the site
    comes through the worker, and the kernel lists the lessons through it (/api/drive)."""
    page = site_page.page
    lesson = site_lessons()[2]
    open_lesson(page, site_server.url, lesson, timeout_ms=240_000)
    page.wait_for_function("() => navigator.serviceWorker.controller !== null")
    served: list[tuple[str, bool]] = []
    page.on("response", lambda r: served.append((r.url, r.from_service_worker)))
    # the manager's one heartbeat of this visit (it pings once, 20 s after it holds the
    # registration; a slow open can outlast that): watched from the visit's start
    beats: list[str] = []
    page.on("request", lambda r: beats.append(r.url)
            if r.url.endswith("/api/service-worker-heartbeat") else None)
    open_lesson(page, site_server.url, lesson, timeout_ms=240_000)
    assert page.evaluate("() => navigator.serviceWorker.controller !== null")
    assert len(served) > 50, f"only {len(served)} responses seen"
    through = [url for url, by_worker in served
               if by_worker and not any(api in url for api in WORKER_SERVES)]
    assert through == [], f"{len(through)} files came through the service worker: {through[:5]}"
    # JupyterLite mounts the drive in a kernel only if its service worker manager holds a
    # registration when the kernel is made; on a busy machine the kernel can come first (its
    # files are then not the drive's: a race of JupyterLite's own, seen in this test, even
    # for a kernel restarted seconds later). The manager pings the worker 20 s after it
    # holds the registration: a kernel restarted after that ping must read the drive.
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
