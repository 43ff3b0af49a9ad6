"""Start a lesson's Pyodide as its page opens, not once JupyterLab has loaded.

Opening a lesson does two long things one after the other: JupyterLab loads and opens the
notebook (seconds of work on the page's thread), then the Pyodide kernel's worker loads
Pyodide and its packages (seconds more, on another thread). They need not wait for each
other: the Python side needs nothing from JupyterLab but the options that the site's
``jupyter-lite.json`` already fixes. So the build adds two files' worth of code:

- ``course-early-kernel.js`` beside the kernel extension's worker code: a worker that starts
  ``loadPyodide`` with the site's options at once, then runs the extension's own worker
  code, which gets that instance when it asks for Pyodide with the same options (and
  Pyodide's own loader otherwise: nothing else in the kernel changes);
- a script in ``lab/index.html`` that, when the address opens a notebook, starts that worker
  as the page opens and hands it to the kernel extension when it creates its worker. A
  notebook with no code cell (the contents page) opens without a kernel (the course's
  JupyterLab extension ``attention-course-lab``), so its address starts no worker.

Both rely on how ``jupyterlite-pyodide-kernel`` (pinned in pyproject.toml) makes its worker:
:func:`kernel_worker_chunk` reads that from the extension's code, and the build stops with a
:class:`EarlyKernelError` naming what it looked for when a new version does it otherwise.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from pathlib import Path

__all__ = [
    "EARLY_WORKER",
    "KERNEL_EXTENSION_STATIC",
    "EarlyKernelError",
    "install",
    "kernel_worker_chunk",
    "page_script",
    "worker_script",
]

HERE = Path(__file__).resolve().parent
# Where a built site holds the Pyodide kernel extension's code, and the worker added there.
KERNEL_EXTENSION_STATIC = Path("extensions/@jupyterlite/pyodide-kernel-extension/static")
EARLY_WORKER = "course-early-kernel.js"
PYODIDE_DIR = Path("static/pyodide")
APP_PAGE = Path("lab/index.html")

# The extension makes its worker as ``crossOriginIsolated ? new Worker(<chunk A>) : new
# Worker(<chunk B>)``; chunk B (comlink, the case of every ordinary web host) is the one
# whose worker starts early. A page that is cross-origin isolated keeps its own worker.
_MAKES_WORKER = re.compile(
    r"crossOriginIsolated\?new Worker\(new URL\(\w+\.p\+\w+\.u\((\d+)\),\w+\.b\)[^)]*\)"
    r":new Worker\(new URL\(\w+\.p\+\w+\.u\((\d+)\),\w+\.b\)")
# In that worker, Pyodide's loader is taken from the global the script sets.
_TAKES_LOADER = re.compile(r"importScripts\(\w+\),\w+=self\.loadPyodide")
# Where the page script goes: before JupyterLite's configuration block.
_PAGE_ANCHOR = re.compile(r'<script\s+id="jupyter-config-data"')


class EarlyKernelError(RuntimeError):
    """The kernel extension or the page is not made as this module expects."""


def kernel_worker_chunk(static: Path) -> str:
    """The file name of the worker the Pyodide kernel extension in ``static`` starts on a
    page that is not cross-origin isolated (for 0.6.1: ``352.<hash>.js``)."""
    found = {m.group(2) for f in sorted(static.glob("*.js"))
             for m in _MAKES_WORKER.finditer(f.read_text(encoding="utf-8", errors="replace"))}
    if len(found) != 1:
        raise EarlyKernelError(
            f"expected one place in {static} where the Pyodide kernel extension makes its "
            f"worker ('crossOriginIsolated?new Worker(...):new Worker(...)'), found "
            f"{len(found)}: update course_site/early_kernel.py for this version")
    chunk = found.pop()
    files = sorted(p.name for p in static.glob(f"{chunk}.*.js"))
    if len(files) != 1:
        raise EarlyKernelError(f"expected one file {chunk}.<hash>.js in {static} (the kernel's "
                               f"worker), found {files or 'none'}")
    if not _TAKES_LOADER.search((static / files[0]).read_text(encoding="utf-8")):
        raise EarlyKernelError(
            f"{static / files[0]} does not take Pyodide's loader as expected "
            "('importScripts(url), loader = self.loadPyodide'): update "
            "course_site/early_kernel.py for this version")
    return files[0]


def _relative(target: Path, start: Path) -> str:
    return Path(os.path.relpath(target, start)).as_posix()


def worker_script(chunk: str, packages: list[str]) -> str:
    """``course-early-kernel.js``: it sits in the extension's folder, beside ``chunk``."""
    text = (HERE / "early_kernel_worker.js").read_text(encoding="utf-8")
    values = {
        "__INDEX_URL_FROM_HERE__": _relative(PYODIDE_DIR, KERNEL_EXTENSION_STATIC) + "/",
        "__PACKAGES__": list(packages),
        "__KERNEL_WORKER__": "./" + chunk,
    }
    for name, value in values.items():
        text = text.replace(name, json.dumps(value))
    return text


def page_script(chunk: str, kernel_free: Sequence[str] = ()) -> str:
    """The script for ``lab/index.html``: its URLs are relative to that page. The notebooks
    ``kernel_free`` (their paths in the site) open without a kernel: no worker starts early
    for them."""
    text = (HERE / "early_kernel_page.js").read_text(encoding="utf-8")
    values = {
        "__KERNEL_FREE__": sorted(kernel_free),
        "__KERNEL_WORKER_FROM_PAGE__": _relative(KERNEL_EXTENSION_STATIC / chunk,
                                                 APP_PAGE.parent),
        "__EARLY_WORKER_FROM_PAGE__": _relative(KERNEL_EXTENSION_STATIC / EARLY_WORKER,
                                                APP_PAGE.parent),
    }
    for name, value in values.items():
        text = text.replace(name, json.dumps(value))
    return text


def install(site: Path, packages: list[str], kernel_free: Sequence[str] = ()) -> str:
    """Add the early start to the built ``site`` whose kernel preloads ``packages`` (the
    ``loadPyodideOptions.packages`` of its ``jupyter-lite.json``); the notebooks
    ``kernel_free`` (paths in the site) open without a kernel and start none. Returns the
    worker chunk it hands over to."""
    static = site / KERNEL_EXTENSION_STATIC
    chunk = kernel_worker_chunk(static)
    page = site / APP_PAGE
    html = page.read_text(encoding="utf-8")
    anchors = _PAGE_ANCHOR.findall(html)
    if len(anchors) != 1:
        raise EarlyKernelError(f"expected one '<script id=\"jupyter-config-data\"' in {page}, "
                               f"found {len(anchors)}")
    (static / EARLY_WORKER).write_text(worker_script(chunk, packages), encoding="utf-8")
    at = _PAGE_ANCHOR.search(html).start()  # type: ignore[union-attr]
    page.write_text(html[:at] + "<script>\n" + page_script(chunk, kernel_free)
                    + "    </script>\n    " + html[at:], encoding="utf-8")
    return chunk
