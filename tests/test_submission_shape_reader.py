"""course_grading.submission_shape reads a hostile submission without blocking or trusting it.

Checked in a child process with a time limit, so a reader that blocks fails the test instead
of hanging the suite.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

READ = """
import sys
from course_grading.submission_shape import not_graded_why
print(not_graded_why(sys.argv[1]))
"""


def _why(folder: Path) -> str:
    done = subprocess.run([sys.executable, "-c", READ, str(folder)], capture_output=True,
                          text=True, timeout=60, check=True)
    return done.stdout.strip()


def test_a_fifo_named_like_a_notebook_is_not_opened(tmp_path: Path) -> None:
    import os

    os.mkfifo(tmp_path / "checkpoint.ipynb")  # opening it would wait for a writer forever
    assert _why(tmp_path) == "None"


@pytest.mark.parametrize(("text", "why"), [
    ('{"cells": ' + "[" * 100_000 + "]" * 100_000 + "}", "None"),  # nbgrader's own error
    ('{"cells": [' + ",".join(['{"source": "a"}'] * 20_001) + "]}",
     "too large a notebook (more than 20000 JSON objects)"),
    # 25,000 braces of a student's LaTeX inside one string are text, not objects
    ('{"cells": [{"source": "$' + "{" * 25_000 + "x" + "}" * 25_000 + ' \\"{\\" $"}]}', "None"),
    # escaped quotes outside any string, then quotes alone: each quote once started a scan to
    # the end of the file (400 kB took minutes; the child's 60 s limit fails the test)
    ('{"cells": []}' + '\\"' * 200_000, "None"),
    ('{"cells": []}' + '"' * 2_000_000, "None"),
    ('{"cells": [{"source": "' + "x" * 200_001 + '"}]}',
     "too large a notebook (more than 200000 characters of cell source)"),
])
def test_nested_many_and_long_notebooks(tmp_path: Path, text: str, why: str) -> None:
    (tmp_path / "checkpoint.ipynb").write_text(text)
    assert _why(tmp_path) == why


@pytest.mark.parametrize(("names", "why"), [
    ([b"notes.txt", b"<img src=x onerror=alert(1)>.txt", b"...", b"x" * 250], "None"),
    ([b"\x1b]0;title\x07.txt"], "file names with control characters or bytes that are not "
                                "UTF-8 (1)"),
    ([b"a\nb.txt", b"\xff\xfe.txt"], "file names with control characters or bytes that are "
                                     "not UTF-8 (2)"),
])
def test_names_a_terminal_would_act_on_are_refused(tmp_path: Path, names: list[bytes],
                                                    why: str) -> None:
    # nbgrader logs each file it copies: an escape sequence would reach the instructor's
    # terminal (second red team, issue 42)
    import os

    (tmp_path / "checkpoint.ipynb").write_text('{"cells": []}')
    for name in names:
        with open(os.path.join(os.fsencode(tmp_path), name), "wb") as f:
            f.write(b"x")
    assert _why(tmp_path) == why
