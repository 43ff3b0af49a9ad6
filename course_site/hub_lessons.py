"""Each student's own copies of the lessons on the class's JupyterHub: a Jupyter server
extension.

``deploy/student-jupyter-config`` enables it in every student's server
(``ServerApp.jpserver_extensions``); the hub tells the server where the lessons are
installed (``ATTENTION_COURSE_LESSONS``, set by ``deploy/jupyterhub_config.py``: the folder
docs/deploy.md step 2 installs, root's and read-only). When the server starts it makes the
student's copies in ``attention-lessons/`` of the server's root folder (the student's home
on the hub), by the same rules as ``./course copies`` (:mod:`course_site.workspace`): the
guesses' answers cleared, the record ``.course-copies.json``, an untouched copy follows the
course's new version, a copy the student changed is never overwritten.

It runs inside the student's server, as the student: nothing is written by root into a
student's home, and the student's own files (symbolic links included) are only ever
reached with the student's own rights. A copy that cannot be made never stops the server:
the server's log says what was expected and what was found.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from course_site.workspace import Filled, WorkspaceError, fill

__all__ = ["FOLDER", "SOURCE_VARIABLE", "make_copies"]

# Where the hub says the course's lessons are installed (root's, read-only).
SOURCE_VARIABLE = "ATTENTION_COURSE_LESSONS"
# The students' copies, in the server's root folder (the home on the hub). Not
# ``attention-course/``: that is the instructor's nbgrader course folder (docs/deploy.md
# step 6), and a name of its own keeps it apart from the quiz nbgrader fetches into
# ``checkpoint/`` beside it.
FOLDER = "attention-lessons"


def make_copies(source: str | os.PathLike[str] | None, root: str | os.PathLike[str],
                log: logging.Logger | logging.LoggerAdapter[Any]) -> Filled | None:
    """Make or update the copies of ``source``'s lessons in ``root``/attention-lessons.

    Never raises for what a class can get wrong (no lessons installed, a record the student
    broke, a file that cannot be read): it logs what was expected and what was found, and
    returns None when nothing was copied.

    Parameters
    ----------
    source : path-like or None
        The course's lessons as the admin installed them (None: the hub named none).
    root : path-like
        The server's root folder (the student's home).
    log : logging.Logger
        The server's log.

    Returns
    -------
    Filled or None
        What :func:`course_site.workspace.fill` did.
    """
    if not source:
        log.warning("course lessons: no copies made: expected the hub to name the course's "
                    "lessons in %s (docs/deploy.md step 2), found it unset", SOURCE_VARIABLE)
        return None
    lessons, workspace = Path(source), Path(root) / FOLDER
    if not lessons.is_dir():
        log.error("course lessons: no copies made: expected the course's lessons in %s "
                  "(%s, installed by docs/deploy.md step 2), found %s", lessons,
                  SOURCE_VARIABLE, "a file" if lessons.exists() else "no such folder")
        return None
    try:
        done = fill(lessons, workspace)
    except WorkspaceError as exc:
        log.error("course lessons: no copies made in %s: %s", workspace, exc)
        return None
    except OSError as exc:
        log.error("course lessons: no copies made: expected to make %s from %s, found %s: %s",
                  workspace, lessons, type(exc).__name__, exc)
        return None
    log.info("course lessons: copies in %s from %s: %d new, %d updated", workspace, lessons,
             len(done.added), len(done.updated))
    for rel in done.changed:
        log.info("course lessons: the course changed %s; the student's copy is kept as it "
                 "is (renamed or deleted, it is copied again at the next start)", rel)
    for rel, why in done.as_is.items():
        log.warning("course lessons: %s in %s: expected a lesson's notebook, found %s; "
                    "copied as it is", rel, lessons, why)
    for rel, why in done.failed.items():
        log.error("course lessons: could not copy %s from %s into %s (%s); the other "
                  "lessons were copied", rel, lessons, workspace, why)
    return done


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "course_site.hub_lessons"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    """Jupyter Server calls this as the student's server starts (before it serves)."""
    try:
        make_copies(os.environ.get(SOURCE_VARIABLE), os.path.expanduser(serverapp.root_dir),
                    serverapp.log)
    except Exception:  # a bug here must not keep the student out of their server
        serverapp.log.exception("course lessons: no copies made (unexpected error)")
