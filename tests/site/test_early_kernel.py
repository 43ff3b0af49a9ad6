"""course_site.early_kernel: the lesson's Pyodide starts as its page opens (and a page of
Markdown only, the contents, starts none).

Three layers: what the build writes, on made-up extension folders (no site, quick); the
same in the session's built site; and in Chromium, that the kernel takes the Pyodide the
page started (before JupyterLab had even fetched the notebook), and that a site whose
early start does not match its kernel's options still works and says so in the console.
"""

from __future__ import annotations

import json
import re
import shutil
import urllib.parse
from pathlib import Path
from typing import Any

import pytest
from sitedriver import (
    console_problems,
    kernel_free,
    open_lesson,
    site_lessons,
    site_preload,
)

from course_site.early_kernel import (
    APP_PAGE,
    EARLY_WORKER,
    KERNEL_EXTENSION_STATIC,
    EarlyKernelError,
    install,
    kernel_worker_chunk,
    page_script,
    worker_script,
)
from course_site.serve import SiteServer

# As jupyterlite-pyodide-kernel 0.6.1 writes them (minified names and all).
MAKES_WORKER = ("initWorker(e){return crossOriginIsolated?new Worker(new URL(n.p+n.u(620),n.b),"
                "{type:void 0}):new Worker(new URL(n.p+n.u(352),n.b),{type:void 0})}")
TAKES_LOADER = ('async initRuntime(e){let t,{pyodideUrl:n,indexUrl:i}=e;n.endsWith(".mjs")?'
                "t=(await __webpack_require__(476)(n)).loadPyodide:(importScripts(n),"
                "t=self.loadPyodide)}")
PAGE = """<!DOCTYPE html>
<html>
  <head>
    <title>JupyterLite</title>
    <script
      id="jupyter-config-data"
      type="application/json"
      data-jupyter-lite-root=".."
    >
      {}
    </script>
  </head>
</html>
"""
PACKAGES = ["comm", "course-lib", "numpy", "pyodide-bytecode"]


def _site(tmp_path: Path, makes: str = MAKES_WORKER, takes: str = TAKES_LOADER,
          page: str = PAGE) -> Path:
    static = tmp_path / KERNEL_EXTENSION_STATIC
    static.mkdir(parents=True)
    (static / "592.aaaa.js").write_text("/* the extension */" + makes)
    (static / "352.bbbb.js").write_text("/* comlink worker */" + takes)
    (static / "620.cccc.js").write_text("/* coincident worker */" + takes)
    (static / "352.bbbb.js.LICENSE.txt").write_text("licenses")
    (tmp_path / APP_PAGE).parent.mkdir(parents=True)
    (tmp_path / APP_PAGE).write_text(page)
    return tmp_path


def test_the_worker_of_an_ordinary_page_is_found(tmp_path: Path) -> None:
    assert kernel_worker_chunk(_site(tmp_path) / KERNEL_EXTENSION_STATIC) == "352.bbbb.js"


@pytest.mark.parametrize("makes, takes, names", [
    ("new Worker(new URL(n.p+n.u(352),n.b))", TAKES_LOADER, "makes its worker"),
    (MAKES_WORKER, "t=(await import(n)).loadPyodide", "does not take Pyodide's loader"),
])
def test_an_extension_made_otherwise_stops_the_build(tmp_path: Path, makes: str, takes: str,
                                                     names: str) -> None:
    with pytest.raises(EarlyKernelError, match=names):
        kernel_worker_chunk(_site(tmp_path, makes, takes) / KERNEL_EXTENSION_STATIC)


def test_a_missing_worker_file_stops_the_build(tmp_path: Path) -> None:
    static = _site(tmp_path) / KERNEL_EXTENSION_STATIC
    (static / "352.bbbb.js").unlink()
    with pytest.raises(EarlyKernelError, match=r"one file 352\.<hash>\.js .* found none"):
        kernel_worker_chunk(static)


