"""Run student code in a bubblewrap sandbox while nbgrader autogrades.

nbgrader executes every submitted notebook in a Jupyter kernel that runs as the instructor,
with the instructor's files and network. This module swaps that kernel for one started
inside `bubblewrap <https://github.com/containers/bubblewrap>`_ (``bwrap``):

* no network (a fresh network namespace with only its own loopback);
* a file system made only of the OS (``/usr``), the Python installation, ``course_lib`` and
  a copy of the notebook's own directory at :data:`SUBMISSION_DIR` (the kernel's working
  directory), all read-only: the course's ``source/``, the gradebook and other students'
  submissions do not exist inside;
* writes only to a size-limited scratch ``/tmp`` (also ``$HOME``);
* one process: the kernel is the sandbox's pid 1 and may not create another (nor
  ``ptrace``, read or write another's memory, leave the grader's session or forget its
  parent's death);
* limits on address space, CPU time, open files, file size, and a wall-clock deadline; a
  control group of its own where the host allows one (threads, memory, a CPU share:
  :mod:`course_grading.sandbox_cgroup`);
* at its end, its pid 1 is killed (the whole pid namespace with it) and the grader checks
  that nothing of it remains (:meth:`SandboxProvisioner.end_sandbox`);
* a submission holding a symbolic link is refused before any of its code runs: nbgrader
  copies what the link points to (it could be the solutions) into the autograded folder.

The kernel talks to nbgrader over Unix sockets inside the scratch directory (ZeroMQ ``ipc``
transport), which the grading process reaches through ``/proc/<pid>/root``: no writable
directory is shared between the sandbox and the host.

It plugs into jupyter_client and nbgrader where they expect it. The sandbox is a kernel
provisioner, :class:`SandboxProvisioner` (jupyter_client's extension point for starting a
kernel somewhere else); :class:`SandboxKernelManager` gives each kernel one. The ``Execute``
preprocessor of ``nbgrader autograde`` is replaced by :class:`SandboxedExecute`, whose
kernel manager is :class:`SandboxKernelManager`. Put this in the course's
``nbgrader_config.py``::

    from course_grading.sandbox import enable
    enable(c)                              # optional limits: enable(c, memory_limit=2 << 30)

``nbgrader autograde`` and the formgrader's "autograde" button then run student code
sandboxed.

A grader that knows more notebooks will follow (the parallel engine of
:mod:`course_grading.parallel` sets ``c.SandboxedExecute.prestart = True``) starts the
next sandboxed kernel while the current notebook runs: each kernel still serves exactly one
notebook in its own fresh sandbox, but its start-up (about half a second of Python and
ipykernel imports) overlaps with grading instead of adding to it. The notebook's files are
copied into the waiting sandbox's directory when its notebook arrives.

Without a working ``bwrap``, autograding refuses to start a kernel, unless the instructor
opts out with ``c.SandboxProvisioner.allow_unsandboxed = True`` or the environment
variable ``COURSE_GRADING_ALLOW_UNSANDBOXED=1``.

``python -m course_grading.sandbox`` checks whether the sandbox works on this machine.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from multiprocessing.util import Finalize
from typing import Any

from jupyter_client.connect import KernelConnectionInfo
from jupyter_client.manager import AsyncKernelManager
from jupyter_client.provisioning import LocalProvisioner
from jupyter_core.utils import run_sync
from nbgrader.preprocessors import Execute
from traitlets import Bool, Enum, Float, Int, List, Unicode

from course_exchange.exchange import symbolic_links

from .kernel_messages import checked_copy
from .sandbox_cgroup import SandboxCgroup

__all__ = [
    "ALLOW_ENV",
    "INSTALL_HINT",
    "SUBMISSION_DIR",
    "SandboxConfigError",
    "SandboxKernelManager",
    "SandboxProvisioner",
    "SandboxSurvivorError",
    "SandboxUnavailableError",
    "SandboxedExecute",
    "SubmissionLinkError",
    "discard_spare",
    "enable",
    "refuse_moved_settings",
    "sandbox_of",
    "sandbox_problem",
]

#: Environment variable that lets an instructor run student code without the sandbox.
ALLOW_ENV = "COURSE_GRADING_ALLOW_UNSANDBOXED"

INSTALL_HINT = (
    "Install bubblewrap: `sudo apt-get install bubblewrap` on Debian/Ubuntu (the course's "
    "scripts/install-system-packages.sh does it), `sudo dnf install bubblewrap` on Fedora. "
    "It needs unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1 on old "
    "Debian kernels). To grade WITHOUT a sandbox anyway (student code then runs as you, with "
    f"your files and network), set {ALLOW_ENV}=1 or "
    "c.SandboxProvisioner.allow_unsandboxed = True in nbgrader_config.py."
)

#: Where the sandboxed kernel sees (a read-only copy of) its notebook's directory.
SUBMISSION_DIR = "/submission"

_KERNEL_ENV_KEEP = ("LANG", "LC_ALL", "LC_CTYPE", "PYTHONHASHSEED", "NBGRADER_EXECUTION",
                    "MPLBACKEND", "JPY_SESSION_NAME")


class SandboxUnavailableError(RuntimeError):
    """Raised when student code would run unsandboxed and the instructor did not allow it."""


class SandboxSurvivorError(RuntimeError):
    """Raised when a process of a sandbox still runs after the sandbox was killed."""


class SubmissionLinkError(RuntimeError):
    """Raised when a submission holds symbolic links, which nbgrader would follow."""


@functools.cache
def _launcher_source() -> str:
    from . import sandbox_launcher

    with open(sandbox_launcher.__file__, encoding="utf-8") as f:
        return f.read()


def _python_mounts() -> list[str]:
    """bwrap arguments that make this Python readable in the sandbox."""
    paths = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    paths.add(os.path.dirname(os.path.dirname(os.path.realpath(sys.executable))))
    args = []
    for path in sorted(p for p in paths if not p.startswith("/usr/") and p != "/usr"):
        if os.path.exists(path):
            args += ["--ro-bind", path, path]
    return args


@functools.cache
def _probe(bwrap: str) -> str | None:
    """Start a trivial sandbox once (with its launcher); why it failed, or None if it works."""
    cmd = [bwrap, "--unshare-all", "--unshare-user", "--uid", "0", "--gid", "0",
           "--cap-add", "CAP_SYS_ADMIN", "--cap-add", "CAP_SETPCAP", "--die-with-parent",
           "--as-pid-1", "--ro-bind", "/usr", "/usr", *_root_links(),
           "--proc", "/proc", "--dev", "/dev",
           "--tmpfs", "/tmp", *_python_mounts(),
           "--", sys.executable, "-I", "-S", "-c", _launcher_source(),
           str(1 << 20), "64", "-", "/tmp/ipc", (_no_fork_filter() or b"").hex() or "-",
           "--", "/usr/bin/true"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{bwrap} could not be run: {exc}"
    if proc.returncode != 0:
        return f"{bwrap} cannot create a sandbox here: {proc.stderr.strip()}"
    return None


def sandbox_problem(bwrap_path: str | None = None) -> str | None:
    """Say why the sandbox cannot run on this machine, or return None when it can.

    Parameters
    ----------
    bwrap_path : str, optional
        The ``bwrap`` to use; default the one on ``PATH``.

    Returns
    -------
    str or None
        A sentence naming the problem (``bwrap`` missing or not working) followed by
        :data:`INSTALL_HINT`; None when a test sandbox started and exited cleanly.
    """
    bwrap = shutil.which(bwrap_path or "bwrap")
    if bwrap is None:
        where = f"at {bwrap_path}" if bwrap_path else "on PATH"
        return f"bubblewrap (`bwrap`) is not installed (not found {where}). " + INSTALL_HINT
    problem = _probe(bwrap)
    return None if problem is None else problem + " " + INSTALL_HINT


def _root_links() -> list[str]:
    """bwrap arguments that recreate /bin, /lib, ... as on the host (symlinks or binds)."""
    args: list[str] = []
    for name in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(name):
            args += ["--symlink", os.readlink(name), name]
        elif os.path.isdir(name):
            args += ["--ro-bind", name, name]
    return args


# seccomp-BPF that makes fork/vfork/clone-without-CLONE_THREAD fail with EPERM and clone3
# with ENOSYS (so that glibc creates threads with clone): the kernel may start threads but
# no process. The limit on processes therefore holds for root graders too, for whom the
# kernel does not enforce RLIMIT_NPROC. Mounts and namespaces are refused too (EPERM):
# mount, umount2, pivot_root, chroot, unshare, setns and the new mount API, and any clone
# that asks for a namespace. So are the ways into another process or out of the grader's
# reach: ptrace, process_vm_readv/writev, kcmp, pidfd_getfd, perf_event_open, bpf,
# io_uring (whose operations seccomp does not see), setsid and setpgid (the grader signals
# the sandbox's process group), and prctl(PR_SET_PDEATHSIG) (the kernel dies with bwrap).
# So is memory that no mount and no rlimit bounds: memfd_create and System V shared memory,
# semaphores and message queues (shmget, semget, msgget): their pages or kernel objects
# outlive every mapping and file descriptor until the sandbox ends, and only a control
# group's memory limit (which a host may not give) would count them.
_ARCH = {
    # arch: (audit arch, fork syscalls, clone, prctl, other refused syscalls)
    "x86_64": (0xC000003E, {57, 58}, 56, 157,
               {165, 166, 155, 161, 272, 308, 428, 429, 430, 431, 432, 433, 442,
                101, 310, 311, 312, 438, 298, 321, 425, 426, 427, 112, 109,
                319, 29, 64, 68}),
    "aarch64": (0xC00000B7, set(), 220, 167,
                {40, 39, 41, 51, 97, 268, 428, 429, 430, 431, 432, 433, 442,
                 117, 270, 271, 272, 438, 241, 280, 425, 426, 427, 157, 154,
                 279, 194, 190, 186}),
}
_CLONE_NEW_NAMESPACES = 0x7E020000  # CLONE_NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET
_PR_SET_PDEATHSIG = 1


def _no_fork_filter() -> bytes | None:
    """The compiled seccomp filter for this machine, or None on an unknown architecture."""
    import platform
    import struct

    arch = _ARCH.get(platform.machine())
    if arch is None:
        return None
    audit_arch, forks, clone, prctl, refused = arch
    ld, jeq, jge, jset, ret = 0x20, 0x15, 0x35, 0x45, 0x06
    allow, eperm, enosys = 0x7FFF0000, 0x00050000 | 1, 0x00050000 | 38
    prog: list[tuple[int, int, int, int]] = [
        (ld, 0, 0, 4),                      # arch
        (jeq, 1, 0, audit_arch),
        (ret, 0, 0, eperm),                 # foreign ABI (e.g. i386 int 0x80): refuse all
        (ld, 0, 0, 0),                      # syscall number
        (jge, 0, 1, 0x40000000),            # x32 ABI on x86_64
        (ret, 0, 0, eperm),
        (jeq, 0, 1, 435),                   # clone3: glibc falls back to clone
        (ret, 0, 0, enosys),
    ]
    for nr in sorted(forks | refused):
        prog += [(jeq, 0, 1, nr), (ret, 0, 0, eperm)]
    prog += [
        (jeq, 0, 4, prctl),                 # prctl: its option is an int (low 32 bits)
        (ld, 0, 0, 16),
        (jeq, 0, 1, _PR_SET_PDEATHSIG),
        (ret, 0, 0, eperm),
        (ret, 0, 0, allow),
        (jeq, 1, 0, clone),
        (ret, 0, 0, allow),
        (ld, 0, 0, 16),                     # clone flags (low 32 bits of args[0])
        (jset, 2, 0, _CLONE_NEW_NAMESPACES),  # a new namespace: refused (jump to the end)
        (jset, 0, 1, 0x00010000),           # CLONE_THREAD: a thread, allowed
        (ret, 0, 0, allow),
        (ret, 0, 0, eperm),
    ]
    return b"".join(struct.pack("<HBBI", *ins) for ins in prog)


def _package_locations(names: list[str]) -> list[str]:
    """Real paths of the folders of the named packages, where they are installed."""
    import importlib.util

    found = []
    for name in names:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        for location in (spec.submodule_search_locations or []) if spec else []:
            found.append(os.path.realpath(location))
    return found


def _drain(fd: int, keep: int, sink: Any) -> None:
    """Read a pipe until it closes; keep its first ``keep`` bytes in ``sink.kernel_log``."""
    kept = bytearray()
    with os.fdopen(fd, "rb", buffering=0) as stream:
        while True:
            try:
                chunk = stream.read(65536)
            except OSError:
                break
            if not chunk:
                break
            if len(kept) < keep:
                kept += chunk[: keep - len(kept)]
                sink.kernel_log = bytes(kept)


_PIDFD_LOCK = threading.Lock()


@functools.cache
def _libc() -> Any:
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def _before_exec(cgroup: SandboxCgroup | None) -> Any:
    """What the child runs between fork and exec of bubblewrap."""
    libc = _libc()  # loaded here: no dlopen between fork and exec

    def prepare() -> None:
        # The interrupt that nbclient sends on a cell timeout goes to the whole process
        # group; bwrap must survive it (ipykernel installs its own handler while it runs).
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        # bwrap dies with the grader (a killed worker), and the kernel with bwrap
        # (--die-with-parent; the kernel may not unset it): nothing outlives the grader.
        if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            os._exit(70)
        if cgroup is not None:  # bwrap and all it starts are born in the sandbox's group
            cgroup.join()

    return prepare


def _is_zombie(pid: int) -> bool:
    """Whether process ``pid`` has exited and waits to be reaped (or is gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] in (b"Z", b"X")
    except (OSError, IndexError):
        return True


