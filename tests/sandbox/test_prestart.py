"""Kernels started ahead of their notebook: faster, and still one fresh sandbox per notebook.

The parallel engine starts a worker's next sandboxed kernel while the current notebook runs
(``SandboxedExecute.prestart``). One worker grades two submissions in order: ``a_leave``
leaves traces everywhere it can write, keeps its kernel busy for a few seconds and says
when it stopped; ``b_snoop`` looks for the traces and says when its kernel started (both on
the machine's uptime clock, so no duration is guessed and a busy machine changes nothing).
Graded with the kernel started ahead, ``b_snoop``'s kernel started before ``a_leave`` was
done (so while ``a_leave`` ran) and still finds nothing of ``a_leave``; graded without, it
started after, which shows that the test of the start time can fail.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from course import ASSIGNMENT, MAX_SCORE, WEIGHTS_SOLUTION, make_course, scores, submit

from course_grading.parallel import grade_all

BUSY_SECONDS = 4.0

LEAVE = (
    "import builtins, os, time\n"
    "open('/tmp/left_behind', 'w').write('a_leave was here')\n"
    "os.makedirs('/tmp/home', exist_ok=True)\n"
    "open('/tmp/home/left_behind', 'w').write('a_leave was here')\n"
    "builtins.LEFT_BEHIND = True\n"
    "os.environ['LEFT_BEHIND'] = '1'\n"
    "print('own files:', sorted(os.listdir('.')))\n"
    f"time.sleep({BUSY_SECONDS})\n"
    "print('busy until', open('/proc/uptime').read().split()[0])\n"
) + WEIGHTS_SOLUTION

SNOOP = (
    "import builtins, os, time\n"
    "_ticks = os.sysconf('SC_CLK_TCK')\n"
    "_start = int(open('/proc/self/stat').read().rsplit(')', 1)[1].split()[19]) / _ticks\n"
    "_age = float(open('/proc/uptime').read().split()[0]) - _start\n"
    "print(f'kernel started at {_start:.2f}, age {_age:.2f} s')\n"
    "_traces = [p for p in ('/tmp/left_behind', '/tmp/home/left_behind', 'a_leave_data.txt')\n"
    "           if os.path.exists(p)]\n"
    "_traces += ['builtins'] if hasattr(builtins, 'LEFT_BEHIND') else []\n"
    "_traces += ['environ'] if 'LEFT_BEHIND' in os.environ else []\n"
    "print('traces:', _traces)\n"
    "print('cwd:', os.getcwd(), sorted(os.listdir('.')))\n"
) + WEIGHTS_SOLUTION


def _weights_output(root: Path, student: str) -> str:
    nb = nbformat.read(root / "autograded" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", 4)
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") ==
                "weights")
    return "".join(o.get("text", "") + o.get("ename", "") for o in cell.outputs)


def _grade(tmp: Path, prestart: bool) -> tuple[Path, float, str, str]:
    """Grade both; the root, how long before ``a_leave`` was done ``b_snoop``'s kernel
    started (negative: after), and the two outputs."""
    root = make_course(tmp / "course", timeout=30)
    leave_dir = submit(root, "a_leave", weights=LEAVE)
    (leave_dir / "a_leave_data.txt").write_text("only for a_leave")
    submit(root, "b_snoop", weights=SNOOP)
    summary = grade_all(root, ASSIGNMENT, jobs=1, progress=False, prestart=prestart)
    assert [r.ok for r in summary.results] == [True, True], summary.render()
    snoop = _weights_output(root, "b_snoop")
    leave = _weights_output(root, "a_leave")
    started = float(snoop.split("kernel started at ")[1].split(",")[0])
    return root, float(leave.split("busy until ")[1].split()[0]) - started, leave, snoop


@pytest.mark.parametrize("prestart", [True, False], ids=["ahead", "on-demand"])
def test_each_notebook_gets_a_fresh_sandbox(bwrap_ok: None, tmp_path: Path,
                                            prestart: bool) -> None:
    root, ahead, leave, snoop = _grade(tmp_path, prestart)
    assert "own files: ['a_leave_data.txt', 'ps1.ipynb', 'timestamp.txt']" in leave, leave
    assert "traces: []" in snoop, snoop
    # Its own notebook's files, copied to the fixed, read-only working directory:
    assert "cwd: /submission ['ps1.ipynb', 'timestamp.txt']" in snoop, snoop
    assert scores(root)["b_snoop"] == MAX_SCORE
    if prestart:  # started before a_leave was done: while it ran
        assert ahead > 0, (ahead, leave, snoop)
    else:  # started only once a_leave was done
        assert ahead < 0, (ahead, leave, snoop)
