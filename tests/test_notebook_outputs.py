"""Figures and explorers as a notebook stores them, checked with strict nbval.

A small notebook shows a figure and an explorer and prints an explorer's description after
setting a control in code (the pattern the lessons use). It is executed in a real kernel,
saved with its outputs, then run again under ``pytest --nbval`` (strict): the stored outputs
must match a fresh run, and a changed figure must make nbval fail.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from course_lib.explore import plots

pytestmark = pytest.mark.slow  # starts Jupyter kernels (about 30 s in all)

HERE = Path(__file__).parent
SANITIZE = HERE / "nbval_sanitize.cfg"

CELLS = [
    "from course_lib import attention_weights, the_cat_sat\n"
    "from course_lib.explore.plots import attention_heatmap, blend_triangle\n"
    "from course_lib.explore.widgets import softmax_budget\n"
    "ex = the_cat_sat()",
    "attention_heatmap(attention_weights(ex.Q, ex.K), ex.tokens)",
    "blend_triangle([0.25, 0.25, 0.5], ex.V, ex.tokens, query='sat')",
    "budget = softmax_budget()\nbudget",
    "print(budget.set(sat=3.0))",
]


def run_nbval(path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    (path.parent / "pytest.ini").write_text("[pytest]\n")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--nbval", str(path),
         *extra],
        cwd=path.parent, capture_output=True, text=True, timeout=300,
    )


def test_sanitize_file_is_the_documented_one():
    assert SANITIZE.read_text() == plots.NBVAL_SANITIZE


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in CELLS]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    path = tmp_path_factory.mktemp("nb") / "figures.ipynb"
    nbformat.write(nb, path)
    return path


def test_stored_outputs_carry_the_descriptions(executed: Path):
    nb = nbformat.read(executed, as_version=4)
    heatmap = nb.cells[1].outputs[0]["data"]
    assert heatmap["text/plain"].startswith("A 3 by 3 heatmap of attention weights.")
    assert 'alt="A 3 by 3 heatmap' in heatmap["text/html"]
    assert "image/png" not in heatmap  # the PNG is only inside the <img>, once
    widget = nb.cells[3].outputs[0]["data"]
    assert "application/vnd.jupyter.widget-view+json" in widget
    assert widget["text/plain"].startswith("Softmax turns sat's scaled scores 0.71, 0.71, 1.41")
    assert nb.cells[4].outputs[0]["text"].startswith(
        "Softmax turns sat's scaled scores 0.71, 0.71, 3.00")
    assert not any(o.get("name") == "stderr" for c in nb.cells for o in c.outputs)


def test_strict_nbval_passes_on_a_fresh_run(executed: Path):
    for extra in ((), ("--nbval-sanitize-with", str(SANITIZE))):
        result = run_nbval(executed, *extra)
        assert result.returncode == 0, result.stdout[-3000:]
        assert "5 passed" in result.stdout


def test_strict_nbval_notices_a_changed_figure(executed: Path, tmp_path: Path):
    nb = nbformat.read(executed, as_version=4)
    out = nb.cells[1].outputs[0]["data"]
    # pretend the stored figure showed other numbers: its description differs
    out["text/plain"] = out["text/plain"].replace("0.50", "0.60")
    out["text/html"] = out["text/html"].replace("0.50", "0.60")
    changed = tmp_path / "changed.ipynb"
    nbformat.write(nb, changed)
    result = run_nbval(changed, "--nbval-sanitize-with", str(SANITIZE))
    assert result.returncode != 0
    assert "1 failed, 4 passed" in result.stdout
