"""The instructor's own JupyterLab through JupyterHub: formgrader in Chromium, terminals.

One class (two students on the command line, one in JupyterLab) is released, submitted,
collected and autograded; then, through the hub's URL and with the course's
Content-Security-Policy on every formgrader page, the instructor opens formgrader in
Chromium, sees Manage Assignments load, grades a written answer by hand in Manual Grading
and finds the score in the gradebook. A screenshot of each step is saved under the test's
tmp dir. Each user's terminal (the server's terminal API, as JupyterLab's Terminal uses it)
runs ``bash -lc 'nbgrader --version'``.

docs/deploy.md's single-server guide as typed: steps 2-6 build a class of their own (the
guide's variables set to names unique to the run, removed again), each step's effect is
checked, and step 8's block runs in that instructor's shell with the guide's students'
command lines in its gaps. Needs root (see conftest.py).
"""

from __future__ import annotations

import asyncio
import json
import re
import shlex
import shutil
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from classroom import ASSIGNMENT, REPO, ClassRun, Hub, Person, ensure_env, http_proxy

from course_quiz.checkpoint_spec import CHECKPOINT

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "browser"))

pytestmark = [pytest.mark.hub, pytest.mark.slow, pytest.mark.timeout(1200)]

# the quiz's written answer, graded by hand, and its points (one source: the spec)
[WRITTEN] = [q.id for q in CHECKPOINT.questions if q.manual]
WRITTEN_POINTS = CHECKPOINT.question(WRITTEN).points


@pytest.fixture(scope="module")
def hub_class(class_ready: None) -> Iterator[tuple[ClassRun, Hub]]:
    http_proxy()
    ensure_env()
    with ClassRun(n_students=2, extra_students=1) as run:
        run.release()
        run.students_work()
        run.nbgrader(run.instructor, "collect", ASSIGNMENT, cwd=run.course)
        run.nbgrader(run.instructor, "autograde", ASSIGNMENT, "--force", cwd=run.course)
        run.instructor_formgrader_config()
        hub = run.hub = Hub(run)
        hub.start()
        yield run, hub


# ---- formgrader in Chromium -------------------------------------------------------------


class PageWatch:
    """What a page reports: console errors, uncaught exceptions, policy violations."""

    def __init__(self, page: Any) -> None:
        self.errors: list[str] = []
        page.add_init_script(
            "document.addEventListener('securitypolicyviolation', e =>"
            " console.error('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI));")
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(f"uncaught: {e}"))


def _shot(page: Any, folder: Path, name: str) -> None:
    page.screenshot(path=str(folder / f"{name}.png"), full_page=True)


def _hub_login(page: Any, hub: Hub, person: Person) -> None:
    page.goto(f"{hub.base}/hub/login")
    page.fill("#username_input", person.name)
    page.fill("#password_input", person.password)
    page.click("#login_submit")
    page.wait_for_url(f"{hub.base}/user/{person.name}/lab**", timeout=180_000)


def test_formgrader_grades_by_hand_through_the_hub(hub_class, tmp_path):
    from labdriver import launch_chromium, missing_requirements
    from playwright.sync_api import sync_playwright

    if missing_requirements():
        pytest.skip(missing_requirements())
    run, hub = hub_class
    instr = run.instructor
    fg = f"{hub.base}/user/{instr.name}/formgrader"
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
            page.set_default_timeout(60_000)
            watch = PageWatch(page)
            _hub_login(page, hub, instr)
            _shot(page, tmp_path, "01_lab")

            # Manage Assignments loads: the checkpoint's row, no "Loading, please wait..."
            response = page.goto(f"{fg}/manage_assignments")
            assert "script-src 'self'" in response.headers["content-security-policy"]
            row = page.locator("#main-table tr", has_text=ASSIGNMENT)
            try:
                row.first.wait_for(timeout=60_000)
            finally:
                _shot(page, tmp_path, "02_manage_assignments")
            assert not page.get_by_text("Loading, please wait").is_visible()

            # Manual Grading: the assignment, its notebook, a submission; grade by hand
            page.goto(f"{fg}/gradebook")
            page.locator(f"a[href$='/formgrader/gradebook/{ASSIGNMENT}']").first.click()
            page.locator(f"a[href$='/formgrader/gradebook/{ASSIGNMENT}/{ASSIGNMENT}']"
                         ).first.click()
            links = page.locator("a[href*='/formgrader/submissions/']")
            links.first.wait_for()
            _shot(page, tmp_path, "03_manual_grading_list")
            links.first.click()
            score = page.locator(f"input.score#{WRITTEN}")
            score.wait_for()
            page.wait_for_load_state("networkidle")  # formgrader's views bound to the form
            score.click()
            score.fill("1.5")
            with page.expect_response(lambda r: "/formgrader/api/grade/" in r.url
                                      and r.request.method == "PUT") as saved:
                score.press("Tab")  # formgrader saves on change
            assert saved.value.ok, saved.value.status
            _shot(page, tmp_path, "04_graded_by_hand")

            graded = {student: grades[WRITTEN][0] for student, grades in run.grades().items()}
            by_hand = [s for s, score_ in graded.items() if score_ == 1.5]
            assert len(by_hand) == 1, graded

            # The gradebook: Manage Students -> the student -> the assignment
            page.goto(f"{fg}/manage_students/{by_hand[0]}/{ASSIGNMENT}")
            cell = page.locator("#main-table tr", has_text=ASSIGNMENT)
            cell.first.wait_for()
            _shot(page, tmp_path, "05_gradebook")
            totals = run.grades()[by_hand[0]]
            total = sum(score_ for score_, _ in totals.values())
            text = cell.first.inner_text()
            assert (f"{total:g} / {CHECKPOINT.total_points}" in text
                    and f"1.5 / {WRITTEN_POINTS}" in text), (total, text)
        finally:
            browser.close()
    errors = [e for e in watch.errors if "favicon" not in e]
    assert errors == [], "\n".join(errors)
    assert sorted(p.name for p in tmp_path.glob("*.png")) == [
        "01_lab.png", "02_manage_assignments.png", "03_manual_grading_list.png",
        "04_graded_by_hand.png", "05_gradebook.png"]


