"""course_site.build.student_packages: the packages the site ships come from one source, the
lessons' own imports (and what those packages import of the checkout in turn), so a package
split out of course_lib reaches the site without a list to keep in step."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from course_site.build import ROOT, SiteBuildError, student_packages


def _lesson(folder: Path, name: str, code: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(json.dumps({"cells": [
        {"cell_type": "markdown", "metadata": {}, "source": "# A lesson"},
        {"cell_type": "code", "metadata": {}, "source": code, "outputs": [],
         "execution_count": None}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))


def _package(root: Path, name: str, code: str = "") -> None:
    (root / name).mkdir(parents=True)
    (root / name / "__init__.py").write_text(code)


def test_the_course_ships_what_its_lessons_import() -> None:
    packages = student_packages()
    # the lessons' library, and the self-study checkpoint's quiz (which imports course_lib too)
    assert packages == [ROOT / "course_lib", ROOT / "course_quiz"]
    assert not {p.name for p in packages} & {"course_grading", "course_exchange", "course_site"}


def test_a_package_comes_with_those_it_imports(tmp_path: Path) -> None:
    _package(tmp_path, "lib_a", "from lib_b import x\n")
    _package(tmp_path, "lib_b", "x = 1\n")
    (tmp_path / "lib_b" / "deep.py").write_text("import lib_c\n")
    _package(tmp_path, "lib_c")
    _package(tmp_path, "unused")
    _lesson(tmp_path / "notebooks", "01_a.ipynb", "import numpy\nfrom lib_a import y")
    _lesson(tmp_path / "notebooks" / "my-work", "01_a.ipynb", "import unused")
    assert student_packages(tmp_path / "notebooks", tmp_path) == [
        tmp_path / "lib_a", tmp_path / "lib_b", tmp_path / "lib_c"]


@pytest.mark.parametrize("where", ["lesson", "package"])
def test_the_instructors_package_never_goes_in(tmp_path: Path, where: str) -> None:
    _package(tmp_path, "course_grading")
    _package(tmp_path, "lib_a", "import course_grading\n" if where == "package" else "")
    code = "import lib_a" + ("\nimport course_grading" if where == "lesson" else "")
    _lesson(tmp_path / "notebooks", "01_a.ipynb", code)
    with pytest.raises(SiteBuildError, match="imports course_grading, which never goes into"):
        student_packages(tmp_path / "notebooks", tmp_path)
