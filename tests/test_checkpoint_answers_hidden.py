"""No answer of a graded item can be had from what students have, course_lib and course_quiz
(the graded quiz keeps its solutions in the instructor's source): nothing importable from
them computes ``weights_without_self`` or the shifted-key row for inputs of a student's
choosing, and no module of them spells out the solutions."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
import re
import sys
import warnings
from pathlib import Path

import nbformat
import numpy as np
import pytest

import course_lib
import course_quiz
from course_grading.checkpoint_answers import shifted_key_row, weights_without_self
from course_grading.variants import SOURCE_PATH

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import lesson_index  # noqa: E402  (scripts/lesson_index.py: the notebooks, by their metadata)

CHECKPOINT_MODULES = ("course_quiz.checkpoint_checks", "course_quiz.checkpoint_spec")

# Inputs no notebook holds: 5 tokens, d_k = 3.
Q = np.array([[0.3, -1.2, 0.7], [1.1, 0.4, -0.6], [-0.9, 0.8, 0.2], [0.5, 0.5, -1.3],
              [-0.2, -0.7, 1.4]])
K = np.array([[0.9, 0.1, -0.4], [-0.3, 1.3, 0.6], [0.2, -0.8, 1.0], [1.2, -0.5, 0.3],
              [-1.0, 0.6, -0.2]])
SHIFT = {"Q": Q, "K": K, "row": 2, "key": 4, "c": 1.3}


def _found(value, want, depth=0) -> bool:
    """Whether ``want`` (an array) is somewhere in ``value`` (arrays, lists, mappings...)."""
    if depth > 6:
        return False
    if isinstance(value, dict):
        return any(_found(v, want, depth + 1) for v in value.values())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return any(_found(getattr(value, f.name), want, depth + 1)
                   for f in dataclasses.fields(value))
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        array = None
    if array is not None and array.shape == want.shape:
        return bool(np.allclose(array, want, atol=1e-6))
    if isinstance(value, list | tuple):
        return any(_found(v, want, depth + 1) for v in value)
    return False


def _callables(module):
    """Every function and class of ``module`` (public and private), and the bound methods
    of its instances (the spec, ``CHECKPOINT``)."""
    for name, obj in vars(module).items():
        if name.startswith("__"):
            continue
        if inspect.isfunction(obj) or inspect.isclass(obj):
            if getattr(obj, "__module__", None) == module.__name__:
                yield name, obj
        elif dataclasses.is_dataclass(obj):
            for attr in dir(obj):
                method = getattr(obj, attr, None)
                if not attr.startswith("__") and inspect.ismethod(method):
                    yield f"{name}.{attr}", method


ARGUMENTS = [(Q, K), (Q.tolist(), K.tolist()), (SHIFT,), ({"Q": Q, "K": K},), (Q, K, SHIFT),
             ("weights_without_self", Q, K), ("shifted_key", SHIFT)]


@pytest.mark.parametrize("module_name", CHECKPOINT_MODULES)
def test_no_callable_of_the_students_library_computes_a_graded_answer(module_name):
    module = importlib.import_module(module_name)
    want_weights = weights_without_self(Q, K)
    want_row = shifted_key_row(SHIFT)
    called = []
    for name, func in _callables(module):
        for args in ARGUMENTS:
            try:
                with np.errstate(all="ignore"), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    got = func(*args)
            except Exception:
                continue
            called.append(name)
            assert not _found(got, want_weights), f"{module_name}.{name} gives the weights"
            assert not _found(got, want_row), f"{module_name}.{name} gives the shifted row"
    for key, value in vars(module).items():  # and no table of such functions (EXPECTED)
        if key.startswith("__") or not isinstance(value, dict):
            continue
        for entry in value.values():
            if not inspect.isfunction(entry):
                continue
            for args in ARGUMENTS:
                try:
                    got = entry(*args)
                except Exception:
                    continue
                called.append(key)
                assert not _found(got, want_weights), f"{module_name}.{key} gives the weights"
                assert not _found(got, want_row), f"{module_name}.{key} gives the shifted row"
    assert called, "nothing could be called: the test would prove nothing"


def _solution_lines(grade_id: str) -> list[str]:
    """The code lines of the instructor's solution of one answer cell (comments cut)."""
    nb = nbformat.read(ROOT / SOURCE_PATH, as_version=4)
    [cell] = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id]
    body = cell.source.split("### BEGIN SOLUTION", 1)[1].split("### END SOLUTION", 1)[0]
    return [line.split("#", 1)[0].strip() for line in body.splitlines()
            if line.split("#", 1)[0].strip()]


#: Input conversion, which any function of course_lib may write: not part of a solution.
_CONVERSION = re.compile(r"^\w+ = np\.asarray\(\w+, dtype=float\)$")


def _lesson_code() -> str:
    parts = []
    for notebook in lesson_index.read_index(ROOT / "notebooks"):
        parts += [c.source for c in nbformat.read(notebook.path, as_version=4).cells]
    return "\n".join(parts)


def test_no_module_of_the_students_library_spells_out_a_solution():
    """Every line of the instructor's solutions that no lesson already shows (hiding the
    diagonal, raising one key's weight) is in no file of course_lib, docstrings included;
    nor is any way of hiding the diagonal."""
    lessons = " ".join(_lesson_code().split())
    own = [line for gid in ("weights_without_self", "shifted_key")
           for line in _solution_lines(gid) if " ".join(line.split()) not in lessons
           and not _CONVERSION.match(line)]
    assert any("fill_diagonal" in line for line in own), own  # the test sees the solution
    files = []
    for package in (course_lib, course_quiz):  # every module, in every folder of them
        folder = Path(package.__file__).parent
        files += sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)
    names = {m.name for m in pkgutil.walk_packages([str(Path(course_quiz.__file__).parent)])}
    assert "checkpoint_checks" in names and len(files) > 40
    for path in files:
        text = " ".join(path.read_text(encoding="utf-8").split())
        for line in own:
            assert " ".join(line.split()) not in text, (path.name, line)
        assert not re.search(r"fill_diagonal\([^)]*-\s*np\.inf|~\s*np\.eye\(", text), path.name


def test_the_released_notebook_holds_no_expected_weights():
    """Issue 41: the released notebook's check_data cell decoded (zlib + base64) to the right
    weights of the setup cell's example. The release holds no encoded data now, and its
    visible check runs as a student runs it: the right answer and uniform weights pass
    alike (the form), a diagonal not hidden is named."""
    from course_grading.checkpoint_answers import MISTAKE_SOURCES, answer_function
    from course_grading.feedback import visible_part
    from course_quiz.checkpoint_checks import CheckFailed, check
    from course_quiz.checkpoint_spec import CHECKPOINT

    nb = nbformat.read(ROOT / SOURCE_PATH, as_version=4)
    released = [visible_part(c.source) for c in nb.cells]
    assert not any("expected" in text or "eNp" in text for text in released)
    namespace: dict = {}
    exec(next(c.source for c in nb.cells if c.get("id") == "setup"), namespace)
    Qs, Ks = namespace["Q"], namespace["K"]
    check("test_weights_visible", weights_without_self, Q=Qs, K=Ks)
    check("test_weights_visible", lambda Q, K: (1 - np.eye(len(Q))) / (len(Q) - 1), Q=Qs, K=Ks)
    with pytest.raises(CheckFailed, match=re.escape(CHECKPOINT.mistake("no_mask").hint[1:30])):
        check("test_weights_visible", answer_function(MISTAKE_SOURCES["no_mask"]), Q=Qs, K=Ks)
