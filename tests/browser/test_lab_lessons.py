"""Every lesson notebook, in JupyterLab in Chromium: runs clean, and its widgets respond.

Per notebook (on a throw-away copy): open it, Run > Run All Cells, wait for the kernel to go
idle (status bar, then every prompt numbered, then idle again), assert there is no error or
stderr output and no widget that failed to render, then move one control of each kind
(slider, dropdown, toggle, checkbox, radio) in every cell that shows controls and assert
that what the page shows (text, image, description, another control's value) changed.
Notebooks whose code makes no widget (read from the source, not the page) only run. A
screenshot per notebook goes to test-artifacts/browser/<notebook>.png.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import nbformat
import pytest
from labdriver import (
    REPO,
    LabServer,
    check_widgets_respond,
    lesson_notebooks,
    open_notebook,
    page_problems,
    run_all_cells,
    save_screenshot,
)

pytestmark = [pytest.mark.browser, pytest.mark.timeout(420)]


WIDGET_CODE = re.compile(r"\bwidgets\.|\bipywidgets\b|\binteract(ive)?\b")


def shows_widgets(notebook: Path) -> bool:
    """Whether the notebook's code makes widgets (course_lib.widgets, ipywidgets, interact).

    Read from the source, not the page: a widget manager that failed to load shows no
    control at all, and that must fail the test, not skip the widget check.
    """
    nb = nbformat.read(notebook, as_version=4)
    return any(WIDGET_CODE.search(c.source) for c in nb.cells if c.cell_type == "code")


@pytest.mark.parametrize("notebook", lesson_notebooks(), ids=lambda p: p.stem)
def test_lesson_runs_and_widgets_respond(notebook: Path, lab_page: Any,
                                         fresh_kernels: LabServer, artifacts: Path) -> None:
    relpath = notebook.relative_to(REPO).as_posix()
    open_notebook(lab_page, fresh_kernels, relpath, f"lesson-{notebook.stem}")
    try:
        run_all_cells(lab_page)
        problems = page_problems(lab_page)
        assert problems == [], f"{relpath} shows errors after Run All:\n" + "\n".join(problems)
        if not shows_widgets(notebook):
            # No widget in its code (the contents page):
            # nothing to move, and the page must not show a control either.
            assert lab_page.locator(".jp-NotebookPanel .jupyter-widgets").count() == 0
            return
        moves = check_widgets_respond(lab_page)
        print(f"{relpath}:", *moves, sep="\n  ")
    finally:
        save_screenshot(lab_page, artifacts, notebook.stem)


def test_the_course_has_lessons_with_widgets() -> None:
    """The parametrized test above must not pass by finding no notebook, or no widget."""
    notebooks = lesson_notebooks()
    assert notebooks, f"no lesson notebooks (notebooks/NN_*.ipynb) under {REPO}"
    assert any(shows_widgets(nb) for nb in notebooks), "no lesson notebook makes a widget"


SABOTAGE = """# Sabotage (tests/browser): the explorers stop redrawing when a control moves.
from course_lib import widgets as _sabotaged

_sabotaged.Explorer.refresh = lambda self: None"""


def test_a_broken_lesson_callback_fails(lab_page: Any, fresh_kernels: LabServer,
                                        artifacts: Path) -> None:
    """The lesson check must fail when the explorers' callback is broken.

    A copy of the first lesson with widgets gets one extra cell after its setup cell that
    replaces ``course_lib.widgets.Explorer.refresh`` (what every control's observer calls)
    with a no-op: the notebook still runs clean, the controls still move, nothing redraws.
    """
    notebook = next(nb for nb in lesson_notebooks() if shows_widgets(nb))
    nb = nbformat.read(notebook, as_version=4)
    setup = next(i for i, c in enumerate(nb.cells)
                 if "setup" in c.get("metadata", {}).get("tags", []))
    nb.cells.insert(setup + 1, nbformat.v4.new_code_cell(SABOTAGE))
    relpath = f"sabotaged/{notebook.name}"
    target = fresh_kernels.root_dir / relpath
    target.parent.mkdir(exist_ok=True)
    nbformat.write(nb, target)
    open_notebook(lab_page, fresh_kernels, relpath, "sabotaged")
    run_all_cells(lab_page)
    assert page_problems(lab_page) == []
    with pytest.raises(AssertionError, match=r"moving the \w+ in cell \d+ .* changed no output"):
        check_widgets_respond(lab_page, timeout_s=5)
    save_screenshot(lab_page, artifacts, f"sabotaged_{notebook.stem}")
