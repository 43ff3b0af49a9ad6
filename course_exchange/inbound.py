"""What ``nbgrader collect`` reads from the exchange's ``inbound``, read as if hostile.

Every folder in ``inbound`` was made by a student, who can name it, fill it and change it
at will, before and during collection. So the instructor's collect (``exchange.py``) reads
it through this module only:

- :func:`parse_inbound_name` parses ``<student>+<assignment>+<timestamp>+<random>`` and
  raises a clear :class:`ValueError` for anything else (plain nbgrader aborts the whole
  collect on one such name);
- :func:`read_submission` walks the folder through file descriptors (never following a
  link, never blocking on a pipe), refuses what must not be collected (symbolic links,
  anything but regular files and folders, files owned by someone else, more entries or
  bytes than the limits allow, anything the instructor cannot read), optionally copies it,
  and returns
  the **server time** of the submission: the latest inode change time (``ctime``) of the
  folder and everything in it. The kernel sets ``ctime`` to the current time whenever a
  file or folder is created, written, renamed, linked or has its mode changed, and no
  user can set it back; so a student who rewrites ``timestamp.txt`` or renames the folder
  to an earlier time only moves the server time later. The name's timestamp and
  ``timestamp.txt`` are what the student *claims*; collect records the server time.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from nbgrader.utils import parse_utc

__all__ = [
    "InboundName",
    "Limits",
    "Refused",
    "SubmissionRead",
    "collected_time",
    "count_entries",
    "format_timestamp",
    "install_collected",
    "parse_inbound_name",
    "read_submission",
    "server_time",
]

TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S.%f UTC"
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_CHUNK = 1 << 20


class Refused(Exception):
    """A submission collect will not take; the message says why (one or more reasons)."""


@dataclass(frozen=True)
class InboundName:
    """The parts of an inbound folder's name; ``claimed`` is naive UTC, as the student wrote it."""

    student_id: str
    assignment_id: str
    claimed: datetime
    random: str


@dataclass(frozen=True)
class Limits:
    """How much of a submission collect reads before refusing it.

    ``max_files`` bounds the entries of the submission: every file, folder, link or special
    file counts, those that collect skips too (100,000 empty folders cost nothing to store
    and stall nbgrader's autograde, whose listing of a submission is quadratic in them).
    ``max_bytes`` bounds the whole submission (nbgrader's ``max_dir_size``), ``max_file_bytes``
    skips larger single files with a warning (nbgrader's ``max_file_size``).
    """

    max_files: int = 1000
    max_bytes: int = 100_000_000
    max_file_bytes: int = 100_000_000
    max_depth: int = 16
    exclude: Sequence[str] = (".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback")
    include: Sequence[str] = ("*",)


@dataclass
class SubmissionRead:
    """What :func:`read_submission` found: server time, counts, files it skipped."""

    server_time: datetime
    files: int = 0
    bytes: int = 0
    skipped: list[str] = field(default_factory=list)
    #: Every name seen in the submission's folders (files, folders, links, skipped ones).
    entries: int = 0


def format_timestamp(when: datetime) -> str:
    """nbgrader's timestamp text for a naive-UTC (or aware) ``when``.

    Examples
    --------
    >>> format_timestamp(datetime(2026, 3, 1, 9, 30))
    '2026-03-01 09:30:00.000000 UTC'
    """
    if when.tzinfo is not None:
        when = when.astimezone(UTC).replace(tzinfo=None)
    return when.strftime(TIMESTAMP_FORMAT)


def server_time(ctime: float) -> datetime:
    """An inode's change time as a naive UTC datetime (what nbgrader compares with due dates).

    Examples
    --------
    >>> server_time(0.0)
    datetime.datetime(1970, 1, 1, 0, 0)
    """
    return datetime.fromtimestamp(ctime, tz=UTC).replace(tzinfo=None)


def parse_inbound_name(name: str, assignment_id: str) -> InboundName:
    """Split an inbound folder name ``<student>+<assignment>+<timestamp>+<random>``.

    Raises
    ------
    ValueError
        When the name has another shape, names another assignment, or its timestamp does
        not parse; the message quotes the name.

    Examples
    --------
    >>> parse_inbound_name("ada+checkpoint+2026-03-01 09:30:00.000000 UTC+f00d", "checkpoint")
    InboundName(student_id='ada', assignment_id='checkpoint', claimed=datetime.datetime(2026, 3, 1, 9, 30), random='f00d')
    >>> parse_inbound_name("ada+checkpoint+yesterday+f00d", "checkpoint")
    Traceback (most recent call last):
    ...
    ValueError: inbound folder 'ada+checkpoint+yesterday+f00d' must be named <student>+checkpoint+<timestamp>+<random> with a timestamp like '2026-03-01 09:30:00.000000 UTC' (got the timestamp 'yesterday')
    """  # noqa: E501 (doctest output is one line)
    shape = (f"inbound folder {name!r} must be named <student>+{assignment_id}+<timestamp>"
             "+<random>")
    parts = name.rsplit("+", 3)
    if len(parts) != 4 or not parts[0]:
        raise ValueError(f"{shape} (got {len(parts) - 1} '+' separators)")
    student_id, assignment, stamp, random = parts
    if assignment != assignment_id:
        raise ValueError(f"{shape} (got the assignment {assignment!r})")
    try:
        claimed = parse_utc(stamp)
    except (ValueError, OverflowError, TypeError) as err:
        raise ValueError(
            f"{shape} with a timestamp like '2026-03-01 09:30:00.000000 UTC' "
            f"(got the timestamp {stamp!r})") from err
    return InboundName(student_id, assignment, claimed, random)


