"""nbgrader's filesystem exchange, with ``collect`` reading ``inbound`` as hostile.

Everything in ``inbound`` was made by a student, who chooses its name, its files and its
``timestamp.txt``, and can change them at any time. Plain ``nbgrader collect``:

- aborts for the whole class on one folder whose name or timestamp does not parse;
- takes ``nbgrader submit --student=<someone else>`` as the other student's (newest wins),
  with a logged warning only;
- copies, with the instructor's rights, whatever a symbolic link in a submission points to
  (a link to ``source/`` puts the solutions into the student's submission), and stops
  the whole collect at a named pipe;
- takes the submission time from the folder's name and ``timestamp.txt``, which the student
  can rewrite after the due date to hide a late submission.

:class:`OwnerCheckedCollect` (in the instructor's course ``nbgrader_config.py``)::

    c.ExchangeFactory.collect = "course_exchange.exchange.OwnerCheckedCollect"

skips and logs unparsable names, refuses submissions not wholly owned by the Unix user they
name or holding anything but regular files and folders (:mod:`course_exchange.inbound` reads
them through file descriptors, never following links), and records the **server time**: the
latest inode change time of the submission, which no student can set back. Refused
submissions stay in the exchange; each refusal is logged as an error naming the submission,
the student it claims and why.

Plain nbgrader also leaves every submission world-readable (folder 0777, files 0644), hidden
only by an unguessable name in an ``inbound`` folder nobody can list. :class:`PrivateSubmit`,
set in the global config that students' nbgrader reads, closes that: the exchange's
``inbound`` is setgid to the instructor's group, so a submission's folder belongs to that
group, and ``PrivateSubmit`` gives it mode 0770: the student and the instructor, nobody
else, can enter it::

    c.ExchangeFactory.submit = "course_exchange.exchange.PrivateSubmit"

With per-student variants (``course_grading.personal``), the instructor's release puts
each student's own notebook in ``<exchange>/<course>/personal/<assignment>/<student>/``,
readable by that student only; :class:`PersonalFetch`, set in the same global config,
gives it to them in place of the class's template::

    c.ExchangeFactory.fetch_assignment = "course_exchange.exchange.PersonalFetch"

``PrivateSubmit`` also refuses ``--student=<someone else>`` at once, in one line, where
plain nbgrader says the submission succeeded and lists it as the student's own until
collect refuses it.
"""

from __future__ import annotations

import glob
import os
import pwd
import re
import shutil
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.exchange.default.fetch_assignment import ExchangeFetchAssignment
from nbgrader.exchange.default.submit import ExchangeSubmit
from nbgrader.utils import check_mode
from traitlets import Float, Integer

from .inbound import (
    Limits,
    Refused,
    collected_time,
    format_timestamp,
    install_collected,
    parse_inbound_name,
    read_submission,
)

__all__ = ["PERSONAL", "OwnerCheckedCollect", "PersonalFetch", "PrivateSubmit",
           "personal_folder", "submit_as_other_message", "symbolic_links"]

SUBMISSION_DIR_MODE = 0o770

#: The folder of a course in the exchange (and of an ngshare release) that holds each
#: student's own notebooks: ``personal/<assignment>/<student>/`` (ngshare:
#: ``personal/<student>/``).
PERSONAL = "personal"

# A student id that names one folder (nbgrader's own ids are of this kind).
_STUDENT_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.@-]{0,127}")


def personal_folder(course_path: Path, assignment: str, student: str) -> Path:
    """Where ``student``'s own notebooks of ``assignment`` are in a course's exchange folder.

    Raises
    ------
    ValueError
        If ``student`` or ``assignment`` could name anything but one folder.

    Examples
    --------
    >>> personal_folder(Path("/x/course"), "checkpoint", "alice")
    PosixPath('/x/course/personal/checkpoint/alice')
    >>> personal_folder(Path("/x/course"), "checkpoint", "../bob")
    Traceback (most recent call last):
    ...
    ValueError: student id '../bob' must be a plain name (letters, digits, _ . @ -)
    """
    for what, name in (("student id", student), ("assignment", assignment)):
        if not _STUDENT_ID.fullmatch(name) or name in (".", ".."):
            raise ValueError(f"{what} {name!r} must be a plain name (letters, digits, _ . @ -)")
    return Path(course_path) / PERSONAL / assignment / student


