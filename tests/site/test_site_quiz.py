"""The self-study quiz in the offline site: every option gives its own feedback, at once.

The notebooks that show ``SelfStudyQuiz`` are found by their code. In the site (Chromium,
nothing reachable but 127.0.0.1) each is run; then, for every question, every option's
button is clicked and the page must show that option's feedback (its words come from
``course_quiz.self_study`` in this process) with its verdict, and the score line must follow.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from labdriver import run_all_cells, save_screenshot, wait_kernel_idle
from sitedriver import NOTEBOOKS, open_lesson, site_lessons

from course_quiz.self_study import load_questions
from course_site.serve import SiteServer

pytestmark = [pytest.mark.browser, pytest.mark.site, pytest.mark.timeout(600)]


def _quiz_lessons() -> list[str]:
    found = []
    for lesson in site_lessons():
        cells = json.loads((NOTEBOOKS / lesson).read_text())["cells"]
        if any("SelfStudyQuiz(" in "".join(c["source"]) for c in cells
               if c["cell_type"] == "code"):
            found.append(lesson)
    return found


def _words(text: str) -> str:
    return " ".join(text.split())


def test_a_lesson_shows_the_quiz() -> None:
    assert _quiz_lessons(), "no notebook shows the self-study quiz (SelfStudyQuiz)"


@pytest.mark.parametrize("lesson", _quiz_lessons())
def test_every_option_gives_its_feedback(lesson: str, site_page: Any, site_server: SiteServer,
                                         artifacts: Path) -> None:
    page = site_page.page
    questions = load_questions()
    open_lesson(page, site_server.url, lesson)
    run_all_cells(page, timeout_ms=300_000)
    outputs = page.locator(".jp-OutputArea-output").filter(
        has=page.locator(".widget-toggle-buttons"))
    quizzes = [outputs.nth(i) for i in range(outputs.count())
               if outputs.nth(i).locator(".widget-toggle-buttons").count() == len(questions)]
    assert quizzes, (f"{lesson}: no output shows the quiz's {len(questions)} questions as "
                     "toggle buttons (did the widget render?)")
    quiz = quizzes[0]
    groups = quiz.locator(".widget-toggle-buttons")
    score = quiz.locator(".widget-html", has_text=re.compile(r"\d+ of \d+ right")).last
    try:
        for group_index, question in enumerate(questions):
            group = groups.nth(group_index)
            box = group.locator("xpath=..")  # VBox: prompt, options, buttons, feedback
            for letter in question.letters:
                wait_kernel_idle(page)
                button = group.locator(".widget-toggle-button", has_text=re.compile(
                    rf"^\s*{letter}\s*$"))
                if "mod-active" in (button.get_attribute("class") or ""):
                    # already chosen (the lesson answers in code too): choose another first
                    other = group.locator(".widget-toggle-button:not(.mod-active)").first
                    other.click()
                    page.wait_for_timeout(200)
                button.click()
                feedback = question.check(letter)
                verdict = "Right." if feedback.correct else "Not quite."
                expected = _words(feedback.text)
                page.wait_for_function(
                    "([el, words]) => el.innerText.replace(/\\s+/g, ' ').includes(words)",
                    arg=[box.element_handle(), expected], timeout=30_000)
                shown = _words(box.inner_text())
                assert verdict in shown, f"{question.id} {letter}: no '{verdict}' in {shown!r}"
        wait_kernel_idle(page)
        right = sum(q.check(q.letters[-1]).correct for q in questions)
        assert _words(score.inner_text()).startswith(f"{right} of {len(questions)} right"), (
            f"score line {score.inner_text()!r} after choosing the last option everywhere")
        site_page.assert_offline()
    finally:
        save_screenshot(page, artifacts, "quiz_" + Path(lesson).stem)
