"""What a student wrote reaches formgrader and feedback as text and PNG only."""

from __future__ import annotations

import base64

import nbformat
import pytest
from nbconvert.exporters import HTMLExporter

from course_grading.inert import MakeInert, fence, inert_output

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 20).decode()
PAYLOAD = '<img src=x onerror="fetch(\'/steal\')"><script>alert(1)</script>'


def _out(**kw):
    return nbformat.from_dict(kw)


def test_rich_outputs_are_reduced_to_text_and_real_pngs():
    kept = inert_output(_out(output_type="display_data", metadata={"image/png": {"width": 9}},
                             data={"text/html": PAYLOAD, "application/javascript": "alert(1)",
                                   "image/svg+xml": "<svg onload=alert(1)/>",
                                   "text/plain": "a table", "image/png": PNG}))
    assert kept[0]["data"] == {"text/plain": "a table", "image/png": PNG}
    assert kept[0]["metadata"] == {}
    assert "application/javascript" in kept[1]["text"] and "text/html" in kept[1]["text"]
    fake = base64.b64encode(b"<svg onload=alert(1)>").decode()
    assert inert_output(_out(output_type="display_data", metadata={},
                             data={"image/png": fake}))[0]["text"].startswith("[not shown")
    weird = inert_output(_out(output_type="widget", data={}))
    assert weird[0]["output_type"] == "stream"


@pytest.mark.parametrize("text", [PAYLOAD, "``` \n" + PAYLOAD, "[x](javascript:alert(1))"])
def test_a_fenced_text_renders_as_escaped_plain_text(text):
    html, _ = HTMLExporter().from_notebook_node(
        nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(fence(text))]))
    body = html.split("<body", 1)[1]
    assert "<script>alert" not in body and "<img src=x" not in body
    assert 'href="javascript' not in body


def test_make_inert_keeps_instructor_markdown_and_fences_the_rest(tmp_path):
    source = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Question\n$x$")])
    (tmp_path / "source" / "a1").mkdir(parents=True)
    nbformat.write(source, tmp_path / "source" / "a1" / "nb.ipynb")
    student = nbformat.v4.new_markdown_cell(PAYLOAD)
    student.metadata["nbgrader"] = {"grade_id": "written", "solution": True, "grade": True,
                                    "points": 2, "locked": False, "schema_version": 3}
    student["attachments"] = {"x.png": {"image/png": PNG}}
    raw = nbformat.v4.new_raw_cell(PAYLOAD, metadata={"raw_mimetype": "text/html"})
    code = nbformat.v4.new_code_cell("x", metadata={"jupyter": {"source_hidden": True}})
    code.outputs = [_out(output_type="display_data", metadata={}, data={"text/html": PAYLOAD})]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Question\n$x$"),
                                         student, raw, code])
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    nb.metadata["course"] = {"graded_outside_kernel": True}  # the student's own claim
    from traitlets.config import Config

    config = Config()
    config.CourseDirectory.root = str(tmp_path)
    nb, _ = MakeInert(config=config).preprocess(
        nb, {"nbgrader": {"assignment": "a1", "notebook": "nb"}, "unique_key": "nb"})
    assert nb.cells[0].source == "# Question\n$x$"  # the instructor's own text
    assert nb.cells[1].source == fence(PAYLOAD) and "attachments" not in nb.cells[1]
    assert nb.cells[1].metadata["nbgrader"]["grade_id"] == "written"
    assert nb.cells[2].cell_type == "markdown" and nb.cells[2].source == fence(PAYLOAD)
    assert nb.cells[3].metadata == {}
    assert [o.output_type for o in nb.cells[3].outputs] == ["stream"]  # only the note
    assert "onerror" not in nb.cells[3].outputs[0]["text"]
    assert set(nb.metadata) <= {"kernelspec", "language_info"}
    html, _ = HTMLExporter().from_notebook_node(nb)
    assert "<script>alert" not in html and "<img src=x" not in html  # only as &lt;img
