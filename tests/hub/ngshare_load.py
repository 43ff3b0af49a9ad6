"""Many students at once through the hub and ngshare: used by tests/hub and the benchmark.

Simulated students are real JupyterHub users (and Unix users, as PAM requires) with their
own API tokens; each fetches the released checkpoint from ngshare through the hub's proxy
and submits a notebook made unique to them, with the same REST calls the course's exchange
makes (:mod:`course_exchange.ngshare_client`). What each student sent is kept (its SHA-256)
so that what the instructor collects can be checked against it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from classroom import ASSIGNMENT, COURSE_ID, ClassRun, Person, _check, _run

from course_exchange.exchange import PERSONAL
from course_exchange.ngshare_client import Ngshare, NgshareError, files_json


@dataclass
class Attempt:
    """One submission try by one simulated student."""

    student: str
    ok: bool
    seconds: float
    sha256: str
    error: str = ""
    fetch_seconds: float = 0.0  # the fetch's request, until its whole answer is read
    fetch_bytes: int = 0  # the fetch's answer (JSON, the files base64-encoded)
    own: bool = False  # answered a notebook of their own (personal/<student>/...)


@dataclass
class Crowd:
    """The simulated students of one run, and everything they sent."""

    names: list[str]
    tokens: dict[str, str]
    sent: dict[str, list[str]] = field(default_factory=dict)  # student -> sha256 of each try
    attempts: list[Attempt] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def add_crowd(run: ClassRun, n: int, admin_token: str, prefix: str = "c") -> Crowd:
    """``n`` students: Unix users (no home, no login), hub users, tokens, enrolled in ngshare."""
    names = [f"{run.tag}-{prefix}{i:03d}" for i in range(n)]
    for name in names:
        _check(_run(["useradd", "--no-create-home", "--home-dir", "/nonexistent",
                     "--shell", "/usr/sbin/nologin", "--comment", "attention-course load test",
                     "--no-user-group", "--gid", run.students_group, name]), f"useradd {name}")
        run.created_users.append(Person(name=name, home=Path("/nonexistent"), password=""))
    tokens = run.hub.tokens_for(admin_token, names)
    instructor = Ngshare(run.hub.ngshare_url, run.tokens[run.instructor.name])
    entries = [{"username": s, "first_name": "", "last_name": "", "email": ""} for s in names]
    status = instructor.post(f"students/{COURSE_ID}", students=json.dumps(entries))["status"]
    refused = [s for s in status if not s["success"]]
    if refused:
        raise RuntimeError(f"ngshare did not enrol {refused}")
    return Crowd(names, tokens)


def unique_notebook(released: bytes, student: str, attempt: int) -> bytes:
    """The released notebook with the student's name and attempt in its metadata."""
    nb = json.loads(released)
    nb.setdefault("metadata", {})["load_test"] = {"student": student, "attempt": attempt}
    return json.dumps(nb, indent=1).encode()


def fetch_and_submit(crowd: Crowd, url: str, student: str, attempt: int = 0,
                     timeout: float = 60.0) -> Attempt:
    """One simulated student: fetch the checkpoint, submit their notebook; never raises.

    With per-student variants (the release holds ``personal/<student>/<notebook>``) the
    student's own notebook is the one they answer, as the course's ngshare fetch does."""
    client = Ngshare(url, crowd.tokens[student], timeout=timeout, retries=0)
    start = time.perf_counter()
    digest = ""
    fetched = (0.0, 0)
    try:
        answer = client.get(f"assignment/{COURSE_ID}/{ASSIGNMENT}")
        fetched = (time.perf_counter() - start, len(json.dumps(answer)))
        files = answer["files"]
        own = f"{PERSONAL}/{student}/{ASSIGNMENT}.ipynb"
        paths = {f["path"] for f in files}
        name = own if own in paths else f"{ASSIGNMENT}.ipynb"
        released = next(base64.b64decode(f["content"]) for f in files if f["path"] == name)
        mine = unique_notebook(released, student, attempt)
        digest = hashlib.sha256(mine).hexdigest()
        with crowd.lock:
            crowd.sent.setdefault(student, []).append(digest)
        t_submit = time.perf_counter()
        client.post(f"submission/{COURSE_ID}/{ASSIGNMENT}", files=files_json([
            {"path": f"{ASSIGNMENT}.ipynb", "content": base64.b64encode(mine).decode()}]))
        result = Attempt(student, True, time.perf_counter() - t_submit, digest, "", *fetched,
                         own=name == own)
    except (NgshareError, StopIteration) as err:
        result = Attempt(student, False, time.perf_counter() - start, digest,
                         str(err) or f"no {ASSIGNMENT}.ipynb among the fetched files", *fetched)
    with crowd.lock:
        crowd.attempts.append(result)
    return result


def everyone_submits(crowd: Crowd, url: str, names: list[str] | None = None,
                     attempt: int = 0, workers: int | None = None) -> list[Attempt]:
    """All of ``names`` (default: the crowd) fetch and submit at once, one thread each."""
    names = crowd.names if names is None else names
    with ThreadPoolExecutor(max_workers=workers or max(1, len(names))) as pool:
        return list(pool.map(lambda s: fetch_and_submit(crowd, url, s, attempt), names))


def collected_digest(run: ClassRun, student: str) -> str | None:
    """SHA-256 of the notebook collected for ``student`` (None if nothing was collected)."""
    path = run.course / "submitted" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None


def stored_digests(run: ClassRun, student: str) -> list[str]:
    """SHA-256 of every submission ngshare holds for ``student`` (as the instructor)."""
    client = Ngshare(run.hub.ngshare_url, run.tokens[run.instructor.name])
    subs = client.get(f"submissions/{COURSE_ID}/{ASSIGNMENT}/{student}")["submissions"]
    out = []
    for sub in subs:
        got = client.get(f"submission/{COURSE_ID}/{ASSIGNMENT}/{student}",
                         timestamp=sub["timestamp"])
        nb = [f for f in got["files"] if f["path"] == f"{ASSIGNMENT}.ipynb"]
        out.append(hashlib.sha256(base64.b64decode(nb[0]["content"])).hexdigest()
                   if len(nb) == 1 else f"{len(nb)} notebooks")
    return out
