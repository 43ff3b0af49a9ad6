"""tests/hub: a whole class with real Unix users. Needs root; skips with a reason otherwise."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

NEEDS = "run scripts/install-system-packages.sh (as root), or deselect with -m 'not hub'"


def class_skip_reason() -> str | None:
    """Why a class of Unix users cannot run here, or None."""
    if sys.platform != "linux":
        return "tests/hub needs Linux (Unix users, runuser, PAM)"
    if os.geteuid() != 0:
        return ("tests/hub needs root: it creates Unix users and runs nbgrader as each of them "
                "(run `./course test` as root, or deselect with -m 'not hub')")
    missing = [t for t in ("useradd", "userdel", "groupadd", "groupdel", "chpasswd", "runuser",
                           "pkill") if shutil.which(t) is None]
    if not os.access("/usr/bin/python3", os.X_OK):
        missing.append("/usr/bin/python3")
    if missing:
        return f"tests/hub needs {', '.join(missing)}: {NEEDS}"
    return None


@pytest.fixture(scope="session")
def class_ready() -> None:
    reason = class_skip_reason()
    if reason:
        pytest.skip(reason)
