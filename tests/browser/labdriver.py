"""Drive a real JupyterLab in Debian's Chromium: for tests/browser and benchmarks/.

What this module knows (each found the hard way on these machines):

- The browser is Debian's ``/usr/bin/chromium``, launched by Playwright through
  ``executable_path``; nothing here ever downloads a browser. Playwright adds ``--headless``
  and its own fresh ``--user-data-dir``.
- JupyterLab listens on 127.0.0.1, on a free port, with a random token, and keeps its
  settings, workspaces, runtime files and config in a throw-away folder; news and update
  checks are off (a news popup would cover the cells).
- "Idle" in the notebook toolbar can show while the status bar still says "Initializing",
  so a run waits for the status bar's ``Idle``, then for a number on every code cell's prompt,
  then for ``Idle`` again.
- The server is stopped by ``POST /api/shutdown`` and then by its PID, and a check follows
  that no kernel started from its runtime folder is still alive.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: localports
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))  # lesson_index

import lesson_index
from localports import free_port

__all__ = [
    "ARTIFACTS",
    "CHROMIUM",
    "CHROMIUM_ARGS",
    "INSTALL_HINT",
    "NO_KERNEL_WIDGETS_ERROR",
    "REPO",
    "VALIDATE",
    "CourseLab",
    "LabServer",
    "check_widgets_respond",
    "clipped_labels",
    "close_documents",
    "controls_disagree",
    "controls_settle",
    "copy_tree",
    "cramped_prose",
    "free_port",
    "launch_chromium",
    "lesson_notebooks",
    "low_contrast_text",
    "missing_requirements",
    "move_widget",
    "open_in_app",
    "open_notebook",
    "output_signature",
    "page_problems",
    "pictures_disagree_with_code",
    "press_validate",
    "replace_cell_and_validate",
    "run_all_cells",
    "run_in_kernel",
    "save_screenshot",
    "set_theme",
    "shutdown_kernels",
    "stop_process_group",
    "venv_env",
    "wait_kernel_idle",
    "wait_kernel_settled",
]

REPO = Path(__file__).resolve().parents[2]
# Screenshots land here (gitignored). Test modules import paths from here, not from
# conftest: several test folders have a conftest.py, and `import conftest` is ambiguous.
ARTIFACTS = REPO / "test-artifacts" / "browser"
#: The course's own JupyterLab extension, prebuilt (a folder of federated extensions):
#: slider names, no kernel for a notebook of Markdown only.
LABEXTENSIONS = REPO / "course_lib" / "labextension"
CHROMIUM = Path("/usr/bin/chromium")

# What jupyterlab-manager 8 (ipywidgets) throws for a notebook that has no kernel: it asks
# every notebook for its kernel's id once its session is ready (jupyter-widgets/ipywidgets
# issue 3970; the fix, pull request 3971, is not released). The contents page opens without
# a kernel (in JupyterLab and in the offline site) and shows no widget, so there it changes
# nothing a student sees.
NO_KERNEL_WIDGETS_ERROR = "Uncaught: Cannot read properties of null (reading 'kernel')"

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
]
INSTALL_HINT = (
    "The browser tests need Debian's Chromium at /usr/bin/chromium and the Python package "
    "playwright. Install them with `sudo ./scripts/install-system-packages.sh` (it runs "
    "`apt-get install -y chromium`) and `./course test` (its set-up pip-installs '.[test]', "
    "which includes playwright). Never run `playwright install`: these tests use Debian's "
    "browser only. "
    "Deselect these tests with -m 'not browser'."
)

# Lab settings written into the throw-away settings folder before the server starts.
LAB_SETTINGS: dict[str, dict[str, Any]] = {
    # No news popup, no update check: it would cover the cells, and the course runs offline.
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
    # Render every cell (no virtual scrolling) so that the page holds all prompts and outputs.
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
}


def lesson_notebooks() -> list[Path]:
    """Every notebook of the course (the contents page too), in order
    (``scripts/lesson_index.py``)."""
    return [n.path for n in lesson_index.read_index(REPO / "notebooks")]


def save_screenshot(page: Any, artifacts: Path, name: str) -> Path:
    """Save a screenshot of the page as ``<artifacts>/<name>.png`` and return its path."""
    path = artifacts / f"{name}.png"
    page.screenshot(path=str(path))
    return path


def missing_requirements() -> str | None:
    """Say what is missing for the browser tests, or return None when all is there."""
    missing = []
    if not (CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)):
        missing.append(f"{CHROMIUM} (Debian package chromium)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing.append("the Python package playwright")
    if missing:
        return "Missing " + " and ".join(missing) + ". " + INSTALL_HINT
    return None


def launch_chromium(playwright: Any) -> Any:
    """Launch Debian's Chromium through Playwright (headless, fresh profile, no network extras)."""
    return playwright.chromium.launch(
        executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
    )


def venv_env() -> dict[str, str]:
    """os.environ with this Python's bin folder first on PATH.

    ``make test`` runs ``.venv/bin/python -m pytest`` without activating the venv, and nbgrader
    runs ``alembic`` (and jupyter runs its sub-commands) by name from PATH.
    """
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


