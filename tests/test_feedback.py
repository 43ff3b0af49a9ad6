"""course_grading.feedback on hand-made autograded notebooks (the real HTML: tests/grading)."""

from __future__ import annotations

import nbformat
import pytest
from nbformat.notebooknode import from_dict

from course_grading.feedback import FEEDBACK_CSP, ExplainChecks, SafeHTMLExporter, visible_part
from course_quiz.checkpoint_spec import CHECKPOINT

HIDDEN = '''# A hidden check runs here when the quiz is graded.
### BEGIN HIDDEN TESTS
"""Catches a missing 1/sqrt(d_k)."""
check("test_missing_scale", attention_weights, Q=[[0.123456, 0.9]], K=[[0.654321, 0.1]])
### END HIDDEN TESTS'''


def _test_cell(grade_id, source, score, verdict=None, outputs=(), points=1):
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["nbgrader"] = {"grade": True, "solution": False, "grade_id": grade_id,
                                 "points": points, "score": score, "locked": True}
    if verdict is not None:
        cell.metadata["course"] = {"verdict": verdict}
    cell.outputs = [from_dict(o) for o in outputs]
    return cell


WRONG = {"passed": False, "reason": "wrong", "mistake": "missing_scale",
         "message": "The weights look like softmax(Q K^T)."}
TRACEBACK = {"output_type": "error", "ename": "CheckFailed", "evalue": WRONG["message"],
             "traceback": ["CheckFailed: ...", "----> check(Q=[[0.123456, 0.9]])"]}


def _run(*cells, course=None):
    nb = nbformat.v4.new_notebook(cells=list(cells))
    if course is not None:
        nb.metadata["course"] = course
    nb, _ = ExplainChecks().preprocess(nb, {})
    return nb


def _text(cell) -> str:
    return cell.outputs[0]["data"]["text/plain"]


def test_visible_part_drops_hidden_regions():
    assert visible_part(HIDDEN) == "# A hidden check runs here when the quiz is graded."
    assert visible_part("a\n### BEGIN HIDDEN TESTS\nb\n### END HIDDEN TESTS\nc") == "a\nc"
    with pytest.raises(ValueError, match="without"):
        visible_part("### BEGIN HIDDEN TESTS\nx")
    with pytest.raises(ValueError, match="nested"):
        visible_part("### BEGIN HIDDEN TESTS\n### BEGIN HIDDEN TESTS\n")


def test_a_failed_hidden_check_shows_the_graders_words_and_nothing_of_the_check():
    nb = _run(_test_cell("test_missing_scale", HIDDEN, 0.0, WRONG, [TRACEBACK]))
    cell = nb.cells[0]
    assert cell.source == "# A hidden check runs here when the quiz is graded."
    assert len(cell.outputs) == 1
    text = _text(cell)
    assert "test_missing_scale failed (0 / 1 point)" in text
    assert CHECKPOINT.check("test_missing_scale").looks_at in text
    assert "What the grader found: The weights look like softmax(Q K^T)." in text
    html = cell.outputs[0]["data"]["text/html"]
    for secret in ("0.123456", "0.654321", "Traceback", "---->", "check("):
        assert secret not in text and secret not in html


def test_a_passed_check_says_so_and_nothing_else():
    verdict = {"passed": True, "reason": "passed", "mistake": None, "message": "passed"}
    text = _text(_run(_test_cell("test_wrong_axis", HIDDEN, 1.0, verdict)).cells[0])
    assert "passed (1 / 1 point)" in text and "grader found" not in text


def test_without_a_verdict_only_a_visible_checks_exception_class_name_is_kept():
    """Graded without the host's verdicts, a visible check may name the built-in exception
    (its inputs are public); a hidden check never does: its code chose the exception
    knowing the hidden inputs (issue 42)."""
    err = {"output_type": "error", "ename": "RuntimeError", "evalue": "secret 0.123456",
           "traceback": ["----> _secret_expected = ..."]}
    hidden = _text(_run(_test_cell("test_wrong_axis", HIDDEN, 0.0, outputs=[err])).cells[0])
    assert "RuntimeError" not in hidden and "raised" not in hidden
    visible = 'check("test_weights_visible", weights_without_self, Q=Q, K=K)'
    text = _text(_run(_test_cell("test_weights_visible", visible, 0.0, outputs=[err])).cells[0])
    assert "Your code raised RuntimeError" in text
    assert "0.123456" not in text + hidden and "_secret_expected" not in text + hidden
    weird = dict(err, ename="<script>alert(1)</script>")
    text = _text(_run(_test_cell("test_weights_visible", visible, 0.0, outputs=[weird])
                      ).cells[0])
    assert "raised an exception" in text and "script" not in text


