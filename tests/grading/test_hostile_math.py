"""A student's math reaches formgrader and feedback as typed, whatever it holds.

:class:`course_grading.math_markup.RenderMath` turns ``$...$`` of markdown cells into MathML
in formgrader's and the feedback's pages. A student's markdown reaches those pages only as a
fenced block (:mod:`course_grading.inert`), which the renderer skips; so a formula of theirs
that latex2mathml would copy into ``<mtext>`` (where the page's markdown then makes a
``javascript:`` link of ``[x](...)``), a formula nested 10,000 deep, or 1 MB of ``$x$``
stays text, and costs the grader no more than any other long answer.
"""

from __future__ import annotations

import time
from pathlib import Path

import nbformat
import pytest

from course_grading.math_markup import RenderMath
from course_grading.pipeline import ASSIGNMENT, copy_course, open_api, place_submission
from course_grading.submissions import made_up_submission

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
LINK = r"$\text{[x](javascript:alert(1))}$ $\text{![i](http://evil.invalid/x.png)}$"
HOSTILE = "\n\n".join([
    LINK,
    r"$$\href{javascript:alert(1)}{x}$$ $\style{color:red}{x}$ $\text{<script>}$",
    "$" + "{" * 10_000 + "x" + "}" * 10_000 + "$",
    # 60 kB of formulas, twice: what fits under SubmissionShape.max_source_characters (200,000;
    # a 1 MB cell is refused as "too large a notebook" before anything renders it,
    # tests/sandbox/test_submission_shape.py)
    "$x$ " * 15_000,
    "$$ unclosed $ and ` $x$ ` and &lt;script&gt;",
])


def test_a_students_math_stays_text_in_feedback_and_formgrader(tmp_path):
    course = copy_course(ROOT / "quiz", tmp_path / "quiz")
    api = open_api(course, **{"ManualGradesFirst.allow_pending": True})
    assert api.generate_assignment(ASSIGNMENT)["success"]
    files = made_up_submission(course, "correct")
    nb = nbformat.reads(files["checkpoint.ipynb"].decode(), as_version=4)
    written = next(c for c in nb.cells
                   if c.metadata.get("nbgrader", {}).get("grade_id") == "written_shift_or_scale")
    written.source = HOSTILE
    nb.cells.append(nbformat.v4.new_markdown_cell(HOSTILE))  # a cell of the student's own
    place_submission(course, "mal", {**files, "checkpoint.ipynb": nbformat.writes(nb).encode()})
    assert api.autograde(ASSIGNMENT, "mal")["success"]

    start = time.perf_counter()
    assert api.generate_feedback(ASSIGNMENT, "mal")["success"]
    seconds = time.perf_counter() - start
    page = (course / "feedback" / "mal" / ASSIGNMENT / "checkpoint.html").read_text()
    assert 'href="javascript' not in page and "[x](javascript:alert(1))" in page
    assert 'src="http://evil' not in page and "<mtext>[x]" not in page
    assert "<math" in page  # the quiz's own math is MathML: the renderer did run
    assert "<script>" not in page.split("</head>", 1)[1]
    assert seconds < 60, f"feedback of one notebook took {seconds:.1f} s"

    # formgrader renders the autograded notebook through the same preprocessor
    graded = nbformat.read(course / "autograded" / "mal" / ASSIGNMENT / "checkpoint.ipynb", 4)
    start = time.perf_counter()
    rendered, _ = RenderMath().preprocess(graded, {})
    seconds = time.perf_counter() - start
    students = [c.source for c in rendered.cells if "unclosed" in c.source]
    assert len(students) == 2 and all(s.startswith("```") and "<math" not in s
                                      for s in students)
    assert seconds < 1, f"RenderMath on the student's fenced cells took {seconds:.2f} s"
