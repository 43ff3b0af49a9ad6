"""A class's JupyterLab through JupyterHub in Chromium: the students' and the instructor's
servers as each of them sees it (the Nbgrader menu, no news prompt), and one whole term of
docs/deploy.md step 8 (release from formgrader, fetch and submit from the Assignments panel,
grading by hand in formgrader, feedback each student fetches and reads).

Real Unix users (an instructor, two students), deploy/jupyterhub_config.py run by root on
127.0.0.1, Debian's Chromium through Playwright. Screenshots go to the test's tmp dir (the
paths are printed). Needs root (see conftest.py).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from classroom import ClassRun, Hub, Person, ensure_env, http_proxy

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "browser"))

pytestmark = [pytest.mark.hub, pytest.mark.slow, pytest.mark.timeout(1500)]


@pytest.fixture(scope="module")
def term(class_ready: None) -> Iterator[tuple[ClassRun, Hub]]:
    """An instructor and two students (JupyterLab only), the hub running; nothing released."""
    http_proxy()
    ensure_env()
    with ClassRun(n_students=0, extra_students=2) as run:
        run.instructor_formgrader_config()
        hub = run.hub = Hub(run)
        hub.start()
        yield run, hub


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """One Chromium for the module (one sync Playwright per module)."""
    from labdriver import launch_chromium, missing_requirements
    from playwright.sync_api import sync_playwright

    if missing_requirements():
        pytest.skip(missing_requirements())
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            yield browser
        finally:
            browser.close()


# Screenshots: in the test's tmp dir, and kept (gitignored) where pytest's rotation of tmp
# dirs does not remove them while other test runs go on.
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "hub" / "term"


def shot(page: Any, folder: Path, name: str) -> Path:
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    kept = ARTIFACTS / folder.name / path.name
    kept.parent.mkdir(parents=True, exist_ok=True)
    kept.write_bytes(path.read_bytes())
    print(f"screenshot: {path} (kept as {kept})")
    return path


def open_lab(chromium: Any, hub: Hub, person: Person) -> Any:
    """``person`` logs in to the hub in a browser context of their own; their JupyterLab."""
    page = chromium.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    page.set_default_timeout(90_000)
    page.goto(f"{hub.base}/hub/login")
    page.fill("#username_input", person.name)
    page.fill("#password_input", person.password)
    page.click("#login_submit")
    page.wait_for_url(f"{hub.base}/user/{person.name}/lab**", timeout=240_000)
    page.wait_for_selector("#jp-main-dock-panel")
    page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").wait_for()
    return page


def nbgrader_menu(page: Any) -> tuple[list[str], list[str]]:
    """Open the Nbgrader menu: the labels of the entries a user sees in it, and the
    commands of the entries it holds but hides (their plugins are off), each of which must
    be disabled too (the keyboard skips it)."""
    page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").click()
    menu = page.locator(".lm-Menu").last
    menu.wait_for()
    items = menu.locator(".lm-Menu-item:not([data-type='separator'])")
    shown, hidden = [], []
    for i in range(items.count()):
        item = items.nth(i)
        if item.is_visible():
            shown.append(item.locator(".lm-Menu-itemLabel").inner_text().strip())
        else:
            classes = (item.get_attribute("class") or "").split()
            hidden.append(item.get_attribute("data-command")
                          + ("" if "lm-mod-disabled" in classes else " (enabled!)"))
    page.keyboard.press("Escape")
    return shown, hidden


def palette(page: Any, text: str) -> list[str]:
    """The command palette's entries for ``text`` (what a user finds by typing it)."""
    page.keyboard.press("Control+Shift+c")
    box = page.locator(".lm-CommandPalette-input").first
    box.wait_for()
    box.fill(text)
    page.wait_for_timeout(500)
    found = [t.strip() for t in page.locator(
        ".lm-CommandPalette-item .lm-CommandPalette-itemLabel").all_inner_texts()]
    page.keyboard.press("Escape")
    return found


