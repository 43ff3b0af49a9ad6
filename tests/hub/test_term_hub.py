"""A class's JupyterLab through JupyterHub in Chromium: the students' and the instructor's
servers as each of them sees it (the Nbgrader menu, no news prompt).

Real Unix users (an instructor, two students), deploy/jupyterhub_config.py run by root on
127.0.0.1, Debian's Chromium through Playwright. Screenshots go to the test's tmp dir (the
paths are printed). Needs root (see conftest.py).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from classroom import ClassRun, Hub, Person, ensure_env

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "browser"))

pytestmark = [pytest.mark.hub, pytest.mark.slow, pytest.mark.timeout(1500)]


@pytest.fixture(scope="module")
def term(class_ready: None) -> Iterator[tuple[ClassRun, Hub]]:
    """An instructor and two students (JupyterLab only), the hub running; nothing released."""
    import shutil

    if shutil.which("configurable-http-proxy") is None:
        pytest.skip("configurable-http-proxy is missing: run scripts/install-system-packages.sh")
    ensure_env()
    with ClassRun(n_students=0, extra_students=2) as run:
        run.instructor_formgrader_config()
        hub = run.hub = Hub(run)
        hub.start()
        yield run, hub


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """One Chromium for the module (one sync Playwright per module)."""
    from labdriver import launch_chromium, missing_requirements
    from playwright.sync_api import sync_playwright

    if missing_requirements():
        pytest.skip(missing_requirements())
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            yield browser
        finally:
            browser.close()


def shot(page: Any, folder: Path, name: str) -> Path:
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    print(f"screenshot: {path}")
    return path


def open_lab(chromium: Any, hub: Hub, person: Person) -> Any:
    """``person`` logs in to the hub in a browser context of their own; their JupyterLab."""
    page = chromium.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    page.set_default_timeout(90_000)
    page.goto(f"{hub.base}/hub/login")
    page.fill("#username_input", person.name)
    page.fill("#password_input", person.password)
    page.click("#login_submit")
    page.wait_for_url(f"{hub.base}/user/{person.name}/lab**", timeout=240_000)
    page.wait_for_selector("#jp-main-dock-panel")
    page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").wait_for()
    return page


def nbgrader_menu(page: Any) -> tuple[list[str], list[str]]:
    """Open the Nbgrader menu: the labels of the entries a user sees in it, and the
    commands of the entries it holds but hides (their plugins are off), each of which must
    be disabled too (the keyboard skips it)."""
    page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").click()
    menu = page.locator(".lm-Menu").last
    menu.wait_for()
    items = menu.locator(".lm-Menu-item:not([data-type='separator'])")
    shown, hidden = [], []
    for i in range(items.count()):
        item = items.nth(i)
        if item.is_visible():
            shown.append(item.locator(".lm-Menu-itemLabel").inner_text().strip())
        else:
            classes = (item.get_attribute("class") or "").split()
            hidden.append(item.get_attribute("data-command")
                          + ("" if "lm-mod-disabled" in classes else " (enabled!)"))
    page.keyboard.press("Escape")
    return shown, hidden


def palette(page: Any, text: str) -> list[str]:
    """The command palette's entries for ``text`` (what a user finds by typing it)."""
    page.keyboard.press("Control+Shift+c")
    box = page.locator(".lm-CommandPalette-input").first
    box.wait_for()
    box.fill(text)
    page.wait_for_timeout(500)
    found = [t.strip() for t in page.locator(
        ".lm-CommandPalette-item .lm-CommandPalette-itemLabel").all_inner_texts()]
    page.keyboard.press("Escape")
    return found


STUDENT_HIDDEN = ["nbgrader:open-course-list", "nbgrader:open-formgrader",
                  "nbgrader:open-formgrader-local"]


@pytest.mark.parametrize("who", ["student", "instructor"])
def test_nbgrader_menu_has_no_blank_entries_and_no_news_prompt(term, chromium, tmp_path, who):
    """A student's Nbgrader menu shows only Assignment List (formgrader, the course list and
    Create Assignment are the instructor's: their entries stay hidden and disabled), in
    JupyterLab and in Notebook 7's file view; nobody's menu or command palette shows an
    entry without a name; no notification asks about Jupyter news."""
    run, hub = term
    person = run.hub_students[0] if who == "student" else run.instructor
    page = open_lab(chromium, hub, person)
    try:
        page.wait_for_timeout(4000)  # a news prompt comes up within a second or two
        toasts = page.locator(".Toastify__toast").all_inner_texts()
        lab_shown, lab_hidden = nbgrader_menu(page)
        shot(page, tmp_path, f"{who}_lab")
        found = palette(page, "nbgrader")
        page.goto(f"{hub.base}/user/{person.name}/tree")
        page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").wait_for()
        page.wait_for_timeout(4000)
        toasts += page.locator(".Toastify__toast").all_inner_texts()
        tree_shown, tree_hidden = nbgrader_menu(page)
        shot(page, tmp_path, f"{who}_tree")
    finally:
        page.context.close()
    assert toasts == [], f"notifications: {toasts}"
    for shown in (lab_shown, tree_shown, found):
        assert "" not in shown, shown
    if who == "student":
        assert not [h for h in lab_hidden + tree_hidden if h.endswith("(enabled!)")]
        assert lab_shown == tree_shown == found == ["Assignment List"], (
            lab_shown, tree_shown, found)
        assert lab_hidden == [*STUDENT_HIDDEN, "nbgrader:open-create-assignment"]
        assert tree_hidden == STUDENT_HIDDEN
    else:
        assert {"Assignment List", "Course List", "Formgrader"} <= set(lab_shown), lab_shown
