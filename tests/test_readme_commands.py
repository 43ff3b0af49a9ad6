"""The README's lab command really starts JupyterLab (then the test stops it)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "browser"))
sys.path.insert(0, str(ROOT / "scripts"))

import lesson_index  # noqa: E402  (scripts/, on the path above)
from labdriver import CourseLab  # noqa: E402  (tests/browser/, on the path above)


def test_readme_shows_the_two_commands_and_ci_runs_the_test_one():
    readme = (ROOT / "README.md").read_text()
    assert "./course lab" in readme and "./course test" in readme
    ci = (ROOT / ".ci" / "run").read_text()
    assert "./course test" in ci
    for line in ci.splitlines():
        cmd = line.strip()
        if cmd and not cmd.startswith("#") and not cmd.startswith(("set ", "cd ")):
            assert cmd in readme, f".ci/run runs {cmd!r}, which the README does not show"


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_make_lab_serves_jupyterlab_on_localhost(tmp_path):
    with CourseLab(tmp_path) as lab:
        port, token = lab.port, lab.token
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/lab?token={token}", timeout=5) as r:
            page = r.read().decode()
        assert "JupyterLab" in page
        # the start page is the contents notebook, not the Launcher
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/?token={token}", timeout=5) as r:
            assert r.url.split("?")[0].endswith("/lab/tree/00_contents.ipynb"), r.url
        # no news or update prompt: the notification extension's settings, as the lab sees them
        req = urllib.request.Request(
            f"http://127.0.0.1:{port}/lab/api/settings/"
            "@jupyterlab/apputils-extension:notification",
            headers={"Authorization": f"token {token}"})
        with urllib.request.urlopen(req, timeout=5) as r:
            plugin = json.load(r)
        # a student's own value, else the default (where the lab folds in overrides.json)
        effective = {k: plugin["settings"].get(k, plugin["schema"]["properties"][k]["default"])
                     for k in ("fetchNews", "checkForUpdates")}
        assert effective == {"fetchNews": "false", "checkForUpdates": False}
        # without the token the API refuses
        with pytest.raises(urllib.error.HTTPError) as denied:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/contents", timeout=5)
        assert denied.value.code == 403
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", port)) != 0, "JupyterLab still listening after stop"


def test_library_example_of_the_contributors_guide_runs():
    import doctest

    failures, tried = doctest.testfile(
        str(ROOT / "docs" / "development.md"), module_relative=False,
        optionflags=doctest.NORMALIZE_WHITESPACE,
    )
    assert tried >= 4 and failures == 0


def _self_study_commands() -> list[str]:
    """The commands of the README's step 2 of self-study, in order (its first sh block)."""
    text = (ROOT / "README.md").read_text()
    block = text.split("**2. The graded notebook, checked by nbgrader.**", 1)[1]
    block = block.split("```sh\n", 1)[1].split("```", 1)[0]
    lines = [line.strip().split("#", 1)[0].strip() for line in block.splitlines()]
    return [line for line in lines if line]


def test_self_study_work_stays_in_notebooks_my_work():
    """08 used to send the learner's copy of the checkpoint to the top of the repository."""
    commands = _self_study_commands()
    assert commands[0] == "./course setup grading", commands  # nbgrader is not a student's
    written = [c.split()[-1] for c in commands if c.startswith("cp ")]
    assert written == ["notebooks/my-work/checkpoint.ipynb"], commands
    ignored = subprocess.run(["git", "check-ignore", "-q", "--no-index", written[0]], cwd=ROOT)
    assert ignored.returncode == 0, f"{written[0]} must be ignored by git"


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_self_study_commands_run_as_written(tmp_path):
    """The README's self-study commands, run one by one on a copy of the course."""
    import shutil

    for folder in ("quiz", "notebooks"):
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns(
            "gradebook.db", "release", "submitted", "autograded", "feedback", "my-work"))
    (tmp_path / "course").symlink_to(ROOT / "course")  # the course's own venv and pyproject
    (tmp_path / ".venv").symlink_to(Path(sys.prefix))
    before = sorted(p.name for p in tmp_path.iterdir())
    env = dict(os.environ, COURSE_VENV=sys.prefix)
    outputs = []
    for command in _self_study_commands():
        if command.startswith(". "):  # activating the venv: its bin first on PATH
            env["PATH"] = f"{sys.prefix}/bin{os.pathsep}{env['PATH']}"
            continue
        done = subprocess.run(command, shell=True, cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=240)
        outputs.append(done.stdout + done.stderr)
        assert done.returncode == 0, f"{command}:\n{outputs[-1][-2000:]}"
    assert (tmp_path / "notebooks" / "my-work" / "checkpoint.ipynb").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == before, "nothing new at the top"
    assert "You did not provide a response" in outputs[-1]  # validate ran on the blank copy
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
         "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(tmp_path), "notebooks"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120)
    self_study = lesson_index.the_one(ROOT / "notebooks", kind=lesson_index.CHECKPOINT)
    assert "my-work" not in collected.stdout and self_study.path.name in collected.stdout, (
        collected.stdout[-2000:])
