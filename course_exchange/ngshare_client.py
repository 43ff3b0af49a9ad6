"""A client for ngshare's REST API: the only path between servers that share no files.

`ngshare <https://github.com/LibreTexts/ngshare>`_ is a JupyterHub service that stores
released assignments, submissions and feedback in its own database. Every call carries the
caller's JupyterHub token (``Authorization: token ...``); ngshare asks the hub whose token
it is, so who submits, and whose feedback may be read, is decided by the hub's login, not by
anything the caller sends.

This module only moves data and reports failures plainly; :mod:`course_exchange.ngshare_exchange`
plugs it into nbgrader. Reads (GET) are retried when ngshare does not answer (a restart);
writes are never retried behind the user's back: a write that got no answer raises
:class:`NgshareError` saying it may not have been stored, and the user submits again.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from nbgrader.exchange import ExchangeError

__all__ = ["Ngshare", "NgshareError", "decode_files", "encode_files", "files_json", "md5_of",
           "safe_relative_path"]

# Statuses with which JupyterHub's proxy says the service is not there (being restarted).
_UNAVAILABLE = {502, 503, 504}


class NgshareError(ExchangeError):
    """ngshare refused a request, or did not answer; the message says which and what to do."""


class Ngshare:
    """Calls to one ngshare service with one JupyterHub token.

    Parameters
    ----------
    url : str
        ngshare's base URL, e.g. ``http://127.0.0.1:8000/services/ngshare/`` (through the
        hub's proxy) or ``http://ngshare:8080/services/ngshare/`` (inside Kubernetes).
    token : str
        The caller's JupyterHub API token.
    timeout : float
        Seconds to wait for one answer.
    retries : int
        How many more times a read (GET) is tried when ngshare does not answer.
    """

    def __init__(self, url: str, token: str, timeout: float = 60.0, retries: int = 4,
                 backoff: float = 0.5) -> None:
        import requests

        if not url.startswith(("http://", "https://")):
            raise ValueError(f"the ngshare URL must start with http:// or https:// (got {url!r})")
        if not token:
            raise NgshareError(
                "No JupyterHub token: the exchange talks to ngshare as you, with the token "
                "JupyterHub gives your server (JUPYTERHUB_API_TOKEN); run this inside your "
                "JupyterHub server or its terminal")
        self.url = url.rstrip("/") + "/"
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"token {token}"

    def request(self, method: str, path: str, *, params: dict | None = None,
                data: dict | None = None) -> dict[str, Any]:
        """One call; the decoded JSON answer when ngshare says ``success``.

        Raises
        ------
        NgshareError
            When ngshare answers with a failure (its message, and the HTTP status) or does
            not answer at all (after the retries, for a GET).
        """
        import requests

        url = self.url + quote(path.lstrip("/"), safe="/")
        attempts = 1 + (self.retries if method == "GET" else 0)
        for attempt in range(attempts):
            try:
                response = self.session.request(method, url, params=params, data=data,
                                                timeout=self.timeout, allow_redirects=False)
            except requests.RequestException as err:
                problem = f"ngshare did not answer ({type(err).__name__})"
            else:
                if response.status_code not in _UNAVAILABLE:
                    return self._answer(method, path, response)
                problem = f"ngshare is not available (HTTP {response.status_code})"
            if attempt + 1 < attempts:
                time.sleep(self.backoff * 2 ** attempt)
        if method == "GET":
            raise NgshareError(f"{problem} for {method} {path}, after {attempts} tries; "
                               "try again in a minute")
        raise NgshareError(f"{problem} for {method} {path}: it may not have been stored; "
                           "try again")

    def _answer(self, method: str, path: str, response: Any) -> dict[str, Any]:
        if 300 <= response.status_code < 400:
            raise NgshareError(f"ngshare did not accept the JupyterHub token for {method} {path} "
                               f"(HTTP {response.status_code}, asking to log in); log in to "
                               "JupyterHub again")
        try:
            body = response.json()
        except ValueError:
            body = None
        if not isinstance(body, dict):
            raise NgshareError(f"ngshare answered {method} {path} with HTTP "
                               f"{response.status_code} and no JSON ({response.text[:200]!r})")
        if not body.get("success"):
            message = body.get("message", "no message")
            raise NgshareError(f"ngshare refused {method} {path}: {message} "
                               f"(HTTP {response.status_code})")
        return body

    def get(self, path: str, **params: str) -> dict[str, Any]:
        return self.request("GET", path, params=params or None)

    def post(self, path: str, **data: str) -> dict[str, Any]:
        return self.request("POST", path, data=data)

    def delete(self, path: str) -> dict[str, Any]:
        return self.request("DELETE", path)


def safe_relative_path(path: object) -> str:
    """``path`` if it is a plain relative path inside a folder, else ValueError.

    Examples
    --------
    >>> safe_relative_path("data/x.csv")
    'data/x.csv'
    >>> safe_relative_path("../../.ssh/authorized_keys")
    Traceback (most recent call last):
    ...
    ValueError: a file path must be relative, inside its folder, without '.' or '..' parts (got '../../.ssh/authorized_keys')
    """  # noqa: E501 (doctest output is one line)
    ok = (isinstance(path, str) and path and not path.startswith("/") and "\\" not in path
          and "\x00" not in path and all(p not in ("", ".", "..") for p in path.split("/")))
    if not ok:
        raise ValueError("a file path must be relative, inside its folder, without '.' or "
                         f"'..' parts (got {path!r})")
    return path


def encode_files(folder: str | os.PathLike[str],
                 ignore: Callable[[str, str, int], bool] | None = None,
                 max_bytes: int | None = None) -> list[dict[str, str]]:
    """The files under ``folder`` as ngshare wants them: ``[{"path", "content" (base64)}]``.

    Symbolic links are left out (what they point to is not the student's to send), and so
    is whatever ``ignore(directory, name, size)`` says.

    Raises
    ------
    NgshareError
        When the files add up to more than ``max_bytes``.
    """
    root = Path(folder)
    files, total = [], 0
    for top, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not os.path.islink(os.path.join(top, d)))
        for name in sorted(names):
            path = Path(top, name)
            if path.is_symlink() or not path.is_file():
                continue
            size = path.stat().st_size
            if ignore is not None and ignore(top, name, size):
                continue
            total += size
            if max_bytes is not None and total > max_bytes:
                raise NgshareError(f"{root} holds more than {max_bytes} bytes to send; "
                                   "remove large files (data, outputs) and try again")
            files.append({"path": path.relative_to(root).as_posix(),
                          "content": base64.b64encode(path.read_bytes()).decode()})
    return files


def entries_of(files: Iterable[dict]) -> int:
    """Files and the folders their paths make: what :func:`decode_files` counts.

    >>> entries_of([{"path": "a.ipynb"}, {"path": "data/x/1.csv"}, {"path": "data/2.csv"}])
    5
    """
    paths = [str(f["path"]) for f in files]
    folders = {"/".join(p.split("/")[:n]) for p in paths for n in range(1, p.count("/") + 1)}
    return len(paths) + len(folders)


def decode_files(files: Iterable[dict], dest: str | os.PathLike[str], *,
                 max_files: int = 1000, max_bytes: int = 100_000_000,
                 only_missing: bool = False) -> list[str]:
    """Write ngshare's ``[{"path", "content"}]`` under ``dest``; return the paths written.

    Every path is checked (:func:`safe_relative_path`) and the total bounded before anything
    is written: files and the folders their paths make together count against
    ``max_files`` (one deep path makes a folder per part). Without ``only_missing``,
    ``dest`` must not exist: the files are written beside it and renamed into place at the
    end, so a failure leaves nothing half-written.
    """
    decoded: list[tuple[str, bytes]] = []
    folders: set[str] = set()
    total = 0
    for i, entry in enumerate(files):
        if i >= max_files:
            raise NgshareError(f"more than {max_files} files for {dest}")
        if not isinstance(entry, dict):
            raise NgshareError(f"a file entry must be an object (got {type(entry).__name__})")
        try:
            rel = safe_relative_path(entry.get("path"))
            data = base64.b64decode(entry.get("content", ""), validate=False)
        except (ValueError, TypeError) as err:
            raise NgshareError(f"refusing a file for {dest}: {err}") from None
        total += len(data)
        if total > max_bytes:
            raise NgshareError(f"more than {max_bytes} bytes for {dest}")
        parts = rel.split("/")[:-1]
        folders.update("/".join(parts[:n]) for n in range(1, len(parts) + 1))
        if len(decoded) + 1 + len(folders) > max_files:
            raise NgshareError(f"more than {max_files} files and folders for {dest}")
        decoded.append((rel, data))
    dest = Path(dest)
    if only_missing:
        written = []
        for rel, data in decoded:
            target = dest / rel
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
                written.append(rel)
        return written
    if os.path.lexists(dest):
        raise NgshareError(f"{dest} already exists")
    staging = dest.with_name(f".{dest.name}.partial-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    try:
        staging.mkdir(parents=True)
        for rel, data in decoded:
            target = staging / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(target, "xb") as out:  # two entries with one path: refused
                out.write(data)
        staging.rename(dest)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return [rel for rel, _ in decoded]


def md5_of(path: str | os.PathLike[str]) -> str:
    """The checksum ngshare keeps for each file (MD5 of its bytes)."""
    return hashlib.md5(Path(path).read_bytes(), usedforsecurity=False).hexdigest()


def files_json(files: list[dict[str, str]]) -> str:
    """The ``files`` form field of ngshare's uploads."""
    return json.dumps(files)