def _ignored(name: str, is_file: bool, limits: Limits) -> bool:
    if any(fnmatch.fnmatch(name, g) for g in limits.exclude):
        return True
    return is_file and not any(fnmatch.fnmatch(name, g) for g in limits.include)


def read_submission(folder: str | os.PathLike[str], owner_uid: int | None,
                    limits: Limits = Limits(), dest: str | os.PathLike[str] | None = None,
                    ) -> SubmissionRead:
    """Check (and with ``dest``, copy) one inbound submission; return its server time.

    Parameters
    ----------
    folder : path-like
        The submission in ``inbound``.
    owner_uid : int or None
        The uid the student id names: every file and folder must be theirs. None skips
        the owner check (an exchange without Unix users).
    limits : Limits
        Bounds on files, bytes and depth; nbgrader's ignore globs.
    dest : path-like, optional
        Where to copy it. Must not exist; it is made only when the whole copy succeeded
        (written beside it first, then renamed), so a refused or failed copy leaves nothing.

    Returns
    -------
    SubmissionRead
        ``server_time`` is the latest ``ctime`` seen, read *after* each file's content.

    Raises
    ------
    Refused
        With every reason found: symbolic links, special files (pipes, sockets), files of
        other owners, unreadable entries, too many entries (of any kind), bytes or levels.
        Reading stops at the first entry past ``limits.max_files``.
    """
    problems: list[str] = []
    found = SubmissionRead(server_time=datetime.min)
    staging = None
    if dest is not None:
        dest = Path(dest)
        if os.path.lexists(dest):
            raise FileExistsError(f"the copy's destination must not exist (got {dest})")
        staging = dest.with_name(f".{dest.name}.collecting-{os.getpid()}")
        shutil.rmtree(staging, ignore_errors=True)
    try:
        top = os.open(os.fspath(folder), _DIR_FLAGS)
    except OSError as err:
        raise Refused(f"it cannot be read by the instructor ({_why(err)})") from None
    if count_entries(folder, limits.max_files) > limits.max_files:
        staging = None  # refused whatever else is found: nothing to copy (only the reasons)
    try:
        _walk(top, "", 0, owner_uid, limits, staging, problems, found)
    finally:
        os.close(top)
    if problems:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
        raise Refused("; ".join(problems))
    if staging is not None:
        staging.rename(dest)
    return found


def count_entries(folder: str | os.PathLike[str], limit: int) -> int:
    """The entries below ``folder`` (files, folders, links, pipes: every name), counted up
    to ``limit + 1``: however many there are, at most that many are looked at.

    Links are not followed. A folder that cannot be listed counts as itself only.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     for i in range(5):
    ...         os.makedirs(os.path.join(d, f"empty{i}", "inner"))
    ...     count_entries(d, 100), count_entries(d, 3)
    (10, 4)
    """
    count = 0
    stack = [os.fspath(folder)]
    while stack:
        try:
            with os.scandir(stack.pop()) as listing:
                for entry in listing:
                    count += 1
                    if count > limit:
                        return count
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            stack.append(entry.path)
                    except OSError:
                        continue
        except OSError:
            continue
    return count


def _why(err: OSError) -> str:
    return f"{type(err).__name__}: {err.strerror or err}"


def _note_owner(st: os.stat_result, rel: str, owner_uid: int | None,
                problems: list[str]) -> None:
    if owner_uid is not None and st.st_uid != owner_uid:
        problems.append(f"{rel or '.'} is owned by {_user_name(st.st_uid)}, not the student")


