"""Drive the offline site in Debian's Chromium: for tests/site and benchmarks/site_load.py.

It reuses tests/browser/labdriver.py (Chromium, running cells, moving widgets: the site
runs the same JupyterLab, in the browser) and adds what differs: the site's URLs, its
lessons, and the browser context with the outside-request guard (tests/site/netguard.py).
"""

from __future__ import annotations

import json
import re
import sys
import urllib.parse
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "browser"))

from labdriver import (
    CHROMIUM,
    CHROMIUM_ARGS,
    NO_KERNEL_WIDGETS_ERROR,
    REPO,
    wait_kernel_settled,
)
from netguard import SITE_BROWSER_ARGS

from course_site.build import KERNEL_PLUGIN
from course_site.lessons import NOT_LESSONS, lesson_needs

__all__ = [
    "ARTIFACTS",
    "NOTEBOOKS",
    "NO_KERNEL_WIDGETS_ERROR",
    "console_problems",
    "expose_the_app",
    "kernel_free",
    "launch_site_browser",
    "lesson_url",
    "open_lesson",
    "site_config",
    "site_lessons",
    "site_preload",
]

NOTEBOOKS = REPO / "notebooks"
ARTIFACTS = REPO / "test-artifacts" / "site"
# Console lines that mean the site is assembled wrong (a JupyterLab extension built for
# other JupyterLab versions, a missing module), whatever the page shows.
CONSOLE_PROBLEMS = re.compile(
    r"Unsatisfied version|No satisfying version|Shared module .* doesn't exist|"
    r"Failed to create module|Failed to load resource|Uncaught|^error: .*Error: ", re.I)



def site_lessons() -> list[str]:
    """Every notebook the site serves, as its path in the site (what course_site copies)."""
    return sorted(p.relative_to(NOTEBOOKS).as_posix() for p in NOTEBOOKS.rglob("*.ipynb")
                  if not NOT_LESSONS & set(p.relative_to(NOTEBOOKS).parts))


def kernel_free(lesson: str) -> bool:
    """Whether the site's notebook ``lesson`` has no code cell (the contents page): it opens
    without a kernel (course_site.lessons.LessonNeeds.kernel)."""
    notebook = json.loads((NOTEBOOKS / lesson).read_text(encoding="utf-8"))
    return not lesson_needs(notebook).kernel


def site_config(site: Path) -> dict[str, Any]:
    """The configuration a built ``site`` gives its apps (``jupyter-lite.json``)."""
    return json.loads((site / "jupyter-lite.json").read_text())["jupyter-config-data"]


def site_preload(site: Path) -> list[str]:
    """The packages a built ``site``'s kernel has Pyodide load as it starts."""
    return list(site_config(site)["litePluginSettings"][KERNEL_PLUGIN]["loadPyodideOptions"][
        "packages"])


def launch_site_browser(playwright: Any) -> Any:
    """Debian's Chromium with the course's flags, and no autofill queries (see netguard)."""
    return playwright.chromium.launch(executable_path=str(CHROMIUM),
                                      args=[*CHROMIUM_ARGS, *SITE_BROWSER_ARGS], headless=True)


def lesson_url(site_url: str, lesson: str) -> str:
    """The address that opens ``lesson`` in the site's JupyterLab."""
    return f"{site_url}lab/index.html?path={urllib.parse.quote(lesson)}"


def open_lesson(page: Any, site_url: str, lesson: str, timeout_ms: float = 180_000) -> None:
    """Open ``lesson`` and wait until its Pyodide kernel is idle (a notebook of Markdown only:
    until it shows with no kernel)."""
    page.goto(lesson_url(site_url, lesson), timeout=timeout_ms)
    page.wait_for_selector(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell", timeout=timeout_ms)
    wait_kernel_settled(page, timeout_ms)


def expose_the_app(context: Any) -> None:
    """Have the site's JupyterLab set ``window.jupyterapp`` in ``context``'s pages, as
    ``--LabApp.expose_app_in_browser`` does for a server (``labdriver.open_in_app`` needs it).

    The site's ``jupyter-lite.json`` files, as the page fetches them, get
    ``exposeAppInBrowser``; the built files are not changed. Registered after the context's
    outside-request guard, this route sees those requests first (Playwright tries the newest
    route first), and only 127.0.0.1 is asked for them. A response that is not a JSON object
    (a 404, say) goes to the page as it came.
    """
    def add_option(route: Any) -> None:
        response = route.fetch()
        try:
            config = response.json() if response.ok else None
        except ValueError:
            config = None
        if not isinstance(config, dict):
            route.fulfill(response=response)
            return
        config.setdefault("jupyter-config-data", {})["exposeAppInBrowser"] = "true"
        route.fulfill(response=response, json=config)

    context.route(re.compile(r"^http://127\.0\.0\.1:\d+/(.*/)?jupyter-lite\.json(\?.*)?$"),
                  add_option)


def console_problems(messages: list[str]) -> list[str]:
    """The console messages that say the site is broken (see CONSOLE_PROBLEMS)."""
    return [m for m in messages if CONSOLE_PROBLEMS.search(m)]