class LabServer:
    """A JupyterLab server on 127.0.0.1 with a token, a free port and throw-away state.

    Parameters
    ----------
    root_dir
        The folder the server shows (``--ServerApp.root_dir``) and runs in (its cwd, which is
        where nbgrader looks for ``nbgrader_config.py``). Give it a copy, never the course's
        own files: autosave writes into whatever the browser opens.
    scratch
        An empty folder for the server's settings, workspaces, runtime files, config and log.
    """

    def __init__(self, root_dir: Path, scratch: Path, extra_args: Sequence[str] = ()) -> None:
        self.root_dir = Path(root_dir).resolve()
        self.scratch = Path(scratch).resolve()
        self.extra_args = list(extra_args)
        self.token = secrets.token_hex(24)
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self.runtime_dir = self.scratch / "runtime"
        self.log_path = self.scratch / "lab.log"

    # -- life cycle -------------------------------------------------------------------------
    def start(self, timeout: float = 90.0) -> LabServer:
        """Start the server and wait until its API answers."""
        settings = self.scratch / "settings"
        for rel, content in LAB_SETTINGS.items():
            path = settings / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(content))
        for name in ("workspaces", "runtime", "config", "data"):
            (self.scratch / name).mkdir(parents=True, exist_ok=True)
        env = venv_env()
        # A figure backend forced to Agg would hide every plot; let the kernel use inline.
        env.pop("MPLBACKEND", None)
        env.update(
            JUPYTER_CONFIG_DIR=str(self.scratch / "config"),
            JUPYTER_RUNTIME_DIR=str(self.runtime_dir),
            JUPYTER_DATA_DIR=str(self.scratch / "data"),
            JUPYTER_PLATFORM_DIRS="1",
            PYTHONUNBUFFERED="1",
        )
        self.port = free_port()
        cmd = [
            sys.executable, "-m", "jupyterlab",
            "--no-browser",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={self.port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={self.root_dir}",
            f"--LabApp.user_settings_dir={settings}",
            f"--LabApp.workspaces_dir={self.scratch / 'workspaces'}",
            "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--ServerApp.open_browser=False",
            # the course's extension (slider names...), as ./course lab loads it
            f"--LabApp.extra_labextensions_path={LABEXTENSIONS}",
            *self.extra_args,
        ]
        if os.geteuid() == 0:
            cmd.append("--allow-root")
        log = self.log_path.open("ab")
        self.proc = subprocess.Popen(
            cmd, cwd=self.root_dir, env=env, stdout=log, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            try:
                self.api("GET", "api/status")
                return self
            except (OSError, urllib.error.URLError):
                time.sleep(0.3)
        if self.proc.poll() is None:  # still running but never answered
            self._kill_server()
            raise RuntimeError(f"JupyterLab did not answer within {timeout:.0f} s.\n"
                               + self.log_tail())
        raise RuntimeError(f"JupyterLab exited with {self.proc.returncode}.\n"
                           + self.log_tail())

    def stop(self) -> None:
        """Shut the server down (API, then its PID) and check its kernels are gone.

        Raises
        ------
        RuntimeError
            If a kernel of this server outlived it (it is then killed by its PID).
        """
        if self.proc is None:
            return
        if self.proc.poll() is None:
            try:
                self.api("POST", "api/shutdown")
            except (OSError, urllib.error.URLError):
                pass
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self._kill_server()
        leftovers: list[int] = []
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            leftovers = self.kernel_pids()
            if not leftovers:
                break
            time.sleep(0.2)
        for pid in leftovers:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc = None
        if leftovers:
            raise RuntimeError(f"kernels {leftovers} outlived the JupyterLab server; killed them")

    def _kill_server(self) -> None:
        assert self.proc is not None
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def kernel_pids(self) -> list[int]:
        """PIDs of live kernels whose connection file lies in this server's runtime folder."""
        marker = str(self.runtime_dir).encode()
        pids = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                cmdline = (entry / "cmdline").read_bytes()
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if marker in cmdline and b"kernel" in cmdline and state != "Z":
                pids.append(int(entry.name))
        return pids

    # -- helpers --------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def url(self, path: str) -> str:
        """The URL of ``path`` on this server, carrying the token (the page then sets a cookie)."""
        sep = "&" if "?" in path else "?"
        return f"{self.base_url}{path.lstrip('/')}{sep}token={self.token}"

    def api(self, method: str, path: str, body: Any = None) -> Any:
        """Call the server's REST API and return the decoded JSON (or None)."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(
            self.base_url + path.lstrip("/"), data=data, method=method,
            headers={"Authorization": f"token {self.token}"},
        )
        with urllib.request.urlopen(req, timeout=10) as resp:
            raw = resp.read()
        return json.loads(raw) if raw else None

    def log_tail(self, n: int = 40) -> str:
        """The last ``n`` lines of the server's log, for error messages."""
        try:
            lines = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return "(no server log)"
        return "--- JupyterLab log (tail) ---\n" + "\n".join(lines[-n:])

    def __enter__(self) -> LabServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def formgrader_server(course: Path, scratch: Path) -> LabServer:
    """An instructor's JupyterLab in ``course`` with the course's formgrader extension on.

    Its server config is the one ``docs/instructors.md`` installs
    (:data:`course_grading.formgrader_csp.SERVER_CONFIG`: the Content-Security-Policy and
    the written-answer guide), written to ``scratch/config``. Use it as a context manager.
    """
    from course_grading.formgrader_csp import SERVER_CONFIG

    (scratch / "config").mkdir(exist_ok=True)
    (scratch / "config" / "jupyter_server_config.json").write_text(json.dumps(SERVER_CONFIG))
    return LabServer(course, scratch)


def copy_tree(src: Path, dst: Path) -> Path:
    """Copy a folder without checkpoints and caches (the browser works on the copy)."""
    shutil.copytree(
        src, dst, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"),
        dirs_exist_ok=True,
    )
    return dst


# ---------------------------------------------------------------------------------------
# Page helpers. Each takes a Playwright sync ``Page``.
# ---------------------------------------------------------------------------------------

STATUS_JS = """() => {
  const bar = document.querySelector('#jp-main-statusbar');
  return bar ? bar.innerText : '';
}"""

# For every non-empty code cell of the current notebook: its prompt text.
PROMPTS_JS = """() => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  if (!panel) return null;
  return [...panel.querySelectorAll('.jp-CodeCell')].map(cell => {
    const src = cell.querySelector('.jp-InputArea-editor .cm-content');
    const text = src ? src.innerText.trim() : '';
    const prompt = cell.querySelector('.jp-InputArea-prompt');
    return {empty: text === '', prompt: prompt ? prompt.innerText.trim() : ''};
  });
}"""


def open_notebook(page: Any, server: LabServer, relpath: str, workspace: str,
                  timeout_ms: float = 90_000) -> None:
    """Open ``relpath`` in a fresh workspace and wait until its kernel is idle."""
    _open_and_wait(page, server, relpath, timeout_ms, lambda: page.goto(
        server.url(f"lab/workspaces/{workspace}/tree/{relpath}?reset"), timeout=timeout_ms))


def _open_and_wait(page: Any, server: LabServer | None, relpath: str, timeout_ms: float,
                   opens: Callable[[], object]) -> None:
    """Call ``opens``, then wait for the notebook's cells and its idle kernel; a timeout
    fails naming what the page (and the server) show."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        opens()
        page.wait_for_selector(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell",
                               timeout=timeout_ms)
        wait_kernel_settled(page, timeout_ms)
    except PlaywrightTimeout as exc:
        raise AssertionError(f"{relpath}: no notebook with an idle kernel within "
                             f"{timeout_ms / 1000:.0f} s ({exc})\n"
                             + page_state(page, server)) from None


OPEN_IN_APP_JS = """async (path) => {
  const app = window.jupyterapp;
  const widget = await app.commands.execute('docmanager:open', {path, factory: 'Notebook'});
  app.shell.activateById(widget.id);
}"""

# The open notebook is ``path``, shown, and its kernel connected and idle; or, for a notebook
# of Markdown only, read and set to start no kernel (the course's extension keeps
# kernelPreference.shouldStart false for it: labextension/src/noKernel.ts).
READY_IN_APP_JS = """(path) => {
  const widget = Array.from(window.jupyterapp.shell.widgets('main')).find(
    w => w.context && w.context.path === path);
  const session = widget && widget.sessionContext && widget.sessionContext.session;
  const kernel = session && session.kernel;
  if (widget && widget.isVisible && !kernel && widget.context.isReady
      && widget.sessionContext.kernelPreference.shouldStart === false) return true;
  return !!(widget && widget.isVisible && kernel && kernel.status === 'idle'
            && kernel.connectionStatus === 'connected');
}"""


def open_in_app(page: Any, server: LabServer | None, relpath: str,
                timeout_ms: float = 90_000) -> None:
    """Open ``relpath`` in the JupyterLab already on ``page``, as File > Open does, and wait
    until its kernel is idle; every document open before is closed first, unsaved, and its
    kernel shut down (``close_documents``).

    One page for many notebooks: a JupyterLab page load costs seconds of the browser's CPU
    per notebook (on 2 cores, as much as running a lesson), where opening a document in the
    loaded app costs a fraction. Needs the app exposed (``course_lab`` starts it so), and
    the page on JupyterLab (``open_notebook`` or a ``lab`` URL) before the first call.
    ``server``: the Jupyter server, for the message if the kernel never idles (None for the
    offline site, whose kernels run in the page).
    """
    if not page.evaluate("() => !!window.jupyterapp"):
        raise AssertionError(f"{relpath}: the page holds no JupyterLab app (page {page.url}); "
                             "open a lab URL first, on a server started with "
                             "--LabApp.expose_app_in_browser=True")
    dialogs = page.locator(".jp-Dialog")
    if dialogs.count():
        raise AssertionError(f"{relpath}: a dialog covers the app before opening it: "
                             f"{dialogs.first.inner_text()!r}")

    def opens() -> None:
        page.evaluate(CLOSE_DOCUMENTS_JS)
        page.evaluate(OPEN_IN_APP_JS, relpath)
        page.wait_for_function(READY_IN_APP_JS, arg=relpath, timeout=timeout_ms)

    _open_and_wait(page, server, relpath, timeout_ms, opens)


# The kernel is shut down, not the session: JupyterLite 0.6.4 throws "Session <id> not
# found" (an uncaught error in the console) when a session is shut down, File > Close and
# Shut Down Notebook included. A session left without its kernel is dropped by the next list.
CLOSE_DOCUMENTS_JS = """async () => {
  const app = window.jupyterapp;
  const open = Array.from(app.shell.widgets('main'));
  // A notebook's toolbar (JupyterLab's ReactiveToolbar) measures its buttons after each
  // has rendered, awaiting their renderPromise; a panel disposed during that wait makes it
  // log "Error while computing the ReactiveToolbar" (its layout is gone: seen under load).
  // A student does not close a tab that fast, so let every button finish rendering first.
  const rendering = () => open.flatMap(w => w.toolbar && w.toolbar.layout
    ? Array.from(w.toolbar.layout.widgets, b => b.renderPromise).filter(Boolean) : []);
  for (let round = 0, pending = rendering(); round < 20; round += 1) {
    await Promise.all(pending);
    await new Promise(resolve => setTimeout(resolve, 0));  // the toolbar's own steps run
    const now = rendering();
    if (now.length === pending.length && now.every((p, i) => p === pending[i])) break;
    pending = now;
  }
  const kernels = [];
  for (const widget of open) {
    const session = widget.sessionContext && widget.sessionContext.session;
    if (session && session.kernel) kernels.push(session.kernel.id);
    widget.dispose();
  }
  for (const id of kernels) await app.serviceManager.kernels.shutdown(id);
}"""


def close_documents(page: Any) -> None:
    """Close every open document of the page's JupyterLab, unsaved (throw-away copies), and
    shut its kernel down."""
    page.evaluate(CLOSE_DOCUMENTS_JS)


PAGE_STATE_JS = """() => ({
  status: (document.querySelector('#jp-main-statusbar') || {}).innerText || '(no status bar)',
  dialogs: [...document.querySelectorAll('.jp-Dialog')].map(d => d.innerText),
  cells: document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell').length,
})"""


def page_state(page: Any, server: LabServer | None) -> str:
    """What the page and the server show, for the message of a wait that timed out (the
    page only for ``server=None``: a static site's kernels live in the page)."""
    try:
        state = page.evaluate(PAGE_STATE_JS)
    except Exception as exc:  # a message, whatever state the page is in
        state = f"(page unreadable: {exc})"
    if server is None:
        return f"page: {state}"
    try:
        kernels = [(k.get("name"), k.get("execution_state"), k.get("connections"))
                   for k in server.api("GET", "api/kernels") or []]
    except (OSError, urllib.error.URLError) as exc:
        kernels = f"(server did not answer: {exc})"
    return f"page: {state}\nserver's kernels: {kernels}\n{server.log_tail()}"


def wait_kernel_idle(page: Any, timeout_ms: float = 90_000) -> None:
    """Wait for the status bar's kernel status to read Idle (not Initializing or Busy)."""
    page.wait_for_function(
        """() => {
          const bar = document.querySelector('#jp-main-statusbar');
          return bar && /\\|\\s*Idle\\b/.test(bar.innerText);
        }""",
        timeout=timeout_ms,
    )


# The status bar's kernel status reads Idle; or the shown notebook has no code cell and no
# kernel (it opens without one: the course's extension, labextension/src/noKernel.ts).
KERNEL_SETTLED_JS = """() => {
  const bar = document.querySelector('#jp-main-statusbar');
  if (!bar) return false;
  if (/\\|\\s*Idle\\b/.test(bar.innerText)) return true;
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  return !!panel && !panel.querySelector('.jp-CodeCell') && /No Kernel/.test(bar.innerText);
}"""


def wait_kernel_settled(page: Any, timeout_ms: float = 90_000) -> None:
    """Wait until the kernel status reads Idle, or, for a notebook of Markdown only, No
    Kernel (a kernel that starts anyway reads Idle soon after: a test that cares checks)."""
    page.wait_for_function(KERNEL_SETTLED_JS, timeout=timeout_ms)


def run_all_cells(page: Any, timeout_ms: float = 180_000) -> None:
    """Run all cells from the Run menu, as a student would, and wait until all have run.

    Raises
    ------
    AssertionError
        If a non-empty code cell has no execution number afterwards (the run stopped early).
    """
    if not page.evaluate(PROMPTS_JS):  # a notebook of markdown only: nothing to run, no kernel
        return
    wait_kernel_idle(page, timeout_ms)
    page.locator(".lm-MenuBar-item", has_text="Run").first.click()
    page.locator(".lm-Menu-item[data-command='runmenu:run-all']").click()
    # Queued cells show [*] at once; wait until none does and the kernel is idle again.
    page.wait_for_function(
        """() => {
          const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
          const prompts = [...panel.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')];
          return prompts.length > 0 && prompts.every(p => !p.innerText.includes('*'));
        }""",
        timeout=timeout_ms,
    )
    wait_kernel_idle(page, timeout_ms)
    prompts = page.evaluate(PROMPTS_JS)
    unrun = [i for i, p in enumerate(prompts)
             if not p["empty"] and not any(ch.isdigit() for ch in p["prompt"])]
    if unrun:
        raise AssertionError(f"code cells {unrun} (0-based among code cells) did not run; "
                             f"prompts: {[prompts[i]['prompt'] for i in unrun]}\n"
                             + "\n".join(page_problems(page)))
    wait_kernel_idle(page, timeout_ms)


PROBLEMS_JS = """() => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  const found = [];
  panel.querySelectorAll('.jp-OutputArea-output').forEach(out => {
    const mime = out.getAttribute('data-mime-type') || '';
    const text = out.innerText || '';
    if (mime === 'application/vnd.jupyter.stderr') {
      found.push('error/stderr output: ' + text.slice(0, 2000));
    } else if (/Error displaying widget|Failed to load model class|Error rendering/.test(text)) {
      found.push('widget failed to render: ' + text.slice(0, 500));
    }
  });
  return found;
}"""


def page_problems(page: Any) -> list[str]:
    """Error outputs, stderr and widget render failures in the open notebook."""
    return list(page.evaluate(PROBLEMS_JS))


# Controls a student moves; their own readout and label are not "output".
CONTROL_SELECTOR = (
    ".widget-slider, .widget-hslider, .widget-vslider, .widget-dropdown, "
    ".widget-toggle-buttons, .widget-togglebutton, .widget-toggle-button, .widget-checkbox, "
    ".widget-radio, .widget-select, .widget-button, .widget-text, .widget-textarea, "
    ".widget-play"
)

SIGNATURE_JS = """(movingSelector) => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  const cells = [...panel.querySelectorAll('.jp-Cell')];
  return cells.map(cell => {
    const area = cell.querySelector('.jp-OutputArea');
    if (!area) return '';
    const parts = [];
    // Other controls' values can be what a callback changed (a dropdown that loads a
    // token's vector into the sliders); the control being moved is left out.
    area.querySelectorAll('.widget-readout').forEach(el => {
      if (!el.closest(movingSelector)) parts.push('readout:' + el.textContent);
    });
    area.querySelectorAll('input[type=checkbox], input[type=radio]').forEach(el => {
      if (!el.closest(movingSelector)) parts.push('checked:' + el.checked);
    });
    area.querySelectorAll('select').forEach(el => {
      if (!el.closest(movingSelector)) parts.push('select:' + el.value);
    });
    const copy = area.cloneNode(true);
    copy.querySelectorAll(movingSelector).forEach(el => el.remove());
    parts.push(copy.textContent.replace(/\\s+/g, ' ').trim());
    copy.querySelectorAll('img').forEach(img => parts.push('img:' + img.getAttribute('src')));
    copy.querySelectorAll('svg').forEach(svg => parts.push('svg:' + svg.outerHTML));
    return parts.join('\\n');
  });
}"""


MOVING = "[data-browser-test-moving]"
CONTROL_ROOTS = (
    ".widget-slider, .widget-hslider, .widget-vslider, .widget-dropdown, "
    ".widget-toggle-buttons, .widget-checkbox, .widget-radio"
)


def output_signature(page: Any) -> list[str]:
    """Per cell: what its outputs show (text, images, SVG, other controls' values).

    The control being moved (marked by :func:`move_widget`) is left out: a slider's own
    readout changes whatever its callback does, so a change here is one a callback made.
    """
    return list(page.evaluate(SIGNATURE_JS, MOVING))


WIDGET_KINDS = {
    "slider": ".widget-slider .noUi-handle",
    "dropdown": ".widget-dropdown select",
    "toggle": ".widget-toggle-buttons .widget-toggle-button",
    "checkbox": ".widget-checkbox input[type=checkbox]",
    "radio": ".widget-radio-box input[type=radio]",
}


def control_readout(page: Any, locator: Any, kind: str) -> str:
    """The control's own current value as the page shows it."""
    if kind == "slider":
        # aria-valuenow is rounded to one decimal (a log slider's small step hides in it).
        return str(locator.get_attribute("aria-valuetext"))
    if kind == "dropdown":
        return str(locator.input_value())
    if kind == "toggle":
        box = locator.locator("xpath=..")
        return str(box.locator(".mod-active").all_inner_texts())
    return str(locator.is_checked())


def move_widget(page: Any, locator: Any, kind: str) -> str:
    """Move one control: keyboard on a slider, choose an option of a dropdown, click a toggle.

    Returns a short description of the move; raises AssertionError if the control's own
    value did not change (then nothing else could be expected to).
    """
    before = control_readout(page, locator, kind)
    locator.scroll_into_view_if_needed()
    if kind == "slider":
        locator.focus()
        page.keyboard.press("ArrowRight")
        if control_readout(page, locator, kind) == before:  # at its maximum: go the other way
            page.keyboard.press("ArrowLeft")
            page.keyboard.press("ArrowLeft")
    elif kind == "dropdown":
        # Arrow keys on a focused <select> are taken by JupyterLab's command-mode shortcuts
        # (move to the next cell), so choose the option as a mouse user does.
        options = locator.locator("option").evaluate_all("os => os.map(o => o.value)")
        locator.select_option(next(o for o in options if o != before))
    elif kind == "toggle":
        box = locator.locator("xpath=..")
        box.locator(".widget-toggle-button:not(.mod-active)").first.click()
    else:
        locator.click()
    page.wait_for_timeout(50)
    after = control_readout(page, locator, kind)
    if after == before:
        raise AssertionError(f"the {kind} did not move (its value stayed {before!r})")
    return f"{kind}: {before} -> {after}"


def _controls_by_cell(page: Any) -> list[tuple[int, str, Any]]:
    """The first control of each kind in each cell: (cell index, kind, locator), in page order."""
    cells = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell")
    found = []
    for index in range(cells.count()):
        cell = cells.nth(index)
        for kind, selector in WIDGET_KINDS.items():
            controls = cell.locator(selector)
            if controls.count():
                found.append((index, kind, controls.first))
    return found


def stable_signature(page: Any, quiet_ms: int = 300, timeout_s: float = 10.0) -> list[str]:
    """The output signature once it has stopped changing for ``quiet_ms``.

    A widget view that is still rendering must not pass for a callback's redraw.
    """
    deadline = time.monotonic() + timeout_s
    last = output_signature(page)
    while time.monotonic() < deadline:
        page.wait_for_timeout(quiet_ms)
        now = output_signature(page)
        if now == last:
            return now
        last = now
    raise AssertionError(f"the notebook's outputs kept changing for {timeout_s:.0f} s "
                         "without anyone touching a widget")


def wait_output_change(page: Any, before: list[str], timeout_s: float = 20.0) -> list[int]:
    """Wait until some cell's output signature differs from ``before``; return those cells."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        now = output_signature(page)
        changed = [i for i, (a, b) in enumerate(zip(before, now, strict=False)) if a != b]
        if len(now) != len(before):
            changed.append(-1)
        if changed:
            return changed
        page.wait_for_timeout(100)
    return []


def check_widgets_respond(page: Any, timeout_s: float = 20.0,
                          after_move: Any = None) -> list[str]:
    """Move one control of each kind in every cell; each move must change an output.

    Returns one line per move (for the test's log). Raises AssertionError naming the cell and
    the move when a widget is missing or a move changes nothing that the page shows.
    ``after_move(page, move)``, if given, runs after each move (more checks of the page).
    """
    controls = _controls_by_cell(page)
    if not controls:
        raise AssertionError(
            "no slider, dropdown, toggle, checkbox or radio button is shown in the notebook "
            "(is the widget manager loaded? a missing one shows only a text repr)\n"
            + "\n".join(page_problems(page))
        )
    lines = []
    for cell_index, kind, locator in controls:
        wait_kernel_idle(page)
        page.evaluate("() => document.querySelectorAll('[data-browser-test-moving]')"
                      ".forEach(el => el.removeAttribute('data-browser-test-moving'))")
        locator.evaluate("(el, roots) => el.closest(roots)"
                         ".setAttribute('data-browser-test-moving', '')", CONTROL_ROOTS)
        before = stable_signature(page)
        move = move_widget(page, locator, kind)
        changed = wait_output_change(page, before, timeout_s)
        if not changed:
            raise AssertionError(
                f"moving the {kind} in cell {cell_index} ({move}) changed no output "
                f"(text, image or description) within {timeout_s:.0f} s"
            )
        wait_kernel_idle(page)
        if after_move is not None:
            after_move(page, move)
        lines.append(f"cell {cell_index}: {move}; output changed in cells {changed}")
    problems = page_problems(page)
    if problems:
        raise AssertionError("after moving the widgets:\n" + "\n".join(problems))
    return lines


def shutdown_kernels(server: LabServer) -> None:
    """Close every session (and so its kernel) of the server, between notebooks."""
    for session in server.api("GET", "api/sessions") or []:
        try:
            server.api("DELETE", f"api/sessions/{session['id']}")
        except urllib.error.HTTPError:
            pass


# ---------------------------------------------------------------------------------------
# Themes, contrast, clipped labels, and the kernel's view of the widgets. These need the
# server started with --LabApp.expose_app_in_browser=True (window.jupyterapp), as the
# course_lab fixture does: the test runs JupyterLab's own commands and asks the kernel.
# ---------------------------------------------------------------------------------------

THEMES = {"light": "JupyterLab Light", "dark": "JupyterLab Dark"}


def set_theme(page: Any, theme: str) -> None:
    """Switch JupyterLab's theme (what Settings > Theme does) and wait until it applies."""
    page.evaluate("(name) => window.jupyterapp.commands.execute('apputils:change-theme', "
                  "{theme: name})", THEMES[theme])
    page.wait_for_function(
        "(light) => document.body.dataset.jpThemeLight === light",
        arg="true" if theme == "light" else "false", timeout=30_000)
    page.wait_for_timeout(500)  # the theme's stylesheet settles


KERNEL_JS = """async (code) => {
  const widget = window.jupyterapp.shell.currentWidget;
  const kernel = widget.sessionContext.session.kernel;
  const future = kernel.requestExecute({code, silent: false, store_history: false});
  let out = '';
  future.onIOPub = (msg) => {
    const t = msg.header.msg_type;
    if (t === 'stream') out += msg.content.text;
    if (t === 'error') out += 'ERROR ' + msg.content.ename + ': ' + msg.content.evalue;
  };
  await future.done;
  return out;
}"""


def run_in_kernel(page: Any, code: str) -> str:
    """Run ``code`` in the open notebook's kernel (no cell is added); return what it printed."""
    out = str(page.evaluate(KERNEL_JS, code))
    if out.startswith("ERROR "):
        raise AssertionError(f"the kernel raised: {out}")
    return out


# Text whose contrast with what lies behind it is below WCAG AA (4.5:1), in widget outputs.
CONTRAST_JS = """() => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  const parse = (c) => {
    const m = c && c.match(/rgba?\\(([^)]+)\\)/);
    if (!m) return null;
    const p = m[1].split(/[\\s,\\/]+/).filter(Boolean).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const over = (top, base) => [0, 1, 2].map(i => top[i] * top[3] + base[i] * (1 - top[3]));
  const background = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const cs = getComputedStyle(e);
      let c = parse(cs.backgroundColor);
      if ((!c || c[3] === 0) && cs.backgroundImage !== 'none') {
        const stop = cs.backgroundImage.match(/rgba?\\([^)]+\\)/);  // a gradient's first stop
        if (stop) c = parse(stop[0]);
      }
      if (c && c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
    }
    let base = [255, 255, 255];
    for (let i = layers.length - 1; i >= 0; i--) base = over(layers[i], base);
    return base;
  };
  const lum = (c) => {
    const l = c.map(v => {
      v /= 255;
      return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * l[0] + 0.7152 * l[1] + 0.0722 * l[2];
  };
  const ratio = (a, b) => {
    const x = lum(a), y = lum(b);
    return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05);
  };
  const found = [];
  let checked = 0;
  panel.querySelectorAll('.jp-OutputArea-output .jupyter-widgets *').forEach(el => {
    const own = [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
    if (!own) return;
    const rect = el.getBoundingClientRect();
    if (!rect.width || !rect.height || getComputedStyle(el).visibility === 'hidden') return;
    const svgText = el instanceof SVGElement;
    const ink = parse(getComputedStyle(el)[svgText ? 'fill' : 'color']);
    if (!ink) return;
    const back = background(svgText ? el.ownerSVGElement.parentElement : el);
    const r = ratio(over(ink, back), back);
    checked += 1;
    if (r < 4.5) found.push(`${r.toFixed(2)}:1 "${el.textContent.trim().slice(0, 40)}" ` +
                            `(${el.tagName.toLowerCase()}, ink ${ink}, ` +
                            `background ${back.map(Math.round)})`);
  });
  return {checked, found};
}"""


def low_contrast_text(page: Any) -> tuple[int, list[str]]:
    """(how many text elements of the widgets were checked, those below WCAG AA 4.5:1).

    Colours are the computed styles of the rendered page (``color``, or ``fill`` for SVG
    text), composited over the backgrounds behind them up to the page.
    """
    result = page.evaluate(CONTRAST_JS)
    return int(result["checked"]), list(result["found"])


CLIPPED_JS = """() => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  const found = [];
  let checked = 0;
  const canvas = document.createElement('canvas').getContext('2d');
  const widgets = panel.querySelectorAll('.jp-OutputArea-output .jupyter-widgets');
  widgets.forEach(root => {
    root.querySelectorAll('.widget-label, .widget-readout, .widget-toggle-button, ' +
                          '.widget-checkbox label, td, th, .widget-html-content p').forEach(el => {
      if (!el.getBoundingClientRect().width || !el.textContent.trim()) return;
      checked += 1;
      if (el.scrollWidth > el.clientWidth + 1)
        found.push(`"${el.textContent.trim().slice(0, 40)}" needs ${el.scrollWidth}px, ` +
                   `has ${el.clientWidth}px (${el.className || el.tagName.toLowerCase()})`);
    });
    root.querySelectorAll('select').forEach(el => {
      const cs = getComputedStyle(el);
      canvas.font = `${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
      const text = el.options[el.selectedIndex] ? el.options[el.selectedIndex].text : '';
      const room = el.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
      checked += 1;
      if (canvas.measureText(text).width > room)
        found.push(`drop-down "${text}" needs ` +
                   `${canvas.measureText(text).width.toFixed(0)}px, has ${room}px`);
    });
    root.querySelectorAll('.widget-toggle-buttons').forEach(el => {
      const buttons = [...el.querySelectorAll('.widget-toggle-button')];
      const tops = new Set(buttons.map(b => Math.round(b.getBoundingClientRect().top)));
      checked += 1;
      if (tops.size > 1)
        found.push(`the buttons ${buttons.map(b => b.textContent.trim()).join(' | ')} ` +
                   `wrap onto ${tops.size} lines`);
    });
    root.querySelectorAll('svg text').forEach(el => {
      const svg = el.ownerSVGElement.getBoundingClientRect();
      const box = el.getBoundingClientRect();
      checked += 1;
      if (box.left < svg.left - 1 || box.right > svg.right + 1 || box.top < svg.top - 1 ||
          box.bottom > svg.bottom + 1)
        found.push(`SVG text "${el.textContent.trim().slice(0, 30)}" leaves its picture ` +
                   `(${box.left.toFixed(0)}..${box.right.toFixed(0)} in ` +
                   `${svg.left.toFixed(0)}..${svg.right.toFixed(0)})`);
    });
  });
  return {checked, found};
}"""


def clipped_labels(page: Any) -> tuple[int, list[str]]:
    """(how many labels were checked, those whose text is wider than their box).

    Widget labels, readouts, buttons, table cells, captions, the chosen option of each
    drop-down (measured with the select's own font), SVG text (inside its picture), and a
    row of toggle buttons that wraps onto a second line.
    """
    result = page.evaluate(CLIPPED_JS)
    return int(result["checked"]), list(result["found"])


# Widgets (and pictures, tables, preformatted text in them) that reach past the right edge
# of their cell's output, or that scroll sideways: a horizontal scrollbar in a lesson.
WIDER_JS = """() => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  const found = [];
  let checked = 0;
  panel.querySelectorAll('.jp-OutputArea-output').forEach(out => {
    const right = out.getBoundingClientRect().right;
    out.querySelectorAll('.jupyter-widgets, .jupyter-widgets svg, .jupyter-widgets table, ' +
                         '.jupyter-widgets pre').forEach(el => {
      const r = el.getBoundingClientRect();
      if (r.width === 0) return;
      checked += 1;
      const scrolls = el.scrollWidth > el.clientWidth + 1
        && ['auto', 'scroll'].includes(getComputedStyle(el).overflowX);
      if (r.right > right + 0.5 || scrolls)
        found.push(`${el.tagName.toLowerCase()}.${String(el.className.baseVal ?? el.className)
          .split(' ').filter(c => c.startsWith('widget')).join('.')} "` +
          `${el.textContent.trim().slice(0, 30)}": ${r.width.toFixed(0)} px wide, right edge ` +
          `${r.right.toFixed(0)} > the cell's ${right.toFixed(0)}` +
          (scrolls ? `, scrolls ${el.scrollWidth} > ${el.clientWidth}` : ''));
    });
  });
  return {checked, found};
}"""


def wider_than_cell(page: Any) -> tuple[int, list[str]]:
    """(widget elements checked, those past their cell's right edge or scrolling sideways)."""
    result = page.evaluate(WIDER_JS)
    return int(result["checked"]), list(result["found"])


# Text in the lesson's outputs (widgets and HTML alike) that another text covers, that a box
# with hidden overflow cuts off, or whose words break across lines. Boxes are the rendered
# glyph boxes (getBoundingClientRect of a Range), not the elements' layout boxes.
TEXT_LAYOUT_JS = """(outputs) => {
  const found = [];
  let checked = 0;
  const short = t => JSON.stringify(t.trim().slice(0, 30));
  const meet = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1 &&
                         Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1;
  const boxOf = node => { const r = document.createRange(); r.selectNodeContents(node);
                          return r.getBoundingClientRect(); };
  document.querySelectorAll(outputs).forEach(out => {
    if (!out.getBoundingClientRect().width) return;
    // every piece of text: SVG <text>, and the text nodes of HTML elements
    const texts = [];
    out.querySelectorAll('svg text').forEach(el => {
      if (el.textContent.trim())
        texts.push({el, text: el.textContent, box: el.getBoundingClientRect()});
    });
    const walker = document.createTreeWalker(out, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const el = n.parentElement;
      if (!n.textContent.trim() || el.closest('svg, select, style, script, .jp-InputPrompt, ' +
                                               '.jp-OutputPrompt')) continue;
      const box = boxOf(n);
      if (box.width && box.height) texts.push({el, text: n.textContent, box, node: n});
    }
    checked += texts.length;
    // 1. no text over other text (within one output)
    for (let i = 0; i < texts.length; i++)
      for (let j = i + 1; j < texts.length; j++)
        if (texts[i].el !== texts[j].el && !texts[i].el.contains(texts[j].el) &&
            !texts[j].el.contains(texts[i].el) && meet(texts[i].box, texts[j].box))
          found.push(`text ${short(texts[i].text)} overlaps ${short(texts[j].text)} ` +
                     `(${texts[i].box.top.toFixed(0)}..${texts[i].box.bottom.toFixed(0)} and ` +
                     `${texts[j].box.top.toFixed(0)}..${texts[j].box.bottom.toFixed(0)} px)`);
    // 2. no text cut off by a box that hides what overflows it
    texts.forEach(t => {
      for (let a = t.el; a && a !== out.parentElement; a = a.parentElement) {
        if (a instanceof SVGElement && !(a instanceof SVGSVGElement)) continue;
        const cs = getComputedStyle(a);
        // hidden or clipped, not scrolling: text a student cannot reach at all
        if (![cs.overflowX, cs.overflowY].some(o => o === 'hidden' || o === 'clip')) continue;
        const r = a.getBoundingClientRect();
        const inside = { left: r.left + a.clientLeft, top: r.top + a.clientTop };
        inside.right = inside.left + (a.clientWidth || r.width);
        inside.bottom = inside.top + (a.clientHeight || r.height);
        const b = t.box;
        if (b.left < inside.left - 1 || b.right > inside.right + 1 ||
            b.top < inside.top - 1 || b.bottom > inside.bottom + 1) {
          found.push(`text ${short(t.text)} is cut off by ` +
                     `<${a.tagName.toLowerCase()} class="${
                       String(a.className.baseVal ?? a.className).slice(0, 40)}"> ` +
                     `(text ${b.left.toFixed(0)}..${b.right.toFixed(0)} × ` +
                     `${b.top.toFixed(0)}..${b.bottom.toFixed(0)}, box ` +
                     `${inside.left.toFixed(0)}..${inside.right.toFixed(0)} × ` +
                     `${inside.top.toFixed(0)}..${inside.bottom.toFixed(0)})`);
          break;
        }
      }
    });
    // 3. no word broken across two lines
    // (JupyterLab's own rendering of printed output, stdout, is left to JupyterLab)
    texts.filter(t => t.node && !t.el.closest('[data-mime-type="application/vnd.jupyter.stdout"]')
                 && t.box.height > 1.65 * parseFloat(getComputedStyle(t.el).fontSize))
      .forEach(t => {
        // a break right after a hyphen is one a browser may make ('previous-|token')
        const re = /[^\\s-]+-?/g;
        for (let m = re.exec(t.text); m; m = re.exec(t.text)) {
          if (m[0].length < 2) continue;
          const r = document.createRange();
          r.setStart(t.node, m.index);
          r.setEnd(t.node, m.index + m[0].length);
          const lines = new Set([...r.getClientRects()].filter(q => q.width > 0)
                                .map(q => Math.round(q.top)));
          if (lines.size > 1) {
            found.push(`the word ${short(m[0])} breaks across ${lines.size} lines ` +
                       `(in ${short(t.text)})`);
          }
        }
      });
  });
  return {checked, found};
}"""


SHOWN_OUTPUTS = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output"


def text_layout_problems(page: Any, outputs: str = SHOWN_OUTPUTS) -> tuple[int, list[str]]:
    """(texts checked, problems): in each of ``outputs`` (a CSS selector; by default the
    shown notebook's outputs), text drawn over other text, text that a box with hidden
    overflow cuts off, and words broken across lines.

    Measured on the rendered glyph boxes (a ``Range`` per text node, each SVG ``<text>``),
    widgets and plain HTML or text outputs alike.
    """
    result = page.evaluate(TEXT_LAYOUT_JS, outputs)
    return int(result["checked"]), list(result["found"])


# axe-core, the accessibility engine: installed from the npm registry by npm itself into a
# cache folder (never fetched by the browser), then its source is put into the page.
AXE_VERSION = "4.14.1"
AXE_CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "attention-course"


def axe_source(version: str = AXE_VERSION) -> str:
    """axe.min.js of ``axe-core@version``, installed with ``npm install --prefix`` into
    ``~/.cache/attention-course/axe-core-<version>`` on first use (a temporary folder
    renamed into place, so two test processes never see half an install)."""
    target = AXE_CACHE / f"axe-core-{version}"
    script = target / "node_modules" / "axe-core" / "axe.min.js"
    if not script.is_file():
        npm = shutil.which("npm")
        if npm is None:
            raise RuntimeError("npm is needed to install axe-core for the accessibility test "
                               "(scripts/install-system-packages.sh installs nodejs and npm)")
        AXE_CACHE.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f"axe-core-{version}.", dir=AXE_CACHE))
        done = subprocess.run([npm, "install", "--prefix", str(tmp), "--no-audit", "--no-fund",
                               "--no-save", f"axe-core@{version}"],
                              capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            raise RuntimeError(f"npm install axe-core@{version} failed:\n{done.stderr[-2000:]}")
        try:
            tmp.rename(target)
        except OSError:  # another process got there first
            shutil.rmtree(tmp, ignore_errors=True)
    return script.read_text(encoding="utf-8")


# Serious and critical WCAG 2.1 A/AA violations on the page, each node with whether it lies
# in the course's own content (a cell's output or rendered markdown) or in JupyterLab's UI.
AXE_JS = """async () => {
  const result = await axe.run(document, {
    runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']},
    resultTypes: ['violations'],
  });
  const found = [];
  result.violations.filter(v => ['serious', 'critical'].includes(v.impact)).forEach(v => {
    v.nodes.forEach(n => {
      const selector = n.target[n.target.length - 1];
      let el = null;
      try { el = typeof selector === 'string' ? document.querySelector(selector) : null; }
      catch (e) { el = null; }
      const course = !!(el && el.closest(
        '.jp-OutputArea-output, .jp-RenderedMarkdown, .jp-MarkdownOutput'));
      const where = el ? ` [text ${JSON.stringify(el.textContent.trim().slice(0, 50))}, ` +
        `${el.scrollWidth}x${el.scrollHeight} in ${el.clientWidth}x${el.clientHeight}]` : '';
      found.push({rule: v.id, impact: v.impact, course,
                  target: JSON.stringify(n.target).slice(0, 120),
                  html: n.html.slice(0, 160) + where,
                  summary: (n.failureSummary || '').slice(0, 240)});
    });
  });
  return found;
}"""


def axe_violations(page: Any) -> list[dict[str, Any]]:
    """axe-core's serious and critical WCAG 2.1 A/AA violations on the page, one dict per
    element: ``rule``, ``impact``, ``course`` (inside a cell's output or rendered markdown,
    i.e. the course's own content), ``target``, ``html`` and axe's ``summary``."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.add_script_tag(content=axe_source())
    return list(page.evaluate(AXE_JS))


# Every slider handle in the shown notebook's outputs: its name and the value it announces
# must be the slider's label and its readout (what a sighted student reads beside it).
SLIDERS_JS = """() => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  const found = [];
  panel.querySelectorAll('.jp-OutputArea-output [role="slider"]').forEach(handle => {
    const slider = handle.closest('.widget-slider');
    const label = slider ? slider.querySelector('.widget-label').textContent.trim() : '';
    const readout = slider ? slider.querySelector('.widget-readout').textContent.trim() : '';
    const name = handle.getAttribute('aria-label') || '';
    const text = handle.getAttribute('aria-valuetext') || handle.getAttribute('aria-valuenow');
    if (!slider || name !== label || text !== readout)
      found.push(`slider "${label}" showing ${readout} announces ` +
                 `${JSON.stringify(name)}, ${JSON.stringify(text)}`);
  });
  return found;
}"""


def sliders_unannounced(page: Any) -> list[str]:
    """Slider handles whose accessible name is not their label, or whose announced value
    (aria-valuetext) is not their readout: a screen reader said "1100" for a score of 1.00."""
    return list(page.evaluate(SLIDERS_JS))


def open_file_browser(page: Any) -> None:
    """Show JupyterLab's file browser in the left sidebar (as a student has it open)."""
    page.evaluate("() => window.jupyterapp.commands.execute('filebrowser:activate')")
    page.wait_for_selector(".jp-FileBrowser:not(.lm-mod-hidden)")


# Paragraphs of running text in widget outputs that are small or widely spaced.
PROSE_JS = """() => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  const found = [];
  let checked = 0;
  panel.querySelectorAll('.jp-OutputArea-output .jupyter-widgets p').forEach(el => {
    if (el.textContent.trim().length < 40) return;
    const cs = getComputedStyle(el);
    const size = parseFloat(cs.fontSize);
    const line = cs.lineHeight === 'normal' ? 1.2 * size : parseFloat(cs.lineHeight);
    checked += 1;
    if (size < 13 || line / size > 1.7)
      found.push(`"${el.textContent.trim().slice(0, 40)}": ${size}px text on ` +
                 `${line}px lines (${(line / size).toFixed(2)})`);
  });
  return {checked, found};
}"""


def cramped_prose(page: Any) -> tuple[int, list[str]]:
    """(paragraphs checked, those set below 13 px or on lines over 1.7 times the text size).

    JupyterLab gives widget HTML a 28 px line height, made for one-line labels: a
    description set inside it reads double-spaced.
    """
    result = page.evaluate(PROSE_JS)
    return int(result["checked"]), list(result["found"])


# Per cell that shows one of the named widgets (its last source line is the name), the
# value each of its controls shows, in page order.
SHOWN_JS = """(names) => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  const shown = {};
  panel.querySelectorAll('.jp-CodeCell').forEach(cell => {
    const src = cell.querySelector('.jp-InputArea-editor .cm-content');
    const lines = src ? src.innerText.trim().split('\\n') : [];
    const name = lines.length ? lines[lines.length - 1].trim() : '';
    if (!names.includes(name)) return;
    const area = cell.querySelector('.jp-OutputArea');
    shown[name] = [...area.querySelectorAll(
      '.widget-slider, .widget-hslider, .widget-dropdown, .widget-toggle-buttons, ' +
      '.widget-checkbox')].map(c => {
      if (c.matches('.widget-slider, .widget-hslider'))
        return c.querySelector('.widget-readout').textContent.trim();
      if (c.matches('.widget-dropdown')) {
        const s = c.querySelector('select');
        return s.selectedIndex < 0 ? null : s.options[s.selectedIndex].text;
      }
      if (c.matches('.widget-toggle-buttons')) {
        const a = c.querySelector('.mod-active');
        return a ? a.textContent.trim() : null;
      }
      return c.querySelector('input').checked ? 'True' : 'False';
    });
  });
  return shown;
}"""

# What the kernel holds for the same controls, formatted as the page shows them.
KERNEL_VALUES = """import json as _json
def _shown(c):
    if isinstance(c.value, bool):
        return str(c.value)
    if getattr(c, "label", None) is not None:
        return c.label
    fmt = getattr(c, "readout_format", None)
    if fmt and isinstance(c.value, (int, float)):
        return format(c.value, fmt)
    return str(c.value)
print(_json.dumps({_n: [_shown(_c) for _c in globals()[_n].controls.values()]
                   for _n in NAMES}))
"""


def _minus(values: list[str | None]) -> list[str | None]:
    # readouts write − for a minus; a Dropdown shows each space of an option as U+00A0
    return [v.replace("\u2212", "-").replace("\xa0", " ") if isinstance(v, str) else v
            for v in values]


# Per named explorer: the description its picture carries (the longest aria-label in its
# output), and what the next code cell printed.
SAID_JS = """(names) => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  const cells = [...panel.querySelectorAll('.jp-CodeCell')];
  const said = {};
  cells.forEach((cell, i) => {
    const src = cell.querySelector('.jp-InputArea-editor .cm-content');
    const lines = src ? src.innerText.trim().split('\\n') : [];
    const name = lines.length ? lines[lines.length - 1].trim() : '';
    if (!names.includes(name) || i + 1 >= cells.length) return;
    const labels = [...cell.querySelectorAll('.jp-OutputArea [aria-label]')]
      .map(el => el.getAttribute('aria-label'));
    const picture = labels.sort((a, b) => b.length - a.length)[0];  // the full description
    const next = cells[i + 1];
    const code = next.querySelector('.jp-InputArea-editor .cm-content');
    said[name] = {
      picture: picture || null,
      code: code ? code.innerText : '',
      printed: next.querySelector('.jp-OutputArea') ?
        next.querySelector('.jp-OutputArea').innerText : '',
    };
  });
  return said;
}"""


def pictures_disagree_with_code(page: Any, names: Sequence[str]) -> list[str]:
    """Where an explorer's picture says other than its code cell printed, one line each.

    For each explorer whose next cell prints ``<name>.set(...)`` (the description the code
    made), the picture on the page must carry the last description printed there: a value
    the browser changed behind the code's back (a slider snapping to its step and sending
    that back) shows up here.
    """
    said = page.evaluate(SAID_JS, list(names))
    lines = []
    for name in names:
        entry = said.get(name)
        if not entry or f"print({name}.set(" not in entry["code"]:
            continue
        picture = " ".join((entry["picture"] or "").split())
        printed = " ".join(entry["printed"].split())
        if not picture or picture not in printed:
            lines.append(f"{name}: the picture says {picture[:160]!r}, the code cell printed "
                         f"{printed[:160]!r}")
    return lines


def controls_disagree(page: Any, names: Sequence[str]) -> list[str]:
    """Where the page's controls and the kernel's explorer state differ, one line each.

    ``names`` are the notebook's variables holding explorers (the cells that show them end
    with the name). The kernel is asked directly (no cell is added); the page is read from
    each control's own readout, selection or check mark.
    """
    if not names:
        return []
    page_side = page.evaluate(SHOWN_JS, list(names))
    code = KERNEL_VALUES.replace("NAMES", repr(list(names)))
    kernel_side = json.loads(run_in_kernel(page, code))
    lines = []
    for name in names:
        shown, held = _minus(page_side.get(name, [])), _minus(kernel_side[name])
        if shown != held:
            lines.append(f"{name}: the page shows {shown}, the kernel holds {held}")
    return lines


def controls_settle(page: Any, names: Sequence[str], timeout_s: float = 15.0) -> list[str]:
    """``controls_disagree`` once page and kernel agree, or what still differs at the deadline.

    After a control moves, the kernel can be idle and still behind the page for a moment:
    ipywidgets' model sends one change at a time, keeps any later one (a slider moved two
    steps) in a buffer while the first is pending, and sends it only when the kernel reports
    idle for the first. A single read taken in that gap sees the first step (CI saw "the page
    shows 3, the kernel holds 4" after a slider went 5 -> 4 -> 3). So the check is repeated
    until both sides agree; a disagreement that outlasts ``timeout_s`` is a real one.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        lines = controls_disagree(page, names)
        if not lines or time.monotonic() > deadline:
            return lines
        page.wait_for_timeout(200)


def type_into_cell(page: Any, has_text: str, source: str, timeout_ms: float = 60_000) -> None:
    """Replace a code cell's text as a student would (click, Ctrl+A, Delete, type, Escape).

    The cell is the first code cell of the open notebook whose text contains ``has_text``.
    Returns once the notebook's document model, which is what JupyterLab saves, holds
    ``source`` in that cell (the editor hands its text to the model; a save serialises the
    model). Needs ``--LabApp.expose_app_in_browser=True``.
    """
    panel = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)")
    panel.locator(".jp-CodeCell .cm-content", has_text=has_text).first.click()
    page.keyboard.press("Control+a")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(source)
    page.keyboard.press("Escape")
    page.wait_for_function(
        "(source) => window.jupyterapp.shell.currentWidget.context.model.sharedModel.cells"
        ".some(c => c.cell_type === 'code' && c.getSource() === source)",
        arg=source, timeout=timeout_ms)


def save_with_keyboard(page: Any, timeout_ms: float = 120_000) -> None:
    """Press Ctrl+S in the open document and return once JupyterLab's save of it completed.

    JupyterLab serialises the document when the save starts and sends it to the server
    (GET to compare hashes, then PUT); the file on disk holds the new text only when that
    save reports ``completed`` on the context's ``saveState`` signal (the server has
    written it by then). Waiting for a tab without ``jp-mod-dirty`` is not that:
    ``.lm-TabBar-tab.lm-mod-current`` also matches the side bar's current tab, never dirty,
    so such a wait returned at once and the file was read before the save had landed.
    A save that fails or raises a dialog ("File Changed") fails here, naming its states.
    Needs ``--LabApp.expose_app_in_browser=True``.
    """
    page.evaluate("""() => {
        const context = window.jupyterapp.shell.currentWidget.context;
        window.__courseSaves = [];
        if (!context.__courseSaveWatch) {
            context.__courseSaveWatch = true;
            context.saveState.connect((_, state) => window.__courseSaves.push(state));
        }
    }""")
    page.keyboard.press("Control+s")
    page.wait_for_function(
        "() => window.__courseSaves.includes('completed') || window.__courseSaves.includes("
        "'failed') || !!document.querySelector('.jp-Dialog')", timeout=timeout_ms)
    states = page.evaluate("() => window.__courseSaves")
    dialog = page.locator(".jp-Dialog")
    assert "completed" in states and dialog.count() == 0, (
        f"Ctrl+S did not save: save states {states}"
        + (f", dialog {dialog.inner_text()!r}" if dialog.count() else ""))


# nbgrader's toolbar button (a jp-button web component, labelled "Validate").
VALIDATE = ".jp-Toolbar jp-button[aria-label='Validate']"


def replace_cell_and_validate(page: Any, has_text: str, source: str) -> str:
    """Replace a code cell's text as a student would, press Validate; the dialog's text.

    The cell is the first code cell whose text contains ``has_text``. Validate saves the
    notebook itself ("Saving..."), then validates the file on disk (a Ctrl+S of our own
    just before it raced that save into a "File Changed" dialog).
    """
    panel = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)")
    editor = panel.locator(".jp-CodeCell .cm-content", has_text=has_text).first
    editor.click()
    page.keyboard.press("Control+a")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(source)
    page.keyboard.press("Escape")
    return press_validate(page)


def press_validate(page: Any, timeout_ms: float = 180_000) -> str:
    """Press nbgrader's Validate button and return the text of its verdict dialog."""
    page.locator(f".jp-NotebookPanel:not(.lm-mod-hidden) {VALIDATE}").click()
    dialog = page.locator(".jp-Dialog")
    dialog.wait_for(timeout=timeout_ms)
    page.wait_for_function(
        "() => !/Validating/i.test(document.querySelector('.jp-Dialog').innerText)",
        timeout=timeout_ms,
    )
    return str(dialog.inner_text())


# ---------------------------------------------------------------------------------------
# `./course lab` itself, as a student starts it (tests and benchmarks/first_run.py)
# ---------------------------------------------------------------------------------------


def stop_process_group(proc: subprocess.Popen[Any], timeout: float = 30.0) -> None:
    """Stop a process started with ``start_new_session=True`` and all it started."""
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


class CourseLab:
    """``python course lab`` run for real: 127.0.0.1, a free port, a random token.

    Jupyter's config, runtime, settings and workspace folders are fresh ones under
    ``scratch`` (a student's first start), and so is the student's copy of the lessons
    (``COURSE_WORKSPACE``: never the checkout's own ``notebooks/my-work/``); ``env`` adds to
    (or, with None values, removes from) the environment (without ``COURSE_WORKSPACE``, the
    copies go where the course puts them). ``course``: the script of another clone of the
    course, run in that clone (with ``COURSE_VENV`` in ``env``, on this environment).
    Output lines are kept with the second they arrived, counted from the start. A context
    manager: the process group is stopped on exit.
    """

    def __init__(self, scratch: Path, extra_args: Sequence[str] = (), *,
                 env: dict[str, str | None] | None = None, python: str = sys.executable,
                 port: int = 0, course: Path = REPO / "course") -> None:
        self.port = port or free_port()
        self.token = secrets.token_hex(16)
        self.env = dict(os.environ)
        for name in ("JUPYTER_CONFIG_DIR", "JUPYTER_RUNTIME_DIR", "JUPYTERLAB_SETTINGS_DIR",
                     "JUPYTERLAB_WORKSPACES_DIR", "JUPYTER_DATA_DIR"):
            folder = Path(scratch) / name.lower()
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            self.env[name] = str(folder)
        self.workspace = Path(scratch) / "my-work"
        shutil.rmtree(self.workspace, ignore_errors=True)
        self.env["COURSE_WORKSPACE"] = str(self.workspace)
        for key, value in (env or {}).items():
            if value is None:
                self.env.pop(key, None)
            else:
                self.env[key] = value
        self.root = Path(course).parent
        if "COURSE_WORKSPACE" not in self.env:  # removed by ``env``: the course's default
            self.workspace = self.root / "notebooks" / "my-work"
        self.cmd = [python, str(course), "lab", "--no-browser",
                    "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={self.port}",
                    "--ServerApp.port_retries=0", f"--IdentityProvider.token={self.token}",
                    *extra_args]
        self.proc: subprocess.Popen[str] | None = None
        self.lines: list[tuple[float, str]] = []
        self.started = 0.0
        self.ready_after: float | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def start(self, timeout: float = 300.0) -> CourseLab:
        """Start the command and wait until JupyterLab's API answers."""
        import threading

        self.started = time.perf_counter()
        self.proc = subprocess.Popen(self.cmd, cwd=self.root, env=self.env,
                                     stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True,
                                     start_new_session=True)

        def read(proc: subprocess.Popen[str]) -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                self.lines.append((time.perf_counter() - self.started, line))

        threading.Thread(target=read, args=(self.proc,), daemon=True).start()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                urllib.request.urlopen(f"{self.base_url}api/status?token={self.token}",
                                       timeout=2)
                self.ready_after = time.perf_counter() - self.started
                return self
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.1)
        output = self.output()
        self.stop()
        raise RuntimeError(f"`course lab` did not answer within {timeout:.0f} s:\n{output}")

    def output(self) -> str:
        """What the command printed so far."""
        return "".join(line for _, line in self.lines)

    def stop(self) -> None:
        if self.proc is not None:
            stop_process_group(self.proc)

    def __enter__(self) -> CourseLab:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
