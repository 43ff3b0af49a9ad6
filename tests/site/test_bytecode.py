"""course_site.bytecode: bytecode is only ever added beside its source, never in its place."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from course_site.bytecode import WHEEL_NAME, bytecode_wheel, stdlib_with_bytecode


def _zip(files: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name, data in files.items():
            z.writestr(zipfile.ZipInfo(name, date_time=(2025, 6, 4, 22, 29, 0)), data)
    return out.getvalue()


OFFICIAL = {"json/__init__.py": b"import json.decoder\n", "json/decoder.py": b"x = 1\n",
            "LICENSE.txt": b"PSF"}


def test_every_official_entry_stays_and_bytecode_goes_beside_its_source() -> None:
    made = zipfile.ZipFile(io.BytesIO(stdlib_with_bytecode(
        _zip(OFFICIAL), {"json/decoder.pyc": b"\x00bytecode"})))
    assert {n: made.read(n) for n in OFFICIAL} == OFFICIAL
    assert made.read("json/decoder.pyc") == b"\x00bytecode"
    assert sorted(made.namelist()) == sorted([*OFFICIAL, "json/decoder.pyc"])
    assert made.getinfo("json/decoder.pyc").date_time == (2025, 6, 4, 22, 29, 0)


@pytest.mark.parametrize("name", ["json/missing.pyc", "json/decoder.py", "LICENSE.pyc"])
def test_bytecode_without_its_source_or_in_its_place_is_refused(name: str) -> None:
    with pytest.raises(ValueError, match=r"must be \.pyc beside a \.py of the zip"):
        stdlib_with_bytecode(_zip(OFFICIAL), {name: b"\x00"})


def test_the_wheel_holds_only_pycache_files(tmp_path: Path) -> None:
    pyc = "numpy/__pycache__/version.cpython-312.pyc"
    wheel = bytecode_wheel(tmp_path, "0.27.7", {pyc: b"\x00"})
    assert wheel.name == f"{WHEEL_NAME.replace('-', '_')}-0.27.7-py3-none-any.whl"
    names = zipfile.ZipFile(wheel).namelist()
    assert pyc in names and not [n for n in names if n.endswith(".py")]
    for bad in ("numpy/version.py", "numpy/version.pyc"):
        with pytest.raises(ValueError, match="must be __pycache__"):
            bytecode_wheel(tmp_path, "0.27.7", {bad: b"\x00"})
