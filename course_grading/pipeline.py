"""Drive nbgrader's own pipeline on a course directory, in one Python process.

Every ``nbgrader`` command costs seconds of start-up; the tests and benchmarks call
:class:`nbgrader.apps.NbGraderAPI` (what formgrader uses) instead, with the course's own
``nbgrader_config.py`` loaded, so they grade exactly as ``nbgrader autograde`` does.

Examples
--------
The instructor-side steps, on a copy of the course directory::

    course = copy_course("quiz", tmp_path / "quiz")
    api = open_api(course)
    api.generate_assignment("checkpoint")
    place_submission(course, "alice", {"checkpoint.ipynb": data})
    api.autograde("checkpoint", "*")
    grades(course, "alice")   # {"test_missing_scale": 1.0, ...}
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path

from .gradebook import tool_path

__all__ = [
    "ASSIGNMENT",
    "copy_course",
    "export_csv",
    "grades",
    "open_api",
    "place_submission",
    "tool_path",
]

ASSIGNMENT = "checkpoint"

# What nbgrader makes inside a course directory; never copied from the repository.
_GENERATED = ("release", "submitted", "autograded", "feedback", "gradebook.db", "*.log")


def copy_course(source: str | os.PathLike[str], dest: str | os.PathLike[str]) -> Path:
    """Copy a course directory's config and sources (not its generated files) to ``dest``."""
    dest = Path(dest)
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns(*_GENERATED))
    return dest


def open_api(course: str | os.PathLike[str], **overrides: object):
    """An :class:`~nbgrader.apps.NbGraderAPI` for ``course`` with its ``nbgrader_config.py``.

    Parameters
    ----------
    course : path
        The course directory (holding ``nbgrader_config.py`` and ``source/``).
    **overrides
        Extra config as ``"Section.name": value`` pairs, e.g. ``{"Execute.timeout": 5}``.
    """
    from nbgrader.apps import NbGraderAPI
    from traitlets.config import Config
    from traitlets.config.loader import PyFileConfigLoader

    course = Path(course).resolve()
    config_file = course / "nbgrader_config.py"
    if not config_file.is_file():
        raise FileNotFoundError(f"no nbgrader_config.py in the course directory {course}")
    os.environ["PATH"] = tool_path()
    config = PyFileConfigLoader(config_file.name, path=str(course)).load_config()
    config.CourseDirectory.root = str(course)
    extra = Config()
    for key, value in overrides.items():
        section, name = key.split(".")
        extra[section][name] = value
    config.merge(extra)
    return NbGraderAPI(config=config)


def place_submission(
    course: str | os.PathLike[str], student: str, files: Mapping[str, bytes]
) -> Path:
    """Write a student's files to ``submitted/<student>/checkpoint/`` (replacing any)."""
    folder = Path(course) / "submitted" / student / ASSIGNMENT
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    for name, data in files.items():
        (folder / name).write_bytes(data)
    return folder


def grades(course: str | os.PathLike[str], student: str) -> dict[str, float]:
    """grade id -> score of a student's checkpoint submission, read from the gradebook."""
    from nbgrader.api import Gradebook

    from .gradebook import locate

    with Gradebook(locate(course).db_url) as gb:
        nb = gb.find_submission_notebook("checkpoint", ASSIGNMENT, student)
        return {g.name: float(g.score) for g in nb.grades}


def export_csv(api, path: str | os.PathLike[str]) -> Path:
    """Run nbgrader's own CSV export plugin (what ``nbgrader export`` runs) into ``path``."""
    from nbgrader.plugins import CsvExportPlugin

    plugin = CsvExportPlugin(parent=api)
    plugin.to = str(path)
    with api.gradebook as gb:
        plugin.export(gb)
    return Path(path)
