"""Serve a built site on 127.0.0.1, as any static web host would.

Used by ``./course site --serve``, by the tests and by the benchmark. Files are sent with
``Cache-Control: no-cache``: a browser keeps them and, on the next visit, asks only whether
they changed (``304 Not Modified``), so a second visit loads nothing twice while a rebuilt
site is never served stale. No directory listings, nothing outside the site's folder.
"""

from __future__ import annotations

import functools
import http.server
import socket
import threading
from pathlib import Path
from typing import Any, ClassVar

__all__ = ["SiteServer", "port_taken"]


def port_taken(port: int) -> bool:
    """Whether a server already listens on 127.0.0.1:``port`` (so SiteServer could not).

    Asked before the site's build, so that a busy port is said at once, not after it.

    >>> with socket.socket() as busy:
    ...     busy.bind(("127.0.0.1", 0)); busy.listen()
    ...     port_taken(busy.getsockname()[1])
    True
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        # as http.server binds (allow_reuse_address): a port left in TIME_WAIT is free
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


class _Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map: ClassVar[dict[str, str]] = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".wasm": "application/wasm",
        ".js": "text/javascript",
        ".mjs": "text/javascript",
        ".json": "application/json",
        ".ipynb": "application/json",
        ".whl": "application/zip",
    }

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-cache")
        super().end_headers()

    def list_directory(self, path: Any) -> None:
        self.send_error(404, "No directory listing")
        return None

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.verbose:  # type: ignore[attr-defined]
            super().log_message(format, *args)


class SiteServer:
    """A static web server for ``root`` on 127.0.0.1, in a background thread.

    Use it as a context manager; ``port=0`` takes a free port.

    Examples
    --------
    >>> import tempfile, urllib.request
    >>> root = Path(tempfile.mkdtemp()); _ = (root / "index.html").write_text("hello")
    >>> with SiteServer(root) as server:
    ...     urllib.request.urlopen(server.url).read()
    b'hello'
    """

    def __init__(self, root: Path, port: int = 0, verbose: bool = False) -> None:
        self.root = Path(root).resolve()
        if not (self.root / "index.html").is_file():
            raise FileNotFoundError(f"'root' must be a built site with an index.html "
                                    f"(got {self.root})")
        handler = functools.partial(_Handler, directory=str(self.root))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
        self.httpd.daemon_threads = True
        self.httpd.verbose = verbose  # type: ignore[attr-defined]
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    @property
    def url(self) -> str:
        """The site's address, ending in a slash."""
        return f"http://127.0.0.1:{self.port}/"

    def start(self) -> SiteServer:
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def __enter__(self) -> SiteServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
