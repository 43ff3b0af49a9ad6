"""The class list: who is in the course, their names, their LMS key and their accommodations.

One command loads a class list into the gradebook nbgrader is configured with
(:mod:`course_grading.gradebook`), and the same command, run again with the new list, keeps
it in step as students join or leave::

    python -m course_grading.roster load class.csv
    python -m course_grading.roster load class.csv --dry-run     # say what would change
    python -m course_grading.roster show                         # the roster as stored

``class.csv`` is UTF-8 text with a header row. Columns (any order; the header's case and
spaces do not matter, ``First name`` is ``first_name``):

==================== ========= ==========================================================
column               required  what it holds
==================== ========= ==========================================================
``id``               yes       the student's id in the course: their JupyterHub / Unix
                               user name, the folder name under ``submitted/``
``first_name``       yes [*]_  as the student writes it (any characters: accents, commas,
``last_name``        yes [*]_  quotes)
``email``            yes
``lms_id``           no        the LMS's own key for the student: Canvas's user ID (the
                               ``ID`` column of Canvas's gradebook export), Moodle's ID
                               number (``lms_user_id`` is accepted as its name too)
``extension``        no        extra time on every due date: ``2d``, ``36h``, ``90m``,
                               ``1d 12h``, ``1w`` (empty: none)
``time_limit_factor`` no       an accommodation: every time limit on the student's code
                               (the cell limit, the notebook's budget) is multiplied by it;
                               a number from 1 to 10 (empty: 1)
==================== ========= ==========================================================

.. [*] One of the two may be empty (a student with one name).

Where each piece lives: the names, the email and the LMS key in nbgrader's own ``student``
table (formgrader, ``nbgrader export`` and every tool see them); the extension, the
time-limit factor and who is enrolled in a table of the course's own, ``course_roster``, in
the same database. Keeping it there rather than in a file next to the gradebook means one
place for all of a class's records: a PostgreSQL gradebook shared by several graders, the
backup of the gradebook, and both graders (``nbgrader autograde`` and
``course_grading.parallel``, which read the database at grading time) all see the same
roster. nbgrader ignores tables it does not know.

When a student leaves (is no longer in the list), they are marked as having left, with the
date; their ``student`` row, their submissions and their grades stay in the gradebook, the
grade table shows them with ``left`` and the LMS exports leave them out. A student who
comes back is enrolled again, with everything they had. Students that nbgrader created
itself (a submission from someone not on the list) are shown as ``not on the roster`` and
never changed by a load.

A file with a bad row changes nothing: every problem is reported with its row number, the
column, what arrived and what was expected.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import io
import math
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .gradebook import CourseGradebook, GradebookMissing, locate, open_gradebook
from .shown_ids import for_terminal

__all__ = [
    "COLUMNS",
    "RosterEntry",
    "RosterError",
    "RosterRow",
    "SyncReport",
    "format_minutes",
    "main",
    "parse_extension",
    "parse_roster",
    "read_roster",
    "roster_extension",
    "sync_roster",
    "time_limit_factor",
]

#: The columns a class list may have, required ones first.
COLUMNS = ("id", "first_name", "last_name", "email", "lms_id", "extension",
           "time_limit_factor")
REQUIRED = ("id", "first_name", "last_name", "email")
_ALIASES = {"lms_user_id": "lms_id", "student_id": "id", "username": "id",
            "first": "first_name", "last": "last_name", "firstname": "first_name",
            "lastname": "last_name", "e_mail": "email", "email_address": "email"}
#: nbgrader's columns hold at most this many characters.
MAX_TEXT = 128
MAX_FILE_BYTES = 5 << 20
MAX_ROWS = 20_000
MAX_EXTENSION_DAYS = 365
MAX_FACTOR = 10.0
#: The students' ids the course accepts (the same as a made-up student's, and a Unix name's).
STUDENT_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.@-]*")
_EMAIL = re.compile(r"[^@\s,;<>\"']+@[^@\s,;<>\"'.][^@\s,;<>\"']*\.[^@\s,;<>\"']+")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_UNITS = {"w": 7 * 24 * 60, "week": 7 * 24 * 60, "weeks": 7 * 24 * 60,
          "d": 24 * 60, "day": 24 * 60, "days": 24 * 60,
          "h": 60, "hour": 60, "hours": 60,
          "m": 1, "min": 1, "mins": 1, "minute": 1, "minutes": 1}
_EXTENSION_PART = re.compile(r"(\d+(?:\.\d+)?)\s*([a-z]+)")
TABLE = "course_roster"


class RosterError(ValueError):
    """A class list that cannot be loaded; ``problems`` has one line per problem."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.problems = problems
        shown = problems[:25]
        more = f"\n  ... and {len(problems) - len(shown)} more" if len(problems) > len(shown) \
            else ""
        super().__init__(f"{source}: nothing was loaded, {len(problems)} problem"
                         f"{'s' if len(problems) != 1 else ''}:\n  " + "\n  ".join(shown)
                         + more)


