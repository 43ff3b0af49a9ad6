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
