"""A class whose servers share no files: the exchange is ngshare, a JupyterHub service.

One class runs through deploy/jupyterhub_config.py with ATTENTION_HUB_EXCHANGE=ngshare:
ngshare (0.6.0 from PyPI) as a hub-managed service under its own Unix user, its database on
a real PostgreSQL server (the gradebook too), every server with the course's ngshare exchange
(course_exchange.ngshare_exchange) and no exchange folder at all. The instructor works in a
terminal of their own (nbgrader's commands with their hub token) and runs the class as the
instructors' guide says: a secret seed (``course_grading.variants``) and the class list
(``course_grading.roster``), so that each student fetches numbers of their own. One student
works on the command line, two in JupyterLab through the hub, and one more hands in a
classmate's notebook downloaded from ngshare; autograding uses the grading engine
(``python -m course_grading.parallel``). Then the refusals, and the faults: ngshare killed in
the middle of submissions, and the gradebook's database going away during autograding.
Needs root (see conftest.py).
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import multiprocessing
import os
import pwd
import shutil
import signal
import socket
import struct
import subprocess
import threading
import time
from collections.abc import Iterator

import pytest
from classroom import (
    APART,
    ASSIGNMENT,
    COURSE_ID,
    ClassRun,
    Hub,
    Person,
    copied_answers,
    copier_seed,
    grade_problems,
    postgres_bindir,
    setup_cell_numbers,
    variant_numbers,
    with_answers,
)
from ngshare_load import (
    add_crowd,
    collected_digest,
    everyone_submits,
    stored_digests,
)

from course_exchange.exchange import PERSONAL
from course_exchange.ngshare_client import Ngshare, NgshareError

pytestmark = [pytest.mark.hub, pytest.mark.slow, pytest.mark.timeout(1500)]


def _instructor(run: ClassRun, *argv: str, check: bool = True) -> subprocess.CompletedProcess:
    return run.as_user(run.instructor, [f"{run.env}/bin/{argv[0]}", *argv[1:]],
                       cwd=run.course, check=check)


def _wait_for(condition, timeout: float, what: str) -> float:
    start = time.monotonic()
    while not condition():
        if time.monotonic() - start > timeout:
            raise RuntimeError(f"{what} did not happen within {timeout} s")
        time.sleep(0.5)
    return time.monotonic() - start


def _add_student(run: ClassRun, name: str) -> Person:
    """One more command-line student, set up as ClassRun sets up its own (not among
    ``run.students``: they answer as their kind says, this one as the test says)."""
    person = run._add_user(name, run.students_group)
    for folder, mode in ((person.work, 0o755), (person.home / ".tmp", 0o700)):
        folder.mkdir(mode=mode)
        os.chown(folder, person.uid, pwd.getpwuid(person.uid).pw_gid)
    return person


def _per_student_variants(run: ClassRun, seed: str, students: list[Person], rec: dict) -> None:
    """The instructor makes the class's variants with a secret seed and loads the class
    list (the instructors' guide, steps 1-2), in the course folder, as in a terminal."""
    said = _instructor(run, "python", "-m", "course_grading.variants", "--seed", seed,
                       "--template", f"source/{ASSIGNMENT}/{ASSIGNMENT}.ipynb")
    rec["variants_said"] = said.stdout + said.stderr
    run.write_as(run.instructor, run.course / "class.csv", "id,first_name,last_name,email\n"
                 + "".join(f"{p.name},Student,{i + 1},{p.name}@example.org\n"
                           for i, p in enumerate(students)))
    said = _instructor(run, "python", "-m", "course_grading.roster", "load", "class.csv")
    rec["roster_said"] = said.stdout + said.stderr
    # what the students answer for: the secret as the instructor's command kept it
    run.secret = (run.course / "secret_source" / "variant_secret").read_text().strip()


def _copier_hands_in(run: ClassRun, copier: Person, classmate: Person) -> dict:
    """``copier`` fetches their own notebook, then downloads ``classmate``'s from ngshare
    with their own hub token (every student of the course may download every file of a
    release) and submits it, filled with the classmate's answers (:func:`copied_answers`)."""
    run.nbgrader(copier, "fetch_assignment", ASSIGNMENT, cwd=copier.work)
    notebook = run.released_notebook(copier)
    run.fetched[copier.name] = json.loads(notebook.read_text())
    files = Ngshare(run.hub.ngshare_url, run.tokens[copier.name], retries=0).get(
        f"assignment/{COURSE_ID}/{ASSIGNMENT}")["files"]
    theirs = json.loads(base64.b64decode(next(
        f["content"] for f in files
        if f["path"] == f"{PERSONAL}/{classmate.name}/{ASSIGNMENT}.ipynb")))
    copy = with_answers(theirs, copied_answers(run.secret, classmate.name))
    run.write_as(copier, notebook, json.dumps(copy, indent=1))
    run.nbgrader(copier, "submit", ASSIGNMENT, cwd=copier.work)
    return {"name": copier.name, "classmate": classmate.name, "theirs": theirs,
            "released_paths": sorted(f["path"] for f in files)}


def _refusals(run: ClassRun, rec: dict) -> None:
    """What a student's own hub token gets from ngshare when they reach for others' data."""
    s1, s2 = run.students[0], run.hub_students[0]
    url = run.hub.ngshare_url
    mine = Ngshare(url, run.tokens[s1.name], retries=0)
    instr = Ngshare(url, run.tokens[run.instructor.name], retries=0)
    other_stamp = instr.get(f"submissions/{COURSE_ID}/{ASSIGNMENT}/{s2.name}")[
        "submissions"][-1]["timestamp"]
    tries = {
        "list every submission": ("GET", f"submissions/{COURSE_ID}/{ASSIGNMENT}", {}),
        "list the students": ("GET", f"students/{COURSE_ID}", {}),
        "download another's submission": (
            "GET", f"submission/{COURSE_ID}/{ASSIGNMENT}/{s2.name}", {}),
        "download the instructor's files": (
            "GET", f"submission/{COURSE_ID}/{ASSIGNMENT}/{run.instructor.name}", {}),
        "list another's submissions": (
            "GET", f"submissions/{COURSE_ID}/{ASSIGNMENT}/{s2.name}", {}),
        "fetch another's feedback": (
            "GET", f"feedback/{COURSE_ID}/{ASSIGNMENT}/{s2.name}", {"timestamp": other_stamp}),
        "upload feedback": ("POST", f"feedback/{COURSE_ID}/{ASSIGNMENT}/{s2.name}",
                            {"timestamp": other_stamp, "files": "[]"}),
        "release an assignment": ("POST", f"assignment/{COURSE_ID}/planted", {"files": "[]"}),
        "delete the assignment": ("DELETE", f"assignment/{COURSE_ID}/{ASSIGNMENT}", {}),
        "create a course": ("POST", "course/planted-course", {"instructors": "[]"}),
    }
    out = {}
    for what, (method, path, args) in tries.items():
        try:
            kw = {"params": args} if method == "GET" else {"data": args}
            mine.request(method, path, **kw)
            out[what] = "allowed"
        except NgshareError as err:
            out[what] = str(err)
    rec["refusals"] = out
    # Submitting "as" another: ngshare files it under the token's owner, whatever is sent.
    before = len(stored_digests(run, s2.name))
    mine.post(f"submission/{COURSE_ID}/{ASSIGNMENT}", user=s2.name, student_id=s2.name,
              files=json.dumps([{"path": "impostor.txt", "content": "aW1wb3N0b3I="}]))
    rec["victim_submissions_before_after"] = (before, len(stored_digests(run, s2.name)))
    rec["impostor_cli"] = run.nbgrader(s1, "submit", ASSIGNMENT, f"--student={s2.name}",
                                       cwd=s1.work, check=False)
    # An unknown token, and none at all.
    anonymous = mine.session.get(url + f"submissions/{COURSE_ID}/{ASSIGNMENT}",
                                 headers={"Authorization": ""}, timeout=30,
                                 allow_redirects=False)
    rec["no_token"] = (anonymous.status_code, anonymous.text)
    bad = Ngshare(url, "not-a-token", retries=0)
    try:
        bad.get("courses")
        rec["bad_token"] = "allowed"
    except NgshareError as err:
        rec["bad_token"] = str(err)


@contextlib.contextmanager
def _kept_down(hub: Hub, timeout: float = 30) -> Iterator[list[int]]:
    """ngshare killed, and kept down until the block ends; yields the processes killed.

    The hub notices a dead service when it next polls it (every 30 s, at any moment after
    the kill) and starts it again at once: a test that needs it down must not depend on
    that moment (one CI run saw ngshare back before the JupyterLab student's submission
    that was meant to fail). So its port is taken as soon as the killed process lets go of
    it, by a socket here that resets every connection: a restarted ngshare cannot listen,
    exits, and is started again at the hub's next poll after the block.
    """
    port = hub.ngshare_port
    killed: list[int] = []
    deadline = time.monotonic() + timeout
    while True:
        for pid in hub.ngshare_pids():  # the first time, ngshare; later, a quick restart
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            if pid not in killed:
                killed.append(pid)
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
            sock.listen(64)
            break
        except OSError as err:
            sock.close()
            if time.monotonic() > deadline:
                raise RuntimeError(f"ngshare's port {port} was not free {timeout:.0f} s after "
                                   f"killing {killed}: {err}") from err
            time.sleep(0.01)
    sock.settimeout(0.1)
    done = threading.Event()

    def reset_every_connection() -> None:
        while not done.is_set():
            try:
                conn, _ = sock.accept()
            except OSError:  # the 0.1 s timeout, or a client that gave up first
                continue
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            conn.close()

    resetter = threading.Thread(target=reset_every_connection, daemon=True)
    resetter.start()
    try:
        yield killed
    finally:
        done.set()
        resetter.join()
        sock.close()


def _restart_fault(run: ClassRun, rec: dict, admin_token: str) -> None:
    """ngshare is killed while a crowd submits; the hub restarts it; failures retry."""
    crowd = add_crowd(run, 24, admin_token, prefix="r")
    url = run.hub.ngshare_url
    before = everyone_submits(crowd, url, crowd.names[:8])
    # Eight more start submitting, and ngshare is killed in the middle of them ...
    during: list = []
    worker = threading.Thread(target=lambda: during.extend(
        everyone_submits(crowd, url, crowd.names[8:16], workers=2)))
    worker.start()
    time.sleep(0.2)
    h = run.hub_students[1]
    with _kept_down(run.hub) as killed:
        rec["killed_pids"] = killed
        worker.join()
        # ... eight more submit while it is down, and a student presses Submit in JupyterLab.
        after = everyone_submits(crowd, url, crowd.names[16:])
        rec["lab_submit_while_down"] = run.hub.lab_submit(run.hub_sessions[h.name], h)
        rec["answered_while_down"] = run.hub.ngshare_up()
    rec["restart_seconds"] = _wait_for(run.hub.ngshare_up, 120, "ngshare's restart by the hub")
    rec["lab_submit_after_restart"] = run.hub.lab_submit(run.hub_sessions[h.name], h)
    tries = before + during + after
    failed = sorted(a.student for a in tries if not a.ok)
    rec["failed_during_restart"] = failed
    rec["failed_while_down"] = sorted(a.student for a in after if not a.ok)
    rec["failure_messages"] = sorted({a.error.split(" for ")[0] for a in tries if not a.ok})
    retried = everyone_submits(crowd, url, failed, attempt=1)
    rec["retried_ok"] = all(a.ok for a in retried)
    rec["crowd"] = crowd


def _gradebook_fault(run: ClassRun, rec: dict) -> None:
    """The gradebook's PostgreSQL stops while the engine grades; then comes back."""
    src = run.course / "submitted" / run.students[0].name
    extra = [f"{run.tag}-g{i}" for i in range(6)]
    for name in extra:  # more submissions, so that grading is still going when it stops
        shutil.copytree(src, run.course / "submitted" / name)
    subprocess.run(["chown", "-R", f"{run.instructor.name}:", str(run.course / "submitted")],
                   check=True)
    autograded = run.course / "autograded"
    before = {p.parent.name for p in autograded.glob(f"*/{ASSIGNMENT}")}
    env = [f"{k}={v}" for k, v in run.user_env(run.instructor).items()]
    proc = subprocess.Popen(
        ["runuser", "-u", run.instructor.name, "--", "env", "-i", *env,
         f"{run.env}/bin/python", "-m", "course_grading.parallel", ASSIGNMENT, "--no-progress",
         "--jobs", "1"],
        cwd=str(run.course), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    _wait_for(lambda: len({p.parent.name for p in autograded.glob(f"*/{ASSIGNMENT}")}
                          - before) >= 1 or proc.poll() is not None, 300, "a first grade")
    run.postgres.stop_server()
    try:
        out, _ = proc.communicate(timeout=300)
    finally:
        run.postgres.start_server()
    rec["gradebook_down"] = {"returncode": proc.returncode, "output": out}
    done = {p.parent.name: p.stat().st_mtime for p in autograded.glob(f"*/{ASSIGNMENT}")}
    again = _instructor(run, "python", "-m", "course_grading.parallel", ASSIGNMENT,
                        "--no-progress", check=False)
    rec["gradebook_back"] = {
        "returncode": again.returncode, "output": again.stdout + again.stderr,
        "regraded": sorted(n for n, m in done.items() if
                           (autograded / n / ASSIGNMENT).stat().st_mtime != m),
        "graded": sorted(n for n in run.grades()),
        "extra": extra,
    }


@pytest.fixture(scope="module")
def ngshare_class(class_ready):
    if shutil.which("configurable-http-proxy") is None or postgres_bindir() is None:
        pytest.skip("needs configurable-http-proxy and PostgreSQL: "
                    "run scripts/install-system-packages.sh")
    rec: dict = {}
    # the pool's exit terminates the seed's search if it still runs (a test that failed early)
    with ClassRun(n_students=1, backend="postgres", extra_students=2, exchange_kind="ngshare",
                  engine="parallel") as run, multiprocessing.get_context("spawn").Pool(1) as pool:
        rec["kinds"] = {s.name: s.kind for s in run.students + run.hub_students}
        honest = [*run.students, *run.hub_students]
        classmate, copier = run.students[0], _add_student(run, f"{run.tag}-c1")
        students = [*honest, copier]
        # the instructor's seed (looked for while the hub starts): see copier_seed
        search = pool.apply_async(copier_seed, ([p.name for p in honest], classmate.name,
                                                copier.name))
        hub = run.hub = Hub(run)
        hub.start()
        admin_token = hub.token_by_login(run.instructor)
        people = [run.instructor, *students]
        run.tokens.update(hub.tokens_for(admin_token, [p.name for p in people]))
        _instructor(run, "python", "-m", "course_exchange.ngshare_service", "setup-course",
                    COURSE_ID, "--url", hub.ngshare_url, "--instructor", run.instructor.name,
                    *[a for p in students for a in ("--student", p.name)])
        rec["seed"] = search.get(timeout=600)
        _per_student_variants(run, rec["seed"], students, rec)
        run.release()  # each student's own notebook among the released files
        run.students_work()  # the command-line student: fetch, answer, submit
        rec["copier"] = _copier_hands_in(run, copier, classmate)
        run.hub_sessions = {}
        for h in run.hub_students:
            s, _ = hub.login(h)
            hub.open_lab(s, h)
            run.hub_sessions[h.name] = s
            rec.setdefault("lab", {})[h.kind] = hub.lab_student_works(s, h)
        rec["exchange_root_exists"] = os.path.exists(run.exchange)
        rec["logs"] = run.grade()  # collect, the engine, generate and release feedback
        rec["grades"] = run.grades()
        rec["autograded_numbers"] = {p.name: setup_cell_numbers(json.loads(
            (run.course / "autograded" / p.name / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
            .read_text())) for p in students}
        rec["feedback_cli"] = [p.read_text() for p in run.fetch_feedback(run.students[0])]
        rec["feedback_lab"] = {h.kind: hub.lab_fetch_feedback(run.hub_sessions[h.name], h)
                               for h in run.hub_students}
        _refusals(run, rec)
        _restart_fault(run, rec, admin_token)
        rec["collect_after_restart"] = _instructor(run, "nbgrader", "collect", ASSIGNMENT)
        crowd = rec["crowd"]
        rec["crowd_check"] = {s: (collected_digest(run, s), crowd.sent[s][-1],
                                  stored_digests(run, s)) for s in crowd.names}
        rec["homes"] = {p.name: oct(p.home.stat().st_mode & 0o777) for p in people}
        rec["tmpdirs"] = {h.name: (h.home / ".tmp").is_dir() for h in run.hub_students}
        rec["ngshare_storage_mode"] = oct(hub.ngshare_storage.stat().st_mode & 0o777)
        rec["ngshare_db_url_file_mode"] = oct(hub.ngshare_db_url_file.stat().st_mode & 0o777)
        rec["hub_log"] = hub.log_tail(200_000)
        yield run, rec
        run.hub.stop()
        run.hub = None


def test_the_class_runs_end_to_end_through_ngshare(ngshare_class):
    run, rec = ngshare_class
    assert not rec["exchange_root_exists"], "no exchange folder: ngshare is the only path"
    assert set(rec["grades"]) >= {p.name for p in run.students + run.hub_students}
    for student, kind in rec["kinds"].items():
        assert grade_problems(kind, rec["grades"][student]) == [], student
    assert "graded" in rec["logs"]["autograde"] and "0 failed" in rec["logs"]["autograde"]


def test_each_student_fetches_and_is_graded_on_numbers_of_their_own(ngshare_class):
    """The class as the instructors' guide runs it: a secret seed and the class list, each
    student's own notebook released through ngshare. Each fetched (on the command line or
    in JupyterLab) the numbers that course_grading.personal computes from the seed and their
    id, and no two students the same number for any input of APART; each was graded with
    their own (the setup cell of their autograded notebook; their scores, by kind, in
    test_the_class_runs_end_to_end_through_ngshare, answers made for their own numbers)."""
    from course_grading.personal import personal_variant

    run, rec = ngshare_class
    seed = rec["seed"]
    assert run.secret == seed
    assert "each student gets numbers of their own" in rec["variants_said"], rec["variants_said"]
    students = [*rec["kinds"], rec["copier"]["name"]]
    assert f"{len(students)} joined" in rec["roster_said"], rec["roster_said"]
    assert rec["copier"]["released_paths"] == sorted(
        [f"{ASSIGNMENT}.ipynb"] + [f"{PERSONAL}/{s}/{ASSIGNMENT}.ipynb" for s in students])
    fetched = {s: setup_cell_numbers(run.fetched[s]) for s in students}
    for s in students:
        own = variant_numbers(personal_variant(seed, s))
        assert run.fetched[s]["metadata"]["course_student"] == s
        assert fetched[s] == own, (s, fetched[s], own)
        assert rec["autograded_numbers"][s] == own, s
    for a, b in itertools.combinations(rec["kinds"], 2):
        same = [n for n in APART if fetched[a][n] == fetched[b][n]]
        assert not same, f"{a} and {b} fetched the same {same}"


def test_a_classmates_notebook_from_ngshare_scores_no_more_than_blank(ngshare_class):
    """A student downloads a classmate's own notebook from ngshare with their own token and
    hands it in with the classmate's answers: graded with the copier's numbers, every
    autograded check scores 0, what a blank notebook scores (the classmate, who answered
    right, scores full: test_the_class_runs_end_to_end_through_ngshare)."""
    from course_grading.personal import personal_variant

    _, rec = ngshare_class
    copier, classmate = rec["copier"]["name"], rec["copier"]["classmate"]
    assert rec["kinds"][classmate] == "correct"
    theirs = rec["copier"]["theirs"]
    assert theirs["metadata"]["course_student"] == classmate
    assert setup_cell_numbers(theirs) == variant_numbers(personal_variant(rec["seed"], classmate))
    assert grade_problems("blank", rec["grades"][copier]) == []
    assert rec["autograded_numbers"][copier] != rec["autograded_numbers"][classmate]


def test_the_jupyterlab_assignments_tab_works_through_ngshare(ngshare_class):
    _, rec = ngshare_class
    for kind, lab in rec["lab"].items():
        assert lab["listed"]["success"], lab["listed"]
        assert [(a["assignment_id"], a["status"]) for a in lab["listed"]["value"]] == [
            (ASSIGNMENT, "released")], kind
        assert lab["fetched"]["success"], lab["fetched"]
        assert lab["after_submit"]["success"], (kind, lab["after_submit"])
        statuses = {a["status"] for a in lab["after_submit"]["value"]}
        assert "submitted" in statuses, (kind, lab["after_submit"])
        assert lab["formgrader_status"] == 404


def test_each_student_fetches_their_own_feedback(ngshare_class):
    _, rec = ngshare_class
    assert len(rec["feedback_cli"]) == 1 and "score" in rec["feedback_cli"][0].lower()
    pages = rec["feedback_lab"]
    assert set(pages) == {"correct", "wrong"}
    # The scores differ, so each page is the student's own.
    assert pages["correct"] != pages["wrong"]
    for page in pages.values():
        assert "score" in page.lower()


def test_a_student_cannot_reach_anyone_elses_data(ngshare_class):
    _, rec = ngshare_class
    for what, answer in rec["refusals"].items():
        assert answer != "allowed", what
        assert "Permission denied" in answer and "HTTP 403" in answer, (what, answer)


def test_a_student_cannot_submit_as_another(ngshare_class):
    _, rec = ngshare_class
    before, after = rec["victim_submissions_before_after"]
    assert after == before, "the impostor's upload was not filed under the victim's name"
    cli = rec["impostor_cli"]
    assert cli.returncode != 0
    assert "Not submitted: you are" in cli.stdout + cli.stderr


def test_a_missing_or_unknown_token_gets_nothing(ngshare_class):
    _, rec = ngshare_class
    status, body = rec["no_token"]
    assert status >= 400 and "student_id" not in body and "timestamp" not in body, rec["no_token"]
    assert "did not accept the JupyterHub token" in rec["bad_token"], rec["bad_token"]


def test_servers_share_no_files(ngshare_class):
    _, rec = ngshare_class
    assert set(rec["homes"].values()) == {"0o700"}
    assert all(rec["tmpdirs"].values()), "each server has its own scratch folder"
    assert rec["ngshare_storage_mode"] == "0o700"
    assert rec["ngshare_db_url_file_mode"] == "0o600"


def test_ngshare_restarted_mid_submissions_loses_nothing(ngshare_class):
    _, rec = ngshare_class
    assert rec["killed_pids"], "ngshare's process was found and killed"
    assert "Service ngshare exited" in rec["hub_log"]
    assert rec["answered_while_down"] is False  # its health check, through the hub's proxy
    down = rec["lab_submit_while_down"]
    assert down["success"] is False
    assert "was NOT stored" in down["value"], down["value"][-500:]
    assert rec["lab_submit_after_restart"]["success"] is True
    assert rec["failed_while_down"] == sorted(rec["crowd"].names[16:])
    for message in rec["failure_messages"]:
        assert "ngshare" in message and ("not available" in message
                                         or "did not answer" in message), message
    assert rec["retried_ok"]
    for student, (collected, last_sent, stored) in rec["crowd_check"].items():
        assert collected == last_sent, student
        # nothing half-stored: every stored submission is one the student sent, whole
        assert set(stored) <= set(rec["crowd"].sent[student]), (student, stored)


# The gradebook going away during autograding: the engine stops at the first "cannot be
# reached" and skips, on the next run, what is already graded (docs/deploy.md).
def test_gradebook_unreachable_stops_grading_then_resumes_without_regrading(ngshare_class):
    run, rec = ngshare_class
    _gradebook_fault(run, rec)
    down, back = rec["gradebook_down"], rec["gradebook_back"]
    assert down["returncode"] == 2, down["output"][-2000:]
    assert "gradebook" in down["output"] and "cannot be reached" in down["output"]
    assert back["returncode"] == 0, back["output"][-2000:]
    assert back["regraded"] == [], "what was graded before the fault is not graded again"
    assert set(back["extra"]) <= set(back["graded"])
