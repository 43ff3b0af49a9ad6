"""The lessons as the site serves them: the course's notebooks, and what each one needs.

The site serves copies of ``notebooks/`` made at build time (the course's files are the only
source: never a student's copies in ``notebooks/my-work/``, nor any file git ignores
there). :func:`lesson_needs` reads a notebook's code: which top-level modules it imports
and what in it cannot work in a browser tab (shell commands, modules such as
``subprocess``). :func:`copy_lessons` writes the copies and, into every lesson that cannot
work fully in the browser, a first cell that says so and why.

A student's copy (the site's, and ``./course lab``'s in ``notebooks/my-work/``) never shows
an answer where the student is asked for it: :func:`students_copy` clears the stored
outputs of the code cells from a ``predict`` cell (the student's guess) to its ``compare``
cell (the guess set against the measurement), and of every code cell tagged
``shows-answer`` (a cell whose output answers an exercise above it). The course's own
notebooks keep every output: strict nbval compares them.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "ANSWER_TAGS",
    "NOTE_TAG",
    "NOT_LESSONS",
    "RESET_TAG",
    "CopiedLesson",
    "LessonNeeds",
    "add_reset_note",
    "answer_cells",
    "browser_note",
    "copy_lessons",
    "imports_in",
    "lesson_needs",
    "students_copy",
    "students_notebook",
]

# The tag of the cell the site adds to a lesson that cannot run fully in the browser.
NOTE_TAG = "site-browser-note"

# The tag of the cell the site adds to its first page: how a lesson starts again there.
RESET_TAG = "site-reset-note"

# Tags (cell metadata) that mark where a lesson asks before it tells: the student's guess,
# the cell that sets it against the measurement, and a cell whose output is an answer.
PREDICT, COMPARE, SHOWS_ANSWER = "predict", "compare", "shows-answer"
ANSWER_TAGS = (PREDICT, COMPARE, SHOWS_ANSWER)

# Folders of the lessons' folder that the site never publishes: a student's own copies
# (``./course lab`` works in ``notebooks/my-work/``) and tools' caches.
NOT_LESSONS = frozenset({"my-work", ".ipynb_checkpoints", "__pycache__"})

_SHELL = re.compile(r"^\s*(!|%%?(?:sh|bash|system|sx|script)\b)")
_PIP = re.compile(r"^\s*(!|%)\s*(pip|conda|mamba)\b")


@dataclass(frozen=True)
class LessonNeeds:
    """What one notebook's code asks for.

    Attributes
    ----------
    imports : frozenset of str
        Top-level modules imported by its code cells (absolute imports only).
    shell_lines : tuple of str
        Lines that run shell or package-manager commands (``!ls``, ``%pip install``).
    kernel : bool
        Whether it has a code cell. A notebook of Markdown only (the contents page) opens
        without a kernel: the course's JupyterLab extension
        (``labextension/src/noKernel.ts``) starts none.
    """

    imports: frozenset[str]
    shell_lines: tuple[str, ...]
    kernel: bool = True


@dataclass(frozen=True)
class CopiedLesson:
    """One notebook as the site serves it: its path in the site, needs and problems."""

    path: str
    needs: LessonNeeds
    problems: list[str]


def _code_cells(notebook: Mapping[str, Any]) -> Iterable[str]:
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") == "code":
            source = cell.get("source", "")
            yield "".join(source) if isinstance(source, list) else str(source)


def imports_in(source: str) -> set[str]:
    """The top-level modules that Python ``source`` imports (absolute imports only).

    Source that does not parse (an exercise left for the student) imports nothing we can see.

    >>> sorted(imports_in("import numpy as np\\nfrom matplotlib import cm\\nfrom . import x"))
    ['matplotlib', 'numpy']
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def lesson_needs(notebook: Mapping[str, Any]) -> LessonNeeds:
    """Read the imports and shell commands of a notebook (as parsed JSON), and whether it
    has code at all.

    >>> lesson_needs({"cells": [{"cell_type": "markdown", "source": "# Contents"}]}).kernel
    False
    >>> sorted(lesson_needs({"cells": [{"cell_type": "code", "source": "import numpy"}]}
    ...                     ).imports)
    ['numpy']
    """
    imports: set[str] = set()
    shell: list[str] = []
    code = list(_code_cells(notebook))
    for source in code:
        python_lines = []
        for line in source.splitlines():
            if _SHELL.match(line) or _PIP.match(line):
                shell.append(line.strip())
                python_lines.append("")
            elif line.lstrip().startswith("%"):
                python_lines.append("")  # another IPython magic: not Python
            else:
                python_lines.append(line)
        imports |= imports_in("\n".join(python_lines))
    return LessonNeeds(frozenset(imports), tuple(shell), kernel=bool(code))


