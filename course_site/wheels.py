"""Pure-Python wheels made at build time: the students' library, and Matplotlib's font list.

The site's Python kernel installs packages from wheels listed in its ``pyodide-lock.json``.
:func:`library_wheel` packs ``course_lib`` (the students' library only; the instructor's
``course_grading`` never goes into the site) so that a lesson's ``from course_lib import
...`` loads it like any other package. Wheels are reproducible: same files, same bytes.
"""

from __future__ import annotations

import base64
import hashlib
import re
import zipfile
from collections.abc import Mapping
from pathlib import Path

__all__ = ["library_wheel", "make_wheel", "wheel_metadata", "wheel_top_level"]

# A fixed timestamp (the earliest a zip can hold), so the same files give the same wheel.
_EPOCH = (1980, 1, 1, 0, 0, 0)


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


def make_wheel(folder: Path, name: str, version: str, files: Mapping[str, bytes],
               requires: tuple[str, ...] = ()) -> Path:
    """Write ``<name>-<version>-py3-none-any.whl`` into ``folder`` and return its path.

    Parameters
    ----------
    folder
        Where the wheel goes.
    name, version
        The distribution's name (``-`` and ``.`` become ``_`` in the file name) and version.
    files
        Archive path (``pkg/module.py``) to content.
    requires
        ``Requires-Dist`` lines of its metadata.
    """
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name):
        raise ValueError(f"'name' must be a distribution name (got {name!r})")
    stem = f"{re.sub(r'[-_.]+', '_', name)}-{version}"
    info = f"{stem}.dist-info"
    meta = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    meta += [f"Requires-Dist: {r}" for r in requires]
    entries = dict(sorted(files.items()))
    entries[f"{info}/METADATA"] = ("\n".join(meta) + "\n").encode()
    entries[f"{info}/WHEEL"] = (b"Wheel-Version: 1.0\nGenerator: course_site\n"
                                b"Root-Is-Purelib: true\nTag: py3-none-any\n")
    top = sorted({path.split("/")[0] for path in files})
    entries[f"{info}/top_level.txt"] = ("\n".join(top) + "\n").encode()
    record = [f"{path},{_record_hash(data)},{len(data)}" for path, data in entries.items()]
    record.append(f"{info}/RECORD,,")
    entries[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{stem}-py3-none-any.whl"
    # deflate's best compression: a few per cent smaller, as quick to unpack
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as whl:
        for arcname, data in entries.items():
            item = zipfile.ZipInfo(arcname, date_time=_EPOCH)
            item.compress_type = zipfile.ZIP_DEFLATED
            item.external_attr = 0o644 << 16
            whl.writestr(item, data, compresslevel=9)
    return path


def library_wheel(package_dir: Path, folder: Path, version: str) -> Path:
    """A wheel of the package in ``package_dir`` (its files, without caches or bytecode).

    Raises
    ------
    ValueError
        If ``package_dir`` is not a Python package (no ``__init__.py``), or holds a symbolic
        link (the wheel would carry whatever it points to).
    """
    package_dir = Path(package_dir)
    if not (package_dir / "__init__.py").is_file():
        raise ValueError(f"'package_dir' must be a Python package with an __init__.py "
                         f"(got {package_dir})")
    links = sorted(str(p) for p in package_dir.rglob("*") if p.is_symlink())
    if links:
        raise ValueError(f"'package_dir' must hold no symbolic links (got {links})")
    files = {}
    for path in sorted(package_dir.rglob("*")):
        rel = path.relative_to(package_dir.parent)
        if path.is_file() and "__pycache__" not in rel.parts and path.suffix != ".pyc":
            files[rel.as_posix()] = path.read_bytes()
    return make_wheel(folder, package_dir.name, version, files)


def wheel_metadata(wheel: Path) -> dict[str, list[str]]:
    """The METADATA fields of a wheel: field name to its values (``Requires-Dist`` etc.)."""
    with zipfile.ZipFile(wheel) as whl:
        [meta] = [n for n in whl.namelist()
                  if n.count("/") == 1 and n.endswith(".dist-info/METADATA")]
        text = whl.read(meta).decode("utf-8")
    fields: dict[str, list[str]] = {}
    for line in text.split("\n\n", 1)[0].splitlines():
        key, sep, value = line.partition(": ")
        if sep and not line[:1].isspace():
            fields.setdefault(key, []).append(value.strip())
    return fields


def wheel_top_level(wheel: Path) -> list[str]:
    """The importable top-level names a wheel installs (packages and modules)."""
    names = set()
    with zipfile.ZipFile(wheel) as whl:
        for entry in whl.namelist():
            first, _, rest = entry.partition("/")
            if first.endswith((".dist-info", ".data")):
                continue
            if rest:
                names.add(first)
            elif first.endswith(".py"):
                names.add(first[:-3])
    return sorted(names)
