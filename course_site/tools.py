"""The site's build tools, in an environment of their own: never the students' ``.venv``.

JupyterLite's build tools (``jupyterlite-core``, ``jupyterlite-pyodide-kernel`` and
``jupyter_server``, the extra ``site`` of pyproject.toml) install a JupyterLab extension,
the Pyodide kernel's, into whatever environment holds them. In a student's environment that
extension is loaded by the desktop JupyterLab too, where it cannot work (it asks for
JupyterLite's shared modules: every page of ``./course lab`` then logged "Shared module
@jupyterlite/server doesn't exist in shared scope default"). So ``./course site`` installs
them into ``.site-venv/`` (``$COURSE_SITE_VENV``), and the build runs JupyterLite from there,
whichever Python runs :mod:`course_site` itself (its own code needs the standard library
only; the tests run it from ``.venv``).

:func:`find_tools` finds them: in the site's environment, else in the running Python when it
has them (``pip install '.[site]'`` into an environment of one's own), and checks their
versions against :mod:`course_site.recipe`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from . import recipe

__all__ = ["DEFAULT_VENV", "BuildTools", "ToolsError", "find_tools", "site_venv"]

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_VENV = ROOT / ".site-venv"
# The distributions the build needs, with the versions the recipe pins (None: any).
PINNED = {"jupyterlite-core": recipe.JUPYTERLITE_CORE,
          "jupyterlite-pyodide-kernel": recipe.PYODIDE_KERNEL,
          "jupyter_server": None}
KERNEL_EXTENSION = Path("share/jupyter/labextensions/@jupyterlite/pyodide-kernel-extension")

# Run by the candidate Python: its prefix, the versions it has, where jupyterlite_core is.
_PROBE = """
import importlib.metadata as metadata, importlib.util, json, sys
def version(dist):
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None
spec = importlib.util.find_spec("jupyterlite_core")
print(json.dumps({"prefix": sys.prefix, "versions": {d: version(d) for d in DISTS},
                  "core": spec.submodule_search_locations[0] if spec else None}))
"""


class ToolsError(RuntimeError):
    """The build tools are missing or not the pinned versions; the message says how to get
    them."""


def site_venv() -> Path:
    """The site's environment: ``$COURSE_SITE_VENV``, or ``.site-venv/`` in the checkout."""
    env = os.environ.get("COURSE_SITE_VENV")
    return Path(env) if env else DEFAULT_VENV


def _venv_python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


@dataclass(frozen=True)
class BuildTools:
    """An environment with the pinned build tools.

    Attributes
    ----------
    python : Path
        Its interpreter: ``python -m jupyterlite_core build`` runs with it.
    prefix : Path
        Its ``sys.prefix`` (where the kernel's JupyterLab extension is installed).
    core : Path
        The ``jupyterlite_core`` package folder (it holds JupyterLite's app archive).
    """

    python: Path
    prefix: Path
    core: Path

    @property
    def kernel_extension(self) -> Path:
        """The Pyodide kernel's JupyterLab extension, as the kernel package installed it."""
        return self.prefix / KERNEL_EXTENSION

    @property
    def app_archive(self) -> Path:
        """JupyterLite's app (``jupyterlite-app-<version>.tgz``): the files it builds from."""
        return self.core / f"jupyterlite-app-{recipe.JUPYTERLITE_CORE}.tgz"


def _probe(python: Path) -> dict | None:
    try:
        done = subprocess.run([str(python), "-c", f"DISTS = {list(PINNED)!r}\n{_PROBE}"],
                              capture_output=True, text=True, timeout=120,
                              stdin=subprocess.DEVNULL)
    except OSError:
        return None
    if done.returncode:
        return None
    try:
        return json.loads(done.stdout)
    except ValueError:
        return None


def _wrong(found: dict) -> list[str]:
    """What the probed environment lacks: 'dist==version (found X)'."""
    wrong = []
    for dist, version in PINNED.items():
        got = found["versions"].get(dist)
        if got is None or (version is not None and got != version):
            wrong.append(f"{dist}{'==' + version if version else ''} (found {got or 'none'})")
    return wrong


def find_tools(python: Path | None = None) -> BuildTools:
    """The build tools: in ``python``'s environment if given, else in the site's environment
    (:func:`site_venv`), else in the running Python.

    Raises
    ------
    ToolsError
        If none of these has the pinned versions; the message names what each had.
    """
    candidates = ([Path(python)] if python is not None
                  else [_venv_python(site_venv()), Path(sys.executable)])
    seen = []
    for candidate in candidates:
        if not candidate.exists():
            seen.append(f"{candidate}: no such interpreter")
            continue
        found = _probe(candidate)
        if found is None:
            seen.append(f"{candidate}: does not run")
            continue
        wrong = _wrong(found)
        if wrong:
            seen.append(f"{candidate}: needs {', '.join(wrong)}")
            continue
        return BuildTools(candidate, Path(found["prefix"]), Path(found["core"]))
    raise ToolsError("the site's build tools are not installed: `./course site` installs them "
                     f"into {site_venv()} (an environment of their own, not the students'); "
                     "looked in " + "; ".join(seen))
