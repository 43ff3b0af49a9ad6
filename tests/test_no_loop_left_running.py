"""No test leaves an asyncio event loop running in pytest's thread.

Playwright's sync API counts its loop as running while it is open; a browser opened once
per session made every later ``asyncio.run`` fail, and the site tests' own Playwright with
it ("using Playwright Sync API inside the asyncio loop"). pytest collects this file after
the folders tests/browser/ ... tests/site/, whose session-scoped fixtures are still open
here: one that keeps a Playwright open fails this test. On xdist workers it runs in the
site's group, after the site's tests (conftest.py, ``JOINS``).
"""

from __future__ import annotations

import asyncio

import pytest


def test_no_event_loop_is_running_between_test_folders() -> None:
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    pytest.fail(f"an earlier test left an event loop running in this thread: {loop!r}")