def _in_pid_namespace(namespace: tuple[int, int]) -> list[int]:
    """Host pids of the processes in a pid namespace, given as (inode, device) of
    ``/proc/<pid>/ns/pid``: whatever they did (``setsid``, a double fork), they stay in it."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                st = os.stat(f"/proc/{entry}/ns/pid")
            except OSError:  # gone, or a zombie (already dead)
                continue
            if (st.st_ino, st.st_dev) == namespace:
                found.append(int(entry))
    return found


class SandboxConfigError(RuntimeError):
    """Raised when the course's config sets a sandbox setting where it is no longer read."""


#: Where the sandbox's settings were read before they became the provisioner's.
_OLD_SECTION = "SandboxKernelManager"


def refuse_moved_settings(config: Any) -> None:
    """Refuse a config that sets the sandbox's limits under their old name.

    The sandbox's settings are :class:`SandboxProvisioner`'s (``c.SandboxProvisioner.<name>``);
    before, they were the kernel manager's. traitlets ignores a setting of a class that no
    longer has it, so an instructor's ``c.SandboxKernelManager.memory_limit`` would be
    silently dropped: it is refused instead, naming the new spelling.

    Raises
    ------
    SandboxConfigError
        If ``config`` sets ``c.SandboxKernelManager.<name>`` for a setting of the sandbox.
    """
    section = config[_OLD_SECTION] if _OLD_SECTION in config else {}
    moved = sorted(set(section) & set(SandboxProvisioner.class_trait_names(config=True)))
    if moved:
        spelled = ", ".join(f"c.{_OLD_SECTION}.{name}" for name in moved)
        raise SandboxConfigError(
            f"{spelled}: the grading sandbox's settings are its kernel provisioner's now; "
            f"write {', '.join(f'c.SandboxProvisioner.{name}' for name in moved)} instead "
            "(or pass them to enable(c, ...)), in nbgrader_config.py.")


