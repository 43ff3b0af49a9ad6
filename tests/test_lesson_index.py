"""scripts/lesson_index.py: every notebook says what it is; a notebook that does not is named."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import lesson_index  # noqa: E402  (a script's module, importable once scripts/ is on the path)
from lesson_index import LessonDataError  # noqa: E402


def test_the_course_reads_as_its_parts() -> None:
    index = lesson_index.read_index()
    assert [n.kind for n in index[:2]] == ["contents", "lesson"]
    by_part = {part: [n.name for n in lesson_index.lessons(part=part)]
               for part in lesson_index.PARTS}
    assert by_part[1][:2] == ["overview", "scores"] and "causal_masking" in by_part[1]
    assert "real_model" in by_part[2] and "kv_cache_and_block" in by_part[3]
    self_study = lesson_index.the_one(kind=lesson_index.CHECKPOINT)
    assert self_study.part == 1 and self_study not in lesson_index.lessons()
    assert self_study in lesson_index.with_exercises()
    assert lesson_index.the_one(kind=lesson_index.CONTENTS).number == "00"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """Three notebooks of the course: the contents page and two lessons."""
    dest = tmp_path / "notebooks"
    dest.mkdir()
    for path in lesson_index.read_index()[:3]:
        shutil.copy(path.path, dest / path.path.name)
    return dest


def _set(path: Path, **lesson: object) -> None:
    nb = json.loads(path.read_text(encoding="utf-8"))
    nb["metadata"]["lesson"] = {k: v for k, v in lesson.items() if v is not None}
    path.write_text(json.dumps(nb), encoding="utf-8")


@pytest.mark.parametrize("lesson, message", [
    ({"kind": None, "part": 1, "summary": "s"},
     r"02_scores.ipynb: metadata.lesson.kind must be one of 'contents', 'lesson', "
     r"'self-study checkpoint' \(got None\)"),
    ({"kind": "exercise", "part": 1, "summary": "s"}, r"kind must be one of .* \(got 'exercise'\)"),
    ({"kind": "lesson", "part": None, "summary": "s"},
     r"02_scores.ipynb: metadata.lesson.part must be one of \[1, 2, 3\] \(got None\)"),
    ({"kind": "lesson", "part": "2", "summary": "s"},
     r"part must be one of \[1, 2, 3\] \(got '2'\)"),
    ({"kind": "lesson", "part": 2, "summary": " "}, r"02_scores.ipynb: metadata.lesson.summary is"),
    ({"kind": "contents"}, r"one contents page, numbered 00 \(got \['00_contents.ipynb', "
                           r"'02_scores.ipynb'\]\)"),
])
def test_what_a_notebook_says_of_itself_is_checked(folder: Path, lesson: dict,
                                                   message: str) -> None:
    _set(folder / "02_scores.ipynb", **lesson)
    with pytest.raises(LessonDataError, match=message):
        lesson_index.read_index(folder)


def test_a_notebook_that_says_nothing_is_named(folder: Path) -> None:
    nb = json.loads((folder / "01_overview.ipynb").read_text(encoding="utf-8"))
    del nb["metadata"]["lesson"]
    (folder / "01_overview.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    with pytest.raises(LessonDataError, match=r"notebooks/01_overview.ipynb: metadata.lesson "
                       r"is missing: every notebook says its kind"):
        lesson_index.read_index(folder)


@pytest.mark.parametrize("rename, message", [
    (("02_scores.ipynb", "03_scores.ipynb"), r"numbered 00, 01, 02, \.\.\. in order, each "
                                             r"number once \(got \['00', '01', '03'\]\)"),
    (("02_scores.ipynb", "01_scores.ipynb"), r"each number once \(got \['00', '01', '01'\]\)"),
    (("02_scores.ipynb", "02_Scores.ipynb"), r"02_Scores.ipynb: a notebook of the course is "
                                             r"named NN_name.ipynb"),
    (("02_scores.ipynb", "scores.ipynb"), r"scores.ipynb: a notebook of the course is named"),
])
def test_names_are_numbered_without_a_gap(folder: Path, rename: tuple[str, str],
                                          message: str) -> None:
    (folder / rename[0]).rename(folder / rename[1])
    with pytest.raises(LessonDataError, match=message):
        lesson_index.read_index(folder)


def test_a_title_is_needed_and_a_broken_file_is_named(folder: Path) -> None:
    nb = json.loads((folder / "02_scores.ipynb").read_text(encoding="utf-8"))
    nb["cells"] = [c for c in nb["cells"] if c["cell_type"] == "code"]
    (folder / "02_scores.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    with pytest.raises(LessonDataError, match=r"02_scores.ipynb: no '# ' title heading"):
        lesson_index.read_index(folder)
    (folder / "02_scores.ipynb").write_text("{not json", encoding="utf-8")
    with pytest.raises(LessonDataError, match=r"02_scores.ipynb: not a readable notebook "
                       r"\(JSONDecodeError"):
        lesson_index.read_index(folder)


def test_a_selection_names_only_kinds_and_parts_the_course_has(folder: Path) -> None:
    index = lesson_index.read_index(folder)
    assert [n.name for n in lesson_index.select(index, kind="lesson", part=1)] == [
        "overview", "scores"]
    assert lesson_index.select(index, part=2) == []
    with pytest.raises(LessonDataError, match=r"kind must be among .* \(got \['lessons'\]\)"):
        lesson_index.select(index, kind="lessons")
    with pytest.raises(LessonDataError, match=r"part must be one of \[1, 2, 3\] \(got 4\)"):
        lesson_index.select(index, part=4)
    with pytest.raises(LessonDataError, match=r"exactly one notebook of kind 'self-study "
                       r"checkpoint' \(got \[\]\)"):
        lesson_index.the_one(folder, kind=lesson_index.CHECKPOINT)


def test_each_lesson_states_its_time_and_a_part_adds_them_up() -> None:
    index = lesson_index.read_index()
    worked = lesson_index.with_exercises()
    assert all(isinstance(n.minutes, int) and n.minutes > 0 for n in worked)
    assert lesson_index.the_one(kind=lesson_index.CONTENTS).minutes is None
    for part in lesson_index.PARTS:
        assert lesson_index.part_minutes(index, part) == sum(
            n.minutes for n in worked if n.part == part)
    with pytest.raises(LessonDataError, match=r"part must be one of \[1, 2, 3\] \(got 4\)"):
        lesson_index.part_minutes(index, 4)


def test_a_lesson_without_its_time_is_named(folder: Path) -> None:
    nb = json.loads((folder / "02_scores.ipynb").read_text(encoding="utf-8"))
    first = "".join(nb["cells"][0]["source"])
    nb["cells"][0]["source"] = first.replace("**Time:**", "Time:")
    (folder / "02_scores.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    index = lesson_index.read_index(folder)  # what it is is still read
    assert [n.minutes for n in index[1:]] == [index[1].minutes, None]
    with pytest.raises(LessonDataError, match=r"^02_scores.ipynb: its first cell states no "
                       r"time; a lesson says how long it takes as '\*\*Time:\*\* about N "
                       r"minutes'"):
        lesson_index.part_minutes(index, 1)
