"""Keep what a run of the site's Python under Node.js returned, by everything it read.

The build's run of Pyodide under Node.js (step 4 of :mod:`course_site.build`) imports the
library and compiles what a kernel imports: about 20 s of CPU on 2 cores, and its result
depends only on its inputs. A rebuild after a lesson's text changed, or a second site built
from the same library and lessons' imports, reads that result from the build's cache
instead (``<cache>/pyodide-runs/<key>.json``; the ``KEEP`` most recently used are kept).

The key is a sha256 over every input: each file of the site's Pyodide folder (its core,
every wheel, its ``pyodide-lock.json``) by name and content, the packages loaded, the code
run, the runner script and Node.js's version. Any change makes a new key, so a stale result
is never used. A file in the cache that is not a whole entry for its key (cut short, of
another key or layout) is not used: the run happens again and replaces it. The cache is the
instructor's own folder, as for the downloads (:mod:`course_site.fetch`): anyone who can
write there could also change the build itself.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .fetch import file_sha256

__all__ = ["RUNNER", "cached_run", "run_key"]

RUNNER = Path(__file__).with_name("pyodide_run.mjs")
FOLDER = "pyodide-runs"
FORMAT = 1  # the layout of a cache entry: {"format", "key", "result"}
# Entries kept: the most recently used (each is ~27 MB: the bytecode of ~950 modules).
KEEP = 3


def _node_version() -> str:
    done = subprocess.run(["node", "--version"], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)
    return done.stdout.strip() if done.returncode == 0 else f"no node ({done.returncode})"


def run_key(pyodide_dir: Path, packages: list[str], code: str,
            node_version: str | None = None) -> str:
    """The sha256 (hex) of everything a run of ``code`` in ``pyodide_dir``'s Pyodide reads."""
    digest = hashlib.sha256()

    def part(label: str, data: bytes) -> None:
        digest.update(f"{label} {len(data)}\n".encode())
        digest.update(data)

    part("format", str(FORMAT).encode())
    part("node", (node_version if node_version is not None else _node_version()).encode())
    part("runner", RUNNER.read_bytes())
    part("packages", json.dumps(packages).encode())
    part("code", code.encode())
    for path in sorted(p for p in Path(pyodide_dir).rglob("*") if p.is_file()):
        part("file " + path.relative_to(pyodide_dir).as_posix(), file_sha256(path).encode())
    return digest.hexdigest()


def _read(entry: Path, key: str) -> tuple[bool, Any]:
    try:
        stored = json.loads(entry.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False, None
    if not (isinstance(stored, dict) and stored.get("format") == FORMAT
            and stored.get("key") == key and "result" in stored):
        return False, None
    return True, stored["result"]


def cached_run(cache: Path, pyodide_dir: Path, packages: list[str], code: str,
               run: Callable[[Path, list[str], str], Any],
               log: Callable[[str], None] = lambda line: None) -> tuple[Any, bool]:
    """``run(pyodide_dir, packages, code)``'s result, from the cache when it holds it.

    Returns the result and whether it came from the cache. A result the cache does not hold
    (or holds damaged) is computed by ``run`` and stored; ``run``'s errors pass through and
    store nothing.
    """
    key = run_key(pyodide_dir, packages, code)
    entry = Path(cache) / FOLDER / f"{key}.json"
    found, result = _read(entry, key)
    if found:
        log(f"pyodide: the same run's result, from {entry}")
        os.utime(entry)  # recently used: kept by _prune
        return result, True
    if entry.exists():
        log(f"pyodide: {entry} is not a run's result; running again")
    result = run(pyodide_dir, packages, code)
    entry.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{key}-", suffix=".json", dir=entry.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump({"format": FORMAT, "key": key, "result": result}, out)
        os.replace(tmp, entry)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _prune(entry.parent, keep=entry)
    return result, False


def _prune(folder: Path, keep: Path) -> None:
    """Delete all but the ``KEEP`` most recently used entries (``keep`` always stays)."""
    def used(path: Path) -> float:
        try:
            return path.stat().st_mtime
        except OSError:
            return 0.0

    others = sorted((p for p in folder.glob("*.json") if p != keep), key=used, reverse=True)
    for old in others[KEEP - 1:]:
        old.unlink(missing_ok=True)
