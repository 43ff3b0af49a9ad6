"""Serve nbgrader's formgrader with a Content-Security-Policy that forbids inline script.

The autograded notebooks that formgrader shows are already inert
(:mod:`course_grading.inert`); this Jupyter server extension is the second wall. Every page
under ``/formgrader/`` is sent with :data:`FORMGRADER_CSP`: scripts only from files of this
server, no inline script, no ``on...=`` handler, no request to another origin. A student's
own files, which formgrader serves from the autograded folder, are sent with
:data:`FILES_CSP`: a sandbox with no script at all.

nbgrader's templates set a few page variables in inline ``<script>`` blocks and use
``onclick`` attributes. :class:`ScriptFreeLoader` serves those templates rewritten: each
variable becomes a ``data-`` attribute of ``formgrader_vars.js``, each handler a
``data-course-onclick`` attribute that ``formgrade_page.js`` binds, both files of this
package. A template that still holds an inline script after the rewrite is refused (the
page then fails to render), so a new nbgrader with other inline scripts fails closed.

Enable it in the instructor's Jupyter server config::

    c.ServerApp.jpserver_extensions = {"course_grading.formgrader_csp": True}

or open formgrader for a course directory with the policy on, in one command (as root too)::

    python -m course_grading.formgrader_csp quiz

Examples
--------
>>> text = '<script>\\nvar assignment_id = "{{ assignment_id }}";\\n</script>'
>>> print(rewrite_template(text, "{{ base_url }}"))
<script src="{{ base_url }}/course-grading/static/formgrader_vars.js" data-vars="assignment_id" \
data-assignment_id="{{ (assignment_id) | e }}"></script>
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jinja2

__all__ = ["FILES_CSP", "FORMGRADER_CSP", "SERVER_CONFIG", "ScriptFreeLoader",
           "UnsafeTemplateError", "formgrader_command", "rewrite_template",
           "run_until_stopped"]

#: The policy of every formgrader page.
FORMGRADER_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; object-src 'none'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'self'"
)
#: The policy of a student's files served by formgrader: nothing runs, nothing loads.
FILES_CSP = "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; sandbox"

#: The Jupyter server config that turns this extension on (deploy/instructor-jupyter-config/
#: holds the same, for JupyterHub).
SERVER_CONFIG = {"ServerApp": {"jpserver_extensions": {"course_grading.formgrader_csp": True}}}

#: Set by ``python -m course_grading.formgrader_csp`` (the laptop command): there is no
#: nbgrader exchange on this machine on purpose, so formgrader's warning that the exchange
#: "does not exist and could not be created" becomes a note that says what to do instead.
NO_EXCHANGE_ENV = "COURSE_FORMGRADER_NO_EXCHANGE"
NO_EXCHANGE_NOTE = (
    '<div class="alert alert-info" id="note-no-exchange">No exchange on this machine, so '
    "Release and Collect are off: hand out <code>release/&lt;assignment&gt;/</code> "
    "yourself and put each submission in <code>submitted/&lt;student&gt;/&lt;assignment&gt;/"
    "</code> (on JupyterHub the exchange does both).</div>")
_EXCHANGE_WARNING = re.compile(r'<div class="alert alert-warning" id="warning-exchange">.*?'
                               r"</div>", re.S)
#: JupyterLab's page config for the laptop command: no "Would you like to get notified
#: about official Jupyter news?" prompt and no update check (the plugin that does both is
#: off; ``jupyter labextension disable`` writes the same file).
LAB_PAGE_CONFIG = {"disabledExtensions": {"@jupyterlab/apputils-extension:announcements":
                                          True}}

STATIC_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "formgrader_static")
STATIC_URL = "course-grading/static"
#: The stylesheet of the notebook pages (formgrader's and the feedback's), in STATIC_DIR.
READABLE_CSS = "readable.css"

_VARS_BLOCK = re.compile(
    r'<script(?: type="text/javascript")?>\s*((?:var [a-z_]+ = "[^"\n]*";\s*)+)</script>')
_VAR = re.compile(r'var ([a-z_]+) = "([^"\n]*)";')
_PAGE_BLOCK = re.compile(r'<script type="text/javascript">\s*function toggle_name\(on\).*?'
                         r'</script>', re.S)
_TOOLTIP_BLOCK = re.compile(r"<script type=\"text/javascript\">\s*\$\('span\.glyphicon\.name"
                            r".*?</script>", re.S)
_ONCLICK = re.compile(r'onclick="(\w+)\((true|false)?\);?"', re.I)
_JINJA = re.compile(r"\{\{\s*(.+?)\s*\}\}")
_INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*type=\"text/x-mathjax-config\")"
                            r"[^>]*>", re.I)
_HANDLER = re.compile(r"\son[a-z]+\s*=", re.I)
_STATIC_BASE = re.compile(r'(?:src|href)="(\{\{[^}]*\}\})/formgrader/static/')
_MATHJAX = "{{ mathjax() }}"


class UnsafeTemplateError(RuntimeError):
    """A formgrader template still runs inline script after the rewrite."""


def _attribute(value: str) -> str:
    """A template string's text for an HTML attribute: every ``{{ x }}`` escaped."""
    return _JINJA.sub(lambda m: "{{ (" + m.group(1) + ") | e }}", value)


