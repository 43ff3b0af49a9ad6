"""Without Chromium the browser tests say what to install (runs without a browser)."""

from __future__ import annotations

from pathlib import Path

import labdriver
import pytest


def test_missing_chromium_names_the_install_script(monkeypatch: pytest.MonkeyPatch,
                                                   tmp_path: Path) -> None:
    monkeypatch.setattr(labdriver, "CHROMIUM", tmp_path / "no-chromium-here")
    message = labdriver.missing_requirements()
    assert message is not None
    assert "no-chromium-here (Debian package chromium)" in message
    assert "scripts/install-system-packages.sh" in message
    assert "-m 'not browser'" in message


def test_chromium_args_are_the_house_flags() -> None:
    """Playwright adds --headless and its own fresh --user-data-dir; we add the rest."""
    assert labdriver.CHROMIUM == Path("/usr/bin/chromium")
    assert set(labdriver.CHROMIUM_ARGS) == {
        "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--disable-quic", "--no-first-run",
    }
    assert not any(a.startswith("--user-data-dir") for a in labdriver.CHROMIUM_ARGS)
