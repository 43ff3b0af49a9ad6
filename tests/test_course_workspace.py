"""A student's copies of the lessons: `./course lab` works in notebooks/my-work/, never in the
course's files; `git pull` brings a new lesson version without touching the student's work;
`./course reset NN` starts one lesson again; the site publishes the course's lessons only.

The round trip runs on two local clones of a small repository that holds the `course` script,
the real lessons and the course's .gitignore: "upstream" (the course's authors) and the
student's clone, which solves lesson 04's exercise in its copy, pulls a changed 04 and 03,
is told which lessons changed, builds the site's lessons, and resets 04.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from course_site.lessons import answer_cells, copy_lessons, students_copy

ROOT = Path(__file__).resolve().parents[1]
EXERCISE = 'raise NotImplementedError("Student exercise: write a stable row-wise softmax")'
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def load_course(folder: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The `course` script of the course in ``folder`` (its ROOT is that folder)."""
    monkeypatch.delenv("COURSE_WORKSPACE", raising=False)
    name = f"course_in_{abs(hash(folder))}"
    loader = importlib.machinery.SourceFileLoader(name, str(folder / "course"))
    spec = importlib.util.spec_from_loader(name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env={**os.environ, **GIT_ENV},
                          capture_output=True, text=True, check=True).stdout


def course_script(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "COURSE_WORKSPACE"}
    return subprocess.run([sys.executable, str(folder / "course"), *args], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=60)


def solve_exercise(path: Path) -> str:
    """Replace lesson 04's exercise stub by the lesson's own collapsed solution."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    solution = next("".join(c["source"]) for c in nb["cells"]
                    if "solution" in c["metadata"].get("tags", []))
    code = solution.split("```python\n", 1)[1].split("```", 1)[0]
    [stub] = [c for c in nb["cells"] if EXERCISE in "".join(c["source"])]
    stub["source"] = code
    path.write_text(json.dumps(nb, indent=1), encoding="utf-8")
    return code


def has_cell(path: Path, source: str) -> bool:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return any("".join(c["source"]) == source for c in cells)


def edit_markdown(path: Path, words: str) -> None:
    nb = json.loads(path.read_text(encoding="utf-8"))
    first = next(c for c in nb["cells"] if c["cell_type"] == "markdown")
    first["source"] = "".join(first["source"]) + f"\n\n{words}"
    path.write_text(json.dumps(nb, indent=1) + "\n", encoding="utf-8")


@pytest.fixture
def upstream(tmp_path: Path) -> Path:
    """A repository with the course's script, lessons and .gitignore, one commit."""
    repo = tmp_path / "upstream"
    repo.mkdir()
    shutil.copy2(ROOT / "course", repo / "course")
    shutil.copy2(ROOT / ".gitignore", repo / ".gitignore")
    shutil.copytree(ROOT / "course_site", repo / "course_site",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "notebooks", repo / "notebooks", ignore=shutil.ignore_patterns(
        "my-work", ".ipynb_checkpoints"))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "the course")
    return repo


