"""The graders meet jupyter_client and nbclient at their public API only.

The sandbox once held on through jupyter_client's private methods (``_async_launch_kernel``,
``_async_kill_kernel``, ...), so that each upgrade could break grading. These tests fail when
a class that either grader uses (``nbgrader autograde`` with the course's config, and the
engine, ``course_grading.parallel``) overrides a private method or attribute of a
jupyter_client or nbclient class (or of nbconvert's ExecutePreprocessor, an nbclient client
that nbgrader's Execute extends), or when course_grading's code reads, sets or calls a private
attribute of theirs, unless docs/development.md lists it (with why and the upstream issue).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
import warnings
from abc import ABCMeta
from functools import cache
from pathlib import Path

from traitlets import HasTraits
from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

ROOT = Path(__file__).resolve().parents[1]
#: nbconvert too: its ExecutePreprocessor, which nbgrader's Execute extends, is an nbclient
#: NotebookClient, so its private names are on the same objects.
LIBRARIES = ("jupyter_client", "nbclient", "nbconvert")
DOC = ROOT / "docs" / "development.md"
LIST_TITLE = "Private methods of jupyter_client or nbclient that the graders still override"

#: Names every traitlets class and abstract base class gets from its metaclass: no
#: override of anything.
_BOOKKEEPING = set(vars(type("Probe", (HasTraits,), {}))) | set(vars(ABCMeta("Probe", (), {})))


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _from_library(cls: type) -> bool:
    return cls.__module__.split(".")[0] in LIBRARIES


def _ours(cls: type) -> bool:
    return cls.__module__.split(".")[0] == "course_grading"


def graders_classes(config: Config) -> set[type]:
    """The course's classes that grading with ``config`` runs: its preprocessors, their
    kernel manager, and that manager's provisioner (made, never started)."""
    from nbgrader.converters.autograde import Autograde

    found: set[type] = set()
    chain = config.Autograde.get("autograde_preprocessors") or \
        Autograde.class_traits()["autograde_preprocessors"].default()
    for pp in chain:
        if isinstance(pp, str):
            module, _, name = pp.rpartition(".")
            pp = getattr(importlib.import_module(module), name)
        if not _ours(pp):
            continue
        found.add(pp)
        manager_class = getattr(pp(config=config), "kernel_manager_class", None)
        if manager_class is None:  # a preprocessor that runs no kernel
            continue
        km = manager_class(kernel_name="python3", config=config)
        found.update(c for c in (manager_class, type(km.provisioner)) if _ours(c))
    return found


def private_overrides(cls: type) -> set[str]:
    """``Class._name`` for each private member of a jupyter_client or nbclient class in
    ``cls``'s ancestry that a course_grading class in it defines again."""
    ours = [c for c in cls.__mro__ if _ours(c)]
    theirs = [c for c in cls.__mro__ if _from_library(c)]
    found = set()
    for klass in ours:
        for name in vars(klass):
            if _private(name) and name not in _BOOKKEEPING and \
                    any(name in vars(base) for base in theirs):
                found.add(f"{klass.__name__}.{name}")
    return found


@cache
def library_private_names() -> frozenset[str]:
    """Every private name a jupyter_client or nbclient class defines or sets on itself."""
    names: set[str] = set()
    for library in LIBRARIES:
        package = importlib.import_module(library)
        for info in pkgutil.walk_packages(package.__path__, library + "."):
            if info.name.endswith(".__main__"):  # runs a command line when imported
                continue
            try:
                with warnings.catch_warnings():  # modules kept only to say they moved
                    warnings.simplefilter("ignore")
                    module = importlib.import_module(info.name)
                source = inspect.getsource(module)
            except (ImportError, OSError, TypeError):
                continue  # optional parts (e.g. Windows-only) that do not import here
            for obj in vars(module).values():
                if inspect.isclass(obj) and obj.__module__ == module.__name__:
                    names.update(n for n in vars(obj) if _private(n))
            for node in ast.walk(ast.parse(source)):
                if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                        and node.value.id == "self" and _private(node.attr):
                    names.add(node.attr)
    return frozenset(names - _BOOKKEEPING)


