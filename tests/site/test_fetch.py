"""course_site.fetch: a download enters the cache only with its pinned hash."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import pytest

from course_site import fetch
from course_site.recipe import NpmPin, PypiPin

WHEEL = b"PK fake wheel bytes"


def _pin(data: bytes = WHEEL) -> PypiPin:
    return PypiPin("demo-pkg", "1.0", hashlib.sha256(data).hexdigest())


def _fake_pip(monkeypatch: pytest.MonkeyPatch, data: bytes, calls: list[list[str]]) -> None:
    """Replace the pip call: write ``data`` as the downloaded wheel, as pip would."""

    def run(cmd: list[str], what: str, cwd: str) -> None:
        calls.append(cmd)
        dest = Path(cmd[cmd.index("--dest") + 1])
        (dest / "demo_pkg-1.0-py3-none-any.whl").write_bytes(data)

    monkeypatch.setattr(fetch, "_run", run)


def test_a_wheel_with_the_pinned_hash_is_cached_and_not_downloaded_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[list[str]] = []
    _fake_pip(monkeypatch, WHEEL, calls)
    first = fetch.cached_wheel(_pin(), tmp_path)
    again = fetch.cached_wheel(_pin(), tmp_path)
    assert first == again == tmp_path / "pypi" / "demo_pkg-1.0-py3-none-any.whl"
    assert first.read_bytes() == WHEEL
    assert len(calls) == 1, "the second build must not download again"
    assert "--require-hashes" in calls[0] and "--no-deps" in calls[0]


def test_a_wheel_with_another_hash_is_refused_and_not_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_pip(monkeypatch, b"something else", [])
    with pytest.raises(fetch.FetchError, match="does not have the pinned hash") as err:
        fetch.cached_wheel(_pin(), tmp_path)
    assert hashlib.sha256(b"something else").hexdigest() in str(err.value)
    assert list((tmp_path / "pypi").rglob("*.whl")) == []


def test_a_tampered_cache_is_not_trusted(tmp_path: Path) -> None:
    cached = tmp_path / "pypi" / "demo_pkg-1.0-py3-none-any.whl"
    cached.parent.mkdir(parents=True)
    cached.write_bytes(b"tampered")
    with pytest.raises(fetch.FetchError, match=r"cached .* does not have the pinned sha256"):
        fetch.cached_wheel(_pin(), tmp_path)


def test_npm_tarball_is_checked_against_its_integrity(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = b"npm tarball bytes"
    good = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()

    def run(cmd: list[str], what: str, cwd: str) -> None:
        (Path(cmd[cmd.index("--pack-destination") + 1]) / "demo-1.0.tgz").write_bytes(data)

    monkeypatch.setattr(fetch, "_run", run)
    monkeypatch.setattr(fetch.shutil, "which", lambda name: "/usr/bin/npm")
    with pytest.raises(fetch.FetchError, match="does not have the pinned hash"):
        fetch.cached_npm(NpmPin("demo", "1.0", "sha512-AAAA"), tmp_path)
    assert not (tmp_path / "npm" / "demo-1.0.tgz").exists()
    path = fetch.cached_npm(NpmPin("demo", "1.0", good), tmp_path)
    assert path.read_bytes() == data


def test_without_npm_the_error_says_what_to_install(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fetch.shutil, "which", lambda name: None)
    with pytest.raises(fetch.FetchError, match=r"npm is needed once.*install-system-packages"):
        fetch.cached_npm(NpmPin("demo", "1.0", "sha512-AAAA"), tmp_path)


def test_a_failing_download_names_the_command(tmp_path: Path) -> None:
    with pytest.raises(fetch.FetchError, match="could not download x: `false` exited with 1"):
        fetch._run(["false"], "x", str(tmp_path))
