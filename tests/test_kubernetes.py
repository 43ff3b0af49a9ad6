"""deploy/kubernetes: on paper, but checked against what tests/hub runs.

No cluster runs here. What can be checked is checked: the Zero to JupyterHub values name
the hub settings of the tested deploy/jupyterhub_config.py with the same values (and say
which one differs on purpose), carry the tested students' settings and global nbgrader
config unchanged, agree with the ngshare chart's values, and the images' requirements
resolve together with pip (``pip install --dry-run``: this needs the package registry).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
DEPLOY = REPO / "deploy"
K8S = DEPLOY / "kubernetes"
# Hub settings that must be the same on one server and on Kubernetes.
SHARED = [("Spawner", "default_url"), ("Spawner", "start_timeout"),
          ("Spawner", "http_timeout")]
# ... and the ones that differ on purpose (said so in the values file).
ON_PURPOSE = {("JupyterHub", "authenticator_class")}


def values(name: str) -> dict:
    return yaml.safe_load((K8S / name).read_text())


@pytest.fixture(scope="module")
def tested_config():
    """deploy/jupyterhub_config.py as the hub loads it, with the ngshare exchange."""
    if os.geteuid() != 0:
        pytest.skip("loading jupyterhub_config.py installs the students' settings as root")
    from traitlets.config.loader import PyFileConfigLoader

    scratch = Path(tempfile.mkdtemp(prefix="k8s-check-"))
    (scratch / "db-url").write_text("postgresql+psycopg2://ngshare:x@127.0.0.1/ngshare\n")
    env = {"ATTENTION_HUB_EXCHANGE": "ngshare",
           "ATTENTION_HUB_NGSHARE_DB_URL_FILE": str(scratch / "db-url"),
           "ATTENTION_HUB_STUDENT_SETTINGS": str(scratch / "student-settings"),
           "ATTENTION_HUB_INSTRUCTORS_GROUP": "root",
           # course_grading as docs/deploy.md step 3 places it: in a folder only root enters
           "ATTENTION_HUB_GRADING_PACKAGE": str(scratch / "course_grading")}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield PyFileConfigLoader("jupyterhub_config.py", path=str(DEPLOY)).load_config()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        shutil.rmtree(scratch)


def test_the_values_name_the_tested_hub_settings(tested_config):
    hub = values("jupyterhub-values.yaml")["hub"]["config"]
    for section, key in SHARED:
        assert key in hub.get(section, {}), f"{section}.{key} missing from the values"
        assert hub[section][key] == tested_config[section][key], (section, key)
    for section, settings in hub.items():
        for key, value in settings.items():
            if (section, key) in ON_PURPOSE:
                continue
            assert key in tested_config[section], f"{section}.{key} is not in the tested config"
            assert tested_config[section][key] == value, (section, key)


def test_ngshare_is_the_same_service_reached_the_same_way(tested_config):
    hub_values = values("jupyterhub-values.yaml")
    services = [s["name"] for s in tested_config.JupyterHub.services]
    assert services == list(hub_values["hub"]["services"]) == ["ngshare"]
    for url in (tested_config.Spawner.environment["NGSHARE_URL"],
                hub_values["singleuser"]["extraEnv"]["NGSHARE_URL"]):
        assert url.endswith("/services/ngshare/"), url  # through the hub's proxy
    ngshare_values = values("ngshare-values.yaml")["ngshare"]
    assert ngshare_values["hub_api_token"] == hub_values["hub"]["services"]["ngshare"][
        "apiToken"]
    assert ngshare_values["env"]["NGSHARE_DATABASE_URL"].startswith("postgresql")


def test_the_pods_get_the_tested_settings_files():
    files = values("jupyterhub-values.yaml")["singleuser"]["extraFiles"]
    assert files["nbgrader-config"]["stringData"] == (
        DEPLOY / "nbgrader_config_ngshare.py").read_text()
    settings = DEPLOY / "student-jupyter-config"
    assert files["student-server-config"]["data"] == json.loads(
        (settings / "jupyter_server_config.json").read_text())
    assert files["student-lab-config"]["data"] == json.loads(
        (settings / "labconfig" / "page_config.json").read_text())
    assert files["student-server-config-py"]["stringData"] == (
        settings / "jupyter_server_config.py").read_text()
    # every file of the tested folder, each where the hook's folder expects it
    folder = Path(files["student-server-config"]["mountPath"]).parent
    mounted = sorted(Path(f["mountPath"]).relative_to(folder).as_posix()
                     for f in files.values() if Path(f["mountPath"]).is_relative_to(folder))
    assert mounted == sorted(p.relative_to(settings).as_posix()
                             for p in settings.rglob("*") if p.is_file())
    hook = values("jupyterhub-values.yaml")["hub"]["extraConfig"]["attention-students.py"]
    folder = files["student-server-config"]["mountPath"].rsplit("/", 1)[0]
    assert f'STUDENT_SETTINGS = "{folder}"' in hook
    # the same instructors' group as the tested config's default
    default_group = 'env("ATTENTION_HUB_INSTRUCTORS_GROUP", "attention-instructors")'
    assert default_group in (DEPLOY / "jupyterhub_config.py").read_text()
    assert 'INSTRUCTORS_GROUP = "attention-instructors"' in hook


def test_the_images_name_the_hubs_jupyterhub_range():
    def jupyterhub_line(path: Path) -> str:
        return next(line.strip() for line in path.read_text().splitlines()
                    if line.startswith("jupyterhub"))

    hub = jupyterhub_line(DEPLOY / "requirements-hub.txt")
    assert jupyterhub_line(K8S / "requirements-singleuser.txt") == hub
    assert jupyterhub_line(K8S / "requirements-ngshare.txt") == hub


def _dry_run(*args: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        proc = subprocess.run(
            [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed",
             "--quiet", "--report", str(report), *args],
            capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-3000:]
        installed = json.loads(report.read_text())["install"]
    return {item["metadata"]["name"].lower().replace("_", "-"): item["metadata"]["version"]
            for item in installed}


@pytest.mark.slow
def test_the_single_user_image_resolves_with_jupyterlab_4():
    got = _dry_run("-r", str(K8S / "requirements-singleuser.txt"), str(REPO))
    assert got["attention-term-by-term"]
    assert int(got["jupyterlab"].split(".")[0]) == 4
    assert int(got["jupyter-core"].split(".")[0]) >= 5
    assert "ngshare-exchange" not in got


@pytest.mark.slow
def test_the_ngshare_image_resolves():
    got = _dry_run("-r", str(K8S / "requirements-ngshare.txt"))
    assert got["ngshare"] == "0.6.0"
    assert "psycopg2-binary" in got
