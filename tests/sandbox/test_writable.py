"""Every place a sandboxed kernel can write is bounded, with and without a control group.

Issue 42, item 3. bubblewrap's ``--dev /dev`` is a tmpfs of its own, which ``--remount-ro /``
does not reach: half the host's memory and no inode limit, ``/dev/shm`` included (one 10 s
cell put 4.8 GB there). Memory made by ``memfd_create`` or System V shared memory is bounded
by no mount and no rlimit either. Without a control group nothing counted any of it; with
one, the kernel was killed at the group's memory limit and the student was told that it sent
"an output message larger than the grader accepts".

Each test starts a sandboxed kernel directly (as ``test_sandbox_end.py`` does), without and
with a control group (the latter skipped where the host lets the grader make none), and
tries every such place: ``/dev`` and ``/dev/shm`` refuse a file, 300 MB spread over three
files in ``/dev/shm`` (each under the scratch's file-size limit, which stopped one 300 MB
file before) and in memfds are refused, System V segments, semaphores and queues cannot be
made; ``/tmp``, ``/dev/null`` and ``/dev/urandom`` work as before. Then a kernel killed for
memory by its control group is reported as such, by ``nbgrader autograde``'s grader.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import nbformat
import pytest
from traitlets.config import Config

from course_grading.sandbox import SandboxKernelManager
from course_grading.sandbox_cgroup import SandboxCgroup

TRY = r'''
import ctypes as _ct
import errno as _errno
import os as _os

def _try(label, attempt):
    try:
        print(label, "ok", attempt())
    except OSError as e:
        print(label, "refused", _errno.errorcode.get(e.errno, e.errno))

def _dev_shm():
    written = 0
    for i in range(300):
        with open(f"/dev/shm/part{i // 100}", "ab") as f:
            written += f.write(b"x" * (1 << 20))
    return written

def _many(folder):
    def make():
        for i in range(200_000):
            open(f"{folder}/f{i}", "w").close()
        return i + 1
    return make

def _memfd():
    written = 0
    for i in range(3):
        fd = _os.memfd_create(f"part{i}")
        for _ in range(100):
            written += _os.write(fd, b"x" * (1 << 20))
    return written

_try("DEV_SHM_300MB", _dev_shm)
_try("DEV_FILES", _many("/dev"))
_try("DEV_SHM_FILES", _many("/dev/shm"))
_try("MEMFD_300MB", _memfd)
_try("TMP", lambda: open("/tmp/note", "w").write("fine"))
_try("DEV_NULL", lambda: open("/dev/null", "w").write("fine"))
_try("URANDOM", lambda: len(open("/dev/urandom", "rb").read(8)))
_libc = _ct.CDLL(None, use_errno=True)
for _name, _call in (("SHMGET", lambda: _libc.shmget(0, 300 << 20, 0o1600)),
                     ("SEMGET", lambda: _libc.semget(0, 1000, 0o1600)),
                     ("MSGGET", lambda: _libc.msgget(0, 0o1600))):
    _ct.set_errno(0)
    _r = _call()
    print(_name, "ok" if _r >= 0 else "refused", _errno.errorcode.get(_ct.get_errno(), 0))
'''


def _run(coro: Any) -> Any:
    return asyncio.run(coro)


async def _tried(use_cgroups: bool) -> tuple[dict[str, str], dict[str, str]]:
    config = Config({"SandboxProvisioner": {"use_cgroups": use_cgroups}})
    km = SandboxKernelManager(kernel_name="python3", config=config)
    await km.start_kernel()
    kc = km.client()
    kc.start_channels()
    try:
        await kc.wait_for_ready(timeout=60)
        group = km.provisioner.cgroup
        limits = dict(group.limits) if group else {}
        out: list[str] = []
        await kc.execute_interactive(TRY, timeout=300, output_hook=lambda m: out.append(
            m["content"].get("text", "") if m["msg_type"] == "stream" else ""))
    finally:
        kc.stop_channels()
        await km.shutdown_kernel(now=True)
    said = {}
    for line in "".join(out).splitlines():
        label, _, rest = line.partition(" ")
        said[label] = rest
    return said, limits


def test_only_the_scratch_tmp_takes_writes(cgroups):
    said, limits = _run(_tried(cgroups))
    assert said["DEV_SHM_300MB"] == "refused EROFS", said
    assert said["DEV_FILES"] == "refused EROFS", said
    assert said["DEV_SHM_FILES"] == "refused EROFS", said
    assert said["MEMFD_300MB"] == "refused EPERM", said
    for name in ("SHMGET", "SEMGET", "MSGGET"):
        assert said[name] == "refused EPERM", said
    assert said["TMP"] == "ok 4" and said["DEV_NULL"] == "ok 4" and said["URANDOM"] == "ok 8"
    assert bool(limits) is cgroups


# -- a kernel killed for memory by its control group --------------------------------------

#: The control group's memory in the test below: far under the address-space limit (2 GiB),
#: so that the group, not the rlimit, stops the answer cell's 600 MB.
GROUP_MEMORY = 320 << 20
HOG = "_hog = np.ones(600 << 17)  # 600 MB of float64, every page touched\n"


@pytest.fixture(scope="module")
def memory_killed(bwrap_ok: None, tmp_path_factory: pytest.TempPathFactory
                  ) -> tuple[Path, Any]:
    probe = SandboxCgroup.create(pids=8, memory=1 << 30)
    if probe is None or "memory" not in probe.limits:
        if probe is not None:
            probe.remove()
        pytest.skip("this host gives the grader no memory control group")
    probe.remove()
    from hostile_quiz import place, right_answers

    from course_grading import sandbox
    from course_grading.pipeline import copy_course, open_api

    course = copy_course(Path(__file__).resolve().parents[2] / "quiz",
                         tmp_path_factory.mktemp("oom") / "course")
    assert open_api(course).generate_assignment("checkpoint")["success"]
    right = right_answers(course)
    place(course, "hog", {**right, "weights_without_self":
                          HOG + right["weights_without_self"]})
    real = sandbox.SandboxCgroup.create
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sandbox.SandboxCgroup, "create", staticmethod(
            lambda *, pids, memory: real(pids=pids, memory=GROUP_MEMORY)))
        result = open_api(course).autograde("checkpoint", "hog")
    assert result["success"], result.get("log")
    nb = nbformat.read(course / "autograded" / "hog" / "checkpoint" / "checkpoint.ipynb", 4)
    return course, nb


def test_a_kernel_killed_for_memory_is_said_to_have_used_too_much_memory(memory_killed):
    _, nb = memory_killed
    said = nb.metadata["course"]["stopped"]
    assert said == f"it used more than {GROUP_MEMORY >> 20} MB of memory"
    verdicts = [c.metadata["course"]["verdict"] for c in nb.cells
                if "verdict" in c.metadata.get("course", {})]
    assert verdicts and all(not v["passed"] for v in verdicts)
    assert all("output message" not in v["message"] for v in verdicts)
