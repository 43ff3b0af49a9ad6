"""The grade table names a submission that holds a symbolic link or a file that is not a
regular one, and never reads through either (a link to a FIFO would block it for ever)."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import nbformat

from course_grading.gradetable import LINKED, _links_or_size, _notebook_problem


def _finishes(call, seconds: float = 10.0):
    """``call()``'s result, failing the test if it has not returned within ``seconds``."""
    box: list = []
    worker = threading.Thread(target=lambda: box.append(call()), daemon=True)
    worker.start()
    worker.join(seconds)
    assert box, f"still blocked after {seconds} s"
    return box[0]


def _notebook(path: Path) -> None:
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1")]), path)


def test_a_linked_notebook_is_named_not_read(tmp_path):
    elsewhere = tmp_path / "instructors.ipynb"
    _notebook(elsewhere)  # a valid notebook: read through the link, it looked gradable
    submitted = tmp_path / "submitted"
    submitted.mkdir()
    (submitted / "checkpoint.ipynb").symlink_to(elsewhere)
    assert _notebook_problem(submitted, "checkpoint") == LINKED


def test_a_link_to_a_fifo_does_not_block_the_table(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    submitted = tmp_path / "submitted"
    submitted.mkdir()
    (submitted / "checkpoint.ipynb").symlink_to(fifo)
    assert _finishes(lambda: _notebook_problem(submitted, "checkpoint")) == LINKED


def test_a_fifo_named_like_the_notebook_is_named_not_opened(tmp_path):
    os.mkfifo(tmp_path / "checkpoint.ipynb")
    problem = _finishes(lambda: _notebook_problem(tmp_path, "checkpoint"))
    assert problem is not None and problem.startswith("not a regular file"), problem


def test_an_honest_notebook_still_looks_gradable(tmp_path):
    _notebook(tmp_path / "checkpoint.ipynb")
    assert _notebook_problem(tmp_path, "checkpoint") is None
    (tmp_path / "broken.ipynb").write_text(json.dumps([1]))
    assert "corrupt notebook" in _notebook_problem(tmp_path, "broken")


def test_no_autograded_notebook_and_a_link_elsewhere_in_the_folder_says_links(tmp_path):
    _notebook(tmp_path / "checkpoint.ipynb")
    (tmp_path / "notes.txt").symlink_to("/etc/hostname")
    assert _links_or_size(tmp_path) == LINKED
    (tmp_path / "notes.txt").unlink()
    assert _links_or_size(tmp_path) is None
