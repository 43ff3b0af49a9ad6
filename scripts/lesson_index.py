"""The course's notebooks as data: what each one is, read from its own metadata.

Every notebook of ``notebooks/`` says what it is in ``metadata.lesson``::

    "lesson": {"kind": "lesson", "part": 2, "summary": "Q = X W_Q, K = X W_K, ..."}

- ``kind``: ``"contents"`` (the contents page, ``00_contents.ipynb``), ``"lesson"``, or
  ``"self-study checkpoint"`` (the checkpoint's questions with instant feedback);
- ``part``: the part of the course it belongs to (:data:`PARTS`); not on the contents page;
- ``summary``: one line for the contents page and the README (not on the contents page).

Each lesson and the self-study checkpoint also says how long it takes, in its first cell:
``**Time:** about 20 minutes``; a part's time (:func:`part_minutes`) is the sum of its
notebooks' times, which the contents page and the README show.

The scripts (``update_nav.py``, ``run_lessons.py``), the tests and the benchmarks select
notebooks through :func:`read_index` and :func:`select`, by kind and part, never by the
number in a file's name: that number only orders them, and a new lesson is held to every
rule the moment it declares its kind. A notebook that declares none, or one this module
does not know, stops :func:`read_index` with a message naming the file.

Usage::

    python scripts/lesson_index.py     # every notebook: number, kind, part, time, title;
                                       # then each part's time
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"

CONTENTS = "contents"
LESSON = "lesson"
CHECKPOINT = "self-study checkpoint"
#: The kinds of notebook, and what each one is.
KINDS = {
    CONTENTS: "the contents page: every other notebook, linked, with its summary",
    LESSON: "a lesson: a title and a Time: line, a predict-first cell and its reveal, "
            "exercises with checks (one not a fill-in), a summary, navigation",
    CHECKPOINT: "the checkpoint's questions with instant feedback, for self-study",
}
#: The parts of the course: number, title.
PARTS = {
    1: "The equation, term by term",
    2: "Attention in a real model",
    3: "Under the hood",
}
#: Part 1 is the unit a class takes; parts 2 and 3 are optional, each built on part 1 only.
OPTIONAL_PARTS = (2, 3)
#: Every notebook's file name: a two-digit number (its place in the course) and a name.
NAME = re.compile(r"^(\d\d)_([a-z0-9_]+)\.ipynb$")
#: The time a lesson states in its first cell: ``**Time:** about 20 minutes``.
TIME = re.compile(r"\*\*Time:\*\*\s+about\s+(\d+)\s+minutes")


class LessonDataError(ValueError):
    """A notebook's name or its ``metadata.lesson`` is not what the course reads."""


@dataclass(frozen=True)
class Notebook:
    """One notebook of the course, as its name and metadata describe it."""

    path: Path
    kind: str
    part: int | None
    title: str
    summary: str | None
    minutes: int | None = None  # its Time: line; None if it states none (part_minutes refuses)

    @property
    def number(self) -> str:
        """The two digits of its file name: its place in the order, nothing more."""
        return NAME.match(self.path.name).group(1)

    @property
    def name(self) -> str:
        """Its file name without the number: ``04_softmax.ipynb`` is ``softmax``."""
        return NAME.match(self.path.name).group(2)


def _fail(path: Path, message: str) -> LessonDataError:
    return LessonDataError(f"{path.parent.name}/{path.name}: {message}")


def read_notebook(path: Path) -> Notebook:
    """The notebook at ``path``, its kind, part, title and summary checked.

    Raises
    ------
    LessonDataError
        If its name is not ``NN_name.ipynb``, it is not a notebook, or its
        ``metadata.lesson`` misses a kind, part or summary it needs (the message says which,
        what is allowed, and what the file holds).
    """
    path = Path(path)
    if not NAME.match(path.name):
        raise _fail(path, "a notebook of the course is named NN_name.ipynb (two digits, "
                    "then lower-case letters, digits and _)")
    try:
        nb = json.loads(path.read_text(encoding="utf-8"))
        meta = nb.get("metadata", {}).get("lesson")
        cells = nb["cells"]
    except (OSError, ValueError, KeyError, AttributeError) as exc:
        raise _fail(path, f"not a readable notebook ({type(exc).__name__}: {exc})") from None
    if not isinstance(meta, dict):
        raise _fail(path, "metadata.lesson is missing: every notebook says its kind "
                    f"({', '.join(map(repr, KINDS))}), its part and its summary")
    kind = meta.get("kind")
    if kind not in KINDS:
        raise _fail(path, f"metadata.lesson.kind must be one of {', '.join(map(repr, KINDS))} "
                    f"(got {kind!r})")
    part = meta.get("part")
    if kind == CONTENTS:
        if part is not None or meta.get("summary") is not None:
            raise _fail(path, "the contents page has no part and no summary (got "
                        f"part {part!r}, summary {meta.get('summary')!r})")
    else:
        if part not in PARTS:
            raise _fail(path, f"metadata.lesson.part must be one of {sorted(PARTS)} "
                        f"(got {part!r})")
        if not isinstance(meta.get("summary"), str) or not meta["summary"].strip():
            raise _fail(path, "metadata.lesson.summary is missing (one line for the "
                        "contents and the README)")
    title = next((line[2:].strip() for c in cells if c.get("cell_type") == "markdown"
                  for line in "".join(c.get("source", "")).splitlines()
                  if line.startswith("# ")), None)
    if title is None:
        raise _fail(path, "no '# ' title heading in any markdown cell")
    first = "".join(cells[0].get("source", "")) if cells else ""
    stated = TIME.search(" ".join(first.split())) if kind != CONTENTS else None
    return Notebook(path, kind, part, title, meta.get("summary"),
                    int(stated.group(1)) if stated else None)


