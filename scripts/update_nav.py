"""Keep the lessons' navigation current: nav cells, the contents notebook, the README list.

Every notebook a student works through (``metadata.lesson.kind`` a lesson or the self-study
checkpoint, see ``scripts/lesson_index.py``) has markdown cells tagged ``nav``; this script
rewrites each of them to link the previous notebook, the contents and the next one, in the
order of their numbers, using their own titles (the first ``# `` heading of each). It also
writes the contents page (the notebook of kind ``contents``, ``notebooks/00_contents.ipynb``)
and the list between the ``lessons`` markers of README.md, from the same titles and each
notebook's ``metadata.lesson.summary``, grouped by part (``metadata.lesson.part``), each
part with its time: the sum of its notebooks' ``Time:`` lines. Part 1 is the unit a class
takes, and ends with the checkpoint; parts 2 and 3 are said to be optional, each built on
part 1 only (``lesson_index.OPTIONAL_PARTS``).

Usage::

    python scripts/update_nav.py           # rewrite whatever is stale
    python scripts/update_nav.py --check   # exit 1 and name the stale files; change nothing

Only the navigation text changes: outputs, execution counts and other cells are untouched,
so rerunning the script never invalidates the stored outputs that nbval compares.
"""

from __future__ import annotations

import argparse
import copy
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbformat.v4 import new_markdown_cell, new_notebook

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import lesson_index  # noqa: E402  (a sibling module, importable once scripts/ is on the path)

NAV_MARK = "<!--NAVIGATION-->"
CONTENTS = "00_contents.ipynb"
README_START = "<!-- lessons:start (scripts/update_nav.py writes this list) -->"
README_END = "<!-- lessons:end -->"


@dataclass(frozen=True)
class LessonInfo:
    path: Path
    title: str
    summary: str
    part: int | None = None
    minutes: int | None = None
    kind: str = lesson_index.LESSON

    @property
    def link(self) -> str:
        return f"[{self.title}]({self.path.name})"


def find_lessons(folder: Path) -> list[LessonInfo]:
    """The notebooks a student works through in ``folder`` (lessons and the self-study
    checkpoint, by their metadata), in order, each with its title and summary."""
    try:
        worked = lesson_index.with_exercises(folder)
    except lesson_index.LessonDataError as err:
        raise SystemExit(str(err)) from None
    for part in lesson_index.PARTS:
        try:
            lesson_index.part_minutes(worked, part)
        except lesson_index.LessonDataError as err:
            raise SystemExit(str(err)) from None
    return [LessonInfo(n.path, n.title, n.summary or "", n.part, n.minutes, n.kind)
            for n in worked]


def by_part(lessons: list[LessonInfo]) -> list[tuple[int, str, int, list[LessonInfo]]]:
    """(part, its title, its minutes, its notebooks in order) for each part with notebooks;
    the self-study checkpoint is listed last in its part, as it is numbered last."""
    found = []
    for part, title in lesson_index.PARTS.items():
        mine = [lesson for lesson in lessons if lesson.part == part]
        mine.sort(key=lambda lesson: lesson.kind == lesson_index.CHECKPOINT)
        if mine:
            found.append((part, title, sum(lesson.minutes or 0 for lesson in mine), mine))
    return found


def part_heading(part: int, title: str, minutes: int) -> str:
    """A part's name and time, and whether a class may leave it out."""
    if part in lesson_index.OPTIONAL_PARTS:
        return (f"Part {part} · {title} (optional, about {minutes} minutes; it builds on "
                "part 1 only)")
    return f"Part {part} · {title} (about {minutes} minutes; a class can stop after it)"


def listed(lesson: LessonInfo) -> str:
    """A notebook's line in a list: its title, linked, and its summary; the checkpoint,
    numbered after every part, says when to take it."""
    when = (" (it comes last in the course; take it where your class stops, after part 1 "
            "or after the optional parts)" if lesson.kind == lesson_index.CHECKPOINT else "")
    return f"{lesson.link}: {lesson.summary}{when}"


def nav_text(lessons: list[LessonInfo], i: int, contents: str = CONTENTS) -> str:
    parts = []
    if i > 0:
        parts.append(f"< {lessons[i - 1].link}")
    parts.append(f"[Contents]({contents})")
    if i + 1 < len(lessons):
        parts.append(f"{lessons[i + 1].link} >")
    return f"{NAV_MARK}\n" + " | ".join(parts)


