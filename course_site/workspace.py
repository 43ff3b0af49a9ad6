"""A student's own copies of the lessons, and the rules that keep them: one implementation
for ``./course copies`` (``./course lab``, ``./course reset``) at home and for the class's
JupyterHub (:mod:`course_site.hub_lessons`). Standard library only: ``./course`` imports it
before any environment exists.

The rules, with ``lessons`` the course's folder (never written here) and ``workspace`` the
student's:

- every course file the workspace lacks is copied into it; a lesson as
  :func:`course_site.lessons.students_copy` makes it (no stored output that answers a guess
  before the student is asked), any other file (and a lesson that cannot be read as a
  notebook: a merge left half done) as it is;
- the record ``.course-copies.json`` holds each copy's source: the SHA-256 of what was
  written. A copy whose SHA-256 is still the one recorded was never changed by the student,
  and follows a new version of its lesson; a copy the student changed is never overwritten;
- a file that was in the workspace before the record named it is the student's, left alone;
- :func:`reset_lesson` starts one lesson again from the course's version and keeps the
  student's copy in ``backups/``.

A copy is written in one step (a file beside it, then renamed over it): a copy cut short
by a killed process would otherwise look like the student's edit and be kept for good.

Examples
--------
>>> import tempfile
>>> with tempfile.TemporaryDirectory() as d:
...     course, mine = Path(d, "course"), Path(d, "mine")
...     course.mkdir()
...     _ = (course / "notes.txt").write_text("the course's words")
...     first = fill(course, mine)
...     _ = (mine / "notes.txt").write_text("my words")
...     _ = (course / "notes.txt").write_text("the course's new words")
...     again = fill(course, mine)
...     first.added, again.changed, (mine / "notes.txt").read_text()
(['notes.txt'], ['notes.txt'], 'my words')
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from course_site.lessons import NOT_LESSONS, students_copy

__all__ = [
    "BACKUPS",
    "MANIFEST",
    "Filled",
    "WorkspaceError",
    "copy_lesson",
    "course_files",
    "current_shas",
    "fill",
    "read_manifest",
    "reset_lesson",
    "sha256",
    "students_bytes",
    "write_manifest",
]

# In the workspace: which lesson each copy came from (its SHA-256), and where reset keeps
# the copies it replaces.
MANIFEST = ".course-copies.json"
BACKUPS = "backups"


class WorkspaceError(Exception):
    """The workspace's record cannot be used: the message says what was expected and found."""


@dataclass
class Filled:
    """What :func:`fill` did, as lists of paths relative to the workspace.

    Attributes
    ----------
    first : bool
        The workspace had no record before (its copies were made now).
    added : list of str
        Copied because the workspace lacked them.
    updated : list of str
        Untouched copies replaced by the course's new version.
    changed : list of str
        Copies the student changed, kept although the course changed their lesson.
    moved : list of str
        Lessons the caller's ``in_place`` named: copied with the student's edits.
    as_is : dict of str to str
        Lessons that are not notebooks the course can read (why), copied as they are.
    failed : dict of str to str
        Files that could not be copied (why); the others were.
    """

    first: bool = False
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    moved: list[str] = field(default_factory=list)
    as_is: dict[str, str] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)


def sha256(path: Path) -> str:
    """The SHA-256 of the file at ``path``, in hex."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def course_files(lessons: Path, workspace: Path | None = None) -> list[str]:
    """The course's files in ``lessons`` (lessons, and any figure or data they link to), as
    POSIX paths relative to it, sorted; never the workspace (when it lies inside), a hidden
    file or a cache."""
    inside = workspace.resolve() if workspace is not None else None
    found = []
    for folder, dirs, files in os.walk(lessons):
        here = Path(folder)
        dirs[:] = sorted(d for d in dirs if d not in NOT_LESSONS and not d.startswith(".")
                         and (here / d).resolve() != inside)
        found += [(here / f).relative_to(lessons).as_posix() for f in files
                  if not f.startswith(".")]
    return sorted(found)


def read_manifest(workspace: Path) -> dict[str, str | None]:
    """The workspace's record: each copy's path -> SHA-256 of what was copied (None: a file
    that was there before the course made its copies).

    Raises
    ------
    WorkspaceError
        When the record cannot be read, or holds something else than ``{"copies": {...}}``.
    """
    path = workspace / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, RecursionError) as exc:
        why = (f"nested deeper than Python's json reads: {exc}"
               if isinstance(exc, RecursionError) else exc)
        raise WorkspaceError(
            f"cannot read {path} ({why}); it records which version of each lesson your "
            "copies came from: move it away to start the record again") from exc
    copies = data.get("copies") if isinstance(data, dict) else None
    if not isinstance(copies, dict) or not all(
            isinstance(v, str | None) for v in copies.values()):
        raise WorkspaceError(
            f"{path} must hold {{\"copies\": {{lesson: sha256}}}} (got {str(data)[:80]})")
    return copies


def _write_whole(dest: Path, data: bytes) -> None:
    """Write ``data`` to ``dest`` in one step: a file beside it, renamed over it."""
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, dest)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_manifest(workspace: Path, copies: Mapping[str, str | None]) -> None:
    """Write the workspace's record (in one step)."""
    _write_whole(workspace / MANIFEST, (json.dumps(
        {"copies": dict(sorted(copies.items()))}, indent=1) + "\n").encode("utf-8"))