@dataclass(frozen=True)
class RosterRow:
    """One student of a class list, checked."""

    id: str
    first_name: str
    last_name: str
    email: str
    lms_id: str | None = None
    extension_minutes: int | None = None
    time_limit_factor: float = 1.0

    @property
    def name(self) -> str:
        return " ".join(p for p in (self.first_name, self.last_name) if p)


@dataclass(frozen=True)
class RosterEntry:
    """What the course keeps about one student beyond nbgrader's ``student`` table."""

    student: str
    enrolled: bool
    extension_minutes: int | None
    time_limit_factor: float
    joined: dt.datetime | None
    left: dt.datetime | None

    @property
    def extension(self) -> dt.timedelta | None:
        return None if not self.extension_minutes else dt.timedelta(
            minutes=self.extension_minutes)


# --------------------------------------------------------------------------------------
# reading a class list
# --------------------------------------------------------------------------------------


def parse_extension(text: str) -> int | None:
    """Minutes of an extension written as ``2d``, ``36h``, ``90m``, ``1d 12h`` or ``1w``.

    Raises
    ------
    ValueError
        Saying what was expected.

    Examples
    --------
    >>> parse_extension("1d 12h"), parse_extension("90 min"), parse_extension("")
    (2160, 90, None)
    >>> parse_extension("3")
    Traceback (most recent call last):
    ...
    ValueError: '3' has no unit; expected a time such as 2d, 36h, 90m or 1d 12h
    """
    text = text.strip().lower()
    if not text:
        return None
    if re.fullmatch(r"\d+(\.\d+)?", text):
        raise ValueError(f"{text!r} has no unit; expected a time such as 2d, 36h, 90m or 1d 12h")
    total = 0.0
    parts = list(_EXTENSION_PART.finditer(text))
    for match in parts:
        unit = match.group(2)
        if unit not in _UNITS:
            raise ValueError(f"{text!r}: unknown unit {unit!r}; expected w, d, h or m "
                             "(as in 2d, 36h, 90m or 1d 12h)")
        total += float(match.group(1)) * _UNITS[unit]
    if not parts or _EXTENSION_PART.sub("", text).replace(",", "").strip():
        raise ValueError(f"{text!r} is not a time; expected e.g. 2d, 36h, 90m or 1d 12h")
    minutes = round(total)
    if minutes > MAX_EXTENSION_DAYS * 24 * 60:
        raise ValueError(f"{text!r} is longer than {MAX_EXTENSION_DAYS} days")
    return minutes or None


def format_minutes(minutes: float) -> str:
    """A duration in words an instructor reads at a glance.

    >>> format_minutes(2160), format_minutes(90), format_minutes(0.5)
    ('1 d 12 h', '1 h 30 min', 'under a minute')
    """
    minutes = int(minutes)
    if minutes < 1:
        return "under a minute"
    days, rest = divmod(minutes, 24 * 60)
    hours, mins = divmod(rest, 60)
    parts = [f"{days} d" if days else "", f"{hours} h" if hours else "",
             f"{mins} min" if mins and not days else ""]
    return " ".join(p for p in parts if p) or f"{days} d"


def _column_name(raw: str) -> str:
    name = re.sub(r"[\s\-]+", "_", raw.strip().lower())
    return _ALIASES.get(name, name)


def _shown(value: str) -> str:
    return repr(for_terminal(value, 60))


