"""The packaging promises of the README: what a student installs, what the extras add.

pip users (``./course lab``) and conda users (environment.yml) get the same student
packages; the instructor's and the test tools come only with the extras.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
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


# Everything docs/deploy.md and the quiz's config import, and the files they read.
INSTRUCTOR_MODULES = [
    "course_grading.verdicts", "course_grading.sandbox", "course_grading.sandbox_launcher",
    "course_grading.parallel", "course_exchange.exchange", "course_grading.feedback",
    "course_grading.gradetable", "course_grading.report", "course_grading.formgrader_csp",
    "course_grading.inert", "course_grading.variants", "course_grading.probe",
    "course_grading.check_calls", "course_grading.notebook_files", "course_grading.pipeline",
    "course_grading.submissions", "course_grading.mistakes", "course_grading.gradebook",
    "course_grading.roster", "course_grading.deadlines", "course_grading.lms",
]


def test_the_grading_tools_build_no_iri_parser_when_they_start():
    """With the grading extra, jsonschema (so nbformat, nbgrader, every Jupyter server)
    takes rfc3987 and never imports rfc3987_syntax, whose parsers cost ~1.5 s per process."""
    code = ("import sys, nbformat, jsonschema; "
            "print(sorted(m for m in sys.modules if m.startswith('rfc3987')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "['rfc3987']", out.stdout + out.stderr


@pytest.mark.slow
def test_a_non_editable_install_holds_the_packages_and_their_files(tmp_path):
    """setuptools' bare `packages = [...]` once left course_lib's subpackages out; the
    package data (the model's weights, the formgrader's and the site's scripts) comes too."""
    # Built from a copy of the files git tracks: pip builds a local folder in place, and
    # setuptools' build/ left in a checkout from before a module moved would put the old
    # module into the wheel (and this test would pass or fail by what an earlier run left).
    source = tmp_path / "source"
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                             check=True).stdout.decode().split("\0")
    for name in filter(None, tracked):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                    "--quiet", "-w", str(wheels), str(source)], check=True, timeout=600)
    [wheel] = wheels.glob("*.whl")
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--quiet",
                    "--target", str(target), str(wheel)], check=True, timeout=600)
    probe = (
        "import importlib, os, sys\n"
        "import course_lib, course_grading\n"
        f"mods = {INSTRUCTOR_MODULES!r}\n"
        "for m in mods: importlib.import_module(m)\n"
        "from course_lib import real_model\n"
        "assert real_model.load_model_attention().heads == 12  # package data (lesson 11)\n"
        "from course_lib import tiny_gpt  # the trained model's weights, checked by sha256\n"
        "assert tiny_gpt.load_model().model.heads == 2\n"
        "import pkgutil, course_quiz  # every module of the students' packages imports\n"
        "for pkg in (course_lib, course_quiz):\n"
        "    for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + '.'):\n"
        "        importlib.import_module(m.name)\n"
        "assert os.path.isfile(os.path.join(course_quiz.__path__[0], 'py.typed'))\n"
        "from course_grading import formgrader_csp\n"
        "static = sorted(os.listdir(formgrader_csp.STATIC_DIR))\n"
        "from course_site import run_cache  # its Node.js runner is package data too\n"
        "assert run_cache.RUNNER.is_file()\n"
        "import course_exchange  # what students' nbgrader imports (docs/deploy.md step 3)\n"
        "print(course_lib.__file__, course_grading.__file__, course_exchange.__file__,\n"
        "      course_quiz.__file__, static)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(target)}
    out = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=env, check=True,
                         capture_output=True, text=True, timeout=300).stdout
    lib, grading, exchange, quiz, static = out.split(" ", 4)
    assert lib.startswith(str(target)) and grading.startswith(str(target))
    assert exchange.startswith(str(target)), exchange
    assert quiz.startswith(str(target)), quiz
    assert "formgrade_page.js" in static and "formgrader_vars.js" in static
    # the course's JupyterLab extension, every file of it: the students' servers on the hub
    # load it from the installed course_lib (deploy/student-jupyter-config)
    shipped = ROOT / "course_lib" / "labextension"
    installed = target / "course_lib" / "labextension"
    assert sorted(p.relative_to(installed) for p in installed.rglob("*") if p.is_file()) == (
        sorted(p.relative_to(shipped) for p in shipped.rglob("*") if p.is_file()))
