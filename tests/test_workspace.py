"""The copying rules of course_site.workspace (``./course copies`` and the class's hub), on
the course's real lessons in a folder of their own: copies made with the guesses' outputs
cleared, an edited copy kept, an untouched copy updated, a broken lesson reported and copied
as it is, a file that cannot be read named while the others are copied, reset."""

from __future__ import annotations

import json
import logging
import shutil
import stat
from pathlib import Path

import pytest

from course_site import hub_lessons
from course_site.lessons import answer_cells, students_copy
from course_site.workspace import (
    MANIFEST,
    WorkspaceError,
    fill,
    read_manifest,
    reset_lesson,
    sha256,
)

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def lessons(tmp_path: Path) -> Path:
    """A copy of the course's lessons (the course's own folder stays untouched)."""
    folder = tmp_path / "lessons"
    shutil.copytree(ROOT / "notebooks", folder, ignore=shutil.ignore_patterns(
        "my-work", ".ipynb_checkpoints", "__pycache__"))
    return folder


def edit_markdown(path: Path, words: str) -> None:
    nb = json.loads(path.read_text(encoding="utf-8"))
    first = next(c for c in nb["cells"] if c["cell_type"] == "markdown")
    first["source"] = "".join(first["source"]) + f"\n\n{words}"
    path.write_text(json.dumps(nb, indent=1) + "\n", encoding="utf-8")


def test_copies_are_made_without_the_guesses_outputs(lessons: Path, tmp_path: Path) -> None:
    work = tmp_path / "home" / "attention-lessons"
    done = fill(lessons, work)
    names = sorted(p.name for p in lessons.glob("*.ipynb"))
    assert done.first and sorted(done.added) == names
    assert (done.updated, done.changed, done.as_is, done.failed) == ([], [], {}, {})
    assert stat.S_IMODE(work.stat().st_mode) == 0o700
    cleared = 0
    for name in names:
        source = json.loads((lessons / name).read_text(encoding="utf-8"))
        copy = json.loads((work / name).read_text(encoding="utf-8"))
        assert [c["source"] for c in copy["cells"]] == [c["source"] for c in source["cells"]]
        for i in answer_cells(source):
            cleared += bool(source["cells"][i].get("outputs"))
            assert copy["cells"][i].get("outputs", []) == [], (name, i)
    assert cleared >= 40, cleared  # the lessons' guesses had outputs to clear
    record = read_manifest(work)
    assert record == {rel: sha256(work / rel) for rel in record}
    assert set(names) <= set(record)
    # nothing changed: nothing to do, nothing written
    again = fill(lessons, work)
    assert not again.first and (again.added, again.updated, again.changed) == ([], [], [])


def test_an_edited_copy_is_kept_and_an_untouched_one_follows_the_course(
        lessons: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    fill(lessons, work)
    edit_markdown(work / "04_softmax.ipynb", "My notes.")
    mine = (work / "04_softmax.ipynb").read_bytes()
    for name in ("03_scaling.ipynb", "04_softmax.ipynb"):
        edit_markdown(lessons / name, f"New in {name}.")
    done = fill(lessons, work)
    assert (done.updated, done.changed) == (["03_scaling.ipynb"], ["04_softmax.ipynb"])
    assert (work / "04_softmax.ipynb").read_bytes() == mine
    assert (work / "03_scaling.ipynb").read_bytes() == students_copy(
        (lessons / "03_scaling.ipynb").read_bytes())
    assert "New in 03_scaling.ipynb." in (work / "03_scaling.ipynb").read_text()
    # told again until the student decides; reset takes the new version, keeps theirs
    assert fill(lessons, work).changed == ["04_softmax.ipynb"]
    kept = reset_lesson(lessons, work, "04_softmax.ipynb")
    assert kept == work / "backups" / "04_softmax-1.ipynb" and kept.read_bytes() == mine
    assert "New in 04_softmax.ipynb." in (work / "04_softmax.ipynb").read_text()
    assert fill(lessons, work).changed == []


def test_a_file_of_the_students_from_before_is_theirs(lessons: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "05_blend.ipynb").write_text("my own notebook")
    done = fill(lessons, work)
    assert "05_blend.ipynb" not in done.added
    assert read_manifest(work)["05_blend.ipynb"] is None
    edit_markdown(lessons / "05_blend.ipynb", "New.")
    fill(lessons, work)
    assert (work / "05_blend.ipynb").read_text() == "my own notebook"


def test_a_broken_lesson_is_reported_and_copied_as_it_is(lessons: Path, tmp_path: Path) -> None:
    (lessons / "05_blend.ipynb").write_text('{"cells": [<<<<<<< HEAD', encoding="utf-8")
    work = tmp_path / "work"
    done = fill(lessons, work)
    assert list(done.as_is) == ["05_blend.ipynb"]
    assert done.as_is["05_blend.ipynb"].startswith("not a notebook the course can read (")
    assert (work / "05_blend.ipynb").read_bytes() == (lessons / "05_blend.ipynb").read_bytes()
    assert (work / "06_worked_example.ipynb").is_file(), "the other lessons were not copied"


def test_a_lesson_that_cannot_be_read_is_named_and_the_others_copied(
        lessons: Path, tmp_path: Path) -> None:
    """(A link to nothing: unreadable by root too, who runs the suite on the hub's machines.)"""
    (lessons / "05_gone.ipynb").symlink_to(tmp_path / "nowhere.ipynb")
    done = fill(lessons, tmp_path / "work")
    assert list(done.failed) == ["05_gone.ipynb"]
    assert done.failed["05_gone.ipynb"].startswith("FileNotFoundError: ")
    assert "06_worked_example.ipynb" in done.added
    assert "05_gone.ipynb" not in read_manifest(tmp_path / "work")


@pytest.mark.parametrize(("record", "said"), [
    ('{"copies": {"04_softmax.ipynb": 5}}',
     r'must hold \{"copies": \{lesson: sha256\}\} \(got \{\'copies\''),
    # nested beyond the json module's recursion: refused with the message of an unreadable
    # record, not a RecursionError
    ("[" * 200_000 + "]" * 200_000, r"cannot read .*\.course-copies\.json \(nested deeper than"),
])
def test_a_broken_record_is_an_error_that_says_what_it_expected(
        lessons: Path, tmp_path: Path, record: str, said: str) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / MANIFEST).write_text(record)
    with pytest.raises(WorkspaceError, match=said):
        fill(lessons, work)
    assert not (work / "04_softmax.ipynb").exists()