STUDENT_HIDDEN = ["nbgrader:open-course-list", "nbgrader:open-formgrader",
                  "nbgrader:open-formgrader-local"]


@pytest.mark.parametrize("who", ["student", "instructor"])
def test_nbgrader_menu_has_no_blank_entries_and_no_news_prompt(term, chromium, tmp_path, who):
    """A student's Nbgrader menu shows only Assignment List (formgrader, the course list and
    Create Assignment are the instructor's: their entries stay hidden and disabled), in
    JupyterLab and in Notebook 7's file view; nobody's menu or command palette shows an
    entry without a name; no notification asks about Jupyter news."""
    run, hub = term
    person = run.hub_students[0] if who == "student" else run.instructor
    page = open_lab(chromium, hub, person)
    try:
        page.wait_for_timeout(4000)  # a news prompt comes up within a second or two
        toasts = page.locator(".Toastify__toast").all_inner_texts()
        lab_shown, lab_hidden = nbgrader_menu(page)
        shot(page, tmp_path, f"{who}_lab")
        found = palette(page, "nbgrader")
        page.goto(f"{hub.base}/user/{person.name}/tree")
        page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").wait_for()
        page.wait_for_timeout(4000)
        toasts += page.locator(".Toastify__toast").all_inner_texts()
        tree_shown, tree_hidden = nbgrader_menu(page)
        shot(page, tmp_path, f"{who}_tree")
    finally:
        page.context.close()
    assert toasts == [], f"notifications: {toasts}"
    for shown in (lab_shown, tree_shown, found):
        assert "" not in shown, shown
    if who == "student":
        assert not [h for h in lab_hidden + tree_hidden if h.endswith("(enabled!)")]
        assert lab_shown == tree_shown == found == ["Assignment List"], (
            lab_shown, tree_shown, found)
        assert lab_hidden == [*STUDENT_HIDDEN, "nbgrader:open-create-assignment"]
        assert tree_hidden == STUDENT_HIDDEN
    else:
        assert {"Assignment List", "Course List", "Formgrader"} <= set(lab_shown), lab_shown


# ---- one whole term ----------------------------------------------------------------------


def open_assignments(page: Any) -> Any:
    """Nbgrader > Assignment List: the Assignments panel a student works from."""
    page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").click()
    page.locator(".lm-Menu-item:visible", has_text="Assignment List").click()
    panel = page.locator("#nbgrader-assignment-list")
    panel.wait_for()
    return panel


def refresh_until(page: Any, panel: Any, locator: Any, timeout_s: float = 90) -> None:
    """Press the panel's refresh button until ``locator`` shows (the list is fetched anew)."""
    import time

    deadline = time.monotonic() + timeout_s
    while True:
        try:
            locator.first.wait_for(timeout=5_000)
            return
        except Exception:
            if time.monotonic() > deadline:
                raise
        panel.locator("#refresh_assignments_list").click()


def formgrader_button(page: Any, fg: str, column: str, outcome: str) -> str:
    """Press ``column``'s button of the checkpoint's row in Manage Assignments; wait for the
    message that starts with ``outcome``; return the message's text (with nbgrader's log)."""
    from classroom import ASSIGNMENT

    page.goto(f"{fg}/manage_assignments")
    row = page.locator("#main-table tr", has_text=ASSIGNMENT).first
    row.locator(f"td.{column} a").click()
    page.get_by_text(outcome).first.wait_for(timeout=300_000)
    page.wait_for_timeout(1000)  # the message's fade-in, for the screenshot
    return page.locator(".modal", has_text=outcome).last.inner_text()


