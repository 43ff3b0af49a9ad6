"""Fast checks of course_grading.sandbox and .parallel (no bubblewrap needed)."""

from __future__ import annotations

import struct

import pytest
from nbgrader.preprocessors import Execute
from traitlets.config import Config

from course_grading.parallel import GradeResult, Summary, _reason
from course_grading.sandbox import (
    INSTALL_HINT,
    SandboxConfigError,
    SandboxedExecute,
    SandboxKernelManager,
    SandboxProvisioner,
    SandboxUnavailableError,
    _no_fork_filter,
    enable,
    sandbox_problem,
)


def test_enable_swaps_only_the_execute_preprocessor_and_sets_limits() -> None:
    c = Config()
    enable(c, memory_limit=1 << 30)
    pps = c.Autograde.autograde_preprocessors
    assert SandboxedExecute in pps and Execute not in pps
    assert len(pps) == 7
    assert c.SandboxProvisioner.memory_limit == 1 << 30
    enable(c)  # twice is the same as once
    assert c.Autograde.autograde_preprocessors == pps


def test_enable_names_the_expected_limits_on_a_typo() -> None:
    with pytest.raises(TypeError, match="memory_limit"):
        enable(Config(), memory_limt=1)


def test_sandboxed_execute_uses_the_sandbox_kernel_manager() -> None:
    assert SandboxedExecute().kernel_manager_class is SandboxKernelManager


def test_each_kernel_manager_has_its_own_sandbox_provisioner_configured_by_c() -> None:
    c = Config()
    enable(c, wall_time_limit=30)
    first, second = (SandboxKernelManager(kernel_name="python3", config=c) for _ in "ab")
    assert isinstance(first.provisioner, SandboxProvisioner)
    assert first.provisioner is not second.provisioner
    assert first.provisioner.wall_time_limit == 30 and first.provisioner.parent is first


def test_a_limit_set_under_the_old_name_is_refused_not_ignored() -> None:
    c = Config()
    c.SandboxKernelManager.memory_limit = 1 << 30
    c.SandboxKernelManager.shutdown_wait_time = 1.0  # the manager's own: allowed
    expected = (r"c\.SandboxKernelManager\.memory_limit: .* write "
                r"c\.SandboxProvisioner\.memory_limit")
    with pytest.raises(SandboxConfigError, match=expected):
        SandboxKernelManager(kernel_name="python3", config=c)
    with pytest.raises(SandboxConfigError, match=expected):
        enable(c)


def test_no_client_for_a_kernel_the_sandbox_did_not_start() -> None:
    from jupyter_client.provisioning import LocalProvisioner

    km = SandboxKernelManager(kernel_name="python3")
    km.provisioner = LocalProvisioner(parent=km)  # as if jupyter_client had replaced it
    with pytest.raises(SandboxUnavailableError, match="started by LocalProvisioner, not by "
                       "the grading sandbox's SandboxProvisioner"):
        km.client()


def test_a_kernel_manager_class_without_the_sandbox_is_refused() -> None:
    import nbformat
    from jupyter_client.manager import AsyncKernelManager

    pp = SandboxedExecute(kernel_manager_class=AsyncKernelManager)
    pp.nb, pp.resources = nbformat.v4.new_notebook(), {}
    with pytest.raises(SandboxUnavailableError, match="kernel_manager_class is "
                       "AsyncKernelManager, whose kernels are not started by the grading "
                       "sandbox"):
        pp.create_kernel_manager()


def test_missing_bwrap_is_explained_with_the_install_command() -> None:
    problem = sandbox_problem("/nonexistent/bwrap")
    assert problem is not None and "not found at /nonexistent/bwrap" in problem
    assert INSTALL_HINT in problem and "apt-get install bubblewrap" in problem


def test_no_fork_filter_is_a_bpf_program_ending_in_returns() -> None:
    prog = _no_fork_filter()
    if prog is None:
        pytest.skip("no seccomp filter for this CPU architecture")
    assert len(prog) % 8 == 0
    ins = [struct.unpack("<HBBI", prog[i:i + 8]) for i in range(0, len(prog), 8)]
    assert ins[0] == (0x20, 0, 0, 4)  # loads the architecture first
    assert ins[-1] == (0x06, 0, 0, 0x00050001)  # ... and ends refusing with EPERM
    for n, (code, jt, jf, _k) in enumerate(ins):  # every jump lands inside the program
        if code & 0x07 == 0x05:
            assert n + 1 + max(jt, jf) < len(ins)


def test_failure_reasons_are_named_in_words() -> None:
    assert _reason("... nbclient.exceptions.DeadKernelError: Kernel died", None) == (
        "the kernel died (killed, or it crashed) while running the notebook")
    assert _reason("[ERROR] Something odd: ValueError: x", None) == (
        "[ERROR] Something odd: ValueError: x")
    assert _reason("", None) == "nbgrader reported a failure"
    assert _reason("DeadKernelError\nSandboxSurvivorError: processes [12] of the", None) \
        .startswith("processes of its sandbox still ran after it was killed")


def test_summary_lists_every_failure_with_its_reason() -> None:
    s = Summary("ps1", 2, 10.0, [GradeResult("a", True, 1.0), GradeResult("b", False, 1.0,
                                                                              "why")])
    text = s.render()
    assert text.startswith("ps1: 1 of 2 submissions graded, 1 failed, in 10.0 s")
    assert "FAILED b: why" in text and "FAILED a" not in text


def test_a_run_that_skipped_everyone_does_not_say_it_graded_them(monkeypatch, capsys) -> None:
    """After a rerun that graded nobody (all autograded before), no "graded alice" line."""
    from course_grading import parallel

    done = [GradeResult(s, True, 0.1, score=10.0, max_score=13.0, skipped=True)
            for s in ("alice", "bob")]
    monkeypatch.setattr(parallel, "grade_all", lambda *a, **k: Summary("checkpoint", 2, 1.0,
                                                                        done))
    assert parallel.main(["checkpoint", "--no-progress"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "  2 of them were autograded before and skipped (--force grades them again)." in lines
    assert [ln for ln in lines if "alice" in ln or "bob" in ln] == [
        "  skipped alice (autograded before): 10.0 / 13.0 in the gradebook",
        "  skipped bob (autograded before): 10.0 / 13.0 in the gradebook"]


def test_the_report_reads_the_notebook_budget_where_enable_sets_it() -> None:
    """quiz/nbgrader_config.py: enable(c, wall_time_limit=30), c.Execute.timeout = 10."""
    from pathlib import Path

    from course_grading.report import time_limits

    assert time_limits(Path(__file__).resolve().parents[1] / "quiz") == (10.0, 30.0)
