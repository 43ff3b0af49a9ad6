"""Feedback that says in words what each check found, and never shows a hidden check.

Plain ``nbgrader generate_feedback`` renders the autograded notebook as it is: the full
source of every hidden test and the traceback of every failed one (nbgrader issues #917
and #1363). :class:`ExplainChecks` is an nbgrader preprocessor that runs in
``generate_feedback`` after nbgrader's ``GetGrades`` (``quiz/nbgrader_config.py`` sets
``GenerateFeedback.preprocessors``). For every test cell it

* replaces the outputs with one verdict in words: passed or failed, the points, what the
  check looks at (from :data:`course_quiz.checkpoint_spec.CHECKPOINT`) and, if it failed,
  what the grader found (the verdict :mod:`course_grading.verdicts` decided, which names the
  mistake it saw); nothing of the check's code, input or expected value;
* for a cell with hidden parts, shows only what the student saw in the release.

In every other cell it removes an output that quotes a line of a hidden check and cuts
huge outputs. If the grader stopped the notebook early (time budget, output flood, a
crashed kernel), or an answer used ``course_lib`` where the quiz forbids it, a note at the
top says so.

:class:`SafeHTMLExporter` writes the feedback pages with a Content-Security-Policy
``<meta>`` that forbids every script: whatever a student's notebook holds, opening its
feedback runs nothing.

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

import glob
import html
import logging
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from nbconvert.exporters import HTMLExporter
from nbconvert.exporters.exporter import ResourcesDict
from nbformat.notebooknode import NotebookNode, from_dict
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Bool, Integer, List, Unicode

from course_quiz.checkpoint_spec import CHECKPOINT

from .gradetable import repeated_mistakes
from .probe import reported_exception
from .shown_ids import for_terminal

__all__ = ["FEEDBACK_CSP", "CheckedNgshareReleaseFeedback", "CheckedReleaseFeedback",
           "ExplainChecks", "ManualGradesFirst",
           "PendingManualGrades", "SafeHTMLExporter", "guard_feedback", "hidden_lines",
           "pending_manual_grades", "visible_part"]

#: The policy of every feedback page: no script of any kind, no request to anywhere.
FEEDBACK_CSP = ("default-src 'none'; img-src data:; style-src 'unsafe-inline' data:; "
                "font-src data:; base-uri 'none'; form-action 'none'")



def visible_part(
    source: str, begin: str = "BEGIN HIDDEN TESTS", end: str = "END HIDDEN TESTS"
) -> str:
    """The source of a test cell without its hidden regions (what students were given).

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


def _is_test(cell: NotebookNode) -> bool:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return cell.cell_type == "code" and bool(meta.get("grade")) and not meta.get("solution")


def hidden_lines(
    nb: NotebookNode,
    begin: str = "BEGIN HIDDEN TESTS",
    end: str = "END HIDDEN TESTS",
    min_length: int = 12,
) -> list[str]:
    """The lines of a notebook's hidden test regions that appear nowhere else in it.

    These are what must never reach a student; lines shorter than ``min_length`` (after
    stripping) are left out, as they would match too much.
    """
    secret: set[str] = set()
    shown: set[str] = set()
    for cell in nb.cells:
        if _is_test(cell):
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


def _words(text: str) -> NotebookNode:
    return from_dict({"output_type": "stream", "name": "stdout", "text": text + "\n"})


def _explanation(lines: list[str], grade_id: str, passed: bool) -> NotebookNode:
    colour = "#2e7d32" if passed else "#c62828"
    return from_dict({
        "output_type": "display_data",
        "metadata": {},
        "data": {
            "text/plain": "\n".join(lines),
            "text/html": (
                f'<div class="course-check" data-check="{html.escape(grade_id)}" '
                f'data-passed="{str(passed).lower()}" '
                f'style="border-left: 4px solid {colour}; padding: 0.3em 0.6em;">'
                + "<br>".join(html.escape(line) for line in lines) + "</div>"),
        },
    })


class _FeedbackPreprocessor(NbGraderPreprocessor):
    """A feedback preprocessor that takes the config nbconvert's HTML exporter gives all.

    The exporter's defaults set ``NbConvertBase.display_data_priority``; nbgrader's base
    class declares that trait without ``config=True``, so traitlets would print "Config
    option display_data_priority not recognized" for each subclass on every run. Declared
    configurable here (and unused), as nbgrader's own ``GetGrades`` does.
    """

    display_data_priority = List(
        Unicode(), help="the exporter's output priority (not used by this preprocessor)"
    ).tag(config=True)