def symbolic_links(path: str | os.PathLike[str]) -> list[str]:
    """The symbolic links in a submission directory, as ``"name -> target"`` lines.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     os.symlink("/etc/hostname", os.path.join(d, "notes.txt"))
    ...     symbolic_links(d)
    ['notes.txt -> /etc/hostname']
    """
    found = []
    for top, dirs, files in os.walk(path, followlinks=False):
        for name in sorted(dirs + files):
            entry = os.path.join(top, name)
            if os.path.islink(entry):
                found.append(f"{os.path.relpath(entry, path)} -> {os.readlink(entry)}")
    return sorted(found)


class OwnerCheckedCollect(ExchangeCollect):
    """``nbgrader collect`` that reads ``inbound`` as hostile and times submissions itself.

    - A folder whose name does not parse is skipped and logged; the others are collected
      (plain nbgrader aborts the whole collect).
    - A submission is collected only if every file and folder in it belongs to the Unix
      user it names, and it holds nothing but regular files and folders, within the limits
      (:class:`course_exchange.inbound.Limits`, from nbgrader's ``max_dir_size`` and
      ``max_file_size`` and :attr:`max_files`). Otherwise it is refused, logged, left in the
      exchange, and the student's newest acceptable submission is collected instead.
    - The submission time is the server time (:func:`course_exchange.inbound.read_submission`:
      the latest inode change time, which no student can set back), never the name's
      timestamp or ``timestamp.txt``: the collected copy's ``timestamp.txt``, which autograde
      compares with the due date, holds the server time. A student who claims another time
      is logged.
    - A copy that fails for one student (a file changed or vanished mid-copy, a full disk)
      leaves that student's earlier collected copy in place and the others are collected.
    """

    max_files = Integer(1000, help="Refuse a submission holding more files than this.").tag(
        config=True)
    claim_tolerance = Float(
        120.0, help="Seconds a student's claimed submission time may differ from the server "
        "time before collect logs it.").tag(config=True)

    def _limits(self) -> Limits:
        cd = self.coursedir
        return Limits(max_files=self.max_files, max_bytes=1000 * cd.max_dir_size,
                      max_file_bytes=1000 * cd.max_file_size, exclude=tuple(cd.ignore),
                      include=tuple(cd.include))

    def _path_to_record(self, path: str) -> dict | None:
        """The record of one inbound folder, or None (logged) when its name does not parse."""
        filename = os.path.basename(path)
        try:
            name = parse_inbound_name(filename, self.coursedir.assignment_id)
        except ValueError as err:
            self.log.error("Skipping %s: %s. It stays in the exchange; the other submissions "
                           "are collected", filename, err)
            return None
        record = {"username": name.student_id, "filename": filename, "claimed": name.claimed,
                  "timestamp": None, "genuine": False}
        try:
            uid = pwd.getpwnam(name.student_id).pw_uid
        except KeyError:
            self._refuse(record, f"no Unix user {name.student_id!r}")
            return record
        try:
            read = read_submission(path, uid, self._limits())
        except Refused as why:
            self._refuse(record, str(why))
            return record
        record.update(timestamp=read.server_time, genuine=True, uid=uid)
        if abs((read.server_time - name.claimed).total_seconds()) > self.claim_tolerance:
            self.log.warning(
                "Submission %s claims to be from %s; the server saw it last changed at %s, "
                "which is the time recorded", filename, format_timestamp(name.claimed),
                format_timestamp(read.server_time))
        return record

    def _refuse(self, record: dict, why: str) -> None:
        record["why"] = why
        self.log.error("Refusing submission %s by %r: %s. Expected only regular files and "
                       "folders owned by that student; it stays in the exchange and is not "
                       "collected", record["filename"], record["username"], why)

    def init_src(self) -> None:
        if self.coursedir.course_id == "":
            self.fail("No course id specified. Re-run with --course flag.")
        self.course_path = os.path.join(self.root, self.coursedir.course_id)
        self.inbound_path = os.path.join(self.course_path, "inbound")
        if not os.path.isdir(self.inbound_path):
            self.fail(f"Course not found: {self.inbound_path}")
        if not check_mode(self.inbound_path, read=True, execute=True):
            self.fail(f"You don't have read permissions for the directory: {self.inbound_path}")
        student_id = self.coursedir.student_id or "*"
        pattern = os.path.join(glob.escape(self.inbound_path),
                               f"{student_id}+{self.coursedir.assignment_id}+*")
        records = [r for r in map(self._path_to_record, sorted(glob.glob(pattern))) if r]
        with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gb:
            try:
                self.duedate = gb.find_assignment(self.coursedir.assignment_id).duedate
            except MissingEntry:
                self.duedate = None
        self.candidates: dict[str, list[dict]] = {}
        for r in records:
            if r["genuine"]:
                self.candidates.setdefault(r["username"], []).append(r)
        for name in sorted({r["username"] for r in records} - set(self.candidates)):
            self.log.error("No submission of %r could be collected: every one was refused "
                           "(see above)", name)
        self.src_records = []
        for _student, recs in sorted(self.candidates.items()):
            recs.sort(key=lambda r: r["timestamp"], reverse=True)
            if self.duedate is not None and self.before_duedate:
                # the newest on-time submission first, then the rest newest first
                recs.sort(key=lambda r: r["timestamp"] > self.duedate)
            self.src_records.append(recs[0])

    def init_dest(self) -> None:
        pass

    def copy_files(self) -> None:
        if not self.src_records:
            self.log.warning("No submissions of '%s' for course '%s' to collect",
                             self.coursedir.assignment_id, self.coursedir.course_id)
            return
        self.log.info("Processing %d submissions of '%s' for course '%s'",
                      len(self.src_records), self.coursedir.assignment_id,
                      self.coursedir.course_id)
        failed = []
        for record in self.src_records:
            student = record["username"]
            try:
                self._collect(record)
            except Exception as err:  # one student's files never stop the others'
                failed.append(student)
                self.log.error("Could not collect %r's submission %s: %s: %s. Their earlier "
                               "collected copy, if any, is unchanged; the others are collected",
                               student, record["filename"], type(err).__name__, err)
        if failed:
            self.log.error("Collected %d of %d submissions; not collected: %s",
                           len(self.src_records) - len(failed), len(self.src_records),
                           ", ".join(failed))

    def _collect(self, record: dict) -> None:
        student = record["username"]
        assignment = self.coursedir.assignment_id
        dest = Path(self.coursedir.format_path(self.coursedir.submitted_directory, student,
                                               assignment))
        if dest.is_dir():
            existing = collected_time(dest)
            newer = existing is None or record["timestamp"] > existing
            changed = existing != record["timestamp"]
            if not (self.update and newer) and not (self.before_duedate and changed):
                self.log.info("%s: %s %s", "No newer submission to collect" if self.update
                              else "Submission already exists, use --update to update",
                              student, assignment)
                return
        dest.parent.mkdir(parents=True, exist_ok=True)
        fresh = dest.with_name(f".{dest.name}.new-{os.getpid()}")
        shutil.rmtree(fresh, ignore_errors=True)
        try:
            read = read_submission(os.path.join(self.inbound_path, record["filename"]),
                                   record["uid"], self._limits(), dest=fresh)
        except Refused as why:  # changed between the first look and the copy
            raise RuntimeError(f"refused while copying: {why}") from None
        try:
            # The time autograde compares with the due date: what the server saw, not the
            # claim. The student's own timestamp.txt (a file, or a folder) goes first.
            stamp = fresh / "timestamp.txt"
            if stamp.is_dir():
                shutil.rmtree(stamp)
            stamp.write_text(format_timestamp(read.server_time))
            for skipped in read.skipped:
                self.log.debug("Not collected from %s: %s", record["filename"], skipped)
            install_collected(fresh, dest, self.log, student, assignment)
        finally:  # a copy that was not installed is not left beside the collected one
            shutil.rmtree(fresh, ignore_errors=True)


