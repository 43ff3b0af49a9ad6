"""Per-student variants: every student of a class gets, and is graded on, numbers of their own.

With one variant per class, answers pass from one student to the next ("Q2 is [0.12, ...],
Q3 is B"). Here each student's checkpoint has its own numbers (the setup cell's example,
the measured table, the hidden checks' inputs) and its own order of options, derived from
the instructor's secret and the student's id::

    seed = HMAC-SHA256(secret, "attention-course/checkpoint/student/" + student id)

so that the grader recomputes a student's variant from the id alone; nothing per student
is stored. The secret is the seed given to ``python -m course_grading.variants --seed``,
kept in ``secret_source/variant_secret`` (mode 0600) beside the secret source, which git
ignores. Where things happen:

* **release**: :class:`PersonalRelease` (the filesystem exchange; JupyterHub on one
  server) and :class:`PersonalNgshareRelease` (ngshare) release the assignment as nbgrader
  does, and beside it one notebook per student of the gradebook's class list, filled with
  that student's numbers; ``course_exchange``'s fetch gives each student their own
  (:class:`course_exchange.exchange.PersonalFetch`). Without an exchange (notebooks handed
  out by mail or a learning platform), ``python -m course_grading.personal handout``
  writes them into ``handout/<assignment>/<student>/``.
* **grading**: :class:`PersonalVariant`, first of autograde's preprocessors, fills the
  submission, as nbgrader restored it from the gradebook, with the numbers of the student
  whose folder it was collected into (``submitted/<student>/``: under the course's collect,
  the Unix owner or the ngshare user who sent it). The numbers in the student's notebook
  are never read: a setup cell edited to a classmate's numbers is put back.

What a student can and cannot do: a classmate's notebook holds no answer, and a student's
answers are graded against their own numbers only, so a classmate's notebook, copied whole
or answer by answer, earns what any wrong answer earns. On the filesystem exchange each
notebook is readable by its student only (a POSIX ACL where the exchange's file system has
them); through ngshare every student of the course can download every notebook of the
release (ngshare has no per-student release), which gains them nothing for the same reason.
A classmate's letter is right as often as a guess: each student's options are in an order
of their own, independent of everyone else's.

Turn it on in ``nbgrader_config.py`` with :func:`enable` (``quiz/nbgrader_config.py`` does
while the secret exists).

Examples
--------
>>> a, b = personal_variant("s", "alice"), personal_variant("s", "bob")
>>> a.Q.tolist() == personal_variant("s", "alice").Q.tolist(), a.seed_id == b.seed_id
(True, False)
"""

from __future__ import annotations

import argparse
import base64
import errno
import functools
import hashlib
import hmac
import os
import pwd
import shutil
import struct
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import nbformat
from nbgrader.exchange.default.release_assignment import ExchangeReleaseAssignment
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Unicode

from course_exchange.exchange import PERSONAL, personal_folder
from course_exchange.ngshare_exchange import NgshareReleaseAssignment
from course_quiz.checkpoint_spec import CHECKPOINT

from .check_calls import QuizSourceError
from .option_bank import OptionBank, read_bank
from .variants import SECRET_FILE, SECRET_SOURCE, Variant, fill, make_variant, read_parts

__all__ = [
    "SECRET_FILE",
    "PersonalNgshareRelease",
    "PersonalRelease",
    "PersonalVariant",
    "enable",
    "handout",
    "personal_notebook",
    "personal_variant",
    "read_secret",
    "secret_path",
    "student_seed",
]


_SALT = "attention-course/checkpoint/student/"


def secret_path(course_root: str | os.PathLike[str]) -> Path:
    """Where a course keeps its per-student secret: ``<course>/secret_source/variant_secret``."""
    return Path(course_root) / SECRET_SOURCE / SECRET_FILE


def read_secret(path: str | os.PathLike[str]) -> str:
    """The instructor's secret, from its file.

    Raises
    ------
    ValueError
        If the file is empty or not text.
    OSError
        If it cannot be read.
    """
    try:
        text = Path(path).read_text(encoding="utf-8").strip()
    except UnicodeDecodeError:
        raise ValueError(f"{path} must hold the secret as text (it is not UTF-8)") from None
    if not text:
        raise ValueError(f"{path} is empty: it must hold the secret given to "
                         "python -m course_grading.variants --seed")
    return text


