"""The gradebook a course directory's nbgrader is configured with, for every course tool.

nbgrader keeps its grades wherever ``c.CourseDirectory.db_url`` says: ``gradebook.db``
(SQLite) in the course directory unless the config names another database, such as a
PostgreSQL server (docs/deploy.md, "The gradebook on PostgreSQL"). The grade table, the
report, the roster and the LMS exports read the same database as ``nbgrader autograde``,
found the same way nbgrader's own commands find it: every ``nbgrader_config.py`` on
Jupyter's config path (``jupyter --paths``: ``~/.jupyter``, ``/etc/jupyter``, ...), then the
one in the course directory, which wins (nbgrader reads the current directory's).

>>> shown_url("postgresql+psycopg2://ada:s3cret@127.0.0.1:5432/gradebook")
'postgresql+psycopg2://ada:***@127.0.0.1:5432/gradebook'
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["CourseGradebook", "GradebookMissing", "course_config", "locate", "open_gradebook",
           "shown_url"]

CONFIG_FILE = "nbgrader_config.py"


class GradebookMissing(FileNotFoundError):
    """The course's gradebook does not exist yet, or its database cannot be reached."""



def tool_path() -> str:
    """A PATH with this Python's scripts first (nbgrader runs ``alembic`` from PATH)."""
    bindir = str(Path(sys.executable).parent)
    path = os.environ.get("PATH", "")
    return path if path.split(os.pathsep)[0] == bindir else bindir + os.pathsep + path

def shown_url(db_url: str) -> str:
    """A database URL without its password, for messages."""
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", db_url)


def course_config(course_dir: str | os.PathLike[str]) -> Any:
    """The nbgrader config that ``nbgrader`` run in ``course_dir`` would load.

    Every ``nbgrader_config.py`` on Jupyter's config path, the lowest priority first, then
    ``course_dir/nbgrader_config.py`` (nbgrader's own rule for the current directory).
    Loading a config file runs it, as nbgrader does.

    Returns
    -------
    traitlets.config.Config
    """
    from jupyter_core.paths import jupyter_config_path
    from traitlets.config import Config
    from traitlets.config.loader import PyFileConfigLoader

    course = Path(course_dir).resolve()
    config = Config()
    folders = [Path(p) for p in reversed(jupyter_config_path())]
    for folder in [*[f for f in folders if f.resolve() != course], course]:
        if (folder / CONFIG_FILE).is_file():
            config.merge(PyFileConfigLoader(CONFIG_FILE, path=str(folder)).load_config())
    return config


@dataclass(frozen=True)
class CourseGradebook:
    """Where a course's grades are: nbgrader's ``CourseDirectory`` as configured.

    Attributes
    ----------
    root : Path
        The course directory nbgrader uses (``CourseDirectory.root``): ``submitted/`` and
        ``autograded/`` are there.
    db_url : str
        The gradebook's database URL (``CourseDirectory.db_url``).
    course_id : str
    config : traitlets.config.Config
        The whole config, for the other settings a tool reads (``Execute.timeout``, ...).
    """

    root: Path
    db_url: str
    course_id: str
    config: Any

    @property
    def shown(self) -> str:
        """The database for messages: the SQLite file, or the URL without its password."""
        path = self.sqlite_path
        return str(path) if path is not None else shown_url(self.db_url)

    @property
    def sqlite_path(self) -> Path | None:
        """The file of a SQLite gradebook, None for any other database."""
        prefix = "sqlite:///"
        return Path(self.db_url[len(prefix):]) if self.db_url.startswith(prefix) else None


def locate(course_dir: str | os.PathLike[str] = ".") -> CourseGradebook:
    """The gradebook, the course folder and the config nbgrader uses in ``course_dir``.

    Examples
    --------
    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> where = locate(folder)
    >>> where.db_url == f"sqlite:///{Path(folder).resolve() / 'gradebook.db'}"
    True
    """
    from nbgrader.coursedir import CourseDirectory

    course = Path(course_dir).resolve()
    config = course_config(course)
    if "root" not in config.CourseDirectory:  # nbgrader's default: where it runs
        config.CourseDirectory.root = str(course)
    coursedir = CourseDirectory(config=config)
    return CourseGradebook(Path(coursedir.root), coursedir.db_url, coursedir.course_id, config)


@contextmanager
def open_gradebook(where: CourseGradebook, *, create: bool = False) -> Iterator[Any]:
    """nbgrader's :class:`~nbgrader.api.Gradebook` on ``where``'s database.

    A SQLite gradebook that does not exist is not created (nbgrader would make an empty
    one), unless ``create`` (as ``nbgrader db student add`` does).

    Raises
    ------
    GradebookMissing
        If the SQLite file does not exist, or the database cannot be reached; the message
        names the database (without its password) and what to do.
    """
    from nbgrader.api import Gradebook

    path = where.sqlite_path
    if create:  # nbgrader stamps a new gradebook by running `alembic`, found on PATH
        os.environ["PATH"] = tool_path()
    if path is not None and not path.exists() and not create:
        raise GradebookMissing(
            f"no gradebook at {path}: run this in the nbgrader course directory (the one with "
            f"{CONFIG_FILE}, or give --course-dir) after `nbgrader generate_assignment`; the "
            "course's config names no other database (c.CourseDirectory.db_url)")
    try:
        gradebook = Gradebook(where.db_url, where.course_id)
    except Exception as exc:  # SQLAlchemy's OperationalError, a missing driver, ...
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        raise GradebookMissing(
            f"the gradebook ({where.shown}, the db_url of the course's {CONFIG_FILE}) cannot "
            f"be reached: {first}") from None
    with gradebook as gb:
        yield gb
