"""Python bytecode for the site, compiled at build time so that no student's browser has to.

Pyodide's packages and its standard library carry Python sources only, so a kernel compiles
every module it imports, on every visit (a browser keeps nothing of it): measured in the
site, about half of the time from opening a lesson to its first output. The build imports
what a kernel and the lessons import, in the site's own Pyodide under Node.js (the same
CPython as the browser's), compiles exactly those modules and ships the bytecode:

- for site-packages, ``__pycache__/<module>.cpython-312.pyc`` files in one more wheel
  (:data:`WHEEL_NAME`), which Pyodide unpacks beside the packages' sources when it starts;
- for the standard library, ``<module>.pyc`` entries added to ``python_stdlib.zip`` (where
  Python's zip importer looks for them); every official entry of the zip stays as it was.

The files are *unchecked-hash* bytecode (PEP 552): Python takes them without comparing
timestamps (files unpacked from a wheel get the time of unpacking, which would make
timestamp-checked bytecode look stale on every visit). Each holds the hash of the source it
was compiled from; the site's tests check that it matches the source it sits beside.
"""

from __future__ import annotations

import base64
import io
import zipfile
from collections.abc import Mapping
from pathlib import Path

from .wheels import make_wheel

__all__ = [
    "STDLIB_ZIP",
    "WHEEL_NAME",
    "bytecode_wheel",
    "compile_code",
    "decode",
    "stdlib_with_bytecode",
]

# The wheel of site-packages bytecode (a distribution of its own in the site's lock).
WHEEL_NAME = "pyodide-bytecode"
STDLIB_ZIP = "python_stdlib.zip"

# Run in the site's Pyodide (course_site.build._run_in_pyodide), its packages loaded: import
# what a kernel imports as it starts (pyodide_kernel: IPython, traitlets, jedi, ...), every
# module of the students' library and what a lesson's first figure needs, then compile every
# source Python compiled meanwhile or had compiled as it started. The last expression is the
# result (JSON).
_CODE = """
import builtins, sys

# the modules Pyodide imported as it started, and the sources Python compiles from here on
# (imports that fail included, such as dateutil.tz.win); this script's own tools come later
_compiled = {{getattr(m, "__file__", None) or "" for m in list(sys.modules.values())}}
_compile = builtins.compile
def _watch(source, filename, mode, *args, **kwargs):
    if mode == "exec" and str(filename).endswith(".py"):
        _compiled.add(str(filename))
    return _compile(source, filename, mode, *args, **kwargs)
builtins.compile = _watch

# as a kernel starts: piplite (micropip), then pyodide_kernel (which replaces
# sys.stdout/stderr: this script prints nothing)
import piplite.piplite  # noqa: F401
import pyodide_kernel  # noqa: F401
import importlib, io, pkgutil
for _name in {libraries!r}:
    _package = importlib.import_module(_name)
    for _info in pkgutil.walk_packages(getattr(_package, "__path__", []), _name + "."):
        importlib.import_module(_info.name)
import matplotlib
matplotlib.use("module://matplotlib_inline.backend_inline")
import matplotlib.pyplot as plt
_figure, _axes = plt.subplots()
_axes.imshow([[0.0, 1.0]]); _axes.plot([0, 1]); _axes.set_title("x")
_figure.savefig(io.BytesIO(), format="png")
_figure.savefig(io.BytesIO(), format="svg")  # the lessons' figures are SVG (course_lib.explore)
plt.close(_figure)
import numpy.random  # numpy imports it on first use (every lesson's data is seeded)
numpy.random.default_rng(0).standard_normal(2)
builtins.compile = _compile
sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__

import base64, json, pathlib, py_compile, site, tempfile, zipfile
_site = pathlib.Path(site.getsitepackages()[0])
_archive = next(p for p in sys.path if p.endswith(".zip"))
_unchecked = py_compile.PycInvalidationMode.UNCHECKED_HASH
_packages, _stdlib = {{}}, {{}}
_tmp = pathlib.Path(tempfile.mkdtemp())
with zipfile.ZipFile(_archive) as _zip:
    for _file in sorted(f for f in _compiled if f.endswith(".py")):
        if _file.startswith(_archive + "/"):
            _inner = _file[len(_archive) + 1:]
            _source = _tmp / "source.py"
            _source.write_bytes(_zip.read(_inner))
            _out = _tmp / "out.pyc"
            py_compile.compile(str(_source), str(_out), dfile=_file, doraise=True,
                               invalidation_mode=_unchecked)
            _stdlib[_inner[:-3] + ".pyc"] = _out.read_bytes()
        elif pathlib.Path(_file).is_relative_to(_site) and pathlib.Path(_file).is_file():
            _cached = importlib.util.cache_from_source(_file)
            py_compile.compile(_file, _cached, dfile=_file, doraise=True,
                               invalidation_mode=_unchecked)
            _packages[pathlib.Path(_cached).relative_to(_site).as_posix()] = (
                pathlib.Path(_cached).read_bytes())
_encode = lambda files: {{k: base64.b64encode(v).decode() for k, v in sorted(files.items())}}
json.dumps({{"site_packages": _encode(_packages), "stdlib": _encode(_stdlib),
            "cache_tag": sys.implementation.cache_tag}})
"""


def compile_code(libraries: list[str]) -> str:
    """The Python to run in the site's Pyodide (``libraries``: import names, e.g. course_lib).

    Its result is JSON: ``site_packages`` (path in site-packages to bytecode, base64),
    ``stdlib`` (path in the standard library's zip to bytecode, base64) and ``cache_tag``.
    """
    return _CODE.format(libraries=libraries)


def decode(files: Mapping[str, str]) -> dict[str, bytes]:
    """The files of :func:`compile_code`'s result, from base64."""
    return {name: base64.b64decode(data) for name, data in files.items()}


def bytecode_wheel(folder: Path, version: str, files: Mapping[str, bytes]) -> Path:
    """The wheel of site-packages bytecode: ``files`` maps a path in site-packages to it."""
    bad = sorted(p for p in files if "/__pycache__/" not in f"/{p}" or not p.endswith(".pyc"))
    if bad:
        raise ValueError(f"'files' must be __pycache__/*.pyc paths (got {bad[:3]})")
    return make_wheel(folder, WHEEL_NAME, version, files)


def stdlib_with_bytecode(official: bytes, files: Mapping[str, bytes]) -> bytes:
    """The standard library's zip with ``files`` (``json/__init__.pyc`` etc.) added.

    Every entry of ``official`` is kept, with its name, date and content; a bytecode file is
    added only beside a source of the same name.

    Raises
    ------
    ValueError
        If a file is not bytecode, already in the zip, or has no source beside it.
    """
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(official)) as src, \
            zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as dst:
        names = set(src.namelist())
        bad = sorted(n for n in files
                     if not n.endswith(".pyc") or n in names or n[:-1] not in names)
        if bad:
            raise ValueError(f"'files' must be .pyc beside a .py of the zip (got {bad[:3]})")
        for info in src.infolist():
            dst.writestr(info, src.read(info), compress_type=zipfile.ZIP_DEFLATED,
                         compresslevel=9)
        for name, data in sorted(files.items()):
            item = zipfile.ZipInfo(name, date_time=src.getinfo(name[:-1]).date_time)
            item.external_attr = 0o644 << 16
            dst.writestr(item, data, compress_type=zipfile.ZIP_DEFLATED, compresslevel=9)
    return out.getvalue()
