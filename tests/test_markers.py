"""`-m "not slow"` is the quick loop: no kernel, browser, site, sandbox or hub in it.

conftest.py (at the top of the checkout) marks every strict-nbval lesson cell and every
test marked browser, site, sandbox or hub as slow too; this collects the suite once, with
`-m "not slow"`, and checks what it keeps and what it leaves out.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def collected(*args: str, env: dict[str, str] | None = None) -> list[str]:
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", *args],
                         cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
                         env=env)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    return [ln for ln in out.stdout.splitlines() if "::" in ln]


# A plugin for the collecting pytest: it writes the node ids that `-m` leaves out to a file.
DESELECTED_PLUGIN = """import os


def pytest_deselected(items):
    with open(os.environ["DESELECTED_TO"], "a") as out:
        out.writelines(item.nodeid + "\\n" for item in items)
"""


def selected_and_deselected(marker_expression: str, tmp_path: Path) -> tuple[list[str], list[str]]:
    """One collection of the suite: what ``-m marker_expression`` keeps and what it leaves out."""
    (tmp_path / "report_deselected.py").write_text(DESELECTED_PLUGIN)
    out = tmp_path / "deselected.txt"
    out.touch()
    env = dict(os.environ, DESELECTED_TO=str(out),
               PYTHONPATH=os.pathsep.join(filter(None, [str(tmp_path),
                                                        os.environ.get("PYTHONPATH")])))
    kept = collected("-m", marker_expression, "-p", "report_deselected", env=env)
    return kept, out.read_text().splitlines()


@pytest.mark.slow
def test_not_slow_leaves_out_kernels_browsers_sites_sandboxes_and_hubs(tmp_path: Path) -> None:
    quick, heavy = selected_and_deselected("not slow", tmp_path)
    assert quick and heavy
    assert not set(quick) & set(heavy)
    assert not any(n.startswith("notebooks/") for n in quick), "a lesson kernel in the quick loop"
    leaks = [n for n in quick if n.startswith(("tests/browser/test_lab_lessons",
                                               "tests/browser/test_lab_quiz",
                                               "tests/site/test_site_", "tests/hub/test_",
                                               "tests/sandbox/"))]
    assert leaks == []
    assert any(n.startswith("notebooks/") for n in heavy)
    assert any(n.startswith("tests/browser/test_lab_lessons.py") for n in heavy)
    assert "tests/test_markers.py::test_an_unknown_marker_is_an_error" in quick


def test_an_unknown_marker_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "test_typo.py").write_text(
        "import pytest\n\n@pytest.mark.slwo\ndef test_x():\n    pass\n")
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-c",
                          str(ROOT / "pyproject.toml"), "--rootdir", str(tmp_path),
                          str(tmp_path / "test_typo.py")],
                         capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode != 0 and "'slwo' not found in `markers`" in out.stdout + out.stderr


def test_the_suite_runs_without_xdist_too() -> None:
    """``./course test -p no:xdist``: the scheduler hook must not break a run without xdist."""
    names = collected("-p", "no:xdist", "tests/test_markers.py")
    assert "tests/test_markers.py::test_the_suite_runs_without_xdist_too" in names


def _top_conftest():
    """The checkout's top conftest.py as a module of its own (pytest has it as a plugin)."""
    spec = importlib.util.spec_from_file_location("top_conftest", ROOT / "conftest.py")
    top = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(top)
    return top


def test_each_module_stays_on_one_xdist_worker_and_the_site_and_grading_folders_too() -> None:
    group = _top_conftest().xdist_group
    assert group("tests/hub/test_class.py::test_sqlite_class_grades") == "tests/hub/test_class.py"
    assert group("tests/hub/test_ngshare_class.py::test_x") == "tests/hub/test_ngshare_class.py"
    assert group("notebooks/04_softmax.ipynb::Cell 3") == "notebooks/04_softmax.ipynb"
    assert group("course_lib/attention.py::course_lib.attention.softmax") \
        == "course_lib/attention.py"
    # one built site, one graded course: each folder on one worker
    assert group("tests/site/test_site_lessons.py::test_a[01_overview.ipynb]") \
        == group("tests/site/test_serve.py::test_b") == "tests/site"
    assert group("tests/grading/test_report.py::test_c") \
        == group("tests/grading/test_pipeline.py::test_d") == "tests/grading"
    assert group("tests/sitemap/test_x.py::test_e") == "tests/sitemap/test_x.py"  # not a prefix
    # checks what the site's session left behind: after it, on its worker
    assert group("tests/test_no_loop_left_running.py::test_f") == "tests/site"


def test_workers_get_the_groups_and_the_long_ones_first(tmp_path: Path) -> None:
    """A real xdist run: which worker ran what, and in which order the groups started."""
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "-v", "-p",
         "no:randomly", "tests/explore/test_describe.py", "tests/test_order.py",
         "tests/test_lessons.py",
         "-k", "not nbgrader_validate and not executed_top_to_bottom", "-m", "not slow"],
        cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert out.returncode == 0, out.stdout[-3000:]
    ran = [ln.split()[0] + " " + ln.split("PASSED ")[1].split("::")[0]
           for ln in out.stdout.splitlines() if ln.startswith("[gw") and "PASSED" in ln]
    workers: dict[str, set[str]] = {}
    for line in ran:
        worker, module = line.split()
        workers.setdefault(module, set()).add(worker)
    assert set(workers) == {"tests/explore/test_describe.py", "tests/test_order.py",
                            "tests/test_lessons.py"}
    assert all(len(w) == 1 for w in workers.values()), workers  # each module on one worker
    # a LONG_FIRST group starts first: its worker ran nothing before it (in collection order
    # it comes last, and one of the two workers would have run another module first)
    [worker] = workers["tests/test_lessons.py"]
    assert next(m for w, m in map(str.split, ran) if w == worker) == "tests/test_lessons.py"
