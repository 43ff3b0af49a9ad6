"""First program inside the grading sandbox: the scratch /tmp, then no privilege, then the kernel.

:mod:`course_grading.sandbox` starts this file's code (``python -I -S -c <this source>``) as
the sandbox's first process, its pid 1 (bubblewrap's ``--as-pid-1``: no init of bubblewrap's
runs beside it), with CAP_SYS_ADMIN and CAP_SETPCAP in the sandbox's own user namespace, and
nothing else. What it executes (``prlimit``, then the kernel) stays pid 1 and the
sandbox's only process: the filter lets no process be created. It

1. remounts bubblewrap's tmpfs on ``/tmp`` with a size *and an inode* limit (bubblewrap
   sets no inode limit: empty files would fill the host's kernel memory); a remount, not a
   new tmpfs, so that what bubblewrap placed there stays (the kernel's connection file, and
   the Python or course folders bound below ``/tmp`` when they live there);
2. remounts bubblewrap's ``/dev`` (its own tmpfs, which ``--remount-ro /`` does not reach:
   half the host's memory and no inode limit) read-only: ``/dev/shm`` and ``/dev`` itself
   take no file, while the device files bound into it (``null``, ``zero``, ``urandom``, ...)
   and ``/dev/pts`` work as before; ``/tmp`` is the sandbox's one writable folder;
3. gives up every capability for good (securebits that make uid 0 nothing special, an
   empty bounding set, no ambient capability, nothing permitted);
4. installs the seccomp filter (no new process, no mount, no namespace) with
   ``no_new_privs``;
5. executes the rest of its command line (``prlimit ... -- python -m ipykernel ...``).

It uses the standard library only (it runs with ``-S``: no site-packages). Any failure
ends the sandbox with exit status 70 and one line on stderr naming the step.

Arguments: ``SIZE INODES CONNECTION_FILE IPC_DIR FILTER_HEX -- COMMAND...``
"""

import ctypes
import os
import sys

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT = 1, 2, 4, 32
PR_CAPBSET_DROP, PR_SET_SECCOMP, PR_SET_SECUREBITS = 24, 22, 28
PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 38, 47, 4
SECCOMP_MODE_FILTER = 2
# NOROOT, NOROOT_LOCKED, NO_SETUID_FIXUP, NO_SETUID_FIXUP_LOCKED, KEEP_CAPS_LOCKED
SECUREBITS = 0x01 | 0x02 | 0x04 | 0x08 | 0x20
CAPABILITY_VERSION_3 = 0x20080522


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _fail(libc, step):
    err = ctypes.get_errno()
    sys.stderr.write(f"sandbox launcher: {step} failed: {os.strerror(err)}\n")
    sys.stderr.flush()
    os._exit(70)


def main(argv):
    """Do the five steps, then exec the command (see the module docstring)."""
    size, inodes, connection_file, ipc_dir, filter_hex, sep, *command = argv
    if sep != "--" or not command:
        sys.stderr.write("sandbox launcher: usage: SIZE INODES CONN IPC FILTER -- CMD...\n")
        os._exit(70)
    libc = ctypes.CDLL(None, use_errno=True)
    if connection_file != "-" and not os.path.isfile(connection_file):
        sys.stderr.write(f"sandbox launcher: no connection file at {connection_file}\n")
        os._exit(70)
    options = f"size={int(size)},nr_inodes={int(inodes)},mode=1777".encode()
    flags = MS_REMOUNT | MS_NOSUID | MS_NODEV
    if libc.mount(b"tmpfs", b"/tmp", b"tmpfs", flags, options) != 0:
        _fail(libc, "limiting the scratch /tmp")
    if libc.mount(b"tmpfs", b"/dev", b"tmpfs", MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV,
                  None) != 0:
        _fail(libc, "making /dev read-only")
    os.makedirs("/tmp/home", mode=0o700, exist_ok=True)
    os.makedirs(ipc_dir, mode=0o700, exist_ok=True)
    if libc.prctl(PR_SET_SECUREBITS, SECUREBITS, 0, 0, 0) != 0:
        _fail(libc, "setting securebits")
    for cap in range(64):
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)  # EINVAL past the last capability
    if libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0:
        _fail(libc, "clearing ambient capabilities")
    header = _CapHeader(CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    if libc.capset(ctypes.byref(header), data) != 0:
        _fail(libc, "dropping capabilities")
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        _fail(libc, "no_new_privs")
    if filter_hex != "-":
        program = bytes.fromhex(filter_hex)
        buffer = ctypes.create_string_buffer(program, len(program))
        fprog = _SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
        if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
            _fail(libc, "installing the seccomp filter")
    os.execv(command[0], command)


if __name__ == "__main__":
    main(sys.argv[1:])
