"""Feedback that says in words which check failed, and never shows a hidden test.

Plain ``nbgrader generate_feedback`` renders the autograded notebook as it is: the full
source of every hidden test and the traceback of every failed one (nbgrader issues #917
and #1363). :class:`ExplainChecks` is an nbgrader preprocessor that runs in
``generate_feedback`` after nbgrader's ``GetGrades`` (``quiz/nbgrader_config.py`` sets
``GenerateFeedback.preprocessors``). For every test cell it

* puts a short verdict first: passed or failed, the points, what the check looks at and,
  if it failed, what that usually means (from :data:`CHECKS`, or the cell's docstring);
* for a cell with hidden tests, shows only the part the student saw in the release and
  replaces its outputs (assertion messages, tracebacks, anything printed) by that verdict;
  if the student's code raised, only the exception's class name is kept;
* in every cell, removes an output that quotes a line of a hidden test (a student's code
  can print ``In`` or inspect the caller) and shortens huge outputs.

Visible test cells keep their outputs: their source is in the student's notebook anyway.

Examples
--------
>>> import nbformat
>>> cell = nbformat.v4.new_code_cell(
...     "# visible\\n### BEGIN HIDDEN TESTS\\nassert x == 3\\n### END HIDDEN TESTS"
... )
>>> visible_part(cell.source)
'# visible'
"""

from __future__ import annotations

import html
import re

from nbconvert.exporters.exporter import ResourcesDict
from nbformat.notebooknode import NotebookNode, from_dict
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Integer, Unicode

__all__ = ["CHECKS", "ExplainChecks", "hidden_lines", "visible_part"]

#: grade id -> (what the check looks at, what a failure usually means). In words only:
#: nothing here gives away a hidden input, expectation or answer.
CHECKS: dict[str, tuple[str, str]] = {
    "test_attention_weights_visible": (
        "attention_weights on the worked example: the shape, rows summing to 1, the weights",
        "compare your weights with the worked example in the lesson, row by row",
    ),
    "test_missing_scale": (
        "whether attention_weights divides the scores by sqrt(d_k)",
        "the weights look like softmax(Q K^T) without the division by sqrt(d_k)",
    ),
    "test_wrong_axis": (
        "whether the softmax is taken over each row, so that each query's weights sum to 1",
        "the softmax seems to run over the wrong axis (over the queries, not the keys)",
    ),
    "test_naive_exp_overflow": (
        "whether attention_weights still works when the scores are very large",
        "exp overflowed: subtract each row's maximum before exponentiating (softmax does "
        "not change, and exp stays finite)",
    ),
    "test_dk_from_wrong_axis": (
        "whether d_k is the length of each query and key vector",
        "d_k seems to come from the wrong axis: it is Q.shape[-1], not the number of tokens",
    ),
    "test_sat_output": (
        "the attention output for 'sat' in the worked example",
        "recompute the third row of softmax(QK^T / sqrt(d_k)) V for the worked example",
    ),
    "test_mc_why_scale": (
        "your answer to 'why divide by sqrt(d_k)?'",
        "not the right option: reread what happens to softmax when scores grow with d_k",
    ),
    "test_mc_causal_mask": (
        "your answer to 'what does a causal mask change?'",
        "not the right option: reread what a masked row of weights sums to",
    ),
}

_CLASS_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]{0,80}$")


def visible_part(
    source: str, begin: str = "BEGIN HIDDEN TESTS", end: str = "END HIDDEN TESTS"
) -> str:
    """The source of a test cell without its hidden regions (what students were given).

    Parameters
    ----------
    source : str
        The cell's source, hidden regions included.
    begin, end : str
        nbgrader's delimiters (``ClearHiddenTests.begin_test_delimeter`` and
        ``end_test_delimeter``).

    Raises
    ------
    ValueError
        If a hidden region is not closed or is nested.
    """
    kept, inside = [], False
    for line in source.split("\n"):
        if begin in line:
            if inside:
                raise ValueError(f"nested {begin!r} in a test cell:\n{source}")
            inside = True
        elif end in line:
            inside = False
        elif not inside:
            kept.append(line)
    if inside:
        raise ValueError(f"{begin!r} without {end!r} in a test cell:\n{source}")
    return "\n".join(kept).strip("\n")


def _hidden_lines(source: str, begin: str, end: str) -> list[str]:
    lines, inside = [], False
    for line in source.split("\n"):
        if begin in line:
            inside = True
        elif end in line:
            inside = False
        elif inside:
            lines.append(line.strip())
    return lines


def hidden_lines(
    nb: NotebookNode,
    begin: str = "BEGIN HIDDEN TESTS",
    end: str = "END HIDDEN TESTS",
    min_length: int = 12,
) -> list[str]:
    """The lines of a notebook's hidden test regions that appear nowhere else in it.

    These are what must never reach a student; lines shorter than ``min_length`` (after
    stripping) are left out, as they would match too much.

    Parameters
    ----------
    nb : NotebookNode
        An instructor's notebook (source or autograded), hidden regions included.
    begin, end : str
        nbgrader's delimiters of hidden regions.
    min_length : int
        The shortest line to report.

    Returns
    -------
    list of str
        Sorted, stripped lines.
    """
    secret: set[str] = set()
    shown: set[str] = set()
    for cell in nb.cells:
        if ExplainChecks._is_test(cell):
            secret.update(_hidden_lines(cell.source, begin, end))
            shown.update(ln.strip() for ln in visible_part(cell.source, begin, end).split("\n"))
        else:
            shown.update(ln.strip() for ln in cell.source.split("\n"))
    shown_text = "\n".join(shown)
    # a line that students see anyway (even inside a longer line) is no secret
    return sorted(
        line for line in secret - shown if len(line) >= min_length and line not in shown_text
    )


