"""``./course site`` and the extras each command installs (the site's tools are not for
every student: ``./course lab`` installs no extra, ``./course site`` adds ``site``,
``./course test`` adds ``test`` and ``site``)."""

from __future__ import annotations

import importlib.machinery
import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


PYPROJECT = """[project]
name = "x"
dependencies = ["numpy"]
[project.optional-dependencies]
grading = ["nbgrader"]
site = ["jupyterlite-core"]
test = ["x[grading]", "pytest"]
"""


@pytest.fixture
def course(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[ModuleType, list[str]]:
    """The `course` script pointed at a folder of its own; pip calls are recorded, not run."""
    loader = importlib.machinery.SourceFileLoader("course_command", str(ROOT / "course"))
    spec = importlib.util.spec_from_loader("course_command", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    (tmp_path / "venv" / "bin").mkdir(parents=True)
    (tmp_path / "venv" / "bin" / "python").touch()
    (tmp_path / "site-packages").mkdir()
    monkeypatch.setattr(module, "ROOT", tmp_path)
    monkeypatch.setattr(module, "VENV", tmp_path / "venv")
    monkeypatch.setattr(module, "BIN", tmp_path / "venv" / "bin")
    monkeypatch.setattr(module, "STAMP", tmp_path / "venv" / ".course-installed")
    monkeypatch.setattr(module, "site_packages", lambda python: tmp_path / "site-packages")
    calls: list[str] = []

    def run(cmd: list[str], *, check: bool = True) -> int:
        calls.append(" ".join(map(str, cmd)))
        return 0

    monkeypatch.setattr(module, "run", run)
    return module, calls


def extras(module: ModuleType) -> list[str]:
    """The extras the environment's stamp says are installed."""
    return (module.installed() or {}).get("extras", [])


def test_extras_accumulate_and_are_installed_once(course: tuple[ModuleType, list[str]]) -> None:
    module, calls = course
    module.setup(["site"])
    assert calls[-1].endswith("numpy jupyterlite-core") and extras(module) == ["site"]
    calls.clear()
    module.setup(["site"])
    assert calls == [], "nothing to install twice"
    module.setup(["test"])
    assert calls[-1].endswith("numpy jupyterlite-core pytest nbgrader"), (
        "extras installed before are kept")
    assert extras(module) == ["grading", "site", "test"], "test brought grading"
    calls.clear()
    module.setup(["test", "site"])
    module.setup(["grading"])
    assert calls == []


def test_a_changed_pyproject_installs_again(course: tuple[ModuleType, list[str]]) -> None:
    module, calls = course
    module.setup(["site"])
    calls.clear()
    pyproject = module.ROOT / "pyproject.toml"
    pyproject.write_text(PYPROJECT.replace('"pytest"', '"pytest>=8"'))
    module.setup(["site"])
    assert calls and calls[-1].endswith("numpy jupyterlite-core")
    calls.clear()
    module.setup(["test"])
    assert calls[-1].endswith("jupyterlite-core pytest>=8 nbgrader")


def test_the_usage_names_the_site_command(course: tuple[ModuleType, list[str]],
                                          capsys: pytest.CaptureFixture[str]) -> None:
    module, _ = course
    with pytest.raises(SystemExit):
        module.main(["nonsense"])
    assert "./course lab | test | site | setup" in capsys.readouterr().err
