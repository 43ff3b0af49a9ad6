"""The scripts of benchmarks/, loaded as modules for their tests (they are not a package)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def load_benchmark(name: str) -> ModuleType:
    """benchmarks/<name>.py as the module ``name`` (registered in sys.modules).

    As when the script runs, its folder is on ``sys.path``, for the modules it shares with
    the other scripts there (``proc_cpu``).
    """
    if str(BENCHMARKS) not in sys.path:
        sys.path.append(str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while defining
    spec.loader.exec_module(module)
    return module


def run_smoke(name: str, *args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    """``python benchmarks/<name>.py --smoke [args]`` as a reader types it, from the checkout.

    Fails the calling test, with what the script printed, unless it ends with status 0.
    """
    done = subprocess.run([sys.executable, str(BENCHMARKS / f"{name}.py"), "--smoke", *args],
                          cwd=BENCHMARKS.parent, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL, check=False)
    assert done.returncode == 0, (f"{name}.py --smoke: exit {done.returncode}\n{done.stdout}\n"
                                  f"{done.stderr[-3000:]}")
    return done


def figures(pattern: str, text: str) -> list[float]:
    """The numbers of the first line of ``text`` that ``pattern`` matches (its groups), or a
    failed assertion quoting ``text``: a figure that is gone or is not a number fails."""
    found = re.search(pattern, text, re.M)
    assert found, f"no line matches {pattern!r} in:\n{text}"
    return [float(g) for g in found.groups()]
