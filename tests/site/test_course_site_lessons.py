"""course_site.lessons: what a notebook needs, and the note on lessons the browser cannot run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from course_site.lessons import (
    NOTE_TAG,
    RESET_TAG,
    LessonNeeds,
    add_reset_note,
    browser_note,
    copy_lessons,
    imports_in,
    lesson_needs,
)


def _notebook(*sources: str, minor: int = 5) -> dict[str, Any]:
    cells = [{"cell_type": "code", "id": f"c{i}", "metadata": {}, "outputs": [],
              "execution_count": None, "source": s} for i, s in enumerate(sources)]
    cells.insert(0, {"cell_type": "markdown", "id": "m", "metadata": {}, "source": "# T"})
    return {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": minor}


def test_imports_and_shell_lines_are_found() -> None:
    needs = lesson_needs(_notebook(
        "import numpy as np\nfrom course_lib.explore import widgets",
        "%matplotlib inline\nimport os.path\n!ls -l",
        "%pip install torch",
        "def f(:\n    import never_seen",  # does not parse: a blank the student fills in
        ["from matplotlib", ".figure import Figure"],  # source as a list of lines
    ))
    assert needs.imports == {"numpy", "course_lib", "os", "matplotlib"}
    assert needs.shell_lines == ("!ls -l", "%pip install torch")


def test_relative_imports_are_not_modules_to_find() -> None:
    assert imports_in("from . import x\nfrom .y import z\nimport a.b") == {"a"}


def _problems(needs: LessonNeeds) -> list[str]:
    return [f"`import {m}`: no" for m in sorted(needs.imports) if m == "subprocess"]


def test_copies_carry_a_note_only_where_the_browser_cannot_run_them(tmp_path: Path) -> None:
    src = tmp_path / "notebooks"
    (src / "sub").mkdir(parents=True)
    (src / ".ipynb_checkpoints").mkdir()
    good, bad = _notebook("import numpy"), _notebook("import subprocess", minor=4)
    for cell in bad["cells"]:
        cell.pop("id")
    (src / "01_good.ipynb").write_text(json.dumps(good))
    (src / "sub" / "02_bad.ipynb").write_text(json.dumps(bad))
    (src / "data.csv").write_text("a,b\n")
    (src / ".ipynb_checkpoints" / "01_good-checkpoint.ipynb").write_text("{}")
    copied = copy_lessons(src, tmp_path / "files", _problems)
    assert [(c.path, c.problems) for c in copied] == [
        ("01_good.ipynb", []), ("sub/02_bad.ipynb", ["`import subprocess`: no"])]
    files = tmp_path / "files"
    assert json.loads((files / "01_good.ipynb").read_text()) == good
    assert (files / "data.csv").is_file(), "the lessons' other files come along"
    assert not (files / ".ipynb_checkpoints").exists()
    served = json.loads((files / "sub" / "02_bad.ipynb").read_text())
    note = served["cells"][0]
    assert note["metadata"]["tags"] == [NOTE_TAG] and "id" not in note  # nbformat 4.4
    assert "cannot run completely in the browser" in note["source"]
    assert "`import subprocess`: no" in note["source"]
    assert served["cells"][1:] == bad["cells"]


def test_the_note_has_a_cell_id_in_nbformat_45() -> None:
    assert browser_note(["x"])["id"] == "site-browser-note"
    assert "id" not in browser_note(["x"], with_id=False)


def test_a_corrupt_notebook_is_refused_by_name(tmp_path: Path) -> None:
    (tmp_path / "nb").mkdir()
    (tmp_path / "nb" / "broken.ipynb").write_text("{not json")
    with pytest.raises(ValueError, match=r"notebook broken\.ipynb must be valid JSON"):
        copy_lessons(tmp_path / "nb", tmp_path / "files", _problems)


def test_a_symbolic_link_among_the_lessons_is_refused(tmp_path: Path) -> None:
    (tmp_path / "nb").mkdir()
    (tmp_path / "secret.txt").write_text("not for the web")
    (tmp_path / "nb" / "notes.txt").symlink_to(tmp_path / "secret.txt")
    with pytest.raises(ValueError, match=r"must hold no symbolic links \(got \['notes.txt'\]\)"):
        copy_lessons(tmp_path / "nb", tmp_path / "files", _problems)
    assert not (tmp_path / "files").exists()


@pytest.mark.parametrize("minor", [4, 5])
def test_the_first_page_says_how_a_lesson_starts_again(tmp_path: Path, minor: int) -> None:
    path = tmp_path / "00_contents.ipynb"
    nb = _notebook("import numpy", minor=minor)
    path.write_text(json.dumps(nb))
    add_reset_note(path)
    cells = json.loads(path.read_text())["cells"]
    assert cells[0] == nb["cells"][0] and cells[2:] == nb["cells"][1:]
    assert cells[1]["metadata"] == {"tags": [RESET_TAG]} and ("id" in cells[1]) == (minor >= 5)
    assert "right-click it in the file browser" in cells[1]["source"]
    assert "**Delete**" in cells[1]["source"]