def student_seed(secret: str, student: str) -> str:
    """The seed of one student's variant: HMAC-SHA256 of their id under the secret.

    Examples
    --------
    >>> len(student_seed("s", "alice")), student_seed("s", "alice") != student_seed("s", "bob")
    (64, True)
    """
    if not secret or not student:
        raise ValueError(f"a per-student seed needs a secret and a student id (got "
                         f"{bool(secret)=}, {student!r})")
    return hmac.new(secret.encode(), (_SALT + student).encode(), hashlib.sha256).hexdigest()


@functools.lru_cache(maxsize=1024)
def personal_variant(secret: str, student: str, parts: tuple[int, ...] | None = None,
                     options: OptionBank | None = None) -> Variant:
    """The variant of ``student`` in the class whose secret is ``secret``, for a checkpoint
    that covers ``parts`` of the course (default: every part; the numbers are the same
    whatever the parts), its options written with the instructor's bank ``options``
    (:func:`~.option_bank.read_bank`; default: the public templates)."""
    return make_variant(student_seed(secret, student), parts, options)


def personal_notebook(released: nbformat.NotebookNode, secret: str, student: str,
                      parts: tuple[int, ...] | None = None,
                      options: OptionBank | None = None) -> nbformat.NotebookNode:
    """The released notebook with ``student``'s numbers, as that student receives it (its
    questions those of ``parts``, the class's choice: :func:`~.variants.read_parts`; its
    options' texts the instructor's bank's when the course has one:
    :func:`~.option_bank.read_bank`)."""
    nb = fill(released, personal_variant(secret, student, parts, options))
    nb.metadata["course_student"] = student
    return nb


class PersonalVariant(NbGraderPreprocessor):
    """First of autograde's preprocessors: the submission gets its student's numbers.

    nbgrader has restored the read-only cells (the setup cell, every test cell with its
    hidden part) from the gradebook, which holds the class's template. This puts the
    numbers of the student whose folder the submission was collected into in their place:
    the setup cell's literals and each hidden check's inputs, expected values and right
    letters. Answer and markdown cells are the student's and are not touched.
    """

    secret_file = Unicode("", help="The file of the instructor's secret (default: "
                          "<course>/secret_source/variant_secret).").tag(config=True)

    def preprocess(self, nb: nbformat.NotebookNode, resources: Any) -> Any:
        info = resources.get("nbgrader", {})
        if info.get("assignment") != CHECKPOINT.assignment:
            return nb, resources
        student = str(info.get("student") or "")
        path = self.secret_file or secret_path(self._course_root(resources))
        # the parts the class's checkpoint covers: recorded beside the secret, never read
        # from the student's notebook
        # no option bank: the texts are the student's own cells, and which letter is right
        # comes from the student's option order, bank or no bank
        variant = personal_variant(read_secret(path), student, read_parts(Path(path).parent))
        claimed = nb.metadata.get("course_variant")
        if claimed not in (None, variant.seed_id):
            self.log.warning("[%s] the submitted notebook has the numbers of variant %s, not "
                             "this student's (%s): it may be someone else's notebook. It is "
                             "graded with this student's numbers.", student,
                             str(claimed)[:40], variant.seed_id)
        try:
            nb = fill(nb, variant, questions=False)
        except QuizSourceError as exc:
            raise QuizSourceError(f"{student}'s notebook could not be given their numbers: "
                                  f"{exc}") from None
        nb.metadata["course_student"] = student
        return nb, resources

    def _course_root(self, resources: Any) -> str:
        from nbgrader.coursedir import CourseDirectory

        return CourseDirectory(config=self.config).root


def enable(c: Any, secret_file: str | os.PathLike[str]) -> None:
    """Grade each student with their own variant: :class:`PersonalVariant` first in
    ``c.Autograde.autograde_preprocessors`` (after :func:`course_grading.verdicts.enable`)."""
    from nbgrader.converters.autograde import Autograde

    default = Autograde.class_traits()["autograde_preprocessors"].default()
    chain = list(c.Autograde.get("autograde_preprocessors") or default)
    if PersonalVariant not in chain:
        chain.insert(0, PersonalVariant)
    c.Autograde.autograde_preprocessors = chain
    c.PersonalVariant.secret_file = str(secret_file)


# --------------------------------------------------------------------------------------
# release
# --------------------------------------------------------------------------------------


def _class_list(coursedir: Any) -> list[str]:
    from nbgrader.api import Gradebook

    with Gradebook(coursedir.db_url, coursedir.course_id) as gb:
        return sorted(s.id for s in gb.students)


def _released_notebooks(release: Path) -> list[Path]:
    return sorted(p for p in release.glob("*.ipynb") if p.is_file())