def read_index(folder: Path = NOTEBOOKS) -> list[Notebook]:
    """Every notebook directly in ``folder``, in the order of their numbers, each read by
    :func:`read_notebook`; the numbers run 00, 01, 02, ... without a gap or a repeat, and
    the contents page is 00.

    Raises
    ------
    LessonDataError
        A notebook's data is wrong (see :func:`read_notebook`), the numbers skip or repeat,
        or there is not exactly one contents page, numbered 00.
    """
    found = [read_notebook(p) for p in sorted(Path(folder).glob("*.ipynb"))]
    if not found:
        raise LessonDataError(f"{folder}: no notebooks (NN_name.ipynb)")
    numbers = [n.number for n in found]
    if numbers != [f"{i:02d}" for i in range(len(found))]:
        raise LessonDataError(f"{Path(folder).name}: the notebooks must be numbered 00, 01, "
                              f"02, ... in order, each number once (got {numbers})")
    contents = [n for n in found if n.kind == CONTENTS]
    if [n.number for n in contents] != ["00"]:
        raise LessonDataError(f"{Path(folder).name}: one contents page, numbered 00 (got "
                              f"{[n.path.name for n in contents]})")
    return found


def select(notebooks: Iterable[Notebook], *, kind: str | Iterable[str] | None = None,
           part: int | None = None) -> list[Notebook]:
    """The notebooks of ``kind`` (one, or several) and ``part``; None takes all.

    Raises
    ------
    LessonDataError
        If ``kind`` or ``part`` is not one the course has (a typo would select nothing).
    """
    kinds = None if kind is None else {kind} if isinstance(kind, str) else set(kind)
    if kinds is not None and not kinds <= set(KINDS):
        raise LessonDataError(f"kind must be among {sorted(KINDS)} (got {sorted(kinds)})")
    if part is not None and part not in PARTS:
        raise LessonDataError(f"part must be one of {sorted(PARTS)} (got {part!r})")
    return [n for n in notebooks if (kinds is None or n.kind in kinds)
            and (part is None or n.part == part)]


def lessons(folder: Path = NOTEBOOKS, *, part: int | None = None) -> list[Notebook]:
    """The lessons (kind ``"lesson"``), of one part or all."""
    return select(read_index(folder), kind=LESSON, part=part)


def with_exercises(folder: Path = NOTEBOOKS) -> list[Notebook]:
    """The notebooks a student works in: the lessons and the self-study checkpoint."""
    return select(read_index(folder), kind=(LESSON, CHECKPOINT))


def part_minutes(notebooks: Iterable[Notebook], part: int) -> int:
    """The stated time of a part: the sum of its lessons' and checkpoint's ``Time:`` lines.

    Raises
    ------
    LessonDataError
        If ``part`` is not one the course has, or one of its notebooks states no time
        (the message names it).
    """
    found = select(notebooks, kind=(LESSON, CHECKPOINT), part=part)
    silent = [n.path.name for n in found if n.minutes is None]
    if silent:
        raise LessonDataError(f"{', '.join(silent)}: its first cell states no time; a lesson "
                              "says how long it takes as '**Time:** about N minutes'")
    return sum(n.minutes for n in found)


def the_one(folder: Path = NOTEBOOKS, *, kind: str) -> Notebook:
    """The one notebook of ``kind`` (the contents page, the self-study checkpoint).

    Raises
    ------
    LessonDataError
        If there is none of that kind, or more than one.
    """
    found = select(read_index(folder), kind=kind)
    if len(found) != 1:
        raise LessonDataError(f"exactly one notebook of kind {kind!r} (got "
                              f"{[n.path.name for n in found]})")
    return found[0]


def main() -> int:
    index = read_index()
    for n in index:
        part = f"part {n.part}" if n.part else ""
        minutes = f"{n.minutes} min" if n.minutes else ""
        print(f"{n.number}  {n.kind:<22} {part:<7} {minutes:>7}  {n.title}")
    for part, title in PARTS.items():
        print(f"part {part}, {title}: {part_minutes(index, part)} minutes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
