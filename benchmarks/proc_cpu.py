"""CPU time of processes, from Linux's /proc: the one reader the benchmarks share."""

from __future__ import annotations

import os

HZ = os.sysconf("SC_CLK_TCK")  # /proc counts CPU time in these ticks per second


def stat_of(pid: int) -> tuple[int, int] | None:
    """(parent pid, user + system ticks so far) of a process; None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            # the command name (field 2) may hold spaces and ")": split after its last ")"
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[1]), int(fields[11]) + int(fields[12])


def all_processes() -> dict[int, tuple[int, int]]:
    """Every process now: pid -> (parent pid, user + system ticks)."""
    found = {}
    for name in os.listdir("/proc"):
        if name.isdigit() and (stat := stat_of(int(name))) is not None:
            found[int(name)] = stat
    return found