def _check_text(value: str, column: str, problems: list[str], where: str) -> str:
    text = value.strip()
    if len(text) > MAX_TEXT:
        problems.append(f"{where}: {column} has {len(text)} characters; at most {MAX_TEXT} fit "
                        "in nbgrader's gradebook")
    elif not all(ch.isprintable() for ch in text):
        problems.append(f"{where}: {column} {_shown(text)} holds a control character "
                        "(a line break, a tab, an escape); expected plain text")
    return text


def _check_key(value: str, column: str, problems: list[str], where: str) -> None:
    """A value an LMS or the course matches on must reach it exactly as written, so it
    cannot be escaped in a CSV: one a spreadsheet would run as a formula is refused."""
    if value.startswith(_FORMULA_START):
        problems.append(f"{where}: {column} {_shown(value)} starts with {value[0]!r}, which a "
                        "spreadsheet runs as a formula; an id the LMS matches must be kept "
                        "exactly, so it cannot start with =, +, -, @ or a tab")


def _parse_row(cells: dict[str, str], where: str, problems: list[str]) -> RosterRow | None:
    before = len(problems)
    student = cells.get("id", "").strip()
    if not student:
        problems.append(f"{where}: id is empty; expected the student's user name "
                        "(their JupyterHub login, their folder under submitted/)")
    elif len(student) > MAX_TEXT:
        problems.append(f"{where}: id has {len(student)} characters; at most {MAX_TEXT}")
    elif not STUDENT_ID.fullmatch(student):
        problems.append(f"{where}: id {_shown(student)} is not a user name; expected "
                        "letters, digits, _ . @ - (not first)")
    first = _check_text(cells.get("first_name", ""), "first_name", problems, where)
    last = _check_text(cells.get("last_name", ""), "last_name", problems, where)
    if not first and not last:
        problems.append(f"{where}: first_name and last_name are both empty; expected the "
                        "student's name (one of the two may be empty)")
    email = cells.get("email", "").strip()
    if not email:
        problems.append(f"{where}: email is empty; expected the student's email address")
    elif len(email) > MAX_TEXT or not _EMAIL.fullmatch(email):
        problems.append(f"{where}: email {_shown(email)} is not an email address; expected "
                        "name@domain.tld")
    else:
        _check_key(email, "email", problems, where)
    lms_id = _check_text(cells.get("lms_id", ""), "lms_id", problems, where) or None
    if lms_id is not None:
        _check_key(lms_id, "lms_id", problems, where)
    extension = None
    try:
        extension = parse_extension(cells.get("extension", ""))
    except ValueError as exc:
        problems.append(f"{where}: extension {exc}")
    factor = 1.0
    raw_factor = cells.get("time_limit_factor", "").strip().lstrip("x×")
    if raw_factor:
        try:
            factor = float(raw_factor)
        except ValueError:
            factor = math.nan
        if not 1.0 <= factor <= MAX_FACTOR:
            problems.append(f"{where}: time_limit_factor {_shown(cells['time_limit_factor'])} "
                            f"is not a number from 1 to {MAX_FACTOR:g} (e.g. 1.5 for half as "
                            "much time again; below 1 would shorten the limits)")
    if len(problems) > before:
        return None
    return RosterRow(student, first, last, email, lms_id, extension, factor)


