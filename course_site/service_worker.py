"""Keep the site's own files out of JupyterLite's service worker.

JupyterLite registers ``service-worker.js`` (at the site's root) for two things the kernel
needs: reading the files of the site's drive (``/api/drive``) and ``input()``
(``/api/stdin/``). Its fetch handler also answers every other GET with ``fetch(request)``
when its cache is off, as it is on this site: the worker's thread then passes on every file
the page and the kernel load, on every visit. :func:`install` puts a listener ahead of
JupyterLite's (``service_worker_prelude.js``) that leaves those requests unanswered, so the
browser fetches them itself; the /api/ requests reach JupyterLite's handler as before.
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["PRELUDE", "SERVICE_WORKER", "ServiceWorkerError", "install"]

HERE = Path(__file__).resolve().parent
SERVICE_WORKER = Path("service-worker.js")
PRELUDE = (HERE / "service_worker_prelude.js").read_text(encoding="utf-8")
# What the prelude relies on in JupyterLite's worker: a fetch listener, its pass-through
# for what is not under /api/, and the option that would turn its cache on.
_EXPECTED = ('self.addEventListener("fetch",onFetch)', 'includes("/api/")',
             '"true"===t.get("enableCache")')


class ServiceWorkerError(RuntimeError):
    """The site's service worker is not what :func:`install` expects."""


def install(site: Path) -> None:
    """Put the prelude at the head of the built ``site``'s service worker.

    Raises
    ------
    ServiceWorkerError
        If the worker is missing, has the prelude already, is not made as expected, or the
        site turns the worker's cache on (the prelude would bypass it).
    """
    path = site / SERVICE_WORKER
    if not path.is_file():
        raise ServiceWorkerError(f"expected JupyterLite's service worker at {path}: not found")
    text = path.read_text(encoding="utf-8")
    if PRELUDE in text:
        raise ServiceWorkerError(f"{path} has the prelude already")
    missing = [piece for piece in _EXPECTED if piece not in text]
    if missing:
        raise ServiceWorkerError(f"{path} is not made as expected: {missing} not found")
    config = json.loads((site / "jupyter-lite.json").read_text())["jupyter-config-data"]
    if str(config.get("enableServiceWorkerCache", "false")).lower() == "true":
        raise ServiceWorkerError("the site turns the service worker's cache on "
                                 "(enableServiceWorkerCache): the prelude would bypass it")
    head = '"use strict";' if text.startswith('"use strict";') else ""  # stays the first
    path.write_text(head + "\n" + PRELUDE + text[len(head):], encoding="utf-8")
