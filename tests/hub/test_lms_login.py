"""Logging in from the LMS: deploy/jupyterhub_config.py with ATTENTION_HUB_LOGIN=lti, end to end.

The test plays the LMS (the LTI 1.3 platform) on 127.0.0.1: an RSA key and its JWKS, the
authorization endpoint the hub redirects the browser to, and the signed ``id_token`` that
endpoint sends back (a form the browser posts to the hub). The browser is ``requests`` with
its cookie jar. Real Unix users (an instructor and a student, made as docs/deploy.md step 3
makes them); the hub as the guide starts it, with the LTI settings the LMS would give.

- the instructor's launch (role Instructor) logs them in, into the hub group named for the
  instructors' Unix group, as an admin; the student's (role Learner) into the students'
  group, not an admin, and their JupyterLab starts as their Unix user;
- refused, each with one line: a launch signed with another key, an expired one, one for
  another tool (audience), the student's launch posted again (with a new browser's nonce,
  and with the very cookies it was made for), a Learner launch made Instructor, ``root``,
  a launch without ``unix_user``; none of them makes a hub user.
"""

from __future__ import annotations

import base64
import html
import json
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
from classroom import ClassRun, Hub, _cookie, http_proxy
from localports import free_port  # on sys.path once classroom is imported

pytestmark = [pytest.mark.hub, pytest.mark.slow, pytest.mark.timeout(1200)]

LTI = "https://purl.imsglobal.org/spec/lti/claim/"
INSTRUCTOR = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"
LEARNER = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"
CLIENT_ID = "attention-course-tool"
KID = "platform-key-1"


def _b64(n: int) -> str:
    raw = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


@dataclass
class Platform:
    """The LMS: its key, JWKS, authorization endpoint, and what it signs next."""

    users: dict[str, dict[str, Any]] = field(default_factory=dict)  # login_hint -> claims
    requests: list[dict[str, str]] = field(default_factory=list)  # authentication requests

    def __post_init__(self) -> None:
        from cryptography.hazmat.primitives.asymmetric import rsa

        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.other_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.tweak: dict[str, Any] = {}  # for the next id_token: claims to change, a key

    def jwks(self) -> dict[str, Any]:
        numbers = self.key.public_key().public_numbers()
        return {"keys": [{"kty": "RSA", "alg": "RS256", "use": "sig", "kid": KID,
                          "n": _b64(numbers.n), "e": _b64(numbers.e)}]}

    def id_token(self, login_hint: str, nonce: str, target: str) -> str:
        import jwt

        now = int(time.time())
        user = self.users[login_hint]
        claims = {
            "iss": self.base, "aud": CLIENT_ID, "sub": f"lms-{login_hint}", "iat": now,
            "exp": now + 300, "nonce": nonce, "name": login_hint,
            LTI + "version": "1.3.0", LTI + "deployment_id": "deployment-1",
            LTI + "target_link_uri": target, LTI + "message_type": "LtiResourceLinkRequest",
            LTI + "resource_link": {"id": "checkpoint-link"},
            LTI + "context": {"id": "course-1", "label": "ATTN", "title": "Attention"},
            LTI + "roles": [user["role"]],
            LTI + "custom": {"unix_user": user["unix_user"]} if user["unix_user"] else {},
        }
        claims.update(self.tweak.get("claims", {}))
        key = self.tweak.get("key", self.key)
        self.tweak = {}
        return jwt.encode(claims, key, algorithm="RS256", headers={"kid": KID})

    def serve(self) -> ThreadingHTTPServer:
        platform = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                url = urlparse(self.path)
                if url.path == "/jwks":
                    self._send(200, "application/json", json.dumps(platform.jwks()))
                elif url.path == "/authorize":
                    query = {k: v[0] for k, v in parse_qs(url.query).items()}
                    platform.requests.append(query)
                    token = platform.id_token(query["login_hint"], query["nonce"],
                                              query["redirect_uri"])
                    form = (f'<form method="post" action="{html.escape(query["redirect_uri"])}">'
                            f'<input name="id_token" value="{token}">'
                            f'<input name="state" value="{html.escape(query["state"])}"></form>')
                    self._send(200, "text/html", form)
                else:
                    self._send(404, "text/plain", "no such page")

            def _send(self, status: int, kind: str, body: str) -> None:
                data = body.encode()
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return server


