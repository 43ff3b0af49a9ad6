"""A submission folder with too many entries is refused before nbgrader lists it.

nbgrader's autograde starts a submission by listing every file in it
(``BaseConverter.init_assignment`` calls ``nbgrader.utils.find_all_files``), and that listing
is quadratic in the folders: for each folder, each of nbgrader's ignore globs is matched
against the whole parent folder. 10,000 empty folders took 148 s of one grader's time before
any notebook ran (issue 42), outside the sandbox's time budget; 100,000 had not finished
after 480 s. Folders cost a student nothing: the course's collect counts them
(:func:`course_exchange.inbound.read_submission`), but plain ``nbgrader collect`` and a
submission placed by hand never pass through it.

:func:`refuse_large_submissions` makes autograde count a submission's entries (files,
folders, links, anything: :func:`course_exchange.inbound.count_entries`, which stops one
past the limit) before nbgrader's own ``init_assignment`` runs, and refuse it with
:class:`TooManyFiles`: nbgrader then records that submission as failed, removes its half-made
``autograded/`` folder and goes on with the next student. The grade table and the report
name it ``ungraded: too many files (more than N files and folders)``
(:func:`too_many_files`).

Size and shape count as well (a red team's runs, issue 42): a submission's files together
may hold no more than ``max_bytes`` (apparent sizes: a 3 GB sparse file beside a right
notebook took 69 s and wrote 3.1 GB into ``autograded/``), and each notebook in it no more
than ``max_notebook_bytes``, ``max_notebook_objects`` JSON objects (every ``{`` outside a JSON
string counted in one pass: 20,000 one-letter markdown cells held autograde 94 s against
13 s for an honest notebook) and ``max_source_characters`` of cell source (one 45 MB code
cell cost ``generate_feedback`` 70 minutes and 20 GB of the instructor's machine).
Everything is read before nbgrader parses anything; no file name a student chose appears in
the reason.

nbgrader has no per-submission hook before ``init_assignment`` that can refuse one
submission: ``BaseConverter.pre_convert_hook`` runs there, but its exceptions are logged and
ignored, and it is told the ``--student`` glob, not the student being graded. So the check
wraps ``Autograde.init_assignment`` itself, the one method every autograde goes through
(``nbgrader autograde``, formgrader's button, ``NbGraderAPI.autograde`` and so the
course's engine). :func:`course_grading.sandbox.enable` installs it, so whatever grades with
the course's config grades with it.

Examples
--------
>>> import tempfile
>>> with tempfile.TemporaryDirectory() as d:
...     for i in range(3):
...         os.mkdir(os.path.join(d, f"empty{i}"))
...     too_many_files(d, limit=2), too_many_files(d, limit=3)
('too many files (more than 2 files and folders)', None)
"""

from __future__ import annotations

import functools
import json
import os
import re
import stat
from typing import Any

from traitlets import Int
from traitlets.config import Configurable

from course_exchange.inbound import Limits, count_entries

__all__ = ["SubmissionShape", "TooManyFiles", "not_graded_why", "refuse_large_submissions",
           "too_many_files"]


class SubmissionShape(Configurable):
    """How large a submission folder autograde takes: ``c.SubmissionShape.<name>``."""

    max_entries = Int(Limits().max_files, help=(
        "Entries (files, folders, links, anything) a submission folder may hold; one with "
        "more is not graded (the course's collect refuses it too).")).tag(config=True)
    max_bytes = Int(Limits().max_bytes, help=(
        "Bytes (apparent sizes, links not followed) the files of a submission may hold "
        "together; a larger one is not graded (the course's collect refuses it too)."
    )).tag(config=True)
    max_notebook_bytes = Int(20_000_000, help=(
        "Bytes one notebook of a submission may have (the quiz's, run, is about 0.2 MB)."
    )).tag(config=True)
    max_notebook_objects = Int(20_000, help=(
        "JSON objects one notebook may hold, counted as its '{' characters (an upper "
        "bound; the quiz's has a few hundred).")).tag(config=True)
    max_source_characters = Int(200_000, help=(
        "Characters of cell source one notebook may hold, all cells together (the quiz's "
        "has about 20,000).")).tag(config=True)


class TooManyFiles(RuntimeError):
    """A submission folder is larger than autograde takes (entries, bytes or a notebook's
    size and shape); nothing of it ran."""


def too_many_files(folder: str | os.PathLike[str], limit: int) -> str | None:
    """``"too many files (more than N files and folders)"`` if ``folder`` holds more than
    ``limit`` entries, else None. Looks at no more than ``limit + 1`` entries."""
    if count_entries(folder, limit) > limit:
        return f"too many files (more than {limit} files and folders)"
    return None


# A JSON string, or an unclosed one to the end of the file. Possessive, and an unclosed
# string takes the rest: without that, every later quote would start a new scan to the end
# (400 kB of \" took minutes; now linear: 20 MB of any shape in about 3 s at most).
_JSON_STRING = re.compile(rb'"(?:[^"\\]++|\\.)*+(?:"|\\?\Z)', re.S)


