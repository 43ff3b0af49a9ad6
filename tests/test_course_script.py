"""The `course` script: what `./course lab` installs for a student, and how JupyterLab opens.

The fast tests read the script's decisions (requirement lists, lab flags, settings); the
slow one builds a real student environment in a temporary folder, as `./course setup`
does on a fresh clone, and checks what a student gets: the lessons' packages, no
nbgrader or test tools, no build banner, a venv under the issue's 350 MB.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def load_course():
    loader = importlib.machinery.SourceFileLoader("course_script", str(ROOT / "course"))
    spec = importlib.util.spec_from_loader("course_script", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


course = load_course()
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def names(reqs: list[str]) -> set[str]:
    return {re.split(r"[\s\[<>=!~;]", r, maxsplit=1)[0].lower() for r in reqs}


def test_lab_installs_the_student_dependencies_only():
    assert course.requirements([]) == PROJECT["dependencies"]
    assert not names(course.requirements([])) & {"nbgrader", "pytest", "playwright", "nbval"}


def test_test_extra_brings_grading_and_the_test_tools():
    reqs = course.requirements(["test"])
    assert {"nbgrader", "pytest", "nbval", "playwright"} <= names(reqs)
    assert not any("attention-term-by-term" in r for r in reqs), "self-reference expanded"
    assert names(course.requirements(["grading"])) == names(PROJECT["dependencies"]) | {
        "nbgrader", "rfc3987", "latex2mathml"}


def test_an_extra_counts_the_extras_it_brings():
    """After `./course test`, `./course setup grading` has nothing left to install."""
    assert course.closure(["test"]) == ["grading", "test"]
    assert course.closure([]) == [] and course.closure(["grading"]) == ["grading"]


def test_unknown_extra_is_a_clear_error(capsys):
    with pytest.raises(SystemExit):
        course.requirements(["gradin"])
    have = ", ".join(PROJECT["optional-dependencies"])
    assert f"pyproject.toml has no extra 'gradin' (it has: {have})" in capsys.readouterr().err
    assert {"grading", "site", "test"} <= set(PROJECT["optional-dependencies"])


def test_test_runs_xdist_workers_unless_told_otherwise():
    workers = ["-n", str(course.TEST_WORKERS), "--dist", "loadgroup"]
    assert course.pytest_args([]) == workers
    assert course.pytest_args(["-m", "not slow"]) == [*workers, "-m", "not slow"]
    for own in (["-n", "0"], ["-n0"], ["--numprocesses=2"], ["-p", "no:xdist"],
                ["-pno:xdist"]):
        assert course.pytest_args(own) == own
    assert "pytest-xdist" in names(PROJECT["optional-dependencies"]["test"])


def test_pip_compiles_bytecode_only_where_python_may_not_write_it(monkeypatch):
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    assert "--no-compile" in course.pip_quiet()  # Python writes it on first import
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    assert "--no-compile" not in course.pip_quiet()  # pip writes it, once


def test_the_suite_may_write_bytecode_whatever_the_shell_says(monkeypatch):
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setenv("COURSE_PROBE", "kept")
    env = course.test_env()
    assert "PYTHONDONTWRITEBYTECODE" not in env and env["COURSE_PROBE"] == "kept"
    assert os.environ["PYTHONDONTWRITEBYTECODE"] == "1"  # this shell's own stays as it was
    calls = []
    steps = []
    monkeypatch.setattr(course, "setup", lambda extras: steps.append(("setup", extras)))
    monkeypatch.setattr(course, "forget_site_tools", lambda: steps.append(("forget", None)))
    monkeypatch.setattr(course, "site_setup", lambda: steps.append(("site", None)))
    monkeypatch.setattr(course, "run", lambda cmd, env=None: calls.append((cmd, env)))
    course.test(["-m", "not slow"])
    # the site's tools leave .venv first, and go to their own environment
    assert steps == [("forget", None), ("setup", ["test"]), ("site", None)]
    [(ruff_cmd, ruff_env), (pytest_cmd, pytest_env)] = calls
    assert ruff_cmd[1:] == ["check", "."] and ruff_env is None
    assert pytest_cmd[1:3] == ["-m", "pytest"]
    assert pytest_env == env  # the suite runs with it, ruff as the shell says


def test_lab_opens_the_contents_notebook_in_the_students_copies():
    flags = course.lab_flags()
    [url] = [f for f in flags if f.startswith("--LabApp.default_url=")]
    assert url == "--LabApp.default_url=/lab/tree/00_contents.ipynb"
    assert "--ServerApp.root_dir=" + str(course.WORKSPACE) in flags
    assert (course.LESSONS / course.START_NOTEBOOK).is_file()
    assert "00_contents.ipynb" in course.course_files()
    # the course's extension (slider names, no kernel for Markdown only) is loaded, built
    [ext] = [f for f in flags if f.startswith("--LabApp.extra_labextensions_path=")]
    package = Path(ext.split("=", 1)[1]) / "attention-course-lab" / "package.json"
    load = json.loads(package.read_text())["jupyterlab"]["_build"]["load"]
    assert (package.parent / load).is_file(), load


def test_the_workspace_is_gitignored_and_not_a_lesson():
    ignored = subprocess.run(["git", "check-ignore", "-q", "notebooks/my-work/04_softmax.ipynb"],
                             cwd=ROOT)
    assert ignored.returncode == 0, "git would list a student's copies"
    assert not any(f.startswith("my-work/") for f in course.course_files())


def test_a_flag_given_to_lab_replaces_the_courses_own():
    cmd = course.lab_command(["--ServerApp.root_dir=/elsewhere", "--port", "9999"])
    assert [a for a in cmd if a.startswith("--ServerApp.root_dir")] == [
        "--ServerApp.root_dir=/elsewhere"]
    assert "--LabApp.default_url=/lab/tree/00_contents.ipynb" in cmd
    assert cmd[-2:] == ["--port", "9999"]


def test_lab_settings_switch_off_news_and_update_prompts(tmp_path, monkeypatch):
    monkeypatch.setattr(course, "VENV", tmp_path / "venv")
    path = course.write_lab_settings()
    assert path == tmp_path / "venv/share/jupyter/lab/settings/overrides.json"
    notification = json.loads(path.read_text())["@jupyterlab/apputils-extension:notification"]
    assert notification == {"fetchNews": "false", "checkForUpdates": False}


def test_lab_settings_fail_closed(tmp_path, monkeypatch, capsys):
    blocker = tmp_path / "venv"
    blocker.write_text("a file where the environment's folder should be")
    monkeypatch.setattr(course, "VENV", blocker)
    with pytest.raises(SystemExit):
        course.write_lab_settings()
    assert "cannot write JupyterLab's settings" in capsys.readouterr().err


# Lines a build backend prints around an editable install (setuptools' banner).
BANNER = re.compile(r"BuildBackendWarning|Editable installation|^\s*!!\s*$|\*{20}|"
                    r"DEPRECATION|SetuptoolsDeprecationWarning", re.M)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_fresh_student_environment(tmp_path):
    """`./course setup` on a fresh folder: lessons' packages only, no banner, < 350 MB."""
    venv = tmp_path / "venv"
    # a student's shell: Python writes bytecode as it imports (the size limit is theirs)
    env = dict(os.environ, COURSE_VENV=str(venv))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    done = subprocess.run([sys.executable, str(ROOT / "course"), "setup"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=540)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    assert not BANNER.search(output), output
    python = venv / "bin" / "python"
    probe = ("import importlib.util as u, json, course_lib, course_quiz\n"
             "print(json.dumps({m: u.find_spec(m) is not None for m in "
             "('numpy', 'matplotlib', 'ipywidgets', 'jupyterlab', 'nbgrader', 'pytest', "
             "'playwright', 'setuptools')} | {'course_lib': course_lib.__file__, "
             "'course_quiz': course_quiz.__file__}))")
    found = json.loads(subprocess.run([str(python), "-c", probe], capture_output=True,
                                      text=True, check=True, cwd=tmp_path).stdout)
    assert found.pop("course_lib") == str(ROOT / "course_lib" / "__init__.py")
    # the self-study checkpoint's quiz
    assert found.pop("course_quiz") == str(ROOT / "course_quiz" / "__init__.py")
    assert found == {"numpy": True, "matplotlib": True, "ipywidgets": True,
                     "jupyterlab": True, "nbgrader": False, "pytest": False,
                     "playwright": False, "setuptools": False}
    size = sum(f.stat().st_size for f in venv.rglob("*") if f.is_file() and not f.is_symlink())
    assert size < 350 * 2**20, f"the student venv holds {size / 2**20:.0f} MB"
    assert json.loads((venv / ".course-installed").read_text())["extras"] == []
    # a second setup finds everything in place and installs nothing
    again = subprocess.run([sys.executable, str(ROOT / "course"), "setup"], cwd=ROOT,
                           env=env, capture_output=True, text=True, timeout=60)
    assert again.returncode == 0 and "pip" not in again.stdout, again.stdout
