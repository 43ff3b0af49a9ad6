"""course_site.serve: a static server on 127.0.0.1, as a web host would serve the site."""

from __future__ import annotations

import email.utils
import http.client
import socket
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from course_site.serve import SiteServer, port_taken


@pytest.fixture
def site(tmp_path: Path) -> Path:
    root = tmp_path / "site"
    (root / "static").mkdir(parents=True)
    (root / "index.html").write_text("<p>home</p>")
    (root / "static" / "pyodide.asm.wasm").write_bytes(b"\0asm")
    (root / "static" / "pyodide.mjs").write_text("export {}")
    (tmp_path / "secret.txt").write_text("outside the site")
    return root


def test_files_come_with_the_types_browsers_need(site: Path) -> None:
    with SiteServer(site) as server:
        assert server.url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(server.url + "static/pyodide.asm.wasm") as r:
            assert r.headers["Content-Type"] == "application/wasm"
            assert r.headers["Cache-Control"] == "no-cache"
            assert r.read() == b"\0asm"
        with urllib.request.urlopen(server.url + "static/pyodide.mjs") as r:
            assert r.headers["Content-Type"] == "text/javascript"


def test_a_second_visit_gets_not_modified(site: Path) -> None:
    with SiteServer(site) as server:
        with urllib.request.urlopen(server.url + "static/pyodide.asm.wasm") as r:
            stamp = r.headers["Last-Modified"]
        assert email.utils.parsedate_to_datetime(stamp)
        req = urllib.request.Request(server.url + "static/pyodide.asm.wasm",
                                     headers={"If-Modified-Since": stamp})
        with pytest.raises(urllib.error.HTTPError) as answer:
            urllib.request.urlopen(req)
        assert answer.value.code == 304


def test_no_listing_and_nothing_outside_the_site(site: Path) -> None:
    with SiteServer(site) as server:
        with pytest.raises(urllib.error.HTTPError) as listing:
            urllib.request.urlopen(server.url + "static/")
        assert listing.value.code == 404
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
        conn.request("GET", "/../secret.txt")
        answer = conn.getresponse()
        assert b"outside the site" not in answer.read()
        conn.close()


def test_it_listens_on_loopback_only(site: Path) -> None:
    with SiteServer(site) as server:
        assert server.httpd.server_address[0] == "127.0.0.1"


def test_a_folder_that_is_no_site_is_refused(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="'root' must be a built site"):
        SiteServer(tmp_path)


def test_a_busy_port_is_one_line_before_the_build(monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str],
                                                  tmp_path: Path) -> None:
    """`./course site --serve --port N` on a taken port: one line naming the flag, no build."""
    from course_site import build

    built = []
    monkeypatch.setattr(build, "build", lambda *args, **kwargs: built.append(args))
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        code = build.main(["--serve", "--port", str(port), "--output", str(tmp_path)])
    assert code == 2 and built == [], "the site was built for a server that cannot start"
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (f"course site: port {port} is taken on 127.0.0.1 (another server?); choose "
                   f"another with --port, e.g. `./course site --serve --port {port + 1}`\n")


def test_a_free_port_is_free(site: Path) -> None:
    with SiteServer(site) as server:
        port = server.port
        assert port_taken(port)
    assert not port_taken(port)