def _string(script: str, name: str) -> Any:
    """The JSON value the build wrote for ``name`` (``name = <json>`` or ``name = new
    URL(<json>, ...)``) in a script."""
    found = re.search(rf'\b{name} = (?:new URL\()?("[^"]*"|\[[^\]]*\])', script)
    assert found, f"{name} not in the script"
    return json.loads(found.group(1))


def test_the_scripts_point_at_the_right_files(tmp_path: Path) -> None:
    """Their relative URLs, resolved as the browser does, reach the site's files."""
    origin = "http://127.0.0.1:8000/"
    page_url = urllib.parse.urljoin(origin, APP_PAGE.as_posix())
    page = page_script("352.bbbb.js")
    static_url = urllib.parse.urljoin(origin, KERNEL_EXTENSION_STATIC.as_posix() + "/")
    assert (urllib.parse.urljoin(page_url, _string(page, "kernelWorker"))
            == static_url + "352.bbbb.js")
    assert (urllib.parse.urljoin(page_url, _string(page, "earlyWorker"))
            == static_url + EARLY_WORKER)
    worker = worker_script("352.bbbb.js", PACKAGES)
    assert (urllib.parse.urljoin(static_url + EARLY_WORKER, _string(worker, "INDEX_URL"))
            == origin + "static/pyodide/")
    assert _string(worker, "PACKAGES") == PACKAGES
    assert 'importScripts("./352.bbbb.js");' in worker
    assert "__" not in worker.replace("__webpack", "") and "__" not in page
    assert _string(page, "KERNEL_FREE") == []
    assert _string(page_script("352.bbbb.js", ["b.ipynb", "a.ipynb"]), "KERNEL_FREE") == [
        "a.ipynb", "b.ipynb"]


def test_install_writes_the_worker_and_the_page_script_once(tmp_path: Path) -> None:
    site = _site(tmp_path)
    assert install(site, PACKAGES) == "352.bbbb.js"
    html = (site / APP_PAGE).read_text()
    assert html.count("<script>") == 1 and html.count(f'/{EARLY_WORKER}"') == 1
    assert html.index(EARLY_WORKER) < html.index('id="jupyter-config-data"')
    assert html.replace(html[html.index("<script>"):html.index('<script\n      id=')], "") \
        == PAGE, "the page is otherwise unchanged"
    worker = (site / KERNEL_EXTENSION_STATIC / EARLY_WORKER).read_text()
    assert _string(worker, "PACKAGES") == PACKAGES


def test_a_page_without_its_configuration_block_stops_the_build(tmp_path: Path) -> None:
    site = _site(tmp_path, page="<html><head></head></html>")
    with pytest.raises(EarlyKernelError, match="jupyter-config-data"):
        install(site, PACKAGES)
    assert not (site / KERNEL_EXTENSION_STATIC / EARLY_WORKER).exists(), "nothing half-done"


@pytest.mark.site
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_built_site_starts_the_kernel_it_configures(site_build: tuple[Path, Any]) -> None:
    """In the session's site: the worker preloads what jupyter-lite.json tells the kernel
    to, and hands over to the extension's own worker."""
    site = site_build[0]
    worker = (site / KERNEL_EXTENSION_STATIC / EARLY_WORKER).read_text()
    assert _string(worker, "PACKAGES") == site_preload(site)
    chunk = kernel_worker_chunk(site / KERNEL_EXTENSION_STATIC)
    assert f'importScripts("./{chunk}");' in worker
    assert (site / APP_PAGE).read_text().count(f'/{EARLY_WORKER}"') == 1
    assert _string((site / APP_PAGE).read_text(), "KERNEL_FREE") == kernel_free_lessons()


def kernel_free_lessons() -> list[str]:
    """The site's notebooks without a code cell (the contents page): they open with no
    kernel."""
    return [lesson for lesson in site_lessons() if kernel_free(lesson)]


TOOK = "course: the kernel took the Pyodide started as the page opened"
STARTED_AGAIN = "course: the kernel asked for Pyodide with other options"