def parse_roster(source: str | Path | bytes, name: str | None = None) -> list[RosterRow]:
    """Read and check a class list (see the module's docstring for its columns).

    Parameters
    ----------
    source : path or bytes
        The CSV file, or its content.
    name : str, optional
        What to call it in messages (default: the path).

    Returns
    -------
    list of RosterRow
        In the file's order.

    Raises
    ------
    RosterError
        Listing every problem, each with its row (the header is row 1) and column.

    Examples
    --------
    >>> rows = parse_roster(b"id,first_name,last_name,email,time_limit_factor\\n"
    ...                     b"ada,Ada,\\"Lovelace, Countess\\",ada@example.org,2\\n")
    >>> rows[0].last_name, rows[0].time_limit_factor
    ('Lovelace, Countess', 2.0)
    >>> parse_roster(b"id,first_name,last_name,email\\n-x,A,B,not-an-email\\n", "c.csv")
    Traceback (most recent call last):
    ...
    course_grading.roster.RosterError: c.csv: nothing was loaded, 2 problems:
      row 2 (id '-x'): id '-x' is not a user name; expected letters, digits, _ . @ - (not first)
      row 2 (id '-x'): email 'not-an-email' is not an email address; expected name@domain.tld
    """
    if isinstance(source, bytes):
        data, label = source, name or "the class list"
    else:
        path = Path(source)
        label = name or str(path)
        try:
            size = path.stat().st_size
        except OSError as exc:
            raise RosterError(label, [f"cannot be read ({exc.strerror or exc})"]) from None
        if size > MAX_FILE_BYTES:
            raise RosterError(label, [f"is {size:,} bytes; a class list is at most "
                                      f"{MAX_FILE_BYTES:,}"])
        data = path.read_bytes()
    if len(data) > MAX_FILE_BYTES:
        raise RosterError(label, [f"is {len(data):,} bytes; a class list is at most "
                                  f"{MAX_FILE_BYTES:,}"])
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise RosterError(label, [f"row {line}: byte 0x{data[exc.start]:02x} is not UTF-8; save "
                                  "the file as 'CSV UTF-8' (in a spreadsheet: Save as, "
                                  "CSV UTF-8)"]) from None
    first_line = text.split("\n", 1)[0]
    delimiter = ";" if first_line.count(";") > first_line.count(",") else ","
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    try:
        header = next(reader)
    except StopIteration:
        raise RosterError(label, ["is empty; expected a header row (id,first_name,last_name,"
                                  "email,...) and one row per student"]) from None
    except csv.Error as exc:
        raise RosterError(label, [f"row 1: {exc}"]) from None
    columns = [_column_name(h) for h in header]
    problems: list[str] = []
    unknown = [h for h, c in zip(header, columns, strict=True) if c not in COLUMNS]
    if unknown:
        problems.append(f"row 1: unknown column{'s' if len(unknown) > 1 else ''} "
                        f"{', '.join(_shown(u) for u in unknown)}; expected "
                        f"{', '.join(COLUMNS)}")
    missing = [c for c in REQUIRED if c not in columns]
    if missing:
        problems.append(f"row 1: missing column{'s' if len(missing) > 1 else ''} "
                        f"{', '.join(missing)} (the header has {', '.join(header) or 'nothing'})")
    repeated = sorted({c for c in columns if columns.count(c) > 1 and c in COLUMNS})
    if repeated:
        problems.append(f"row 1: column{'s' if len(repeated) > 1 else ''} "
                        f"{', '.join(repeated)} given twice")
    if problems:
        raise RosterError(label, problems)

    rows: list[RosterRow] = []
    seen: dict[str, dict[str, int]] = {"id": {}, "email": {}, "lms_id": {}}
    line = 1
    try:
        for cells_list in reader:
            line = reader.line_num
            if not any(c.strip() for c in cells_list):
                continue  # a blank line
            if len(rows) >= MAX_ROWS:
                problems.append(f"has more than {MAX_ROWS:,} students")
                break
            if len(cells_list) != len(columns):
                problems.append(f"row {line}: {len(cells_list)} cells, expected "
                                f"{len(columns)} as in the header (a name with a comma must "
                                "be in double quotes)")
                continue
            cells = dict(zip(columns, cells_list, strict=True))
            where = f"row {line} (id {_shown(cells.get('id', '').strip())})"
            row = _parse_row(cells, where, problems)
            if row is None:
                continue
            for column, value in (("id", row.id), ("email", row.email.lower()),
                                  ("lms_id", row.lms_id)):
                if value is None:
                    continue
                if value in seen[column]:
                    problems.append(f"{where}: {column} {_shown(value)} is also in row "
                                    f"{seen[column][value]}; each student needs their own")
                else:
                    seen[column][value] = line
            rows.append(row)
    except csv.Error as exc:
        problems.append(f"row {reader.line_num}: {exc} (a quote inside a name is written \"\")")
    if problems:
        raise RosterError(label, problems)
    if not rows:
        raise RosterError(label, ["has a header but no students"])
    return rows


# --------------------------------------------------------------------------------------
# the course's own table
# --------------------------------------------------------------------------------------