# ---- terminals ---------------------------------------------------------------------------


def _terminal_output(hub: Hub, session: Any, person: Person, command: str,
                     timeout: float = 90) -> str:
    """Open a terminal in ``person``'s server (the API JupyterLab's Terminal uses), type
    ``command`` and return what the terminal printed up to the end marker."""
    made = hub.user_api(session, person, "POST", "api/terminals")
    made.raise_for_status()
    name = made.json()["name"]
    ws_url = (hub.base.replace("http://", "ws://")
              + f"/user/{person.name}/terminals/websocket/{name}")
    cookies = "; ".join(f"{c.name}={c.value}" for c in session.cookies)

    async def talk() -> str:
        from tornado.httpclient import HTTPRequest
        from tornado.websocket import websocket_connect

        ws = await websocket_connect(HTTPRequest(ws_url, headers={"Cookie": cookies}))
        ws.write_message(json.dumps(["stdin", command + "; echo END-$?-END\r"]))
        seen = ""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not re.search(r"END-\d+-END", seen):
            left = deadline - loop.time()
            if left <= 0:
                break
            msg = await asyncio.wait_for(ws.read_message(), left)
            if msg is None:
                break
            kind, *rest = json.loads(msg)
            if kind == "stdout":
                seen += rest[0]
        ws.close()
        return seen

    try:
        with ThreadPoolExecutor(1) as pool:  # a loop of its own, whatever runs in this one
            return pool.submit(asyncio.run, talk()).result()
    finally:
        hub.user_api(session, person, "DELETE", f"api/terminals/{name}")


@pytest.mark.parametrize("who", ["instructor", "student"])
def test_a_login_shell_in_the_hub_terminal_has_nbgrader(hub_class, who):
    run, hub = hub_class
    person = run.instructor if who == "instructor" else run.hub_students[0]
    session, response = hub.login(person)
    assert response.status_code == 302
    hub.open_lab(session, person)
    out = _terminal_output(hub, session, person, "bash -lc 'nbgrader --version'")
    assert "END-0-END" in out, f"{who}'s terminal printed:\n{out}"
    assert re.search(r"nbgrader version 0\.9\.\d+", out), out


@pytest.mark.parametrize("who", ["instructor", "student"])
def test_no_news_prompt_in_hub_servers(hub_class, who):
    """JupyterLab asks every new user about Jupyter news unless fetchNews is decided."""
    run, hub = hub_class
    person = run.instructor if who == "instructor" else run.hub_students[0]
    session, _ = hub.login(person)
    hub.open_lab(session, person)
    got = hub.user_api(session, person, "GET",
                       "lab/api/settings/@jupyterlab/apputils-extension:notification")
    got.raise_for_status()
    # overrides arrive as the schema's defaults; the user has set nothing
    defaults = {k: v.get("default") for k, v in got.json()["schema"]["properties"].items()}
    assert got.json()["settings"] == {}
    assert defaults["fetchNews"] == "false", defaults
    assert defaults["checkForUpdates"] is False, defaults


# ---- students cannot read the answers ----------------------------------------------------


def _kernel_output(hub: Hub, session: Any, person: Person, code: str,
                   timeout: float = 120) -> str:
    """Start a kernel in ``person``'s server (as JupyterLab does), run ``code``, return what
    it printed (stdout, stderr, tracebacks)."""
    import uuid

    made = hub.user_api(session, person, "POST", "api/kernels", json={"name": "python3"})
    made.raise_for_status()
    kernel = made.json()["id"]
    ws_url = (hub.base.replace("http://", "ws://")
              + f"/user/{person.name}/api/kernels/{kernel}/channels")
    cookies = "; ".join(f"{c.name}={c.value}" for c in session.cookies)
    msg_id = uuid.uuid4().hex
    request = {"header": {"msg_id": msg_id, "username": person.name,
                          "session": uuid.uuid4().hex, "msg_type": "execute_request",
                          "version": "5.3", "date": ""},
               "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
               "content": {"code": code, "silent": False, "store_history": False,
                           "user_expressions": {}, "allow_stdin": False}}

    async def talk() -> str:
        from tornado.httpclient import HTTPRequest
        from tornado.websocket import websocket_connect

        ws = await websocket_connect(HTTPRequest(ws_url, headers={"Cookie": cookies}))
        ws.write_message(json.dumps(request))
        seen = ""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while loop.time() < deadline:
            msg = await asyncio.wait_for(ws.read_message(), deadline - loop.time())
            if msg is None:
                break
            msg = json.loads(msg)
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "stream":
                seen += content["text"]
            elif kind == "error":
                seen += "\n".join(content["traceback"])
            elif kind == "status" and content["execution_state"] == "idle":
                break
        ws.close()
        return seen

    try:
        with ThreadPoolExecutor(1) as pool:
            return pool.submit(asyncio.run, talk()).result()
    finally:
        hub.user_api(session, person, "DELETE", f"api/kernels/{kernel}")


