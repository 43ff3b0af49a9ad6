"""The packaging promises of the README: pip and conda users get the same packages."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]

# conda-forge names that differ from the PyPI names (the same software)
CONDA_NAME = {"psycopg2-binary": "psycopg2"}


def _split(req: str) -> tuple[str, str]:
    m = re.fullmatch(r"\s*([A-Za-z0-9_.\-]+)\s*(\[[^\]]*\])?\s*(.*?)\s*", req)
    assert m, f"cannot parse requirement {req!r}"
    name = m.group(1).lower().replace("_", "-")
    spec = ",".join(sorted(p.replace(" ", "") for p in m.group(3).split(",") if p.strip()))
    return CONDA_NAME.get(name, name), spec


def pyproject_requirements() -> dict[str, str]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    reqs = list(data["project"]["dependencies"])
    for extra in data["project"].get("optional-dependencies", {}).values():
        reqs.extend(extra)
    own = data["project"]["name"]
    # an extra that pulls in another extra of this project ("<name>[grading]") is no package
    return dict(_split(r) for r in reqs if _split(r)[0] != own)


def conda_requirements() -> tuple[dict[str, str], list[str]]:
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda, pip = {}, []
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            pip.extend(dep.get("pip", []))
            continue
        name, spec = _split(dep)
        if name not in {"python", "pip"}:
            conda[name] = spec
    return conda, pip


def test_environment_yml_names_the_same_packages_as_pyproject():
    conda, _ = conda_requirements()
    assert conda == pyproject_requirements()


def test_environment_yml_installs_the_course_itself():
    _, pip = conda_requirements()
    assert "-e ." in pip


def test_environment_yml_python_matches_requires_python():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert f"python{data['project']['requires-python']}" in env["dependencies"]


def test_split_normalises_requirements():
    assert _split("ipywidgets>=8,<9") == ("ipywidgets", "<9,>=8")
    assert _split("Foo_Bar[x] >= 1") == ("foo-bar", ">=1")