def _table(metadata: Any = None) -> Any:
    from sqlalchemy import Boolean, Column, DateTime, Float, Integer, MetaData, String, Table

    return Table(
        TABLE, metadata if metadata is not None else MetaData(),
        Column("student_id", String(MAX_TEXT), primary_key=True),
        Column("enrolled", Boolean, nullable=False),
        Column("extension_minutes", Integer, nullable=True),
        Column("time_limit_factor", Float, nullable=False, default=1.0),
        Column("joined", DateTime, nullable=True),
        Column("left", DateTime, nullable=True),
    )


def _has_table(bind: Any) -> bool:
    from sqlalchemy import inspect

    return inspect(bind).has_table(TABLE)


def read_roster(bind: Any) -> dict[str, RosterEntry]:
    """Every student the course's roster knows (enrolled or left), by id.

    Parameters
    ----------
    bind : SQLAlchemy engine, connection or session
        The gradebook's database (``Gradebook.db`` will do).

    Returns
    -------
    dict of str to RosterEntry
        Empty when no roster was ever loaded.
    """
    from sqlalchemy import select

    engine = bind.get_bind() if hasattr(bind, "get_bind") else bind
    if not _has_table(engine):
        return {}
    table = _table()
    return {r.student_id: RosterEntry(r.student_id, bool(r.enrolled), r.extension_minutes,
                                      float(r.time_limit_factor or 1.0), r.joined, r.left)
            for r in bind.execute(select(table))}


_ENGINES: dict[str, Any] = {}


def _entry(db_url: str | None, student: str | None) -> RosterEntry | None:
    """The roster's entry of ``student`` in the gradebook at ``db_url`` (None if none)."""
    from sqlalchemy import create_engine, select

    if not db_url or not student:
        return None
    engine = _ENGINES.get(db_url)
    if engine is None:
        engine = _ENGINES[db_url] = create_engine(db_url)
    if not _has_table(engine):
        return None
    table = _table()
    with engine.connect() as con:
        r = con.execute(select(table).where(table.c.student_id == student)).first()
    if r is None:
        return None
    return RosterEntry(r.student_id, bool(r.enrolled), r.extension_minutes,
                       float(r.time_limit_factor or 1.0), r.joined, r.left)


def time_limit_factor(db_url: str | None, student: str | None) -> float:
    """The factor on every time limit of ``student``'s code (1.0 without an accommodation).

    The graders call it with nbgrader's ``resources["nbgrader"]`` (its ``db_url`` and
    ``student``) for each notebook they run.
    """
    entry = _entry(db_url, student)
    return entry.time_limit_factor if entry is not None else 1.0


def roster_extension(db_url: str | None, student: str | None) -> dt.timedelta | None:
    """The roster's extension of ``student`` on every due date, or None."""
    entry = _entry(db_url, student)
    return entry.extension if entry is not None else None


# --------------------------------------------------------------------------------------
# loading a class list into the gradebook
# --------------------------------------------------------------------------------------


