"""Hostile submissions, graded for real (nbgrader autograde in the sandbox, in parallel).

Every hostile submission answers ``squares`` correctly and puts its attack in the
``weights`` answer cell. Each test states the expected outcome of one attack; every test
also checks that the honest and the wrong submission keep exactly their grades.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from course import (
    ASSIGNMENT,
    WEIGHTS_SOLUTION,
    WRONG_WEIGHTS,
    make_course,
    scores,
    submit,
)

from course_grading.parallel import Summary, grade_all

FULL = {"test_squares": 1.0, "test_weights_hidden": 2.0, "test_weights_naive": 1.0}
WRONG = {"test_squares": 1.0, "test_weights_hidden": 0.0, "test_weights_naive": 0.0}

# The course root, by its real path and relative to the kernel's working directory.
_ROOTS = ("import os\n_roots = ['{root}', "
          "os.path.abspath(os.path.join(os.getcwd(), '..', '..', '..'))]\n")

ATTACKS = {
    # Reads the instructor's source (solutions, hidden tests), other students' files, the
    # config; uses the solution if it got it, else submits a wrong answer.
    "read_source": _ROOTS + (
        "import json\n_found = {}\n"
        "for _root in _roots:\n"
        "  for _p in ['source/ps1/ps1.ipynb', 'submitted/honest/ps1/ps1.ipynb',\n"
        "             'autograded/honest/ps1/ps1.ipynb', 'release/ps1/ps1.ipynb',\n"
        "             'nbgrader_config.py', 'gradebook.db']:\n"
        "    try:\n"
        "        _found[_p] = open(os.path.join(_root, _p), 'rb').read()\n"
        "    except OSError as _e:\n"
        "        print('blocked', _p, type(_e).__name__)\n"
        "print('READ', sorted(_found))\n"
        "if 'source/ps1/ps1.ipynb' in _found:\n"
        "    for _c in json.loads(_found['source/ps1/ps1.ipynb'])['cells']:\n"
        "        if _c['metadata'].get('nbgrader', {}).get('grade_id') == 'weights':\n"
        "            exec(''.join(_c['source']).replace('### BEGIN SOLUTION', '')"
        ".replace('### END SOLUTION', ''))\n"
        "else:\n"
        "    exec(" + repr(WRONG_WEIGHTS) + ")\n"
    ),
    # Opens the gradebook and writes to it (full marks for everyone, a fake student).
    "gradebook": _ROOTS + (
        "import sqlite3\n_db = os.path.join(_roots[0], 'gradebook.db')\n"
        "print('gradebook visible:', os.path.exists(_db))\n"
        "try:\n"
        "    _con = sqlite3.connect(_db)\n"
        "    _con.execute('UPDATE grade SET manual_score = 99')\n"
        "    _con.execute(\"INSERT INTO student (id) VALUES ('intruder')\")\n"
        "    _con.commit()\n"
        "    print('WROTE to gradebook')\n"
        "except Exception as _e:\n"
        "    print('blocked sqlite', type(_e).__name__, _e)\n"
        "try:\n"
        "    with open(_db, 'ab') as _f:\n"
        "        _f.write(b'garbage')\n"
        "    print('WROTE file')\n"
        "except OSError as _e:\n"
        "    print('blocked file', type(_e).__name__)\n"
    ) + WEIGHTS_SOLUTION,
    # Submits a symbolic link to the instructor's source notebook next to its own notebook
    # (see the fixture) and reads the solution through it: plain nbgrader copies the file
    # the link points to into the autograded folder, so the sandbox refuses the submission.
    "symlink": (
        "import json\n"
        "try:\n"
        "    _nb = json.load(open('solution_link.txt'))\n"
        "    print('READ through the link')\n"
        "    for _c in _nb['cells']:\n"
        "        if _c['metadata'].get('nbgrader', {}).get('grade_id') == 'weights':\n"
        "            exec(''.join(_c['source']).replace('### BEGIN SOLUTION', '')"
        ".replace('### END SOLUTION', ''))\n"
        "except OSError as _e:\n"
        "    print('blocked link', type(_e).__name__)\n"
        "    exec(" + repr(WRONG_WEIGHTS) + ")\n"
    ),
    # Connects to a server of the grader's machine on 127.0.0.1 and to an outside address
    # (TEST-NET-1, never routed; inside the sandbox there is no route at all). Uses the
    # "leaked" answer if either connection opened.
    "network": (
        "import socket\n_open = []\n"
        "for _addr in [('127.0.0.1', {port}), ('192.0.2.1', 80)]:\n"
        "    try:\n"
        "        socket.create_connection(_addr, timeout=3).close()\n"
        "        _open.append(_addr)\n"
        "    except OSError as _e:\n"
        "        print('blocked', _addr[0], type(_e).__name__, _e.errno)\n"
        "print('CONNECTED', _open)\n"
        "exec(" + repr(WEIGHTS_SOLUTION) + " if _open else " + repr(WRONG_WEIGHTS) + ")\n"
    ),
    # The classic fork bomb (bounded, in case it ever ran unsandboxed: 2**10 processes).
    "fork_bomb": (
        "import os\n_child = False\n_forks = 0\n"
        "try:\n"
        "    for _ in range(10):\n"
        "        if os.fork() == 0:\n"
        "            _child = True\n"
        "        _forks += 1\n"
        "except OSError as _e:\n"
        "    print('fork refused after', _forks, type(_e).__name__)\n"
        "if _child:\n"
        "    os._exit(0)\n"
    ) + WEIGHTS_SOLUTION,
    # Allocates memory until something stops it.
    "memory_bomb": (
        "_hog = []\n"
        "try:\n"
        "    while True:\n"
        "        _hog.append(bytearray(64 << 20))\n"
        "except MemoryError:\n"
        "    print('memory refused after', len(_hog) * 64, 'MB')\n"
        "del _hog\n"
    ) + WEIGHTS_SOLUTION,
    # Writes gigabytes: to the scratch /tmp, then next to the notebook.
    "disk_fill": (
        "import os\n_mb = 0\n"
        "try:\n"
        "    with open('/tmp/fill', 'wb') as _f:\n"
        "        while _mb < 4096:\n"
        "            _f.write(bytes(8 << 20))\n"
        "            _mb += 8\n"
        "except OSError as _e:\n"
        "    print('scratch full after', _mb, 'MB', type(_e).__name__)\n"
        "os.remove('/tmp/fill')\n"
        "try:\n"
        "    open('fill', 'wb').write(bytes(8 << 20))\n"
        "    print('WROTE next to the notebook')\n"
        "except OSError as _e:\n"
        "    print('notebook dir', type(_e).__name__)\n"
    ) + WEIGHTS_SOLUTION,
    # Monkeypatches numpy's comparisons and assert-relevant builtins, then answers wrong.
    "monkeypatch": (
        "import builtins\nimport numpy as np\n"
        "np.allclose = lambda *a, **k: True\n"
        "np.isclose = lambda a, b, **k: np.ones(np.shape(a), dtype=bool)\n"
        "np.testing.assert_allclose = lambda *a, **k: None\n"
        "np.array_equal = lambda *a, **k: True\n"
        "import math\n"
        "math.isclose = lambda *a, **k: True\n"
        "builtins.abs = lambda x: 0.0\n"
        "builtins.round = lambda *a: 0.0\n"
        "builtins.float = lambda x=0.0: 0.0\n"
        "builtins.AssertionError = type('AssertionError', (Exception,), {})\n"
        "def weights(xs):  # wrong: no exp\n"
        "    x = np.asarray(xs) * 1.0\n"
        "    return x / x.sum()\n"
    ),
    # Sleeps forever: the cell times out (5 s in this course), the rest runs.
    "sleep": "import time\ntime.sleep(10 ** 9)\n" + WEIGHTS_SOLUTION,
    # Sleeps forever and swallows the interrupt: nbgrader gives up on the notebook.
    "sleep_stubborn": (
        "import time\nwhile True:\n    try:\n        time.sleep(10 ** 9)\n"
        "    except BaseException:\n        pass\n"
    ),
    # Kills its own kernel (the sandbox's pid 1, which ignores its own SIGKILL: so exits).
    "kill_kernel": ("import os\nimport signal\nos.kill(os.getpid(), signal.SIGKILL)\n"
                    "os._exit(1)\n"),
}


@pytest.fixture(scope="module")
def listener() -> Iterator[tuple[int, list[object]]]:
    """A TCP server on the grader's 127.0.0.1 that records every connection."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    srv.settimeout(0.2)
    seen: list[object] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, addr = srv.accept()
            except OSError:
                continue
            seen.append(addr)
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield srv.getsockname()[1], seen
    stop.set()
    thread.join()
    srv.close()


