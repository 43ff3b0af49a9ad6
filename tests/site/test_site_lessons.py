"""Every lesson of the offline site, in Chromium, with nothing reachable but 127.0.0.1.

Per lesson, in one browser context and page (its cache empty at first) for the module, as a
student going from lesson to lesson in one tab: open it (the first by its address, as a link
to the site does; each next one in the loaded app, after the one before is closed and its
kernel shut down), Run > Run All Cells, no error or stderr output, no widget that failed to
render, no console message that says the site is assembled wrong; then one control of each
kind in every cell that shows controls is moved and what the page shows must change
(tests/browser/labdriver.py does both, as for JupyterLab). The cold first visit of a lesson
by its address, the kernel started as the page opens, is tested in test_early_kernel.py.
A lesson the build marked as not fully runnable in the browser must show that note instead.
Every request not for 127.0.0.1 is blocked, and one attempted fails the test. A screenshot per
lesson goes to test-artifacts/site/<lesson>.png.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from labdriver import (
    check_widgets_respond,
    open_in_app,
    page_problems,
    run_all_cells,
    save_screenshot,
    sliders_unannounced,
)
from sitedriver import NOTEBOOKS, expose_the_app, kernel_free, open_lesson, site_lessons
from test_lab_lessons import shows_widgets

from course_site.serve import SiteServer

pytestmark = [pytest.mark.browser, pytest.mark.site, pytest.mark.timeout(600)]


def _shot_name(lesson: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", lesson.removesuffix(".ipynb"))


def open_next(page: Any, site_url: str, lesson: str) -> None:
    """Open ``lesson``: by its address in a page not on the site yet, else in the app."""
    if not page.url.startswith(site_url):
        open_lesson(page, site_url, lesson)
        assert page.evaluate("() => !!window.jupyterapp"), "the app was not exposed"
    else:
        open_in_app(page, None, lesson, timeout_ms=180_000)


@pytest.mark.parametrize("lesson", site_lessons())
def test_lesson_runs_offline_in_the_browser(lesson: str, shared_site_page: Any,
                                            site_server: SiteServer, site_build: Any,
                                            artifacts: Path) -> None:
    site_page = shared_site_page
    page = site_page.page
    problems = site_build[1].lessons[lesson]
    open_next(page, site_server.url, lesson)
    try:
        if problems:
            note = page.locator(".jp-MarkdownCell", has_text="cannot run completely").first
            assert note.is_visible(), f"{lesson}: the site does not say it cannot run fully"
            for problem in problems:
                assert problem.split(":")[0].strip("`") in note.inner_text()
            site_page.assert_offline(kernel_free(lesson))
            return
        run_all_cells(page, timeout_ms=300_000)
        found = page_problems(page)
        assert found == [], f"{lesson} shows errors after Run All:\n" + "\n".join(found)
        if shows_widgets(NOTEBOOKS / lesson):
            # every slider says its name and the value it shows, as in JupyterLab
            assert sliders_unannounced(page) == [], lesson
            moves = check_widgets_respond(page, timeout_s=30)
            print(f"{lesson}:", *moves, sep="\n  ")
        else:
            assert page.locator(".jp-NotebookPanel .jupyter-widgets").count() == 0
        site_page.assert_offline(kernel_free(lesson))
    finally:
        save_screenshot(page, artifacts, _shot_name(lesson))


def test_every_lesson_is_in_the_site(site_build: Any) -> None:
    """The parametrized test must not pass by finding no lesson; the build serves them all."""
    assert site_lessons(), f"no notebooks under {NOTEBOOKS}"
    assert sorted(site_build[1].lessons) == site_lessons()
    unnoted = [lesson for lesson, problems in site_build[1].lessons.items() if not problems]
    assert unnoted, "every lesson is marked as not runnable in the browser"


def test_exposing_the_app_changes_only_the_configuration(site_browser: Any,
                                                         site_server: SiteServer) -> None:
    """The route behind ``shared_site_page`` adds ``exposeAppInBrowser`` to the site's
    configuration as served, and passes what is not a configuration (a 404) as it came."""
    context = site_browser.new_context()
    try:
        expose_the_app(context)
        page = context.new_page()
        served = page.goto(f"{site_server.url}jupyter-lite.json")
        assert served.ok and served.json()["jupyter-config-data"]["exposeAppInBrowser"] == "true"
        missing = page.goto(f"{site_server.url}no-such-folder/jupyter-lite.json")
        assert missing.status == 404
    finally:
        context.close()
