"""``./course site`` and the extras each command installs (the site's tools are not for
every student: ``./course lab`` installs ``test``, ``site`` and ``test`` add ``site``)."""

from __future__ import annotations

import importlib.machinery
import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def course(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[ModuleType, list[str]]:
    loader = importlib.machinery.SourceFileLoader("course_command", str(ROOT / "course"))
    spec = importlib.util.spec_from_loader("course_command", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (tmp_path / "venv" / "bin").mkdir(parents=True)
    (tmp_path / "venv" / "bin" / "python").touch()
    monkeypatch.setattr(module, "ROOT", tmp_path)
    monkeypatch.setattr(module, "BIN", tmp_path / "venv" / "bin")
    monkeypatch.setattr(module, "STAMP", tmp_path / "venv" / ".course-installed")
    calls: list[str] = []
    monkeypatch.setattr(module, "run", lambda cmd: calls.append(" ".join(map(str, cmd))))
    return module, calls


def test_extras_accumulate_and_are_installed_once(course: tuple[ModuleType, list[str]]) -> None:
    module, calls = course
    module.setup(("site",))
    assert calls[-1].endswith("[site]") and module.installed_extras() == ["site"]
    calls.clear()
    module.setup(("site",))
    assert calls == [], "nothing to install twice"
    module.setup(("test",))
    assert calls[-1].endswith("[site,test]"), "extras installed before are kept"
    calls.clear()
    module.setup(("test", "site"))
    assert calls == []


def test_a_changed_pyproject_installs_again(course: tuple[ModuleType, list[str]]) -> None:
    module, calls = course
    module.setup(("test",))
    (module.ROOT / "pyproject.toml").write_text("[project]\nname = 'y'\n")
    assert module.installed_extras() is None
    calls.clear()
    module.setup(("test",))
    assert calls[-1].endswith("[test]")


def test_the_usage_names_the_site_command(course: tuple[ModuleType, list[str]],
                                          capsys: pytest.CaptureFixture[str]) -> None:
    module, _ = course
    with pytest.raises(SystemExit):
        module.main(["nonsense"])
    assert "./course lab | test | site | setup" in capsys.readouterr().err
