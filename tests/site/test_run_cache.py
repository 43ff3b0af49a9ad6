"""course_site.run_cache: a run's result is reused only for exactly the same inputs.

No Node.js here: ``run`` is a stand-in that counts its calls (the build's real run, reused,
is tested in test_site_notes.py, where a second site is built beside the session's).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from course_site import run_cache


@pytest.fixture(autouse=True)
def fixed_node(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run_cache, "_node_version", lambda: "v18.19.0")


@pytest.fixture
def pyodide_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "pyodide"
    (folder / "sub").mkdir(parents=True)
    (folder / "pyodide-lock.json").write_text('{"packages": {}}')
    (folder / "numpy-1.26.4-cp312-cp312-pyodide_2024_0_wasm32.whl").write_bytes(b"wheel")
    (folder / "sub" / "python_stdlib.zip").write_bytes(b"stdlib")
    return folder


class Runs:
    """A stand-in for the run under Node.js: its result names its call."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, folder: Path, packages: list[str], code: str) -> Any:
        self.calls += 1
        return [{"stdlib": f"call {self.calls}"}, {"packages": packages}]


def test_the_same_inputs_reuse_the_result(tmp_path: Path, pyodide_dir: Path) -> None:
    runs, lines = Runs(), []
    first = run_cache.cached_run(tmp_path / "cache", pyodide_dir, ["numpy"], "1", runs)
    again = run_cache.cached_run(tmp_path / "cache", pyodide_dir, ["numpy"], "1", runs,
                                 lines.append)
    assert first == ([{"stdlib": "call 1"}, {"packages": ["numpy"]}], False)
    assert again == (first[0], True) and runs.calls == 1
    assert len(lines) == 1 and "the same run's result, from" in lines[0]
    [entry] = (tmp_path / "cache" / "pyodide-runs").iterdir()
    assert entry.name == run_cache.run_key(pyodide_dir, ["numpy"], "1") + ".json"


@pytest.mark.parametrize("change", ["file", "new file", "renamed", "packages", "code", "node"])
def test_any_changed_input_runs_again(change: str, tmp_path: Path, pyodide_dir: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    runs, packages, code = Runs(), ["numpy"], "1"
    run_cache.cached_run(tmp_path, pyodide_dir, packages, code, runs)
    if change == "file":
        (pyodide_dir / "sub" / "python_stdlib.zip").write_bytes(b"stdlib!")
    elif change == "new file":
        (pyodide_dir / "extra.whl").write_bytes(b"")
    elif change == "renamed":
        (pyodide_dir / "sub" / "python_stdlib.zip").rename(pyodide_dir / "python_stdlib.zip")
    elif change == "packages":
        packages = ["numpy", "matplotlib"]
    elif change == "code":
        code = "2"
    else:
        monkeypatch.setattr(run_cache, "_node_version", lambda: "v20.0.0")
    result, reused = run_cache.cached_run(tmp_path, pyodide_dir, packages, code, runs)
    assert (reused, runs.calls, result[0]) == (False, 2, {"stdlib": "call 2"})


def test_a_file_touched_but_not_changed_still_reuses(tmp_path: Path, pyodide_dir: Path) -> None:
    runs = Runs()
    run_cache.cached_run(tmp_path, pyodide_dir, [], "1", runs)
    os.utime(pyodide_dir / "pyodide-lock.json", (1, 1))
    assert run_cache.cached_run(tmp_path, pyodide_dir, [], "1", runs)[1] is True


@pytest.mark.parametrize("damage", ["cut", "other key", "other layout", "not json"])
def test_a_damaged_entry_is_run_again_and_replaced(damage: str, tmp_path: Path,
                                                   pyodide_dir: Path) -> None:
    runs, lines = Runs(), []
    run_cache.cached_run(tmp_path, pyodide_dir, [], "1", runs)
    [entry] = (tmp_path / "pyodide-runs").iterdir()
    stored = json.loads(entry.read_text())
    if damage == "cut":
        entry.write_text(entry.read_text()[:20])
    elif damage == "other key":
        entry.write_text(json.dumps({**stored, "key": "0" * 64}))
    elif damage == "other layout":
        entry.write_text(json.dumps({**stored, "format": 0}))
    else:
        entry.write_bytes(b"\xff\xfe")
    result, reused = run_cache.cached_run(tmp_path, pyodide_dir, [], "1", runs, lines.append)
    assert (reused, runs.calls, result[0]) == (False, 2, {"stdlib": "call 2"})
    assert lines == [f"pyodide: {entry} is not a run's result; running again"]
    assert json.loads(entry.read_text())["result"] == result  # replaced by the new run
    assert run_cache.cached_run(tmp_path, pyodide_dir, [], "1", runs)[1] is True


def test_a_failed_run_stores_nothing(tmp_path: Path, pyodide_dir: Path) -> None:
    def fails(folder: Path, packages: list[str], code: str) -> Any:
        raise RuntimeError("the site's Python failed under Node.js")

    with pytest.raises(RuntimeError, match=r"failed under Node\.js"):
        run_cache.cached_run(tmp_path, pyodide_dir, [], "1", fails)
    assert not (tmp_path / "pyodide-runs").exists()


def test_only_the_most_recently_used_entries_are_kept(tmp_path: Path, pyodide_dir: Path) -> None:
    runs = Runs()
    codes = [str(i) for i in range(run_cache.KEEP + 2)]
    for i, code in enumerate(codes):
        run_cache.cached_run(tmp_path, pyodide_dir, [], code, runs)
        entry = tmp_path / "pyodide-runs" / f"{run_cache.run_key(pyodide_dir, [], code)}.json"
        os.utime(entry, (1000 + i, 1000 + i))  # in the order they were made
    # the oldest kept one is used again: it becomes the most recent
    reused = codes[-run_cache.KEEP]
    assert run_cache.cached_run(tmp_path, pyodide_dir, [], reused, runs)[1] is True
    run_cache.cached_run(tmp_path, pyodide_dir, [], "new", runs)
    kept = {p.name for p in (tmp_path / "pyodide-runs").iterdir()}
    expected = {f"{run_cache.run_key(pyodide_dir, [], c)}.json" for c in
                [reused, codes[-1], "new"]}
    assert kept == expected and len(kept) == run_cache.KEEP
