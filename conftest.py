"""Test-suite wide markers: what `-m "not slow"` leaves out.

A test is ``slow`` when it starts something real and heavy: a Jupyter kernel (every strict
nbval lesson cell), Chromium (``browser``), the offline site (``site``), the grading sandbox
(``sandbox``) or a JupyterHub class (``hub``). Those markers imply ``slow`` here, so that
``./course test -m "not slow"`` is the quick loop: library, checks, spec and doctests.
Unknown markers are an error (``--strict-markers`` in pyproject.toml).

Workers: ``./course test`` runs the suite on pytest-xdist workers (``-n 3 --dist
loadgroup``), and ``pytest_xdist_make_scheduler`` below decides what goes together. A group
of tests runs on one worker, in collection order: by default a test module (its module
fixtures are made once); for the folders in ``ONE_WORKER`` the whole folder, whose session
fixtures (one built site; one graded course) are worth making only once. Groups known to be
long start first (``LONG_FIRST``), so that none of them is left to run alone at the end.
xdist's own ``loadgroup`` reads ``xdist_group`` marks through a suffix it writes into node
ids, which pytest 9.2 no longer lets it write (pytest-xdist issue #1386): the groups would
silently be ignored, so this scheduler reads a test's group from its path instead.

Two BLAS kernels: strict nbval runs every lesson twice, once in the worker's environment
(in CI ``OPENBLAS_CORETYPE`` is unset: OpenBLAS picks the CPU's own kernels) and once with
``OPENBLAS_CORETYPE=Haswell`` (node ids ``notebooks/NN_x.ipynb[OPENBLAS_CORETYPE=Haswell]``),
so that an output that depends on the CPU's BLAS kernel fails here and not only on a
student's laptop whose CPU differs (on x86-64 only: the core types are x86 names). The
variable is read when numpy loads OpenBLAS, so it is set around the notebook's kernel start.
The second run is a Haswell CPU in numpy's own loops too: ``NPY_DISABLE_CPU_FEATURES`` turns
off the AVX-512 loops numpy would pick on this CPU (``haswell_numpy``), whose ``exp`` and
``log`` differ from the AVX2 ones in the last bit, which a training run amplifies (lesson
13's stored table, made without AVX-512, re-made with it: 38.0 % stuck where it says 37.9 %).
"""

from __future__ import annotations

import json
import os
import platform
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent
#: The second OpenBLAS core type every lesson is compared under (the first: the machine's).
SECOND_CORETYPE = "Haswell" if platform.machine() in ("x86_64", "AMD64") else None

HEAVY = ("browser", "site", "sandbox", "hub")

ONE_WORKER = ("tests/site", "tests/grading")
# A module that must run with a group that is not its own: this test checks that no earlier
# test left an event loop running, so it runs after the site's tests, their session open.
JOINS = {"tests/test_no_loop_left_running.py": "tests/site"}
# The longest groups of a full run (--durations, 2 cores), longest first.
LONG_FIRST = (
    "tests/site",
    "tests/sandbox/test_hostile_quiz.py",
    "tests/browser/test_lab_lessons.py",
    "tests/hub/test_ngshare_class.py",
    "tests/hub/test_class.py",
    "tests/grading",
    "tests/sandbox/test_parallel.py",
    "tests/test_lessons.py",
)


def xdist_group(nodeid: str) -> str:
    """The group of a test (by its node id): its module, or the folder or group it joins."""
    module = nodeid.split("::", 1)[0]
    if module in JOINS:
        return JOINS[module]
    return next((f for f in ONE_WORKER if module.startswith(f + "/")), module)


def _rank(nodeid: str) -> int:
    group = xdist_group(nodeid)
    return LONG_FIRST.index(group) if group in LONG_FIRST else len(LONG_FIRST)


