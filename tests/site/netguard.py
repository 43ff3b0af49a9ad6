"""Catch every request a browser context makes to anything but 127.0.0.1.

Two nets, because each sees what the other may miss:

- a **recording proxy** set on the browser context: Chromium sends every request of that
  context (pages, web workers, the service worker) that does not go to 127.0.0.1 to it,
  without resolving the host first; it records the request and answers 403;
- a **route** on the context: Playwright shows it every request of the context's pages with
  its full URL; anything not for 127.0.0.1 is recorded and aborted.

Chromium's own services (autofill asks Google about forms) use the context's network too,
so the site's browser turns that feature off (``SITE_BROWSER_ARGS``); nothing else is
filtered. A test then asserts that :attr:`OutsideGuard.attempts` is empty.
"""

from __future__ import annotations

import http.server
import threading
import urllib.parse
from typing import Any

__all__ = ["SITE_BROWSER_ARGS", "OutsideGuard"]

# Added to labdriver.CHROMIUM_ARGS for the site's browser: no autofill server queries.
SITE_BROWSER_ARGS = ["--disable-features=AutofillServerCommunication"]


class _RecordingProxy(http.server.BaseHTTPRequestHandler):
    def _refuse(self) -> None:
        self.server.guard.record(f"{self.command} {self.path}")  # type: ignore[attr-defined]
        self.send_error(403, "outside request blocked by the test")

    do_GET = do_POST = do_PUT = do_HEAD = do_OPTIONS = do_CONNECT = do_DELETE = _refuse

    def log_message(self, format: str, *args: Any) -> None:
        pass


def _is_local(url: str) -> bool:
    parsed = urllib.parse.urlsplit(url)
    if parsed.scheme in ("data", "blob", "about"):
        return True  # not a network request
    return parsed.hostname == "127.0.0.1"


class OutsideGuard:
    """A recording proxy and a route handler for one browser context.

    Use as a context manager; pass :meth:`context_options` to ``browser.new_context`` and
    call :meth:`attach` on the new context.
    """

    def __init__(self) -> None:
        self.attempts: list[str] = []
        self._lock = threading.Lock()
        self._proxy = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _RecordingProxy)
        self._proxy.daemon_threads = True
        self._proxy.guard = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._proxy.serve_forever, daemon=True)

    def record(self, what: str) -> None:
        with self._lock:
            self.attempts.append(what)

    def take(self) -> list[str]:
        """The attempts recorded so far (and forget them)."""
        with self._lock:
            taken, self.attempts = self.attempts, []
        return taken

    def context_options(self) -> dict[str, Any]:
        """``proxy=`` for ``browser.new_context``: everything but 127.0.0.1 goes to the proxy."""
        port = self._proxy.server_address[1]
        return {"proxy": {"server": f"http://127.0.0.1:{port}", "bypass": "127.0.0.1"}}

    def attach(self, context: Any) -> None:
        """Route every request of ``context``: 127.0.0.1 passes, anything else is recorded."""

        def route(route: Any) -> None:
            url = route.request.url
            if _is_local(url):
                route.continue_()
            else:
                self.record(f"route {route.request.method} {url}")
                route.abort()

        context.route("**/*", route)

    def __enter__(self) -> OutsideGuard:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._proxy.shutdown()
        self._proxy.server_close()
        self._thread.join(timeout=10)