def private_uses(path: Path) -> set[str]:
    """``file:line name`` for each use, in ``path``, of a private name of jupyter_client or
    nbclient on an object that is not a module (``os._exit`` is no library's)."""
    tree = ast.parse(path.read_text())
    modules = {alias.asname or alias.name.split(".")[0]
               for node in ast.walk(tree) if isinstance(node, ast.Import)
               for alias in node.names}
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in library_private_names():
            if isinstance(node.value, ast.Name) and node.value.id in modules:
                continue
            found.add(f"{path.relative_to(ROOT)}:{node.lineno} {node.attr}")
    return found


def listed_exceptions() -> dict[str, str]:
    """``Class._name`` -> its line, from the list in docs/development.md."""
    text = DOC.read_text()
    assert LIST_TITLE in text, f"docs/development.md has no list titled {LIST_TITLE!r}"
    after = text.split(LIST_TITLE, 1)[1]
    lines = []
    for line in after.splitlines()[1:]:
        if line.startswith("- "):
            lines.append(line)
        elif lines and line.strip() and not line.startswith("  "):
            break
    listed = {}
    for line in lines:
        listed.update({name: line for name in re.findall(r"`(\w+\._\w+)`", line)})
    return listed


def course_configs() -> dict[str, Config]:
    """The configs the two graders run with: ``nbgrader autograde`` in quiz/ (its
    nbgrader_config.py) and the engine's (the same file, then its own settings)."""
    from course_grading.parallel import _load_config

    quiz = ROOT / "quiz"
    plain = PyFileConfigLoader("nbgrader_config.py", path=str(quiz)).load_config()
    return {"nbgrader autograde": plain, "engine": _load_config(quiz, False)}


def test_the_graders_override_no_private_method_of_jupyter_client_or_nbclient():
    listed = listed_exceptions()
    for grader, config in course_configs().items():
        classes = graders_classes(config)
        found = set().union(*(private_overrides(c) for c in classes))
        unlisted = sorted(found - set(listed))
        assert not unlisted, (
            f"{grader}: {unlisted} override private members of {' or '.join(LIBRARIES)}; "
            "use their public API (a KernelProvisioner, nbclient's public methods and hooks), "
            f"or list each under {LIST_TITLE!r} in docs/development.md with why and the "
            "upstream issue")
        names = {c.__name__ for c in classes}  # and the checks looked where grading runs
        assert {"SandboxKernelManager", "SandboxProvisioner", "DecideOnHost"} <= names, (
            f"{grader} grades with {sorted(names)}")


def test_course_grading_reaches_into_no_private_attribute_of_jupyter_client_or_nbclient():
    listed = {name.split(".")[1] for name in listed_exceptions()}
    uses = set().union(*(private_uses(p) for p in sorted((ROOT / "course_grading").rglob(
        "*.py"))))
    unlisted = sorted(u for u in uses if u.split()[1] not in listed)
    assert not unlisted, (f"course_grading uses private names of {' or '.join(LIBRARIES)}: "
                          f"{unlisted}")


def test_each_listed_exception_is_still_needed_and_names_its_upstream_issue():
    classes = set().union(*(graders_classes(c) for c in course_configs().values()))
    found = set().union(*(private_overrides(c) for c in classes))
    for name, line in listed_exceptions().items():
        assert name in found, f"docs/development.md lists {name}, which nothing overrides now"
        assert re.search(r"https://github\.com/jupyter/(jupyter_client|nbclient|nbconvert)/"
                         r"(issues|pull)/\d+", line), f"{name}: no upstream issue in {line!r}"


def test_the_checks_see_what_the_old_sandbox_did():
    """The checks above would have caught the sandbox as it was (kernel manager methods
    overridden, a client's private flag set, a private method called)."""
    from jupyter_client.manager import AsyncKernelManager

    class OldStyle(AsyncKernelManager):
        async def _async_launch_kernel(self, kernel_cmd, **kw):
            return None

    OldStyle.__module__ = "course_grading.sandbox"  # as if it were the course's
    assert private_overrides(OldStyle) == {"OldStyle._async_launch_kernel"}
    assert {"_created_context", "_reconcile_connection_info", "_async_wait",
            "_async_poll_for_reply", "_check_assign_resources"} <= library_private_names()
