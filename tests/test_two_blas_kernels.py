"""Strict nbval runs every lesson twice: OPENBLAS_CORETYPE unset, and set to Haswell.

conftest.py (at the top of the checkout) collects each lesson with code a second time and
sets the variable around that notebook's kernel start (issue 40: four cells of lesson 13
failed on a machine whose OpenBLAS picked its own AVX-512 kernels, and passed only with
OPENBLAS_CORETYPE=Haswell). This checks the collection and what the kernel is given,
without starting one.
"""

from __future__ import annotations

import importlib.util
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "scripts")]
import lesson_index  # noqa: E402  (scripts/lesson_index.py: the notebooks, by their metadata)

# the checkout's own conftest.py, for its hooks, loaded by path: under pytest every conftest.py
# (tests/sandbox/, tests/browser/, ...) is module "conftest", so `import conftest` gets whichever
# was collected last
_spec = importlib.util.spec_from_file_location("course_root_conftest", ROOT / "conftest.py")
conftest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(conftest)

pytestmark = pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"),
                                reason="OpenBLAS core types are x86 names")


def lessons_with_code() -> list[str]:
    index = lesson_index.read_index(ROOT / "notebooks")
    return [n.path.name for n in lesson_index.select(
        index, kind=(lesson_index.LESSON, lesson_index.CHECKPOINT))]


def test_every_lesson_with_code_is_collected_twice():
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p",
                          "no:xdist", "notebooks"], cwd=ROOT, capture_output=True, text=True,
                         timeout=300, check=False)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    files = {line.split("::")[0] for line in out.stdout.splitlines() if "::" in line}
    names = lessons_with_code()
    assert len(names) > 10
    for name in names:
        assert f"notebooks/{name}" in files
        assert f"notebooks/{name}[OPENBLAS_CORETYPE=Haswell]" in files
    cells = [line for line in out.stdout.splitlines() if "::" in line]
    plain = [c for c in cells if "[OPENBLAS_CORETYPE" not in c]
    assert len(cells) == 2 * len(plain)  # the same cells, twice


class IPyNbCell:  # the name conftest's hook looks for (nbval's cell class)
    def __init__(self, path: Path, core: str | None) -> None:
        self.parent = type("Notebook", (), {"path": path})()
        if core is not None:
            self.parent.openblas_coretype = core


@pytest.mark.parametrize("outer", [None, "Sandybridge"])
def test_the_kernel_start_gets_the_notebooks_core_type_and_the_worker_keeps_its_own(
        monkeypatch, outer):
    """The second run's kernel starts with Haswell; nbval's own with the worker's setting
    (unset in CI; a developer's OPENBLAS_CORETYPE=Sandybridge stands for another CPU)."""
    if outer is None:
        monkeypatch.delenv("OPENBLAS_CORETYPE", raising=False)
    else:
        monkeypatch.setenv("OPENBLAS_CORETYPE", outer)
    monkeypatch.delenv("NPY_DISABLE_CPU_FEATURES", raising=False)
    lesson = ROOT / "notebooks" / lessons_with_code()[0]
    for core, seen in ((None, outer), ("Haswell", "Haswell")):
        hook = conftest.pytest_runtest_setup(IPyNbCell(lesson, core))
        next(hook)  # here pytest sets the notebook up: its kernel starts
        assert os.environ.get("OPENBLAS_CORETYPE") == seen
        off = os.environ.get("NPY_DISABLE_CPU_FEATURES")
        assert off == (conftest.haswell_numpy() if core else None)
        with pytest.raises(StopIteration):
            next(hook)
        assert os.environ.get("OPENBLAS_CORETYPE") == outer
        assert "NPY_DISABLE_CPU_FEATURES" not in os.environ


def test_the_second_run_uses_numpys_avx2_loops_where_the_cpu_has_avx_512() -> None:
    """numpy's exp and log differ in the last bit between its AVX-512 and AVX2 loops, and a
    training run amplifies it: with the features haswell_numpy() names turned off, a kernel's
    numpy computes another exp than this process, where the CPU has AVX-512; and numpy starts
    without a warning (which a lesson would print)."""
    off = conftest.haswell_numpy()
    probe = ("import hashlib, warnings, numpy as np\n"
             "x = np.random.default_rng(0).standard_normal(100000) * 10\n"
             "print(hashlib.sha256(np.exp(x).tobytes() + np.log(abs(x)).tobytes()).hexdigest())\n")
    runs = {}
    for setting in ("", off):
        done = subprocess.run([sys.executable, "-W", "error", "-c", probe], capture_output=True,
                              text=True, timeout=60, check=True,
                              env={**os.environ, "NPY_DISABLE_CPU_FEATURES": setting})
        assert done.stderr == "", done.stderr
        runs[setting] = done.stdout
    if not off:
        pytest.skip("this CPU has no AVX-512 loops for numpy to turn off: it is the Haswell run")
    assert runs[""] != runs[off]


def test_the_run_says_which_blas_kernel_unset_meant() -> None:
    """The suite's summary names OpenBLAS's own choice, so a CI log shows whether "unset" was
    an AVX-512 kernel (issue 40 asks for a run there) or the same Haswell kernel twice."""
    said = conftest.blas_in_use()
    assert said.startswith("OpenBLAS core ") and "unknown" not in said, said
    core = said.removeprefix("OpenBLAS core ").split()[0].rstrip(";")
    if not os.environ.get("OPENBLAS_CORETYPE"):
        done = subprocess.run(
            [sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import conftest;"
             " print(conftest.blas_in_use())", str(ROOT)],
            env={**os.environ, "OPENBLAS_CORETYPE": "Sandybridge"}, capture_output=True,
            text=True, check=True, timeout=60)
        assert done.stdout.startswith("OpenBLAS core Sandybridge"), (core, done.stdout)
