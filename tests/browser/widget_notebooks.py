"""Small notebooks the browser tests and the latency benchmark write for themselves.

``widgets_ok.ipynb`` has an IntSlider whose callback prints into an Output, and an
``interact`` dropdown that redraws a matplotlib figure. ``widgets_broken.ipynb`` is the same
with the slider's callback wired to a misspelt trait name, the kind of bug a lesson can ship:
the slider moves, nothing else does. The tests prove that they catch it.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

SETUP = """import ipywidgets as widgets
import matplotlib.pyplot as plt
from IPython.display import display"""

SLIDER = '''slider = widgets.IntSlider(value=3, min=0, max=10, description="n")
out = widgets.Output()


def show(change=None):
    out.clear_output(wait=True)
    with out:
        print(f"n squared is {{slider.value ** 2}}")


slider.observe(show, names="{trait}")
show()
display(slider, out)'''

DROPDOWN = '''@widgets.interact(colour=["red", "green", "blue"])
def bar(colour="red"):
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.bar([0, 1, 2], [1, 2, 3], color=colour)
    ax.set_title(colour)
    plt.show()'''


def _notebook(trait: str) -> nbformat.NotebookNode:
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)",
                                 "language": "python"}
    nb.cells = [
        new_markdown_cell("# Widget self-test\nA slider with a callback, an interact dropdown."),
        new_code_cell(SETUP),
        new_code_cell(SLIDER.format(trait=trait)),
        new_code_cell(DROPDOWN),
    ]
    return nb


def write_selftest_notebooks(folder: Path) -> dict[str, Path]:
    """Write the working and the broken self-test notebook into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = {"ok": folder / "widgets_ok.ipynb", "broken": folder / "widgets_broken.ipynb"}
    nbformat.write(_notebook("value"), paths["ok"])
    nbformat.write(_notebook("valeu"), paths["broken"])
    return paths
