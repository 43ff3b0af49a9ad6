"""Beside each written answer in formgrader: your rubric and that student's own numbers.

Grading 200 written answers one page at a time, an instructor needs two things on the page
of *Manual Grading*: the rubric (each criterion and its points) and the numbers the student
answered about. Question 5 asks for "a number from the table of Question 3", and with
per-student variants (:mod:`course_grading.personal`) every student has a table of their
own, so an answer quoting a classmate's table is only visible next to the student's own.

:class:`WrittenGuideHandler` answers ``GET <base>/formgrader/course-written/<submission>``
(the id of a submitted notebook, as formgrader's own page has it) with JSON: the student's
table as they saw it, which of its columns divides by sqrt(d_k), and the rubric and model
answer of the instructor's private source (``secret_source/``; see
:func:`course_grading.variants.read_rubric`). ``formgrader_static/written_guide.js``, loaded
from a file under the course's Content-Security-Policy, shows them under the written answer.

What a request can and cannot reach: the submission id must be a gradebook id (32 hex
digits) and names no file; the student, assignment and notebook come from the gradebook of
the course this formgrader serves, and the only files read are that course's source
notebook and secret. The handler is a formgrader page (nbgrader's ``BaseHandler``, logged
in as formgrader's pages are) registered by :mod:`course_grading.formgrader_csp`, which only
the instructor's server loads: a student's server has neither formgrader nor
``course_grading``. Nothing of this goes into a notebook, so the feedback a student gets
holds no rubric.

Examples
--------
>>> table_of("| d_k | X | Y |\\n|---:|---:|---:|\\n| 4 | 0.22 | 0.40 |")
(['d_k', 'X', 'Y'], [['4', '0.22', '0.40']])
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import nbformat
from nbgrader.api import MissingEntry
from nbgrader.server_extensions.formgrader.base import BaseHandler, check_xsrf
from tornado import web

from course_quiz.checkpoint_spec import CHECKPOINT

from .check_calls import QuizSourceError
from .personal import personal_variant, read_secret, secret_path
from .variants import SECRET_SOURCE, WRITTEN, read_rubric

__all__ = ["URL_PATTERN", "GuideError", "WrittenGuideHandler", "table_of", "written_guide"]

#: The handler's route, after the server's base URL.
URL_PATTERN = r"formgrader/course-written/([^/]*)"

#: The question whose table the written question asks the student to use.
TABLE_QUESTION = "mc_read_table"

_SUBMISSION_ID = re.compile(r"[0-9a-f]{32}")
_TABLE_LINE = re.compile(r"^\|(.*)\|\s*$")
_SEPARATOR = re.compile(r"^[\s|:-]+$")
_ROWS_OF_KEYS = re.compile(r"over\s+(\d+)\s+rows\s+of\s+(\d+)\s+keys")
_ENTRIES = re.compile(r"entries\s+of\s+size\s+about\s+(\d+(?:\.\d+)?)")

#: How to add a rubric, as the guide (docs/instructors.md, section 1) says: into the private
#: source, never into the public ``source/`` (git tracks it).
HOW_TO_ADD = (
    "write your model answer, then one line '- N point(s): what earns them' per criterion "
    "(adding up to the question's {points} points), into a file and run python -m "
    "course_grading.variants --seed <your seed> --written FILE (it writes secret_source/, "
    "which git ignores){or_cell}; then nbgrader generate_assignment checkpoint --force")
OR_CELL = ", or write them into the written answer's cell of {path}"


class GuideError(Exception):
    """A request the guide cannot answer: ``status`` is the HTTP status it gets."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def table_of(markdown: str) -> tuple[list[str], list[list[str]]]:
    """The header and rows of the first markdown table in ``markdown`` (cells as text)."""
    rows: list[list[str]] = []
    for line in markdown.splitlines():
        match = _TABLE_LINE.match(line.strip())
        if match is None:
            if rows:
                break
            continue
        if not _SEPARATOR.match(match.group(1)):
            rows.append([cell.strip() for cell in match.group(1).split("|")])
    if not rows:
        raise QuizSourceError(f"the question before {TABLE_QUESTION} holds no table")
    return rows[0], rows[1:]


def _question_text(nb: nbformat.NotebookNode, answer_id: str) -> str:
    """The markdown cell right before the answer cell ``answer_id``."""
    before = ""
    for cell in nb.cells:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == answer_id:
            return before
        if cell.cell_type == "markdown":
            before = cell.source
    raise QuizSourceError(f"the source notebook has no answer cell {answer_id}")


def _title(question: str) -> str:
    """``"Question N"``, as the notebook numbers the spec's questions."""
    ids = [q.id for q in CHECKPOINT.questions]
    return f"Question {ids.index(question) + 1}"


def _written_cell(nb: nbformat.NotebookNode) -> str:
    for cell in nb.cells:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == WRITTEN:
            return str(cell.source)
    raise QuizSourceError(f"the source notebook has no written answer cell {WRITTEN}")


