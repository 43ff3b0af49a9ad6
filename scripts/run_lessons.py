"""Store fresh outputs in the lessons: Restart & Run All, in a fresh kernel, in place.

nbval compares every lesson's stored outputs with a new run, so whenever a lesson, or a
``course_lib`` function whose output a lesson shows (a figure description, a widget's
text, a check's sentence), changes, rerun this and commit the notebooks:

    .venv/bin/python scripts/run_lessons.py                      # every lesson
    .venv/bin/python scripts/run_lessons.py notebooks/04_softmax.ipynb
    .venv/bin/python scripts/run_lessons.py --check              # change nothing; exit 1
                                                                 # if a rerun would

It first brings the navigation up to date (scripts/update_nav.py), then executes each
notebook top to bottom with nbclient in a new ``python3`` kernel of this environment, with
no timing metadata, and stops at the first cell that raises.

What is stored is what the next run stores, byte for byte, so rerunning a lesson changes
nothing in git:

* one stream output per run of printing: the kernel flushes stdout in pieces whose
  boundaries depend on timing, so consecutive stream outputs are joined;
* no widget state: ``metadata.widgets`` (the state of every widget model, under random
  model ids) is dropped, and so is each output's widget view (its random ``model_id``);
  the output keeps its ``text/plain``, the explorer's description in words. A student
  sees that text until the cell runs, then the live widget;
* ``metadata.language_info`` stays as the kernel reports it: JupyterLab writes the
  kernel's version there when it connects, so a lesson stored without it would be marked
  modified (and autosaved) as soon as it is opened;
* a measurement (a cell tagged ``measurement``: lesson 10 times attention on this
  machine) is the one output that may change: ``--check`` compares it as stored. The
  kernels run with one BLAS thread (``OPENBLAS_NUM_THREADS=1``), so that a stored timing
  is the arithmetic's and not a wait for a free core on a busy machine (where the threads
  of a matrix product once made n = 128 take 93 ms and n = 256 70 ms). Nothing else a
  lesson prints may depend on the number of threads: nbval runs the lessons with numpy's
  default threads and compares;
* every exercise's check cell carries nbgrader metadata (a graded test cell, grade id
  ``check-NN-<function>``), so that nbgrader's Validate button checks the exercises
  honestly (see :mod:`course_lib.checks`).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import lesson_index  # noqa: E402  (sibling scripts, importable once scripts/ is on the path)
import update_nav  # noqa: E402

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
CHECK_CALL = re.compile(r"^checks\.(check_\w+)\((\w+)\)$")


def _tags(cell: nbformat.NotebookNode) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def mark_checks(nb: nbformat.NotebookNode, lesson: str) -> None:
    """Give each exercise's check cell the nbgrader metadata of a graded test cell (its grade
    id holds the number of the notebook ``lesson``, a file name ``NN_name.ipynb``)."""
    named = lesson_index.NAME.match(lesson)
    if named is None:
        raise SystemExit(f"{lesson}: a notebook of the course is named NN_name.ipynb")
    for cell in nb.cells:
        if cell.cell_type != "code" or "check" not in _tags(cell):
            continue
        m = CHECK_CALL.match(cell.source.strip())
        if m is None:
            raise SystemExit(f"{lesson}: a check cell must be one call `checks.check_x(f)` "
                             f"(got {cell.source.strip()!r})")
        cell.metadata["nbgrader"] = {
            "grade": True,
            "grade_id": f"check-{named.group(1)}-{m.group(2)}",
            "locked": False,
            "points": 1,
            "schema_version": 3,
            "solution": False,
            "task": False,
        }


def strip_volatile(nb: nbformat.NotebookNode) -> None:
    """Drop what differs between runs: widget state and model ids, and where the kernel
    happened to split a stream of printed text."""
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        outputs: list[nbformat.NotebookNode] = []
        for out in cell.get("outputs", []):
            out.get("data", {}).pop(WIDGET_VIEW, None)
            last = outputs[-1] if outputs else None
            if (out.output_type == "stream" and last is not None
                    and last.output_type == "stream" and last.name == out.name):
                last.text += out.text
            else:
                outputs.append(out)
        if cell.cell_type == "code":
            cell.outputs = outputs


def keep_stored_measurements(fresh: nbformat.NotebookNode,
                             stored: nbformat.NotebookNode) -> None:
    """For ``--check``: a measurement's outputs (cells tagged ``measurement``, e.g. lesson
    10's timings) differ on every run, so they are compared as stored; nbval ignores them
    too, and the cell after each asserts what is deterministic. A plain rerun stores the
    new measurement."""
    old = {c.get("id"): c for c in stored.cells if "measurement" in _tags(c)}
    for cell in fresh.cells:
        if "measurement" in _tags(cell) and cell.get("id") in old:
            cell.outputs = old[cell.get("id")].get("outputs", [])


def execute(path: Path) -> nbformat.NotebookNode:
    """The lesson at ``path`` run top to bottom in a fresh kernel, as it is to be stored."""
    nb = nbformat.read(path, as_version=4)
    mark_checks(nb, path.name)
    client = NotebookClient(nb, timeout=300, kernel_name="python3", record_timing=False,
                            resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    strip_volatile(nb)
    return nb


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path,
                        help="lessons to run (default: every notebook of the course, "
                        "scripts/lesson_index.py)")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 naming each lesson a rerun would change")
    args = parser.parse_args(argv)
    os.environ["OPENBLAS_NUM_THREADS"] = "1"  # the kernels' BLAS: see the docstring
    if not args.check:
        update_nav.run(ROOT)
    paths = args.notebooks or [n.path for n in lesson_index.read_index(ROOT / "notebooks")]
    stale = []
    for path in paths:
        print(f"running {path.name} ...", flush=True)
        fresh = execute(path)
        if args.check:
            keep_stored_measurements(fresh, nbformat.read(path, as_version=4))
        text = nbformat.writes(fresh)
        text += "" if text.endswith("\n") else "\n"  # as nbformat.write ends a file
        if args.check:
            if text != path.read_text(encoding="utf-8"):
                stale.append(path.name)
        else:
            path.write_text(text, encoding="utf-8")
    if stale:
        print("a rerun changes: " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
