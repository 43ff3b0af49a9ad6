"""Issue 41: formgrader's Manual Grading page shows, beside the written answer, the
instructor's rubric and that student's own numbers; the feedback a student gets has neither.

A copy of quiz/ gets per-student variants and a rubric as an instructor makes them
(``python -m course_grading.variants --seed ... --written FILE``); alice and bob each hand
in a correct notebook of their own, autograded for real; the instructor's JupyterLab runs
with the course's formgrader extension (Content-Security-Policy on). The guide's route is
also asked directly: without a login, with an id the gradebook does not know, and with a
path in place of an id.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from labdriver import REPO, LabServer, formgrader_server, save_screenshot

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

SECRET = "section D"
STUDENTS = ("alice", "bob")
CRITERIA = ("a shift leaves the weights unchanged",
            "a scale changes them, read off the table",
            "train with and without it and compare")
MODEL = "She is not right: subtracting the maximum is a shift of every score"
WRITTEN_MD = MODEL + ".\n\n" + "".join(f"- 1 point: {c}\n" for c in CRITERIA)


@pytest.fixture(scope="module")
def course(browser_requirements: None, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from course_grading import variants
    from course_grading.pipeline import ASSIGNMENT, copy_course, open_api, place_submission
    from course_grading.submissions import made_up_submission

    root = tmp_path_factory.mktemp("guide")
    course = copy_course(REPO / "quiz", root / "course")
    (root / "written.md").write_text(WRITTEN_MD)
    assert variants.main(["--seed", SECRET, "--template",
                          str(course / "source" / ASSIGNMENT / "checkpoint.ipynb"),
                          "--written", str(root / "written.md")]) == 0
    api = open_api(course, **{"ManualGradesFirst.allow_pending": True})
    assert api.generate_assignment(ASSIGNMENT)["success"]
    with api.gradebook as gb:
        for student in STUDENTS:
            gb.add_student(student)
    for student in STUDENTS:
        place_submission(course, student, made_up_submission(course, "correct", student))
        assert api.autograde(ASSIGNMENT, student)["success"]
        assert api.generate_feedback(ASSIGNMENT, student)["success"]
    return course


@pytest.fixture(scope="module")
def instructor(course: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    with formgrader_server(course, tmp_path_factory.mktemp("guide-scratch")) as server:
        yield server


def _submission_ids(server: LabServer) -> dict[str, str]:
    subs = server.api("GET", "formgrader/api/submitted_notebooks/checkpoint/checkpoint")
    return {s["student"]: s["id"] for s in subs}


def _own_rows(student: str) -> list[list[str]]:
    from course_grading import personal

    v = personal.personal_variant(SECRET, student)
    rows = []
    for d, (scaled, unscaled) in zip(v.table_setup[0], v.table, strict=True):
        x, y = (unscaled, scaled) if v.unscaled_first else (scaled, unscaled)
        rows.append([str(d), f"{x:.2f}", f"{y:.2f}"])
    return rows


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any) -> None:
        return None  # a redirect comes back as an HTTPError with its status


def _get(server: LabServer, path: str, token: bool = True) -> tuple[int, Any]:
    headers = {"Authorization": f"token {server.token}"} if token else {}
    req = urllib.request.Request(server.base_url + path, headers=headers)
    try:
        with urllib.request.build_opener(_NoRedirect).open(req, timeout=30) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        body = exc.read()
        try:
            return exc.code, json.loads(body)
        except ValueError:
            return exc.code, exc.headers.get("Location") or body.decode(errors="replace")


def test_the_guide_answers_the_instructor_only_and_only_for_a_known_submission(instructor):
    ids = _submission_ids(instructor)
    status, guide = _get(instructor, f"formgrader/course-written/{ids['alice']}")
    assert status == 200 and guide["student"] == "alice"
    assert guide["table"]["rows"] == _own_rows("alice")
    assert [r["criterion"] for r in guide["rubric"]] == list(CRITERIA)

    status, where = _get(instructor, f"formgrader/course-written/{ids['alice']}",
                         token=False)
    assert (status, where.split("?")[0]) == (302, "/login")  # not logged in: the login page

    status, body = _get(instructor, "formgrader/course-written/" + "0" * 32)
    assert status == 404
    assert body == {"message": f"no submitted notebook has the id {'0' * 32} in this "
                               "course's gradebook"}
    for probe in ("..%2F..%2Fsecret_source%2Fvariant_secret", "alice", "..",
                  "%2Fetc%2Fpasswd"):
        status, body = _get(instructor, f"formgrader/course-written/{probe}")
        assert status == 400, probe
        assert body["message"].startswith("the submission must be a formgrader submission "
                                          "id (32 hexadecimal digits; got "), probe
    status, _ = _get(instructor, "formgrader/course-written/../../secret_source/variant_secret")
    assert status == 404  # a real path is not this route at all (and not a file server)


def test_manual_grading_shows_each_students_own_numbers_and_the_rubric(lab_page, instructor,
                                                                      artifacts):
    ids = _submission_ids(instructor)
    violations: list[str] = []
    lab_page.on("console", lambda m: violations.append(m.text)
                if "Content Security Policy" in m.text else None)
    lab_page.set_viewport_size({"width": 1100, "height": 900})
    seen = {}
    lab_page.goto(instructor.url("formgrader/manage_assignments"))  # logged in: a cookie
    for student in STUDENTS:
        lab_page.goto(instructor.base_url + f"formgrader/submissions/{ids[student]}/")
        guide = lab_page.locator("#course-written-guide")
        guide.wait_for(state="visible", timeout=30_000)
        # beside the written answer: inside its panel, before the score and comment
        panel = lab_page.locator(".nbgrader_cell", has=lab_page.locator(
            "input.score#written_shift_or_scale"))
        assert panel.locator("#course-written-guide").count() == 1
        guide.scroll_into_view_if_needed()
        save_screenshot(lab_page, artifacts, f"formgrader_written_guide_{student}")
        text = guide.inner_text()
        for criterion in CRITERIA:
            assert f"1 point: {criterion}" in text
        assert MODEL in text
        cells = guide.locator("tbody tr").evaluate_all(
            "rows => rows.map(r => Array.from(r.cells, c => c.textContent))")
        assert cells == _own_rows(student), student
        assert "This student's own numbers" in text
        seen[student] = cells
    assert seen["alice"] != seen["bob"]
    assert violations == []


def test_the_feedback_students_get_holds_no_rubric(course):
    """A guard, not a fix: nothing of this branch writes the rubric into a notebook. The
    instructor's source holds it; each student's feedback page must not."""
    source = (course / "secret_source" / "checkpoint" / "checkpoint.ipynb").read_text()
    assert CRITERIA[0] in source  # the rubric is where the instructor put it
    for student in STUDENTS:
        page = (course / "feedback" / student / "checkpoint" / "checkpoint.html").read_text()
        assert "written_shift_or_scale" in page  # the written answer's cell is there
        for words in (*CRITERIA, MODEL, "point: "):
            assert words not in page, (student, words)
