"""One control group per grading sandbox, where the host lets the grader make one.

A sandbox's rlimits (:mod:`course_grading.sandbox`) bind its one process; a control group
binds everything in it together and gives the grader a handle on all of it: it is killed as
a whole (``cgroup.kill``, or each of ``cgroup.procs``) and is known empty when
``cgroup.procs`` is. Limits, where the host delegates the controller:

* ``pids`` — ``pids.max``: processes *and threads* together (the kernel does not count
  threads against ``RLIMIT_NPROC`` for root, and student code may start threads);
* ``memory`` — ``memory.max`` (v2) or ``memory.limit_in_bytes`` (v1): the kernel's memory
  plus what its scratch ``/tmp`` holds;
* ``cpu`` — one scheduling entity per sandbox (``cpu.weight`` 100 in v2, ``cpu.shares``
  1024 in v1): a sandbox with many busy threads gets the share of one sandbox, so the
  notebooks graded beside it keep theirs.

Both layouts are read from ``/proc/self/mountinfo``: the unified hierarchy (cgroup v2, its
``cgroup.kill`` needs Linux 5.14) and the v1 hierarchies of ``pids``, ``memory`` and
``cpu``. Each group is made below the grader's own group, named ``course-sandbox-<grader
pid>-<random>``; where nothing is writable (an unprivileged grader, a read-only
``/sys/fs/cgroup``), :meth:`SandboxCgroup.create` returns None and the sandbox does without.

Examples
--------
>>> group = SandboxCgroup.create(pids=64, memory=1 << 30)
>>> group is None or group.pids() == []
True
>>> group is None or group.remove() is None
True
"""

from __future__ import annotations

import os
import secrets
import signal
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["SandboxCgroup"]

_V1_CONTROLLERS = ("pids", "memory", "cpu")
_PREFIX = "course-sandbox-"


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a dead one waiting to be reaped does not)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except (OSError, IndexError):
        return False


def _remove_orphans(parent: Path) -> None:
    """Empty and remove the groups below ``parent`` made by graders that are gone (killed
    before they could remove them)."""
    try:
        names = [p for p in parent.iterdir() if p.name.startswith(_PREFIX)]
    except OSError:
        return
    for where in names:
        grader = where.name[len(_PREFIX):].split("-")[0]
        if grader.isdigit() and not _alive(int(grader)):
            orphan = SandboxCgroup([where])
            orphan.kill()
            orphan.remove()


def _mounts() -> list[tuple[Path, str, set[str]]]:
    """(mount point, file system type, options) of every cgroup mount of this process."""
    found = []
    try:
        with open("/proc/self/mountinfo", encoding="utf-8") as f:
            lines = f.readlines()
    except OSError:
        return []
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, rest = left.split(), right.split()
        if len(fields) >= 5 and len(rest) >= 3 and rest[0] in ("cgroup", "cgroup2") \
                and fields[3] == "/":
            found.append((Path(fields[4]), rest[0], set(rest[2].split(","))))
    return found


def _own_paths() -> dict[str, str]:
    """This process's group per hierarchy: ``""`` for v2, each controller name for v1."""
    paths: dict[str, str] = {}
    try:
        with open("/proc/self/cgroup", encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError:
        return paths
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            paths[name] = path
    return paths


def _write(path: Path, value: str) -> bool:
    try:
        path.write_text(value)
    except OSError:
        return False
    return True


@dataclass
class SandboxCgroup:
    """The control groups (one per hierarchy that allowed it) of one sandbox."""

    #: Every group directory made for the sandbox.
    dirs: list[Path] = field(default_factory=list)
    #: Which limits hold: controller name -> the value written.
    limits: dict[str, str] = field(default_factory=dict)

    @classmethod
    def create(cls, *, pids: int, memory: int) -> SandboxCgroup | None:
        """Make the sandbox's groups with these limits; None if no group could be made.

        Parameters
        ----------
        pids : int
            Processes and threads the group may hold at once.
        memory : int
            Bytes of memory (the kernel's and its scratch's) the group may use.
        """
        own = _own_paths()
        name = f"{_PREFIX}{os.getpid()}-{secrets.token_hex(4)}"
        group = cls()
        for mount, kind, options in _mounts():
            if kind == "cgroup2" and "" in own:
                _remove_orphans(mount / own[""].lstrip("/"))
                where = mount / own[""].lstrip("/") / name
                try:
                    where.mkdir()
                except OSError:
                    continue
                group.dirs.append(where)
                have = set((where / "cgroup.controllers").read_text().split())
                wanted = {"pids": ("pids.max", str(pids)),
                          "memory": ("memory.max", str(memory)),
                          "cpu": ("cpu.weight", "100")}
                for controller, (file, value) in wanted.items():
                    if controller in have and _write(where / file, value):
                        group.limits[controller] = value
            elif kind == "cgroup":
                for controller in _V1_CONTROLLERS:
                    if controller not in options or controller in group.limits \
                            or controller not in own:
                        continue
                    _remove_orphans(mount / own[controller].lstrip("/"))
                    where = mount / own[controller].lstrip("/") / name
                    try:
                        where.mkdir()
                    except OSError:
                        continue
                    group.dirs.append(where)
                    file, value = {"pids": ("pids.max", str(pids)),
                                   "memory": ("memory.limit_in_bytes", str(memory)),
                                   "cpu": ("cpu.shares", "1024")}[controller]
                    if _write(where / file, value):
                        group.limits[controller] = value
        return group if group.dirs else None

    def join(self) -> None:
        """Move the calling process into every group (call it between fork and exec)."""
        for where in self.dirs:
            fd = os.open(where / "cgroup.procs", os.O_WRONLY)
            try:
                os.write(fd, b"0")
            finally:
                os.close(fd)

    def pids(self) -> list[int]:
        """Every process in any of the groups (host pids)."""
        found: set[int] = set()
        for where in self.dirs:
            try:
                found.update(int(p) for p in (where / "cgroup.procs").read_text().split())
            except OSError:
                continue
        return sorted(found)

    def memory_kills(self) -> int:
        """How many times the memory limit's OOM killer killed a process of the groups:
        ``oom_kill`` of ``memory.events`` (v2) or of ``memory.oom_control`` (v1); 0 where
        neither can be read (no memory controller, or the groups are gone)."""
        kills = 0
        for where in self.dirs:
            for name in ("memory.events", "memory.oom_control"):
                try:
                    lines = (where / name).read_text().splitlines()
                except OSError:
                    continue
                for line in lines:
                    key, _, value = line.partition(" ")
                    if key == "oom_kill" and value.strip().isdigit():
                        kills += int(value)
                break
        return kills

    def kill(self) -> None:
        """SIGKILL every process of the groups (``cgroup.kill`` where there is one)."""
        for where in self.dirs:
            if (where / "cgroup.kill").exists():
                _write(where / "cgroup.kill", "1")
        for pid in self.pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass

    def remove(self) -> None:
        """Remove the (empty) groups; a group that still holds a process stays."""
        for where in self.dirs:
            try:
                where.rmdir()
            except OSError:
                pass