@dataclass
class SyncReport:
    """What a load changed (or, with ``dry_run``, would change)."""

    joined: list[str] = field(default_factory=list)
    returned: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)
    updated: dict[str, list[str]] = field(default_factory=dict)
    unchanged: int = 0
    not_on_roster: list[str] = field(default_factory=list)
    extensions: dict[str, int] = field(default_factory=dict)
    factors: dict[str, float] = field(default_factory=dict)
    #: student -> assignments already autograded whose extension changed
    regrade: dict[str, list[str]] = field(default_factory=dict)
    dry_run: bool = False

    def render(self, source: str, total: int) -> str:
        def names(ids: list[str]) -> str:
            shown = [for_terminal(i) for i in ids[:12]]
            return ", ".join(shown) + (f" and {len(ids) - 12} more" if len(ids) > 12 else "")

        lines = [f"roster: {total} students in {for_terminal(source, None)}: "
                 f"{len(self.joined)} joined, {len(self.returned)} came back, "
                 f"{len(self.left)} left, {len(self.updated)} updated, {self.unchanged} "
                 f"unchanged" + (" (dry run: nothing was written)" if self.dry_run else ".")]
        if self.joined:
            lines.append(f"  joined: {names(self.joined)}")
        if self.returned:
            lines.append(f"  came back (enrolled again, with their grades): "
                         f"{names(self.returned)}")
        if self.left:
            lines.append(f"  left (kept in the gradebook with their grades, marked as left; "
                         f"the LMS exports leave them out): {names(self.left)}")
        for student, what in list(self.updated.items())[:12]:
            lines.append(f"  updated {for_terminal(student)}: {', '.join(what)}")
        if self.extensions:
            lines.append("  extensions on every due date: " + ", ".join(
                f"{for_terminal(s)} {format_minutes(m)}" for s, m in self.extensions.items()))
        if self.factors:
            lines.append("  time limits multiplied: " + ", ".join(
                f"{for_terminal(s)} x{f:g}" for s, f in self.factors.items()))
        for student, assignments in self.regrade.items():
            lines.append(
                f"  {for_terminal(student)}'s extension changed after autograding "
                f"{', '.join(assignments)}: its late penalty is recomputed when it is "
                f"autograded again (nbgrader autograde {assignments[0]} --force "
                f"--student {for_terminal(student)})")
        if self.not_on_roster:
            lines.append(f"  in the gradebook but not on the roster (left as they are): "
                         f"{names(self.not_on_roster)}")
        return "\n".join(lines)


def sync_roster(where: CourseGradebook, rows: Sequence[RosterRow], *,
                dry_run: bool = False, now: dt.datetime | None = None) -> SyncReport:
    """Make the gradebook's students and the course's roster match ``rows``.

    New students are added to nbgrader's ``student`` table; a student already there gets
    the list's names, email and LMS key; a student of an earlier list who is not in this
    one is marked as having left (nothing of theirs is deleted); a student who left and is
    back is enrolled again. Extensions and time-limit factors are stored in the course's
    ``course_roster`` table; a changed extension is also written to the student's existing
    submissions (nbgrader's own per-submission extension). Everything is written in one
    transaction.

    Parameters
    ----------
    where : CourseGradebook
        From :func:`course_grading.gradebook.locate`.
    rows : sequence of RosterRow
        From :func:`parse_roster`.
    dry_run : bool
        Work out the report, write nothing.
    now : datetime, optional
        When students who left, left (UTC); default now.
    """
    from nbgrader.api import Student, SubmittedAssignment
    from sqlalchemy import delete, insert

    now = now or dt.datetime.now(dt.UTC).replace(tzinfo=None)
    report = SyncReport(dry_run=dry_run)
    with open_gradebook(where, create=not dry_run) as gb:
        session = gb.db
        if not dry_run:
            _table().metadata.create_all(gb.engine)
        known = {s.id: s for s in session.query(Student).all()}
        roster = read_roster(session)
        listed = {r.id for r in rows}
        table = _table()
        new_entries = []
        for row in rows:
            old = roster.get(row.id)
            student = known.get(row.id)
            fields = {"first_name": row.first_name or None, "last_name": row.last_name or None,
                      "email": row.email, "lms_user_id": row.lms_id}
            if student is None:
                report.joined.append(row.id)
                if not dry_run:
                    session.add(Student(id=row.id, **fields))
            else:
                changed = [k for k, v in fields.items() if getattr(student, k) != v]
                if old is not None and (old.extension_minutes or None) != row.extension_minutes:
                    changed.append("extension")
                if old is not None and old.time_limit_factor != row.time_limit_factor:
                    changed.append("time_limit_factor")
                if old is not None and not old.enrolled:
                    report.returned.append(row.id)
                elif old is None:
                    report.joined.append(row.id)  # known to nbgrader, new on the roster
                elif changed:
                    report.updated[row.id] = changed
                else:
                    report.unchanged += 1
                if not dry_run:
                    for k, v in fields.items():
                        setattr(student, k, v)
            before = (old.extension_minutes or None) if old is not None else None
            if before != row.extension_minutes and student is not None:
                graded = _set_extensions(session, SubmittedAssignment, row.id,
                                         row.extension_minutes, dry_run)
                if graded:
                    report.regrade[row.id] = graded
            if row.extension_minutes:
                report.extensions[row.id] = row.extension_minutes
            if row.time_limit_factor != 1.0:
                report.factors[row.id] = row.time_limit_factor
            new_entries.append({
                "student_id": row.id, "enrolled": True,
                "extension_minutes": row.extension_minutes,
                "time_limit_factor": row.time_limit_factor,
                "joined": old.joined if old is not None and old.enrolled else now,
                "left": None})
        for student_id, old in sorted(roster.items()):
            if student_id in listed:
                continue
            if old.enrolled:
                report.left.append(student_id)
            new_entries.append({"student_id": student_id, "enrolled": False,
                                "extension_minutes": old.extension_minutes,
                                "time_limit_factor": old.time_limit_factor,
                                "joined": old.joined,
                                "left": old.left if not old.enrolled else now})
        report.not_on_roster = sorted(set(known) - listed - set(roster))
        if dry_run:
            session.rollback()
        else:
            session.execute(delete(table))
            if new_entries:
                session.execute(insert(table), new_entries)
            session.commit()
    return report