class ExplainChecks(_FeedbackPreprocessor):
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
        self._repeated = repeated_mistakes(nb)
        nb, resources = super().preprocess(nb, resources)
        notes = self._notes(nb.metadata.get("course", {}))
        if notes:
            from nbformat.v4 import new_markdown_cell

            nb.cells.insert(0, new_markdown_cell("\n\n".join(f"**Note from the grader:** {n}"
                                                             for n in notes)))
        return nb, resources

    @staticmethod
    def _notes(course: Any) -> list[str]:
        if not isinstance(course, dict):
            return []
        notes = []
        stopped = course.get("stopped")
        if isinstance(stopped, str):
            notes.append(f"your notebook was stopped before it finished: "
                         f"{html.escape(stopped[:300])}. Checks that had not run yet score 0.")
        if course.get("course_lib_used_in"):
            notes.append("your answers import `course_lib`, which this quiz does not allow: "
                         "it does not exist where the quiz is graded.")
        return notes

    def preprocess_cell(
        self, cell: NotebookNode, resources: ResourcesDict, index: int
    ) -> tuple[NotebookNode, ResourcesDict]:
        """Explain a test cell; scrub and shorten the outputs of any code cell."""
        if cell.cell_type != "code":
            return cell, resources
        if _is_test(cell):
            self._explain(cell)
        else:
            cell.outputs = [self._scrub(out) for out in cell.outputs]
        return cell, resources

    def _explain(self, cell: NotebookNode) -> None:
        meta = cell.metadata["nbgrader"]
        grade_id = str(meta.get("grade_id", ""))
        points = float(meta.get("points") or 0)
        score = meta.get("score")
        passed = score is not None and float(score) >= points
        try:
            looks_at = CHECKPOINT.check(grade_id).looks_at
        except KeyError:
            looks_at = "this check"
        got = "?" if score is None else f"{float(score):g}"
        lines = [f"Check {grade_id} {'passed' if passed else 'failed'} "
                 f"({got} / {points:g} point{'s' * (points != 1)}).",
                 f"It looks at {looks_at}."]
        verdict = cell.metadata.get("course", {}).get("verdict")
        begin, end = self.begin_test_delimeter, self.end_test_delimeter
        hidden = any(begin in line for line in cell.source.split("\n"))
        if not passed:
            if isinstance(verdict, dict) and isinstance(verdict.get("message"), str):
                lines.append(f"What the grader found: {verdict['message']}")
                if grade_id in getattr(self, "_repeated", {}):
                    lines.append(f"Same mistake as {self._repeated[grade_id]}: a mistake "
                                 "costs the points of every check that sees it.")
            elif not hidden:  # graded without the host-side verdicts: the exception's
                # class, for a check whose inputs the student has (a hidden check's code
                # chose its exception knowing the hidden inputs: never named)
                raised = [str(o.get("ename", "")) for o in cell.outputs
                          if o.get("output_type") == "error"]
                name = next((n for n in raised if n != "AssertionError"), "")
                if name:  # a name of the student's own could carry anything
                    lines.append(f"Your code raised {reported_exception(name)} while the "
                                 "check ran.")
        if hidden:
            cell.source = visible_part(cell.source, begin, end)
            lines.append("(The hidden part of this check is not shown.)")
        cell.outputs = [_explanation(lines, grade_id, passed)]

    def _scrub(self, output: NotebookNode) -> NotebookNode:
        text = _output_text(output)
        if any(line in text for line in self._secret):
            return _words("[output removed from feedback: it quoted a hidden check]")
        if (output.get("output_type") == "stream"
                and len(output.get("text", "")) > self.max_output_chars):
            kept = output["text"][: self.max_output_chars]
            output["text"] = (
                kept + f"\n... [output cut: {len(output['text']):,} characters in all]\n")
        for key, value in list(output.get("data", {}).items()):
            if isinstance(value, str) and len(value) > self.max_output_chars and \
                    key != "image/png":
                output["data"][key] = value[: self.max_output_chars] + "\n... [output cut]"
        return output