class SandboxProvisioner(LocalProvisioner):
    """Start each kernel inside a bubblewrap sandbox: a jupyter_client kernel provisioner.

    A kernel provisioner is jupyter_client's documented way to start a kernel somewhere
    else ("Customizing the kernel's runtime environment" in jupyter_client's docs). This one
    is a :class:`~jupyter_client.provisioning.LocalProvisioner` whose kernel runs in a
    sandbox of its own (see the module's docstring for its walls). What jupyter_client's
    kernel manager asks of it, and what it does:

    * :meth:`pre_launch`: decide that the sandbox works here (or refuse; or, if the
      instructor allowed it, start the kernel as a plain ``LocalProvisioner`` would); make
      the kernel's host directory; point the manager at Unix sockets (ZeroMQ ``ipc``) and a
      connection file inside it;
    * :meth:`launch_kernel`: start ``bwrap``, whose first and only process, its pid 1, is the
      launcher and then the kernel; hold that pid 1 by a pidfd; start the wall-clock watchdog;
    * :meth:`poll`, :meth:`wait`, :meth:`send_signal` (``LocalProvisioner``'s): bubblewrap's
      process and its process group, which the kernel cannot leave (an interrupt reaches it);
    * :meth:`kill`: the sandbox's pid 1 first, through its pidfd (its whole pid namespace
      dies with it, and bubblewrap reaps it and exits), then whatever is left, by force;
      returns once bubblewrap has exited, so that the manager's wait finds it gone;
    * :meth:`cleanup`: :meth:`end_sandbox` (kill everything of the sandbox, then check that
      nothing remains: :class:`SandboxSurvivorError` otherwise) and remove the host
      directory. The manager calls it also for a kernel that died by itself.

    Configure it as ``c.SandboxProvisioner.<trait>`` in ``nbgrader_config.py`` (or pass the
    traits to :func:`enable`). :class:`SandboxKernelManager` gives it to the graders'
    kernel managers.
    """

    memory_limit = Int(2 << 30, help="Address-space limit of each sandboxed process, in bytes."
                       ).tag(config=True)
    max_processes = Int(64, help="Processes and threads the sandbox may hold at once."
                        ).tag(config=True)
    cpu_time_limit = Int(600, help="CPU seconds per sandboxed process.").tag(config=True)
    wall_time_limit = Float(900.0, help="Seconds after which the whole sandbox is killed."
                            ).tag(config=True)
    scratch_size = Int(256 << 20, help="Size of the writable scratch /tmp, in bytes."
                       ).tag(config=True)
    max_open_files = Int(256, help="Open file descriptors per process.").tag(config=True)
    max_inodes = Int(10_000, help="Files and folders the scratch /tmp may hold.").tag(
        config=True)
    readable_paths = List(Unicode(), help="Extra host paths mounted read-only in the sandbox."
                          ).tag(config=True)
    allow_unsandboxed = Bool(False, help=(
        "Run student code WITHOUT a sandbox when bubblewrap is missing (it then runs as you)."
    )).tag(config=True)
    bwrap_path = Unicode("", help="Path of bwrap; empty means look it up on PATH."
                         ).tag(config=True)
    allow_course_lib = Bool(False, help=(
        "Let student code import course_lib (the students' library). The instructor's "
        "package, course_grading, is never importable in the sandbox."
    )).tag(config=True)
    max_message_size = Int(16 << 20, help=(
        "Largest message (bytes) the grader accepts from a sandboxed kernel; a kernel that "
        "sends a larger one is cut off."
    )).tag(config=True)
    max_queued_messages = Int(8, help=(
        "Messages a sandboxed kernel's channel may hold in the grader's memory before they "
        "are read (ZeroMQ's receive high-water mark, 1000 by default): more wait in the "
        "kernel's own memory, which its sandbox limits. With max_message_size this bounds "
        "what a kernel can make the grader hold while it is slow to read (8 x 16 MB)."
    )).tag(config=True)
    use_cgroups = Bool(True, help=(
        "Put each sandbox in a control group of its own where the host lets the grader make "
        "one (pids.max, memory, a CPU share per sandbox; see course_grading.sandbox_cgroup)."
    )).tag(config=True)
    kernel_log_size = Int(64 << 10, help=(
        "Bytes of the kernel's own stdout/stderr kept (the rest is read and dropped); "
        "nothing of it reaches the grader's terminal."
    )).tag(config=True)

    _hostdir: str | None = None
    _watchdog: threading.Thread | None = None
    _watchdog_stop: threading.Event
    _deadline: float = 0.0
    _launch_env: dict[str, str] | None = None
    _pid1: int | None = None  # a pidfd of the sandbox's pid 1 (the kernel)
    _pid_namespace: tuple[int, int] | None = None
    _bwrap: subprocess.Popen[bytes] | None = None
    cgroup: SandboxCgroup | None = None
    #: Whether the kernel runs in a sandbox (False only where the instructor allowed none).
    sandboxed: bool = False
    #: Why the grader killed this kernel (time budget, output flood), if it did.
    killed_because: str | None = None
    _memory_killed: int | None = None  # the group's memory limit, once it killed for it
    #: The first ``kernel_log_size`` bytes the kernel wrote to its stdout/stderr.
    kernel_log: bytes = b""

    # -- the notebook's files ---------------------------------------------------------
    def fill_submission_dir(self, path: str | os.PathLike[str]) -> None:
        """Copy the notebook's directory ``path`` to where the sandbox sees it.

        The copy keeps symbolic links as links (a link to the instructor's files leads
        nowhere inside the sandbox) and is read-only for the kernel. Call it before the
        kernel runs any of the notebook's code; :class:`SandboxedExecute` does.

        Raises
        ------
        FileNotFoundError
            If ``path`` is not a directory.
        """
        if self._hostdir is None:
            raise RuntimeError("fill_submission_dir() needs a started sandboxed kernel")
        src = os.path.abspath(path)
        if not os.path.isdir(src):
            raise FileNotFoundError(f"the notebook's directory {src} does not exist")
        shutil.copytree(src, os.path.join(self._hostdir, "submission"), symlinks=True,
                        dirs_exist_ok=True)

    def adopt(self, path: str | os.PathLike[str] | None) -> None:
        """Give a kernel started ahead of time its notebook's directory and a fresh deadline."""
        if path:
            self.fill_submission_dir(path)
        self._deadline = time.monotonic() + self.wall_time_limit

    def launch_signature(self) -> tuple[Any, ...]:
        """What a kernel started now would be: a spare kernel is used only if equal."""
        km = self.parent
        return (type(km), type(self), getattr(km, "kernel_name", None), json.dumps(
            {k: getattr(self, k) for k in SandboxProvisioner.class_own_traits(config=True)},
            sort_keys=True, default=str), tuple(sorted(self._kernel_env(None).items())))

    def process_alive(self) -> bool:
        """Whether the sandbox process of a started kernel is still running."""
        return self.process is not None and self.process.poll() is None

    def killed_for_memory(self) -> str | None:
        """Why the kernel died, if its control group's memory limit killed it: "it used more
        than N MB of memory"; None otherwise (no group, or no kill for memory)."""
        group = self.cgroup
        if self._memory_killed is None and group is not None and \
                "memory" in group.limits and group.memory_kills():
            self._memory_killed = int(group.limits["memory"])
        if self._memory_killed is None:
            return None
        return f"it used more than {self._memory_killed / 2**20:g} MB of memory"

    def kill_now(self) -> None:
        """Kill the sandbox and remove its host directory, without an event loop.

        Raises
        ------
        SandboxSurvivorError
            If a process of the sandbox still runs afterwards (see :meth:`end_sandbox`).
        """
        try:
            self.end_sandbox()
        finally:
            if self._hostdir is not None:
                shutil.rmtree(self._hostdir, ignore_errors=True)

    def sandbox_processes(self) -> list[int]:
        """Host pids of every process of this sandbox still running: in its pid namespace,
        in its control group, and bubblewrap itself (a dead, unreaped one is not counted)."""
        found = set(self.cgroup.pids()) if self.cgroup is not None else set()
        if self._pid_namespace is not None:
            found.update(_in_pid_namespace(self._pid_namespace))
        if self._bwrap is not None and self._bwrap.poll() is None:
            found.add(self._bwrap.pid)
        return sorted(pid for pid in found if not _is_zombie(pid))

    def _kill_sandbox(self, everything: bool = False) -> None:
        """SIGKILL the sandbox's pid 1, the kernel: its whole pid namespace dies with it, and
        bubblewrap, its parent, reaps it and exits. With ``everything``, also bubblewrap's
        process group and the sandbox's control group."""
        with _PIDFD_LOCK:  # the watchdog thread may signal while the sandbox ends
            if self._pid1 is not None:
                try:
                    signal.pidfd_send_signal(self._pid1, signal.SIGKILL)
                except OSError:
                    pass
        if not everything:
            return
        if self._bwrap is not None and self._bwrap.poll() is None:  # not reaped: pid is ours
            try:
                os.killpg(self._bwrap.pid, signal.SIGKILL)
            except OSError:
                pass
        if self.cgroup is not None:
            self.cgroup.kill()

    def end_sandbox(self, timeout: float = 5.0) -> None:
        """Kill every process of the sandbox, then check that none remains.

        Parameters
        ----------
        timeout : float
            Seconds to wait for the killed processes to be gone.

        Raises
        ------
        SandboxSurvivorError
            If a process of the sandbox (its pid namespace, its control group, bubblewrap)
            still runs ``timeout`` seconds after being killed.
        """
        if self._pid1 is None and self._pid_namespace is None and self.cgroup is None:
            return  # never launched, or ended already
        start = time.monotonic()
        while True:
            # pid 1 first, so that bubblewrap reaps it; then whatever is left, by force
            self._kill_sandbox(everything=time.monotonic() - start > 0.5)
            # pid 1 exits last in its namespace: scan /proc (and the group) once it has
            pid1_gone = self._pid1 is None or bool(select.select([self._pid1], [], [], 0)[0])
            left = self.sandbox_processes() if pid1_gone else [-1]
            if not left:
                break
            if time.monotonic() - start > timeout:
                left = self.sandbox_processes()
                message = (f"processes {left} of the grading sandbox still run after it was "
                           f"killed (SIGKILL), {timeout:g} s ago; kill them by hand")
                self.log.error(message)
                raise SandboxSurvivorError(message)
            time.sleep(0.01)
        with _PIDFD_LOCK:  # closed and forgotten at once: its number may be reused
            if self._pid1 is not None:
                os.close(self._pid1)
            self._pid1 = None
        if self.cgroup is not None:
            self.killed_for_memory()  # asked while the group can still say
            self.cgroup.remove()
        self._pid_namespace = self.cgroup = None

    # -- decide -------------------------------------------------------------------------
    def _use_sandbox(self) -> bool:
        allowed = self.allow_unsandboxed or os.environ.get(ALLOW_ENV, "") not in ("", "0")
        problem = sandbox_problem(self.bwrap_path or None)
        if problem is None:
            return True
        if allowed:
            message = f"Grading WITHOUT a sandbox, as allowed by the instructor: {problem}"
            self.log.warning(message)
            print(message, file=sys.stderr, flush=True)  # also when nobody set up logging
            return False
        raise SandboxUnavailableError(
            "Refusing to run untrusted student code without a sandbox. " + problem)

    # -- launch ---------------------------------------------------------------------------
    async def pre_launch(self, **kwargs: Any) -> dict[str, Any]:
        """Decide on the sandbox, make its host directory, and point the kernel manager at
        Unix sockets and a connection file inside it; then ``LocalProvisioner``'s steps
        (connection file written, kernel command formatted, environment)."""
        km = self.parent
        if km is None:
            raise RuntimeError("SandboxProvisioner needs its kernel manager as its parent "
                               "(jupyter_client's KernelProvisionerFactory passes it)")
        self.kernel_spec = km.kernel_spec
        self.kernel_id = km.kernel_id
        self.sandboxed = self._use_sandbox()
        if self.sandboxed:
            if self._hostdir is None:
                # Under /tmp: the kernel's sockets live at the same path inside the sandbox,
                # in its scratch /tmp (see the launcher).
                self._hostdir = tempfile.mkdtemp(prefix="nbgsb-", dir="/tmp")
                # Removed on cleanup, or when the sandbox exits (see _start_watchdog), or at
                # the latest when this process exits (multiprocessing workers included).
                Finalize(self, shutil.rmtree, args=(self._hostdir, True), exitpriority=10)
            km.cache_ports = False
            km.transport = "ipc"
            # The kernel binds <ip>-<port> inside its scratch /tmp; on the host the same
            # path reaches it through a symlink into /proc/<pid>/root, made after launch.
            km.ip = os.path.join(self._hostdir, "ipc", "k")
            km.connection_file = os.path.join(self._hostdir, "kernel.json")
        return await super().pre_launch(**kwargs)

    def _bwrap_command(self, kernel_cmd: list[str], fds: list[int],
                       info_w: int, conn_r: int) -> list[str]:
        bwrap = self.bwrap_path or shutil.which("bwrap") or "bwrap"
        hostdir = self._hostdir
        assert hostdir is not None
        # No --new-session: the grader interrupts a cell by signalling the sandbox's process
        # group, which the kernel must stay in. Popen's start_new_session already leaves the
        # sandbox without a controlling terminal, and its fds 0-2 are no terminal either.
        # uid 0 and two capabilities in the sandbox's own user namespace, for the launcher
        # only: it mounts the size- and inode-limited scratch /tmp, then drops them all.
        # --as-pid-1: the launcher, then the kernel, is the sandbox's pid 1, and its only
        # process (bubblewrap's own pid 1 would run without the filter and the limits).
        cmd = [bwrap, "--unshare-all", "--unshare-user", "--uid", "0", "--gid", "0",
               "--cap-add", "CAP_SYS_ADMIN", "--cap-add", "CAP_SETPCAP",
               "--die-with-parent", "--as-pid-1", "--hostname", "sandbox",
               "--ro-bind", "/usr", "/usr", *_root_links(),
               "--proc", "/proc", "--dev", "/dev",
               "--size", str(1 << 20), "--perms", "1777", "--tmpfs", "/tmp"]
        for name in ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "fonts",
                     "passwd", "group", "nsswitch.conf", "matplotlibrc"):
            cmd += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
        # Read-only mounts: the Python that runs the kernel, course_lib, the notebook's dir.
        paths = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
        exe = shutil.which(kernel_cmd[0]) or kernel_cmd[0]
        paths.add(os.path.dirname(os.path.dirname(os.path.realpath(exe))))
        paths.add(os.path.dirname(os.path.dirname(os.path.abspath(exe))))
        # the checkpoint's own checks (course_quiz) are never an answer's to import
        hidden = ["course_grading", "course_quiz"]
        hidden += [] if self.allow_course_lib else ["course_lib"]
        if self.allow_course_lib:
            import course_lib

            paths.update(os.path.realpath(p) for p in course_lib.__path__)
        paths.update(self.readable_paths)
        mounted = sorted(p for p in paths if not p.startswith("/usr/") and p != "/usr")
        for path in mounted:
            if os.path.exists(path):
                cmd += ["--ro-bind", path, path]
        # A package that is not to be importable but lies inside a mounted folder (a normal
        # install in site-packages) is covered by an empty read-only folder.
        os.makedirs(os.path.join(hostdir, "empty"), mode=0o555, exist_ok=True)
        for location in _package_locations(hidden):
            if any(location == m or location.startswith(m.rstrip("/") + "/")
                   for m in [*mounted, "/usr"]):
                cmd += ["--ro-bind", os.path.join(hostdir, "empty"), location]
        # The notebook's directory: a host folder of this kernel alone, filled with a copy of
        # the notebook's files before any of its code runs (see fill_submission_dir).
        cmd += ["--ro-bind", os.path.join(hostdir, "submission"), SUBMISSION_DIR]
        seccomp = _no_fork_filter()
        cmd += ["--remount-ro", "/",  # only the scratch /tmp stays writable
                "--perms", "0600", "--file", str(conn_r), self.parent.connection_file,
                "--chdir", SUBMISSION_DIR, "--info-fd", str(info_w), "--",
                sys.executable, "-I", "-S", "-c", _launcher_source(),
                str(self.scratch_size), str(self.max_inodes), self.parent.connection_file,
                os.path.join(hostdir, "ipc"), seccomp.hex() if seccomp else "-", "--",
                "/usr/bin/prlimit", f"--as={self.memory_limit}",
                f"--nproc={self.max_processes}", f"--cpu={self.cpu_time_limit}",
                f"--fsize={self.scratch_size}", f"--nofile={self.max_open_files}",
                "--core=0", "--"]
        return cmd + list(kernel_cmd)

    def _kernel_env(self, env: dict[str, str] | None) -> dict[str, str]:
        env = dict(env if env is not None else os.environ)
        clean = {k: v for k, v in env.items() if k in _KERNEL_ENV_KEEP}
        bindir = os.path.dirname(sys.executable)
        clean.update(PATH=f"{bindir}:/usr/local/bin:/usr/bin:/bin", HOME="/tmp/home",
                     TMPDIR="/tmp", MPLCONFIGDIR="/tmp/home/.mpl",
                     IPYTHONDIR="/tmp/home/.ipython", JUPYTER_RUNTIME_DIR="/tmp/home/.jrt",
                     OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
                     PYDEVD_DISABLE_FILE_VALIDATION="1")
        clean.setdefault("MPLBACKEND", "Agg")
        return clean

    async def launch_kernel(self, cmd: list[str], **kwargs: Any) -> KernelConnectionInfo:
        """Start bubblewrap with the kernel as the sandbox's pid 1; its connection info."""
        if not self.sandboxed:
            return await super().launch_kernel(cmd, **kwargs)
        assert self._hostdir is not None
        connection_file = self.parent.connection_file
        cwd = kwargs.get("cwd")
        os.makedirs(os.path.join(self._hostdir, "submission"), mode=0o700, exist_ok=True)
        if cwd:  # else a kernel started ahead of its notebook: filled when it is adopted
            self.fill_submission_dir(cwd)
        self._launch_env = self._kernel_env(kwargs.get("env"))
        fds: list[int] = []
        info_r, info_w = os.pipe()
        conn_r = os.open(connection_file, os.O_RDONLY | os.O_CLOEXEC)
        # The kernel's own fd 1 and 2 (its banner, crashes, raw os.write of student code)
        # go to a pipe that a thread reads and mostly drops: no student byte reaches the
        # grader's terminal, and no descriptor of that terminal reaches the sandbox.
        log_r, log_w = os.pipe()
        fds += [info_w, conn_r]
        self.cgroup = SandboxCgroup.create(
            pids=self.max_processes + 2,  # + bubblewrap, + a thread of slack
            memory=self.memory_limit + self.scratch_size) if self.use_cgroups else None
        try:
            bwrap_cmd = self._bwrap_command(cmd, fds, info_w, conn_r)
            process = subprocess.Popen(
                bwrap_cmd, env=self._launch_env, cwd="/", stdin=subprocess.DEVNULL,
                stdout=log_w, stderr=log_w, close_fds=True,
                pass_fds=fds, start_new_session=True, preexec_fn=_before_exec(self.cgroup))
        except BaseException:
            if self.cgroup is not None:
                self.cgroup.remove()
                self.cgroup = None
            raise
        finally:
            for fd in (*fds, log_w):
                os.close(fd)
        self._bwrap = process
        threading.Thread(target=_drain, args=(log_r, self.kernel_log_size, self),
                         name="sandbox-log", daemon=True).start()
        info = self._read_info(info_r, process)
        try:  # the sandbox's pid 1 (the kernel), held by a pidfd: its pid cannot be reused
            self._pid1 = os.pidfd_open(info["child-pid"])
            ns = os.stat(f"/proc/{info['child-pid']}/ns/pid")
            self._pid_namespace = (ns.st_ino, ns.st_dev)
        except OSError as exc:
            self.end_sandbox()
            raise RuntimeError(f"the sandbox ended as it started ({exc}); run "
                               "`python -m course_grading.sandbox` to diagnose.") from None
        link = os.path.join(self._hostdir, "ipc")
        os.symlink(f"/proc/{info['child-pid']}/root{link}", link)
        # What LocalProvisioner keeps of its process: poll, wait and send_signal use it
        # (bubblewrap, in a process group of its own that the kernel cannot leave).
        self.process = process
        self.pid = process.pid
        self.pgid = os.getpgid(process.pid)
        self.cwd = SUBMISSION_DIR
        self._start_watchdog(process)
        return self.connection_info

    def resolve_path(self, path_str: str) -> str | None:
        """None for a sandboxed kernel: its paths are not the host's, and none is shown."""
        return None if self.sandboxed else super().resolve_path(path_str)

    @staticmethod
    def _read_info(fd: int, process: subprocess.Popen[bytes]) -> dict[str, Any]:
        data = b""
        deadline = time.monotonic() + 30
        with os.fdopen(fd, "rb", buffering=0) as stream:
            while time.monotonic() < deadline:
                ready, _, _ = select.select([stream], [], [], 0.5)
                if ready:
                    chunk = stream.read(4096)
                    if not chunk:
                        break
                    data += chunk
                    try:
                        return json.loads(data)
                    except ValueError:
                        continue
                elif process.poll() is not None:
                    break
        process.kill()
        raise RuntimeError(
            f"bubblewrap did not start the sandbox (exit status {process.poll()}); "
            "run `python -m course_grading.sandbox` to diagnose.")

    def _start_watchdog(self, process: subprocess.Popen[bytes]) -> None:
        """Kill the sandbox after wall_time_limit; remove its host dir once it has exited.

        A kernel that died is never shut down by nbclient, so its directory is removed
        here rather than in cleanup.
        """
        hostdir = self._hostdir
        self._deadline = time.monotonic() + self.wall_time_limit
        stop = threading.Event()

        def watch() -> None:
            while process.poll() is None and not stop.is_set():
                if time.monotonic() > self._deadline:
                    self.killed_because = (f"the notebook used up its {self.wall_time_limit:g} s "
                                           "time budget")
                    self.log.warning("Sandboxed kernel exceeded %.0f s of wall time: killed",
                                     self.wall_time_limit)
                    self._kill_sandbox()  # checked for survivors when the kernel is cleaned up
                stop.wait(0.2)
            if hostdir is not None and process.poll() is not None:
                shutil.rmtree(hostdir, ignore_errors=True)

        self._watchdog = threading.Thread(target=watch, name="sandbox-watchdog", daemon=True)
        self._watchdog_stop = stop
        self._watchdog.start()

    async def _exited(self, seconds: float) -> bool:
        """Wait up to ``seconds`` for bubblewrap to exit; whether it has."""
        deadline = time.monotonic() + seconds
        while self._bwrap is not None and self._bwrap.poll() is None:
            if time.monotonic() > deadline:
                return False
            await asyncio.sleep(0.01)
        return True

    async def kill(self, restart: bool = False) -> None:
        """Kill the sandbox: its pid 1 first, then, if bubblewrap has not exited within half
        a second, its process group and control group too. Returns once bubblewrap has
        exited (or after 5 s): the kernel manager then finds it gone at its first poll."""
        if not self.sandboxed or self._bwrap is None:
            return await super().kill(restart=restart)
        # The kernel (the sandbox's pid 1) first: bubblewrap then reaps it and exits by
        # itself, so no dead kernel waits for a reaper (some containers' init reaps none).
        self._kill_sandbox()
        if not await self._exited(0.5):
            self._kill_sandbox(everything=True)
            await self._exited(4.5)

    async def cleanup(self, restart: bool = False) -> None:
        """End the sandbox (:meth:`end_sandbox`: nothing of it may run on) and remove its host
        directory (kept on a restart). Called by the kernel manager's ``cleanup_resources``,
        also for a kernel that died by itself, and possibly more than once."""
        await super().cleanup(restart=restart)
        if self._watchdog is not None:
            self._watchdog_stop.set()
            self._watchdog = None
        try:
            self.end_sandbox()  # whatever the kernel did, nothing of its sandbox runs on
        finally:
            if self._hostdir is not None and not restart:
                shutil.rmtree(self._hostdir, ignore_errors=True)
                self._hostdir = None


