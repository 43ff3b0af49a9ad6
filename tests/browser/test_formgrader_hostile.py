"""A hostile submission opened in formgrader, as the instructor: no script runs, nothing loads.

A copy of quiz/ is released and autograded for real (checks decided outside the student's
kernel, student content made inert). The hostile student's written answer, outputs and an
extra file try to run script in the instructor's browser: each payload would set the page
title, set ``window.__hostile`` and fetch a beacon on 127.0.0.1. The instructor's
JupyterLab runs with the course's formgrader extension (Content-Security-Policy).

* First wall: the autograded notebook is inert; formgrader shows it; nothing runs.
* Second wall: the same submission's *raw* notebook (as if the first wall had failed) is
  put in place of its autograded notebook; the page's policy blocks every script, and the
  browser reports the violations.
* The control: the raw notebook rendered by plain nbconvert, served without a policy, does
  run the payload (so the payload is live and these tests can fail).

Every request the browser attempts is recorded; any to a host other than 127.0.0.1 fails.
"""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from labdriver import REPO, LabServer, save_screenshot

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

QUIZ = REPO / "quiz"
STUDENT = "hostile"
RAW = "hostile_raw"


class Beacon:
    """A server on 127.0.0.1 that records every request (a payload that ran calls it)."""

    def __init__(self) -> None:
        hits: list[str] = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                hits.append(self.path)
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.hits = hits
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _payload(beacon: int, tag: str) -> str:
    return (f"document.title='HOSTILE-{tag}';window.__hostile='{tag}';"
            f"fetch('http://127.0.0.1:{beacon}/{tag}')")


def _hostile_answers(beacon: int) -> dict[str, str]:
    img = f'<img src=x onerror="{_payload(beacon, "md")}">'
    return {
        "weights_without_self": (
            "from IPython.display import HTML, Javascript, SVG, display\n"
            f"display(HTML('<img src=x onerror=\"{_payload(beacon, 'html')}\">'))\n"
            f"display(Javascript(\"{_payload(beacon, 'js')}\"))\n"
            f"display(SVG('<svg xmlns=\"http://www.w3.org/2000/svg\" "
            f"onload=\"{_payload(beacon, 'svg')}\"/>'))\n"
            "def weights_without_self(Q, K):\n    return Q @ K.T\n"),
        "written_shift_or_scale": f"{img}\n\n<script>{_payload(beacon, 'script')}</script>\n\n"
                           f"[click](javascript:{_payload(beacon, 'link')})",
    }


@pytest.fixture(scope="module")
def beacon() -> Iterator[Beacon]:
    b = Beacon()
    yield b
    b.stop()


@pytest.fixture(scope="module")
def course(browser_requirements: None, beacon: Beacon,
           tmp_path_factory: pytest.TempPathFactory) -> Path:
    from course_grading.pipeline import copy_course, open_api, place_submission
    from course_grading.submissions import fill_answers

    course = copy_course(QUIZ, tmp_path_factory.mktemp("fg") / "course")
    api = open_api(course)
    assert api.generate_assignment("checkpoint")["success"]
    released = nbformat.read(course / "release" / "checkpoint" / "checkpoint.ipynb", 4)
    raw_nb = fill_answers(released, _hostile_answers(beacon.port))
    raw_nb.cells.append(nbformat.v4.new_raw_cell(
        f"<script>{_payload(beacon.port, 'raw')}</script>",
        metadata={"raw_mimetype": "text/html"}))
    files = {"checkpoint.ipynb": nbformat.writes(raw_nb).encode(),
             "evil.html": f"<script>{_payload(beacon.port, 'file')}</script>".encode()}
    for student in (STUDENT, RAW):
        place_submission(course, student, files)
    result = api.autograde("checkpoint", "*")
    assert result["success"], result.get("error")
    # the raw student's autograded notebook as if the first wall had failed: the
    # submission's outputs and markdown as they came, outputs included
    executed = nbformat.read(course / "autograded" / RAW / "checkpoint" / "checkpoint.ipynb", 4)
    by_id = {c.get("id"): c for c in executed.cells}
    for cell in raw_nb.cells:
        if cell.get("id") in by_id and cell.cell_type == "markdown":
            by_id[cell["id"]].source = cell.source
    html_outputs = [nbformat.v4.new_output("display_data", data={
        "text/html": f'<img src=x onerror="{_payload(beacon.port, "html")}">'}),
        nbformat.v4.new_output("display_data", data={
            "application/javascript": _payload(beacon.port, "js")})]
    [answer] = [c for c in executed.cells
                if c.metadata.get("nbgrader", {}).get("grade_id") == "weights_without_self"]
    answer.outputs = html_outputs
    executed.cells.append(raw_nb.cells[-1])
    nbformat.write(executed, course / "autograded" / RAW / "checkpoint" / "checkpoint.ipynb")
    return course


