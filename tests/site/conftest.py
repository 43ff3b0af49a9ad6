"""Fixtures for the offline site's tests: one site built per session, served on 127.0.0.1.

The site is built from this checkout by ``course_site.build`` into a temporary folder, once
per test session (downloads come from the cache, ``.site-cache/`` or $COURSE_SITE_CACHE; the
first build in a fresh clone fills it from PyPI and npm). Browser tests open it in Debian's
Chromium through a context whose every request that is not for 127.0.0.1 is blocked and
recorded (tests/site/netguard.py); each test asserts that none was attempted.

Without the build tools (the extra ``site``, in ``.site-venv/``: course_site.tools), Node.js
or Chromium the tests skip with a
message; under CI (``CI=true``) that is an error instead.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sitedriver import (
    ARTIFACTS,
    NO_KERNEL_WIDGETS_ERROR,
    console_problems,
    expose_the_app,
    launch_site_browser,
)

from course_site.build import BuildReport, build
from course_site.serve import SiteServer


def _skip_or_fail(message: str) -> None:
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"CI={os.environ['CI']}: {message}", pytrace=False)
    pytest.skip(message)


def missing_build_tools() -> str | None:
    """What the site's build needs and this machine lacks, or None."""
    from course_site.tools import ToolsError, find_tools

    missing = []
    try:
        find_tools()
    except ToolsError as err:
        missing.append(f"its build tools (`./course test` installs them; {err})")
    for program in ("node", "npm"):
        if shutil.which(program) is None:
            missing.append(f"{program} (Debian packages nodejs and npm, installed by "
                           "scripts/install-system-packages.sh)")
    return ("The site tests need " + " and ".join(missing) + ".") if missing else None


@pytest.fixture(scope="session")
def site_build(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, BuildReport]:
    """The site, built once per session from this checkout: (its folder, the build report)."""
    message = missing_build_tools()
    if message:
        _skip_or_fail(message)
    output = tmp_path_factory.mktemp("site") / "site"
    report = build(output, log=lambda line: print(f"[site build] {line}"))
    return output, report


@pytest.fixture(scope="session")
def site_server(site_build: tuple[Path, BuildReport]) -> Iterator[SiteServer]:
    with SiteServer(site_build[0]) as server:
        yield server


@pytest.fixture(scope="module")
def site_browser(site_build: tuple[Path, BuildReport]) -> Iterator[Any]:
    """Debian's Chromium (the browser tests' requirements), one per test module: an open
    Playwright leaves its event loop running in this thread (see tests/browser/conftest.py)."""
    from labdriver import missing_requirements

    message = missing_requirements()
    if message:
        _skip_or_fail(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = launch_site_browser(playwright)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """test-artifacts/site/ in the checkout (gitignored): screenshots land here."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


class SitePage:
    """A fresh browser context on the site: its page, its guard and its console problems."""

    def __init__(self, page: Any, guard: Any, console: list[str]) -> None:
        self.page = page
        self.guard = guard
        self.console = console

    def assert_offline(self, kernel_free: bool = False) -> None:
        """No request left for anything but 127.0.0.1, and the console shows no breakage
        (``kernel_free``: a notebook without a kernel was opened, and the widget manager's
        known error about it, ``NO_KERNEL_WIDGETS_ERROR``, may be there once)."""
        attempts = self.guard.take()
        assert attempts == [], ("the site tried to reach outside 127.0.0.1 (blocked):\n"
                                + "\n".join(attempts))
        problems = console_problems(self.console)
        if kernel_free and NO_KERNEL_WIDGETS_ERROR in problems:
            problems.remove(NO_KERNEL_WIDGETS_ERROR)
        self.console.clear()  # a page shared by several tests: each checks its own messages
        assert problems == [], "the browser console shows:\n" + "\n".join(problems)


@contextlib.contextmanager
def _guarded_page(browser: Any, expose_app: bool = False) -> Iterator[SitePage]:
    """A new context (empty cache and storage, 1400×1000) whose outside requests are caught;
    with ``expose_app``, the site's JupyterLab is reachable as ``window.jupyterapp``."""
    from netguard import OutsideGuard

    with OutsideGuard() as guard:
        context = browser.new_context(viewport={"width": 1400, "height": 1000},
                                      **guard.context_options())
        guard.attach(context)
        if expose_app:
            expose_the_app(context)
        page = context.new_page()
        page.set_default_timeout(60_000)
        console: list[str] = []
        page.on("console", lambda m: console.append(f"{m.type}: {m.text}")
                if m.type in ("error", "warning") else None)
        page.on("pageerror", lambda err: console.append(f"Uncaught: {err}"))
        yield SitePage(page, guard, console)
        context.close()
        late = guard.take()
    if late:
        pytest.fail("outside requests after the test's own check:\n" + "\n".join(late))


@pytest.fixture
def site_page(site_browser: Any) -> Iterator[SitePage]:
    """A new context (empty cache and storage, 1400×1000) whose outside requests are caught."""
    with _guarded_page(site_browser) as page:
        yield page


@pytest.fixture(scope="module")
def shared_site_page(site_browser: Any) -> Iterator[SitePage]:
    """One guarded context and page for a whole module, the app exposed (``open_in_app``):
    a student going from lesson to lesson in one tab, and a page load saved per lesson."""
    with _guarded_page(site_browser, expose_app=True) as page:
        yield page