def _open_and_watch(site_page: Any, url: str, lesson: str) -> tuple[list[str], list[str]]:
    """Open ``lesson``, wait for an idle kernel; the console's lines and the order in which
    the notebook and Pyodide's WebAssembly were asked for."""
    page = site_page.page
    lines: list[str] = []
    asked: list[str] = []
    page.on("console", lambda m: lines.append(m.text))
    page.on("request", lambda r: asked.append("wasm") if r.url.endswith("/pyodide.asm.wasm")
            else asked.append("notebook") if r.url.split("?")[0].endswith("/" + lesson)
            else None)
    open_lesson(page, url, lesson, timeout_ms=240_000)
    return lines, asked


@pytest.mark.browser
@pytest.mark.site
@pytest.mark.timeout(600)
def test_the_kernel_takes_the_pyodide_the_page_started(site_page: Any, site_server: Any
                                                       ) -> None:
    lesson = site_lessons()[2]
    lines, asked = _open_and_watch(site_page, site_server.url, lesson)
    assert TOOK in lines, "the kernel did not take the early Pyodide:\n" + "\n".join(lines)
    assert not [line for line in lines if line.startswith("course:") and line != TOOK]
    # without the early start JupyterLab fetches the notebook first, then starts the kernel
    assert "wasm" in asked and "notebook" in asked, asked
    assert asked.index("wasm") < asked.index("notebook"), (
        f"Pyodide was asked for after the notebook: {asked}")
    site_page.assert_offline()


@pytest.mark.browser
@pytest.mark.site
@pytest.mark.timeout(600)
def test_a_mismatched_early_start_falls_back_and_says_so(site_page: Any, site_build: Any,
                                                         tmp_path: Path) -> None:
    """If the early worker's options differ from the kernel's (a site assembled by hand, an
    edited jupyter-lite.json), the kernel loads Pyodide itself, and the console says why."""
    copy = tmp_path / "site"
    shutil.copytree(site_build[0], copy, copy_function=shutil.copy)
    worker = copy / KERNEL_EXTENSION_STATIC / EARLY_WORKER
    text = worker.read_text()
    assert '"course-lib", ' in text
    worker.write_text(text.replace('"course-lib", ', "", 1))
    lesson = site_lessons()[2]
    with SiteServer(copy) as server:
        lines, _ = _open_and_watch(site_page, server.url, lesson)
    assert TOOK not in lines
    assert [line for line in lines if line.startswith(STARTED_AGAIN)], "\n".join(lines)
    # the site's browser tests take that warning for a broken site
    assert console_problems([f"warning: {line}" for line in lines if line.startswith("course:")])
    site_page.console.clear()  # the warning was wanted here
    site_page.assert_offline()


@pytest.mark.browser
@pytest.mark.site
@pytest.mark.timeout(600)
def test_the_contents_page_starts_no_kernel(site_page: Any, site_server: Any) -> None:
    """A notebook of Markdown only, opened by its address (as the site's front page opens
    the contents), starts no Pyodide, early or late: no worker, no request for Pyodide's
    WebAssembly, and the status bar says No Kernel (before, the page started a worker as it
    opened and JupyterLab a kernel once it had read the notebook)."""
    kernel_free = kernel_free_lessons()
    assert "00_contents.ipynb" in kernel_free, kernel_free
    page = site_page.page
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url) if "/static/pyodide/" in r.url else None)
    for lesson in kernel_free:
        open_lesson(page, site_server.url, lesson)
        page.wait_for_timeout(5000)  # a kernel asked for once the notebook was read shows
        status = page.locator("#jp-main-statusbar").inner_text()
        assert "No Kernel" in status, f"{lesson}: the status bar reads {status!r}"
        assert [w.url for w in page.workers] == [], f"{lesson} started a worker"
        assert asked == [], f"{lesson} asked for Pyodide: {asked}"
    site_page.assert_offline(kernel_free=True)
