"""Store fresh outputs in the lessons: Restart & Run All, in a fresh kernel, in place.

nbval compares every lesson's stored outputs with a new run, so whenever a lesson, or a
``course_lib`` function whose output a lesson shows (a figure description, a widget's
text, a check's sentence), changes, rerun this and commit the notebooks:

    .venv/bin/python scripts/run_lessons.py                      # every lesson
    .venv/bin/python scripts/run_lessons.py notebooks/04_softmax.ipynb

It first brings the navigation up to date (scripts/update_nav.py), then executes each
notebook top to bottom with nbclient in a new ``python3`` kernel of this environment, with
no timing metadata, and stops at the first cell that raises.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import update_nav  # noqa: E402  (a sibling script, importable once scripts/ is on the path)


def run(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=300, kernel_name="python3", record_timing=False,
                            resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    nbformat.write(nb, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path,
                        help="lessons to run (default: every notebooks/NN_*.ipynb)")
    args = parser.parse_args(argv)
    update_nav.run(ROOT)
    paths = args.notebooks or sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    for path in paths:
        print(f"running {path.name} ...", flush=True)
        run(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
