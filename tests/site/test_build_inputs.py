"""``./course site --serve`` serves an up-to-date build without building it again.

A build records a hash of everything it read (course_site.build.inputs_key: the lessons, the
students' library, the course's extensions, the builder and its pins) in the site's
``course-site.json``; ``python -m course_site`` builds only when that record is missing or
differs (or with ``--force``). These tests use a stand-in site folder (no build): the build
itself records the key, checked on the session's real build in test_site_build.py.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from localports import free_port

from course_site import build as site_build_module
from course_site.build import (
    ROOT,
    SiteBuildError,
    inputs_key,
    main,
    student_packages,
    up_to_date,
)


def _site(folder: Path, key: str | None) -> Path:
    folder.mkdir(parents=True)
    (folder / "index.html").write_text("<p>the site</p>")
    record = {"lessons": {}, "packages": []}
    if key is not None:
        record["inputs"] = key
    (folder / "course-site.json").write_text(json.dumps(record))
    return folder


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Builds are recorded (and stopped); serving stops at its first wait (as Ctrl+C would)."""
    calls: list[str] = []

    def fake_build(output: Path, *args: object, **kwargs: object) -> None:
        calls.append(f"build {output}")
        raise SiteBuildError("(the test stops the build here)")

    def interrupt(seconds: float) -> None:
        calls.append("serving")
        raise KeyboardInterrupt

    monkeypatch.setattr(site_build_module, "build", fake_build)
    monkeypatch.setattr(site_build_module.time, "sleep", interrupt)
    return calls


def test_an_up_to_date_site_is_served_without_a_build(tmp_path: Path, served: list[str],
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    site = _site(tmp_path / "site", inputs_key())
    assert main(["--output", str(site), "--serve", "--port", str(free_port())]) == 0
    assert served == ["serving"]
    assert "nothing to build" in capsys.readouterr().out


@pytest.mark.parametrize("key", [None, "0" * 64])
def test_a_site_of_other_inputs_is_built_first(tmp_path: Path, served: list[str],
                                               key: str | None) -> None:
    site = _site(tmp_path / "site", key)
    assert main(["--output", str(site), "--serve", "--port", str(free_port())]) == 1
    assert served == [f"build {site}"], "built (the fake build fails, so nothing is served)"


def test_force_builds_an_up_to_date_site(tmp_path: Path, served: list[str]) -> None:
    site = _site(tmp_path / "site", inputs_key())
    assert main(["--output", str(site), "--force"]) == 1
    assert served == [f"build {site}"]


def test_the_key_follows_each_input(tmp_path: Path) -> None:
    notebooks = tmp_path / "notebooks"
    shutil.copytree(ROOT / "notebooks", notebooks,
                    ignore=shutil.ignore_patterns("my-work", ".ipynb_checkpoints"))
    libraries = [tmp_path / package.name for package in student_packages()]
    for package, copy in zip(student_packages(), libraries, strict=True):
        shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    key = inputs_key(notebooks, libraries)
    assert key == inputs_key(), "the same files give the same key"
    # a student's copies, caches and hidden files are not the site's inputs
    (notebooks / "my-work").mkdir()
    (notebooks / "my-work" / "01_overview.ipynb").write_text("{}")
    (notebooks / ".ipynb_checkpoints").mkdir()
    (notebooks / ".ipynb_checkpoints" / "x.ipynb").write_text("{}")
    assert inputs_key(notebooks, libraries) == key
    lesson = sorted(notebooks.glob("*.ipynb"))[1]
    lesson.write_text(lesson.read_text().replace("Attention", "Attention!", 1))
    changed = inputs_key(notebooks, libraries)
    assert changed != key, "a changed lesson"
    module = sorted(libraries[-1].rglob("*.py"))[0]
    module.write_text(module.read_text() + "\n")
    assert inputs_key(notebooks, libraries) not in (key, changed), "a changed package"


def test_up_to_date_needs_a_whole_site(tmp_path: Path) -> None:
    site = _site(tmp_path / "site", "k")
    assert up_to_date(site, "k") and not up_to_date(site, "other")
    (site / "index.html").unlink()
    assert not up_to_date(site, "k")
    assert not up_to_date(tmp_path / "nothing", "k")