class SafeHTMLExporter(HTMLExporter):
    """nbgrader's feedback HTML, with a Content-Security-Policy that allows no script.

    Set it with ``c.GenerateFeedback.exporter_class = SafeHTMLExporter`` (what
    :func:`course_grading.verdicts.enable` does).
    """

    def from_notebook_node(self, nb: NotebookNode, resources: Any = None, **kw: Any
                           ) -> tuple[str, Any]:
        """The page, with the policy as the first element of its ``<head>``."""
        output, resources = super().from_notebook_node(nb, resources, **kw)
        meta = f'<meta http-equiv="Content-Security-Policy" content="{FEEDBACK_CSP}">'
        head = re.search(r"<head[^>]*>", output, flags=re.IGNORECASE)
        if head is None:  # a template without a head: refuse rather than ship a page without it
            raise ValueError("the feedback template produced no <head> to hold its "
                             "Content-Security-Policy")
        output = output[: head.end()] + meta + output[head.end():]
        output = name_checks_in_contents(output, nb)
        # the stylesheet formgrader links (wrapped verdicts and written answers), last in
        # <head> so that it comes after nbconvert's
        end = output.lower().find("</head>")
        if end < 0:
            raise ValueError("the feedback template produced no </head> for its stylesheet")
        return output[:end] + f"<style>{_readable_css()}</style>\n" + output[end:], resources


def name_checks_in_contents(page: str, nb: NotebookNode) -> str:
    """nbgrader's feedback page lists every check as "Test cell" in its contents: each of
    the quiz's checks is named there instead, by its grade id and what it looks at (the
    spec's words; a grade id the spec does not know keeps nbgrader's label).

    nbgrader's template (``feedback/index.html.j2``) writes that list inside its whole
    ``body`` block, with the label as literal text: overriding the block would copy
    nbgrader's page, so the exporter renames each check's entry in the page it produced.
    """
    for cell in nb.cells:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if not _is_test(cell) or not isinstance(grade_id, str):
            continue
        try:
            check = CHECKPOINT.check(grade_id)
        except KeyError:
            continue
        label = html.escape(f"{grade_id}: {check.looks_at}")
        page = page.replace(f'<a href="#{grade_id}">Test cell</a>',
                            f'<a href="#{grade_id}">{label}</a>', 1)
    return page


def _readable_css() -> str:
    """The course's stylesheet of notebook pages (``formgrader_static/readable.css``)."""
    from .formgrader_csp import READABLE_CSS, STATIC_DIR

    return Path(STATIC_DIR, READABLE_CSS).read_text(encoding="utf-8")


# --------------------------------------------------------------------------------------
# No feedback while a written answer waits for a human
# --------------------------------------------------------------------------------------


class PendingManualGrades(RuntimeError):
    """Feedback was asked for while answers still wait to be graded by hand."""


def pending_manual_grades(db_url: str, assignment: str,
                          students: Iterable[str] | None = None) -> dict[str, list[str]]:
    """The answers of ``assignment`` that still wait to be graded by hand, by student.

    Parameters
    ----------
    db_url : str
        The gradebook's URL (``CourseDirectory.db_url``).
    assignment : str
        The assignment's name.
    students : iterable of str, optional
        Only these students (default: every student with a submission).

    Returns
    -------
    dict of str to list of str
        ``{student: ["<notebook>/<grade id>", ...]}``, students without a pending grade
        left out, both sorted.
    """
    from nbgrader.api import Gradebook

    wanted = None if students is None else set(students)
    pending: dict[str, list[str]] = {}
    with Gradebook(db_url) as gb:
        for submission in gb.assignment_submissions(assignment):
            if wanted is not None and submission.student_id not in wanted:
                continue
            cells = sorted(f"{nb.name}/{grade.name}" for nb in submission.notebooks
                           for grade in nb.grades if grade.needs_manual_grade)
            if cells:
                pending[submission.student_id] = cells
    return dict(sorted(pending.items()))