def test_a_students_kernel_cannot_import_or_read_the_answers(hub_class):
    """The students' and the instructor's servers run one environment, but course_grading
    (checkpoint_answers.py: the quiz's answers) lies in a folder only root and the
    instructors' group enter: a student's kernel finds no course_grading, even with that
    folder put first on sys.path, and cannot open or list its files; course_lib works."""
    run, hub = hub_class
    student = run.hub_students[0]
    package = run.instructors_code / "course_grading"
    answers = package / "checkpoint_answers.py"
    assert "def weights_without_self" in answers.read_text()  # root reads what is hidden
    session, _ = hub.login(student)
    hub.open_lab(session, student)
    probe = f"""
import json, os, sys
import numpy as np
seen = {{}}
sys.path.insert(0, {str(run.instructors_code)!r})
for name in ("course_grading", "course_grading.checkpoint_answers"):
    try:
        __import__(name)
        seen[name] = "imported from " + repr(sys.modules[name].__path__
                                             if hasattr(sys.modules[name], "__path__")
                                             else sys.modules[name].__file__)
    except ImportError as e:
        seen[name] = type(e).__name__
for what, act in [("open", lambda: open({str(answers)!r}).read()),
                  ("list", lambda: os.listdir({str(package)!r})),
                  ("open_pyc", lambda: os.listdir({str(package / "__pycache__")!r}))]:
    try:
        act()
        seen[what] = "done"
    except OSError as e:
        seen[what] = type(e).__name__
from course_lib.attention import attention_weights
seen["course_lib"] = attention_weights(np.eye(2), np.eye(2)).round(3).tolist()
print("PROBE" + json.dumps(seen))
"""
    out = _kernel_output(hub, session, student, probe)
    found = re.search(r"PROBE(\{.*\})", out)
    assert found, out
    seen = json.loads(found.group(1))
    assert seen == {"course_grading": "ModuleNotFoundError",
                    "course_grading.checkpoint_answers": "ModuleNotFoundError",
                    "open": "PermissionError", "list": "PermissionError",
                    "open_pyc": "PermissionError",
                    "course_lib": [[0.67, 0.33], [0.33, 0.67]]}, seen


def test_a_students_terminal_cannot_read_the_answers_and_runs_a_lesson(hub_class):
    """In the student's terminal: ``cat`` of the answers fails, and the checkpoint's
    self-study lesson (course_lib's checks, no course_grading) runs to its end."""
    run, hub = hub_class
    student = run.hub_students[0]
    answers = run.instructors_code / "course_grading" / "checkpoint_answers.py"
    session, _ = hub.login(student)
    hub.open_lab(session, student)
    sys.path.insert(0, str(REPO / "scripts"))
    import lesson_index  # scripts/lesson_index.py: the notebooks, by their metadata

    lesson = lesson_index.the_one(REPO / "notebooks", kind=lesson_index.CHECKPOINT).path
    put = hub.user_api(session, student, "PUT", f"api/contents/{lesson.name}", data=json.dumps(
        {"type": "notebook", "format": "json", "content": json.loads(lesson.read_text())}))
    put.raise_for_status()
    out = _terminal_output(hub, session, student, f"cat {answers}; echo CAT-$?-CAT")
    assert re.search(r"CAT-1-CAT", out) and "Permission denied" in out, out
    out = _terminal_output(
        hub, session, student,
        f"jupyter nbconvert --to notebook --execute --output ran.ipynb {lesson.name}",
        timeout=180)
    assert "END-0-END" in out, out
    ran = hub.user_api(session, student, "GET", "api/contents/ran.ipynb")
    ran.raise_for_status()
    errors = [o for cell in ran.json()["content"]["cells"] if cell["cell_type"] == "code"
              for o in cell["outputs"] if o["output_type"] == "error"]
    assert errors == []


# ---- docs/deploy.md as typed -------------------------------------------------------------


def _readme_block(step: str, which: int = 0) -> str:
    """The ``which``-th ```sh block (0: the first) of step ``step`` of docs/deploy.md's
    single-server guide, unindented: the text an administrator pastes."""
    text = (REPO / "docs" / "deploy.md").read_text()
    after = text[text.index(f"\n{step}. **"):]
    following = re.search(r"\n\d+\. \*\*|\n## ", after[1:])
    section = after[:following.start() + 1] if following else after
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    if which >= len(blocks):
        raise LookupError(f"step {step} of docs/deploy.md has {len(blocks)} sh blocks "
                          f"(asked for block {which})")
    return "\n".join(line[3:] if line.startswith("   ") else line
                     for line in blocks[which].splitlines())


def test_step_6_as_typed_leaves_the_instructor_owning_their_files(class_ready, tmp_path):
    import pwd
    import stat
    import subprocess

    ensure_env()
    with ClassRun(n_students=0) as run:
        instr = run._add_user(f"{run.tag}-doc", run.instructors_group)
        done = subprocess.run(["bash", "-euc", _readme_block("6")], cwd=REPO,
                              env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
                                   "INSTRUCTOR": instr.name},
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        course = instr.home / "attention-course"
        owned = {p: pwd.getpwuid(p.stat().st_uid).pw_name for p in [
            course, course / "nbgrader_config.py", course / "source" / ASSIGNMENT,
            instr.home / ".jupyter", instr.home / ".jupyter" / "nbgrader_config.py"]}
        assert set(owned.values()) == {instr.name}, owned
        assert stat.S_IMODE(course.stat().st_mode) == 0o700
        assert stat.S_IMODE((course / "nbgrader_config.py").stat().st_mode) == 0o600
        assert (instr.home / ".jupyter" / "nbgrader_config.py").read_text() == (
            f"c.CourseDirectory.root = '{course}'\n")


def test_step_5_as_typed_makes_the_exchange_with_its_modes(class_ready, tmp_path):
    import pwd
    import stat
    import subprocess

    from classroom import (
        COURSE_EXCHANGE_MODE,
        EXCHANGE_ROOT_MODE,
        FEEDBACK_MODE,
        INBOUND_MODE,
        OUTBOUND_MODE,
    )

    ensure_env()
    with ClassRun(n_students=0) as run:
        exchange = run.root / "doc-exchange"
        done = subprocess.run(["bash", "-euc", _readme_block("5")], cwd=REPO,
                              env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
                                   "INSTRUCTOR": run.instructor.name,
                                   "EXCHANGE": str(exchange)},
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        course = exchange / "attention-course"
        want = {exchange: EXCHANGE_ROOT_MODE, course: COURSE_EXCHANGE_MODE,
                course / "outbound": OUTBOUND_MODE, course / "inbound": INBOUND_MODE,
                course / "feedback": FEEDBACK_MODE}
        got = {p: stat.S_IMODE(p.stat().st_mode) for p in want}
        assert got == want
        assert {pwd.getpwuid(p.stat().st_uid).pw_name for p in want if p != exchange} == {
            run.instructor.name}