def updated_lesson(lesson: LessonInfo, text: str) -> nbformat.NotebookNode | None:
    """The lesson with its nav cells rewritten, or None when they are already current."""
    nb = nbformat.read(lesson.path, as_version=4)
    nav_cells = [c for c in nb.cells if "nav" in c.get("metadata", {}).get("tags", [])]
    if not nav_cells:
        raise SystemExit(f"{lesson.path}: no markdown cell tagged 'nav'")
    if all(c.source == text for c in nav_cells):
        return None
    for c in nav_cells:
        c.source = text
    return nb


def contents_notebook(lessons: list[LessonInfo], old: nbformat.NotebookNode | None):
    lines = ["# Attention, Term by Term: contents", "",
             "$$\\mathrm{Attention}(Q, K, V) = \\mathrm{softmax}\\!\\left("
             "\\frac{QK^T}{\\sqrt{d_k}}\\right) V$$", "",
             "The course has three parts. **Part 1** is the equation itself, one lesson per "
             "term, and ends with the checkpoint: it is the unit, and a class can stop "
             "there. **Parts 2 and 3 are optional**: each builds on part 1 only, so take "
             "either, both or neither. Work through a part in order; each lesson ends with "
             "exercises that check themselves. The times are the lessons' own, added up."]
    for part, title, minutes, mine in by_part(lessons):
        lines += ["", f"## {part_heading(part, title, minutes)}", ""]
        lines += [f"- {listed(lesson)}" for lesson in mine]
    source = "\n".join(lines)
    if old is not None and len(old.cells) == 1 and old.cells[0].source == source:
        return None
    cell = new_markdown_cell(source)
    cell["id"] = "contents"
    nb = new_notebook(cells=[cell])
    nb.metadata = copy.deepcopy(old.metadata) if old is not None else nbformat.from_dict({
        "kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)",
                       "language": "python"},
        "language_info": {"name": "python"},
        "lesson": {"kind": lesson_index.CONTENTS},
    })
    return nb


def readme_text(lessons: list[LessonInfo], readme: str) -> str | None:
    """README with the lesson list rewritten between the markers (None if current)."""
    if README_START not in readme or README_END not in readme:
        raise SystemExit(f"README.md: the markers {README_START!r} and {README_END!r} "
                         "are missing")
    blocks = []
    for part, title, minutes, mine in by_part(lessons):
        blocks.append("\n".join(
            [f"**{part_heading(part, title, minutes)}**"]
            + [f"- [`notebooks/{lesson.path.name}`](notebooks/{lesson.path.name}) "
               f"**{lesson.title}**: {lesson.summary}" for lesson in mine]))
    listing = "\n\n".join(blocks)
    head, rest = readme.split(README_START, 1)
    _, tail = rest.split(README_END, 1)
    new = f"{head}{README_START}\n{listing}\n{README_END}{tail}"
    return None if new == readme else new


def run(root: Path = ROOT, check: bool = False) -> list[Path]:
    """Update (or with ``check``, only find) stale files; return their paths."""
    folder = root / "notebooks"
    lessons = find_lessons(folder)
    if not lessons:
        raise SystemExit(f"{folder}: no lessons (metadata.lesson.kind, "
                         "scripts/lesson_index.py)")
    try:  # the contents page, by its kind (read_index has checked there is one)
        contents_path = lesson_index.the_one(folder, kind=lesson_index.CONTENTS).path
    except lesson_index.LessonDataError as err:
        raise SystemExit(str(err)) from None
    stale: list[tuple[Path, object]] = []
    for i, lesson in enumerate(lessons):
        nb = updated_lesson(lesson, nav_text(lessons, i, contents_path.name))
        if nb is not None:
            stale.append((lesson.path, nb))
    old = nbformat.read(contents_path, as_version=4) if contents_path.exists() else None
    nb = contents_notebook(lessons, old)
    if nb is not None:
        stale.append((contents_path, nb))
    readme_path = root / "README.md"
    new_readme = readme_text(lessons, readme_path.read_text(encoding="utf-8"))
    if new_readme is not None:
        stale.append((readme_path, new_readme))
    if not check:
        for path, content in stale:
            if isinstance(content, str):
                path.write_text(content, encoding="utf-8")
            else:
                nbformat.write(content, path)
    return [path for path, _ in stale]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="report stale files and exit 1, without changing anything")
    args = parser.parse_args(argv)
    stale = run(check=args.check)
    for path in stale:
        verb = "stale" if args.check else "updated"
        print(f"{verb}: {path.relative_to(ROOT)}")
    if args.check and stale:
        print("run: python scripts/update_nav.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
