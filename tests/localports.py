"""Ports on 127.0.0.1 for the servers the tests start (JupyterLab, JupyterHub, its proxy,
ngshare, PostgreSQL): for tests/browser/labdriver.py, tests/hub/classroom.py and benchmarks.

A port that is free when chosen must still be free when the server binds it a moment later.
Asking the system for any free port (binding port 0) gives one of its *ephemeral* ports,
and so does every outgoing connection and every Jupyter kernel of the other test workers
(each kernel binds five ports): one of them can take the port in between. That happened:
a kernel's ZeroMQ socket sat on the port chosen for a JupyterHub, and the hub could not
start ("Address already in use").

So ports are taken from outside the ephemeral range (``/proc/sys/net/ipv4/ip_local_port_range``),
where the system never hands one out by itself, from a band of its own for each pytest-xdist
worker (``PYTEST_XDIST_WORKER``), and in turn within the band (a port is not handed out
twice until the band wraps round), each checked free by binding it. Each test run starts
at a place in the band of its own (from its process id): two runs on one machine (a
developer's beside CI's, two checkouts) once started at the same first port, and one's
JupyterLab found its port taken by the other's ("port 10001 is not available").
"""

from __future__ import annotations

import itertools
import os
import re
import socket
import threading
from pathlib import Path

__all__ = ["free_port", "free_ports"]

LOWEST = 10_000  # below: ports that well-known services use
HIGHEST = 65_535
BAND = 1_000  # ports per worker
EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")

_lock = threading.Lock()
_next: dict[tuple[int, int], int] = {}


def _ephemeral() -> tuple[int, int]:
    """The system's ephemeral port range (Linux's default where it cannot be read)."""
    try:
        low, high = (int(x) for x in EPHEMERAL_RANGE.read_text().split())
    except (OSError, ValueError):
        return 32_768, 60_999
    return low, high


def _worker() -> int:
    """This pytest-xdist worker's number (gw3 → 3), 0 outside xdist."""
    found = re.fullmatch(r"gw(\d+)", os.environ.get("PYTEST_XDIST_WORKER", ""))
    return int(found.group(1)) if found else 0


def _bands(low: int, high: int) -> list[tuple[int, int]]:
    """Every band of BAND ports outside ``low``..``high`` and above LOWEST."""
    spans = [(LOWEST, low - 1), (high + 1, HIGHEST)]
    return [(start, start + BAND - 1) for first, last in spans
            for start in range(first, last - BAND + 2, BAND)]


def _is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_ports(n: int) -> list[int]:
    """``n`` different ports on 127.0.0.1, free now, that no other worker of this run and no
    ephemeral use takes meanwhile.

    >>> a, b = free_ports(2)
    >>> a != b and not (_ephemeral()[0] <= a <= _ephemeral()[1])
    True
    """
    bands = _bands(*_ephemeral())
    if not bands:  # no room outside the ephemeral range: the system's choice, as before
        return _system_ports(n)
    band = bands[_worker() % len(bands)]
    found: list[int] = []
    with _lock:
        start = _next.get(band, _first_port(band))
        candidates = itertools.chain(range(start, band[1] + 1), range(band[0], start))
        for port in candidates:
            if _is_free(port):
                found.append(port)
                if len(found) == n:
                    _next[band] = port + 1 if port < band[1] else band[0]
                    return found
    raise RuntimeError(f"expected {n} free ports in {band[0]}..{band[1]} on 127.0.0.1, "
                       f"found {len(found)}")


def _first_port(band: tuple[int, int]) -> int:
    """Where this process starts in ``band``: a place that differs between test runs."""
    return band[0] + os.getpid() % (band[1] - band[0] + 1)


def free_port() -> int:
    """One port, as :func:`free_ports`."""
    return free_ports(1)[0]


def _system_ports(n: int) -> list[int]:
    """``n`` different free ports chosen by the system (held together while chosen)."""
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()