def _students_bytes(lessons: Path, rel: str) -> tuple[bytes, str | None]:
    """The course's ``rel`` as a student's copy holds it, and why it was taken as it is
    (None: it was not, or it is no lesson)."""
    data = (lessons / rel).read_bytes()
    if not rel.endswith(".ipynb"):
        return data, None
    try:
        return students_copy(data), None
    except (UnicodeDecodeError, ValueError) as exc:
        # not a lesson as the course writes them (a file edited in notebooks/ itself, a
        # merge left half done): copied as it is, so that nothing stops the lab or is lost
        return data, f"not a notebook the course can read ({exc})"


def students_bytes(lessons: Path, rel: str) -> bytes:
    """The course's ``rel`` as a student's copy holds it: a lesson without the stored
    outputs that answer its guesses and exercises, any other file (and a notebook that is
    not one) as it is."""
    return _students_bytes(lessons, rel)[0]


def copy_lesson(lessons: Path, workspace: Path, rel: str, data: bytes | None = None) -> str:
    """Copy the course's ``rel`` into the workspace as a student's copy (or ``data``, when
    given, as it is); return the SHA-256 of what was written."""
    dest = workspace / rel
    dest.parent.mkdir(parents=True, exist_ok=True)
    data = students_bytes(lessons, rel) if data is None else data
    _write_whole(dest, data)
    return hashlib.sha256(data).hexdigest()


def current_shas(lessons: Path, rel: str) -> tuple[str, str]:
    """SHA-256 of the course's ``rel`` as a student's copy holds it, and as the course holds
    it (what a record from before students' copies lost their answers' outputs says)."""
    return (hashlib.sha256(students_bytes(lessons, rel)).hexdigest(), sha256(lessons / rel))


def fill(lessons: Path, workspace: Path,
         in_place: Callable[[], Mapping[str, str]] | None = None) -> Filled:
    """Copy into ``workspace`` each course file of ``lessons`` it lacks; update untouched
    copies whose lesson changed; keep changed ones. The workspace is made (mode 0700) if
    it is not there.

    Parameters
    ----------
    lessons : Path
        The course's folder of lessons; only read.
    workspace : Path
        The student's folder of copies.
    in_place : callable, optional
        Called once, when a copy is missing: the lessons the student edited in ``lessons``
        itself (path -> SHA-256 of the course's version). Those are copied with the
        student's edits and recorded as the course's version (``./course`` asks git).

    Returns
    -------
    Filled
        What was copied, updated, kept; files that could not be copied are in ``failed``
        (the others are copied all the same).

    Raises
    ------
    WorkspaceError
        When the record cannot be read (nothing is copied then).
    """
    done = Filled(first=not (workspace / MANIFEST).exists())
    workspace.mkdir(mode=0o700, parents=True, exist_ok=True)
    copies = read_manifest(workspace)
    edited: Mapping[str, str] | None = None
    for rel in course_files(lessons, workspace):
        dest = workspace / rel
        recorded = copies.get(rel)
        try:
            data, why = _students_bytes(lessons, rel)
            if why is not None:
                done.as_is[rel] = why
            if not dest.exists() and not dest.is_symlink():
                edited = (in_place() if in_place else {}) if edited is None else edited
                if rel in edited:  # their edits, copied whole: a change of theirs
                    copy_lesson(lessons, workspace, rel, (lessons / rel).read_bytes())
                    copies[rel] = edited[rel]
                    done.moved.append(rel)
                else:
                    copies[rel] = copy_lesson(lessons, workspace, rel, data)
                done.added.append(rel)
            elif rel not in copies:
                copies[rel] = None  # the student's file from before: theirs, left as it is
            elif recorded is None or recorded in (hashlib.sha256(data).hexdigest(),
                                                  sha256(lessons / rel)):
                continue
            elif dest.is_file() and sha256(dest) == recorded:
                copies[rel] = copy_lesson(lessons, workspace, rel, data)
                done.updated.append(rel)
            else:
                done.changed.append(rel)
        except OSError as exc:
            done.failed[rel] = f"{type(exc).__name__}: {exc}"
    write_manifest(workspace, copies)
    return done


def reset_lesson(lessons: Path, workspace: Path, rel: str) -> Path | None:
    """Start the copy of ``rel`` again from the course's current version; return where the
    student's copy before was kept (in ``backups/``), or None when it had no change of
    theirs (or was not there).

    Raises
    ------
    WorkspaceError
        When the record cannot be read.
    """
    workspace.mkdir(mode=0o700, parents=True, exist_ok=True)
    copies = read_manifest(workspace)
    dest = workspace / rel
    kept = None
    if dest.exists() and sha256(dest) not in current_shas(lessons, rel):
        backups = workspace / BACKUPS
        backups.mkdir(exist_ok=True)
        n = 1
        while (kept := backups / f"{dest.stem}-{n}{dest.suffix}").exists():
            n += 1
        os.replace(dest, kept)
    copies[rel] = copy_lesson(lessons, workspace, rel)
    write_manifest(workspace, copies)
    return kept