def _braces(path: str) -> int:
    """JSON objects in the file: ``{`` outside strings (a student's LaTeX is not counted).

    Called only on files of at most ``max_notebook_bytes``; one linear pass (about 0.4 s for
    an honest 20 MB notebook). What follows an unclosed quote is string to a JSON parser
    too, so it is not counted.
    """
    with open(path, "rb") as f:
        data = f.read()
    return _JSON_STRING.sub(b"", data).count(b"{")


def _notebook_why(path: str, size: int, shape: SubmissionShape) -> str | None:
    if size > shape.max_notebook_bytes:
        return f"too large a notebook (more than {shape.max_notebook_bytes} bytes)"
    if _braces(path) > shape.max_notebook_objects:
        return (f"too large a notebook (more than {shape.max_notebook_objects} "
                "JSON objects)")
    try:
        with open(path, "rb") as f:
            cells = json.load(f).get("cells", [])
        source = sum(len("".join(c["source"]) if isinstance(c.get("source"), list)
                         else str(c.get("source", ""))) for c in cells if isinstance(c, dict))
    except (OSError, ValueError, AttributeError, TypeError, RecursionError):
        return None  # not a notebook nbgrader can read: its own error says so
    if source > shape.max_source_characters:
        return (f"too large a notebook (more than {shape.max_source_characters} "
                "characters of cell source)")
    return None


def _unprintable(name: str) -> bool:
    """A name with a control character (a newline, an escape sequence for the instructor's
    terminal: nbgrader logs every file name it copies) or bytes that are not UTF-8 (which
    ``os.walk`` gives as lone surrogates).

    >>> _unprintable("notes.txt"), _unprintable("\\x1b]0;title\\x07"), _unprintable("\\udcff")
    (False, True, True)
    """
    return any(ord(ch) < 32 or 127 <= ord(ch) < 160 or 0xDC80 <= ord(ch) <= 0xDCFF
               for ch in name)


def not_graded_why(folder: str | os.PathLike[str], shape: SubmissionShape | None = None
                   ) -> str | None:
    """Why autograde refuses this submission folder for its size or shape, or None.

    Entries first (:func:`too_many_files`, so the walk below sees at most ``max_entries``),
    then names with control characters or bytes that are not UTF-8 (:func:`_unprintable`),
    then the bytes of all files together, then each notebook's bytes, JSON objects and
    characters of cell source.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     with open(os.path.join(d, "a.ipynb"), "w") as f:
    ...         _ = f.write(json.dumps({"cells": [{"source": "x" * 30}]}))
    ...     (not_graded_why(d, SubmissionShape(max_source_characters=30)),
    ...      not_graded_why(d, SubmissionShape(max_source_characters=29)))
    (None, 'too large a notebook (more than 29 characters of cell source)')
    """
    shape = shape or SubmissionShape()
    why = too_many_files(folder, shape.max_entries)
    if why:
        return why
    total = 0
    notebooks = []
    odd_names = 0
    for root, dirs, files in os.walk(folder):  # links are not followed
        odd_names += sum(map(_unprintable, files + dirs))
        for name in files + [d for d in dirs if os.path.islink(os.path.join(root, d))]:
            path = os.path.join(root, name)
            st = os.lstat(path)
            total += st.st_size
            if name.endswith(".ipynb") and stat.S_ISREG(st.st_mode):  # no link, no FIFO
                notebooks.append((path, st.st_size))
    if odd_names:
        return (f"file names with control characters or bytes that are not UTF-8 "
                f"({odd_names})")
    if total > shape.max_bytes:
        return f"too large (more than {shape.max_bytes} bytes)"
    for path, size in notebooks:
        why = _notebook_why(path, size, shape)
        if why:
            return why
    return None


def _bounded(init_assignment: Any) -> Any:
    @functools.wraps(init_assignment)
    def init_assignment_bounded(self: Any, assignment_id: str, student_id: str) -> None:
        folder = self._format_source(assignment_id, student_id)
        shape = SubmissionShape(parent=self)
        why = not_graded_why(folder, shape) if os.path.isdir(folder) else None
        if why:
            self.log.error("Not graded: %s in %s", why, folder)
            raise TooManyFiles(f"Not graded: {why} in {folder}; nothing of it was run. "
                               "The submission is kept as it is; c.SubmissionShape "
                               "sets the limits.")
        init_assignment(self, assignment_id, student_id)

    init_assignment_bounded.course_bounded = True  # type: ignore[attr-defined]
    return init_assignment_bounded


def refuse_large_submissions() -> None:
    """Make every autograde of this process refuse an oversized submission folder first
    (idempotent)."""
    from nbgrader.converters.autograde import Autograde

    if not getattr(Autograde.init_assignment, "course_bounded", False):
        Autograde.init_assignment = _bounded(Autograde.init_assignment)  # type: ignore[method-assign]
