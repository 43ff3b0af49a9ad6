"""Test-suite wide markers: what `-m "not slow"` leaves out.

A test is ``slow`` when it starts something real and heavy: a Jupyter kernel (every strict
nbval lesson cell), Chromium (``browser``), the offline site (``site``), the grading sandbox
(``sandbox``) or a JupyterHub class (``hub``). Those markers imply ``slow`` here, so that
``./course test -m "not slow"`` is the quick loop: library, checks, spec and doctests.
Unknown markers are an error (``--strict-markers`` in pyproject.toml).
"""

from __future__ import annotations

import pytest

HEAVY = ("browser", "site", "sandbox", "hub")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        nbval_cell = type(item).__name__ == "IPyNbCell"
        if nbval_cell or any(item.get_closest_marker(m) for m in HEAVY):
            item.add_marker(pytest.mark.slow)