def pending_message(assignment: str, pending: dict[str, list[str]], action: str) -> str:
    """The refusal's words: who and which cells wait, and how to go on.

    >>> print(pending_message("checkpoint", {"bob": ["checkpoint/written_scaling"]},
    ...                       "generate feedback"))  # doctest: +NORMALIZE_WHITESPACE
    Not going to generate feedback for checkpoint: 1 student has answers that wait to be
    graded by hand (bob: checkpoint/written_scaling). Grade them in formgrader (Manual
    Grading), or, to send feedback with those answers at 0 points, add
    --ManualGradesFirst.allow_pending=True (or c.ManualGradesFirst.allow_pending = True in
    nbgrader_config.py).
    """
    who = "; ".join(f"{for_terminal(student)}: {', '.join(cells)}"
                    for student, cells in pending.items())
    count = f"{len(pending)} student{'s' if len(pending) != 1 else ''} ha" + (
        "s" if len(pending) == 1 else "ve")
    return (f"Not going to {action} for {assignment}: {count} answers that wait to be graded "
            f"by hand ({who}). Grade them in formgrader (Manual Grading), or, to send "
            "feedback with those answers at 0 points, add --ManualGradesFirst.allow_pending=True "
            "(or c.ManualGradesFirst.allow_pending = True in nbgrader_config.py).")


class ManualGradesFirst(_FeedbackPreprocessor):
    """``generate_feedback`` refuses a notebook whose written answers are not graded yet.

    Put it first in ``GenerateFeedback.preprocessors`` (:func:`guard_feedback` does). The
    notebook fails with :class:`PendingManualGrades`, naming the student and the cells; the
    other students' feedback is written, and nbgrader exits with an error.
    ``allow_pending = True`` lets such feedback go out (the answers count 0 points).
    """

    allow_pending = Bool(
        False, help="write feedback even while answers wait to be graded by hand"
    ).tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: ResourcesDict
                   ) -> tuple[NotebookNode, ResourcesDict]:
        """Raise :class:`PendingManualGrades` if this submission has ungraded answers."""
        if not self.allow_pending:
            info = resources["nbgrader"]
            refusals = _OneLineRefusals.on(self.log)
            refusals.refused.discard(info["student"])
            pending = pending_manual_grades(info["db_url"], info["assignment"],
                                            [info["student"]])
            if pending:
                refusals.refused.add(info["student"])
                raise PendingManualGrades(
                    pending_message(info["assignment"], pending, "generate feedback"))
        return nb, resources


class _OneLineRefusals(logging.Filter):
    """One line per refused student in ``generate_feedback``'s log, not a traceback.

    nbgrader logs any exception of a preprocessor as "There was an error processing
    assignment", the whole traceback (~40 lines), "Removing failed assignment" and, at the
    end, "Please see the above traceback". nbgrader offers no quieter way for a
    preprocessor to refuse one student, so this filter on the application's logger turns
    :class:`PendingManualGrades` into its own message and drops nbgrader's lines about the
    students it refused; every other error is logged as nbgrader logs it.
    """

    _TRACEBACK_END = f"{PendingManualGrades.__name__}: "

    def __init__(self) -> None:
        super().__init__()
        self.refused: set[str] = set()
        self.other_errors = 0

    @classmethod
    def on(cls, log: Any) -> _OneLineRefusals:
        """The filter installed on ``log`` (a :class:`logging.Logger`), installed once."""
        for f in getattr(log, "filters", []):
            if isinstance(f, cls):
                return f
        f = cls()
        if isinstance(log, logging.Logger):
            log.addFilter(f)
        return f

    def _refused_path(self, path: str) -> bool:
        """Is ``path`` (``.../<student>/<assignment>``) a refused student's?"""
        parts = Path(path.strip()).parts
        return len(parts) >= 2 and parts[-2] in self.refused

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.refused or record.levelno < logging.WARNING:
            return True
        try:
            text = record.getMessage()
        except (TypeError, ValueError):
            return True
        if text.startswith("Traceback") and self._TRACEBACK_END in text:
            record.msg = text.rsplit(self._TRACEBACK_END, 1)[1].strip()
            record.args = ()
            return True
        for prefix in ("There was an error processing assignment: ",
                       "Removing failed assignment: "):
            if text.startswith(prefix):
                return not self._refused_path(text[len(prefix):])
        student = re.fullmatch(r"There was an error processing assignment '.*' for student "
                               r"'(.*)'", text)
        if student:
            if student.group(1) in self.refused:
                return False
            self.other_errors += 1
            return True
        if text.startswith("Please see the"):  # nbgrader's last line: the run is over
            refused, others = len(self.refused), self.other_errors
            self.refused, self.other_errors = set(), 0
            if not others:
                record.msg = (f"No feedback for {refused} student{'s' if refused != 1 else ''}"
                              " (above): answers wait to be graded by hand. Every other "
                              "student's feedback is written.")
                record.args = ()
        return True