def _tags(cell: Mapping[str, Any]) -> list[str]:
    tags = cell.get("metadata", {}).get("tags", [])
    return tags if isinstance(tags, list) else []


def answer_cells(notebook: Mapping[str, Any]) -> list[int]:
    """The code cells whose stored outputs answer what the student is asked first (indices).

    From each ``predict`` cell to the next ``compare`` cell, both included, and every cell
    tagged ``shows-answer``.

    Raises
    ------
    ValueError
        If a ``predict`` cell has no ``compare`` cell after it (before the next
        ``predict``): the measurement it asks about could not be told from the rest.
    """
    cells = notebook.get("cells", [])
    found: set[int] = set()
    open_at: int | None = None
    for i, cell in enumerate(cells):
        tags = _tags(cell)
        if PREDICT in tags:
            if open_at is not None:
                raise ValueError(f"cell {open_at} is tagged {PREDICT!r} but no cell tagged "
                                 f"{COMPARE!r} follows it before the next guess (cell {i})")
            open_at = i
        if open_at is not None or SHOWS_ANSWER in tags:
            found.add(i)
        if COMPARE in tags:
            open_at = None
    if open_at is not None:
        raise ValueError(f"cell {open_at} is tagged {PREDICT!r} but no cell tagged "
                         f"{COMPARE!r} follows it")
    return sorted(i for i in found if cells[i].get("cell_type") == "code")


def students_notebook(notebook: dict[str, Any]) -> int:
    """Clear, in place, the stored outputs of :func:`answer_cells` (and their execution
    counts); return how many cells had outputs to clear."""
    cleared = 0
    for i in answer_cells(notebook):
        cell = notebook["cells"][i]
        if cell.get("outputs") or cell.get("execution_count") is not None:
            cleared += bool(cell.get("outputs"))
            cell["outputs"], cell["execution_count"] = [], None
    return cleared


def students_copy(data: bytes) -> bytes:
    """A lesson's bytes as a student's copy holds them: :func:`students_notebook` applied,
    written as nbformat writes a notebook; the same bytes when nothing is cleared (and for
    a file that is not a notebook's JSON, which the caller names)."""
    notebook = json.loads(data.decode("utf-8"))
    if not isinstance(notebook, dict) or not students_notebook(notebook):
        return data
    return (json.dumps(notebook, sort_keys=True, indent=1, ensure_ascii=False) + "\n"
            ).encode("utf-8")


def browser_note(problems: list[str], with_id: bool = True) -> dict[str, Any]:
    """The Markdown cell that tells a student why a lesson cannot run fully in the browser.

    ``with_id`` gives it a cell id (nbformat 4.5 and later require one; 4.4 forbids it).
    """
    lines = "\n".join(f"> - {p}" for p in problems)
    return {
        "cell_type": "markdown",
        **({"id": "site-browser-note"} if with_id else {}),
        "metadata": {"tags": [NOTE_TAG]},
        "source": (
            "> **This lesson cannot run completely in the browser version of the course.**\n"
            f"{lines}\n>\n"
            "> The rest of the lesson works here. To run all of it, open it in JupyterLab on "
            "a computer with Python (`./course lab`, see the course's README)."
        ),
    }