def test_a_visible_check_is_replaced_by_its_verdict_too():
    cell = _test_cell("test_attention_weights_visible", 'check("t", f)', 0.0,
                      {**WRONG, "message": "Row 0 of the weights is [0.33, 0.33, 0.33]."},
                      [TRACEBACK])
    out = _run(cell).cells[0].outputs
    assert len(out) == 1 and "Row 0 of the weights is [0.33, 0.33, 0.33]." in _text(
        _run(cell).cells[0])


def test_any_output_quoting_a_hidden_line_is_removed_and_huge_output_is_cut():
    leak = nbformat.v4.new_code_cell("print(In)")
    leak.outputs = [from_dict({"output_type": "stream", "name": "stdout", "text":
                               "...\n" + HIDDEN.splitlines()[3] + "\n..."})]
    big = nbformat.v4.new_code_cell("print('x' * 10**6)")
    big.outputs = [from_dict({"output_type": "stream", "name": "stdout", "text": "x" * 10**6})]
    nb = _run(_test_cell("test_missing_scale", HIDDEN, 1.0), leak, big)
    assert "removed from feedback" in nb.cells[1].outputs[0]["text"]
    assert "0.123456" not in nb.cells[1].outputs[0]["text"]
    assert len(nb.cells[2].outputs[0]["text"]) < 21_000
    assert "output cut: 1,000,000 characters" in nb.cells[2].outputs[0]["text"]


def test_a_stopped_notebook_and_course_lib_use_are_noted_at_the_top():
    nb = _run(_test_cell("test_missing_scale", HIDDEN, 0.0),
              course={"stopped": "the notebook used up its 30 s time budget",
                      "course_lib_used_in": ["attention_weights"]})
    note = nb.cells[0].source
    assert nb.cells[0].cell_type == "markdown"
    assert "30 s time budget" in note and "course_lib" in note
    assert "Note from the grader" not in _run(_test_cell("test_missing_scale", HIDDEN,
                                                         1.0)).cells[0].get("source", "")


def test_every_autograded_check_of_the_quiz_has_words():
    for check in CHECKPOINT.checks:
        assert check.looks_at and check.hint, check.grade_id


def test_feedback_pages_carry_a_policy_that_forbids_every_script():
    cell = nbformat.v4.new_markdown_cell("<script>alert(1)</script>")
    html, _ = SafeHTMLExporter().from_notebook_node(nbformat.v4.new_notebook(cells=[cell]))
    head = html.split("<head", 1)[1]
    assert head.split(">", 1)[1].lstrip().startswith(
        f'<meta http-equiv="Content-Security-Policy" content="{FEEDBACK_CSP}">')
    assert "script-src" not in FEEDBACK_CSP and "default-src 'none'" in FEEDBACK_CSP


def test_the_contents_list_names_each_check():
    """nbgrader's feedback page lists every check as "Test cell" (issue 41): each is named by
    its grade id and what it looks at; an id the spec does not know keeps nbgrader's label."""
    from pathlib import Path

    import nbgrader
    from traitlets.config import Config

    formgrader = Path(nbgrader.__file__).parent / "server_extensions" / "formgrader"
    config = Config()  # what nbgrader's GenerateFeedback gives the exporter
    config.HTMLExporter.template_name = "feedback"
    config.HTMLExporter.extra_template_basedirs = [str(formgrader / "templates")]
    config.HTMLExporter.extra_template_paths = [
        str(formgrader / "static" / "node_modules" / "bootstrap" / "dist" / "css")]
    cells = [_test_cell("test_missing_scale", HIDDEN, 0.0, WRONG),
             _test_cell("test_not_in_the_spec", "assert True", 1.0)]
    exporter = SafeHTMLExporter(config=config)
    page, _ = exporter.from_notebook_node(
        nbformat.v4.new_notebook(cells=cells),
        {"nbgrader": {"notebook": "checkpoint", "score": 1, "max_score": 2, "late_penalty": 0}})
    looks_at = CHECKPOINT.check("test_missing_scale").looks_at
    assert f'<a href="#test_missing_scale">test_missing_scale: {looks_at}</a>' in page
    assert '<a href="#test_not_in_the_spec">Test cell</a>' in page
    assert page.count("Test cell") == 1