@dataclass
class Launch:
    """One launch as a browser makes it."""

    session: Any
    init: Any  # the hub's answer to the login initiation
    form: dict[str, str]  # what the platform's page posts back
    action: str
    cookies_before_post: Any  # the browser's cookies just before it posts the form
    response: Any = None  # the hub's answer to the form

    @property
    def said(self) -> str:
        return html.unescape(re.sub(r"<[^>]+>", " ", self.response.text))


def launch(hub: Hub, platform: Platform, login_hint: str, post: bool = True) -> Launch:
    """The LMS starts a launch (OIDC login initiation); the browser follows to the platform's
    authorization endpoint and posts its form to the hub."""
    import requests

    s = requests.Session()
    init = s.post(f"{hub.base}/hub/lti13/oauth_login", allow_redirects=False, timeout=60,
                  data={"iss": platform.base, "login_hint": login_hint,
                        "target_link_uri": f"{hub.base}/hub/", "client_id": CLIENT_ID,
                        "lti_message_hint": "checkpoint-link",
                        "lti_deployment_id": "deployment-1"})
    assert init.status_code == 302, (init.status_code, init.text[:500])
    page = s.get(init.headers["Location"], timeout=60)
    page.raise_for_status()
    action = html.unescape(re.search(r'action="([^"]+)"', page.text).group(1))
    form = {name: html.unescape(value)
            for name, value in re.findall(r'name="(\w+)" value="([^"]*)"', page.text)}
    done = Launch(s, init, form, action, s.cookies.copy())
    if post:
        done.response = s.post(action, data=form, allow_redirects=False, timeout=60)
    return done


def logged_in(launch: Launch) -> bool:
    """Did the hub give the browser its login cookie?"""
    return any(c.name == "jupyterhub-hub-login" for c in launch.session.cookies)


@pytest.fixture(scope="module")
def lti_hub(class_ready: None) -> Iterator[tuple[ClassRun, Hub, Platform, dict]]:
    http_proxy()
    platform = Platform()
    server = platform.serve()
    rec: dict = {}
    try:
        with ClassRun(n_students=1) as run:
            student, instructor = run.students[0], run.instructor
            platform.users = {
                "lms-instructor": {"unix_user": instructor.name, "role": INSTRUCTOR},
                "lms-student": {"unix_user": student.name, "role": LEARNER},
                "lms-student-as-instructor": {"unix_user": student.name, "role": INSTRUCTOR},
                "lms-root": {"unix_user": "root", "role": INSTRUCTOR},
                "lms-nameless": {"unix_user": "", "role": LEARNER},
            }
            hub = run.hub = Hub(run, env={
                "ATTENTION_HUB_LOGIN": "lti",
                "ATTENTION_HUB_LTI_ISSUER": platform.base,
                "ATTENTION_HUB_LTI_CLIENT_ID": CLIENT_ID,
                "ATTENTION_HUB_LTI_AUTHORIZE_URL": f"{platform.base}/authorize",
                "ATTENTION_HUB_LTI_JWKS_URL": f"{platform.base}/jwks"})
            hub.start()
            yield run, hub, platform, rec
    finally:
        server.shutdown()
        server.server_close()


def admin_token(hub: Hub, launch: Launch, name: str) -> str:
    """An API token for the logged-in ``name``, made in their browser session."""
    got = launch.session.post(f"{hub.base}/hub/api/users/{name}/tokens", timeout=60,
                              headers={"X-XSRFToken": _cookie(launch.session, "_xsrf", "/hub/")},
                              json={"note": "tests/hub lti", "expires_in": 3600})
    got.raise_for_status()
    return got.json()["token"]