def rewrite_template(text: str, base: str) -> str:
    """nbgrader template text without inline scripts or ``on...=`` handlers.

    Parameters
    ----------
    text : str
        The template's source.
    base : str
        The Jinja expression of the server's base URL in that template.
    """
    def variables(match: re.Match[str]) -> str:
        pairs = _VAR.findall(match.group(1))
        attrs = " ".join(f'data-{name}="{_attribute(value)}"' for name, value in pairs)
        names = " ".join(name for name, _ in pairs)
        return (f'<script src="{base}/{STATIC_URL}/formgrader_vars.js" data-vars="{names}" '
                f"{attrs}></script>")

    page = f'<script src="{base}/{STATIC_URL}/formgrade_page.js"></script>'
    text = _VARS_BLOCK.sub(variables, text)
    text = _PAGE_BLOCK.sub(page, text)
    text = _TOOLTIP_BLOCK.sub("", text)
    return _ONCLICK.sub(lambda m: f'data-course-onclick="{m.group(1)}'
                        + (f':{m.group(2)}' if m.group(2) else "") + '"', text)


class ScriptFreeLoader(jinja2.BaseLoader):
    """Loads nbgrader's formgrader templates, rewritten by :func:`rewrite_template`."""

    def __init__(self, root: str) -> None:
        self.root = root

    def get_source(self, environment: jinja2.Environment, template: str
                   ) -> tuple[str, str, Any]:
        """The rewritten source of ``template`` (a name relative to nbgrader's folder).

        Raises
        ------
        jinja2.TemplateNotFound
            If nbgrader has no such template.
        UnsafeTemplateError
            If the rewritten template still holds inline script or an event handler.
        """
        candidates = [os.path.join(self.root, template),
                      os.path.join(self.root, "formgrade", template)]
        path = next((p for p in candidates if os.path.isfile(p)), None)
        if path is None or ".." in template.split("/"):
            raise jinja2.TemplateNotFound(template)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        base = _STATIC_BASE.search(text)
        page_base = base.group(1) if base else "{{ base_url }}"
        if template == "base.tpl":  # every list page: the script that binds the handlers
            text = text.replace("</head>", f'  <script src="{page_base}/{STATIC_URL}/'
                                'formgrade_page.js"></script>\n</head>', 1)
        # nbconvert's MathJax comes from a CDN the policy blocks: a stand-in from this server
        # (the math is MathML already, course_grading/math_markup.py), and the course's
        # stylesheet, which wraps verdicts and written answers inside their cells
        text = text.replace(_MATHJAX, f'<script src="{page_base}/{STATIC_URL}/no_mathjax.js">'
                                      f'</script>\n<link rel="stylesheet" href="{page_base}/'
                                      f'{STATIC_URL}/{READABLE_CSS}">')
        text = rewrite_template(text, page_base)
        if "data-submission_id=" in text:  # the Manual Grading page: the written answer's guide
            text = _add_written_guide(text, page_base)
        if template == "manage_assignments.tpl" and os.environ.get(NO_EXCHANGE_ENV):
            text = _EXCHANGE_WARNING.sub(NO_EXCHANGE_NOTE, text)
        leftover = _INLINE_SCRIPT.search(text) or _HANDLER.search(text)
        if leftover:
            raise UnsafeTemplateError(
                f"the formgrader template {template} still runs inline script after the "
                f"course's rewrite ({leftover.group(0).strip()!r}); refusing to serve it")
        mtime = os.path.getmtime(path)
        return text, path, lambda: os.path.getmtime(path) == mtime