def personal_files(coursedir: Any, students: Sequence[str] | None = None
                   ) -> dict[str, dict[str, bytes]]:
    """Each student's notebooks (student -> file name -> content) for the assignment of
    ``coursedir``, from its release folder; ``{}`` when the course has no secret.

    Raises
    ------
    ValueError
        If the course has a secret but no students (the class list is the gradebook's), or
        a student id could not name a folder.
    """
    path = secret_path(coursedir.root)
    if not path.exists() or coursedir.assignment_id != CHECKPOINT.assignment:
        return {}
    secret = read_secret(path)
    parts = read_parts(path.parent)
    bank = read_bank(path.parent, parts)
    students = list(students) if students is not None else _class_list(coursedir)
    if not students:
        raise ValueError("per-student variants need the class list, and the gradebook has "
                         "no students: add them first (nbgrader db student add ID, or "
                         "nbgrader db student import students.csv)")
    release = Path(coursedir.format_path(coursedir.release_directory, ".",
                                         coursedir.assignment_id))
    notebooks = {p.name: nbformat.read(p, as_version=4) for p in _released_notebooks(release)}
    out: dict[str, dict[str, bytes]] = {}
    for student in students:
        personal_folder(Path("/"), coursedir.assignment_id, student)  # refuses path-like ids
        out[student] = {name: nbformat.writes(
            personal_notebook(nb, secret, student, parts, bank)).encode()
                        for name, nb in notebooks.items()}
    return out


_ACL_USER_OBJ, _ACL_USER, _ACL_GROUP_OBJ, _ACL_MASK, _ACL_OTHER = 0x01, 0x02, 0x04, 0x10, 0x20
_ACL_UNDEFINED_ID = 0xFFFFFFFF


def _acl(owner: int, uid: int) -> bytes:
    """A POSIX access ACL (Linux's xattr form): the owner ``owner`` bits, user ``uid`` read
    (and enter, for a folder: same bits as given), nobody else."""
    entries = [(_ACL_USER_OBJ, owner, _ACL_UNDEFINED_ID), (_ACL_USER, owner & 5, uid),
               (_ACL_GROUP_OBJ, 0, _ACL_UNDEFINED_ID), (_ACL_MASK, owner & 5, _ACL_UNDEFINED_ID),
               (_ACL_OTHER, 0, _ACL_UNDEFINED_ID)]
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *e) for e in entries)


def readable_only_by(path: Path, uid: int) -> bool:
    """Let the owner and the user ``uid`` read ``path`` (enter it, for a folder), nobody
    else, with a POSIX ACL. False (and the mode left world-readable) where the file system
    has no ACLs."""
    folder = path.is_dir()
    os.chmod(path, 0o700 if folder else 0o600)
    try:
        os.setxattr(path, "system.posix_acl_access", _acl(7 if folder else 6, uid))
    except OSError as exc:
        if exc.errno not in (errno.ENOTSUP, errno.EOPNOTSUPP):
            raise
        os.chmod(path, 0o755 if folder else 0o644)
        return False
    return True


class PersonalRelease(ExchangeReleaseAssignment):
    """``nbgrader release_assignment`` with each student's own notebook beside the release.

    The release goes to ``outbound/<assignment>/`` as nbgrader puts it (the class's
    template); when the course has a secret, each student of the gradebook's class list
    also gets ``<exchange>/<course>/personal/<assignment>/<student>/``, readable by that
    Unix user only, which :class:`course_exchange.exchange.PersonalFetch` gives them
    instead of the template. Without a secret it is nbgrader's release.
    """

    def copy_files(self) -> None:
        try:
            files = personal_files(self.coursedir)
        except (OSError, ValueError, QuizSourceError) as exc:
            self.fail(f"Not released: {exc}")
        super().copy_files()
        root = Path(self.course_path) / PERSONAL
        dest = root / self.coursedir.assignment_id
        if dest.exists():
            shutil.rmtree(dest)
        if not files:
            return
        for folder in (root, dest):
            folder.mkdir(exist_ok=True)
            os.chmod(folder, 0o711)  # enter, not list: no one reads the class list here
        private, shared = [], []
        for student, notebooks in files.items():
            folder = personal_folder(Path(self.course_path), self.coursedir.assignment_id,
                                     student)
            folder.mkdir()
            for name, data in notebooks.items():
                (folder / name).write_bytes(data)
            try:
                uid = pwd.getpwnam(student).pw_uid
            except KeyError:
                uid = None
            ok = uid is not None and all(
                readable_only_by(p, uid) for p in [*folder.iterdir(), folder])
            if not ok:
                for p in [*folder.iterdir(), folder]:
                    os.chmod(p, 0o755 if p.is_dir() else 0o644)
            (private if ok else shared).append(student)
        self.log.info("Released a notebook of their own to %d students", len(files))
        if shared:
            self.log.warning(
                "The notebooks of %s are readable by anyone who knows their names (%s). They "
                "hold no answer and each is graded with its own student's numbers, so a "
                "classmate's gains nothing", ", ".join(shared[:10]) + (" ..." if len(shared)
                                                                       > 10 else ""),
                "no Unix user of that name" if all(_no_user(s) for s in shared)
                else "the exchange's file system has no ACLs")