def _set_extensions(session: Any, submitted: Any, student: str, minutes: int | None,
                    dry_run: bool) -> list[str]:
    """Write the roster's extension to the student's existing submissions (nbgrader's own
    per-submission extension); return the assignments already autograded."""
    graded = []
    for sub in session.query(submitted).filter(submitted.student_id == student).all():
        if not dry_run:
            sub.extension = dt.timedelta(minutes=minutes) if minutes else None
        if any(nb.grades for nb in sub.notebooks):
            graded.append(sub.assignment.name)
    return sorted(graded)


# --------------------------------------------------------------------------------------
# command line
# --------------------------------------------------------------------------------------


def _show(where: CourseGradebook) -> str:
    from nbgrader.api import Student

    with open_gradebook(where) as gb:
        students = {s.id: s for s in gb.db.query(Student).all()}
        roster = read_roster(gb.db)
    if not roster:
        return (f"No roster loaded in the gradebook ({where.shown}) yet: "
                "python -m course_grading.roster load class.csv")
    head = ["id", "name", "email", "lms_id", "extension", "time limits", "enrolled"]
    rows = []
    for sid in sorted(roster, key=lambda s: (not roster[s].enrolled, s)):
        entry, s = roster[sid], students.get(sid)
        name = " ".join(p for p in (getattr(s, "first_name", ""), getattr(s, "last_name", ""))
                        if p)
        rows.append([sid, name, getattr(s, "email", "") or "", getattr(s, "lms_user_id", "")
                     or "", format_minutes(entry.extension_minutes)
                     if entry.extension_minutes else "",
                     f"x{entry.time_limit_factor:g}" if entry.time_limit_factor != 1 else "",
                     "yes" if entry.enrolled else
                     f"left {entry.left:%Y-%m-%d}" if entry.left else "left"])
    rows = [[for_terminal(c, 60) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
             for r in [head, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    enrolled = sum(e.enrolled for e in roster.values())
    lines.append(f"\n{enrolled} enrolled, {len(roster) - enrolled} left; gradebook: {where.shown}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m course_grading.roster load class.csv`` / ``show``."""
    p = argparse.ArgumentParser(
        prog="python -m course_grading.roster",
        description="Load a class list into the course's gradebook (nbgrader's students, "
        "with names, emails, LMS keys, extensions and time-limit factors), or show it.")
    sub = p.add_subparsers(dest="command", required=True)
    load = sub.add_parser("load", help="load or update the class list from a CSV file")
    load.add_argument("csv", type=Path, help="the class list (UTF-8 CSV with a header row)")
    load.add_argument("--dry-run", action="store_true", help="say what would change only")
    show = sub.add_parser("show", help="print the roster as the gradebook holds it")
    for sp in (load, show):
        sp.add_argument("--course-dir", default=".", type=Path,
                        help="nbgrader course directory (default: the current directory)")
    args = p.parse_args(argv)
    try:
        where = locate(args.course_dir)
        if args.command == "show":
            print(_show(where))
            return 0
        rows = parse_roster(args.csv)
        report = sync_roster(where, rows, dry_run=args.dry_run)
    except (RosterError, GradebookMissing) as exc:
        print(f"roster: {exc}", file=sys.stderr)
        return 2
    print(report.render(str(args.csv), len(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