# ---- steps 1-4 and 8 as typed: a class built by the guide itself -------------------------

SYSTEM_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"


def test_step_1_is_the_system_packages_script():
    """Step 1 runs scripts/install-system-packages.sh (apt-get: not run here, the script is
    what .ci/run runs on a fresh machine) and that script installs what the step names."""
    import os

    assert _readme_block("1").strip() == "./scripts/install-system-packages.sh"
    script = REPO / "scripts" / "install-system-packages.sh"
    assert os.access(script, os.X_OK)
    text = script.read_text()
    heading = (REPO / "docs" / "deploy.md").read_text().split("\n1. **", 1)[1].split("\n")[0]
    named = {"Node.js": "nodejs", "JupyterHub's proxy": "configurable-http-proxy",
             "`python3-venv`": "python3-venv", "PostgreSQL": "postgresql"}
    assert {words for words in named if words in heading} == set(named), heading
    assert {package for package in named.values() if package not in text} == set()


class GuideClass:
    """Names and folders of one class made by running docs/deploy.md's blocks as typed.

    Every name is unique to the run (``tag``) and every path lies under ``root``; the only
    machine-wide things made are the Unix users and groups, removed again by ``remove``."""

    def __init__(self, tag: str, root: Path) -> None:
        self.tag, self.root = tag, root
        self.instructor = f"{tag}-i"
        self.students = [f"{tag}-s1", f"{tag}-s2"]
        self.groups = [f"{tag}-students", f"{tag}-instructors"]
        self.prefix = root / "opt"
        self.login_defs = root / "login.defs"
        self.config_dir = root / "etc-jupyter"
        self.exchange = root / "exchange"
        self.outputs: dict[str, str] = {}
        self.passwords: dict[str, str] = {}  # step 3's password file
        self.password_file = root / "step3" / "passwords.txt"
        self.pg_cluster = ""  # "15 <name>": a PostgreSQL cluster of this run's own
        self.pg_port = 0

    @property
    def variables(self) -> dict[str, str]:
        """The guide's own variables, renamed for this run."""
        return {"PREFIX": str(self.prefix), "INSTRUCTOR": self.instructor,
                "STUDENTS": " ".join(self.students), "STUDENTS_GROUP": self.groups[0],
                "INSTRUCTORS_GROUP": self.groups[1], "LOGIN_DEFS": str(self.login_defs),
                "CONFIG_DIR": str(self.config_dir), "EXCHANGE": str(self.exchange),
                "PASSWORDS": str(self.password_file), "PG_CLUSTER": self.pg_cluster,
                "PG_PORT": str(self.pg_port)}

    def run_step(self, step: str, which: int = 0, cwd: Path = REPO) -> None:
        import subprocess

        done = subprocess.run(["bash", "-euc", _readme_block(step, which)], cwd=cwd,
                              env={"PATH": SYSTEM_PATH, "LANG": "C.UTF-8", **self.variables},
                              capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, f"step {step} block {which}:\n{done.stderr[-4000:]}"
        self.outputs[f"{step}.{which}"] = done.stdout + done.stderr

    def make_cluster(self) -> None:
        """A PostgreSQL cluster of this run's own on a free port (Debian's pg_createcluster,
        as the package makes ``15 main``), for step 6's PostgreSQL block; down, as after an
        install without systemd."""
        import subprocess

        from classroom import postgres_bindir
        from localports import free_port

        bindir = postgres_bindir()
        if bindir is None or shutil.which("pg_createcluster") is None:
            pytest.skip("PostgreSQL is not installed: run scripts/install-system-packages.sh")
        version, name = bindir.parent.name, self.tag
        self.pg_port = free_port()
        done = subprocess.run(["pg_createcluster", version, name, "-p", str(self.pg_port),
                               "-o", "fsync=off", "--", "--no-sync"],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        self.pg_cluster = f"{version} {name}"

    def as_user(self, name: str, script: str, cwd: Path | None = None,
                env: dict[str, str] | None = None):
        """Run ``script`` with ``bash -euc`` as ``name``, with the class's environment first
        on PATH as in a terminal of their hub server; JUPYTER_CONFIG_PATH puts a folder
        naming this run's exchange before CONFIG_DIR (deploy/nbgrader_config.py names
        /srv/nbgrader/exchange, which this machine's other tests may use)."""
        import subprocess

        home = Path("/home") / name
        override = self.root / "etc-exchange"
        env = {"HOME": str(home), "USER": name, "LOGNAME": name, "LANG": "C.UTF-8",
               "PATH": f"{self.prefix}/env/bin:/usr/bin:/bin",
               "JUPYTER_CONFIG_PATH": f"{override}:{self.config_dir}", **(env or {})}
        return subprocess.run(["runuser", "-u", name, "--", "env", "-i",
                               *[f"{k}={v}" for k, v in env.items()], "bash", "-euc", script],
                              cwd=cwd or home, capture_output=True, text=True, timeout=600)

    def remove(self) -> None:
        import pwd
        import subprocess

        for name in [self.instructor, *self.students]:
            try:
                uid = pwd.getpwnam(name).pw_uid
            except KeyError:
                continue
            if uid > 0:
                subprocess.run(["pkill", "-KILL", "-U", str(uid)], capture_output=True)
            subprocess.run(["userdel", "--remove", name], capture_output=True)
            shutil.rmtree(Path("/home") / name, ignore_errors=True)
        for group in self.groups:
            subprocess.run(["groupdel", group], capture_output=True)
        if self.pg_cluster:
            subprocess.run(["pg_dropcluster", "--stop", *self.pg_cluster.split()],
                           capture_output=True, timeout=120)
        shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture(scope="module")
def guide_class(class_ready: None) -> Iterator[GuideClass]:
    """Steps 2-6 of docs/deploy.md run as typed, in order, on a throw-away class, with the
    gradebook on PostgreSQL (step 6's second block, on a cluster of the run's own)."""
    import secrets
    import tempfile

    tag = "atg" + secrets.token_hex(3)
    root = Path(tempfile.mkdtemp(prefix=f"{tag}-", dir="/tmp"))
    root.chmod(0o755)
    guide = GuideClass(tag, root)
    try:
        shutil.copy("/etc/login.defs", guide.login_defs)
        guide.run_step("2")
        guide.run_step("2", 1)
        passwords = guide.password_file.parent
        passwords.mkdir(mode=0o700)
        guide.passwords = {name: secrets.token_urlsafe(12)
                           for name in [guide.instructor, *guide.students]}
        guide.password_file.write_text("".join(
            f"{name}:{word}\n" for name, word in guide.passwords.items()))
        guide.password_file.chmod(0o644)  # as an editor leaves it: the block makes it 0600
        guide.run_step("3", 0)
        guide.run_step("3", 1)
        guide.run_step("4")
        guide.run_step("5")
        guide.run_step("6")
        guide.make_cluster()
        guide.run_step("6", 1)
        override = root / "etc-exchange"
        override.mkdir()
        (override / "nbgrader_config.py").write_text(
            f"c.Exchange.root = {str(guide.exchange)!r}\n")
        yield guide
    finally:
        guide.remove()


def test_step_2_as_typed_builds_an_environment_every_user_runs(guide_class):
    g = guide_class
    assert (g.prefix / "deploy" / "jupyterhub_config.py").read_text() == (
        REPO / "deploy" / "jupyterhub_config.py").read_text()
    done = g.as_user(g.students[0], "python -c 'import course_lib, course_exchange, nbgrader'"
                     " && nbgrader --version")
    assert done.returncode == 0, done.stderr
    # the lessons (step 2's second block): root's, read-only, every file of notebooks/
    lessons = g.prefix / "lessons"
    assert sorted(p.relative_to(lessons) for p in lessons.rglob("*") if p.is_file()) == sorted(
        p.relative_to(REPO / "notebooks") for p in (REPO / "notebooks").rglob("*")
        if p.is_file() and not {"my-work", ".ipynb_checkpoints", "__pycache__"} & set(
            p.relative_to(REPO / "notebooks").parts))
    for p in [lessons, *lessons.rglob("*")]:
        assert p.lstat().st_uid == 0 and not p.lstat().st_mode & 0o022, p
    done = g.as_user(g.students[0], f"cat {lessons}/04_softmax.ipynb >/dev/null && "
                     f"touch {lessons}/04_softmax.ipynb")
    assert done.returncode != 0 and "Permission denied" in done.stderr, done.stderr


def test_step_3_as_typed_makes_private_homes_and_hides_the_answers(guide_class):
    import grp
    import pwd
    import stat
    import subprocess

    g = guide_class
    students_group, instructors_group = (grp.getgrnam(name) for name in g.groups)
    assert set(students_group.gr_mem) == set(g.students)
    assert instructors_group.gr_mem == [g.instructor]
    for name in [g.instructor, *g.students]:
        home = Path(pwd.getpwnam(name).pw_dir)
        assert home == Path("/home") / name
        assert stat.S_IMODE(home.stat().st_mode) == 0o700, name
        # chpasswd set a password: `passwd -S` says P (usable), not L (locked) or NP
        status = subprocess.run(["passwd", "-S", name], capture_output=True, text=True)
        assert status.stdout.split()[1] == "P", status.stdout
    assert "\nHOME_MODE 0700\n" in g.login_defs.read_text()
    assert stat.S_IMODE(g.password_file.stat().st_mode) == 0o600  # root's alone
    assert REPO not in g.password_file.parents  # outside the clone
    instructors = g.prefix / "instructors"
    assert stat.S_IMODE(instructors.stat().st_mode) == 0o750
    assert instructors.stat().st_gid == instructors_group.gr_gid
    probe = "python -c 'import course_grading.checkpoint_answers as a; print(a.__file__)'"
    mine = g.as_user(g.instructor, probe)
    assert mine.returncode == 0, mine.stderr
    assert mine.stdout.startswith(str(instructors)), mine.stdout
    theirs = g.as_user(g.students[0], probe)
    assert theirs.returncode != 0 and "No module named 'course_grading'" in theirs.stderr
    path = instructors / "course_grading" / "checkpoint_answers.py"
    opened = g.as_user(g.students[0], f"cat {path}")
    assert opened.returncode != 0 and "Permission denied" in opened.stderr


def test_step_4_as_typed_installs_the_global_config(guide_class):
    g = guide_class
    assert (g.config_dir / "nbgrader_config.py").read_text() == (
        REPO / "deploy" / "nbgrader_config.py").read_text()
    # every user reads it (their nbgrader sees the course id from it)
    done = g.as_user(g.students[0], f"cat {g.config_dir}/nbgrader_config.py >/dev/null")
    assert done.returncode == 0, done.stderr


class GuideHub:
    """JupyterHub started by step 7's block as typed, from the class the guide built (the
    hub's own ATTENTION_HUB_* variables give it free ports and this run's folders, groups,
    lessons, and no /etc/profile.d snippet); stopped on leaving the ``with`` block."""

    def __init__(self, g: GuideClass) -> None:
        self.g = g

    def __enter__(self) -> GuideHub:
        import subprocess
        import time

        import requests
        from localports import free_ports

        g = self.g
        chp = http_proxy()
        port, api_port, proxy_port = free_ports(3)
        self.base = base = f"http://127.0.0.1:{port}"
        self.state = g.root / "hub-state"
        env = {"PATH": f"{SYSTEM_PATH}:{Path(chp).parent}", "LANG": "C.UTF-8", "HOME": "/root",
               **g.variables,
               "JUPYTER_CONFIG_PATH": f"{g.root / 'etc-exchange'}:{g.config_dir}",
               "ATTENTION_HUB_ENV": f"{g.prefix}/env", "ATTENTION_HUB_STATE_DIR": str(self.state),
               "ATTENTION_HUB_STUDENT_SETTINGS": str(g.prefix / "student-jupyter-config"),
               "ATTENTION_HUB_INSTRUCTOR_SETTINGS": str(g.prefix / "instructor-jupyter-config"),
               "ATTENTION_HUB_STUDENTS_GROUP": g.groups[0],
               "ATTENTION_HUB_INSTRUCTORS_GROUP": g.groups[1],
               "ATTENTION_HUB_PROFILE_SNIPPET": "", "ATTENTION_HUB_URL": base,
               "ATTENTION_HUB_API_URL": f"http://127.0.0.1:{api_port}",
               "ATTENTION_HUB_PROXY_API_URL": f"http://127.0.0.1:{proxy_port}"}
        self.logfile = g.root / "hub.log"
        with open(self.logfile, "w") as log:
            self.proc = subprocess.Popen(["bash", "-euc", _readme_block("7")], cwd=REPO,
                                         env=env, stdout=log, stderr=subprocess.STDOUT,
                                         start_new_session=True)
        try:
            deadline = time.monotonic() + 120
            while True:
                assert self.proc.poll() is None, self.log_tail()
                assert time.monotonic() < deadline, self.log_tail()
                try:
                    if requests.get(f"{base}/hub/api/", timeout=2).status_code == 200:
                        break
                except (requests.ConnectionError, requests.Timeout):
                    pass
                time.sleep(0.5)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        import os
        import signal
        import subprocess

        try:
            os.killpg(self.proc.pid, signal.SIGTERM)  # the hub stops its proxy and servers
        except ProcessLookupError:  # the hub exited (refused to start) and left nothing
            self.proc.wait(timeout=10)
            return
        try:
            self.proc.wait(timeout=90)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)

    def log_tail(self) -> str:
        return self.logfile.read_text(errors="replace")[-4000:]

    def login(self, name: str, password: str):
        import requests
        from classroom import _cookie

        s = requests.Session()
        s.get(f"{self.base}/hub/login", timeout=30).raise_for_status()
        r = s.post(f"{self.base}/hub/login", allow_redirects=False, timeout=60,
                   data={"username": name, "password": password,
                         "_xsrf": _cookie(s, "_xsrf", "/hub/")})
        return s, r

    def open_lab(self, s, name: str) -> None:
        """Start ``name``'s server as a browser does and wait for their JupyterLab."""
        import time

        s.get(f"{self.base}/hub/spawn/{name}", timeout=60)
        deadline = time.monotonic() + 240
        while True:
            r = s.get(f"{self.base}/user/{name}/lab", timeout=60)
            if r.status_code == 200 and r.url.startswith(f"{self.base}/user/{name}/"):
                return
            assert time.monotonic() < deadline, self.log_tail()
            time.sleep(1)

    def stop_server(self, s, name: str) -> None:
        """Stop ``name``'s server (the control panel's Stop My Server) and wait until it is."""
        import time

        from classroom import _cookie

        xsrf = {"X-XSRFToken": _cookie(s, "_xsrf", "/hub/")}
        r = s.delete(f"{self.base}/hub/api/users/{name}/server", headers=xsrf, timeout=120)
        assert r.status_code in (202, 204), (r.status_code, r.text)
        deadline = time.monotonic() + 120
        while s.get(f"{self.base}/hub/api/users/{name}", headers=xsrf,
                    timeout=60).json().get("servers"):
            assert time.monotonic() < deadline, self.log_tail()
            time.sleep(1)


def test_step_7_as_typed_starts_the_hub_and_a_student_gets_a_server(guide_class):
    """Step 7's block starts JupyterHub from the class the guide built; a student logs in
    with step 3's password and their server starts, a wrong password does not log in."""
    import stat

    g = guide_class
    with GuideHub(g) as hub:
        assert stat.S_IMODE(hub.state.stat().st_mode) == 0o700
        student = g.students[0]
        assert hub.login(student, "not-" + g.passwords[student])[1].status_code != 302
        s, r = hub.login(student, g.passwords[student])
        assert r.status_code == 302, hub.log_tail()
        hub.open_lab(s, student)


def _edit_markdown(path: Path, words: str) -> None:
    nb = json.loads(path.read_text(encoding="utf-8"))
    first = next(c for c in nb["cells"] if c["cell_type"] == "markdown")
    first["source"] = "".join(first["source"]) + f"\n\n{words}"
    path.write_text(json.dumps(nb, indent=1) + "\n", encoding="utf-8")


def test_step_2_lessons_each_student_gets_their_own_copies(guide_class, tmp_path):
    """The lessons step 2 installed: each student's server, as it starts, makes the
    student's own copies in ~/attention-lessons/ (owned by the student, 0700, guesses'
    outputs cleared, the record); no student can read another's; an edit made in JupyterLab
    survives a restart of the server after the admin updated the lessons (step 2's block
    again, from a clone whose 03 and 04 changed), and the untouched 03 becomes the new
    version."""
    import pwd
    import stat

    from classroom import _cookie

    from course_site.lessons import answer_cells, students_copy

    g = guide_class
    installed = g.prefix / "lessons"
    lessons = sorted(p.name for p in installed.glob("*.ipynb"))
    assert lessons == sorted(p.name for p in (REPO / "notebooks").glob("*.ipynb"))
    first, second = g.students
    with GuideHub(g) as hub:
        sessions = {}
        for name in g.students:
            s, r = hub.login(name, g.passwords[name])
            assert r.status_code == 302, hub.log_tail()
            hub.open_lab(s, name)
            sessions[name] = s
        for name in g.students:
            work = Path(pwd.getpwnam(name).pw_dir) / "attention-lessons"
            assert sorted(p.name for p in work.glob("*.ipynb")) == lessons, hub.log_tail()
            owners = {pwd.getpwuid(p.lstat().st_uid).pw_name for p in [work, *work.rglob("*")]}
            assert owners == {name}
            assert stat.S_IMODE(work.stat().st_mode) == 0o700
            for lesson in lessons:
                assert (work / lesson).read_bytes() == students_copy(
                    (installed / lesson).read_bytes()), lesson
            record = json.loads((work / ".course-copies.json").read_text())["copies"]
            assert set(record) >= set(lessons)
        # the guesses' outputs are in the installed lesson and not in the copy
        source = json.loads((installed / "04_softmax.ipynb").read_text())
        copy = json.loads((Path("/home") / first / "attention-lessons" /
                           "04_softmax.ipynb").read_text())
        hidden = [i for i in answer_cells(source) if source["cells"][i].get("outputs")]
        assert hidden and all(copy["cells"][i]["outputs"] == [] for i in hidden)
        assert "course lessons: copies in" in hub.logfile.read_text()

        # no student reads another's copies
        theirs = Path("/home") / first / "attention-lessons"
        peek = g.as_user(second, f"cat {theirs}/04_softmax.ipynb || ls {theirs}")
        assert peek.returncode != 0 and "Permission denied" in peek.stderr, peek.stderr

        # the first student edits 04 in JupyterLab (the contents API, as it saves)
        s = sessions[first]
        path = f"/user/{first}/api/contents/attention-lessons/04_softmax.ipynb"
        copy["cells"][0]["source"] = "My notes on softmax."
        put = s.put(hub.base + path, data=json.dumps(
            {"type": "notebook", "format": "json", "content": copy}), timeout=60,
            headers={"X-XSRFToken": _cookie(s, "_xsrf", f"/user/{first}/", default="")})
        put.raise_for_status()
        mine = (theirs / "04_softmax.ipynb").read_bytes()
        assert b"My notes on softmax." in mine

        # the admin updates the lessons: 03 and 04 changed, step 2's block again
        clone = tmp_path / "clone"
        shutil.copytree(REPO / "notebooks", clone / "notebooks",
                        ignore=shutil.ignore_patterns("my-work", ".ipynb_checkpoints"))
        for lesson in ("03_scaling.ipynb", "04_softmax.ipynb"):
            _edit_markdown(clone / "notebooks" / lesson, f"New in {lesson}.")
        g.run_step("2", 1, cwd=clone)
        assert "New in 03_scaling.ipynb." in (installed / "03_scaling.ipynb").read_text()

        hub.stop_server(s, first)
        hub.open_lab(s, first)
        assert (theirs / "04_softmax.ipynb").read_bytes() == mine, "the student's edit was lost"
        assert (theirs / "03_scaling.ipynb").read_bytes() == students_copy(
            (installed / "03_scaling.ipynb").read_bytes())
        assert "New in 03_scaling.ipynb." in (theirs / "03_scaling.ipynb").read_text()


def test_the_hub_refuses_lessons_someone_else_could_change(guide_class):
    """A lesson anyone could write would put that person's code into every student's copy:
    the hub does not start, and says which file."""
    lesson = guide_class.prefix / "lessons" / "04_softmax.ipynb"
    lesson.chmod(0o666)
    try:
        with pytest.raises(AssertionError, match=r"Not starting: someone other than root "
                           r"could change the lessons in .*04_softmax\.ipynb \(owner uid 0, "
                           r"mode 0o666\)"):
            with GuideHub(guide_class):
                pass
    finally:
        lesson.chmod(0o644)


def _step_8_parts() -> list[str]:
    """Step 8's block cut at its ``# ...`` lines (what happens between the commands)."""
    parts, part = [], []
    for line in _readme_block("8").splitlines():
        if line.startswith("# ..."):
            parts.append("\n".join(part))
            part = []
        else:
            part.append(line)
    return [*parts, "\n".join(part)]


def _students_commands() -> dict[str, str]:
    """Step 8's students' command lines, as the guide writes them, by nbgrader subcommand."""
    text = (REPO / "docs" / "deploy.md").read_text()
    section = text[text.index("\n8. **"):text.index("\n## ", text.index("\n8. **"))]
    return {m.group(1): m.group(0).strip("`")
            for m in re.finditer(r"`nbgrader (\w+) " + ASSIGNMENT + "`", section)}


def _class_list(students: list[str]) -> str:
    """The guide class's two students and 198 made up: 200 rows with names that hold commas,
    accents and quotes; the first real student has a two-day extension, the second a
    time-limit factor of 2; everyone has a Canvas user ID."""
    import csv
    import io

    first = ["Zoë", "José", "Siobhán", "Nguyễn", 'Robert "Bob"', "Łukasz", "=SUM(A1)"]
    last = ["O'Brien", "Müller, Jr.", "García Márquez", "Ng-Šimić", "van der Berg, the"]
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["id", "first_name", "last_name", "email", "lms_id", "extension",
                "time_limit_factor"])
    ids = [*students, *(f"mu{n:03d}" for n in range(1, 199))]
    for n, sid in enumerate(ids):
        w.writerow([sid, first[n % len(first)], last[n % len(last)], f"{sid}@uni.example",
                    str(80000 + n), "2d" if n == 0 else "", "2" if n == 1 else ""])
    return out.getvalue()


