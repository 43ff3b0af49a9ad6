"""A whole class on one machine: real Unix users, nbgrader's exchange, JupyterHub, PostgreSQL.

One class runs with the SQLite gradebook and JupyterHub (three students on the command line,
two in JupyterLab through the hub), one with the gradebook on a real PostgreSQL server; the
tests below check what each run recorded. Needs root (see conftest.py).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor

import pytest
from classroom import (
    ANSWER_CELL,
    ASSIGNMENT,
    INBOUND_MODE,
    ClassRun,
    Hub,
    ensure_env,
    grade_problems,
    permission_violations,
    postgres_bindir,
)

pytestmark = [pytest.mark.hub, pytest.mark.slow, pytest.mark.timeout(1500)]

HUB_MISSING = (
    "configurable-http-proxy (JupyterHub's proxy, from npm) is missing: "
    "run scripts/install-system-packages.sh"
)


def _hub_phase_before_grading(run: ClassRun, rec: dict) -> None:
    """Two students log in to JupyterHub and do fetch, answer, submit through it."""
    hub = run.hub = Hub(run)  # its deploy/ lies in a private folder, as in a fresh clone
    rec["hub_deploy_parent_mode"] = oct(hub.deploy.parent.stat().st_mode & 0o7777)
    hub.start()
    h1, h2 = run.hub_students
    _, bad = hub.login(h1, password="not-" + h1.password)
    rec["wrong_password_status"] = bad.status_code
    sessions = {}
    for h in (h1, h2):
        s, r = hub.login(h)
        rec.setdefault("login_status", {})[h.kind] = r.status_code
        hub.open_lab(s, h)
        sessions[h.name] = s
        worked = hub.lab_student_works(s, h)
        for key in ("listed", "after_submit", "formgrader_status"):
            rec.setdefault(key, {})[h.kind] = worked[key]
    # The instructor's own JupyterLab: formgrader, with the course's policy on its pages.
    si, _ = hub.login(run.instructor)
    hub.open_lab(si, run.instructor)
    page = hub.user_api(si, run.instructor, "GET", "formgrader")
    rec["instructor_formgrader"] = (page.status_code,
                                    page.headers.get("Content-Security-Policy", ""))
    # Each student tries the other's server.
    s1 = sessions[h1.name]
    rec["cross_api_status"] = hub.user_api(s1, h2, "GET", "api/contents").status_code
    rec["cross_lab_status"] = s1.get(f"{hub.base}/user/{h2.name}/lab", timeout=60).status_code
    rec["own_api_status"] = hub.user_api(s1, h1, "GET", "api/contents").status_code
    run.hub_sessions = sessions


def _hub_phase_after_grading(run: ClassRun, rec: dict) -> None:
    hub = run.hub
    for h in run.hub_students:
        page = hub.lab_fetch_feedback(run.hub_sessions[h.name], h)
        rec.setdefault("hub_feedback", {})[h.kind] = page
    uids = [h.uid for h in run.hub_students]
    hub.stop()
    run.hub = None
    rec["left_running"] = _processes_of(uids)
    rec["hub_port_open"] = _port_open(hub.port)
    _hub_with_unreadable_settings(run, rec)


def _hub_with_unreadable_settings(run: ClassRun, rec: dict) -> None:
    """The hub installs the students' settings under a private (0700) folder, as a checkout
    in ``mktemp -d`` would hold them: a student's server must not start at all."""
    private = run.root / "private"
    private.mkdir(mode=0o700)
    hub = run.hub = Hub(run, student_settings=private / "student-jupyter-config")
    hub.start()
    h1 = run.hub_students[0]
    s, r = hub.login(h1)
    rec["unreadable_login_status"] = r.status_code
    rec["unreadable_spawn_failure"] = hub.spawn_failure(s, h1)
    rec["unreadable_running"] = _processes_of([h1.uid], grace=0)
    rec["unreadable_formgrader"] = s.get(f"{hub.base}/user/{h1.name}/formgrader",
                                         timeout=60).status_code
    rec["unreadable_hub_log"] = hub.log_tail(20000)
    hub.stop()
    run.hub = None


