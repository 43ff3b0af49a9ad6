"""The browser machinery on a notebook the test writes itself, and proof that it can fail."""

from __future__ import annotations

from typing import Any

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
