"""Any file in submitted/ is read or refused with a reason, never with an exception."""

from __future__ import annotations

import nbformat
import pytest

from course_grading.notebook_files import read_notebook


@pytest.mark.parametrize("content, reason", [
    (b"{", "not valid JSON"),
    (b"\xff\xfe\x00", "not UTF-8"),
    (b"[" * 200_000 + b"]" * 200_000, "nested too deeply"),
    (b'{"a": ' * 50_000 + b"1" + b"}" * 50_000, "nested too deeply"),
    (b"[1, 2]", "not a notebook object"),
    (b'{"cells": 3}', "not a valid notebook"),
])
def test_broken_files_give_a_reason(tmp_path, content, reason):
    path = tmp_path / "x.ipynb"
    path.write_bytes(content)
    nb, problem = read_notebook(path)
    assert nb is None and reason in problem


def test_size_limit_and_missing_file_and_a_good_notebook(tmp_path):
    path = tmp_path / "x.ipynb"
    nbformat.write(nbformat.v4.new_notebook(), path)
    assert read_notebook(path)[1] is None
    assert "too large" in read_notebook(path, max_bytes=10)[1]
    assert "unreadable" in read_notebook(tmp_path / "nope.ipynb")[1]
