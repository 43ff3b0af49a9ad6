"""Every lesson notebook, in JupyterLab in Chromium: runs clean, and its widgets respond.

Per notebook (on a throw-away copy): open it, Run > Run All Cells, wait for the kernel to go
idle (status bar, then every prompt numbered, then idle again), assert there is no error or
stderr output and no widget that failed to render, then move one control in every cell that
shows controls and assert that what the page shows (text, image, description) changed. A
screenshot per notebook goes to test-artifacts/browser/<notebook>.png.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, lesson_notebooks, save_screenshot
from labdriver import (
    LabServer,
    check_widgets_respond,
    open_notebook,
    page_problems,
    run_all_cells,
)

pytestmark = [pytest.mark.browser, pytest.mark.timeout(420)]


@pytest.mark.parametrize("notebook", lesson_notebooks(), ids=lambda p: p.stem)
def test_lesson_runs_and_widgets_respond(notebook: Path, lab_page: Any,
                                         fresh_kernels: LabServer, artifacts: Path) -> None:
    relpath = notebook.relative_to(REPO).as_posix()
    open_notebook(lab_page, fresh_kernels, relpath, f"lesson-{notebook.stem}")
    try:
        run_all_cells(lab_page)
        problems = page_problems(lab_page)
        assert problems == [], f"{relpath} shows errors after Run All:\n" + "\n".join(problems)
        moves = check_widgets_respond(lab_page)
        print(f"{relpath}:", *moves, sep="\n  ")
    finally:
        save_screenshot(lab_page, artifacts, notebook.stem)


def test_the_course_has_lessons() -> None:
    """The parametrized test above must not pass by finding no notebook at all."""
    assert lesson_notebooks(), f"no lesson notebooks (notebooks/NN_*.ipynb) under {REPO}"