def _output_text(output: NotebookNode) -> str:
    parts: list[str] = []
    if "text" in output:
        parts.append(str(output["text"]))
    for value in output.get("data", {}).values():
        parts.append(value if isinstance(value, str) else str(value))
    if output.get("output_type") == "error":
        parts.append(str(output.get("evalue", "")))
        parts.extend(str(t) for t in output.get("traceback", []))
    return "\n".join(parts)


def _docstring(source: str) -> str:
    match = re.search(r'^\s*"""(.+?)"""', source, flags=re.MULTILINE)
    return match.group(1).strip() if match else "this check"


class ExplainChecks(NbGraderPreprocessor):
    """nbgrader preprocessor for ``generate_feedback``: explain checks, hide hidden tests.

    Configure it after ``GetGrades`` (it reads the scores ``GetGrades`` puts into the
    cells' metadata)::

        c.GenerateFeedback.preprocessors = [GetGrades, CSSHTMLHeaderPreprocessor, ExplainChecks]
    """

    begin_test_delimeter = Unicode(
        "BEGIN HIDDEN TESTS", help="nbgrader's delimiter of a hidden test region"
    ).tag(config=True)
    end_test_delimeter = Unicode(
        "END HIDDEN TESTS", help="nbgrader's delimiter of the end of a hidden test region"
    ).tag(config=True)
    max_output_chars = Integer(
        20_000, help="longer text outputs are cut to this many characters in feedback"
    ).tag(config=True)

    def preprocess(
        self, nb: NotebookNode, resources: ResourcesDict
    ) -> tuple[NotebookNode, ResourcesDict]:
        """Rewrite the test cells and scrub outputs, then return the notebook."""
        self._secret = hidden_lines(nb, self.begin_test_delimeter, self.end_test_delimeter)
        return super().preprocess(nb, resources)

    @staticmethod
    def _is_test(cell: NotebookNode) -> bool:
        meta = cell.metadata.get("nbgrader", {})
        return cell.cell_type == "code" and bool(meta.get("grade")) and not meta.get("solution")

    def preprocess_cell(
        self, cell: NotebookNode, resources: ResourcesDict, index: int
    ) -> tuple[NotebookNode, ResourcesDict]:
        """Explain a test cell; scrub and shorten the outputs of any code cell."""
        if cell.cell_type != "code":
            return cell, resources
        if self._is_test(cell):
            self._explain(cell)
        cell.outputs = [self._scrub(out) for out in cell.outputs]
        return cell, resources

    def _explain(self, cell: NotebookNode) -> None:
        meta = cell.metadata["nbgrader"]
        grade_id = meta.get("grade_id", "")
        points = float(meta.get("points") or 0)
        score = meta.get("score")
        passed = score is not None and float(score) >= points
        what, hint = CHECKS.get(grade_id, (_docstring(cell.source), "see the check's message"))
        begin, end = self.begin_test_delimeter, self.end_test_delimeter
        hidden = any(begin in line for line in cell.source.split("\n"))

        raised = ""
        for out in cell.outputs:
            if out.get("output_type") == "error":
                ename = str(out.get("ename", ""))
                if ename != "AssertionError":
                    raised = ename if _CLASS_NAME.match(ename) else "an exception"
        verdict = "passed" if passed else "failed"
        got = "?" if score is None else f"{float(score):g}"
        lines = [f"Check {grade_id} {verdict} ({got} / {points:g} point{'s' * (points != 1)})."]
        lines.append(f"It looks at {what}.")
        if not passed:
            if raised:
                lines.append(
                    f"Your code raised {raised} while the check ran, so it could not confirm "
                    "the answer: run your notebook from the top and read the error."
                )
            else:
                lines.append(f"What this usually means: {hint}.")
        if hidden:
            lines.append("(The hidden part of this check is not shown.)")
        text = "\n".join(lines)
        colour = "#2e7d32" if passed else "#c62828"
        explanation = from_dict(
            {
                "output_type": "display_data",
                "metadata": {},
                "data": {
                    "text/plain": text,
                    "text/html": (
                        f'<div class="course-check" data-check="{html.escape(grade_id)}" '
                        f'data-passed="{str(passed).lower()}" '
                        f'style="border-left: 4px solid {colour}; padding: 0.3em 0.6em;">'
                        + "<br>".join(html.escape(line) for line in lines)
                        + "</div>"
                    ),
                },
            }
        )
        if hidden:
            cell.source = visible_part(cell.source, begin, end)
            cell.outputs = [explanation]
        else:
            cell.outputs = [explanation, *cell.outputs]

    def _scrub(self, output: NotebookNode) -> NotebookNode:
        text = _output_text(output)
        if any(line in text for line in self._secret):
            return from_dict(
                {
                    "output_type": "stream",
                    "name": "stdout",
                    "text": "[output removed from feedback: it quoted a hidden check]\n",
                }
            )
        if (
            output.get("output_type") == "stream"
            and len(output.get("text", "")) > self.max_output_chars
        ):
            kept = output["text"][: self.max_output_chars]
            output["text"] = (
                kept + f"\n... [output cut: {len(output['text']):,} characters in all]\n"
            )
        for key, value in list(output.get("data", {}).items()):
            if isinstance(value, str) and len(value) > self.max_output_chars:
                output["data"][key] = value[: self.max_output_chars] + "\n... [output cut]"
        return output
