"""nbgrader's filesystem exchange, with submissions checked against their owner at collect time.

Plain nbgrader lets any student run ``nbgrader submit checkpoint --student=<someone else>``:
the submission lands in the exchange under the other student's name, and ``nbgrader
collect`` takes it (the newest submission wins) with no more than a logged warning. On a
server with real Unix users the file system knows better: a student can only create files
they own. :class:`OwnerCheckedCollect` refuses every submission that is not wholly owned by
the Unix user it names, so the real student's own (older) submission is the one collected.

Enable it in the instructor's course ``nbgrader_config.py``::

    c.ExchangeFactory.collect = "course_grading.exchange.OwnerCheckedCollect"

It also refuses a submission that contains a symbolic link: nbgrader's collect copies,
with the instructor's rights, whatever the link points to, so a student could plant a link
to ``source/`` in their own submission and find the solutions copied into it.

Refused submissions stay in the exchange for the instructor to look at; each refusal is
logged as an error naming the submission, the student it claims and why it was refused.

Plain nbgrader also leaves every submission world-readable (folder 0777, files 0644), hidden
only by an unguessable name in an ``inbound`` folder nobody can list. :class:`PrivateSubmit`,
set in the global config that students' nbgrader reads, closes that: the exchange's
``inbound`` is setgid to the instructor's group, so a submission's folder belongs to that
group, and ``PrivateSubmit`` gives it mode 0770: the student and the instructor, nobody
else, can enter it::

    c.ExchangeFactory.submit = "course_grading.exchange.PrivateSubmit"
"""

from __future__ import annotations

import os
import pwd
from pathlib import Path

from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.exchange.default.submit import ExchangeSubmit

__all__ = ["OwnerCheckedCollect", "PrivateSubmit", "foreign_owners", "symbolic_links"]

SUBMISSION_DIR_MODE = 0o770


def foreign_owners(path: str | os.PathLike[str], student_id: str) -> list[str]:
    """Who, besides ``student_id``, owns ``path`` or anything inside it.

    Parameters
    ----------
    path : path-like
        A submission directory in the exchange's ``inbound``.
    student_id : str
        The student the submission's name claims; must be a Unix user on this machine.

    Returns
    -------
    list of str
        Sorted owner names (``uid <n>`` for a uid without a name); empty when the student
        owns everything, ``["no Unix user '<id>'"]`` when the student id is no Unix user.

    Examples
    --------
    >>> import getpass, tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     foreign_owners(d, getpass.getuser())
    []
    """
    try:
        uid = pwd.getpwnam(student_id).pw_uid
    except KeyError:
        return [f"no Unix user {student_id!r}"]
    others: set[int] = set()
    root = Path(path)
    for p in [root, *root.rglob("*")]:
        owner = p.lstat().st_uid
        if owner != uid:
            others.add(owner)
    return sorted(_user_name(o) for o in others)


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


def _user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


class OwnerCheckedCollect(ExchangeCollect):
    """``nbgrader collect`` that only collects submissions owned by the student they name."""

    def _path_to_record(self, path: str) -> dict:
        record = super()._path_to_record(path)
        folder = os.path.join(self.inbound_path, record["filename"])
        foreign = foreign_owners(folder, record["username"])
        links = symbolic_links(folder)
        record["genuine"] = not foreign and not links
        if foreign:
            self.log.error(
                "Refusing submission %s: it claims to be by %r but was made by %s; "
                "it stays in the exchange and is not collected",
                record["filename"], record["username"], ", ".join(foreign),
            )
        if links:
            self.log.error(
                "Refusing submission %s by %r: it contains symbolic links (%s), and "
                "collecting would copy what they point to; expected regular files only. "
                "It stays in the exchange and is not collected",
                record["filename"], record["username"], "; ".join(links),
            )
        return record

    def _sort_by_timestamp(self, records: list[dict]) -> list[dict]:
        # Genuine submissions first, newest first within each: nbgrader picks element 0.
        return sorted(records, key=lambda r: (r.get("genuine", True), r["timestamp"]),
                      reverse=True)

    def init_src(self) -> None:
        super().init_src()
        self.src_records = [r for r in self.src_records if r.get("genuine", True)]


class PrivateSubmit(ExchangeSubmit):
    """``nbgrader submit`` whose submission only the student and the instructor's group enter.

    The submission's folders get mode 0770. They belong to the instructor's group because
    ``inbound`` is setgid to it (the modes in deploy/README.md); if they do not (an exchange
    set up otherwise), nbgrader's own modes are left alone, so that the instructor can still
    collect, and a warning says why.
    """

    def copy_files(self) -> None:
        super().copy_files()
        dest = Path(self.inbound_path) / self.assignment_filename
        group = os.stat(self.inbound_path).st_gid
        dirs = [dest, *(p for p in dest.rglob("*") if p.is_dir() and not p.is_symlink())]
        if any(d.stat().st_gid != group for d in dirs):
            self.log.warning(
                "Submission left readable by everyone who knows its name: %s is not setgid "
                "to the instructor's group (see deploy/README.md)", self.inbound_path)
            return
        for d in dirs:
            d.chmod(SUBMISSION_DIR_MODE)
