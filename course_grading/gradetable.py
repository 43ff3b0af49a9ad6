"""A grade table instructors can trust: one column per question, ungraded never shown as 0.

``nbgrader export`` writes one total per student and records a submission it could not
grade (a corrupt or renamed notebook, an autograde that crashed) as a score of 0, the same
as a student who answered everything wrong. This module reads the same gradebook
(:class:`nbgrader.api.Gradebook`) together with the ``submitted/`` and ``autograded/``
folders, and writes a table where

* each question of the assignment has its own column (the code question sums its visible
  and hidden tests; the numeric, each multiple-choice and the written answer stand alone),
* a submission that could not be graded says why in every cell
  (``ungraded: corrupt notebook (not valid JSON)``, ``ungraded: renamed notebook
  (found 'x.ipynb')``, ``ungraded: missing notebook``, ``ungraded: too many files (more
  than 1000 files and folders)``, ``ungraded: autograde failed``),
* a written answer still waiting for the instructor says ``needs manual grade`` (and the
  total, the sum of what is graded so far, says ``+ pending``),
* the hidden tests a submission failed are listed by name (each is named for the mistake
  it catches, see :data:`DIAGNOSED_MISTAKES`).

It also carries what the roster (:mod:`course_grading.roster`) and nbgrader's due dates
add: each student's name and email, whether they left the course, how late a submission
came (after their extension) and the late penalty nbgrader took, and the total after it.

Run it in the course directory (``quiz/``), besides ``nbgrader export``, not instead::

    python -m course_grading.gradetable                 # assignment 'checkpoint'
    python -m course_grading.gradetable --csv grades.csv --course-dir quiz

It reads the gradebook nbgrader is configured with (SQLite or PostgreSQL,
:mod:`course_grading.gradebook`).
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from course_quiz.checkpoint_spec import CHECKPOINT

from .gradebook import GradebookMissing, locate, open_gradebook
from .notebook_files import read_notebook
from .roster import format_minutes, read_roster
from .shown_ids import for_csv, for_terminal

__all__ = [
    "DIAGNOSED_MISTAKES",
    "GradeTable",
    "StudentRow",
    "build_grade_table",
    "grading_problems",
    "lost_points",
    "main",
    "repeated_mistakes",
]

#: The hidden checks of the checkpoint, each built to catch one mistake, and that mistake
#: in the words of the lesson (from the quiz's spec).
DIAGNOSED_MISTAKES: dict[str, str] = {gid: m.words for gid, m in CHECKPOINT.diagnosed.items()}
#: Error names that mean "the answer was wrong" (not: it crashed, was missing, lied).
_WRONG = {"AssertionError", "CheckFailed"}
#: Mistakes every check catches (the lessons' plain weights, a causal mask, a mask after
#: the softmax): a hidden check that saw one did not see its own mistake.
_EVERYWHERE = {m.id for m in CHECKPOINT.mistakes if m.everywhere}
#: the answer cells' grade ids, the only cell names a summary repeats
_ANSWER_IDS = frozenset(q.id for q in CHECKPOINT.questions)

UNGRADED = "ungraded"
NEEDS_MANUAL = "needs manual grade"


@dataclass
class StudentRow:
    """One student's line of the table.

    Attributes
    ----------
    student : str
    status : str
        ``"graded"``, ``"graded; needs manual grade: <question>"``, ``"no submission"`` or
        ``"ungraded: <reason>"``.
    scores : dict of str to float or None
        Score per question; ``None`` where the question is not graded yet.
    failed_checks : list of str
        Grade ids of the hidden tests (of :data:`DIAGNOSED_MISTAKES`) that lost points
        on an ``AssertionError``: the mistakes this submission made.
    crashed_checks : dict of str to str
        Hidden tests that lost points because the code raised something else (the
        function is missing or crashed), mapped to the exception name, or because the
        answer is wrong on every check (mapped to that mistake, e.g. ``"no_mask"``).
    problems : list of str
        What stopped or broke the graded notebook (:func:`grading_problems`); the status
        says it too.
    lost : dict of str to str
        Every check that lost points, in notebook order, and why (:func:`lost_points`).
    name, email : str
        From the gradebook's ``student`` table (the roster); empty where unknown.
    roster : str
        ``""`` (on the roster), ``"left"``, or ``"not on the roster"``; always ``""`` when
        no roster was loaded.
    seconds_late : float
        How late the submission came after its due date (extension included), 0 if on time.
    penalty : float
        The late penalty nbgrader took (points), 0 if none.
    due : datetime or None
        The due date of this student's submission (extension included; UTC).
    extension_minutes : int or None
        The extension of this submission (nbgrader's), if any.
    time_limit_factor : float
        The roster's factor on every time limit of this student's code.
    """

    student: str
    status: str
    scores: dict[str, float | None] = field(default_factory=dict)
    failed_checks: list[str] = field(default_factory=list)
    crashed_checks: dict[str, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    lost: dict[str, str] = field(default_factory=dict)
    name: str = ""
    email: str = ""
    roster: str = ""
    seconds_late: float = 0.0
    penalty: float = 0.0
    due: Any = None
    extension_minutes: int | None = None
    time_limit_factor: float = 1.0

    @property
    def graded(self) -> bool:
        """True when the autograder produced scores for this submission."""
        return self.status.startswith("graded")

    @property
    def total(self) -> float | None:
        """Sum of the scores that exist, or ``None`` for an ungraded submission."""
        if not self.graded:
            return None
        return sum(s for s in self.scores.values() if s is not None)

    @property
    def final(self) -> float | None:
        """The total after the late penalty, or ``None`` for an ungraded submission."""
        total = self.total
        return None if total is None else max(0.0, total - self.penalty)

    @property
    def pending(self) -> bool:
        """True while an answer waits for a manual grade (the total is not final yet)."""
        return self.graded and any(s is None for s in self.scores.values())

    @property
    def late(self) -> str:
        """How late, in words (``""`` when on time or without a due date)."""
        return format_minutes(self.seconds_late / 60) if self.seconds_late > 0 else ""


@dataclass
class GradeTable:
    """The grade table of one assignment.

    Attributes
    ----------
    assignment : str
    questions : list of str
        Column names, in notebook order.
    max_scores : dict of str to float
    rows : list of StudentRow
        Sorted by student id.
    parts : tuple of int
        The parts of the course the checkpoint covers, as the instructor chose them
        (:func:`course_grading.variants.read_parts`); ``()`` for another assignment.
    """

    assignment: str
    questions: list[str]
    max_scores: dict[str, float]
    rows: list[StudentRow]
    parts: tuple[int, ...] = ()

    @property
    def header(self) -> list[str]:
        """Column headers; each question header carries its maximum, ``name (/5)``."""
        total = _fmt(sum(self.max_scores.values()))
        return [
            "student",
            "name",
            "email",
            "roster",
            "status",
            *(f"{q} (/{_fmt(self.max_scores[q])})" for q in self.questions),
            f"total (/{total})",
            "late",
            "late penalty",
            f"final (/{total})",
            "failed hidden tests",
        ]

    def cells(self, *, short: bool = False) -> list[list[str]]:
        """The table as strings, one list per student, aligned with :attr:`header`.

        Parameters
        ----------
        short : bool, default False
            Write just ``ungraded`` in the question cells of an ungraded submission (the
            reason stays in the status column). The CSV repeats the reason in every cell,
            so that no column read on its own can pass an ungraded submission off as 0.
        """
        out = []
        for row in self.rows:
            if row.graded:
                qcells = [
                    NEEDS_MANUAL if row.scores.get(q) is None else _fmt(row.scores[q])
                    for q in self.questions
                ]
                pending = " + pending" if any(row.scores.get(q) is None
                                              for q in self.questions) else ""
                total = _fmt(row.total or 0.0) + pending  # not the final total yet
                final = _fmt(row.final or 0.0) + pending
                penalty = f"-{_fmt(row.penalty)}" if row.penalty else ""
                failed = " ".join(
                    [*row.failed_checks]
                    + [f"{name} ({ename})" for name, ename in row.crashed_checks.items()]
                )
            else:
                mark = row.status.split(":")[0] if short else row.status
                qcells = [mark] * len(self.questions)
                total = final = mark
                penalty = failed = ""
            out.append([row.student, row.name, row.email, row.roster, row.status, *qcells,
                        total, row.late, penalty, final, failed])
        return out

    def row(self, student: str) -> dict[str, str]:
        """One student's cells keyed by header, handy for tests and scripts."""
        for cells in self.cells():
            if cells[0] == student:
                return dict(zip(self.header, cells, strict=True))
        raise KeyError(f"no student {student!r} in the grade table (have {self.students})")

    @property
    def students(self) -> list[str]:
        """Student ids in table order."""
        return [r.student for r in self.rows]

    def write_csv(self, path: Path) -> None:
        """Write the table as CSV (UTF-8, one header line)."""
        with open(path, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(self.header)
            w.writerows([for_csv(c) for c in cells] for cells in self.cells())

    def to_text(self) -> str:
        """The table as aligned plain text, for the terminal: without the email, and
        without the roster and late columns where they are empty for everyone."""
        cells = self.cells(short=True)
        optional = {"email"} | {h for i, h in enumerate(self.header)
                                if h in ("name", "roster", "late", "late penalty")
                                and not any(r[i] for r in cells)}
        if not any(r.penalty for r in self.rows):
            optional.add(self.header[-2])  # the final total: the same as the total
        keep = [i for i, h in enumerate(self.header) if h not in optional]
        rows = [[self.header[i] for i in keep],
                *([for_terminal(r[0]), *(for_terminal(r[i], None) for i in keep[1:])]
                  for r in cells)]
        widths = [max(len(r[i]) for r in rows) for i in range(len(keep))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
                 for r in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(lines)


def _fmt(x: float) -> str:
    return f"{x:g}"


# --------------------------------------------------------------------------------------
# reading the course directory
# --------------------------------------------------------------------------------------


def _question_of(grade_id: str, answers: set[str]) -> str:
    """Map a graded cell to its question: tests join the answer they test."""
    try:
        return CHECKPOINT.check(grade_id).question
    except KeyError:
        pass
    if grade_id in answers:
        return grade_id
    if grade_id.startswith("test_"):
        rest = grade_id[len("test_"):]
        for answer in sorted(answers, key=len, reverse=True):
            if rest == answer or rest.startswith(answer + "_"):
                return answer
    return grade_id


def _notebook_problem(folder: Path, notebook: str) -> str | None:
    """Why ``folder/notebook.ipynb`` cannot be graded, or None if it looks gradable.

    The file is looked at, never followed: a symbolic link (which the graders refuse, and
    which may lead to a FIFO that would block the table for ever, or to a file of the
    instructor's) and anything but a regular file are named, not read.
    """
    import stat

    path = folder / f"{notebook}.ipynb"
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        return f"notebook unreadable ({type(exc).__name__})"
    if mode is not None and stat.S_ISLNK(mode):
        return LINKED
    if mode is not None and not stat.S_ISREG(mode):
        return "not a regular file (a folder, FIFO or device named like the notebook)"
    if mode is None:
        others = sorted(p.name[:80] for p in folder.glob("*.ipynb"))[:5]
        if others:
            found = ", ".join(repr(o) for o in others)
            return f"renamed notebook (expected '{notebook}.ipynb', found {found})"
        return f"missing notebook (no '{notebook}.ipynb' submitted)"
    _, problem = read_notebook(path)
    return problem


#: What an error in a student's own cell (not a check) means for the whole notebook (the
#: same words reach the student: :func:`course_grading.verdicts.answer_cell_trouble`).
STOPPING_ERRORS = {
    "CellTimeoutError": "stopped by the cell time limit",
    "TimeoutError": "stopped by the cell time limit",
    "DeadKernelError": "the kernel crashed",
    "SyntaxError": "does not parse",
    "IndentationError": "does not parse",
    "TabError": "does not parse",
}
_STOPPING_ERRORS = STOPPING_ERRORS


def grading_problems(nb: dict) -> list[str]:
    """What stopped or broke a graded notebook, in words, for every summary to list.

    A notebook can be graded (it has scores) and still have been stopped by a time limit,
    have crashed its kernel, or hold an answer that does not parse; its score alone does
    not say so.

    Parameters
    ----------
    nb : dict
        An autograded notebook (JSON as a dict).

    Returns
    -------
    list of str
        ``"<grade id>: <what happened>"`` per answer cell, and the grader's own note if it
        stopped the notebook early; empty for a notebook that ran through.

    Examples
    --------
    >>> cell = {"cell_type": "code", "metadata": {"nbgrader": {"grade_id": "shifted_key"}},
    ...         "outputs": [{"output_type": "error", "ename": "CellTimeoutError"}]}
    >>> grading_problems({"metadata": {}, "cells": [cell]})
    ['shifted_key: stopped by the cell time limit']
    """
    problems: list[str] = []
    if not isinstance(nb, dict):
        return problems
    meta = nb.get("metadata")
    course = meta.get("course") if isinstance(meta, dict) else None
    stopped = course.get("stopped") if isinstance(course, dict) else None
    if isinstance(stopped, str) and stopped:  # the host's own words (verdicts.py writes them)
        problems.append(f"notebook stopped early: {stopped[:200]}")
    cells = nb.get("cells")
    for cell in cells if isinstance(cells, list) else []:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        cell_meta = cell.get("metadata")
        nbgrader = cell_meta.get("nbgrader") if isinstance(cell_meta, dict) else None
        gid = nbgrader.get("grade_id") if isinstance(nbgrader, dict) else None
        if isinstance(gid, str) and gid.startswith("test_"):
            continue  # a check's own failures are the grade table's business
        # named only by a grade id the quiz's spec knows: a student's cell metadata is
        # theirs to write, and this sentence goes into every summary
        where = gid if gid in _ANSWER_IDS else "a cell without a known grade id"
        outputs = cell.get("outputs")
        for out in outputs if isinstance(outputs, list) else []:
            if not isinstance(out, dict) or out.get("output_type") != "error":
                continue
            what = _STOPPING_ERRORS.get(str(out.get("ename"))[:80])
            if what:
                problems.append(f"{where}: {what}")
                break
    return problems


#: Why a check without a named mistake lost its points, by verdict reason.
_LOST_BECAUSE = {
    "format": "an answer of the wrong form (shape, type or letter)",
    "raised": "the answer raised an exception",
    "missing": "the answer is missing",
    "not_plain": "the grader received something that is not plain data",
    "not_run": "the check could not run (the notebook stopped before it)",
}


def _hidden_words(gid: str, failed: set[str]) -> str:
    """Why a check that called the function on hidden inputs lost its points. The grader
    recorded only that it failed (course_grading.verdicts: one bit per hidden check), so
    this says what the check is built to catch, and whether the visible check of the same
    question, decided before any hidden input was sent, failed too."""
    check = CHECKPOINT.check(gid)
    built = _mistake_words(check.mistake)
    words = ("failed on its hidden inputs" + (f", built to catch: {built}" if built else "")
             + " (only pass or fail is recorded)")
    visible = [c.grade_id for c in CHECKPOINT.checks
               if c.question == check.question and c.on_own_inputs and c.grade_id in failed]
    return words + (f"; {', '.join(visible)} failed too" if visible else "")


def _mistake_words(mistake_id: object) -> str | None:
    """The spec's words for a mistake or misconception id; None for any other value."""
    for m in (*CHECKPOINT.mistakes, *CHECKPOINT.misconceptions):
        if m.id == mistake_id:
            return m.words
    return None


def _failed_checks(nb: dict) -> list[tuple[str, dict]]:
    """(grade id, verdict) of every failed check of the spec, in notebook order."""
    failed = []
    cells = nb.get("cells") if isinstance(nb, dict) else None
    for cell in cells if isinstance(cells, list) else []:
        meta = cell.get("metadata") if isinstance(cell, dict) else None
        nbgrader = meta.get("nbgrader") if isinstance(meta, dict) else None
        gid = nbgrader.get("grade_id") if isinstance(nbgrader, dict) else None
        if not isinstance(gid, str) or gid not in CHECKPOINT.autograded:
            continue  # only the spec's checks, named by the spec's grade ids (a list or
            # dict as an id, from a notebook not made inert, is no id and cannot be hashed)
        course = meta.get("course")
        verdict = course.get("verdict") if isinstance(course, dict) else None
        if isinstance(verdict, dict) and verdict.get("passed") is False:
            failed.append((gid, verdict))
    return failed


def repeated_mistakes(nb: dict) -> dict[str, str]:
    """Grade id -> the earlier check that lost its points to the same mistake.

    Examples
    --------
    >>> def cell(gid, mistake):
    ...     verdict = {"passed": False, "reason": "wrong", "mistake": mistake}
    ...     return {"cell_type": "code", "metadata": {"nbgrader": {"grade_id": gid},
    ...                                               "course": {"verdict": verdict}}}
    >>> repeated_mistakes({"cells": [cell("test_weights_visible", "missing_scale"),
    ...                              cell("test_missing_scale", "missing_scale")]})
    {'test_missing_scale': 'test_weights_visible'}
    """
    first: dict[str, str] = {}
    repeated = {}
    for gid, verdict in _failed_checks(nb):
        mistake = verdict.get("mistake")
        if _mistake_words(mistake) is None:
            continue
        assert isinstance(mistake, str)
        if mistake in first:
            repeated[gid] = first[mistake]
        first.setdefault(mistake, gid)
    return repeated


def lost_points(nb: dict) -> dict[str, str]:
    """Why each check of an autograded notebook lost its points, in the spec's words.

    A check's verdict (``metadata["course"]["verdict"]``, written by the grader) names the
    mistake it saw; a later check that lost its points to the same mistake says "same
    mistake as" the first (:func:`repeated_mistakes`). Only the spec's words and grade ids
    are returned, never text from the notebook.

    Parameters
    ----------
    nb : dict
        An autograded notebook (JSON as a dict).

    Returns
    -------
    dict of str to str
        Grade id -> why, for every failed check, in notebook order.

    Examples
    --------
    >>> verdict = {"passed": False, "reason": "wrong", "mistake": "missing_scale"}
    >>> cell = {"cell_type": "code", "metadata": {"nbgrader": {"grade_id": "test_missing_scale"},
    ...                                           "course": {"verdict": verdict}}}
    >>> lost_points({"cells": [cell]})
    {'test_missing_scale': 'forgot to divide the scores by sqrt(d_k)'}
    """
    repeated = repeated_mistakes(nb)
    failed = _failed_checks(nb)
    lost: dict[str, str] = {}
    for gid, verdict in failed:
        words = _mistake_words(verdict.get("mistake"))
        if verdict.get("reason") == "hidden":
            words = _hidden_words(gid, {g for g, _ in failed})
        elif words is None:
            words = _LOST_BECAUSE.get(str(verdict.get("reason")),
                                      f"wrong: {CHECKPOINT.check(gid).hint}")
        elif gid in repeated:
            words += f" (same mistake as {repeated[gid]})"
        lost[gid] = words
    return lost


def _check_errors(autograded: Path) -> dict[str, str]:
    """Grade id -> why each failed check lost its points, in an autograded notebook.

    ``"AssertionError"`` or ``"CheckFailed"`` mean a wrong answer; anything else names
    what went wrong instead (an exception class, or a reason the grader recorded).

    Raises
    ------
    ValueError
        If the autograded notebook cannot be read.
    """
    nb, problem = read_notebook(autograded)
    if problem:
        raise ValueError(f"autograded notebook unreadable: {problem}")
    errors = {}
    hidden: list[str] = []
    for cell in nb.cells:
        gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if not gid or cell.cell_type != "code":
            continue
        verdict = cell.get("metadata", {}).get("course", {}).get("verdict")
        if isinstance(verdict, dict) and not verdict.get("passed"):
            reason = str(verdict.get("reason", ""))
            detail = verdict.get("detail")
            if reason == "hidden":  # only the bit was recorded: read with the visible check
                hidden.append(gid)
                continue
            if reason == "wrong" and verdict.get("mistake") in _EVERYWHERE:
                errors[gid] = str(verdict["mistake"])  # not this check's own mistake
                continue
            errors[gid] = ("CheckFailed" if reason in ("wrong", "format") else
                           str(detail)[:80] if isinstance(detail, str) and detail else reason)
            continue
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                errors[gid] = str(out.get("ename", "Error"))[:80]
    for gid in hidden:
        # A hidden check that failed counts for the mistake it is built to catch, unless
        # the visible check of its question (public inputs) shows that the function did
        # not run, or made a mistake every check catches: then that, as the visible check
        # recorded it.
        try:
            question = CHECKPOINT.check(gid).question
        except KeyError:
            errors[gid] = "CheckFailed"
            continue
        seen = [errors[c.grade_id] for c in CHECKPOINT.checks
                if c.question == question and c.on_own_inputs and c.grade_id in errors]
        errors[gid] = next((e for e in seen if e not in _WRONG), "CheckFailed")
    return errors


def build_grade_table(course_dir: Path | str, assignment: str = "checkpoint") -> GradeTable:
    """Read the gradebook and the submission folders of ``course_dir`` into a table.

    Parameters
    ----------
    course_dir : path
        The nbgrader course directory (holding ``nbgrader_config.py``, ``submitted/``,
        ``autograded/``). The gradebook is the one its nbgrader config names
        (``c.CourseDirectory.db_url``; by default ``gradebook.db`` there).
    assignment : str, default "checkpoint"

    Returns
    -------
    GradeTable

    Raises
    ------
    course_grading.gradebook.GradebookMissing
        (a ``FileNotFoundError``) If the gradebook does not exist or cannot be reached.
    ValueError
        If the gradebook does not know ``assignment``, or its checkpoint has a question
        of a part the class's recorded choice leaves out (the assignment was generated
        from another source than the choice's).
    """
    from nbgrader.api import MissingEntry, Student

    from .variants import read_parts

    where = locate(course_dir)
    course = where.root
    with open_gradebook(where) as gb:
        try:
            asg = gb.find_assignment(assignment)
        except MissingEntry:
            known = sorted(a.name for a in gb.assignments)
            raise ValueError(
                f"assignment {assignment!r} is not in the gradebook {where.shown} "
                f"(it has {known})"
            ) from None
        notebooks = [nb.name for nb in asg.notebooks]
        answers = {c.name for nb in asg.notebooks for c in nb.solution_cells}
        questions: list[str] = []
        max_scores: dict[str, float] = {}
        for nb in asg.notebooks:
            for cell in nb.grade_cells:
                q = _question_of(cell.name, answers)
                if q not in max_scores:
                    questions.append(q)
                    max_scores[q] = 0.0
                max_scores[q] += float(cell.max_score)
        parts: tuple[int, ...] = ()
        if assignment == CHECKPOINT.assignment:
            parts = read_parts(course)
            left_out = {g for q in CHECKPOINT.dropped_by(parts) for g in (q.id, *q.checks)}
            stray = sorted({c.name for nb in asg.notebooks
                            for c in (*nb.grade_cells, *nb.solution_cells)} & left_out)
            if stray:
                raise ValueError(
                    f"the gradebook's {assignment} has {', '.join(stray)}, of parts the class's "
                    f"checkpoint does not cover (it covers parts "
                    f"{', '.join(map(str, parts))}, as {course / 'secret_source'} records): "
                    f"run nbgrader generate_assignment {assignment} --force again")

        people = {s.id: s for s in gb.db.query(Student).all()}
        roster = read_roster(gb.db)
        submitted_root = course / "submitted"
        students = set(people)
        if submitted_root.is_dir():
            students |= {p.parent.name for p in submitted_root.glob(f"*/{assignment}")}

        rows = []
        for student in sorted(students):
            try:
                row = _student_row(gb, course, assignment, notebooks, answers, student)
            except Exception as exc:  # one unreadable submission never stops the table
                row = StudentRow(student, f"{UNGRADED}: could not be read "
                                 f"({type(exc).__name__}: {str(exc)[:120]})")
            person = people.get(student)
            if person is not None:
                row.name = " ".join(p for p in (person.first_name, person.last_name) if p)
                row.email = person.email or ""
            entry = roster.get(student)
            if roster:
                row.roster = ("not on the roster" if entry is None else
                              "" if entry.enrolled else "left")
            if entry is not None:
                row.time_limit_factor = entry.time_limit_factor
                if row.extension_minutes is None and entry.extension_minutes:
                    row.extension_minutes = entry.extension_minutes  # not submitted yet
            if row.due is None and asg.duedate is not None:
                row.due = asg.duedate + dt.timedelta(minutes=row.extension_minutes or 0)
            rows.append(row)
    return GradeTable(assignment, questions, max_scores, rows, parts)


def _too_many_files(submitted: Path) -> str | None:
    """Why autograde refused a submission folder for its size (the limit autograde uses by
    default, course_grading.submission_shape), or None."""
    from .submission_shape import not_graded_why

    return not_graded_why(submitted)


#: What the table says of a submission holding a symbolic link: both graders refuse one
#: before any of its code runs (:class:`course_grading.sandbox.SubmissionLinkError`).
LINKED = "the submission contains symbolic links (not graded)"


def _links_or_size(submitted: Path) -> str | None:
    """Why autograde left no notebook for this submission folder, if the folder shows it:
    symbolic links (refused by both graders), or its size or shape; else None."""
    from course_exchange.exchange import symbolic_links

    return LINKED if symbolic_links(submitted) else _too_many_files(submitted)


def _student_row(gb, course, assignment, notebooks, answers, student) -> StudentRow:
    from nbgrader.api import MissingEntry

    submitted = course / "submitted" / student / assignment
    autograded = course / "autograded" / student / assignment
    if submitted.is_dir():
        for nb in notebooks:
            problem = _notebook_problem(submitted, nb)
            if problem:
                return StudentRow(student, f"{UNGRADED}: {problem}")
    try:
        sub = gb.find_submission(assignment, student)
    except MissingEntry:
        if submitted.is_dir():
            return StudentRow(student, f"{UNGRADED}: "
                              f"{_links_or_size(submitted) or 'not autograded yet'}")
        return StudentRow(student, "no submission")
    late = {"seconds_late": float(sub.total_seconds_late or 0.0),
            "penalty": float(sub.late_submission_penalty or 0.0),
            # nbgrader's SubmittedAssignment.duedate fails for an extension without a due date
            "due": sub.duedate if sub.assignment.duedate is not None else None,
            "extension_minutes": (int(sub.extension.total_seconds() // 60)
                                  if sub.extension else None)}
    for nb in notebooks:
        if not (autograded / f"{nb}.ipynb").exists():
            why = _links_or_size(submitted) if submitted.is_dir() else None
            return StudentRow(student, f"{UNGRADED}: "
                              f"{why or 'autograde failed (no autograded notebook)'}", **late)

    scores: dict[str, float | None] = {}
    pending: list[str] = []
    failed: list[str] = []
    crashed: dict[str, str] = {}
    problems: list[str] = []
    lost: dict[str, str] = {}
    for snb in sub.notebooks:
        errors = _check_errors(autograded / f"{snb.name}.ipynb")
        nb, _ = read_notebook(autograded / f"{snb.name}.ipynb")
        problems += grading_problems(nb or {})
        lost.update(lost_points(nb or {}))
        for grade in snb.grades:
            q = _question_of(grade.name, answers)
            if grade.auto_score is None and grade.manual_score is None:
                if grade.cell.cell_type == "code":
                    return StudentRow(student, f"{UNGRADED}: autograde failed (no score)")
                scores[q] = None
                pending.append(q)
                continue
            if scores.get(q, 0.0) is not None:
                scores[q] = scores.get(q, 0.0) + float(grade.score)
            if grade.name in DIAGNOSED_MISTAKES and grade.score < grade.max_score:
                ename = errors.get(grade.name)
                if ename is None or ename in _WRONG:
                    failed.append(grade.name)
                else:
                    crashed[grade.name] = ename
    status = "graded"
    if problems:
        status += "; " + "; ".join(problems)
    if pending:
        status += "; needs manual grade: " + ", ".join(dict.fromkeys(pending))
    order = list(DIAGNOSED_MISTAKES)
    failed.sort(key=order.index)
    crashed = {k: crashed[k] for k in sorted(crashed, key=order.index)}
    return StudentRow(student, status, scores, failed, crashed, problems, lost, **late)


# --------------------------------------------------------------------------------------
# command line
# --------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m course_grading.gradetable``: print the table and write a CSV."""
    p = argparse.ArgumentParser(
        prog="python -m course_grading.gradetable",
        description="Per-question grade table from the nbgrader gradebook; submissions "
        "that could not be graded are marked as such, never as 0.",
    )
    p.add_argument("assignment", nargs="?", default="checkpoint")
    p.add_argument("--course-dir", default=".", type=Path,
                   help="nbgrader course directory (default: the current directory)")
    p.add_argument("--csv", type=Path, default=None,
                   help="CSV file to write (default: <course-dir>/grades-<assignment>.csv)")
    args = p.parse_args(argv)
    try:
        table = build_grade_table(args.course_dir, args.assignment)
    except (GradebookMissing, ValueError) as exc:
        print(f"gradetable: {exc}", file=sys.stderr)
        return 2
    out = args.csv or args.course_dir / f"grades-{args.assignment}.csv"
    table.write_csv(out)
    print(table.to_text())
    n_ungraded = sum(not r.graded and r.status != "no submission" for r in table.rows)
    troubled = [r for r in table.rows if r.problems]
    print(f"\n{len(table.rows)} students, {n_ungraded} submission(s) could not be graded, "
          f"{len(troubled)} graded but stopped or broken; CSV written to {out}")
    for row in troubled:
        print(for_terminal(f"  {row.student}: {'; '.join(row.problems)}", width=None))
    late = [r for r in table.rows if r.seconds_late > 0]
    if late:
        print(f"{len(late)} submission(s) came after their due date (extensions included):")
        for row in late:
            penalty = (f"late penalty -{_fmt(row.penalty)}, final {_fmt(row.final or 0.0)}"
                       if row.penalty else "no penalty taken")
            print(for_terminal(f"  {row.student}: {row.late} late; {penalty}", width=None))
    left = [r.student for r in table.rows if r.roster == "left"]
    if left:
        print(for_terminal(f"{len(left)} student(s) left the course (kept, with their grades): "
                           f"{', '.join(left)}", width=None))
    return 0


if __name__ == "__main__":
    sys.exit(main())
