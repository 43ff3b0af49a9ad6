"""course_site.wheels: the students' library as a reproducible wheel, and nothing else."""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

import pytest

from course_site.wheels import library_wheel, make_wheel, wheel_metadata, wheel_top_level

ROOT = Path(__file__).resolve().parents[2]


def test_the_library_wheel_holds_course_lib_only_and_is_reproducible(tmp_path: Path) -> None:
    first = library_wheel(ROOT / "course_lib", tmp_path / "a", "0.1.0")
    second = library_wheel(ROOT / "course_lib", tmp_path / "b", "0.1.0")
    assert first.name == "course_lib-0.1.0-py3-none-any.whl"
    assert first.read_bytes() == second.read_bytes(), "same files must give the same wheel"
    names = zipfile.ZipFile(first).namelist()
    sources = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "course_lib").rglob("*")
                     if p.is_file() and "__pycache__" not in p.parts)
    assert sorted(n for n in names if not n.startswith("course_lib-0.1.0.dist-info/")) == sources
    assert "course_lib/py.typed" in names
    assert wheel_top_level(first) == ["course_lib"]
    assert wheel_metadata(first)["Name"] == ["course_lib"]


def test_record_lists_every_file_with_its_hash(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, "demo-pkg", "2.0", {"demo/__init__.py": b"x = 1\n",
                                                     "demo_mod.py": b""},
                       requires=("numpy>=1",))
    with zipfile.ZipFile(wheel) as whl:
        record = whl.read("demo_pkg-2.0.dist-info/RECORD").decode().splitlines()
        for line in record:
            path, digest, size = line.rsplit(",", 2)
            if path.endswith("RECORD"):
                continue
            data = whl.read(path)
            expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            assert digest == f"sha256={expected.decode()}" and int(size) == len(data)
        assert len(record) == len(whl.namelist())
    assert wheel_metadata(wheel)["Requires-Dist"] == ["numpy>=1"]
    assert wheel_top_level(wheel) == ["demo", "demo_mod"]


def test_a_folder_without_init_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="'package_dir' must be a Python package"):
        library_wheel(tmp_path, tmp_path / "out", "1.0")


def test_a_bad_name_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="'name' must be a distribution name"):
        make_wheel(tmp_path, "../evil", "1.0", {})


def test_a_symbolic_link_in_the_library_is_refused(tmp_path: Path) -> None:
    package = tmp_path / "lib"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "data.py").symlink_to("/etc/hostname")
    with pytest.raises(ValueError, match="'package_dir' must hold no symbolic links"):
        library_wheel(package, tmp_path / "out", "1.0")
