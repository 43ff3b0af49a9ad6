"""What the lessons say must be true: facts a teacher found wrong or misleading (issue 13).

Each test reads the stored lessons (text and outputs), so a lesson or a library sentence
that brings a fixed mistake back fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
LESSONS = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))


def text_of(path: Path) -> str:
    """Every cell's source and every text output of a stored lesson."""
    parts = []
    for cell in nbformat.read(path, as_version=4).cells:
        parts.append(cell.source)
        for out in cell.get("outputs", []):
            parts.append(out.get("text", ""))
            parts.append(out.get("data", {}).get("text/plain", ""))
    return "\n".join(parts)


@pytest.mark.parametrize("path", LESSONS, ids=[p.stem for p in LESSONS])
def test_a_sum_written_out_adds_up(path: Path) -> None:
    """0.25·[1,0] + 0.25·[0,2] + 0.50·[2,2] is [1.25, 1.50], never [1.26, 1.50]."""
    for m in re.finditer(r"((?:\d\.\d\d·\[-?\d\.\d\d, -?\d\.\d\d\](?: \+ )?)+) = "
                         r"\[(-?\d\.\d\d), (-?\d\.\d\d)\]", text_of(path)):
        terms = re.findall(r"(\d\.\d\d)·\[(-?\d\.\d\d), (-?\d\.\d\d)\]", m.group(1))
        x = sum(float(w) * float(a) for w, a, _ in terms)
        y = sum(float(w) * float(b) for w, _, b in terms)
        assert (f"{x:.2f}", f"{y:.2f}") == (m.group(2), m.group(3)), m.group(0)


def test_the_blend_sums_are_checked_somewhere() -> None:
    """The test above must find the worked example's sum, rounded and unrounded."""
    text = text_of(NOTEBOOKS / "06_worked_example.ipynb")
    assert ("0.50·[2.00, 2.00] = [1.25, 1.50] with these rounded weights "
            "(≈ [1.26, 1.50] with the unrounded ones)") in text


def test_02_says_the_diagonal_is_highest_only_because_k_is_q() -> None:
    text = text_of(NOTEBOOKS / "02_scores.ipynb")
    assert "($K = Q$)" in text and "not a law of attention" in text


def test_04_says_why_softmax_and_its_budget_uses_the_scaled_scores() -> None:
    text = text_of(NOTEBOOKS / "04_softmax.ipynb")
    assert "### Why softmax, and not something simpler?" in text
    assert "argmax, cat +0.1: [0. 0. 1.]" in text  # the argmax does not move
    assert "Softmax turns sat's scaled scores 0.71, 0.71, 1.41" in text
    assert "0.21 to the" not in text  # the raw scores' weights, once called attention's


def test_07_gives_the_training_reason_and_shows_renormalising_agrees() -> None:
    nb = nbformat.read(NOTEBOOKS / "07_causal_masking.ipynb", as_version=4)
    text = text_of(NOTEBOOKS / "07_causal_masking.ipynb")
    assert "predict\nthe next token at every position at once" in text
    [cell] = [c for c in nb.cells if c.source.startswith("renormalised = ")]
    assert cell.outputs[0]["data"]["text/plain"] == "True"


def test_03_names_weights_as_weights() -> None:
    from course_lib.widgets import scaling_explorer

    assert "Histogram of each row's largest weight: 256 weights with" in (
        scaling_explorer().description)


# ------------------------------------------------------------------ lesson 03 (issue 31)


def test_03_claims_nothing_about_learning_that_it_does_not_measure() -> None:
    """Lesson 03 measures saturation and gradients, not training: no claim about learning."""
    text = text_of(NOTEBOOKS / "03_scaling.ipynb")
    assert "could hardly learn" not in text
    assert "gradient vanishes" not in text and "gradient → 0" not in text
    assert "frozen" not in text  # "The rows become one-hot and frozen"
    # the training is measured elsewhere, and the lesson says where to run it
    assert "python -m course_lib.training" in text
    assert "a later lesson measures" in text


def test_03_reports_the_query_gradient_beside_the_jacobian_from_its_own_measurement() -> None:
    """The |dw/dq| column is stored, and the text's reading of it matches the numbers."""
    nb = nbformat.read(NOTEBOOKS / "03_scaling.ipynb", as_version=4)
    text = text_of(NOTEBOOKS / "03_scaling.ipynb")
    [table] = [c for c in nb.cells if c.source.startswith("measured = ")]
    out = table.outputs[0]["text"]
    assert "|dw/ds|   |dw/dq|" in out.splitlines()[0]
    rows = {int(line.split()[0]): [float(x) for x in line.replace("|", " ").split()[1:]]
            for line in out.splitlines()[1:] if line.strip()}
    assert sorted(rows) == [2, 8, 32, 128, 512, 4096]
    more = [d for d, r in rows.items() if r[3] > r[7]]  # unscaled |dw/dq| > scaled
    assert more == [2, 8, 32, 128]
    assert "at the sizes of real attention heads (32 to 128) the unscaled query gets *more*" in (
        text)
    assert "only at 512 and 4096" in text
    assert "attention_backward" in text


def test_03_meets_softmax_before_using_it() -> None:
    """Softmax is introduced (a black box, one-line definition) before any cell uses it."""
    nb = nbformat.read(NOTEBOOKS / "03_scaling.ipynb", as_version=4)
    intro = next(i for i, c in enumerate(nb.cells)
                 if c.source.startswith("## 2. The next term, softmax, used here as a black box"))
    assert r"\mathrm{softmax}(x)_j = \frac{e^{x_j}}{\sum_l e^{x_l}}" in nb.cells[intro].source
    for cell in nb.cells[:intro]:
        if cell.cell_type == "code" and "setup" not in cell.metadata.get("tags", []):
            outputs = "".join(o.get("text", "") + o.get("data", {}).get("text/plain", "")
                              for o in cell.outputs)
            assert "softmax" not in cell.source and "weight" not in outputs, cell.source


def test_03_calls_d_k_a_dimension_not_a_length() -> None:
    """Issue 30, error 6: d_k is the dimension of the vectors."""
    text = text_of(NOTEBOOKS / "03_scaling.ipynb")
    assert "length" not in text
    assert "d_k is the dimension of each query vector" in text