def _add_written_guide(text: str, base: str) -> str:
    """The formgrade page's variables script, followed by ``written_guide.js``
    (:mod:`course_grading.written_guide`), which reads them."""
    from .written_guide import WRITTEN

    end = text.index("</script>", text.index("data-submission_id=")) + len("</script>")
    script = (f'\n<script src="{base}/{STATIC_URL}/written_guide.js" '
              f'data-question="{WRITTEN}"></script>')
    return text[:end] + script + text[end:]


def _nbgrader_templates() -> str:
    from nbgrader.server_extensions.formgrader import handlers

    return str(handlers.template_path)


def _swap_templates(settings: dict[str, Any]) -> None:
    """Point formgrader's page renderer and notebook exporter at the rewritten templates.

    Idempotent and cheap once done: it runs before every formgrader request, because
    nbgrader's formgrader extension may load after this one (JupyterHub's single-user
    server loads extensions in name order) and then sets its own template settings.
    """
    env = settings.get("nbgrader_jinja2_env")
    exporter = settings.get("nbgrader_exporter")
    env_done = env is None or isinstance(env.loader, ScriptFreeLoader)
    exporter_done = exporter is None or any(
        isinstance(x, ScriptFreeLoader) for x in exporter.extra_loaders)
    if env_done and exporter_done:
        return
    loader = ScriptFreeLoader(_nbgrader_templates())
    if not env_done:
        settings["nbgrader_jinja2_env"] = jinja2.Environment(loader=loader)
    if not exporter_done:
        from .math_markup import RenderMath

        exporter.extra_loaders = [loader]
        exporter.register_preprocessor(RenderMath(), enabled=True)  # math without MathJax


def _csp_transform(base_url: str, settings: dict[str, Any]) -> type:
    from tornado.web import OutputTransform

    formgrader = base_url.rstrip("/") + "/formgrader"
    files = re.compile(re.escape(formgrader) + r"/submissions/[^/]+/(?!prev|next)[^?#]+")

    class ContentSecurityPolicy(OutputTransform):
        """Adds the course's Content-Security-Policy to every formgrader response."""

        def __init__(self, request: Any) -> None:
            # made per request, before the handler runs: the templates are swapped in time
            super().__init__(request)
            self.path = request.path
            if self.path == formgrader or self.path.startswith(formgrader + "/"):
                _swap_templates(settings)

        def transform_first_chunk(self, status_code: int, headers: Any, chunk: bytes,
                                  finishing: bool) -> tuple[int, Any, bytes]:
            if self.path == formgrader or self.path.startswith(formgrader + "/"):
                student_file = bool(files.fullmatch(self.path)) and \
                    not self.path.endswith("/")
                headers["Content-Security-Policy"] = FILES_CSP if student_file \
                    else FORMGRADER_CSP
                headers["X-Content-Type-Options"] = "nosniff"
            return status_code, headers, chunk

    return ContentSecurityPolicy


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "course_grading.formgrader_csp"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    """Add the policy, the script files, the rewritten templates and the written answer's
    guide (:mod:`course_grading.written_guide`) to the server."""
    from jupyter_server.utils import url_path_join
    from tornado.web import StaticFileHandler

    from .written_guide import URL_PATTERN, WrittenGuideHandler

    webapp = serverapp.web_app
    base_url = webapp.settings.get("base_url", "/")
    webapp.add_handlers(".*$", [(url_path_join(base_url, STATIC_URL, "(.*)"),
                                 StaticFileHandler, {"path": STATIC_DIR}),
                                (url_path_join(base_url, URL_PATTERN), WrittenGuideHandler)])
    webapp.add_transform(_csp_transform(base_url, webapp.settings))
    _swap_templates(webapp.settings)
    serverapp.log.info("course_grading.formgrader_csp: formgrader served with %s",
                       FORMGRADER_CSP)


