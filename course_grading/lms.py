"""Grades an LMS imports: Canvas's gradebook CSV and Moodle's grade-import CSV.

One assignment per file, one row per student, each student matched on the LMS's own key
from the class list (:mod:`course_grading.roster`, column ``lms_id``)::

    python -m course_grading.lms canvas checkpoint       # writes canvas-checkpoint.csv
    python -m course_grading.lms moodle checkpoint       # writes moodle-checkpoint.csv

The grade is the grade table's final total (:mod:`course_grading.gradetable`): the points
of every question after nbgrader's late penalty. Only grades that are final go out; every
student left out is named, with the reason: a submission that could not be graded, an
answer waiting for a manual grade, no submission (``--no-submission-zero`` sends 0
instead), a student who left the course, one without an LMS key. An LMS reads an empty
cell differently (Canvas: unchanged; Moodle: no grade, which replaces the one it has), so a
student without a final grade is not in the file at all.

**Canvas** (Grades, Import): the columns of Canvas's own gradebook export, ``Student``,
``ID``, ``SIS User ID``, ``SIS Login ID``, ``Section``, then the assignment, and a
``Points Possible`` row. Canvas matches a row on ``ID``, its user ID (the roster's
``lms_id``); the assignment column matches the Canvas assignment whose title it is, or,
written as Canvas's export writes it, ``Title (12345)``, the assignment with that id
(``--column``). A title Canvas does not know becomes a new assignment.

**Moodle** (Grades, Import, CSV file): ``ID number``, ``Email address``, ``First name``,
``Last name`` and the assignment's column. In the import's mapping choose *Map from* ``ID
number`` to *Map to* ``useridnumber`` (or, with ``--match email``, ``Email address`` to
``useremail``), and map the assignment's column to its grade item. Moodle stops the whole
import at a row whose user it cannot find, so every row has the key it is matched on.

nbgrader's own ``nbgrader export`` (``grades.csv``) stays as it is.
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .gradebook import GradebookMissing, locate, open_gradebook
from .gradetable import GradeTable, build_grade_table
from .roster import read_roster
from .shown_ids import for_csv, for_terminal

__all__ = ["CANVAS_COLUMNS", "MOODLE_COLUMNS", "Export", "LmsExportError", "export", "main"]

CANVAS_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
MOODLE_COLUMNS = ["ID number", "Email address", "First name", "Last name"]
#: Column titles Canvas reads as something other than an assignment.
_CANVAS_NOT_ASSIGNMENTS = re.compile(
    r"Current Score|Current Points|Current Grade|Final Score|Final Points|Final Grade|"
    r"Override Score|Override Grade|Override Status|^(Student|LastName|FirstName|ID|"
    r"SIS User ID|SIS Login ID|Section|Integration ID|Root Account)$")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


class LmsExportError(ValueError):
    """An export that cannot be written as asked."""


@dataclass
class Export:
    """What an export wrote and what it left out."""

    path: Path
    lms: str
    assignment: str
    max_score: float
    rows: dict[str, float] = field(default_factory=dict)  # student -> grade
    left_out: dict[str, list[str]] = field(default_factory=dict)  # reason -> students

    def render(self) -> str:
        lines = [f"{self.path}: {len(self.rows)} students' grades for {self.assignment} "
                 f"(out of {_number(self.max_score)}), for {self.lms}'s import."]
        for reason, students in self.left_out.items():
            shown = ", ".join(for_terminal(s) for s in students[:10])
            more = f" and {len(students) - 10} more" if len(students) > 10 else ""
            lines.append(f"  left out, {reason}: {len(students)} ({shown}{more})")
        return "\n".join(lines)


def _number(x: float) -> str:
    """A grade as an LMS reads it: a plain decimal, at most two places, never 1e-05.

    >>> _number(9.0), _number(8.55), _number(1 / 3)
    ('9', '8.55', '0.33')
    """
    return f"{round(x, 2):.2f}".rstrip("0").rstrip(".")


def _key(value: str | None, what: str, student: str) -> str:
    if value and value.startswith(_FORMULA_START):
        raise LmsExportError(
            f"{for_terminal(student)}'s {what} {for_terminal(value)!r} starts with "
            f"{value[0]!r}: a spreadsheet would run it as a formula, and the LMS must read it "
            "exactly; correct it in the class list and load it again")
    return value or ""


def _grades(table: GradeTable, roster: dict, keys: dict[str, str | None],
            no_submission_zero: bool, key_name: str) -> tuple[dict[str, float],
                                                               dict[str, list[str]]]:
    """student -> final grade, and reason -> students left out."""
    grades: dict[str, float] = {}
    left_out: dict[str, list[str]] = {}

    def out(reason: str, student: str) -> None:
        left_out.setdefault(reason, []).append(student)

    for row in table.rows:
        entry = roster.get(row.student)
        if entry is None:
            out("not on the class list (python -m course_grading.roster load)", row.student)
        elif not entry.enrolled:
            out("left the course", row.student)
        elif not keys.get(row.student):
            out(f"no {key_name} on the class list", row.student)
        elif row.status == "no submission":
            if no_submission_zero:
                grades[row.student] = 0.0
            else:
                out("no submission (--no-submission-zero sends 0)", row.student)
        elif not row.graded:
            out("could not be graded (see the grade table; autograde again once fixed)",
                row.student)
        elif row.pending:
            out("an answer waits for a manual grade (formgrader's Manual Grading)",
                row.student)
        else:
            grades[row.student] = row.final or 0.0
    return grades, left_out


def export(course_dir: str | Path, lms: str, assignment: str = "checkpoint", *,
           out: str | Path | None = None, column: str | None = None, match: str = "lms_id",
           no_submission_zero: bool = False) -> Export:
    """Write one assignment's final grades as ``lms`` (``"canvas"`` or ``"moodle"``) imports them.

    Parameters
    ----------
    course_dir : path
        The nbgrader course directory; the gradebook is the one its config names.
    lms : {"canvas", "moodle"}
    assignment : str
    out : path, optional
        Default ``<course_dir>/<lms>-<assignment>.csv``.
    column : str, optional
        The assignment column's title (default: the assignment's name). For Canvas, its
        export's ``Title (id)`` picks the assignment by id.
    match : {"lms_id", "email"}
        Moodle only: the key its import matches (``ID number`` or ``Email address``).
    no_submission_zero : bool
        Send 0 for a student on the class list who handed nothing in.

    Raises
    ------
    LmsExportError
        No class list was loaded, an unknown LMS or key, a column title the LMS would not
        read as an assignment, or a key that cannot be written safely.
    course_grading.gradebook.GradebookMissing, ValueError
        As :func:`~course_grading.gradetable.build_grade_table`.
    """
    from nbgrader.api import Student

    if lms not in ("canvas", "moodle"):
        raise LmsExportError(f"the LMS must be canvas or moodle (got {lms!r})")
    if match not in ("lms_id", "email"):
        raise LmsExportError(f"--match must be lms_id or email (got {match!r})")
    if lms == "canvas" and match != "lms_id":
        raise LmsExportError("Canvas's import matches its own user ID: the class list's "
                             "lms_id (--match email is for Moodle)")
    title = (column or assignment).strip()
    if not title or not all(ch.isprintable() for ch in title) or title.startswith(
            _FORMULA_START):
        raise LmsExportError(f"the column title {title!r} must be plain text, not starting "
                             "with =, +, -, @ (a spreadsheet would run it as a formula)")
    if lms == "canvas" and _CANVAS_NOT_ASSIGNMENTS.search(title):
        raise LmsExportError(f"Canvas would not read a column titled {title!r} as an "
                             "assignment; use the assignment's title, e.g. 'Checkpoint (4711)'")
    where = locate(course_dir)
    with open_gradebook(where) as gb:
        roster = read_roster(gb.db)
        people = {s.id: s for s in gb.db.query(Student).all()}
    if not roster:
        raise LmsExportError(
            f"no class list in the gradebook ({where.shown}): the LMS exports match each "
            "student on the LMS's key from it; load it first with "
            "python -m course_grading.roster load class.csv")
    table = build_grade_table(course_dir, assignment)
    key_name = "email" if match == "email" else "lms_id"
    keys = {sid: (p.email if match == "email" else p.lms_user_id) for sid, p in people.items()}
    grades, left_out = _grades(table, roster, keys, no_submission_zero, key_name)
    max_score = sum(table.max_scores.values())
    path = Path(out) if out is not None else Path(course_dir) / f"{lms}-{assignment}.csv"
    rows: list[list[str]] = []
    for student, grade in grades.items():
        person = people[student]
        first, last = person.first_name or "", person.last_name or ""
        if lms == "canvas":
            name = ", ".join(p for p in (last, first) if p)  # Canvas's sortable name
            if "Points Possible" in name:  # Canvas would read the row as the maximum's
                name = ""
            rows.append([for_csv(name), _key(person.lms_user_id, "lms_id", student), "", "",
                         "", _number(grade)])
        else:
            rows.append([_key(person.lms_user_id or "", "lms_id", student),
                         _key(person.email or "", "email", student), for_csv(first),
                         for_csv(last), _number(grade)])
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\r\n")
        if lms == "canvas":
            w.writerow([*CANVAS_COLUMNS, title])
            w.writerow(["Points Possible", "", "", "", "", _number(max_score)])
        else:
            w.writerow([*MOODLE_COLUMNS, title])
        w.writerows(rows)
    return Export(path, "Canvas" if lms == "canvas" else "Moodle", assignment, max_score,
                  grades, left_out)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m course_grading.lms {canvas,moodle} ASSIGNMENT``."""
    p = argparse.ArgumentParser(
        prog="python -m course_grading.lms",
        description="Write one assignment's final grades (after late penalties) as a CSV "
        "that Canvas's or Moodle's grade import reads, matched on each student's LMS key "
        "from the class list.")
    p.add_argument("lms", choices=["canvas", "moodle"])
    p.add_argument("assignment", nargs="?", default="checkpoint")
    p.add_argument("--course-dir", default=".", type=Path,
                   help="nbgrader course directory (default: the current directory)")
    p.add_argument("--out", type=Path, default=None,
                   help="CSV file to write (default: <course-dir>/<lms>-<assignment>.csv)")
    p.add_argument("--column", default=None,
                   help="the assignment column's title as the LMS knows it (Canvas: "
                   "'Title (id)' from its export; default: the assignment's name)")
    p.add_argument("--match", choices=["lms_id", "email"], default="lms_id",
                   help="Moodle: match students on their ID number (lms_id, default) or email")
    p.add_argument("--no-submission-zero", action="store_true",
                   help="send 0 for a student on the class list who handed nothing in")
    args = p.parse_args(argv)
    try:
        done = export(args.course_dir, args.lms, args.assignment, out=args.out,
                      column=args.column, match=args.match,
                      no_submission_zero=args.no_submission_zero)
    except (LmsExportError, GradebookMissing, ValueError) as exc:
        print(f"lms: {exc}", file=sys.stderr)
        return 2
    print(done.render())
    return 0


if __name__ == "__main__":
    sys.exit(main())
