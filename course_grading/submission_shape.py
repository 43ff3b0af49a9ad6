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
import os
from typing import Any

from traitlets import Int
from traitlets.config import Configurable

from course_exchange.inbound import Limits, count_entries

__all__ = ["SubmissionShape", "TooManyFiles", "refuse_large_submissions", "too_many_files"]


class SubmissionShape(Configurable):
    """How large a submission folder autograde takes: ``c.SubmissionShape.<name>``."""

    max_entries = Int(Limits().max_files, help=(
        "Entries (files, folders, links, anything) a submission folder may hold; one with "
        "more is not graded (the course's collect refuses it too).")).tag(config=True)


class TooManyFiles(RuntimeError):
    """A submission folder holds more entries than autograde takes; nothing of it ran."""


def too_many_files(folder: str | os.PathLike[str], limit: int) -> str | None:
    """``"too many files (more than N files and folders)"`` if ``folder`` holds more than
    ``limit`` entries, else None. Looks at no more than ``limit + 1`` entries."""
    if count_entries(folder, limit) > limit:
        return f"too many files (more than {limit} files and folders)"
    return None


def _bounded(init_assignment: Any) -> Any:
    @functools.wraps(init_assignment)
    def init_assignment_bounded(self: Any, assignment_id: str, student_id: str) -> None:
        folder = self._format_source(assignment_id, student_id)
        limit = SubmissionShape(parent=self).max_entries
        why = too_many_files(folder, limit) if os.path.isdir(folder) else None
        if why:
            self.log.error("Not graded: %s in %s", why, folder)
            raise TooManyFiles(f"Not graded: {why} in {folder}; nothing of it was run. "
                               "The submission is kept as it is; c.SubmissionShape."
                               "max_entries sets the limit.")
        init_assignment(self, assignment_id, student_id)

    init_assignment_bounded.course_bounded = True  # type: ignore[attr-defined]
    return init_assignment_bounded


def refuse_large_submissions() -> None:
    """Make every autograde of this process refuse an oversized submission folder first
    (idempotent)."""
    from nbgrader.converters.autograde import Autograde

    if not getattr(Autograde.init_assignment, "course_bounded", False):
        Autograde.init_assignment = _bounded(Autograde.init_assignment)  # type: ignore[method-assign]
