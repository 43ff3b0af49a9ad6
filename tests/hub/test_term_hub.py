"""A class's JupyterLab through JupyterHub in Chromium: the students' and the instructor's
servers as each of them sees it (the Nbgrader menu, no news prompt), and one whole round of
docs/deploy.md step 8 with per-student variants, as the instructors' guide runs a class
(steps 1-2: a secret seed and the class list; release from formgrader, fetch and submit from
the Assignments panel, each student with numbers of their own; collect, autograde with
nbgrader and with the course's engine, grading by hand in formgrader, feedback each student
fetches and reads).

Real Unix users (an instructor, three students), deploy/jupyterhub_config.py run by root on
127.0.0.1, Debian's Chromium through Playwright. Screenshots go to the test's tmp dir (the
paths are printed). Needs root (see conftest.py).
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
import multiprocessing
import sys
from collections.abc import Iterator
from multiprocessing.pool import AsyncResult
from pathlib import Path
from typing import Any

import pytest
from classroom import (
    APART,
    ClassRun,
    Hub,
    Person,
    class_seed,
    copied_answers,
    ensure_env,
    http_proxy,
    setup_numbers,
    variant_numbers,
    with_answers,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "browser"))

pytestmark = [pytest.mark.hub, pytest.mark.slow, pytest.mark.timeout(1500)]


@pytest.fixture(scope="module")
def term(class_ready: None) -> Iterator[tuple[ClassRun, Hub, AsyncResult]]:
    """An instructor and three students (JupyterLab only), the hub running; nothing released.
    And the instructor's seed for this class (:func:`class_seed`), looked for in a process
    of its own while the hub starts."""
    http_proxy()
    ensure_env()
    # the pool's exit terminates the search if it still runs (a test that failed early)
    with ClassRun(n_students=0, extra_students=3) as run, multiprocessing.get_context(
            "spawn").Pool(1) as pool:
        seed = pool.apply_async(class_seed, ([h.name for h in run.hub_students],))
        run.instructor_formgrader_config()
        hub = run.hub = Hub(run)
        hub.start()
        yield run, hub, seed


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
    run, hub, _ = term
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


#: The instructor's model answer and rubric of the written question (the instructors' guide,
#: step 1: ``--written FILE``); the public notebook has neither.
MODEL_ANSWER = ("No. Subtracting the row maximum is a shift: softmax gives the same weights. "
                "Dividing by sqrt(d_k) is a scale: it changes them.")
CRITERIA = ("2 points: a shift leaves the weights as they were, a scale changes them",
            "1 point: a way to see whether it matters (train with and without the division)")
RUBRIC = MODEL_ANSWER + "\n\n" + "".join(f"- {c}\n" for c in CRITERIA)


# The setup cell of the notebook shown in JupyterLab, as the student reads it on the page:
# the code cell that assigns the quiz's Q (CodeMirror's lines, joined by newlines).
SETUP_ON_PAGE_JS = """() => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  if (!panel) return null;
  for (const cell of panel.querySelectorAll('.jp-CodeCell')) {
    const lines = [...cell.querySelectorAll('.jp-InputArea-editor .cm-line')]
      .map(line => line.textContent);
    if (lines.some(line => line.startsWith('Q = np.array('))) return lines.join('\\n');
  }
  return null;
}"""


def setup_on_page(chromium_context: Any, hub: Hub, student: Person) -> tuple[str, Any]:
    """``student`` opens their fetched notebook in JupyterLab (a tab of their own browser):
    the setup cell's text as the page shows it, and the page (to screenshot and close)."""
    from classroom import ASSIGNMENT

    page = chromium_context.new_page()
    page.set_default_timeout(90_000)
    page.goto(f"{hub.base}/user/{student.name}/lab/workspaces/quiz/tree/{ASSIGNMENT}/"
              f"{ASSIGNMENT}.ipynb?reset")
    page.wait_for_selector(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell .cm-line")
    page.wait_for_function(SETUP_ON_PAGE_JS)
    return page.evaluate(SETUP_ON_PAGE_JS).replace("\u00a0", " "), page


def own_table(secret: str, student: str) -> list[list[str]]:
    """The rows of ``student``'s measured table (Question 3) as their notebook shows them:
    head size, then the X and Y columns with two decimals."""
    from course_grading.personal import personal_variant

    v = personal_variant(secret, student)
    rows = []
    for d, (scaled, unscaled) in zip(v.table_setup[0], v.table, strict=True):
        x, y = (unscaled, scaled) if v.unscaled_first else (scaled, unscaled)
        rows.append([str(d), f"{x:.2f}", f"{y:.2f}"])
    return rows


def own_answers(secret: str, student: str) -> dict[str, str]:
    """Every answer right for ``student``'s own numbers (the letters of their own options)."""
    from course_grading.personal import personal_variant
    from course_grading.submissions import answers_for
    from course_grading.variants import facts_of

    return answers_for(facts_of(personal_variant(secret, student)))


def test_one_round_with_per_student_variants_through_the_hub(term, chromium, tmp_path):
    """The round of docs/deploy.md step 8 as the instructors' guide runs a class (steps
    1-2), in Chromium, through the hub's URLs, with the course's Content-Security-Policy on
    formgrader.

    The instructor makes the class's secret variant with a seed and a rubric
    (``course_grading.variants``), loads a class list of three (``course_grading.roster``),
    generates, and releases from formgrader (Release in Manage Assignments). Each student
    fetches in the Assignments panel of their own server and opens the notebook: the setup
    cell on the page holds that student's own numbers (what ``course_grading.personal``
    computes from the seed and their id), and the three differ in every numeric input. Two
    answer right for their own numbers; the third hands in a copy of a classmate's
    notebook, their numbers and answers in it. The instructor collects (formgrader's
    Collect) and autogrades (the command line): the two get every autograded point, the
    copier none (what a blank notebook scores, tests/grading/test_personal_pipeline.py),
    and the grader's log says the copier's notebook has another student's numbers;
    the course's engine, run again on the same submissions, gives the same grades; each
    autograded notebook holds its own student's numbers. Generate Feedback refuses while the
    written answers wait; the instructor grades the three by hand in formgrader (a different
    score each), each page showing beside the written answer the instructor's rubric and
    model answer and that student's own table (whose it is, the gradebook confirms), then
    generates and releases feedback with formgrader's buttons; each student
    fetches their feedback in the Assignments panel and sees in it their own numbers and
    their own written score. A screenshot of each step."""
    from classroom import ASSIGNMENT

    from course_grading.personal import personal_variant
    from course_quiz.checkpoint_spec import CHECKPOINT

    [written] = [q.id for q in CHECKPOINT.questions if q.manual]
    points = float(CHECKPOINT.question(written).points)
    autograded = {g: float(p) for g, p in CHECKPOINT.autograded.items()}
    run, hub, seed_search = term
    instr, students = run.instructor, run.hub_students
    ids = [h.name for h in students]
    seed, classmate, copier_id = seed_search.get(timeout=900)
    [copier] = [h for h in students if h.name == copier_id]
    honest = [h for h in students if h is not copier]
    by_hand = [2.5, 0.5, 1.5]  # the three written answers' scores: distinct, so whose is whose
    fg = f"{hub.base}/user/{instr.name}/formgrader"
    step = iter(range(1, 100))
    course = run.course

    def instructor_runs(*argv: str) -> str:
        done = run.as_user(instr, argv, cwd=course)
        return done.stdout + done.stderr

    # 1. the class's variants (guide, step 1) and the class list (step 2), in the course
    # folder as docs/deploy.md step 8 says; generate with the due date
    run.write_as(instr, course / "rubric.md", RUBRIC)
    said = instructor_runs(f"{run.env}/bin/python", "-m", "course_grading.variants",
                           "--seed", seed, "--template", f"source/{ASSIGNMENT}/{ASSIGNMENT}.ipynb",
                           "--written", "rubric.md")
    assert "each student gets numbers of their own" in said, said
    secret = (course / "secret_source" / "variant_secret").read_text().strip()
    assert secret == seed
    run.write_as(instr, course / "class.csv", "id,first_name,last_name,email\n" + "".join(
        f"{s},Student,{i + 1},{s}@example.org\n" for i, s in enumerate(ids)))
    said = instructor_runs(f"{run.env}/bin/python", "-m", "course_grading.roster", "load",
                           "class.csv")
    assert "3 joined" in said, said
    due = (dt.datetime.now(dt.UTC) + dt.timedelta(days=7)).strftime("%Y-%m-%d %H:%M:%S UTC")
    run.nbgrader(instr, "generate_assignment", ASSIGNMENT, cwd=course)
    run.nbgrader(instr, "db", "assignment", "add", ASSIGNMENT, f"--duedate={due}", cwd=course)

    # 2. release from formgrader: the class's template, and each student's own notebook
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
    personal = run.course_exchange / "personal" / ASSIGNMENT
    assert sorted(p.name for p in personal.iterdir()) == sorted(ids)

    # 3. each student: Fetch in the Assignments panel, open the notebook (their numbers),
    # answer, Submit
    pages, seen, fetched = {}, {}, {}
    for h in [*honest, copier]:  # the copier last: the classmate's notebook is fetched by then
        page = pages[h.name] = open_lab(chromium, hub, h)
        panel = open_assignments(page)
        fetch = panel.locator("#released_assignments_list button", has_text="Fetch")
        refresh_until(page, panel, fetch)
        shot(page, tmp_path, f"{next(step):02d}_{h.name}_released")
        fetch.first.click()
        submit = panel.locator("#fetched_assignments_list button", has_text="Submit")
        submit.first.wait_for()
        seen[h.name], quiz = setup_on_page(page.context, hub, h)
        shot(quiz, tmp_path, f"{next(step):02d}_{h.name}_own_numbers")
        quiz.close()
        # the student's work: their answers saved into the fetched notebook (contents API)
        session, _ = hub.login(h)
        hub.open_lab(session, h)  # the server's own login (the hub's OAuth)
        path = f"api/contents/{ASSIGNMENT}/{ASSIGNMENT}.ipynb"
        got = hub.user_api(session, h, "GET", path)
        got.raise_for_status()
        fetched[h.name] = got.json()["content"]
        assert fetched[h.name]["metadata"]["course_student"] == h.name
        if h is copier:  # the classmate's notebook, with the answers they passed on
            mine = with_answers(fetched[classmate], copied_answers(secret, classmate))
        else:
            mine = with_answers(fetched[h.name], own_answers(secret, h.name))
        put = hub.user_api(session, h, "PUT", path, data=json.dumps(
            {"type": "notebook", "format": "json", "content": mine}))
        put.raise_for_status()
        shot(page, tmp_path, f"{next(step):02d}_{h.name}_fetched")
        submit.first.click()
        panel.locator("#submitted_assignments_list", has_text=ASSIGNMENT).wait_for()
        shot(page, tmp_path, f"{next(step):02d}_{h.name}_submitted")

    # each saw their own numbers, and no two saw the same number for any input
    numbers = {s: setup_numbers(text) for s, text in seen.items()}
    for s in ids:
        assert numbers[s] == variant_numbers(personal_variant(seed, s)), (s, numbers[s])
    for a, b in itertools.combinations(ids, 2):
        same = [n for n in APART if numbers[a][n] == numbers[b][n]]
        assert not same, f"{a} and {b} were shown the same {same}"

    # 4. collect with formgrader's button, autograde on the command line (docs/deploy.md
    # step 8); then the course's engine grades the same submissions again (the guide's
    # step 4): the same grades
    said = formgrader_button(teacher, fg, "collect", "Successfully collected submissions")
    shot(teacher, tmp_path, f"{next(step):02d}_formgrader_collected")
    assert all(s in said for s in ids), said
    log = run.nbgrader(instr, "autograde", ASSIGNMENT, cwd=course)
    by_nbgrader = run.grades()
    assert set(by_nbgrader) == set(ids)
    auto = {s: {g: by_nbgrader[s][g][0] for g in autograded} for s in ids}
    for h in honest:
        assert auto[h.name] == autograded, (h.name, auto[h.name])
    assert auto[copier.name] == dict.fromkeys(autograded, 0.0), auto[copier.name]
    said = log.stdout + log.stderr
    assert f"[{copier.name}] the submitted notebook has the numbers of variant" in said, said
    assert "it may be someone else's" in said
    assert not [h for h in honest if f"[{h.name}] the submitted notebook" in said], said
    for s in ids:  # graded with the numbers of the student it was collected from
        nb = json.loads((course / "autograded" / s / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
                        .read_text())
        setup = next(c for c in nb["cells"]
                     if c["metadata"].get("nbgrader", {}).get("grade_id") == "setup")
        assert setup_numbers("".join(setup["source"])) == numbers[s], s
    engine = run.as_user(instr, [f"{run.env}/bin/python", "-m", "course_grading.parallel",
                                 ASSIGNMENT, "--force", "--no-progress"], cwd=course)
    assert run.grades() == by_nbgrader, engine.stdout[-3000:] + engine.stderr[-3000:]

    said = formgrader_button(teacher, fg, "generate-feedback",
                             "There was an error generating feedback")
    shot(teacher, tmp_path, f"{next(step):02d}_formgrader_feedback_refused")
    assert "Not going to generate feedback" in said, said[-3000:]
    assert all(f"{s}: {ASSIGNMENT}/{written}" in said for s in ids), said[-3000:]
    assert not list((course / "feedback").rglob("*.html"))

    # 5. the written answers, graded by hand in formgrader's Manual Grading (anonymous:
    # which submission is whose, the table beside it says; the gradebook agrees)
    graded_page: dict[str, float] = {}
    for i, value in enumerate(by_hand):
        teacher.goto(f"{fg}/gradebook/{ASSIGNMENT}/{ASSIGNMENT}")
        links = teacher.locator("a[href*='/formgrader/submissions/']:visible")
        links.first.wait_for()
        if i == 0:
            shot(teacher, tmp_path, f"{next(step):02d}_manual_grading_list")
        links.nth(i).click()
        score = teacher.locator(f"input.score#{written}")
        score.wait_for()
        # beside the written answer (its panel): the rubric and this student's own table
        guide = teacher.locator(".nbgrader_cell", has=score).locator("#course-written-guide")
        guide.wait_for(state="visible")
        text = guide.inner_text()
        assert all(c in text for c in CRITERIA) and MODEL_ANSWER in text, text
        assert "This student's own numbers" in text, text
        rows = guide.locator("tbody tr").evaluate_all(
            "rows => rows.map(r => Array.from(r.cells, c => c.textContent))")
        whose = [s for s in ids if own_table(seed, s) == rows]
        assert len(whose) == 1, (rows, {s: own_table(seed, s) for s in ids})
        graded_page[whose[0]] = value
        teacher.wait_for_load_state("networkidle")  # formgrader's views bound to the form
        score.click()
        score.fill(f"{value:g}")
        with teacher.expect_response(lambda r: "/formgrader/api/grade/" in r.url
                                     and r.request.method == "PUT") as saved:
            score.press("Tab")  # formgrader saves on change
        assert saved.value.ok, saved.value.status
        shot(teacher, tmp_path, f"{next(step):02d}_graded_by_hand_{i + 1}")
    written_scores = {s: g[written][0] for s, g in run.grades().items()}
    assert written_scores == graded_page  # each page showed the table of its own student

    # 6. feedback, with formgrader's buttons: the guard lets it through (nothing waits)
    said = formgrader_button(teacher, fg, "generate-feedback",
                             "Successfully generated feedback")
    shot(teacher, tmp_path, f"{next(step):02d}_formgrader_feedback_generated")
    said = formgrader_button(teacher, fg, "release-feedback", "Successfully released feedback")
    shot(teacher, tmp_path, f"{next(step):02d}_formgrader_feedback_released")
    assert len(list((run.course_exchange / "feedback").glob("*.html"))) == len(ids), said
    teacher.goto(f"{fg}/manage_students")
    teacher.locator("#main-table tr", has_text=ids[0]).first.wait_for()
    shot(teacher, tmp_path, f"{next(step):02d}_formgrader_students")
    teacher.context.close()

    # 7. each student fetches their feedback: their own numbers, their own written score
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
        assert f"(Score: {mine:.1f} / {points:.1f})" in text, text[:3000]
        for other, theirs in written_scores.items():
            if other != h.name:
                assert f"(Score: {theirs:.1f} / {points:.1f})" not in text, other
        c_line = {s: next(line for line in seen[s].splitlines() if line.startswith("c = "))
                  for s in ids}
        assert c_line[h.name] in text, (c_line[h.name], text[:3000])
        assert not [s for s in ids if s != h.name and c_line[s] in text]
    print(f"screenshots: {tmp_path}")
    assert len(list(tmp_path.glob("*.png"))) == next(step) - 1
