"""The browser machinery on a notebook the test writes itself, and proof that it can fail."""

from __future__ import annotations

from typing import Any

import nbformat
import pytest
from labdriver import (
    LabServer,
    check_widgets_respond,
    open_notebook,
    page_problems,
    run_all_cells,
    save_screenshot,
)

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


def test_widgets_respond_in_lab(lab_page: Any, fresh_kernels: LabServer, artifacts: Any) -> None:
    open_notebook(lab_page, fresh_kernels, "selftest/widgets_ok.ipynb", "selftest-ok")
    run_all_cells(lab_page)
    assert page_problems(lab_page) == []
    moves = check_widgets_respond(lab_page)
    save_screenshot(lab_page, artifacts, "selftest_widgets_ok")
    assert [m.split(":")[1].split()[0] for m in moves] == ["slider", "dropdown"], moves


def test_broken_callback_fails_the_check(lab_page: Any, fresh_kernels: LabServer,
                                         artifacts: Any) -> None:
    """The same notebook with the slider's observer on a misspelt trait: the check must fail."""
    open_notebook(lab_page, fresh_kernels, "selftest/widgets_broken.ipynb", "selftest-broken")
    run_all_cells(lab_page)
    with pytest.raises(AssertionError, match=r"moving the slider in cell \d+ .* changed no output"):
        check_widgets_respond(lab_page, timeout_s=5)
    save_screenshot(lab_page, artifacts, "selftest_widgets_broken")


def test_a_kernel_that_never_idles_is_reported_with_what_the_page_shows(
        lab_page: Any, fresh_kernels: LabServer) -> None:
    """A notebook asking for a kernel the server lacks never gets an idle one: the failure
    names the page's status bar and dialog and the server's kernels, not just a timeout."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 + 1")])
    nb.metadata["kernelspec"] = {"name": "no-such-kernel", "display_name": "No such kernel",
                                 "language": "python"}
    nbformat.write(nb, fresh_kernels.root_dir / "selftest" / "no_kernel.ipynb")
    with pytest.raises(AssertionError) as failure:
        open_notebook(lab_page, fresh_kernels, "selftest/no_kernel.ipynb", "selftest-none",
                      timeout_ms=15_000)
    message = str(failure.value)
    assert "selftest/no_kernel.ipynb: no notebook with an idle kernel within 15 s" in message
    assert "Select Kernel" in message and "server's kernels: []" in message, message
    assert "JupyterLab log" in message, message
