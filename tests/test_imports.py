"""The packages' imports form no circle, and each package imports only those below it.

Every ``import`` statement of the course's packages counts, those inside functions (imported
on first use) and under ``if TYPE_CHECKING`` too: a circle that only a lazy import closes is
still a circle a reader has to untangle (``course_lib/checks.py`` and the four topic check
modules once imported each other so). The layers, from the bottom:

- ``course_lib``, the students' library; in it, the attention maths at the top
  (``course_lib/*.py``) import none of its folders (``checks/``, ``explore/``,
  ``experiments/``, ``real_model/``, ``tiny_gpt/``), which build on them;
- ``course_quiz``, the quizzes students have, on ``course_lib``;
- ``course_exchange`` and ``course_site``; ``course_grading`` on ``course_quiz`` and
  ``course_lib``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("course_lib", "course_quiz", "course_grading", "course_exchange", "course_site")

#: What each package may import of the others (itself always).
MAY_IMPORT = {
    "course_lib": set(),
    "course_quiz": {"course_lib"},
    "course_exchange": set(),
    "course_site": set(),
    "course_grading": {"course_lib", "course_quiz", "course_exchange"},
}
#: The folders of course_lib that the maths at its top never import.
LIBRARY_FOLDERS = ("checks", "explore", "experiments", "real_model", "tiny_gpt")


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(root: Path, packages: Iterable[str]) -> dict[str, Path]:
    """Every module of ``packages`` under ``root``: dotted name to file."""
    return {module_name(p, root): p for package in packages
            for p in sorted((root / package).rglob("*.py")) if "__pycache__" not in p.parts}


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The modules of ``known`` that the module ``name`` (its file ``path``) imports,
    anywhere in it. ``from p import x`` imports ``p.x`` where that is a module, else ``p``."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            for alias in node.names:
                sub = f"{origin}.{alias.name}"
                found.add(sub if sub in known else origin)
    return {m for m in found if m in known and m != name}


def graph(root: Path, packages: Iterable[str] = PACKAGES) -> dict[str, set[str]]:
    found = modules(root, packages)
    known = set(found)
    return {name: imports(name, path, known) for name, path in found.items()}


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(found)


def test_no_circle_of_imports() -> None:
    found = circles(graph(ROOT))
    assert found == [], "these modules import each other in a circle: " + "; ".join(
        " <-> ".join(group) for group in found)


def test_each_package_imports_only_those_below_it() -> None:
    wrong = sorted(f"{a} imports {b}" for a, targets in graph(ROOT).items() for b in targets
                   if b.split(".")[0] != a.split(".")[0]
                   and b.split(".")[0] not in MAY_IMPORT[a.split(".")[0]])
    assert wrong == []


def test_the_maths_at_the_top_of_the_library_import_none_of_its_folders() -> None:
    folders = tuple(f"course_lib.{f}" for f in LIBRARY_FOLDERS)
    top = {name: targets for name, targets in graph(ROOT, ["course_lib"]).items()
           if name.count(".") <= 1 and not name.startswith(folders)}
    assert "course_lib.attention" in top and "course_lib.explore" not in top
    wrong = sorted(f"{a} imports {b}" for a, targets in top.items() for b in targets
                   if b.startswith(folders))
    assert wrong == []


# ------------------------------------------------------------------ the finder finds them


def _package(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.mark.parametrize("files, circle", [
    # the shape course_lib/checks.py once had: a lazy import back from the hub
    ({"pkg/__init__.py": "", "pkg/checks.py": "def f():\n    from . import topic\n",
      "pkg/topic.py": "from .checks import f\n"}, ["pkg.checks", "pkg.topic"]),
    ({"pkg/__init__.py": "", "pkg/a.py": "import pkg.b\n", "pkg/b.py": "from pkg import c\n",
      "pkg/c.py": "from .a import x\n"}, ["pkg.a", "pkg.b", "pkg.c"]),
    ({"pkg/__init__.py": "", "pkg/sub/__init__.py": "from .x import y\n",
      "pkg/sub/x.py": "from ..z import w\n", "pkg/z.py": "from .sub.x import y\n"},
     ["pkg.sub.x", "pkg.z"]),
    ({"pkg/__init__.py": "from .a import x\n", "pkg/a.py": "from .b import y\n",
      "pkg/b.py": "import os\n"}, None),
])
def test_a_circle_is_found_wherever_it_is_closed(tmp_path: Path, files: dict[str, str],
                                                  circle: list[str] | None) -> None:
    root = _package(tmp_path, files)
    assert circles(graph(root, ["pkg"])) == ([circle] if circle else [])
