"""Adding a lesson (docs/development.md, "Adding a lesson"), done in a copy of the course.

A throw-away lesson goes between the last lesson and the self-study checkpoint, as the
guide's steps say: the new notebook with its kind and part, the checkpoint renumbered after
it, then ``scripts/update_nav.py`` and the check cells' grade ids (``run_lessons.py``).
The files that differ from the repository are then exactly the new lesson, the renumbered
checkpoint, the lesson before the new one (its navigation) and the generated contents page
and README list: no test, script or other file had to change, because nothing selects
lessons by their number (the first test here keeps it so). In the copy, the suite's own
lesson tests then select the new lesson in every rule they hold lessons to, and fail it
when it breaks one.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import lesson_index  # noqa: E402  (the scripts' modules, on the path above)
import run_lessons  # noqa: E402

#: Where lessons are selected: a selection of a set of lessons by number here would exempt a
#: new lesson, or hold a renumbered one to another's rules.
SELECTING = ["tests", "scripts", "course_site", "benchmarks", "conftest.py"]
#: Ways of selecting lessons by their number, and what each is.
BY_NUMBER = {
    r"\[0-9\]": "a glob of numbered file names ([0-9][0-9]_*.ipynb)",
    r"\.(?:name|stem)\[:2\]": "a notebook's number cut from its file name",
    r"[\"']\d\d[\"']\s*<|<=?\s*[\"']\d\d[\"']": "a range of lesson numbers",
    r"(?:!=|not in)\s*\(?\s*[\"']\d\d[\"']": "a lesson left out by its number",
}
THROWAWAY = "throwaway"


def number_selections(root: Path) -> list[str]:
    """Each line of ``root``'s selecting code that picks lessons by number."""
    found = []
    files = [p for place in SELECTING for p in
             ([root / place] if (root / place).is_file() else sorted((root / place).rglob("*.py")))]
    for path in files:
        if path.name in ("lesson_index.py", Path(__file__).name) or "__pycache__" in path.parts:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            found += [f"{path.relative_to(root)}:{number}: {what}: {line.strip()}"
                      for pattern, what in BY_NUMBER.items() if re.search(pattern, line)]
    return found


def test_no_test_or_script_selects_lessons_by_number() -> None:
    found = number_selections(ROOT)
    assert found == [], ("select lessons by their metadata (scripts/lesson_index.py), not by "
                         "number:\n" + "\n".join(found))


def test_the_scan_finds_each_way_of_selecting_by_number(tmp_path: Path) -> None:
    """The three tests that once left out lesson "16" by number would be found."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text(
        'LESSONS = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))\n'
        'A = [p for p in LESSONS if "01" <= p.name[:2] <= "15"]\n'
        'B = [p for p in LESSONS if p.name[:2] not in ("03", "16")]\n'
        'C = [q for q in QUESTIONS if q.lesson != "16"]\n'
        'D = LESSONS[lesson("10_")]  # one lesson, named: fine\n', encoding="utf-8")
    found = number_selections(tmp_path)
    assert [line.split(": ")[0] for line in found] == [
        "tests/test_x.py:1", "tests/test_x.py:2", "tests/test_x.py:2", "tests/test_x.py:3",
        "tests/test_x.py:3", "tests/test_x.py:4"], found


def _files(root: Path, places: list[str]) -> dict[str, str]:
    """Path relative to ``root`` -> sha256 of the file, for every file of ``places``."""
    out = {}
    for place in places:
        path = root / place
        for f in [path] if path.is_file() else sorted(path.rglob("*")):
            if f.is_file() and "__pycache__" not in f.parts:
                out[f.relative_to(root).as_posix()] = hashlib.sha256(f.read_bytes()).hexdigest()
    return out


def add_throwaway_lesson(course: Path) -> lesson_index.Notebook:
    """The guide's steps, in the copy ``course``: a lesson after the last lesson, before the
    self-study checkpoint, which moves one number on; then the generated files."""
    folder = course / "notebooks"
    last = lesson_index.lessons(folder)[-1]
    checkpoint = lesson_index.the_one(folder, kind=lesson_index.CHECKPOINT)
    assert int(checkpoint.number) == int(last.number) + 1, "the checkpoint follows the lessons"
    moved = folder / f"{int(checkpoint.number) + 1:02d}_{checkpoint.name}.ipynb"
    checkpoint.path.rename(moved)  # git mv, in a repository
    new = folder / f"{checkpoint.number}_{THROWAWAY}.ipynb"
    nb = nbformat.read(last.path, as_version=4)  # its cells: an executed lesson of the rules
    first = nb.cells[0].source.split("\n", 1)
    nb.cells[0].source = f"# {checkpoint.number} · A throw-away lesson\n" + first[1]
    nb.metadata["lesson"] = {"kind": "lesson", "part": last.part,
                             "summary": "a lesson the tests add in a copy of the course"}
    for path, notebook in ((new, nb), (moved, nbformat.read(moved, as_version=4))):
        run_lessons.mark_checks(notebook, path.name)  # what run_lessons.py stores
        nbformat.write(notebook, path)
    done = subprocess.run([sys.executable, str(course / "scripts" / "update_nav.py")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return lesson_index.read_notebook(new)


@pytest.fixture
def course(tmp_path: Path) -> Path:
    """A copy of what the lessons' tests read: the notebooks, scripts, tests and config."""
    for place in ("notebooks", "scripts", "tests", "quiz"):
        shutil.copytree(ROOT / place, tmp_path / place, ignore=shutil.ignore_patterns(
            "__pycache__", "my-work", ".ipynb_checkpoints"))
    for name in ("README.md", "pyproject.toml", "conftest.py"):
        shutil.copy(ROOT / name, tmp_path / name)
    return tmp_path