def test_step_6_postgresql_as_typed_starts_the_server_and_keeps_its_password_private(
        guide_class):
    """Step 6's PostgreSQL block on a cluster made down, as an install without systemd
    leaves it: it started the server, the course config names the database (mode 0600, the
    instructor's), and a student who knows the port cannot log in without the password."""
    import pwd
    import stat
    import subprocess

    g = guide_class
    status = subprocess.run(["pg_ctlcluster", *g.pg_cluster.split(), "status"],
                            capture_output=True, text=True)
    assert status.returncode == 0, status.stdout + status.stderr  # running
    config = Path("/home") / g.instructor / "attention-course" / "nbgrader_config.py"
    text = config.read_text()
    assert re.search(r"c\.CourseDirectory\.db_url = 'postgresql\+psycopg2://"
                     + re.escape(g.instructor) + r":[0-9a-f]{48}@127\.0\.0\.1:"
                     + str(g.pg_port) + r"/attention_gradebook'\n$", text), text[-300:]
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    assert pwd.getpwuid(config.stat().st_uid).pw_name == g.instructor
    assert "PASSWORD" not in g.outputs["6.1"]  # nothing of the password was printed
    probe = (f"python -c \"import psycopg2; psycopg2.connect(host='127.0.0.1', "
             f"port={g.pg_port}, dbname='attention_gradebook', user='{g.instructor}', "
             "connect_timeout=5)\"")
    refused = g.as_user(g.students[0], probe)
    assert refused.returncode != 0 and "password" in refused.stderr, refused.stderr[-2000:]