def test_a_copy_replaced_by_a_link_is_never_written_through(lessons: Path, tmp_path: Path
                                                            ) -> None:
    """A copy is replaced by renaming a new file over it: a link the student put in its
    place is replaced, never followed."""
    work = tmp_path / "work"
    fill(lessons, work)
    target = tmp_path / "elsewhere.txt"
    target.write_text("not a lesson")
    record = read_manifest(work)
    (work / "03_scaling.ipynb").unlink()
    (work / "03_scaling.ipynb").symlink_to(target)
    # the record says the link's content is the copy: an untouched copy, to be updated
    record["03_scaling.ipynb"] = sha256(target)
    (work / MANIFEST).write_text(json.dumps({"copies": record}))
    edit_markdown(lessons / "03_scaling.ipynb", "New.")
    assert fill(lessons, work).updated == ["03_scaling.ipynb"]
    assert target.read_text() == "not a lesson"
    assert not (work / "03_scaling.ipynb").is_symlink()


# ---- the hub's server extension --------------------------------------------------------


def test_the_extension_makes_the_copies_in_the_servers_root(
        lessons: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    log = logging.getLogger("test-server")
    done = hub_lessons.make_copies(lessons, tmp_path, log)
    assert done is not None and (tmp_path / "attention-lessons" / "04_softmax.ipynb").is_file()
    assert f"course lessons: copies in {tmp_path / 'attention-lessons'}" in caplog.text


@pytest.mark.parametrize("problem", ["unset", "missing", "record"])
def test_the_extension_never_stops_the_server(lessons: Path, tmp_path: Path, problem: str,
                                              caplog: pytest.LogCaptureFixture) -> None:
    """No lessons named, none installed, a broken record: logged, not raised."""
    source: Path | None = {"unset": None, "missing": tmp_path / "nowhere"}.get(problem, lessons)
    if problem == "record":
        (tmp_path / "attention-lessons").mkdir()
        (tmp_path / "attention-lessons" / MANIFEST).write_text("{")
    assert hub_lessons.make_copies(source, tmp_path, logging.getLogger("t")) is None
    said = {"unset": "expected the hub to name the course's lessons in "
                     "ATTENTION_COURSE_LESSONS (docs/deploy.md step 2), found it unset",
            "missing": f"expected the course's lessons in {tmp_path / 'nowhere'} "
                       "(ATTENTION_COURSE_LESSONS, installed by docs/deploy.md step 2), found "
                       "no such folder",
            "record": "it records which version of each lesson your copies came from"}
    assert said[problem] in caplog.text, caplog.text


def test_the_extension_point_loads_and_logs_a_broken_lesson(
        lessons: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    """What Jupyter Server calls: the module it names, then its loader with the server."""
    (lessons / "05_blend.ipynb").write_text("{", encoding="utf-8")
    monkeypatch.setenv(hub_lessons.SOURCE_VARIABLE, str(lessons))

    class Server:
        root_dir = str(tmp_path)
        log = logging.getLogger("server")

    [point] = hub_lessons._jupyter_server_extension_points()
    assert point == {"module": "course_site.hub_lessons"}
    hub_lessons._load_jupyter_server_extension(Server())
    assert (tmp_path / "attention-lessons" / "05_blend.ipynb").read_text() == "{"
    assert ("05_blend.ipynb in " + str(lessons) + ": expected a lesson's notebook, found not "
            "a notebook the course can read") in caplog.text
