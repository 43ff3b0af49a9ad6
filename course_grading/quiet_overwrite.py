"""nbgrader's ``OverwriteCells`` without its warning about the hidden tests it restores.

At autograde, nbgrader puts every read-only cell back as the instructor's source has it. A
check with ``### BEGIN HIDDEN TESTS`` always differs from what the student received (the
release has its hidden part removed), so nbgrader logs "Attribute 'checksum' for cell
test_... has changed!" for each such check of every student, an untouched notebook too.
:class:`QuietOverwriteCells` keeps that warning for a cell that differs from what was
*released* (a student who edited a check), and says nothing when the cell is exactly the
release's form of the source (with per-student variants: the setup cell with the student's
own numbers).

Use it in place of nbgrader's class in ``Autograde.sanitize_preprocessors``
(:func:`quiet_overwrite`; ``quiz/nbgrader_config.py`` calls it).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import ClearHiddenTests, OverwriteCells

__all__ = ["QuietOverwriteCells", "quiet_overwrite"]


class QuietOverwriteCells(OverwriteCells):
    """``OverwriteCells`` that warns about a changed checksum only if the student changed
    the cell, not because its hidden tests were (rightly) missing."""

    def preprocess(self, nb: NotebookNode, resources: Any) -> tuple[NotebookNode, Any]:
        """nbgrader's, with the student's id kept at hand (per-student variants)."""
        self._student = str(resources.get("nbgrader", {}).get("student") or "")
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell: NotebookNode, resources: Any, cell_index: int
                        ) -> tuple[NotebookNode, Any]:
        """nbgrader's, with the student's cell kept at hand for :meth:`report_change`."""
        self._student_cell = copy.deepcopy(cell)
        return super().preprocess_cell(cell, resources, cell_index)

    def report_change(self, name: str, attr: str, old: Any, new: Any) -> None:
        """nbgrader's warning, unless only the hidden tests differ."""
        if attr == "checksum" and self._as_released(name):
            self.log.debug("cell %s: hidden tests restored from the source", name)
            return
        super().report_change(name, attr, old, new)

    def _as_released(self, grade_id: str) -> bool:
        source = self.gradebook.find_source_cell(grade_id, self.notebook_id,
                                                 self.assignment_id)
        released = NotebookNode(cell_type=source.cell_type, source=source.source,
                                metadata={})
        # nbgrader's own stripping of the hidden tests, with the course's delimiters; the
        # released cell carries no grade metadata, which this comparison does not need
        ClearHiddenTests(config=self.config, enforce_metadata=False).preprocess_cell(
            released, {}, 0)
        got = str(self._student_cell.source).strip()
        if released.source.strip() == got:
            return True
        own = self._own_setup(grade_id, released.source)
        return own is not None and own.strip() == got

    def _own_setup(self, grade_id: str, source: str) -> str | None:
        """With per-student variants, the setup cell as this student received it: their own
        numbers in the class's template (:mod:`course_grading.personal`)."""
        secret_file = self.config.PersonalVariant.get("secret_file")
        student = getattr(self, "_student", "")
        if grade_id != "setup" or not secret_file or not student:
            return None
        from .check_calls import QuizSourceError
        from .personal import personal_variant, read_secret
        from .variants import fill_setup, read_parts

        try:
            parts = read_parts(Path(secret_file).parent)
            return fill_setup(source, personal_variant(read_secret(secret_file), student,
                                                       parts))
        except (OSError, ValueError, QuizSourceError):
            return None


def quiet_overwrite(c: Any) -> None:
    """Put :class:`QuietOverwriteCells` where ``OverwriteCells`` is in
    ``c.Autograde.sanitize_preprocessors`` (nbgrader's default chain if none is set)."""
    from nbgrader.converters import Autograde

    chain = list(c.Autograde.get("sanitize_preprocessors")
                 or Autograde.class_traits()["sanitize_preprocessors"].default())
    c.Autograde.sanitize_preprocessors = [
        QuietOverwriteCells if p is OverwriteCells else p for p in chain]