@pytest.hookimpl(optionalhook=True)  # without xdist (-p no:xdist) the hook is unknown
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadgroup``: the groups above, the long ones first (see the docstring)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class CourseGroups(LoadScopeScheduling):
        def __init__(self, config: pytest.Config, log: Any = None) -> None:
            super().__init__(config, log)
            config.option.loadscopereorder = False  # keep the order the workers collected

        def _split_scope(self, nodeid: str) -> str:
            return xdist_group(nodeid)

    return CourseGroups(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        nbval_cell = type(item).__name__ == "IPyNbCell"
        if nbval_cell or any(item.get_closest_marker(m) for m in HEAVY):
            item.add_marker(pytest.mark.slow)
    if hasattr(config, "workerinput"):  # an xdist worker: the long groups first (a stable sort)
        items.sort(key=lambda item: _rank(item.nodeid))


def _is_lesson(path: Path) -> bool:
    """A notebook of notebooks/ that runs code: any kind but the contents page
    (scripts/lesson_index.py reads the same ``metadata.lesson.kind``)."""
    if path.parent != ROOT / "notebooks" or path.suffix != ".ipynb":
        return False
    try:
        kind = json.loads(path.read_text(encoding="utf-8"))["metadata"]["lesson"]["kind"]
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return kind != "contents"


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> Any:
    """Each lesson once more, with ``OPENBLAS_CORETYPE`` set (nbval collects it unset)."""
    if (SECOND_CORETYPE is None or not parent.config.getoption("nbval", default=False)
            or not _is_lesson(file_path)):
        return None
    from nbval.plugin import IPyNbFile

    rel = file_path.relative_to(ROOT).as_posix()
    node = IPyNbFile.from_parent(parent, path=file_path,
                                 nodeid=f"{rel}[OPENBLAS_CORETYPE={SECOND_CORETYPE}]")
    node.openblas_coretype = SECOND_CORETYPE
    return node


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Any:
    """A lesson's kernel starts in the setup of its first cell: the second run's with
    ``OPENBLAS_CORETYPE`` and ``NPY_DISABLE_CPU_FEATURES`` set, the worker's own restored
    after. nbval's own run keeps the worker's environment: unset in CI, or a core type of
    your choice
    (``OPENBLAS_CORETYPE=Sandybridge ./course test notebooks``: a CPU that differs)."""
    core = getattr(getattr(item, "parent", None), "openblas_coretype", None)
    if type(item).__name__ != "IPyNbCell" or core is None:
        yield
        return
    setting = {"OPENBLAS_CORETYPE": core, "NPY_DISABLE_CPU_FEATURES": haswell_numpy()}
    before = {name: os.environ.get(name) for name in setting}
    os.environ.update(setting)
    try:
        yield
    finally:
        for name, value in before.items():
            os.environ.pop(name, None)
            if value is not None:
                os.environ[name] = value


def haswell_numpy() -> str:
    """``NPY_DISABLE_CPU_FEATURES`` for a Haswell CPU: the AVX-512 features numpy dispatches
    to on this one (none where the CPU has none, or numpy does not dispatch them: naming a
    feature numpy cannot turn off makes it warn, and the warning would be a lesson's output)."""
    try:
        from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    except ImportError:  # numpy < 2
        from numpy.core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    return " ".join(f for f in __cpu_dispatch__ if __cpu_features__.get(f)
                    and (f.startswith("AVX512") or f == "X86_V4"))


def blas_in_use() -> str:
    """The OpenBLAS kernel numpy's own OpenBLAS picked here, and the CPU's widest SIMD
    (tests/test_two_blas_kernels.py checks that the name is read and follows
    ``OPENBLAS_CORETYPE``)."""
    import ctypes

    import numpy as np

    try:
        from numpy._core._multiarray_umath import __cpu_features__ as features
    except ImportError:  # numpy < 2
        from numpy.core._multiarray_umath import __cpu_features__ as features
    widest = next((f for f in ("AVX512F", "AVX2", "AVX", "NEON", "ASIMD") if features.get(f)),
                  "none of AVX512F, AVX2, AVX, NEON")
    core = "unknown"
    libs = sorted((Path(np.__file__).parent.parent / "numpy.libs").glob("*openblas*"))
    for lib in libs:
        for name in ("scipy_openblas_get_corename64_", "scipy_openblas_get_corename",
                     "openblas_get_corename64_", "openblas_get_corename"):
            fn = getattr(ctypes.CDLL(str(lib)), name, None)
            if fn is not None:
                fn.restype = ctypes.c_char_p
                core = fn().decode()
                break
    set_to = os.environ.get("OPENBLAS_CORETYPE")
    return (f"OpenBLAS core {core}" + (f" (OPENBLAS_CORETYPE={set_to})" if set_to else "")
            + f"; widest SIMD {widest}")


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Say which BLAS kernel "unset" meant in this run (issue 40: outputs that differ by CPU)."""
    off = haswell_numpy()
    also = (f"; the lessons were also compared under OPENBLAS_CORETYPE={SECOND_CORETYPE}"
            + (f" and NPY_DISABLE_CPU_FEATURES='{off}'" if off else "")
            if SECOND_CORETYPE else "")
    terminalreporter.write_line(f"BLAS here: {blas_in_use()}{also}")