class PersonalFetch(ExchangeFetchAssignment):
    """``nbgrader fetch_assignment`` that gives a student their own notebook of the release.

    When the release has per-student notebooks (``personal/<assignment>/`` exists in the
    course's exchange folder), the notebooks of the Unix user running the fetch replace the
    class's template in what they get; a student the instructor released none to is told
    so and gets nothing. The user is the process's own (``os.getuid``), not ``$USER``,
    which a student can set to a classmate's name; a classmate's notebook is readable by
    that classmate only anyway. Without per-student notebooks it is nbgrader's fetch.
    """

    def _own(self) -> Path | None:
        personal = Path(self.course_path) / PERSONAL / self.coursedir.assignment_id
        if not personal.is_dir():
            return None
        me = pwd.getpwuid(os.getuid()).pw_name
        try:
            own = personal_folder(Path(self.course_path), self.coursedir.assignment_id, me)
        except ValueError as exc:
            self.fail(str(exc))
        if not own.is_dir() or not os.access(own, os.R_OK | os.X_OK):
            self.fail(f"{self.coursedir.assignment_id} was released with a notebook of their "
                      f"own to each student, and there is none for {me!r}: ask your "
                      "instructor to add you to the class and release it again")
        return own

    def copy_files(self) -> None:
        own = self._own()
        super().copy_files()
        if own is None:
            return
        for path in sorted(own.iterdir()):
            target = Path(self.dest_path) / path.name
            if not path.is_file() or path.is_symlink() or path.suffix != ".ipynb":
                continue
            if self.replace_missing_files and target.exists():
                continue  # fetched before: the student's work is kept
            shutil.copyfile(path, target)
        self.log.info("Your own notebook of %s (numbers of your own): %s",
                      self.coursedir.assignment_id, self.dest_path)