def test_the_round_trip_keeps_the_students_work_apart(upstream: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    student = tmp_path / "student"
    git(tmp_path, "clone", "-q", str(upstream), str(student))
    course = load_course(student, monkeypatch)
    assert course.WORKSPACE == student / "notebooks" / "my-work"
    lessons = sorted(p.name for p in (student / "notebooks").glob("*.ipynb"))

    # first `./course lab`: a copy of every lesson, and JupyterLab opens the copies
    said = course.fill_workspace()
    assert "your own copies of the lessons are in notebooks/my-work/" in said[0], said
    work = course.WORKSPACE
    assert sorted(p.name for p in work.glob("*.ipynb")) == lessons
    for name in lessons:
        assert (work / name).read_bytes() == students_copy(
            (student / "notebooks" / name).read_bytes())
    assert f"--ServerApp.root_dir={work}" in course.lab_command([])
    assert "--LabApp.default_url=/lab/tree/00_contents.ipynb" in course.lab_command([])

    # the student solves 04's exercise in the copy: the course's files are untouched
    code = solve_exercise(work / "04_softmax.ipynb")
    assert git(student, "status", "--porcelain") == ""
    # ... and the site's lessons (what the site build copies) are the course's, unsolved
    site = copy_lessons(student / "notebooks", tmp_path / "site-files", lambda needs: [])
    assert sorted(lesson.path for lesson in site) == lessons
    published = (tmp_path / "site-files" / "04_softmax.ipynb").read_text()
    assert EXERCISE.replace('"', '\\"') in published
    assert not (tmp_path / "site-files" / "my-work").exists()

    # the course's authors change 04 and 03; the student pulls
    for name in ("03_scaling.ipynb", "04_softmax.ipynb"):
        edit_markdown(upstream / "notebooks" / name, f"New in {name}.")
    git(upstream, "commit", "-q", "-am", "lessons 03 and 04 say more")
    git(student, "pull", "-q", "--ff-only")
    assert git(student, "status", "--porcelain") == ""
    assert "New in 04_softmax.ipynb." in (student / "notebooks" / "04_softmax.ipynb").read_text()

    # the next `./course lab` tells what changed, keeps the solved 04, updates the untouched 03
    said = course.fill_workspace()
    assert has_cell(work / "04_softmax.ipynb", code), "the solution was lost"
    assert "New in 04_softmax.ipynb." not in (work / "04_softmax.ipynb").read_text()
    assert (work / "03_scaling.ipynb").read_bytes() == students_copy(
        (student / "notebooks" / "03_scaling.ipynb").read_bytes())
    assert said == [
        "the course changed 03_scaling.ipynb; you had not, so your copy is now the new version",
        "the course changed 04_softmax.ipynb since your copy was made; your copy is kept as it "
        "is. `./course reset 04` starts it again from the new version (and keeps yours in "
        "notebooks/my-work/backups/)"], said
    assert course.fill_workspace() == said[1:], "told again until the student decides"

    # `./course reset 04`: the new version, the solved copy kept as a backup
    done = course_script(student, "reset", "04")
    assert done.returncode == 0, done.stderr
    assert ("notebooks/my-work/04_softmax.ipynb starts again from the course's current "
            "version; your copy before is kept as notebooks/my-work/backups/04_softmax-1.ipynb"
            ) in done.stdout
    assert (work / "04_softmax.ipynb").read_bytes() == students_copy(
        (student / "notebooks" / "04_softmax.ipynb").read_bytes())
    assert has_cell(work / "backups" / "04_softmax-1.ipynb", code)
    assert course.fill_workspace() == [], "nothing left to tell"
    assert git(student, "status", "--porcelain") == ""


def test_a_new_lesson_upstream_is_copied_and_a_deleted_copy_comes_back(
        upstream: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    course = load_course(upstream, monkeypatch)
    course.fill_workspace()
    shutil.copy2(upstream / "notebooks" / "01_overview.ipynb",
                 upstream / "notebooks" / "13_more.ipynb")
    (course.WORKSPACE / "02_scores.ipynb").unlink()
    said = course.fill_workspace()
    assert said == ["new in the course, copied into notebooks/my-work/: 02_scores.ipynb, "
                    "13_more.ipynb"], said
    assert (course.WORKSPACE / "13_more.ipynb").is_file()


def test_reset_names_the_lessons_when_it_cannot_tell_which(
        upstream: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for wrong in (["99"], [], ["04", "05"]):
        done = course_script(upstream, "reset", *wrong)
        assert done.returncode == 2, done
        assert "./course reset 04" in done.stderr, done.stderr
    assert ("(got '99', which names no lesson; lesson numbers have two digits; lessons: "
            "00_contents, 01_overview,") in course_script(upstream, "reset", "99").stderr
    # a one-digit number is the lesson with that number (issue 44: `reset 1` was refused)
    done = course_script(upstream, "reset", "4")
    assert done.returncode == 0 and "04_softmax.ipynb" in done.stdout, done
    assert "which names no lesson" in course_script(upstream, "reset", "7x").stderr
    # a reset of an untouched copy keeps no backup, and fills nothing else
    done = course_script(upstream, "reset", "04_softmax.ipynb")
    assert done.returncode == 0 and "your copy had no changes of yours" in done.stdout, done
    work = upstream / "notebooks" / "my-work"
    assert sorted(p.name for p in work.iterdir()) == [".course-copies.json", "04_softmax.ipynb"]


def test_a_broken_record_is_a_clear_error(upstream: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    course = load_course(upstream, monkeypatch)
    course.WORKSPACE.mkdir()
    (course.WORKSPACE / ".course-copies.json").write_text("[1, 2]")
    with pytest.raises(SystemExit):
        course.fill_workspace()
    assert ('.course-copies.json must hold {"copies": {lesson: sha256}} (got [1, 2])'
            in capsys.readouterr().err)


def test_the_site_never_copies_a_students_files(tmp_path: Path) -> None:
    """Whatever the student keeps under notebooks/ (their copies, a git-ignored file)."""
    repo = tmp_path / "course"
    (repo / "notebooks" / "my-work").mkdir(parents=True)
    (repo / ".gitignore").write_text("notebooks/my-work/\n*.secret\n")
    (repo / "notebooks" / "01_a.ipynb").write_text(json.dumps(
        {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    (repo / "notebooks" / "my-work" / "01_a.ipynb").write_text("{}")
    (repo / "notebooks" / "answers.secret").write_text("mine")
    git(repo, "init", "-q")
    copied = copy_lessons(repo / "notebooks", tmp_path / "files", lambda needs: [])
    assert [c.path for c in copied] == ["01_a.ipynb"]
    assert sorted(p.name for p in (tmp_path / "files").iterdir()) == ["01_a.ipynb"]


def test_edits_made_in_the_course_files_before_copies_existed_move_to_the_copies(
        upstream: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A student who worked in notebooks/ itself (the course before copies) loses nothing."""
    student = tmp_path / "student"
    git(tmp_path, "clone", "-q", str(upstream), str(student))
    code = solve_exercise(student / "notebooks" / "04_softmax.ipynb")  # the old way
    course = load_course(student, monkeypatch)
    said = course.fill_workspace()
    assert said[-1] == (
        "you had edited 04_softmax.ipynb in notebooks/ itself: your copies in notebooks/my-work/ "
        "have those edits. `git checkout notebooks/` gives the course's files back (then "
        "`git pull` works and `./course site` shows the course's lessons)"), said
    copy = course.WORKSPACE / "04_softmax.ipynb"
    assert has_cell(copy, code)
    git(student, "checkout", "notebooks/")
    assert course.fill_workspace() == [], "the course's own version is the one recorded"
    assert has_cell(copy, code), "the student's work was lost"
    edit_markdown(upstream / "notebooks" / "04_softmax.ipynb", "New.")
    git(upstream, "commit", "-q", "-am", "04 says more")
    git(student, "pull", "-q", "--ff-only")
    [line] = course.fill_workspace()
    assert line.startswith("the course changed 04_softmax.ipynb since your copy was made; "
                           "your copy is kept as it is."), line


def test_copies_without_the_lab_for_conda_users(upstream: Path) -> None:
    first = course_script(upstream, "copies")
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("course: your own copies of the lessons are in "
                                   "notebooks/my-work/"), first.stdout
    assert (upstream / "notebooks" / "my-work" / "00_contents.ipynb").is_file()
    again = course_script(upstream, "copies")
    assert again.stdout == ("course: your copies in notebooks/my-work/ are up to date with "
                            "the course\n"), again.stdout
    assert course_script(upstream, "copies", "04").returncode == 2


def outputs(nb: dict) -> list[list]:
    return [c.get("outputs", []) for c in nb["cells"]]


def test_a_copy_shows_no_answer_before_the_student_is_asked(
        upstream: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The stored outputs from a guess to its comparison (and of cells tagged shows-answer)
    are in the course's notebooks, for strict nbval, and in no student's copy: neither
    ``./course lab``'s nor the site's. Every other output is kept."""
    course = load_course(upstream, monkeypatch)
    course.fill_workspace()
    copy_lessons(upstream / "notebooks", tmp_path / "site-files", lambda needs: [])
    hidden = 0
    for path in sorted((upstream / "notebooks").glob("*.ipynb")):
        lesson = json.loads(path.read_text(encoding="utf-8"))
        answers = answer_cells(lesson)
        hidden += sum(bool(lesson["cells"][i].get("outputs")) for i in answers)
        for copy in (course.WORKSPACE / path.name, tmp_path / "site-files" / path.name):
            mine = json.loads(copy.read_text(encoding="utf-8"))
            assert [c["source"] for c in mine["cells"]] == [
                c["source"] for c in lesson["cells"]], copy
            for i, (theirs, kept) in enumerate(zip(outputs(lesson), outputs(mine),
                                                   strict=True)):
                assert kept == ([] if i in answers else theirs), (copy, i)
    # every lesson's guesses: 20 of them, each with a measurement printed after it
    assert hidden >= 40, hidden


def test_a_copy_made_before_answers_were_hidden_is_left_as_it_is(
        upstream: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A record from before (the SHA-256 of the course's file, copied whole) is up to date."""
    course = load_course(upstream, monkeypatch)
    work = course.WORKSPACE
    work.mkdir()
    record = {}
    for rel in course.course_files():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(upstream / "notebooks" / rel, work / rel)
        record[rel] = course.workspace_rules().sha256(upstream / "notebooks" / rel)
    (work / ".course-copies.json").write_text(json.dumps({"copies": record}))
    assert course.fill_workspace() == []
    done = course_script(upstream, "reset", "04")
    assert "your copy had no changes of yours" in done.stdout, done


def test_a_guess_without_its_comparison_is_refused(tmp_path: Path) -> None:
    def cell(tag: str) -> dict:
        return {"cell_type": "code", "metadata": {"tags": [tag]}, "source": "",
                "outputs": [], "execution_count": None}

    nb = {"cells": [cell("predict"), cell("setup")], "metadata": {}, "nbformat": 4,
          "nbformat_minor": 4}
    with pytest.raises(ValueError, match="cell 0 is tagged 'predict' but no cell tagged "
                                         "'compare' follows it"):
        answer_cells(nb)
    nb["cells"].append(cell("predict"))
    with pytest.raises(ValueError, match="before the next guess"):
        answer_cells(nb)
    (tmp_path / "lessons").mkdir()
    (tmp_path / "lessons" / "01_a.ipynb").write_text(json.dumps(nb))
    with pytest.raises(ValueError, match=r"notebook 01_a\.ipynb: cell 0"):
        copy_lessons(tmp_path / "lessons", tmp_path / "files", lambda needs: [])


def test_a_broken_notebook_in_the_course_stops_nothing(upstream: Path) -> None:
    """A lesson left unreadable in notebooks/ after the copies were made (a `git pull` whose
    merge is half done) is taken as it is, as any changed file: `./course copies` (and so
    `./course lab`) still runs, and a copy the student changed is kept."""
    assert course_script(upstream, "copies").returncode == 0
    work = upstream / "notebooks" / "my-work"
    solve_exercise(work / "04_softmax.ipynb")
    mine = (work / "04_softmax.ipynb").read_bytes()
    for name in ("04_softmax.ipynb", "05_blend.ipynb"):
        (upstream / "notebooks" / name).write_text('{"cells": [<<<<<<< HEAD', encoding="utf-8")
    done = course_script(upstream, "copies")
    assert done.returncode == 0, done.stderr
    assert (work / "04_softmax.ipynb").read_bytes() == mine, "the student's work was lost"
    assert "the course changed 04_softmax.ipynb since your copy was made" in done.stdout
    assert (work / "05_blend.ipynb").read_bytes() == (
        upstream / "notebooks" / "05_blend.ipynb").read_bytes()
