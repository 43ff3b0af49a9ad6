"""course_exchange.ngshare_client: what crosses between servers, and how failures read.

The real ngshare behind a real JupyterHub runs in tests/hub/test_ngshare_class.py; here a
small HTTP server on 127.0.0.1 stands in for the answers that are hard to provoke there
(a proxy's 503, a lost answer, a redirect to the login page), and the file packing is
checked on its own.
"""

from __future__ import annotations

import base64
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from course_exchange.ngshare_client import (
    Ngshare,
    NgshareError,
    decode_files,
    encode_files,
    safe_relative_path,
)


class Script(BaseHTTPRequestHandler):
    """Answers each request with the next (status, body) of the server's script."""

    def _answer(self) -> None:
        server = self.server
        length = int(self.headers.get("Content-Length") or 0)
        server.seen.append((self.command, self.path, self.rfile.read(length).decode(),
                            self.headers.get("Authorization")))
        status, body = server.script.pop(0) if server.script else (200, {"success": True})
        if status == "drop":  # the connection closes without an answer
            self.close_connection = True
            return
        payload = json.dumps(body).encode() if isinstance(body, dict) else body.encode()
        self.send_response(status)
        if status in (302, 303):
            self.send_header("Location", "/hub/login")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = do_DELETE = _answer

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Script)
    httpd.script, httpd.seen = [], []
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    httpd.url = f"http://127.0.0.1:{httpd.server_address[1]}/services/ngshare/"
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def client(server, **kw) -> Ngshare:
    return Ngshare(server.url, "tok-123", backoff=0.01, **kw)


def test_every_call_carries_the_token_and_returns_the_answer(server):
    server.script = [(200, {"success": True, "courses": ["attention-course"]})]
    assert client(server).get("courses")["courses"] == ["attention-course"]
    assert server.seen == [("GET", "/services/ngshare/courses", "", "token tok-123")]


def test_a_refusal_names_the_call_ngshares_message_and_the_status(server):
    server.script = [(403, {"success": False, "message": "Permission denied"})]
    with pytest.raises(NgshareError, match=r"ngshare refused GET students/c: Permission "
                       r"denied \(HTTP 403\)"):
        client(server).get("students/c")


def test_a_read_is_retried_while_the_service_restarts(server):
    server.script = [(503, "proxy: service unavailable"), ("drop", ""),
                     (200, {"success": True, "assignments": ["checkpoint"]})]
    assert client(server).get("assignments/c")["assignments"] == ["checkpoint"]
    assert len(server.seen) == 3


def test_a_read_gives_up_with_a_clear_message(server):
    server.script = [(503, "down")] * 3
    with pytest.raises(NgshareError, match=r"ngshare is not available \(HTTP 503\) for GET "
                       r"courses, after 3 tries; try again in a minute"):
        client(server, retries=2).get("courses")


def test_a_write_is_never_retried_and_says_it_may_not_be_stored(server):
    server.script = [("drop", ""), (200, {"success": True, "timestamp": "t"})]
    with pytest.raises(NgshareError, match=r"did not answer .* it may not have been stored; "
                       "try again"):
        client(server).post("submission/c/a", files="[]")
    assert len(server.seen) == 1, "one try only: a retry could store it twice"


def test_a_token_the_hub_does_not_know_reads_as_such(server):
    server.script = [(302, "")]
    with pytest.raises(NgshareError, match="did not accept the JupyterHub token"):
        client(server).get("courses")


def test_an_answer_that_is_not_json_is_an_error_not_data(server):
    server.script = [(200, "<html>login</html>")]
    with pytest.raises(NgshareError, match="HTTP 200 and no JSON"):
        client(server).get("courses")


def test_no_token_and_a_bad_url_are_refused_before_any_call():
    with pytest.raises(NgshareError, match="No JupyterHub token"):
        Ngshare("http://127.0.0.1:1/services/ngshare/", "")
    with pytest.raises(ValueError, match="must start with http"):
        Ngshare("127.0.0.1:1/services/ngshare/", "tok")


@pytest.mark.parametrize("path", ["/etc/passwd", "../x", "a/../../x", "a//b", "./a", "",
                                  "a\\..\\b", "a\x00b", None, 3])
def test_unsafe_paths_are_refused(path):
    with pytest.raises(ValueError, match="must be relative"):
        safe_relative_path(path)


def test_files_go_and_come_back_byte_for_byte(tmp_path):
    src = tmp_path / "checkpoint"
    (src / "data").mkdir(parents=True)
    (src / "checkpoint.ipynb").write_bytes(b'{"cells": []}')
    (src / "data" / "x.bin").write_bytes(bytes(range(256)))
    (src / "link.txt").symlink_to("/etc/hostname")
    (src / "skip.pyc").write_bytes(b"x")
    files = encode_files(src, ignore=lambda d, name, size: name.endswith(".pyc"))
    assert [f["path"] for f in files] == ["checkpoint.ipynb", "data/x.bin"]
    written = decode_files(files, tmp_path / "copy")
    assert written == ["checkpoint.ipynb", "data/x.bin"]
    assert (tmp_path / "copy" / "data" / "x.bin").read_bytes() == bytes(range(256))


