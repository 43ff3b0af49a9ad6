"""The end of a sandbox, with and without a control group: nothing is left, or it says so.

Each test starts one sandboxed kernel directly (no nbgrader), so that it can look at the
sandbox's processes from the host while the kernel runs and after it is gone. With
``use_cgroups=False`` the sandbox runs on the walls that need nothing from the host (the
fallback); with ``use_cgroups=True`` it also gets a control group, where this host lets the
grader make one (else that case is skipped).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from traitlets.config import Config

from course_grading.sandbox import SandboxKernelManager, SandboxSurvivorError

THREADS = '''
import threading, time
def _busy():
    while True:
        time.sleep(0.001)
_made = 0
try:
    for _ in range({n}):
        threading.Thread(target=_busy, daemon=True).start()
        _made += 1
except RuntimeError as _e:
    print("refused:", _e)
print("THREADS", _made)
'''


def _run(coro: Any) -> Any:
    return asyncio.run(coro)


async def _start(**traits: Any) -> tuple[SandboxKernelManager, Any]:
    config = Config({"SandboxProvisioner": {"max_processes": 48, **traits}})
    km = SandboxKernelManager(kernel_name="python3", config=config)
    given = km.provisioner
    await km.start_kernel()
    assert km.provisioner is given and given.sandboxed  # jupyter_client kept the sandbox's
    kc = km.client()
    kc.start_channels()
    await kc.wait_for_ready(timeout=60)
    return km, kc


async def _execute(kc: Any, code: str) -> str:
    out: list[str] = []

    def hook(msg: dict[str, Any]) -> None:
        if msg["msg_type"] == "stream":
            out.append(msg["content"]["text"])

    await kc.execute_interactive(code, timeout=60, output_hook=hook)
    return "".join(out)


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except OSError:
        return False


def test_ending_a_sandbox_leaves_no_process(cgroups):
    async def scenario() -> tuple[list[int], str, SandboxKernelManager]:
        km, kc = await _start(use_cgroups=cgroups)
        printed = await _execute(kc, THREADS.format(n=20))
        pids = km.provisioner.sandbox_processes()
        kc.stop_channels()
        await km.shutdown_kernel(now=True)
        return pids, printed, km

    pids, printed, km = _run(scenario())
    assert "THREADS 20" in printed
    assert len(pids) == 2  # bubblewrap and the kernel, the sandbox's pid 1 and only process
    assert (km.provisioner.cgroup is None) and not any(_running(p) for p in pids)


def test_the_control_group_limits_threads(cgroups):
    if not cgroups:
        pytest.skip("threads are limited only by a control group's pids.max (and memory)")

    async def scenario() -> tuple[str, dict[str, str]]:
        km, kc = await _start(use_cgroups=True)
        group = km.provisioner.cgroup
        limits = dict(group.limits) if group else {}
        printed = await _execute(kc, THREADS.format(n=500))
        kc.stop_channels()
        await km.shutdown_kernel(now=True)
        return printed, limits

    printed, limits = _run(scenario())
    if "pids" not in limits:
        pytest.skip("this host's control group has no pids controller")
    made = int(printed.split("THREADS ")[1].split()[0])
    assert "refused: can't start new thread" in printed
    assert made < 48, printed


def test_a_process_that_survives_the_kill_fails_loudly(bwrap_ok, monkeypatch):
    async def scenario() -> tuple[SandboxKernelManager, Any]:
        return await _start(use_cgroups=False)

    km, kc = _run(scenario())
    try:
        sandbox = km.provisioner
        left = sandbox.sandbox_processes()
        with monkeypatch.context() as m:  # a kill that does not work
            m.setattr(sandbox, "_kill_sandbox", lambda everything=False: None)
            with pytest.raises(SandboxSurvivorError, match=r"processes \[.*\] of the grading "
                               r"sandbox still run after it was killed"):
                sandbox.end_sandbox(timeout=0.5)
        assert all(_running(p) for p in left)
    finally:
        kc.stop_channels()
        km.provisioner.end_sandbox()
    assert not any(_running(p) for p in left)
