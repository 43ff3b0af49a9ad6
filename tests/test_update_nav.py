"""scripts/update_nav.py keeps the navigation current, and it is current now."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("update_nav", ROOT / "scripts" / "update_nav.py")
update_nav = importlib.util.module_from_spec(spec)
sys.modules["update_nav"] = update_nav  # dataclasses look their module up there
spec.loader.exec_module(update_nav)


def test_navigation_in_the_repository_is_current():
    stale = update_nav.run(ROOT, check=True)
    assert stale == [], f"stale: {stale}; run `python scripts/update_nav.py`"


@pytest.fixture
def copy_of_course(tmp_path):
    shutil.copytree(ROOT / "notebooks", tmp_path / "notebooks")
    shutil.copy(ROOT / "README.md", tmp_path / "README.md")
    return tmp_path


def _nav(path: Path) -> list[str]:
    nb = nbformat.read(path, as_version=4)
    return [c.source for c in nb.cells if "nav" in c.metadata.get("tags", [])]


def test_nav_links_previous_contents_next(copy_of_course):
    lessons = update_nav.find_lessons(copy_of_course / "notebooks")
    first, second = lessons[0], lessons[1]
    nav = _nav(first.path)[0]
    assert nav.startswith("<!--NAVIGATION-->")
    assert "[Contents](00_contents.ipynb)" in nav and f"({second.path.name}) >" in nav
    assert "< [" not in nav  # the first lesson has no previous
    assert f"< [{first.title}]({first.path.name})" in _nav(second.path)[0]


def test_a_new_lesson_makes_everything_stale_and_run_fixes_it(copy_of_course):
    folder = copy_of_course / "notebooks"
    last = update_nav.find_lessons(folder)[-1]
    n = len(list(folder.glob("*.ipynb")))  # the next number: they run 00, 01, ... (checked)
    new = folder / f"{n:02d}_extra_lesson.ipynb"
    nb = nbformat.read(last.path, as_version=4)
    nb.cells[0].source = f"# {n:02d} · An extra lesson\n\n**Time:** about 10 minutes."
    nb.metadata["lesson"] = {"kind": "lesson", "part": 3, "summary": "one more idea"}
    nbformat.write(nb, new)
    before = nbformat.read(last.path, as_version=4)

    stale = update_nav.run(copy_of_course, check=True)
    assert last.path in stale and new in stale
    assert folder / "00_contents.ipynb" in stale and copy_of_course / "README.md" in stale
    assert nbformat.read(last.path, as_version=4) == before  # --check changes nothing

    update_nav.run(copy_of_course)
    assert update_nav.run(copy_of_course, check=True) == []
    assert f"[{n:02d} · An extra lesson]({new.name}) >" in _nav(last.path)[0]
    assert f"{new.name}" in (copy_of_course / "README.md").read_text(encoding="utf-8")
    after = nbformat.read(last.path, as_version=4)
    outputs = [c.get("outputs") for c in after.cells if c.cell_type == "code"]
    assert outputs == [c.get("outputs") for c in before.cells if c.cell_type == "code"]


def test_hand_edited_nav_is_caught(copy_of_course):
    path = update_nav.find_lessons(copy_of_course / "notebooks")[2].path
    nb = nbformat.read(path, as_version=4)
    next(c for c in nb.cells if "nav" in c.metadata.get("tags", [])).source += " (edited)"
    nbformat.write(nb, path)
    assert update_nav.run(copy_of_course, check=True) == [path]


def test_main_check_exit_code(capsys):
    assert update_nav.main(["--check"]) == 0


def test_a_notebook_without_its_kind_stops_the_script_with_its_name(copy_of_course):
    """A new notebook that says nothing of itself is not left out of the navigation."""
    folder = copy_of_course / "notebooks"
    last = update_nav.find_lessons(folder)[-1]
    n = len(list(folder.glob("*.ipynb")))
    nb = nbformat.read(last.path, as_version=4)
    del nb.metadata["lesson"]
    nbformat.write(nb, folder / f"{n:02d}_unsaid.ipynb")
    with pytest.raises(SystemExit, match=rf"notebooks/{n:02d}_unsaid.ipynb: metadata.lesson is "
                       "missing: every notebook says its kind"):
        update_nav.run(copy_of_course, check=True)


def test_the_contents_page_is_found_by_its_kind(copy_of_course):
    folder = copy_of_course / "notebooks"
    (folder / "00_contents.ipynb").rename(folder / "00_start_here.ipynb")
    lessons = update_nav.find_lessons(folder)
    stale = update_nav.run(copy_of_course, check=True)
    assert [lesson.path for lesson in lessons] == stale  # each links the old name
    update_nav.run(copy_of_course)
    assert update_nav.run(copy_of_course, check=True) == []
    assert all("[Contents](00_start_here.ipynb)" in _nav(lesson.path)[0] for lesson in lessons)


def test_the_contents_and_the_readme_show_the_parts_with_their_times(copy_of_course):
    """Issue 44: each part under its title with the sum of its notebooks' Time: lines; parts
    2 and 3 said to be optional and built on part 1 only; the checkpoint in part 1."""
    folder = copy_of_course / "notebooks"
    index = update_nav.lesson_index.read_index(folder)
    contents = nbformat.read(folder / "00_contents.ipynb", as_version=4).cells[0].source
    readme = (copy_of_course / "README.md").read_text(encoding="utf-8")
    for part, title in update_nav.lesson_index.PARTS.items():
        minutes = update_nav.lesson_index.part_minutes(index, part)
        heading = update_nav.part_heading(part, title, minutes)
        assert f"## {heading}\n" in contents and f"**{heading}**\n" in readme
        assert f"about {minutes} minutes" in heading
        assert ("optional" in heading) == (part != 1)
        assert ("builds on part 1 only" in heading) == (part != 1)
    checkpoint = update_nav.lesson_index.the_one(folder, kind="self-study checkpoint")
    part_one = contents.split("## Part 1", 1)[1].split("## Part 2", 1)[0]
    assert f"]({checkpoint.path.name})" in part_one
    # a lesson that takes longer moves its part's time, in both places
    first = update_nav.lesson_index.lessons(folder, part=1)[0]
    nb = nbformat.read(first.path, as_version=4)
    nb.cells[0].source = nb.cells[0].source.replace(f"about {first.minutes} minutes",
                                                    f"about {first.minutes + 5} minutes")
    nbformat.write(nb, first.path)
    assert {folder / "00_contents.ipynb", copy_of_course / "README.md"} <= set(
        update_nav.run(copy_of_course))
    minutes = update_nav.lesson_index.part_minutes(update_nav.lesson_index.read_index(folder), 1)
    assert f"about {minutes} minutes" in (copy_of_course / "README.md").read_text("utf-8")
