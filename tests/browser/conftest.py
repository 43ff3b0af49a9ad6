"""Fixtures for the browser tests: Debian's Chromium, a JupyterLab on a copy of the course.

Every test here is marked ``browser`` (select with ``-m browser``, skip with
``-m 'not browser'``). Without /usr/bin/chromium or playwright the tests skip, and the skip
message says what to install; under CI (``CI=true``, as .ci/run runs) they fail instead.
Kept in tests/browser/ on purpose: pytest-playwright, if it is installed, must not see a
test asking for its own (downloaded) browser.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from labdriver import (
    ARTIFACTS,
    REPO,
    LabServer,
    copy_tree,
    launch_chromium,
    missing_requirements,
    shutdown_kernels,
)
from widget_notebooks import write_selftest_notebooks


@pytest.fixture(scope="session")
def browser_requirements() -> None:
    message = missing_requirements()
    if message and os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        # CI runs scripts/install-system-packages.sh first: a skip there would hide a
        # missing install step, so it is an error.
        pytest.fail(f"CI={os.environ['CI']}: {message}", pytrace=False)
    if message:
        pytest.skip(message)


@pytest.fixture(scope="module")
def chromium(browser_requirements: None) -> Iterator[Any]:
    """Debian's Chromium, one per test module.

    Not one per session: while Playwright's sync API is open, its event loop counts as
    running in this thread, so every later test's ``asyncio.run`` (and the site tests' own
    Playwright) would fail "inside the asyncio loop". Per module, it is closed again before
    the tests of another folder run.
    """
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        yield browser
        browser.close()


@pytest.fixture
def lab_page(chromium: Any) -> Iterator[Any]:
    """A fresh browser context (no cookies, no storage) and page, 1400×1000."""
    context = chromium.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(30_000)
    yield page
    context.close()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """test-artifacts/browser/ in the checkout (gitignored): screenshots land here."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="session")
def course_lab(browser_requirements: None, tmp_path_factory: pytest.TempPathFactory
               ) -> Iterator[LabServer]:
    """One JupyterLab for the session, on a throw-away copy of notebooks/ plus test notebooks.

    The browser opens copies only: autosave must never write into the course's own files.
    The app is exposed to the page (``window.jupyterapp``) so that a test can switch
    themes with JupyterLab's own command and ask the kernel what a widget holds.
    """
    root = tmp_path_factory.mktemp("lab-root")
    if (REPO / "notebooks").is_dir():
        copy_tree(REPO / "notebooks", root / "notebooks")
    write_selftest_notebooks(root / "selftest")
    with LabServer(root, tmp_path_factory.mktemp("lab-scratch"),
                   ["--LabApp.expose_app_in_browser=True"]) as server:
        yield server


@pytest.fixture
def fresh_kernels(course_lab: LabServer) -> Iterator[LabServer]:
    """The session's server, with every kernel closed after the test (2 shared cores)."""
    yield course_lab
    shutdown_kernels(course_lab)