def _processes_of(uids: list[int], grace: float = 30) -> list[list[str]]:
    """The processes each uid still runs, once they are all gone or after ``grace`` seconds."""
    deadline = time.monotonic() + grace
    while True:
        left = [subprocess.run(["pgrep", "-a", "-U", str(uid)], capture_output=True,
                               text=True).stdout.splitlines() for uid in uids]
        if not any(left) or time.monotonic() > deadline:
            return left
        time.sleep(0.5)


def _port_open(port: int) -> bool:
    import socket

    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _class_flow(backend: str, with_hub: bool) -> dict:
    rec: dict = {"backend": backend}
    with ClassRun(n_students=3, backend=backend, extra_students=2 if with_hub else 0) as run:
        run.release()
        run.students_work()
        s1, s2, s3 = run.students
        rec["kinds"] = {s.name: s.kind for s in run.students + run.hub_students}
        # s1 (correct answer) submits under s2's name after s2's own (wrong) submission.
        refused, plain = run.impostor_submits(s1, s2)
        rec["impostor_refused"] = (refused.returncode, refused.stdout + refused.stderr)
        rec["impostor_submit_rc"] = plain.returncode
        rec["impostor"] = (s1.name, s2.name)
        # s3 hands in, by hand, a newer submission with a link to the instructor's source.
        rec["linked_submission"] = run.plant_linked_submission(s3)
        if with_hub:
            _hub_phase_before_grading(run, rec)
        rec["logs"] = run.grade()
        # What plain nbgrader would have collected for s2: the impostor's notebook.
        run.nbgrader(run.instructor, "collect", ASSIGNMENT,
                     "--ExchangeFactory.collect=nbgrader.exchange.default.collect.ExchangeCollect",
                     "--CourseDirectory.submitted_directory=plain-collect", cwd=run.course)
        plain = run.course / "plain-collect" / s2.name / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
        rec["plain_collect_s2_answer"] = _answer_source(plain)
        leak = run.course / "plain-collect" / s3.name / ASSIGNMENT / "solutions.txt"
        rec["plain_collect_s3_leak"] = leak.read_text() if leak.exists() else ""
        rec["checked_collect_s3_files"] = sorted(
            p.name for p in (run.course / "submitted" / s3.name / ASSIGNMENT).iterdir())
        checked = run.course / "submitted" / s2.name / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
        rec["checked_collect_s2_answer"] = _answer_source(checked)
        rec["feedback"] = {
            run_s.kind: [p.read_text() for p in files]
            for run_s, files in zip(run.students, run.students_fetch_feedback().values(),
                                    strict=True)
        }
        if with_hub:
            _hub_phase_after_grading(run, rec)
        rec["grades"] = run.grades()
        rec["violations"] = permission_violations(run)
        # Loosen one permission, as a careless setup would, and make sure it is caught.
        inbound = run.course_exchange / "inbound"
        inbound.chmod(0o2777)
        rec["violations_loosened"] = permission_violations(run)
        inbound.chmod(INBOUND_MODE)
        # Submissions as plain nbgrader leaves them (0777 folder, 0644 files): caught too.
        sub = sorted(inbound.glob(f"{s3.name}+*"))[0]
        sub.chmod(0o777)
        (sub / f"{ASSIGNMENT}.ipynb").chmod(0o644)
        rec["violations_plain_submission"] = permission_violations(run)
        rec["submission_modes"] = {
            p.name: oct(p.stat().st_mode & 0o7777) for p in sorted(inbound.glob(f"{s1.name}+*"))}
        rec["timings"] = dict(run.timings)
        rec["users"] = [p.name for p in run.created_users]
        rec["root"] = str(run.root)
    return rec