def formgrader_command(course_dir: str | os.PathLike[str], extra: Sequence[str] = (),
                       is_root: bool | None = None) -> list[str]:
    """The ``jupyter lab`` command that opens formgrader on ``course_dir``.

    Parameters
    ----------
    course_dir : path
        The nbgrader course directory (holding ``nbgrader_config.py``).
    extra : sequence of str
        More arguments for ``jupyter lab`` (``--no-browser``, ``--ServerApp.port=...``).
    is_root : bool, optional
        Add ``--allow-root`` (default: when this process runs as root).

    Examples
    --------
    >>> formgrader_command("quiz", is_root=True)[-3:]
    ['--ServerApp.default_url=/formgrader', '--ServerApp.root_dir=quiz', '--allow-root']
    """
    root = os.geteuid() == 0 if is_root is None else is_root
    return [sys.executable, "-m", "jupyterlab", "--ServerApp.default_url=/formgrader",
            f"--ServerApp.root_dir={course_dir}", *(["--allow-root"] if root else []),
            *extra]


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m course_grading.formgrader_csp [COURSE_DIR] [jupyter lab options]``.

    Runs JupyterLab in the course directory (default ``quiz``) with this extension on, and
    opens formgrader. Returns JupyterLab's exit status.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    course = Path(args.pop(0) if args and not args[0].startswith("-") else "quiz")
    if not (course / "nbgrader_config.py").is_file():
        print(f"formgrader_csp: {course} must be an nbgrader course directory with an "
              f"nbgrader_config.py (got {course.resolve()})", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="formgrader-csp-") as config_dir:
        Path(config_dir, "jupyter_server_config.json").write_text(json.dumps(SERVER_CONFIG))
        Path(config_dir, "labconfig").mkdir()
        Path(config_dir, "labconfig", "page_config.json").write_text(json.dumps(
            LAB_PAGE_CONFIG))
        env = dict(os.environ)
        env[NO_EXCHANGE_ENV] = "1"
        env["JUPYTER_CONFIG_PATH"] = os.pathsep.join(
            p for p in (config_dir, env.get("JUPYTER_CONFIG_PATH")) if p)
        # nbgrader's scripts (alembic, nbgrader) beside this Python, as in a venv
        env["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), env.get("PATH", "")])
        return run_until_stopped(formgrader_command(course.resolve(), args), cwd=course,
                                 env=env)


def run_until_stopped(cmd: Sequence[str], **popen: Any) -> int:
    """Run ``cmd`` until it exits, as if it ran in this process's place; its exit status.

    JupyterLab must run as a child (the temporary config directory is removed when it
    exits), yet stop as ``jupyter lab`` does. Ctrl+C in the terminal reaches the child
    itself (the terminal signals its whole process group): this process ignores it and
    waits, so JupyterLab can ask "Shut down this Jupyter server (y/[n])?" and read the
    answer. SIGTERM and SIGHUP sent to this process are passed on to the child, so that
    stopping this process by its id stops JupyterLab and leaves no server behind.

    Examples
    --------
    >>> run_until_stopped([sys.executable, "-c", "raise SystemExit(3)"])
    3
    """
    import signal
    import subprocess

    child = subprocess.Popen(list(cmd), **popen)
    forwarded = [s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None))
                 if s is not None]
    before = {s: signal.signal(s, lambda signum, _frame: child.send_signal(signum))
              for s in forwarded}
    before[signal.SIGINT] = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        code = child.wait()
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)
    return 128 - code if code < 0 else code  # killed by signal N: 128 + N, as a shell says


if __name__ == "__main__":
    sys.exit(main())
