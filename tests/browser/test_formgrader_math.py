"""Issue 33, item 11: formgrader and feedback show the quiz's math rendered, with the policy
on, and the grader's verdict and the written answer read whole.

The Content-Security-Policy blocks MathJax from a CDN (and the course runs offline), so the
instructor's math is rendered on the server, as MathML, which Chromium draws natively
(:mod:`course_grading.math_markup`): no script at all. A copy of quiz/ is released and
autograded with one submission whose only mistake is the missing 1/sqrt(d_k).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from labdriver import REPO, LabServer, formgrader_server, save_screenshot

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

STUDENT = "sam"
VERDICT = "more peaked than it should be"
WRITTEN = "Subtracting the row maximum is a shift"


@pytest.fixture(scope="module")
def course(browser_requirements: None, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from course_grading.pipeline import ASSIGNMENT, copy_course, open_api, place_submission
    from course_grading.submissions import made_up_submission

    course = copy_course(REPO / "quiz", tmp_path_factory.mktemp("math") / "course")
    api = open_api(course, **{"ManualGradesFirst.allow_pending": True})
    assert api.generate_assignment(ASSIGNMENT)["success"]
    place_submission(course, STUDENT, made_up_submission(course, "mistake_missing_scale"))
    assert api.autograde(ASSIGNMENT, STUDENT)["success"]
    assert api.generate_feedback(ASSIGNMENT, STUDENT)["success"]
    return course


@pytest.fixture(scope="module")
def instructor(course: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    with formgrader_server(course, tmp_path_factory.mktemp("math-scratch")) as server:
        yield server


def _submission_url(server: LabServer) -> str:
    subs = server.api("GET", "formgrader/api/submitted_notebooks/checkpoint/checkpoint")
    [sub] = [s for s in subs if s["student"] == STUDENT]
    return server.url(f"formgrader/submissions/{sub['id']}/")


#: Where an element is clipped: its box sticks out of an ancestor that hides or scrolls
#: its overflow, or its own content is wider than its box.
_CLIPPED = """e => {
  const out = [];
  if (e.scrollWidth > e.clientWidth + 1) out.push('own ' + e.scrollWidth + '>' + e.clientWidth);
  const r = e.getBoundingClientRect();
  for (let a = e.parentElement; a; a = a.parentElement) {
    const s = getComputedStyle(a);
    if (s.overflowX === 'visible') continue;
    const b = a.getBoundingClientRect();
    if (r.right > b.right + 1 || r.left < b.left - 1)
      out.push(a.tagName + '.' + a.className + ' ' + r.right + '>' + b.right);
    if (a.scrollWidth > a.clientWidth + 1)
      out.push('scrolls ' + a.tagName + '.' + a.className);
  }
  return out;
}"""

#: Words the browser broke across two lines of the element's text.
_BROKEN_WORDS = """e => {
  const walker = document.createTreeWalker(e, NodeFilter.SHOW_TEXT);
  const broken = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const text = n.textContent;
    const range = document.createRange();
    let top = null;
    for (let i = 0; i < text.length; i++) {
      range.setStart(n, i); range.setEnd(n, i + 1);
      const rects = range.getClientRects();
      if (!rects.length) continue;
      const y = Math.round(rects[0].top);
      if (top !== null && y > top + 2 && /\\S/.test(text[i - 1] || '') && /\\S/.test(text[i]))
        broken.push(text.slice(Math.max(0, i - 8), i + 8));
      top = y;
    }
  }
  return broken;
}"""


def _check_page(page: Any) -> None:
    text = page.inner_text("body")
    assert page.locator("math").count() >= 3, "no MathML on the page"
    assert "\\sqrt" not in text and "$d_k$" not in text, "math shown as typed"
    verdict = page.get_by_text(VERDICT).first
    assert verdict.is_visible()
    assert verdict.evaluate(_CLIPPED) == []
    written = page.get_by_text(WRITTEN).first
    assert written.evaluate(_CLIPPED) == []
    assert written.evaluate(_BROKEN_WORDS) == []


def test_formgrader_renders_math_and_whole_lines_under_the_policy(lab_page, instructor,
                                                                  artifacts):
    violations: list[str] = []
    lab_page.on("console", lambda m: violations.append(m.text)
                if "Content Security Policy" in m.text else None)
    response = lab_page.goto(_submission_url(instructor))
    assert "script-src 'self'" in response.headers["content-security-policy"]
    lab_page.wait_for_load_state("networkidle")
    lab_page.set_viewport_size({"width": 1000, "height": 900})
    save_screenshot(lab_page, artifacts, "formgrader_math")
    assert lab_page.locator(".score").count() >= 1  # formgrader's own scripts ran
    _check_page(lab_page)
    assert violations == []


def test_feedback_renders_math_and_whole_lines(lab_page, course, artifacts):
    page = course / "feedback" / STUDENT / "checkpoint" / "checkpoint.html"
    lab_page.set_viewport_size({"width": 1000, "height": 900})
    lab_page.goto(page.as_uri())
    lab_page.wait_for_load_state("load")
    save_screenshot(lab_page, artifacts, "feedback_math")
    _check_page(lab_page)
