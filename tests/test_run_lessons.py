"""scripts/run_lessons.py: stored lessons are what the next run stores, byte for byte."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import lesson_index  # noqa: E402  (scripts, importable once scripts/ is on the path)
import run_lessons  # noqa: E402


def test_strip_volatile_drops_widget_state_and_joins_streams():
    nb = new_notebook()
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    nb.metadata["language_info"] = {"name": "python", "version": "3.11.7"}
    cell = new_code_cell("x")
    cell.outputs = [
        new_output("stream", name="stdout", text="a\n"),
        new_output("stream", name="stdout", text="b\n"),
        new_output("execute_result", data={
            "text/plain": "the description",
            "application/vnd.jupyter.widget-view+json": {"model_id": "f00d", "version_major": 2,
                                                         "version_minor": 0}},
            execution_count=1),
        new_output("stream", name="stderr", text="c\n"),
    ]
    nb.cells = [cell]
    run_lessons.strip_volatile(nb)
    assert "widgets" not in nb.metadata
    assert nb.metadata.language_info == {"name": "python", "version": "3.11.7"}  # as JupyterLab
    assert [o.output_type for o in cell.outputs] == ["stream", "execute_result", "stream"]
    assert cell.outputs[0].text == "a\nb\n"
    assert cell.outputs[1].data == {"text/plain": "the description"}


def test_check_compares_a_measurement_as_stored_and_nothing_else():
    def lesson(timing: str, fact: str) -> nbformat.NotebookNode:
        nb = new_notebook()
        measured = new_code_cell("m = cost.measure_attention()",
                                 metadata={"tags": ["nbval-ignore-output", "measurement"]})
        measured.outputs = [new_output("stream", name="stdout", text=timing)]
        fact_cell = new_code_cell("assert m.table_bytes")
        fact_cell.outputs = [new_output("stream", name="stdout", text=fact)]
        nb.cells = [measured, fact_cell]
        return nb

    stored, fresh = lesson("41.3 ms\n", "slope 2.00\n"), lesson("40.9 ms\n", "slope 2.00\n")
    for a, b in zip(fresh.cells, stored.cells, strict=True):
        a["id"] = b["id"]
    run_lessons.keep_stored_measurements(fresh, stored)
    assert nbformat.writes(fresh) == nbformat.writes(stored)
    fresh = lesson("40.9 ms\n", "slope 1.99\n")  # a deterministic output that changed
    for a, b in zip(fresh.cells, stored.cells, strict=True):
        a["id"] = b["id"]
    run_lessons.keep_stored_measurements(fresh, stored)
    assert fresh.cells[0].outputs[0].text == "41.3 ms\n"
    assert nbformat.writes(fresh) != nbformat.writes(stored)


def test_check_cells_must_be_one_call():
    nb = new_notebook()
    nb.cells = [new_code_cell("x = 1\nchecks.check_softmax(f)",
                              metadata={"tags": ["check"]})]
    with pytest.raises(SystemExit, match="must be one call"):
        run_lessons.mark_checks(nb, "04_softmax.ipynb")


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_rerunning_every_lesson_changes_nothing():
    """`run_lessons.py --check` runs each lesson as the script stores it: no byte differs."""
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "run_lessons.py"), "--check"],
                          capture_output=True, text=True, timeout=840, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.count("running ") == len(lesson_index.read_index(ROOT / "notebooks"))
    nb = nbformat.read(ROOT / "notebooks" / "02_scores.ipynb", as_version=4)
    assert nb.cells  # the lessons were read, not skipped
