"""course_exchange.ngshare_service's fixes to ngshare 0.6.0, each on its own.

ngshare lives in the class's environment (deploy/requirements-hub.txt), not in the test
runner's, so each check runs there as a short script and prints what it saw. The whole
service runs in test_ngshare_class.py.
"""

from __future__ import annotations

import json
import subprocess

import pytest
from classroom import REPO, ensure_env

pytestmark = [pytest.mark.hub]

STORE = r"""
import json, sys
from sqlalchemy import __version__, create_engine
from sqlalchemy.orm import sessionmaker
if sys.argv[1] == "fixed":
    from course_exchange.ngshare_service import adopt_new_rows
    adopt_new_rows()
from ngshare.database.database import Assignment, Base, Course, File, Submission, User
engine = create_engine("sqlite://")
Base.metadata.create_all(engine)
db = sessionmaker(bind=engine)()
kim = User("kim"); db.add(kim); db.commit()
course = Course("c1", [kim]); db.add(course); db.commit()
# what ngshare's handlers do: construct, attach files, commit
assignment = Assignment("a1", course); assignment.files.append(File("a.ipynb", b"{}", "n1"))
db.commit()
found = db.query(Assignment).one_or_none()
submission = Submission(kim, found or assignment)
submission.files.append(File("s.ipynb", b"{}", "n2"))
db.commit()
print(json.dumps({"sqlalchemy": __version__, "assignments": db.query(Assignment).count(),
                  "submissions": db.query(Submission).count(),
                  "files": db.query(File).count()}))
"""

TOKENS = r"""
import json, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
seen = []
class Hub(BaseHTTPRequestHandler):
    def do_GET(self):
        token = self.headers["Authorization"].split()[1]
        seen.append(token)
        ok = token.startswith("good")
        body = json.dumps({"name": token[5:]} if ok else {"error": "no"}).encode()
        self.send_response(200 if ok else 403)
        self.send_header("Content-Length", str(len(body))); self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a): pass
hub = ThreadingHTTPServer(("127.0.0.1", 0), Hub)
threading.Thread(target=hub.serve_forever, daemon=True).start()
from course_exchange.ngshare_service import remember_tokens
remember_tokens(60.0)
from ngshare.ngshare import MyRequestHandler
class Handler:  # what MyRequestHandler.user_for_token reads of itself
    settings = {"user_url": f"http://127.0.0.1:{hub.server_address[1]}/hub/api/user"}
lookup = MyRequestHandler.user_for_token
answers = [lookup(Handler(), t) for t in ("good-ann", "good-ann", "bad-x", "bad-x", "good-bo")]
print(json.dumps({"answers": answers, "hub_asked": seen}))
"""


def run_in_class_env(script: str, *args: str) -> dict:
    env = ensure_env(lambda *a: None)
    proc = subprocess.run([f"{env}/bin/python", "-c", script, *args], capture_output=True,
                          text=True, cwd=str(REPO), timeout=120,
                          env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_new_assignments_and_submissions_are_stored(class_ready):
    fixed = run_in_class_env(STORE, "fixed")
    assert (fixed["assignments"], fixed["submissions"], fixed["files"]) == (1, 1, 2)


def test_without_the_fix_sqlalchemy_2_stores_nothing(class_ready):
    plain = run_in_class_env(STORE, "plain")
    if int(plain["sqlalchemy"].split(".")[0]) < 2:
        pytest.skip(f"SQLAlchemy {plain['sqlalchemy']} still cascades along backrefs")
    # ngshare would have answered "success" to both
    assert (plain["assignments"], plain["submissions"]) == (0, 0), plain


def test_an_accepted_token_is_asked_about_once_a_refused_one_every_time(class_ready):
    got = run_in_class_env(TOKENS)
    assert got["answers"] == [{"name": "ann"}, {"name": "ann"}, None, None, {"name": "bo"}]
    assert got["hub_asked"] == ["good-ann", "bad-x", "bad-x", "good-bo"]