def test_one_whole_term_through_the_hub(term, chromium, tmp_path):
    """The term of docs/deploy.md step 8, in Chromium, through the hub's URLs, with the
    course's Content-Security-Policy on formgrader: the instructor releases the checkpoint
    from formgrader (Release in Manage Assignments); two students fetch and submit it from
    the Assignments panel of their own servers; the instructor collects (formgrader's
    Collect) and autogrades (the command line); Generate Feedback refuses while the written
    answers wait; the instructor grades both by hand in formgrader (a different score each),
    then generates and releases feedback with formgrader's buttons (the pending-grades
    guard lets it through); each student fetches their feedback in the Assignments panel
    and sees their own written score in it. A screenshot of each step."""
    from classroom import ASSIGNMENT, answer_notebook

    from course_quiz.checkpoint_spec import CHECKPOINT

    [written] = [q.id for q in CHECKPOINT.questions if q.manual]
    points = float(CHECKPOINT.question(written).points)
    run, hub = term
    instr, students = run.instructor, run.hub_students
    by_hand = [2.5, 0.5]  # the two written answers' scores: distinct, so whose is whose
    fg = f"{hub.base}/user/{instr.name}/formgrader"
    step = iter(range(1, 100))

    # 1. the instructor generates (step 8) and releases from formgrader
    run.nbgrader(instr, "generate_assignment", ASSIGNMENT, cwd=run.course)
    teacher = open_lab(chromium, hub, instr)
    response = teacher.goto(f"{fg}/manage_assignments")
    assert "script-src 'self'" in response.headers["content-security-policy"]
    row = teacher.locator("#main-table tr", has_text=ASSIGNMENT).first
    row.locator("td.status", has_text="draft").wait_for()
    shot(teacher, tmp_path, f"{next(step):02d}_formgrader_before_release")
    row.locator("td.release a").click()
    teacher.get_by_text(f"Successfully released '{ASSIGNMENT}'").wait_for()
    teacher.wait_for_timeout(1000)  # the message's fade-in, for the screenshot
    shot(teacher, tmp_path, f"{next(step):02d}_formgrader_released")
    assert (run.course_exchange / "outbound" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").is_file()

    # 2. each student: Fetch in the Assignments panel, answer, Submit
    pages = {}
    for h in students:
        page = pages[h.name] = open_lab(chromium, hub, h)
        panel = open_assignments(page)
        fetch = panel.locator("#released_assignments_list button", has_text="Fetch")
        refresh_until(page, panel, fetch)
        shot(page, tmp_path, f"{next(step):02d}_{h.name}_released")
        fetch.first.click()
        submit = panel.locator("#fetched_assignments_list button", has_text="Submit")
        submit.first.wait_for()
        # the student's work: their answers saved into the fetched notebook (contents API)
        session, _ = hub.login(h)
        hub.open_lab(session, h)  # the server's own login (the hub's OAuth)
        path = f"api/contents/{ASSIGNMENT}/{ASSIGNMENT}.ipynb"
        got = hub.user_api(session, h, "GET", path)
        got.raise_for_status()
        put = hub.user_api(session, h, "PUT", path, data=json.dumps(
            {"type": "notebook", "format": "json",
             "content": answer_notebook(got.json()["content"], h.kind)}))
        put.raise_for_status()
        shot(page, tmp_path, f"{next(step):02d}_{h.name}_fetched")
        submit.first.click()
        panel.locator("#submitted_assignments_list", has_text=ASSIGNMENT).wait_for()
        shot(page, tmp_path, f"{next(step):02d}_{h.name}_submitted")

    # 3. collect with formgrader's button, autograde on the command line (docs/deploy.md
    # step 8); formgrader's Generate Feedback refuses while the written answers wait
    said = formgrader_button(teacher, fg, "collect", "Successfully collected submissions")
    shot(teacher, tmp_path, f"{next(step):02d}_formgrader_collected")
    assert all(h.name in said for h in students), said
    run.nbgrader(instr, "autograde", ASSIGNMENT, cwd=run.course)
    assert set(run.grades()) == {h.name for h in students}
    said = formgrader_button(teacher, fg, "generate-feedback",
                             "There was an error generating feedback")
    shot(teacher, tmp_path, f"{next(step):02d}_formgrader_feedback_refused")
    assert "Not going to generate feedback" in said, said[-3000:]
    assert all(f"{h.name}: {ASSIGNMENT}/{written}" in said for h in students), said[-3000:]
    assert not list((run.course / "feedback").rglob("*.html"))

    # 4. the written answers, graded by hand in formgrader's Manual Grading (anonymous:
    # which submission is whose is read from the gradebook afterwards)
    for i, value in enumerate(by_hand):
        teacher.goto(f"{fg}/gradebook/{ASSIGNMENT}/{ASSIGNMENT}")
        links = teacher.locator("a[href*='/formgrader/submissions/']:visible")
        links.first.wait_for()
        if i == 0:
            shot(teacher, tmp_path, f"{next(step):02d}_manual_grading_list")
        links.nth(i).click()
        score = teacher.locator(f"input.score#{written}")
        score.wait_for()
        teacher.wait_for_load_state("networkidle")  # formgrader's views bound to the form
        score.click()
        score.fill(f"{value:g}")
        with teacher.expect_response(lambda r: "/formgrader/api/grade/" in r.url
                                     and r.request.method == "PUT") as saved:
            score.press("Tab")  # formgrader saves on change
        assert saved.value.ok, saved.value.status
        shot(teacher, tmp_path, f"{next(step):02d}_graded_by_hand_{i + 1}")
    written_scores = {s: g[written][0] for s, g in run.grades().items()}
    assert sorted(written_scores.values()) == sorted(by_hand), written_scores

    # 5. feedback, with formgrader's buttons: the guard lets it through (nothing waits)
    said = formgrader_button(teacher, fg, "generate-feedback",
                             "Successfully generated feedback")
    shot(teacher, tmp_path, f"{next(step):02d}_formgrader_feedback_generated")
    said = formgrader_button(teacher, fg, "release-feedback", "Successfully released feedback")
    shot(teacher, tmp_path, f"{next(step):02d}_formgrader_feedback_released")
    assert len(list((run.course_exchange / "feedback").glob("*.html"))) == 2, said
    teacher.goto(f"{fg}/manage_students")
    teacher.locator("#main-table tr", has_text=students[0].name).first.wait_for()
    shot(teacher, tmp_path, f"{next(step):02d}_formgrader_students")
    teacher.context.close()

    # 6. each student fetches their feedback and sees their own written score
    for h in students:
        page = pages[h.name]
        panel = page.locator("#nbgrader-assignment-list")
        fetch = panel.locator("#submitted_assignments_list button", has_text="Fetch Feedback")
        refresh_until(page, panel, fetch)
        fetch.first.click()
        panel.locator("#submitted_assignments_list", has_text="view feedback").wait_for()
        shot(page, tmp_path, f"{next(step):02d}_{h.name}_feedback_fetched")
        session, _ = hub.login(h)
        hub.open_lab(session, h)
        listing = hub.user_api(session, h, "GET", f"api/contents/{ASSIGNMENT}/feedback")
        listing.raise_for_status()
        [stamp] = [item["name"] for item in listing.json()["content"]]
        page.goto(f"{hub.base}/user/{h.name}/files/{ASSIGNMENT}/feedback/{stamp}/"
                  f"{ASSIGNMENT}.html")
        text = page.locator("body").inner_text()
        shot(page, tmp_path, f"{next(step):02d}_{h.name}_feedback")
        page.context.close()
        mine = written_scores[h.name]
        theirs = next(v for s, v in written_scores.items() if s != h.name)
        assert f"(Score: {mine:.1f} / {points:.1f})" in text, text[:3000]
        assert f"(Score: {theirs:.1f} / {points:.1f})" not in text
    print(f"screenshots: {tmp_path}")
    assert len(list(tmp_path.glob("*.png"))) == next(step) - 1