class _PendingGradesGuard:
    """What both checked ``release_feedback`` steps share: refuse, as a whole, while a
    student whose feedback would be released has answers waiting to be graded by hand."""

    def _refuse_pending(self, students: Iterable[str]) -> None:
        if ManualGradesFirst(config=self.config).allow_pending:  # type: ignore[attr-defined]
            return
        coursedir = self.coursedir  # type: ignore[attr-defined]
        pending = pending_manual_grades(coursedir.db_url, coursedir.assignment_id, students)
        if pending:
            self.fail(pending_message(  # type: ignore[attr-defined]
                coursedir.assignment_id, pending, "release feedback"))


def _release_feedback_base() -> type:
    from nbgrader.exchange.default.release_feedback import ExchangeReleaseFeedback

    return ExchangeReleaseFeedback


class CheckedReleaseFeedback(_PendingGradesGuard, _release_feedback_base()):  # type: ignore[misc]
    """nbgrader's ``release_feedback`` (filesystem exchange) that refuses, as a whole, while
    a student whose feedback it would release has answers waiting to be graded by hand.

    ``c.ExchangeFactory.release_feedback = "course_grading.feedback.CheckedReleaseFeedback"``
    (deploy/course_nbgrader_config.py). ``ManualGradesFirst.allow_pending`` lets it go on.
    """

    def copy_files(self) -> None:
        """Check the gradebook, then release as nbgrader does."""
        self._refuse_pending({Path(p).parts[-3]
                              for p in glob.glob(os.path.join(self.src_path, "*.html"))})
        names = _ReleasedName()
        self.log.addFilter(names)
        try:
            super().copy_files()
        finally:
            self.log.removeFilter(names)


class _ReleasedName(logging.Filter):
    """nbgrader 0.9's filesystem ``release_feedback`` copies each page to
    ``<hash>-tmp.html``, renames it to ``<hash>.html``, and then logs "Feedback released to:
    <hash>-tmp.html", a name no longer on disk: this logs the name the student's page has."""

    PREFIX = "Feedback released to: "

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str) and record.msg.startswith(self.PREFIX) and \
                record.msg.endswith("-tmp.html") and not record.args:
            record.msg = record.msg[: -len("-tmp.html")] + ".html"
        return True


def _ngshare_release_feedback_base() -> type:
    from course_exchange.ngshare_exchange import NgshareReleaseFeedback

    return NgshareReleaseFeedback


class CheckedNgshareReleaseFeedback(_PendingGradesGuard,  # type: ignore[misc]
                                    _ngshare_release_feedback_base()):
    """The ngshare exchange's ``release_feedback`` with the same refusal, made before
    anything is sent to ngshare.

    ``c.ExchangeFactory.release_feedback =
    "course_grading.feedback.CheckedNgshareReleaseFeedback"`` in the instructor's course
    config (deploy/course_nbgrader_config_ngshare.py), never in the global one that
    students' nbgrader reads (they cannot import course_grading).
    """

    def copy_files(self) -> None:
        """Check the gradebook for every student with feedback, then release to ngshare."""
        # the very list the release sends, so that no student is released unchecked
        self._refuse_pending({sid for sid, _ in self.feedback_folders()})
        super().copy_files()


def guard_feedback(c: Any, release: bool = False) -> None:
    """No feedback while answers wait to be graded by hand: put :class:`ManualGradesFirst`
    first in ``c.GenerateFeedback.preprocessors`` and, with ``release=True`` (filesystem
    exchange only), check ``release_feedback`` too (:class:`CheckedReleaseFeedback`).

    Parameters
    ----------
    c : traitlets.config.Config
        The nbgrader config being built, after ``GenerateFeedback.preprocessors`` is set.
    release : bool
        Also set ``ExchangeFactory.release_feedback`` (filesystem exchange; with ngshare
        the course config sets :class:`CheckedNgshareReleaseFeedback` itself).
    """
    from nbgrader.preprocessors import GetGrades

    chain = list(c.GenerateFeedback.get("preprocessors") or [GetGrades])
    if ManualGradesFirst not in chain:
        c.GenerateFeedback.preprocessors = [ManualGradesFirst, *chain]
    if release:
        c.ExchangeFactory.release_feedback = f"{__name__}.CheckedReleaseFeedback"
