"""`-m "not slow"` is the quick loop: no kernel, browser, site, sandbox or hub in it.

conftest.py (at the top of the checkout) marks every strict-nbval lesson cell and every
test marked browser, site, sandbox or hub as slow too; this collects the suite both ways
and checks what each selection holds.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def collected(*args: str) -> list[str]:
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", *args],
                         cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    return [ln for ln in out.stdout.splitlines() if "::" in ln]


@pytest.mark.slow
def test_not_slow_leaves_out_kernels_browsers_sites_sandboxes_and_hubs() -> None:
    quick = collected("-m", "not slow")
    heavy = collected("-m", "slow")
    assert quick and heavy
    assert not any(n.startswith("notebooks/") for n in quick), "a lesson kernel in the quick loop"
    leaks = [n for n in quick if n.startswith(("tests/browser/test_lab_lessons",
                                               "tests/browser/test_lab_quiz",
                                               "tests/site/test_site_", "tests/hub/test_",
                                               "tests/sandbox/"))]
    assert leaks == []
    assert any(n.startswith("notebooks/") for n in heavy)
    assert any(n.startswith("tests/browser/test_lab_lessons.py") for n in heavy)


def test_an_unknown_marker_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "test_typo.py").write_text(
        "import pytest\n\n@pytest.mark.slwo\ndef test_x():\n    pass\n")
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-c",
                          str(ROOT / "pyproject.toml"), "--rootdir", str(tmp_path),
                          str(tmp_path / "test_typo.py")],
                         capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode != 0 and "'slwo' not found in `markers`" in out.stdout + out.stderr