def test_the_instructor_and_the_student_land_in_their_groups(lti_hub):
    run, hub, platform, rec = lti_hub
    instructor, student = run.instructor, run.students[0]

    first = launch(hub, platform, "lms-instructor")
    assert first.response.status_code == 302, first.said[:2000]
    request = platform.requests[-1]  # the authentication request the hub sent the browser to
    assert {k: request[k] for k in ("response_type", "scope", "response_mode", "prompt",
                                    "client_id", "login_hint", "lti_message_hint")} == {
        "response_type": "id_token", "scope": "openid", "response_mode": "form_post",
        "prompt": "none", "client_id": CLIENT_ID, "login_hint": "lms-instructor",
        "lti_message_hint": "checkpoint-link"}
    assert request["redirect_uri"] == f"{hub.base}/hub/lti13/oauth_callback"
    token = admin_token(hub, first, instructor.name)
    rec["admin_token"] = token

    second = launch(hub, platform, "lms-student")
    assert second.response.status_code == 302, second.said[:2000]
    rec["student_launch"] = second
    users = {u["name"]: u for u in hub.admin_api(token, "GET", "users")}
    assert set(users) == {instructor.name, student.name}
    assert users[instructor.name]["admin"] is True
    assert users[instructor.name]["groups"] == [run.instructors_group]
    assert users[student.name]["admin"] is False
    assert users[student.name]["groups"] == [run.students_group]
    groups = {g["name"]: g["users"] for g in hub.admin_api(token, "GET", "groups")}
    assert groups == {run.instructors_group: [instructor.name],
                      run.students_group: [student.name]}
    # the student's JupyterLab runs as their Unix user, in their home
    hub.open_lab(second.session, student)
    home = hub.user_api(second.session, student, "GET", "api/contents")
    assert home.status_code == 200
    who = hub.admin_api(token, "GET", f"users/{student.name}")["servers"][""]
    assert who["ready"] is True


@pytest.mark.parametrize("case, status, words", [
    ("forged", 400, "Signature verification failed"),
    ("expired", 400, "Signature has expired"),
    ("another tool", 401, "Audience doesn't match"),
    ("missing unix_user", 400, "Not logged in: the launch carries no 'unix_user'. Set the "
     "tool's custom parameter unix_user=$User.username in the LMS"),
])
def test_a_forged_expired_or_foreign_launch_is_refused(lti_hub, case, status, words):
    _run, hub, platform, _rec = lti_hub
    now = int(time.time())
    platform.tweak = {"forged": {"key": platform.other_key},
                      "expired": {"claims": {"iat": now - 900, "exp": now - 300}},
                      "another tool": {"claims": {"aud": "someone-elses-tool"}},
                      "missing unix_user": {}}[case]
    hint = "lms-nameless" if case == "missing unix_user" else "lms-instructor"
    refused = launch(hub, platform, hint)
    assert refused.response.status_code == status, refused.said[:2000]
    assert words in refused.said, refused.said[:2000]
    assert not logged_in(refused)


def test_a_replayed_launch_is_refused(lti_hub):
    _run, hub, platform, rec = lti_hub
    import requests

    if "student_launch" not in rec:
        pytest.skip("needs the student's launch of the first test")
    old: Launch = rec["student_launch"]
    # in another browser: its own state and nonce, the student's id_token
    other = launch(hub, platform, "lms-student", post=False)
    other.form["id_token"] = old.form["id_token"]
    replay = other.session.post(other.action, data=other.form, allow_redirects=False,
                                timeout=60)
    assert replay.status_code == 400 and "OAuth nonce mismatch" in replay.text
    # the very request again, with the cookies the student's browser held when posting it
    thief = requests.Session()
    thief.cookies.update(old.cookies_before_post)
    again = thief.post(old.action, data=old.form, allow_redirects=False, timeout=60)
    said = html.unescape(again.text)
    assert again.status_code == 403, said[:2000]
    assert "Not logged in: this launch was used before. Open the tool again from the LMS." \
        in said


@pytest.mark.parametrize("hint, words", [
    ("lms-student-as-instructor", "is an instructor of this course, but on this server"),
    ("lms-root", "the LMS sent the user name 'root', which is not a member of"),
])
def test_the_lms_cannot_make_an_instructor_or_log_in_anyone_else(lti_hub, hint, words):
    _run, hub, platform, _rec = lti_hub
    refused = launch(hub, platform, hint)
    assert refused.response.status_code == 403, refused.said[:2000]
    assert words in refused.said and "Not logged in:" in refused.said, refused.said[:2000]
    assert not logged_in(refused)


def test_no_refused_launch_made_a_hub_user(lti_hub):
    run, hub, _platform, rec = lti_hub
    if "admin_token" not in rec:
        pytest.skip("needs the instructor's launch of the first test")
    users = {u["name"]: u for u in hub.admin_api(rec["admin_token"], "GET", "users")}
    assert set(users) == {run.instructor.name, run.students[0].name}
    assert users[run.students[0].name]["admin"] is False
    assert users[run.students[0].name]["groups"] == [run.students_group]