def written_guide(course_root: str | os.PathLike[str], source_notebook: str | os.PathLike[str],
                  student: str) -> dict[str, Any]:
    """What the grader of ``student``'s written answer sees beside it.

    Parameters
    ----------
    course_root : path
        The nbgrader course directory (where ``secret_source/variant_secret`` is looked for).
    source_notebook : path
        The instructor's source notebook of the checkpoint (``secret_source/checkpoint/
        checkpoint.ipynb`` while it exists).
    student : str
        The student's id, as the gradebook has it.

    Returns
    -------
    dict
        ``question``, ``points``, ``student``, ``per_student`` (whether the numbers are this
        student's own or the class's), ``variant``, ``table`` (``question``, ``title``,
        ``header``, ``rows``, ``measured``, ``scaled_column``: the column that divides by
        sqrt(d_k), or None where the source does not say), ``rubric`` (a list of
        ``{"points", "criterion"}``), ``model_answer`` and ``rubric_missing`` (None, or
        what is wrong and how to add one).

    Raises
    ------
    GuideError
        If the source notebook cannot be read (500, saying which file).
    """
    source_notebook = Path(source_notebook)
    try:
        source = nbformat.read(source_notebook, as_version=4)
    except (OSError, ValueError) as exc:
        raise GuideError(500, f"the course's source notebook {source_notebook} could not be "
                              f"read: {exc}") from None
    secret_file = secret_path(course_root)
    per_student = secret_file.is_file()
    try:
        question = _question_text(source, TABLE_QUESTION)
        header, rows = table_of(question)
        measured = _ROWS_OF_KEYS.search(question), _ENTRIES.search(question)
        if not all(measured):
            raise QuizSourceError(f"the question before {TABLE_QUESTION} must say how its "
                                  "table was measured ('over N rows of K keys', 'entries of "
                                  "size about S')")
        n_rows, n_keys, scale = measured[0][1], measured[0][2], measured[1][1]
        scaled_column = None
        variant_id = str(source.metadata.get("course_variant", "?"))
        if per_student:  # the numbers of the student's variant (the table's form: the source's)
            variant = personal_variant(read_secret(secret_file), student)
            dks, keys, size = variant.table_setup
            if len(dks) != len(rows):
                raise QuizSourceError(f"the table has {len(rows)} rows, the variant "
                                      f"{len(dks)} head sizes")
            rows = [[str(d), *(f"{x:.2f}" for x in ((unscaled, scaled) if
                                                   variant.unscaled_first else
                                                   (scaled, unscaled)))]
                    for d, (scaled, unscaled) in zip(dks, variant.table, strict=True)]
            n_keys, scale = str(keys), f"{size:g}"
            scaled_column = "Y" if variant.unscaled_first else "X"
            variant_id = variant.seed_id
    except (OSError, ValueError, QuizSourceError) as exc:
        raise GuideError(500, f"{student}'s numbers could not be made from {source_notebook}"
                              f": {exc}") from None
    written = _written_cell(source)
    points = CHECKPOINT.question(WRITTEN).points
    try:
        rubric = read_rubric(written)
        missing = None
    except QuizSourceError as exc:
        rubric = []
        private = source_notebook.parent.parent.name == SECRET_SOURCE
        missing = (f"No rubric for {WRITTEN} in {source_notebook} ({exc}). To add one, "
                   + HOW_TO_ADD.format(points=points, or_cell=OR_CELL.format(
                       path=source_notebook) if private else ""))
    model = written
    if rubric:  # the model answer is what comes before the first criterion's line
        lines = written.splitlines()
        first = next(i for i, line in enumerate(lines) if rubric[0][1] in line)
        model = "\n".join(lines[:first]).strip()
    return {
        "question": WRITTEN,
        "points": points,
        "student": student,
        "per_student": per_student,
        "variant": variant_id,
        "table": {"question": TABLE_QUESTION, "title": _title(TABLE_QUESTION),
                  "header": header, "rows": rows,
                  "measured": f"over {n_rows} rows of {n_keys} keys, entries of size "
                              f"about {scale}",
                  "scaled_column": scaled_column},
        "rubric": [{"points": p, "criterion": c} for p, c in rubric],
        "model_answer": model if rubric else "",
        "rubric_missing": missing,
    }


class WrittenGuideHandler(BaseHandler):
    """``GET .../formgrader/course-written/<submission id>``: :func:`written_guide` of that
    submission's student, as JSON; an error as ``{"message": ...}`` with its status."""

    @web.authenticated
    @check_xsrf
    def get(self, submission_id: str) -> None:
        self.set_header("Content-Type", "application/json; charset=UTF-8")
        self.set_header("Cache-Control", "no-store")
        try:
            guide = self._guide(submission_id)
        except GuideError as exc:
            self.set_status(exc.status)
            self.finish({"message": str(exc)})
            return
        self.finish(guide)

    def _guide(self, submission_id: str) -> dict[str, Any]:
        if "nbgrader_formgrader" not in self.settings:
            raise GuideError(404, "formgrader is not running on this server")
        if not _SUBMISSION_ID.fullmatch(submission_id):
            raise GuideError(400, "the submission must be a formgrader submission id (32 "
                                  f"hexadecimal digits; got {submission_id[:80]!r})")
        try:
            found = self.gradebook.find_submission_notebook_by_id(submission_id)
            student = found.student.id
            assignment = found.assignment.assignment.name
            notebook = found.notebook.name
        except MissingEntry:
            raise GuideError(404, f"no submitted notebook has the id {submission_id} in this "
                                  "course's gradebook") from None
        if assignment != CHECKPOINT.assignment:
            raise GuideError(404, f"only the {CHECKPOINT.assignment} assignment has a written "
                                  f"answer guide (this submission is of {assignment!r})")
        coursedir = self.coursedir
        # quiz/nbgrader_config.py's rule, applied now: the course's source is secret_source/
        # while it exists. formgrader's own config was read when the instructor's server
        # started, which on a hub is before they ran course_grading.variants in its terminal.
        secret = Path(coursedir.root) / SECRET_SOURCE
        folder = (secret / CHECKPOINT.assignment if secret.is_dir() else Path(
            coursedir.format_path(coursedir.source_directory, ".", CHECKPOINT.assignment)))
        source = folder / f"{notebook}.ipynb"
        if source.resolve().parent != folder.resolve():  # a notebook name holds no path
            raise GuideError(400, f"the submitted notebook's name {notebook!r} is not a "
                                  "file name")
        return written_guide(coursedir.root, source, student)
