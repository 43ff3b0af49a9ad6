"""Fixtures for the sandbox and parallel-grading tests (marker ``sandbox``).

They need bubblewrap; without it they skip with a message naming the install script.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # the course builder next to this file

from course_grading.sandbox import _no_fork_filter, sandbox_problem
from course_grading.sandbox_cgroup import SandboxCgroup


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.sandbox)
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def bwrap_ok() -> None:
    """Skip unless bubblewrap sandboxes work here (and this CPU has the no-fork filter)."""
    problem = sandbox_problem()
    if problem:
        pytest.skip(f"{problem} (CI: scripts/install-system-packages.sh installs it)")
    if _no_fork_filter() is None:
        pytest.skip("no seccomp no-fork filter for this CPU architecture: fork bombs unsafe")


@pytest.fixture(params=[False, True], ids=["without-cgroup", "with-cgroup"])
def cgroups(request: pytest.FixtureRequest, bwrap_ok: None) -> Iterator[bool]:
    """Each test once without a control group and once with one (skipped where the host
    lets the grader make none)."""
    if request.param:
        probe = SandboxCgroup.create(pids=8, memory=1 << 30)
        if probe is None:
            pytest.skip("this host lets the grader make no control group")
        probe.remove()
    yield request.param
