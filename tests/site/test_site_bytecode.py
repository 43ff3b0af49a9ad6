"""The built site's bytecode: a kernel starts without compiling Python, and the bytecode is
that of the very sources it sits beside.

Runs the site's own Pyodide under Node.js (as the build does), with the packages the kernel
preloads; no browser.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from sitedriver import site_preload

from course_site import bytecode, recipe
from course_site.build import _run_in_pyodide
from course_site.fetch import cached_npm, default_cache

pytestmark = [pytest.mark.site, pytest.mark.slow, pytest.mark.timeout(900)]

# In the site's Pyodide: watch every compile of a module's source while a kernel starts and
# a lesson's setup cell runs; then check every bytecode file against its source (PEP 552
# header: magic, flags 0b01 = hash-based and not checked, the source's hash).
CHECK = """
import builtins, importlib.util, json, pathlib, site, sys, zipfile

compiled = []
_compile = builtins.compile
def _watch(source, filename, mode, *args, **kwargs):
    if mode == "exec" and str(filename).endswith(".py"):
        compiled.append(str(filename))
    return _compile(source, filename, mode, *args, **kwargs)
builtins.compile = _watch
import piplite.piplite
import pyodide_kernel
import numpy as np
from course_lib import checks, scores, the_cat_sat
from course_lib.explore import plots, widgets
import matplotlib.pyplot
builtins.compile = _compile
sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__

def _wrong(pyc, source):
    if pyc[:4] != importlib.util.MAGIC_NUMBER:
        return "magic"
    if int.from_bytes(pyc[4:8], "little") != 0b01:
        return "not unchecked-hash"
    if pyc[8:16] != importlib.util.source_hash(source):
        return "hash of another source"
    return None

wrong, checked = [], 0
packages = pathlib.Path(site.getsitepackages()[0])
for pyc in packages.rglob("__pycache__/*.pyc"):
    source = pyc.parent.parent / (pyc.name.split(".")[0] + ".py")
    problem = _wrong(pyc.read_bytes(), source.read_bytes()) if source.is_file() else "no source"
    checked += 1
    if problem:
        wrong.append(f"{pyc}: {problem}")
archive = next(p for p in sys.path if p.endswith(".zip"))
with zipfile.ZipFile(archive) as stdlib:
    names = set(stdlib.namelist())
    for name in sorted(n for n in names if n.endswith(".pyc")):
        source = name[:-1]
        problem = (_wrong(stdlib.read(name), stdlib.read(source)) if source in names
                   else "no source")
        checked += 1
        if problem:
            wrong.append(f"{archive}/{name}: {problem}")
json.dumps({"compiled": compiled, "wrong": wrong, "checked": checked})
"""


@pytest.fixture(scope="module")
def site(site_build: tuple[Path, Any]) -> Path:
    return site_build[0]


def test_the_kernel_and_its_packages_load_in_one_batch(site: Path) -> None:
    """The kernel's worker installs nothing itself when every name it looks for is preloaded
    (else it loads micropip, installs piplite, then ipykernel and pyodide_kernel one by one)."""
    preload = site_preload(site)
    assert set(recipe.KERNEL_STARTUP_PACKAGES) <= set(preload)
    assert bytecode.WHEEL_NAME in preload
    lock = json.loads((site / "static" / "pyodide" / "pyodide-lock.json").read_text())
    for name in preload:
        assert name.replace("_", "-") in lock["packages"], name


def test_a_kernel_starts_and_a_lesson_imports_without_compiling_python(site: Path) -> None:
    result = _run_in_pyodide(site / "static" / "pyodide",
                             [name.replace("_", "-") for name in site_preload(site)], CHECK)
    assert result["compiled"] == [], "compiled from source, no bytecode shipped for it"
    assert result["wrong"] == []
    assert result["checked"] > 500


def test_the_standard_library_keeps_every_official_file(site: Path) -> None:
    import tarfile

    with tarfile.open(cached_npm(recipe.PYODIDE_NPM, default_cache())) as tar:
        member = tar.extractfile(f"package/{bytecode.STDLIB_ZIP}")
        assert member is not None
        official = zipfile.ZipFile(member)
        served = zipfile.ZipFile(site / "static" / "pyodide" / bytecode.STDLIB_ZIP)
        added = set(served.namelist()) - set(official.namelist())
        assert added and all(n.endswith(".pyc") for n in added)
        for name in official.namelist():
            assert served.read(name) == official.read(name), name