def test_step_8_as_typed_is_a_term_on_the_class_the_guide_built(guide_class):
    """The instructor's block, in their shell, on the class the guide built (gradebook on
    PostgreSQL), with the students' command lines of the same step in its gaps: a class
    list of 200 loaded, released with a due date an hour ago, fetched, submitted,
    collected, autograded; feedback refused while the written answers wait, then (graded
    by hand) released and fetched by each student; the grade table, the report and
    Canvas's CSV written, with the names, the extension and the late penalty."""
    import csv
    import datetime as dt
    import subprocess

    from classroom import GRADE_BY_HAND, answer_notebook

    g = guide_class
    release, grade, feedback, exports = _step_8_parts()
    student_says = _students_commands()
    assert set(student_says) == {"fetch_assignment", "submit", "fetch_feedback"}
    course = Path("/home") / g.instructor / "attention-course"
    wrote = subprocess.run(["runuser", "-u", g.instructor, "--", "/bin/sh", "-c",
                            'cat > "$0"', str(course / "class.csv")],
                           input=_class_list(g.students), text=True, capture_output=True)
    assert wrote.returncode == 0, wrote.stderr
    # due an hour ago: the first student's two-day extension keeps them on time
    due = (dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)).strftime("%Y-%m-%d %H:%M:%S UTC")

    done = g.as_user(g.instructor, release, env={"DUE": due})
    assert done.returncode == 0, done.stderr[-4000:]
    assert "roster: 200 students in class.csv: 200 joined" in done.stdout, done.stdout
    released = g.exchange / "attention-course" / "outbound" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    assert "### BEGIN SOLUTION" not in released.read_text()

    for student, kind in zip(g.students, ("correct", "wrong"), strict=True):
        fetched = g.as_user(student, student_says["fetch_assignment"])
        assert fetched.returncode == 0, fetched.stderr[-4000:]
        notebook = Path("/home") / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
        answered = json.dumps(answer_notebook(json.loads(notebook.read_text()), kind))
        wrote = subprocess.run(["runuser", "-u", student, "--", "/bin/sh", "-c",
                                'cat > "$0"', str(notebook)], input=answered, text=True,
                               capture_output=True)
        assert wrote.returncode == 0, wrote.stderr
        submitted = g.as_user(student, student_says["submit"])
        assert submitted.returncode == 0, submitted.stderr[-4000:]

    # the terminal is still in ~/attention-course (the block's first line went there)
    done = g.as_user(g.instructor, grade, cwd=course)
    assert done.returncode == 0, done.stderr[-4000:]
    assert sorted(p.name for p in (course / "autograded").iterdir()) == sorted(g.students)

    refused = g.as_user(g.instructor, feedback, cwd=course)
    assert refused.returncode != 0
    assert all(s in refused.stderr for s in g.students), refused.stderr[-4000:]
    assert WRITTEN in refused.stderr, refused.stderr[-4000:]

    by_hand = g.as_user(g.instructor, f"python -c {shlex.quote(GRADE_BY_HAND)}", cwd=course)
    assert by_hand.returncode == 0 and "graded 2 answers by hand" in by_hand.stdout, (
        by_hand.stdout + by_hand.stderr)
    done = g.as_user(g.instructor, feedback, cwd=course)
    assert done.returncode == 0, done.stderr[-4000:]
    for student in g.students:
        fetched = g.as_user(student, student_says["fetch_feedback"])
        assert fetched.returncode == 0, fetched.stderr[-4000:]
        html = list((Path("/home") / student / ASSIGNMENT / "feedback").glob(
            f"*/{ASSIGNMENT}.html"))
        assert len(html) == 1, html

    done = g.as_user(g.instructor, exports, cwd=course)
    assert done.returncode == 0, done.stderr[-4000:]
    assert "left out" not in done.stdout, done.stdout  # every one of the 200 has a grade
    # the grade table and the report ran on the PostgreSQL gradebook
    assert not (course / "gradebook.db").exists()
    with open(course / f"grades-{ASSIGNMENT}.csv", encoding="utf-8", newline="") as f:
        table = {r["student"]: r for r in csv.DictReader(f)}
    assert len(table) == 200
    on_time, late = (table[s] for s in g.students)
    assert on_time["name"] == "Zoë O'Brien" and late["name"] == "José Müller, Jr."
    assert (on_time["late"], on_time["late penalty"]) == ("", "")  # two days' extension
    assert late["late"].startswith("1 h") and late["late penalty"].startswith("-")
    total = f"final (/{CHECKPOINT.total_points:g})"
    assert float(late[total]) < float(late[f"total (/{CHECKPOINT.total_points:g})"])
    report = (course / f"report-{ASSIGNMENT}" / "report.md").read_text(encoding="utf-8")
    section = report.split("## Due dates, extensions and time limits", 1)[1]
    assert f"| {g.students[0]} | Zoë O'Brien |" in section and "| 2 d | on time |" in section
    assert f"x2: cell {2 * 10} s, notebook 60 s" in section

    # Canvas's file: all 200, each on their Canvas user ID, with the grade table's final
    with open(course / f"canvas-{ASSIGNMENT}.csv", encoding="utf-8", newline="") as f:
        canvas = list(csv.reader(f))
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                         ASSIGNMENT]
    assert canvas[1][0] == "Points Possible"
    grades = {r[1]: float(r[5]) for r in canvas[2:]}
    assert len(grades) == 200
    assert grades["80000"] == float(on_time[total])
    assert grades["80001"] == float(late[total])
    assert {v for k, v in grades.items() if k not in ("80000", "80001")} == {0.0}
    assert not any(r[0].startswith(("=", "+", "-", "@")) for r in canvas[2:])