@pytest.fixture(scope="module")
def graded(bwrap_ok: None, tmp_path_factory: pytest.TempPathFactory,
           listener: tuple[int, list[object]]) -> tuple[Path, Summary]:
    """The course with an honest, a wrong and every hostile submission, autograded."""
    root = make_course(tmp_path_factory.mktemp("hostile") / "course", timeout=5,
                       memory=768 << 20, scratch=64 << 20)
    submit(root, "honest")
    submit(root, "wrong", weights=WRONG_WEIGHTS)
    for name, attack in ATTACKS.items():
        attack = attack.replace("{port}", str(listener[0])).replace("{root}", str(root))
        submit(root, name, weights=attack)
    (root / "submitted" / "symlink" / ASSIGNMENT / "solution_link.txt").symlink_to(
        root / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
    summary = grade_all(root, ASSIGNMENT, jobs=2, progress=False)
    return root, summary


def _result(summary: Summary, student: str):
    return next(r for r in summary.results if r.student == student)


def _outputs(root: Path, student: str) -> str:
    """Text printed by the ``weights`` cell of the autograded notebook."""
    nb = nbformat.read(root / "autograded" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", 4)
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") ==
                "weights")
    return "".join(o.get("text", "") + o.get("ename", "") for o in cell.outputs)


def _others_intact(root: Path) -> None:
    got = scores(root)
    assert got["honest"] == FULL
    assert got["wrong"] == WRONG
    assert "intruder" not in got


def test_read_source_sees_nothing_outside_its_own_notebook(graded) -> None:
    root, _ = graded
    out = _outputs(root, "read_source")
    assert "READ []" in out, out
    assert out.count("blocked") == 12  # six files, by the real path and the relative one
    assert scores(root)["read_source"] == WRONG
    _others_intact(root)


def test_symlink_to_the_source_is_refused_before_any_code_runs(graded) -> None:
    root, summary = graded
    res = _result(summary, "symlink")
    assert not res.ok and res.reason == "the submission contains symbolic links (not graded)"
    # Plain nbgrader would have copied the solutions next to the notebook; nothing of the
    # submission was autograded, and the submission itself is kept as it was.
    assert not (root / "autograded" / "symlink").exists() or not any(
        (root / "autograded" / "symlink").rglob("*.ipynb"))
    assert (root / "submitted" / "symlink" / ASSIGNMENT / "solution_link.txt").is_symlink()
    assert not scores(root).get("symlink") or all(
        v in (None, 0.0) for v in scores(root)["symlink"].values())
    _others_intact(root)


def test_gradebook_is_invisible_and_unchanged(graded) -> None:
    root, _ = graded
    out = _outputs(root, "gradebook")
    assert "gradebook visible: False" in out
    # Whatever it wrote went to its private scratch, gone with the sandbox:
    assert "intruder" not in scores(root)
    assert scores(root)["gradebook"] == FULL  # its honest answer still counts, nothing more
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{root / 'gradebook.db'}", "sandbox-test") as gb:
        manual = [g.manual_score for s in gb.students for a in s.submissions
                  for n in a.notebooks for g in n.grades]
    assert manual and all(m is None for m in manual)
    _others_intact(root)


def test_network_is_unreachable(graded, listener) -> None:
    root, _ = graded
    out = _outputs(root, "network")
    assert "CONNECTED []" in out
    assert "blocked 127.0.0.1 ConnectionRefusedError 111" in out  # its own empty loopback
    assert "blocked 192.0.2.1 OSError 101" in out  # ENETUNREACH: no route at all
    assert listener[1] == []  # the grader's server never saw a connection
    assert scores(root)["network"] == WRONG
    _others_intact(root)


def test_fork_bomb_is_refused(graded) -> None:
    root, _ = graded
    assert "fork refused after 0 PermissionError" in _outputs(root, "fork_bomb")
    assert scores(root)["fork_bomb"] == FULL
    _others_intact(root)


def test_memory_bomb_gets_memory_error(graded) -> None:
    root, _ = graded
    out = _outputs(root, "memory_bomb")
    assert "memory refused after" in out
    assert int(out.split("memory refused after")[1].split()[0]) < 768
    assert scores(root)["memory_bomb"] == FULL
    _others_intact(root)


def test_disk_fill_stops_at_the_scratch_size(graded) -> None:
    root, _ = graded
    out = _outputs(root, "disk_fill")
    assert "scratch full after" in out
    assert int(out.split("scratch full after")[1].split()[0]) <= 64
    assert "notebook dir OSError" in out and "WROTE" not in out
    assert not (root / "autograded" / "disk_fill" / ASSIGNMENT / "fill").exists()
    assert scores(root)["disk_fill"] == FULL
    _others_intact(root)


def test_monkeypatching_fools_only_the_naive_hidden_test(graded) -> None:
    root, _ = graded
    got = scores(root)["monkeypatch"]
    assert got["test_weights_hidden"] == 0.0  # expectations from a trusted copy resist
    assert got["test_weights_naive"] == 1.0  # np.allclose in the kernel was the student's
    assert got["test_squares"] == 1.0
    _others_intact(root)


def test_sleep_forever_times_out_and_the_rest_is_graded(graded) -> None:
    root, summary = graded
    assert _result(summary, "sleep").ok
    assert "CellTimeoutError" in _outputs(root, "sleep")
    assert scores(root)["sleep"] == WRONG  # weights() never got defined
    _others_intact(root)


def test_sleep_swallowing_the_interrupt_fails_only_that_submission(graded) -> None:
    root, summary = graded
    res = _result(summary, "sleep_stubborn")
    assert not res.ok and res.reason == "a cell ran past the time limit"
    assert res.seconds < 60
    _others_intact(root)


def test_killing_its_own_kernel_fails_only_that_submission(graded) -> None:
    root, summary = graded
    res = _result(summary, "kill_kernel")
    assert not res.ok
    assert "kernel died" in res.reason
    assert all(r.ok for r in summary.results if r.student not in ("kill_kernel",
                                                                  "sleep_stubborn", "symlink"))
    assert not scores(root).get("kill_kernel") or all(
        v in (None, 0.0) for v in scores(root)["kill_kernel"].values())
    _others_intact(root)