def test_a_new_lesson_changes_only_itself_the_checkpoint_and_generated_files(course):
    folder = course / "notebooks"
    last = lesson_index.lessons(folder)[-1]
    was = lesson_index.the_one(folder, kind=lesson_index.CHECKPOINT)
    before = _files(course, ["notebooks", "scripts", "tests", "README.md"])
    new = add_throwaway_lesson(course)
    after = _files(course, ["notebooks", "scripts", "tests", "README.md"])
    changed = sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))
    checkpoint = lesson_index.the_one(folder, kind=lesson_index.CHECKPOINT)
    assert changed == sorted([
        f"notebooks/{new.path.name}",         # the lesson (and its checks)
        f"notebooks/{last.path.name}",        # its navigation: the next one is the new lesson
        f"notebooks/{was.path.name}",         # the checkpoint moved one number on ...
        f"notebooks/{checkpoint.path.name}",  # ... to here: its navigation and grade ids
        "notebooks/00_contents.ipynb", "README.md",  # the generated lists
    ]), changed
    # the selection every test, script and benchmark uses finds it by its data
    assert new.path in [n.path for n in lesson_index.lessons(folder, part=new.part)]
    assert new.path in [n.path for n in lesson_index.with_exercises(folder)]
    assert checkpoint.number == f"{int(new.number) + 1:02d}"
    contents = nbformat.read(folder / "00_contents.ipynb", as_version=4).cells[0].source
    assert f"[{new.title}]({new.path.name}): {new.summary}" in contents


@pytest.mark.slow  # runs the suite's lesson tests again, in the copy (about a minute)
@pytest.mark.timeout(600)
def test_the_suites_lesson_tests_hold_a_new_lesson_to_every_rule(course):
    new = add_throwaway_lesson(course)
    last = lesson_index.lessons(course / "notebooks")[-2]  # the lesson before the new one
    tests = sorted(str(p) for p in [*(course / "tests").glob("test_*.py"),
                                    *(course / "tests" / "course_quiz").glob("test_*.py")]
                   if "lesson_index" in p.read_text(encoding="utf-8"))

    def pytest_in_copy(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist",
             "-o", "addopts=", "-c", str(course / "pyproject.toml"), "--rootdir",
             str(course), "-q", *args], cwd=course, capture_output=True, text=True,
            timeout=540)

    collected = pytest_in_copy("--collect-only", *tests)
    assert collected.returncode == 0, collected.stdout[-3000:]
    items = [line for line in collected.stdout.splitlines() if "::" in line]
    # every test that holds a set of lessons to a rule (its ids: the lessons' stems) and the
    # lesson before the new one among them, holds the new one to it too
    rules = {item.split("[")[0] for item in items if item.endswith(f"[{last.path.stem}]")}
    exempt = sorted(r for r in rules if f"{r}[{new.path.stem}]" not in items)
    assert len(rules) > 10 and exempt == [], exempt

    ran = pytest_in_copy("-m", "not slow", "-k", THROWAWAY,
                         str(course / "tests" / "test_lessons.py"))
    assert ran.returncode == 0 and " passed" in ran.stdout, ran.stdout[-3000:]

    nb = nbformat.read(new.path, as_version=4)
    nb.cells[0].source = nb.cells[0].source.replace("Time:", "Duration:")
    nbformat.write(nb, new.path)
    broken = pytest_in_copy("-m", "not slow", "-k", THROWAWAY,
                            str(course / "tests" / "test_lessons.py"))
    assert broken.returncode == 1, broken.stdout[-3000:]
    assert f"FAILED tests/test_lessons.py::test_lesson_skeleton[{new.path.stem}]" in (
        broken.stdout), broken.stdout[-3000:]