class SandboxKernelManager(AsyncKernelManager):
    """The graders' kernel manager: its kernel is started by a :class:`SandboxProvisioner`.

    It gives every manager its own sandbox provisioner through jupyter_client's documented
    ``provisioner`` attribute, set before the kernel starts (jupyter_client makes one from
    the kernelspec only when the manager has none, and keeps it across restarts), and hands
    out clients whose sockets refuse messages larger than the sandbox's
    ``max_message_size``. Everything about the sandbox is the provisioner's:
    ``km.provisioner.kill_now()``, ``km.provisioner.killed_because``, ...

    Why not the provisioner's entry point and a kernelspec naming it: the course runs from a
    checkout (a ``.pth`` file puts it on ``sys.path``), so no installed distribution
    declares the entry point, and jupyter_client finds provisioners only through entry
    points; and a kernelspec would make *every* kernel of that name sandboxed, in the
    instructor's own JupyterLab too.

    Raises
    ------
    SandboxConfigError
        If the config sets a sandbox setting as ``c.SandboxKernelManager.<name>`` (see
        :func:`refuse_moved_settings`).
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        refuse_moved_settings(self.config)
        self.provisioner = SandboxProvisioner(parent=self)

    def client(self, **kwargs: Any) -> Any:
        """A client whose sockets refuse messages larger than ``max_message_size``, and
        whose session refuses messages of the wrong shape with one kind of error
        (:class:`~course_grading.kernel_messages.CheckedSession`): the student's code holds
        the signing key and can send anything.

        Raises
        ------
        SandboxUnavailableError
            If the kernel was not started by this manager's :class:`SandboxProvisioner`
            (something replaced it): nobody talks to a kernel that may not be sandboxed.
        """
        sandbox = self.provisioner
        if not isinstance(sandbox, SandboxProvisioner):
            raise SandboxUnavailableError(
                f"the kernel was started by {type(sandbox).__name__}, not by the grading "
                "sandbox's SandboxProvisioner: its student code would not be sandboxed")
        kwargs.setdefault("session", checked_copy(self.session))
        client = super().client(**kwargs)
        if sandbox.sandboxed:
            import zmq

            # The client's own context (made on first use, destroyed with its channels):
            # every socket it opens from now on drops a larger message and disconnects.
            client.context.setsockopt(zmq.MAXMSGSIZE, sandbox.max_message_size)
            # A grader slowed by a busy machine reads (decodes, checks) a flood's messages
            # slower than ZeroMQ's I/O thread receives them: with the default high-water
            # mark of 1000 messages, 1 MB each piled up in the grader (414 MB measured at
            # load 8, 155 MB idle; tests/sandbox/test_budgets.py). Past this mark ZeroMQ
            # stops reading, and the kernel's side holds (and past its own mark, drops) them.
            client.context.setsockopt(zmq.RCVHWM, sandbox.max_queued_messages)
        return client


def sandbox_of(km: Any) -> SandboxProvisioner | None:
    """The sandbox provisioner of kernel manager ``km``, or None if it has none."""
    provisioner = getattr(km, "provisioner", None)
    return provisioner if isinstance(provisioner, SandboxProvisioner) else None


_spare: tuple[tuple[Any, ...], SandboxKernelManager] | None = None
_spare_finalizer: Finalize | None = None


def _take_spare(signature: tuple[Any, ...]) -> SandboxKernelManager | None:
    """The kernel started ahead of time, if it matches ``signature`` and still runs."""
    global _spare
    spare, _spare = _spare, None
    if spare is None:
        return None
    sig, km = spare
    if sig == signature and km.provisioner.process_alive():
        return km
    km.provisioner.kill_now()
    return None


def discard_spare() -> None:
    """Kill the kernel started ahead of time, if any (at exit, or when no notebook follows)."""
    global _spare
    spare, _spare = _spare, None
    if spare is not None:
        spare[1].provisioner.kill_now()


class SandboxedExecute(Execute):
    """nbgrader's ``Execute`` preprocessor with the kernel in the sandbox.

    Each notebook gets a fresh kernel in a fresh sandbox, killed (not asked to stop) when
    the notebook is done: nothing in a sandbox is worth a graceful shutdown.
    """

    prestart = Bool(False, help=(
        "Start the next notebook's sandboxed kernel while this one runs (for graders that "
        "know more notebooks follow; the last one started is wasted)."
    )).tag(config=True)
    shutdown_kernel = Enum(["graceful", "immediate"], default_value="immediate", help=(
        "How the kernel is stopped after the notebook: a sandbox is simply killed."
    )).tag(config=True)

    #: Set by a grader that knows whether the quiz lets answers import course_lib.
    allow_course_lib: bool | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("kernel_manager_class", SandboxKernelManager)
        super().__init__(*args, **kwargs)

    def preprocess(self, nb: Any, resources: Any, km: Any = None) -> Any:
        """Run the notebook, unless its submission holds symbolic links.

        Raises
        ------
        SubmissionLinkError
            If the student's submitted folder contains a symbolic link (nbgrader has then
            copied whatever it points to next to the notebook). The submission stays as it
            is in ``submitted/``; only its autograding fails.
        """
        ids = (resources or {}).get("nbgrader", {})
        self._submission_dir = None
        self._scale_time_limits(ids)
        if ids.get("student") and ids.get("assignment"):
            from nbgrader.coursedir import CourseDirectory

            coursedir = CourseDirectory(config=self.config)
            submitted = coursedir.format_path(coursedir.submitted_directory, ids["student"],
                                              ids["assignment"])
            links = symbolic_links(submitted) if os.path.isdir(submitted) else []
            if links:
                raise SubmissionLinkError(
                    f"Not graded: the submission {submitted} contains symbolic links "
                    f"({'; '.join(links)}); expected regular files only. nbgrader copies "
                    "what a link points to, which could hand the student's code files it "
                    "must not read. The submission is kept unchanged.")
            # The kernel's folder holds the student's own files, as submitted: never the
            # autograded folder, where nbgrader has already written the notebook with the
            # instructor's test cells (hidden tests included) put back.
            if os.path.isdir(submitted):
                self._submission_dir = os.path.abspath(submitted)
        return self._execute_notebook(nb, resources, km)

    #: The roster's factor on every time limit of this notebook's student's code.
    _time_limit_factor: float = 1.0

    #: The instructor's own ``timeout_func`` (nbclient's), if any, under the factor's.
    _instructors_timeout_func: Any = None

    def _scale_time_limits(self, ids: dict[str, Any]) -> None:
        """Give this notebook's student their accommodation (the roster's
        ``time_limit_factor``): every time limit on their code is multiplied by it, each
        cell's (:meth:`_cell_time_limit`) and the notebook's wall-time budget (both set in
        :meth:`create_kernel_manager`)."""
        from .roster import time_limit_factor

        self._time_limit_factor = time_limit_factor(ids.get("db_url"), ids.get("student"))
        if self._time_limit_factor != 1.0:
            self.log.info("Time limits of %s's code multiplied by %g (the roster's "
                          "time_limit_factor)", ids.get("student"), self._time_limit_factor)

    def _cell_time_limit(self, cell: Any) -> int | None:
        """nbclient's ``timeout_func`` for a student with a time-limit factor: the cell's
        limit (the instructor's ``timeout_func``, else ``timeout``, read at each cell, so a
        probe's own limit counts too) times the factor."""
        own = self._instructors_timeout_func
        limit = own(cell) if own is not None else self.timeout
        if not limit or limit < 0:
            return limit
        return int(-(-limit * self._time_limit_factor // 1))

    def _use_time_limit_factor(self) -> None:
        """Set nbclient's ``timeout_func`` (its documented way to choose a cell's limit) for
        this notebook's student: :meth:`_cell_time_limit` under a factor, else the
        instructor's own (nbclient keeps a value across notebooks unless the config sets
        one)."""
        if self.timeout_func != self._cell_time_limit:
            self._instructors_timeout_func = self.timeout_func
        self.timeout_func = (self._cell_time_limit if self._time_limit_factor != 1.0
                             else self._instructors_timeout_func)

    def _execute_notebook(self, nb: Any, resources: Any, km: Any) -> Any:
        """Run every cell (nbgrader's Execute); :class:`DecideOnHost` runs its own loop."""
        return super().preprocess(nb, resources, km)

    async def async_start_new_kernel(self, **kwargs: Any) -> None:
        """Start the kernel in (a copy of) the student's submitted folder."""
        if getattr(self, "_submission_dir", None):
            kwargs["cwd"] = self._submission_dir
        await super().async_start_new_kernel(**kwargs)

    start_new_kernel = run_sync(async_start_new_kernel)

    def _kernel_arguments(self) -> list[str]:
        """The kernel's extra arguments, as nbclient's ``async_start_new_kernel`` adds them."""
        args = list(self.extra_arguments)
        if self.ipython_hist_file and not any(
                a.startswith("--HistoryManager.hist_file") for a in args):
            args.append(f"--HistoryManager.hist_file={self.ipython_hist_file}")
        return args

    def _signature(self, sandbox: SandboxProvisioner) -> tuple[Any, ...]:
        return (*sandbox.launch_signature(), tuple(self._kernel_arguments()))

    def create_kernel_manager(self) -> Any:
        """A new kernel manager, or the kernel started ahead of time for this notebook.

        Raises
        ------
        SandboxUnavailableError
            If the configured ``kernel_manager_class`` gives its kernels no
            :class:`SandboxProvisioner`.
        """
        self._use_time_limit_factor()  # after nbclient has set itself up for this notebook
        km = super().create_kernel_manager()
        sandbox = sandbox_of(km)
        if sandbox is None:
            raise SandboxUnavailableError(
                f"c.{type(self).__name__}.kernel_manager_class is {type(km).__name__}, whose "
                "kernels are not started by the grading sandbox (expected "
                "SandboxKernelManager, or a kernel manager whose provisioner is a "
                "SandboxProvisioner)")
        if self.allow_course_lib is not None:
            sandbox.allow_course_lib = self.allow_course_lib
        if self._time_limit_factor != 1.0:  # a kernel started ahead then won't match
            sandbox.wall_time_limit *= self._time_limit_factor
        if self.prestart:
            spare = _take_spare(self._signature(sandbox))
            if spare is not None:
                spare.provisioner.adopt(getattr(self, "_submission_dir", None)
                                        or self.resources.get("metadata", {}).get("path")
                                        or None)
                self.km = spare
                return spare
        return km

    async def async_start_new_kernel_client(self) -> Any:
        """Connect to this notebook's kernel, then start the next notebook's one."""
        kc = await super().async_start_new_kernel_client()
        km = self.km
        sandbox = sandbox_of(km)
        if self.prestart and sandbox is not None and sandbox.sandboxed:
            await self._start_spare(km)
        return kc

    # nbclient binds the synchronous wrapper to its own coroutine: rebind it to this one.
    start_new_kernel_client = run_sync(async_start_new_kernel_client)

    async def _start_spare(self, current: Any) -> None:
        global _spare, _spare_finalizer
        discard_spare()
        spare = type(current)(kernel_name=current.kernel_name, config=self.config,
                              parent=current.parent, log=current.log)
        spare.provisioner.allow_course_lib = current.provisioner.allow_course_lib
        try:
            await spare.start_kernel(extra_arguments=self._kernel_arguments())
        except Exception as exc:  # the next notebook then starts its kernel as usual
            self.log.warning("Could not start the next sandboxed kernel ahead: %s", exc)
            spare.provisioner.kill_now()
            return
        _spare = (self._signature(spare.provisioner), spare)
        if _spare_finalizer is None:  # at exit, also of a multiprocessing worker
            _spare_finalizer = Finalize(None, discard_spare, exitpriority=20)


def enable(c: Any, **limits: Any) -> None:
    """Make ``nbgrader autograde`` (and the formgrader) run student code sandboxed.

    Parameters
    ----------
    c : traitlets.config.Config
        The ``c`` of an ``nbgrader_config.py``.
    **limits
        Traits of :class:`SandboxProvisioner` to set, e.g. ``memory_limit=1 << 30``.

    Raises
    ------
    TypeError
        If a name in ``limits`` is not a configurable trait of the sandbox.
    SandboxConfigError
        If ``c`` sets a sandbox setting under its old name, ``c.SandboxKernelManager``
        (see :func:`refuse_moved_settings`).
    """
    from nbgrader.converters.autograde import Autograde

    from .submission_shape import refuse_large_submissions

    refuse_moved_settings(c)

    default = Autograde.class_traits()["autograde_preprocessors"].default()
    current = c.Autograde.get("autograde_preprocessors") or default
    c.Autograde.autograde_preprocessors = [
        SandboxedExecute if pp in (Execute, "nbgrader.preprocessors.Execute") else pp
        for pp in current
    ]
    # a submission folder with more entries than c.SubmissionShape.max_entries is refused
    # before nbgrader lists it (a listing quadratic in its folders)
    refuse_large_submissions()
    known = set(SandboxProvisioner.class_trait_names(config=True))
    for name, value in limits.items():
        if name not in known:
            raise TypeError(f"enable() got {name!r}; expected one of {sorted(known)}")
        setattr(c.SandboxProvisioner, name, value)


def main() -> int:
    """Report whether student code can be sandboxed here; exit 1 when it cannot."""
    problem = sandbox_problem()
    if problem:
        print(problem, file=sys.stderr)
        return 1
    print(f"bubblewrap works here: {shutil.which('bwrap')}; autograding will be sandboxed.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
