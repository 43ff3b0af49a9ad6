"""The prebuilt JupyterLab extension in course_lib/labextension is what labextension/ builds.

The course ships its JupyterLab extension built (a student's machine has Python and pip, not
always Node.js), so the built files are in the repository; none of them is written by hand.
This test builds the extension again from its source as docs/development.md says (`npm ci`
from the lock file, then `npm run build`), in a temporary copy of labextension/, and compares
every file with what course_lib/labextension holds, byte for byte. The dependencies (about
400 MB) come from the npm registry once per lock file into ~/.cache/attention-course/ (or
$XDG_CACHE_HOME/attention-course), and later runs reuse them. Without node and npm the test
skips; under CI (``CI=true``) it fails instead.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "labextension"
SHIPPED = REPO / "course_lib" / "labextension"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "attention-course"
# What a build or `npm ci` leaves in labextension/ (its .gitignore): never an input.
NOT_SOURCE = {"node_modules", "lib"}
REBUILD = "cd labextension && npm ci --ignore-scripts && npm run build"


def require_node() -> None:
    missing = [p for p in ("node", "npm") if shutil.which(p) is None]
    if not missing:
        return
    message = (f"building the JupyterLab extension needs {' and '.join(missing)} (Debian "
               "packages nodejs and npm: scripts/install-system-packages.sh)")
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"CI={os.environ['CI']}: {message}", pytrace=False)
    pytest.skip(message)


def output_dir() -> str:
    """Where the build writes, relative to labextension/ (package.json's jupyterlab.outputDir)."""
    return json.loads((SOURCE / "package.json").read_text())["jupyterlab"]["outputDir"]


def files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def node_modules() -> Path:
    """labextension's dependencies, as `npm ci` installs them from package-lock.json, in a
    cache folder named after the lock file's hash (made once; older ones are removed)."""
    lock = (SOURCE / "package-lock.json").read_bytes()
    folder = CACHE / f"labextension-{hashlib.sha256(lock).hexdigest()[:16]}"
    if (folder / "node_modules" / ".package-lock.json").is_file():
        return folder / "node_modules"
    CACHE.mkdir(parents=True, exist_ok=True)
    for old in CACHE.glob("labextension-*"):
        shutil.rmtree(old, ignore_errors=True)
    staging = Path(tempfile.mkdtemp(prefix="labextension-install-", dir=CACHE))
    for name in ("package.json", "package-lock.json"):
        shutil.copy2(SOURCE / name, staging / name)
    # --ignore-scripts: nothing the build needs runs at install (a font package's postinstall)
    subprocess.run(["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"],
                   cwd=staging, check=True, timeout=1200, stdin=subprocess.DEVNULL)
    staging.rename(folder)
    return folder / "node_modules"


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_the_shipped_extension_is_what_its_source_builds(tmp_path: Path) -> None:
    require_node()
    modules = node_modules()
    copy = tmp_path / "labextension"
    shutil.copytree(SOURCE, copy, ignore=lambda _dir, names: [
        n for n in names if n in NOT_SOURCE or n.endswith(".tsbuildinfo")])
    (copy / "node_modules").symlink_to(modules, target_is_directory=True)
    build = subprocess.run(["npm", "run", "build"], cwd=copy, capture_output=True, text=True,
                           timeout=900, stdin=subprocess.DEVNULL, check=False)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]

    built = (copy / output_dir()).resolve()
    shipped = (SOURCE / output_dir()).resolve()
    assert shipped.parent == SHIPPED, f"the build writes {shipped}, not into {SHIPPED}"
    # the one extension in course_lib/labextension is the one this source builds
    assert sorted(p.name for p in SHIPPED.iterdir()) == [shipped.name]
    want, have = files(built), files(shipped)
    differ = sorted(name for name in want.keys() & have.keys() if want[name] != have[name])
    assert (sorted(want.keys() - have.keys()), sorted(have.keys() - want.keys()), differ) == (
        [], [], []), (f"{shipped.relative_to(REPO)} is not what labextension/ builds (built "
                      f"only, shipped only, different). Rebuild it: `{REBUILD}`, and commit "
                      "the result")