@pytest.fixture(scope="module")
def instructor(course: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    scratch = tmp_path_factory.mktemp("fg-scratch")
    (scratch / "config").mkdir()
    (scratch / "config" / "jupyter_server_config.json").write_text(json.dumps(
        {"ServerApp": {"jpserver_extensions": {"course_grading.formgrader_csp": True}}}))
    with LabServer(course, scratch) as server:
        yield server


class Watch:
    """Every request a page attempts, and the policy violations it reports."""

    def __init__(self, page: Any) -> None:
        self.requests: list[str] = []
        self.page = page
        page.add_init_script(
            "window.__violations = [];"
            "document.addEventListener('securitypolicyviolation', e =>"
            " window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));")
        page.route("**/*", self._route)
        page.on("dialog", lambda d: (self.requests.append("DIALOG " + d.message), d.dismiss()))

    def _route(self, route: Any) -> None:
        url = route.request.url
        self.requests.append(url)
        if url.startswith(("http://127.0.0.1:", "data:", "file://")):
            route.continue_()
        else:
            route.abort()

    def outside(self) -> list[str]:
        return [u for u in self.requests
                if not u.startswith(("http://127.0.0.1:", "data:", "file://"))]

    def violations(self) -> list[str]:
        return list(self.page.evaluate("window.__violations"))

    def hostile(self) -> Any:
        return self.page.evaluate("window.__hostile")


def _submission_url(server: LabServer, student: str) -> str:
    subs = server.api("GET", "formgrader/api/submitted_notebooks/checkpoint/checkpoint")
    [sub] = [s for s in subs if s["student"] == student]
    return server.url(f"formgrader/submissions/{sub['id']}/")


def _settle(page: Any) -> None:
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(1500)  # a late onerror or fetch would have happened by now


def test_the_inert_submission_runs_nothing_in_formgrader(lab_page, instructor, beacon,
                                                         artifacts):
    watch = Watch(lab_page)
    response = lab_page.goto(_submission_url(instructor, STUDENT))
    assert "script-src 'self'" in response.headers["content-security-policy"]
    _settle(lab_page)
    save_screenshot(lab_page, artifacts, "formgrader_hostile_inert")
    assert lab_page.locator(".score").count() >= 1  # formgrader itself works: its scripts ran
    assert "HOSTILE" not in lab_page.title()
    assert watch.hostile() is None and beacon.hits == []
    assert watch.outside() == [], watch.outside()
    assert not [u for u in watch.requests if u.startswith("DIALOG")]
    text = lab_page.inner_text("body")
    assert "onerror" in text  # the student's words are there, as text


def test_the_policy_blocks_the_raw_submission_if_the_first_wall_failed(lab_page, instructor,
                                                                       beacon, artifacts):
    watch = Watch(lab_page)
    lab_page.goto(_submission_url(instructor, RAW))
    _settle(lab_page)
    save_screenshot(lab_page, artifacts, "formgrader_hostile_raw_blocked")
    assert "HOSTILE" not in lab_page.title()
    assert watch.hostile() is None and beacon.hits == []
    assert watch.outside() == [], watch.outside()
    violations = watch.violations()
    assert any(v.startswith("script-src") for v in violations), violations


def test_a_students_own_file_is_served_in_a_sandbox(lab_page, instructor, beacon):
    watch = Watch(lab_page)
    subs = instructor.api("GET", "formgrader/api/submitted_notebooks/checkpoint/checkpoint")
    [sub] = [s for s in subs if s["student"] == STUDENT]
    response = lab_page.goto(instructor.url(f"formgrader/submissions/{sub['id']}/evil.html"))
    assert response.status == 200
    assert "sandbox" in response.headers["content-security-policy"]
    _settle(lab_page)
    assert watch.hostile() is None and beacon.hits == []


def test_the_control_without_either_wall_runs_the_payload(lab_page, course, beacon,
                                                          tmp_path):
    """Plain nbconvert's page of the raw notebook, served with no policy: the payload runs."""
    from nbconvert.exporters import HTMLExporter

    nb = nbformat.read(course / "autograded" / RAW / "checkpoint" / "checkpoint.ipynb", 4)
    (tmp_path / "page.html").write_text(HTMLExporter().from_notebook_node(nb)[0])

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), lambda *a: Quiet(*a, directory=str(tmp_path)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        watch = Watch(lab_page)
        lab_page.goto(f"http://127.0.0.1:{server.server_address[1]}/page.html")
        _settle(lab_page)
        assert watch.hostile() is not None, "the payload did not run: this test proves nothing"
        assert beacon.hits, "no beacon: the payload did not run"
    finally:
        server.shutdown()
        server.server_close()
        beacon.hits.clear()


def test_feedback_pages_run_nothing_even_from_the_raw_notebook(lab_page, course, beacon,
                                                               tmp_path):
    from course_grading.feedback import SafeHTMLExporter

    nb = nbformat.read(course / "autograded" / RAW / "checkpoint" / "checkpoint.ipynb", 4)
    page = tmp_path / "feedback.html"
    page.write_text(SafeHTMLExporter().from_notebook_node(nb)[0])
    watch = Watch(lab_page)
    lab_page.goto(page.as_uri())
    lab_page.wait_for_timeout(1500)
    assert watch.hostile() is None and beacon.hits == []
    assert any("script-src" in v or "default-src" in v for v in watch.violations())
