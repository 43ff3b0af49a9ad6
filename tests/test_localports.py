"""tests/localports.py: ports for the test servers, out of the way of ephemeral ones."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import localports


def test_ports_lie_outside_the_ephemeral_range_and_are_not_handed_out_twice() -> None:
    low, high = localports._ephemeral()
    given = [port for _ in range(5) for port in localports.free_ports(3)]
    assert len(set(given)) == len(given)
    assert all(not low <= port <= high and port >= localports.LOWEST for port in given)


def test_each_worker_has_a_band_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    bands = {}
    for worker in ("gw0", "gw1", "gw2"):
        monkeypatch.setenv("PYTEST_XDIST_WORKER", worker)
        bands[worker] = localports.free_port() // localports.BAND
    assert len(set(bands.values())) == 3, bands


def test_two_runs_on_one_machine_start_at_different_places(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Two pytest runs (xdist worker gw0 of each) must not walk the same ports in step."""
    band = (20_000, 20_999)
    starts = set()
    for pid in (4242, 4243, 5301):
        monkeypatch.setattr(localports.os, "getpid", lambda pid=pid: pid)
        starts.add(localports._first_port(band))
    assert len(starts) == 3 and all(band[0] <= p <= band[1] for p in starts)


def test_a_port_in_use_is_skipped() -> None:
    port = localports.free_port()
    following = port + 1  # the next one the band would give
    with socket.socket() as held:
        held.bind(("127.0.0.1", following))
        held.listen()
        assert localports.free_port() not in (port, following)


def test_without_room_outside_the_ephemeral_range_the_system_chooses(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(localports, "_ephemeral", lambda: (1024, 65535))
    a, b = localports.free_ports(2)
    assert a != b and 1024 <= a <= 65535
