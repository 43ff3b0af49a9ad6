"""Make what a student wrote inert before the instructor's tools display it.

nbgrader's formgrader renders the autograded notebook as HTML inside the instructor's
Jupyter session, and ``generate_feedback`` renders it for the student. Plain nbgrader keeps
a student's markdown, raw cells and rich outputs as they are, so ``<img src=x
onerror=...>`` in a written answer, or an HTML or JavaScript output, runs as script with the
instructor's session: it can read ``source/``, change grades and open a terminal.

:class:`MakeInert` runs last in ``nbgrader autograde`` (:func:`course_grading.verdicts.enable`
puts it there), before the autograded notebook is written:

* markdown the instructor wrote (the same text as a markdown cell of the source notebook)
  stays; every other markdown cell, and every raw cell, becomes a fenced block of plain
  text (the student's words are kept, as text);
* outputs keep ``text/plain`` and ``image/png`` only (a PNG must be base64 of a real PNG),
  streams and errors as text; anything else (HTML, JavaScript, SVG, Markdown, LaTeX,
  widgets) is dropped with a note saying so;
* attachments and all metadata except nbgrader's and the grader's own verdicts are removed.

The formgrader and feedback pages are also served with a Content-Security-Policy that
forbids inline script (:mod:`course_grading.formgrader_csp`, :mod:`course_grading.feedback`):
a second wall, should anything get past this one.

Examples
--------
>>> fence("<img src=x onerror=alert(1)>")
'```\\n<img src=x onerror=alert(1)>\\n```'
>>> fence("a ``` b")
'````\\na ``` b\\n````'
"""

from __future__ import annotations

import base64
import binascii
import os
import re
from typing import Any

import nbformat
from nbconvert.exporters.exporter import ResourcesDict
from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Integer

__all__ = ["MakeInert", "fence", "inert_output"]

_PNG = b"\x89PNG\r\n\x1a\n"
_BASE64 = re.compile(r"^[A-Za-z0-9+/=\s]*$")
_GRADE_ID = re.compile(r"^[A-Za-z0-9_\-]{1,64}$")
_KEPT_NB_METADATA = ("kernelspec", "language_info")


def fence(text: str) -> str:
    """``text`` as a fenced markdown block: rendered as plain, escaped text."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    bar = "`" * max(3, longest + 1)
    return f"{bar}\n{text}\n{bar}"


def _text(value: Any) -> str:
    if isinstance(value, list):
        return "".join(str(v) for v in value)
    return value if isinstance(value, str) else str(value)


def _png(value: Any, limit: int) -> str | None:
    """The base64 text of a real PNG image of at most ``limit`` bytes, else None."""
    text = _text(value)
    if len(text) > limit * 4 // 3 + 16 or not _BASE64.match(text):
        return None
    try:
        raw = base64.b64decode(text, validate=False)
    except (binascii.Error, ValueError):
        return None
    return base64.b64encode(raw).decode() if raw.startswith(_PNG) else None


def inert_output(output: NotebookNode, max_png: int = 2_000_000) -> list[NotebookNode]:
    """One output reduced to what is safe to render: text, errors as text, PNG images.

    Returns
    -------
    list of NotebookNode
        The kept output (at most one), plus a note when something was dropped.
    """
    kind = output.get("output_type")
    if kind == "stream":
        name = output.get("name") if output.get("name") in ("stdout", "stderr") else "stdout"
        return [nbformat.v4.new_output("stream", name=name, text=_text(output.get("text")))]
    if kind == "error":
        return [nbformat.v4.new_output(
            "error", ename=_text(output.get("ename"))[:200], evalue=_text(output.get("evalue")),
            traceback=[_text(t) for t in (output.get("traceback") or [])][:200])]
    if kind in ("display_data", "execute_result"):
        data = output.get("data") or {}
        kept: dict[str, str] = {}
        if "text/plain" in data:
            kept["text/plain"] = _text(data["text/plain"])
        png = _png(data.get("image/png", ""), max_png) if "image/png" in data else None
        if png:
            kept["image/png"] = png
        dropped = sorted(str(k)[:60] for k in data if k not in kept)
        out = []
        if kept:
            if kind == "execute_result":
                count = output.get("execution_count")
                out.append(nbformat.v4.new_output(
                    "execute_result", data=kept,
                    execution_count=count if isinstance(count, int) else None))
            else:
                out.append(nbformat.v4.new_output("display_data", data=kept))
        if dropped:
            out.append(_note(f"[not shown by the grader: {', '.join(dropped)}]"))
        return out
    return [_note(f"[not shown by the grader: an output of type {str(kind)[:40]!r}]")]


def _note(text: str) -> NotebookNode:
    return nbformat.v4.new_output("stream", name="stdout", text=text + "\n")


class MakeInert(NbGraderPreprocessor):
    """nbgrader preprocessor, last in autograde: student content becomes plain text."""

    max_png_bytes = Integer(2_000_000, help="Largest PNG image kept in an output."
                            ).tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: ResourcesDict
                   ) -> tuple[NotebookNode, ResourcesDict]:
        """Rewrite every cell and the notebook's metadata."""
        self._trusted = self._instructor_markdown(resources)
        course = nb.metadata.get("course") if (resources or {}).get("course_graded") else None
        nb.metadata = {k: nb.metadata[k] for k in _KEPT_NB_METADATA if k in nb.metadata}
        if isinstance(course, dict):
            nb.metadata["course"] = course
        return super().preprocess(nb, resources)

    def _instructor_markdown(self, resources: ResourcesDict) -> set[str]:
        """The markdown texts of the instructor's source notebook (trusted as they are)."""
        ids = (resources or {}).get("nbgrader", {})
        name = (resources or {}).get("unique_key") or ids.get("notebook")
        if not ids.get("assignment") or not name:
            return set()
        from nbgrader.coursedir import CourseDirectory

        coursedir = CourseDirectory(config=self.config)
        path = os.path.join(coursedir.format_path(coursedir.source_directory, ".",
                                                  ids["assignment"]), f"{name}.ipynb")
        try:
            source = nbformat.read(path, as_version=4)
        except Exception:  # unreadable: then no markdown is trusted
            return set()
        return {c.source for c in source.cells if c.cell_type == "markdown"}

    def preprocess_cell(self, cell: NotebookNode, resources: ResourcesDict, index: int
                        ) -> tuple[NotebookNode, ResourcesDict]:
        """Make one cell inert."""
        meta = cell.get("metadata", {})
        nbgrader = meta.get("nbgrader")
        kept: dict[str, Any] = {}
        if isinstance(nbgrader, dict) and _GRADE_ID.match(str(nbgrader.get("grade_id", ""))):
            kept["nbgrader"] = nbgrader
        verdicts = (resources or {}).get("course_verdicts", {})
        if index in verdicts:
            kept["course"] = {"verdict": verdicts[index]}
        cell.metadata = nbformat.from_dict(kept)
        cell.pop("attachments", None)
        if cell.cell_type == "raw" or (cell.cell_type == "markdown" and
                                       cell.source not in self._trusted):
            source = _text(cell.source)
            cell.cell_type = "markdown"
            cell.pop("outputs", None)
            cell.pop("execution_count", None)
            cell.source = fence(source) if source.strip() else source
        elif cell.cell_type == "code":
            outputs = []
            for out in cell.get("outputs", []):
                outputs.extend(inert_output(out, self.max_png_bytes))
            cell.outputs = outputs
        return cell, resources