def _no_user(student: str) -> bool:
    try:
        pwd.getpwnam(student)
    except KeyError:
        return True
    return False


class PersonalNgshareRelease(NgshareReleaseAssignment):
    """The ngshare release with each student's own notebook among the released files, as
    ``personal/<student>/<notebook>`` (the course's ngshare fetch keeps only the caller's).
    ngshare lets every student of the course download every file of a release: these hold
    no answer, and each student is graded with their own numbers."""

    def released_files(self, src: Path) -> list[dict[str, Any]]:
        files = super().released_files(src)
        try:
            personal = personal_files(self.coursedir)
        except (OSError, ValueError, QuizSourceError) as exc:
            self.fail(f"Not released: {exc}")
        for student, notebooks in personal.items():
            for name, data in notebooks.items():
                files.append({"path": f"{PERSONAL}/{student}/{name}",
                              "content": base64.b64encode(data).decode()})
        if personal:
            self.log.info("Releasing a notebook of their own to %d students", len(personal))
        return files


# --------------------------------------------------------------------------------------
# hand-out without an exchange
# --------------------------------------------------------------------------------------


def handout(course: str | os.PathLike[str], assignment: str = CHECKPOINT.assignment,
            students: Sequence[str] | None = None, out: str | os.PathLike[str] | None = None
            ) -> list[Path]:
    """Write each student's notebooks into ``<out>/<student>/`` (default
    ``<course>/handout/<assignment>/``), for a class without an exchange.

    Raises
    ------
    ValueError
        If the course has no per-student secret, no release or no students.
    """
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config.loader import PyFileConfigLoader

    course = Path(course).resolve()
    if not (course / "nbgrader_config.py").is_file():
        raise ValueError(f"{course} is not an nbgrader course directory (no nbgrader_config.py)")
    if not secret_path(course).exists():
        raise ValueError(f"{secret_path(course)} does not exist: make the class's variants "
                         "first (python -m course_grading.variants --seed ...)")
    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    config.CourseDirectory.root = str(course)
    config.CourseDirectory.assignment_id = assignment
    coursedir = CourseDirectory(config=config)
    release = Path(coursedir.format_path(coursedir.release_directory, ".", assignment))
    if not _released_notebooks(release):
        raise ValueError(f"{release} holds no notebook: run nbgrader generate_assignment "
                         f"{assignment} first")
    files = personal_files(coursedir, students)
    dest = Path(out) if out is not None else course / "handout" / assignment
    written = []
    for student, notebooks in files.items():
        folder = dest / student
        folder.mkdir(parents=True, exist_ok=True)
        for name, data in notebooks.items():
            (folder / name).write_bytes(data)
            written.append(folder / name)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m course_grading.personal handout [ASSIGNMENT] [--student ID ...]``."""
    parser = argparse.ArgumentParser(
        prog="python -m course_grading.personal",
        description="Per-student variants: write each student's own notebook, to hand out "
                    "without an exchange.")
    sub = parser.add_subparsers(dest="command", required=True)
    hand = sub.add_parser("handout", help="write handout/<assignment>/<student>/<notebook>")
    hand.add_argument("assignment", nargs="?", default=CHECKPOINT.assignment)
    hand.add_argument("--student", action="append", dest="students", metavar="ID",
                      help="a student id (repeat it; default: the gradebook's students)")
    hand.add_argument("--course-dir", default=".", type=Path,
                      help="nbgrader course directory (default: the current one)")
    hand.add_argument("--out", type=Path, default=None,
                      help="folder to write into (default: <course>/handout/<assignment>)")
    args = parser.parse_args(argv)
    try:
        written = handout(args.course_dir, args.assignment, args.students, args.out)
    except (OSError, ValueError, QuizSourceError) as exc:
        print(f"personal: {exc}", file=sys.stderr)
        return 2
    for path in written:
        print(f"{os.path.relpath(path)}: {path.parent.name}'s own numbers")
    print(f"{len({p.parent for p in written})} students; send each their own notebook. "
          "Collected back, each goes to submitted/<student>/<assignment>/.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
