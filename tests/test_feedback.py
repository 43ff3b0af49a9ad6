"""course_grading.feedback on hand-made autograded notebooks (the real HTML: tests/grading)."""

from __future__ import annotations

import nbformat
import pytest
from nbformat.notebooknode import from_dict

from course_grading.feedback import CHECKS, ExplainChecks, visible_part
from course_grading.variants import GRADE_IDS

HIDDEN = '''# A hidden check runs here when the quiz is graded.
### BEGIN HIDDEN TESTS
"""Catches a missing 1/sqrt(d_k)."""
_secret_expected = course_lib.attention_weights(_Q, _K)
assert np.allclose(attention_weights(_Q, _K), _secret_expected), "looks unscaled"
### END HIDDEN TESTS'''


def _test_cell(grade_id, source, score, points=1, outputs=()):
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["nbgrader"] = {
        "grade": True,
        "solution": False,
        "grade_id": grade_id,
        "points": points,
        "score": score,
        "locked": True,
    }
    cell.outputs = [from_dict(o) for o in outputs]
    return cell


TRACEBACK = {
    "output_type": "error",
    "ename": "AssertionError",
    "evalue": "looks unscaled",
    "traceback": [
        "AssertionError  Traceback",
        "----> 4 assert np.allclose(attention_weights(_Q, _K), _secret_expected)",
        "AssertionError: looks unscaled",
    ],
}


def _run(*cells):
    nb = nbformat.v4.new_notebook(cells=list(cells))
    nb, _ = ExplainChecks().preprocess(nb, {})
    return nb


def test_visible_part_drops_hidden_regions():
    assert visible_part(HIDDEN) == "# A hidden check runs here when the quiz is graded."
    assert visible_part("a\n### BEGIN HIDDEN TESTS\nb\n### END HIDDEN TESTS\nc") == "a\nc"
    with pytest.raises(ValueError, match="without"):
        visible_part("### BEGIN HIDDEN TESTS\nx")
    with pytest.raises(ValueError, match="nested"):
        visible_part("### BEGIN HIDDEN TESTS\n### BEGIN HIDDEN TESTS\n")


def test_a_failed_hidden_check_is_explained_in_words_without_source_or_traceback():
    nb = _run(_test_cell("test_missing_scale", HIDDEN, 0.0, outputs=[TRACEBACK]))
    cell = nb.cells[0]
    assert cell.source == "# A hidden check runs here when the quiz is graded."
    assert len(cell.outputs) == 1
    text = cell.outputs[0]["data"]["text/plain"]
    assert "test_missing_scale failed (0 / 1 point)" in text
    assert CHECKS["test_missing_scale"][1] in text
    html = cell.outputs[0]["data"]["text/html"]
    for secret in ("_secret_expected", "Traceback", "looks unscaled", "course_lib"):
        assert secret not in text and secret not in html


def test_a_passed_hidden_check_says_so():
    text = (
        _run(_test_cell("test_wrong_axis", HIDDEN, 1.0)).cells[0].outputs[0]["data"]["text/plain"]
    )
    assert "passed (1 / 1 point)" in text and "usually means" not in text


def test_only_the_class_name_of_an_exception_from_student_code_is_kept():
    err = {
        "output_type": "error",
        "ename": "RuntimeError",
        "evalue": "I ran out of time",
        "traceback": ["----> _secret_expected = ..."],
    }
    text = (
        _run(_test_cell("test_wrong_axis", HIDDEN, 0.0, outputs=[err]))
        .cells[0]
        .outputs[0]["data"]["text/plain"]
    )
    assert "Your code raised RuntimeError" in text
    assert "ran out of time" not in text and "_secret_expected" not in text
    weird = dict(err, ename="<script>alert(1)</script>")
    text = (
        _run(_test_cell("test_wrong_axis", HIDDEN, 0.0, outputs=[weird]))
        .cells[0]
        .outputs[0]["data"]["text/plain"]
    )
    assert "raised an exception" in text and "script" not in text


def test_visible_checks_keep_their_output_after_the_explanation():
    cell = _test_cell(
        "test_attention_weights_visible",
        '"""Visible."""\nassert False',
        0.0,
        outputs=[dict(TRACEBACK, evalue="visible message")],
    )
    out = _run(cell).cells[0].outputs
    assert "failed" in out[0]["data"]["text/plain"] and out[1]["evalue"] == "visible message"


def test_any_output_quoting_a_hidden_line_is_removed_and_huge_output_is_cut():
    leak = nbformat.v4.new_code_cell("print(In)")
    leak.outputs = [
        from_dict(
            {
                "output_type": "stream",
                "name": "stdout",
                "text": "...\n_secret_expected = course_lib.attention_weights(_Q, _K)\n...",
            }
        )
    ]
    big = nbformat.v4.new_code_cell("print('x' * 10**6)")
    big.outputs = [from_dict({"output_type": "stream", "name": "stdout", "text": "x" * 10**6})]
    nb = _run(_test_cell("test_missing_scale", HIDDEN, 1.0), leak, big)
    assert "removed from feedback" in nb.cells[1].outputs[0]["text"]
    assert "_secret_expected" not in nb.cells[1].outputs[0]["text"]
    assert len(nb.cells[2].outputs[0]["text"]) < 21_000
    assert "output cut: 1,000,000 characters" in nb.cells[2].outputs[0]["text"]


def test_every_autograded_check_of_the_quiz_has_words():
    assert set(CHECKS) == {g for g in GRADE_IDS if g.startswith("test_")}