def add_reset_note(path: Path) -> None:
    """Add to the notebook at ``path`` (the site's first page), after its title cell, a
    Markdown cell that says where a student's edits are kept and how a lesson starts again.

    JupyterLite keeps a saved notebook in the browser's storage; deleting it in the file
    browser deletes that copy only, and the site's own file shows again.
    """
    notebook = json.loads(path.read_text(encoding="utf-8"))
    with_id = (notebook.get("nbformat", 4), notebook.get("nbformat_minor", 0)) >= (4, 5)
    notebook["cells"].insert(1, {
        "cell_type": "markdown",
        **({"id": RESET_TAG} if with_id else {}),
        "metadata": {"tags": [RESET_TAG]},
        "source": (
            "> **In this browser version**, what you save stays in this browser. To start a "
            "lesson again, close it, then right-click it in the file browser (on the left) "
            "and choose **Delete**: that deletes your copy only, and the lesson opens again "
            "as the course wrote it."
        ),
    })
    path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n",
                    encoding="utf-8")


def git_ignored(folder: Path) -> set[Path]:
    """The files and folders under ``folder`` that git ignores (resolved paths); none when
    git or a repository is not there.

    >>> git_ignored(Path("/"))
    set()
    """
    try:
        listed = subprocess.run(
            ["git", "-C", str(folder), "ls-files", "-z", "--others", "--ignored",
             "--exclude-standard", "--directory", "."],
            capture_output=True, timeout=60, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return set()
    return {(folder / name.decode()).resolve() for name in listed.split(b"\0") if name}


def copy_lessons(source: Path, dest: Path,
                 problems_of: Callable[[LessonNeeds], list[str]]) -> list[CopiedLesson]:
    """Copy the notebook folder ``source`` to ``dest``, noting lessons the browser cannot run.

    Parameters
    ----------
    source, dest
        The course's notebook folder, and where its copy goes (created).
    problems_of
        Given what a notebook needs, the reasons (sentences) it cannot run fully in the
        browser; an empty list when it can.

    Returns
    -------
    list of CopiedLesson
        Per notebook (in path order): its path relative to ``dest`` (POSIX), what it needs,
        and its problems (usually none).

    Raises
    ------
    ValueError
        If a notebook is not valid JSON (the site would show it broken), a ``predict``
        cell has no ``compare`` cell after it, or the folder holds a symbolic link (the site
        would publish whatever it points to).

    Notes
    -----
    Folders named in :data:`NOT_LESSONS` and whatever git ignores are not copied: a
    student's solved copies never reach the site. Each copy is a student's copy
    (:func:`students_notebook`): no stored output answers a guess or an exercise.
    """
    ignored = git_ignored(Path(source))

    def not_lessons(folder: str, names: list[str]) -> set[str]:
        return {n for n in names
                if n in NOT_LESSONS or (Path(folder) / n).resolve() in ignored}

    links = sorted(str(p.relative_to(source)) for p in Path(source).rglob("*") if p.is_symlink()
                   and not NOT_LESSONS & set(p.relative_to(source).parts))
    if links:
        raise ValueError(f"the lessons' folder must hold no symbolic links (got {links}): the "
                         "site would publish the files they point to")
    shutil.copytree(source, dest, dirs_exist_ok=True, ignore=not_lessons)
    copied = []
    for path in sorted(dest.rglob("*.ipynb")):
        rel = path.relative_to(dest).as_posix()
        try:
            notebook = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            raise ValueError(f"notebook {rel} must be valid JSON ({err})") from None
        needs = lesson_needs(notebook)
        problems = problems_of(needs)
        try:
            cleared = students_notebook(notebook)
        except ValueError as err:
            raise ValueError(f"notebook {rel}: {err}") from None
        if problems:
            with_id = (notebook.get("nbformat", 4), notebook.get("nbformat_minor", 0)) >= (4, 5)
            notebook["cells"].insert(0, browser_note(problems, with_id))
        if problems or cleared:
            path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n",
                            encoding="utf-8")
        copied.append(CopiedLesson(rel, needs, problems))
    return copied
