"""Every lesson of the offline site, in Chromium, with nothing reachable but 127.0.0.1.

Per lesson, in one browser context and page (its cache empty at first) for the module, as a
student going from lesson to lesson in one tab: open it (the first by its address, as a link
to the site does; each next one in the loaded app, after the one before is closed and its
kernel shut down), Run > Run All Cells, no error or stderr output, no widget that failed to
render, no console message that says the site is assembled wrong; then one control of each
kind in every cell that shows controls is moved and what the page shows must change
(tests/browser/labdriver.py does both, as for JupyterLab); axe-core, once in each theme,
finds no serious or critical violation in the course's content (JupyterLite's own interface
may break the rules listed in JUPYTERLITE_AXE_RULES, no other). The contents page's missing
kernel and a second visit's drive are tested in test_site_kernel.py.
A lesson the build marked as not fully runnable in the browser must show that note instead.
Every request not for 127.0.0.1 is blocked, and one attempted fails the test. A screenshot per
lesson goes to test-artifacts/site/<lesson>.png.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from labdriver import (
    check_widgets_respond,
    open_in_app,
    page_problems,
    run_all_cells,
    save_screenshot,
    set_theme,
    sliders_unannounced,
)
from sitedriver import NOTEBOOKS, expose_the_app, kernel_free, open_lesson, site_lessons
from test_lab_lessons import JUPYTERLAB_AXE_RULES, accessibility_problems, shows_widgets

from course_site.serve import SiteServer

pytestmark = [pytest.mark.browser, pytest.mark.site, pytest.mark.timeout(600)]


def _shot_name(lesson: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", lesson.removesuffix(".ipynb"))


#: axe-core rules (WCAG 2.1 A/AA) that the site's JupyterLab (JupyterLite 0.6.4, JupyterLab
#: 4.4), not a cell's output or rendered markdown, breaks at "serious" or "critical": the
#: same four as JupyterLab 4's in the lab test. Seen with none allowed (lessons 00, 04, 16):
#: aria-allowed-attr (the file browser's toolbar buttons, jp-button with aria-pressed),
#: aria-input-field-name (each code cell's CodeMirror editor, a textbox with no name),
#: aria-required-children (the cell feed, role "feed" whose children are not articles),
#: button-name (a markdown heading's collapse button). Any other rule there, and any rule
#: in the course's own content, fails the test.
JUPYTERLITE_AXE_RULES: frozenset[str] = JUPYTERLAB_AXE_RULES


def axe_in_both_themes(page: Any, lesson: str) -> list[str]:
    """axe-core once per theme on the lesson as it is (after Run All): its problems as lines
    (accessibility_problems, with JupyterLite's own rules allowed outside the content)."""
    problems = []
    started = time.perf_counter()
    for theme in ("dark", "light"):  # light last: the next lesson opens in it
        set_theme(page, theme)
        problems += accessibility_problems(page, theme, lesson.removesuffix(".ipynb"),
                                           JUPYTERLITE_AXE_RULES)
    print(f"{lesson}: axe-core in both themes, {time.perf_counter() - started:.1f} s")
    return problems


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
            found = axe_in_both_themes(page, lesson)
            assert found == [], f"{lesson}:\n" + "\n".join(found)
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
        # after the moves too: a control a move re-rendered must keep its name
        found = axe_in_both_themes(page, lesson)
        assert found == [], f"{lesson}:\n" + "\n".join(found)
        site_page.assert_offline(kernel_free(lesson))
    finally:
        save_screenshot(page, artifacts, _shot_name(lesson))


@pytest.mark.timeout(300)
def test_the_sites_axe_check_catches_the_course_content(site_page: Any, site_build: Any,
                                                        tmp_path: Path) -> None:
    """axe-core in the site fails on the course's own content: a copy of the site whose
    contents page has a link with no text (axe link-name, serious) in its rendered
    markdown. (The contents page opens without a kernel: no Pyodide to wait for.)"""
    lesson = next(lesson for lesson in site_lessons() if kernel_free(lesson))
    copy = tmp_path / "site"
    shutil.copytree(site_build[0], copy, copy_function=shutil.copy)
    path = copy / "files" / lesson
    notebook = json.loads(path.read_text(encoding="utf-8"))
    first = notebook["cells"][0]
    first["source"] = '<a href="#top"></a>\n\n' + "".join(first["source"])
    path.write_text(json.dumps(notebook), encoding="utf-8")
    expose_the_app(site_page.page.context)
    with SiteServer(copy) as server:
        open_lesson(site_page.page, server.url, lesson)
        found = axe_in_both_themes(site_page.page, lesson)
    assert [line.split(" in ", 1)[0] for line in found] == [
        "dark: axe link-name (serious)", "light: axe link-name (serious)"], found
    assert all(' in the course: <a href="#top" ' in line for line in found), found
    site_page.assert_offline(kernel_free=True)


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
