"""The outside-request guard of the site tests catches what it must (so a green run means it).

- A page served from 127.0.0.1 that fetches an outside URL itself and from a web worker:
  both attempts are recorded (and none reaches anything).
- The built site with JupyterLite's default kernel settings put back (no ``pyodideUrl``: the
  kernel then loads Pyodide from its CDN): opening a lesson is caught as an attempt to reach
  the CDN. This is the mistake the site's build exists to avoid.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from netguard import OutsideGuard
from sitedriver import lesson_url, site_lessons

from course_site.build import KERNEL_PLUGIN
from course_site.serve import SiteServer

pytestmark = [pytest.mark.browser, pytest.mark.site, pytest.mark.timeout(300)]

OUTSIDE_PAGE = "https://example.com/from-the-page.txt"
OUTSIDE_WORKER = "https://example.org/from-a-worker.txt"


def _wait_for(guard: OutsideGuard, text: str, page: Any, timeout_s: float) -> list[str]:
    seen: list[str] = []
    for _ in range(int(timeout_s * 4)):
        seen += guard.take()
        if any(text in s for s in seen):
            break
        page.wait_for_timeout(250)
    return seen


def test_guard_records_page_and_worker_requests(site_browser: Any, tmp_path: Path) -> None:
    (tmp_path / "worker.js").write_text(f"fetch({json.dumps(OUTSIDE_WORKER)}).catch(() => 0);")
    (tmp_path / "index.html").write_text(
        "<!doctype html><title>outside</title><script>"
        f"fetch({json.dumps(OUTSIDE_PAGE)}).catch(() => 0);"
        "new Worker('worker.js');</script>")
    with SiteServer(tmp_path) as server, OutsideGuard() as guard:
        context = site_browser.new_context(**guard.context_options())
        guard.attach(context)
        page = context.new_page()
        page.goto(server.url)
        seen = _wait_for(guard, "example.org", page, 20)
        seen += _wait_for(guard, "example.com", page, 5)
        context.close()
    # the page's request is seen by the route (full URL), the worker's by the route or the
    # proxy (which sees only the host of an https request)
    assert any("example.com/from-the-page.txt" in s for s in seen), seen
    assert any("example.org" in s for s in seen), seen


def test_default_cdn_kernel_is_caught(site_build: Any, site_browser: Any,
                                      tmp_path: Path) -> None:
    """A site that lets the kernel fetch Pyodide from the CDN fails the guard."""
    site = tmp_path / "cdn-site"
    shutil.copytree(site_build[0], site, copy_function=os.link)  # hard links: cheap
    config_path = site / "jupyter-lite.json"
    config = json.loads(config_path.read_text())
    settings = config["jupyter-config-data"]["litePluginSettings"][KERNEL_PLUGIN]
    del settings["pyodideUrl"]  # JupyterLite's default: Pyodide from cdn.jsdelivr.net
    config_path.unlink()  # a hard link: write a new file, never into the shared one
    config_path.write_text(json.dumps(config))
    with SiteServer(site) as server, OutsideGuard() as guard:
        context = site_browser.new_context(**guard.context_options())
        guard.attach(context)
        page = context.new_page()
        page.goto(lesson_url(server.url, site_lessons()[-1]))
        seen = _wait_for(guard, "cdn.jsdelivr.net", page, 90)
        context.close()
    assert any("cdn.jsdelivr.net" in s for s in seen), (
        f"the kernel's CDN request was not caught; recorded: {seen}")
