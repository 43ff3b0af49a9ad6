"""The packaging promises of the README: what a student installs, what the extras add.

pip users (``./course lab``) and conda users (environment.yml) get the same student
packages; the instructor's and the test tools come only with the extras.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]

# conda-forge names that differ from the PyPI names (the same software)
CONDA_NAME = {"psycopg2-binary": "psycopg2"}
# Tools a student never uses: they must come with an extra, never with `./course lab`.
NOT_FOR_STUDENTS = {"nbgrader", "pytest", "nbval", "hypothesis", "ruff", "pytest-timeout",
                    "playwright", "pyyaml", "jupyterhub", "psycopg2-binary"}


def _split(req: str) -> tuple[str, str]:
    m = re.fullmatch(r"\s*([A-Za-z0-9_.\-]+)\s*(\[[^\]]*\])?\s*(.*?)\s*", req)
    assert m, f"cannot parse requirement {req!r}"
    name = m.group(1).lower().replace("_", "-")
    spec = ",".join(sorted(p.replace(" ", "") for p in m.group(3).split(",") if p.strip()))
    return CONDA_NAME.get(name, name), spec


def project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def student_requirements() -> dict[str, str]:
    return dict(_split(r) for r in project()["dependencies"])


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
    assert conda == student_requirements()


def test_students_get_no_grading_or_test_tools():
    """`./course lab` installs [project] dependencies only: nbgrader & co. are extras."""
    students = set(student_requirements())
    assert students & NOT_FOR_STUDENTS == set()
    extras = project()["optional-dependencies"]
    assert "nbgrader" in {_split(r)[0] for r in extras["grading"]}
    # the test extra brings the grading extra (course_grading's tests need nbgrader)
    assert "attention-term-by-term[grading]" in extras["test"]


def test_environment_yml_installs_the_course_itself():
    _, pip = conda_requirements()
    assert "-e ." in pip


def test_environment_yml_python_matches_requires_python():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert f"python{project()['requires-python']}" in env["dependencies"]


def test_split_normalises_requirements():
    assert _split("ipywidgets>=8,<9") == ("ipywidgets", "<9,>=8")
    assert _split("Foo_Bar[x] >= 1") == ("foo-bar", ">=1")