def submit_as_other_message(claimed: str, me: str, why: str) -> str:
    """The one line a student reads after ``nbgrader submit --student=<someone else>``.

    The names are shown with :func:`repr`, so that a name holding terminal escapes or a
    newline stays one plain line.

    >>> print(submit_as_other_message("bob", "alice", "collect refuses it"))
    Not submitted: you are 'alice' and asked to submit as 'bob'; collect refuses it. Run nbgrader submit without --student.
    """  # noqa: E501 (one line, as printed)
    return (f"Not submitted: you are {me!r} and asked to submit as {claimed!r}; {why}. Run "
            "nbgrader submit without --student.")


class PrivateSubmit(ExchangeSubmit):
    """``nbgrader submit`` whose submission only the student and the instructor's group enter.

    The submission's folders get mode 0770. They belong to the instructor's group because
    ``inbound`` is setgid to it (the modes in docs/deploy.md); if they do not (an exchange
    set up otherwise), nbgrader's own modes are left alone, so that the instructor can still
    collect, and a warning says why.
    """

    def start(self) -> None:
        """Refuse ``--student=<someone else>`` before anything is written or remembered."""
        me = pwd.getpwuid(os.getuid()).pw_name
        claimed = self.coursedir.student_id
        if claimed not in ("", "*", me):
            self.fail(submit_as_other_message(claimed, me, "the instructor's collect refuses "
                                              "a submission made by another Unix user"))
        super().start()

    def copy_files(self) -> None:
        super().copy_files()
        dest = Path(self.inbound_path) / self.assignment_filename
        group = os.stat(self.inbound_path).st_gid
        dirs = [dest, *(p for p in dest.rglob("*") if p.is_dir() and not p.is_symlink())]
        if any(d.stat().st_gid != group for d in dirs):
            self.log.warning(
                "Submission left readable by everyone who knows its name: %s is not setgid "
                "to the instructor's group (see docs/deploy.md)", self.inbound_path)
            return
        for d in dirs:
            d.chmod(SUBMISSION_DIR_MODE)