def _answer_source(path) -> str:
    nb = json.loads(path.read_text())
    for cell in nb["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == ANSWER_CELL:
            return "".join(cell["source"])
    raise AssertionError(f"no {ANSWER_CELL} cell in {path}")


@pytest.fixture(scope="module")
def class_flows(class_ready) -> Iterator[dict[str, Future[dict]]]:
    """Both classes, run side by side (each mostly waits on its users' commands and servers;
    their users, folders, ports and databases are their own): the flows, by backend."""
    ensure_env()  # built once, before the two flows want it
    with ThreadPoolExecutor(2) as pool:
        flows = {"sqlite": pool.submit(_class_flow, "sqlite", with_hub=shutil.which(
            "configurable-http-proxy") is not None)}
        if postgres_bindir() is not None:
            flows["postgres"] = pool.submit(_class_flow, "postgres", with_hub=False)
        yield flows


@pytest.fixture(scope="module")
def sqlite_class(class_flows: dict[str, Future[dict]]) -> dict:
    return class_flows["sqlite"].result()


@pytest.fixture(scope="module")
def postgres_class(class_flows: dict[str, Future[dict]]) -> dict:
    if "postgres" not in class_flows:
        pytest.skip("PostgreSQL is not installed: run scripts/install-system-packages.sh")
    return class_flows["postgres"].result()


def _scores_by_kind(rec: dict) -> dict[str, list[dict[str, float]]]:
    out: dict[str, list[dict[str, float]]] = {}
    for student, grades in sorted(rec["grades"].items()):
        kind = rec["kinds"][student]
        out.setdefault(kind, []).append({g: s for g, (s, _) in grades.items()})
    return out


def _check_grades(rec: dict) -> None:
    assert set(rec["grades"]) == set(rec["kinds"]), "every student who submitted is graded"
    problems = [p for student, grades in rec["grades"].items()
                for p in grade_problems(rec["kinds"][student], grades)]
    assert problems == []


def test_sqlite_class_grades(sqlite_class):
    _check_grades(sqlite_class)
    kinds = sorted(sqlite_class["kinds"].values())
    assert kinds.count("correct") >= 1 and "wrong" in kinds and "blank" in kinds


def test_students_receive_feedback(sqlite_class):
    for kind, pages in sqlite_class["feedback"].items():
        assert len(pages) == 1, kind
        assert "Score:" in pages[0] or "score" in pages[0].lower(), kind


def test_impostor_submission_is_refused_and_the_real_one_kept(sqlite_class):
    rec = sqlite_class
    rc, said = rec["impostor_refused"]
    s1, s2 = rec["impostor"]
    assert rc != 0 and f"Not submitted: you are {s1!r} and asked to submit as {s2!r}" in said
    assert "Traceback" not in said, said
    assert rec["impostor_submit_rc"] == 0, "plain nbgrader accepts --student=<someone else>"
    assert "Refusing submission" in rec["logs"]["collect"]
    # Plain nbgrader would have collected the impostor's (correct) answer for s2 ...
    assert "np.sqrt" in rec["plain_collect_s2_answer"]
    # ... the owner check keeps s2's own (wrong) one, and it is graded as such.
    assert "np.sqrt" not in rec["checked_collect_s2_answer"]
    s2 = next(name for name, kind in rec["kinds"].items() if kind == "wrong")
    assert rec["grades"][s2]["test_missing_scale"][0] == 0


def test_a_submission_with_a_link_to_the_source_is_refused(sqlite_class):
    rec = sqlite_class
    # Plain nbgrader collects the newest submission and copies what its link points to:
    # the instructor's source, solutions included, lands in the student's submission.
    assert "### BEGIN SOLUTION" in rec["plain_collect_s3_leak"]
    # The course's collect refuses it, says why, and collects the student's genuine one.
    assert "contains symbolic links (solutions.txt -> " in rec["logs"]["collect"]
    assert rec["linked_submission"] in rec["logs"]["collect"]
    assert f"{ASSIGNMENT}.ipynb" in rec["checked_collect_s3_files"]
    assert "solutions.txt" not in rec["checked_collect_s3_files"]


def test_no_student_reaches_what_is_not_theirs(sqlite_class):
    assert sqlite_class["violations"] == []


def test_a_loosened_permission_is_caught(sqlite_class):
    loosened = sqlite_class["violations_loosened"]
    assert any("inbound has mode 0o2777" in v for v in loosened), loosened
    assert any("could list the submissions (inbound)" in v for v in loosened), loosened


def test_submissions_are_private(sqlite_class):
    # PrivateSubmit (deploy/nbgrader_config.py): the student and the instructor's group only.
    assert set(sqlite_class["submission_modes"].values()) == {"0o770"}
    plain = sqlite_class["violations_plain_submission"]
    assert any("submission" in v and "could read" in v for v in plain), plain


def test_everything_is_removed_afterwards(sqlite_class):
    import os
    import pwd

    for name in sqlite_class["users"]:
        with pytest.raises(KeyError):
            pwd.getpwnam(name)
        assert not os.path.exists(f"/home/{name}")
    assert not os.path.exists(sqlite_class["root"])


def test_jupyterhub_class(sqlite_class):
    rec = sqlite_class
    if "login_status" not in rec:
        pytest.skip(HUB_MISSING)
    assert rec["wrong_password_status"] == 403
    assert rec["login_status"] == {"correct": 302, "wrong": 302}
    for kind, listed in rec["listed"].items():
        assert listed["success"], listed
        assert [(a["assignment_id"], a["status"]) for a in listed["value"]] == [
            (ASSIGNMENT, "released")], kind
    for kind, after in rec["after_submit"].items():
        statuses = {a["status"] for a in after["value"]}
        assert "submitted" in statuses, (kind, after)
    # The hub read its config from a 0700 folder no student can enter, and still every
    # student's server obeyed the students' settings (installed where all can read them).
    assert rec["hub_deploy_parent_mode"] == "0o700"
    assert rec["formgrader_status"] == {"correct": 404, "wrong": 404}
    status, policy = rec["instructor_formgrader"]
    assert status == 200 and "script-src 'self'" in policy  # course_grading.formgrader_csp
    assert rec["own_api_status"] == 200
    assert rec["cross_api_status"] == 403
    assert rec["cross_lab_status"] == 403
    assert set(rec["hub_feedback"]) == {"correct", "wrong"}
    for kind, page in rec["hub_feedback"].items():
        assert "score" in page.lower(), kind
    assert rec["left_running"] == [[], []], "the hub stopped the students' servers"
    assert not rec["hub_port_open"]


def test_a_student_who_cannot_read_the_settings_gets_no_server(sqlite_class):
    rec = sqlite_class
    if "login_status" not in rec:
        pytest.skip(HUB_MISSING)
    assert rec["unreadable_login_status"] == 302
    failure = rec["unreadable_spawn_failure"]
    assert failure is not None, "the server started without the students' settings"
    assert "Your server was not started: the course's settings for students' servers" in failure
    assert "Permission denied" in failure and "private/student-jupyter-config" in failure
    assert rec["unreadable_running"] == [[]], "no process runs as the student"
    assert rec["unreadable_formgrader"] != 200
    assert "Not starting" in rec["unreadable_hub_log"]


def test_postgres_gradebook_gives_the_same_grades(postgres_class, sqlite_class):
    _check_grades(postgres_class)
    assert postgres_class["violations"] == []
    cli = {k for k in ("correct", "wrong", "blank")}
    pg = {k: v for k, v in _scores_by_kind(postgres_class).items() if k in cli}
    sq = {k: v[:1] for k, v in _scores_by_kind(sqlite_class).items() if k in cli}
    assert pg == sq