def _user_name(uid: int) -> str:
    import pwd

    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def _walk(dir_fd: int, rel: str, depth: int, owner_uid: int | None, limits: Limits,
          staging: Path | None, problems: list[str], found: SubmissionRead) -> None:
    st = os.fstat(dir_fd)
    _note_owner(st, rel, owner_uid, problems)
    if staging is not None:
        (staging / rel).mkdir(mode=0o755, parents=not rel)
    if depth > limits.max_depth:
        problems.append(f"it is nested more than {limits.max_depth} folders deep")
        return
    try:  # no more names than the limit leaves room for, however many the folder holds
        names = []
        with os.scandir(dir_fd) as listing:
            for entry in listing:
                names.append(entry.name)
                if found.entries + len(names) > limits.max_files:
                    break
        names.sort()
    except OSError as err:
        problems.append(f"{rel or '.'} cannot be listed by the instructor ({_why(err)})")
        return
    for name in names:
        found.entries += 1
        if found.entries > limits.max_files:
            _too_many(limits, problems)
            return
        path = os.path.join(rel, name)
        try:
            st_l = os.lstat(name, dir_fd=dir_fd)
        except OSError as err:
            problems.append(f"{path} cannot be read ({_why(err)})")
            continue
        if stat.S_ISLNK(st_l.st_mode):
            try:
                target = os.readlink(name, dir_fd=dir_fd)
            except OSError:
                target = "?"
            problems.append(f"contains symbolic links ({path} -> {target})")
            continue
        is_dir = stat.S_ISDIR(st_l.st_mode)
        if not is_dir and not stat.S_ISREG(st_l.st_mode):
            problems.append(f"{path} is not a regular file or folder "
                            f"(mode {stat.filemode(st_l.st_mode)})")
            continue
        if _ignored(name, not is_dir, limits):
            found.skipped.append(path)
            continue
        try:
            fd = os.open(name, _DIR_FLAGS if is_dir else _FILE_FLAGS, dir_fd=dir_fd)
        except OSError as err:
            problems.append(f"{path} cannot be read by the instructor ({_why(err)})")
            continue
        try:
            if is_dir:
                _walk(fd, path, depth + 1, owner_uid, limits, staging, problems, found)
            else:
                _read_file(fd, path, owner_uid, limits, staging, problems, found)
        finally:
            os.close(fd)
        if found.entries > limits.max_files or found.bytes > limits.max_bytes:
            _too_many(limits, problems)
            return
    # The folder's own change time, after its entries were read.
    found.server_time = max(found.server_time, server_time(os.fstat(dir_fd).st_ctime))


def _too_many(limits: Limits, problems: list[str]) -> None:
    message = (f"it holds more than {limits.max_files} files and folders, or more than "
               f"{limits.max_bytes} bytes")
    if message not in problems:
        problems.append(message)


def _read_file(fd: int, path: str, owner_uid: int | None, limits: Limits,
               staging: Path | None, problems: list[str], found: SubmissionRead) -> None:
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):  # swapped between lstat and open
        problems.append(f"{path} is not a regular file (mode {stat.filemode(st.st_mode)})")
        return
    _note_owner(st, path, owner_uid, problems)
    if st.st_size > limits.max_file_bytes:
        found.skipped.append(f"{path} (larger than {limits.max_file_bytes} bytes)")
        return
    found.files += 1
    out = None
    if staging is not None and not problems:
        out = os.open(staging / path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC,
                      0o644)
    try:
        read = 0
        budget = min(limits.max_file_bytes, limits.max_bytes - found.bytes) + 1
        while read < budget:
            chunk = os.read(fd, min(_CHUNK, budget - read))
            if not chunk:
                break
            read += len(chunk)
            if out is not None:
                os.write(out, chunk)
        found.bytes += read
        if read > limits.max_file_bytes:
            problems.append(f"{path} grew past {limits.max_file_bytes} bytes while collected")
    finally:
        if out is not None:
            os.close(out)
    # ctime after the content was read: any write we read is no later than this.
    found.server_time = max(found.server_time, server_time(os.fstat(fd).st_ctime))


def collected_time(folder: Path) -> datetime | None:
    """The time in a collected copy's ``timestamp.txt`` (written by collect), or None.

    Only its first 100 bytes are read: a copy collected by plain nbgrader keeps the
    student's own file, which can be as large as a submission. A time later than now is no
    collect's (collect writes the server's time); it is not believed, so that a student's
    ``9999-12-31`` there does not stop ``collect --update`` for ever.
    """
    try:
        with open(folder / "timestamp.txt", "rb") as f:
            head = f.read(100)
        when = parse_utc(head.decode("utf-8").strip())
    except (OSError, ValueError, OverflowError):
        return None
    return when if when <= datetime.now(UTC).replace(tzinfo=None) else None


def install_collected(fresh: Path, dest: Path, log: Any, student: str, assignment: str
                      ) -> None:
    """Put a freshly collected copy at ``dest``, replacing an older one only once it is whole.

    The old copy is renamed aside first and removed last, so that a crash in between leaves
    either the old or the new submission in place, never a half of each.
    """
    if dest.is_dir():
        log.info("Updating submission: %s %s", student, assignment)
        old = dest.with_name(f".{dest.name}.old-{os.getpid()}")
        dest.rename(old)
        fresh.rename(dest)
        shutil.rmtree(old)
    else:
        log.info("Collecting submission: %s %s", student, assignment)
        fresh.rename(dest)
