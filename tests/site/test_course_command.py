"""``./course site`` and the extras each command installs: ``./course lab`` installs no
extra, ``./course test`` adds ``test``; the site's tools (the extra ``site``) go into an
environment of their own (``.site-venv``), never into the students' one, and an old
``./course site``'s tools are taken out of it again."""

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
    (tmp_path / "site-venv" / "bin").mkdir(parents=True)
    (tmp_path / "site-venv" / "bin" / "python").touch()
    monkeypatch.setattr(module, "SITE_VENV", tmp_path / "site-venv")
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


def test_the_site_tools_go_into_an_environment_of_their_own(
        course: tuple[ModuleType, list[str]]) -> None:
    module, calls = course
    python = module.site_setup()
    assert python == module.SITE_VENV / "bin" / "python"
    flags = " ".join(module.pip_quiet())
    assert calls == [f"{python} -m pip install {flags} jupyterlite-core"], (
        "the extra `site` alone: no student's package (numpy)")
    assert module.installed() is None, "the students' environment is not touched"
    assert (module.ROOT / "site-packages" / module.PTH_NAME).read_text().strip() == str(
        module.ROOT)
    calls.clear()
    module.site_setup()
    assert calls == [], "nothing to install twice"
    (module.ROOT / "pyproject.toml").write_text(PYPROJECT.replace('"jupyterlite-core"',
                                                                  '"jupyterlite-core==9"'))
    module.site_setup()
    assert calls and calls[-1].endswith("jupyterlite-core==9")


def test_an_old_sites_tools_leave_the_students_environment(
        course: tuple[ModuleType, list[str]], capsys: pytest.CaptureFixture[str]) -> None:
    module, calls = course
    module.forget_site_tools()
    assert calls == [], "an environment that never had them: nothing to do"
    module.setup(["site", "grading"])  # what the old `./course site` did, and an instructor
    calls.clear()
    module.forget_site_tools()
    venv_python = module.VENV / "bin" / "python"
    assert calls == [f"{venv_python} -m pip uninstall --yes --quiet "
                     "jupyterlite-pyodide-kernel jupyterlite-core"]
    assert extras(module) == ["grading"]
    assert "taking them out of" in capsys.readouterr().out
    calls.clear()
    module.forget_site_tools()
    module.setup(["grading"])
    assert calls == [], "the record says they are gone, and nothing is installed again"


def test_course_site_builds_with_the_site_environment(
        course: tuple[ModuleType, list[str]], monkeypatch: pytest.MonkeyPatch) -> None:
    module, _ = course
    started: list[list[str]] = []
    monkeypatch.setattr(module.os, "execv", lambda path, cmd: started.append(cmd))
    monkeypatch.setattr(module.os, "chdir", lambda path: None)
    module.site(["--serve"])
    assert started == [[str(module.SITE_VENV / "bin" / "python"), "-m", "course_site",
                        "--serve"]]
    assert module.installed() is None, "./course site installs nothing for students"