def test_a_hostile_listing_writes_nothing(tmp_path):
    ok = {"path": "a.txt", "content": base64.b64encode(b"a").decode()}
    for bad in ([ok, {"path": "../../escape.txt", "content": ""}],
                [ok, {"path": "a.txt", "content": ""}],  # the same path twice
                [ok, "not an object"]):
        with pytest.raises((NgshareError, FileExistsError)):
            decode_files(bad, tmp_path / "dest")
        assert sorted(p.name for p in tmp_path.iterdir()) == [], bad
    assert not (tmp_path.parent / "escape.txt").exists()


def test_limits_are_checked_before_anything_is_written(tmp_path):
    big = [{"path": f"f{i}", "content": base64.b64encode(b"x" * 10).decode()}
           for i in range(5)]
    with pytest.raises(NgshareError, match="more than 3 files"):
        decode_files(big, tmp_path / "a", max_files=3)
    with pytest.raises(NgshareError, match="more than 25 bytes"):
        decode_files(big, tmp_path / "b", max_bytes=25)
    with pytest.raises(NgshareError, match="holds more than 4 bytes to send"):
        (tmp_path / "src").mkdir()
        (tmp_path / "src" / "f").write_bytes(b"hello")
        encode_files(tmp_path / "src", max_bytes=4)
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_the_folders_a_path_makes_count_against_the_limit(tmp_path):
    """One file 2,000 folders deep, or a few files in many folders: no more entries than
    ``max_files`` are written, whatever their kind (issue 42, item 4)."""
    deep = [{"path": "d/" * 2000 + "f", "content": ""}]
    wide = [{"path": f"d{i}/e{i}/f", "content": ""} for i in range(400)]
    for name, files in (("deep", deep), ("wide", wide)):
        with pytest.raises(NgshareError, match="more than 1000 files and folders"):
            decode_files(files, tmp_path / name, max_files=1000)
        assert not (tmp_path / name).exists()
    assert decode_files(wide[:300], tmp_path / "ok", max_files=1000)  # 900 entries


def test_fetching_again_only_adds_what_is_missing(tmp_path):
    dest = tmp_path / "checkpoint"
    dest.mkdir()
    (dest / "checkpoint.ipynb").write_text("my work")
    files = [{"path": "checkpoint.ipynb", "content": base64.b64encode(b"released").decode()},
             {"path": "data.csv", "content": base64.b64encode(b"1,2").decode()}]
    assert decode_files(files, dest, only_missing=True) == ["data.csv"]
    assert (dest / "checkpoint.ipynb").read_text() == "my work"


class _Service:
    """ngshare's answers to a collect: one submission of kim's, its files as given."""

    def __init__(self, files: list) -> None:
        self.files = files

    def get(self, call: str, **params: object) -> dict:
        stamp = "2026-03-01 09:30:00.000000 UTC"
        if call.startswith("submissions/"):
            return {"submissions": [{"student_id": "kim", "timestamp": stamp}]}
        return {"timestamp": stamp, "files": self.files}


@pytest.mark.parametrize("name", ["timestamp.txt/inner", "timestamp.txt"])
def test_collect_writes_ngshares_time_whatever_the_submission_calls_timestamp_txt(
        tmp_path, name):
    """A submitted ``timestamp.txt`` (a file, or a folder made by ``timestamp.txt/inner``)
    gives way to ngshare's time; nothing is left beside the collected copy."""
    from nbgrader.auth import Authenticator
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config import Config

    from course_exchange.ngshare_exchange import NgshareCollect

    config = Config()
    config.CourseDirectory.root = str(tmp_path)
    config.CourseDirectory.course_id = "course"
    coursedir = CourseDirectory(config=config)
    coursedir.assignment_id = "checkpoint"
    collect = NgshareCollect(coursedir=coursedir, authenticator=Authenticator(config=config),
                             config=config)
    forged = base64.b64encode(b"1999-01-01 00:00:00.000000 UTC").decode()
    collect._client = _Service([{"path": name, "content": forged},
                                {"path": "checkpoint.ipynb", "content": ""}])
    collect.copy_files()
    folder = tmp_path / "submitted" / "kim"
    assert [p.name for p in folder.iterdir()] == ["checkpoint"]
    stamp = folder / "checkpoint" / "timestamp.txt"
    assert stamp.read_text() == "2026-03-01 09:30:00.000000 UTC"
