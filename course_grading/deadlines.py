"""Due dates, late work and extensions, at nbgrader's own extension points.

* **The due date** is nbgrader's: ``nbgrader db assignment add checkpoint
  --duedate="2027-01-15 17:00 Europe/Berlin"`` (or ``Gradebook.update_or_create_assignment``).
  ``autograde`` compares it with each submission's ``timestamp.txt`` (the server's time
  when the course's collect wrote it, docs/deploy.md).
* **The penalty** is a late-submission plugin, nbgrader's documented way to choose one
  (``c.AssignLatePenalties.plugin_class``): :class:`PenaltyPerDay` takes a share of the
  notebook's score for each day or part of a day late. nbgrader's ``AssignLatePenalties``
  step of ``autograde`` asks it and stores the penalty in the gradebook, where formgrader,
  ``nbgrader export`` (``late_submission_penalty``), the grade table and the report read it.
* **Extensions** are nbgrader's per-submission ``extension``, which moves that student's
  due date. A roster's standing extension (``extension`` in the class list,
  :mod:`course_grading.roster`) is written there by :class:`RosterExtension`, a step of
  ``autograde`` placed just before ``AssignLatePenalties``, because nbgrader only creates a
  submission's row when it autogrades it. Both graders (``nbgrader autograde`` and
  ``python -m course_grading.parallel``) run the same steps, so both honour it.

Turn it on in ``nbgrader_config.py`` (``quiz/nbgrader_config.py`` does)::

    from course_grading.deadlines import late_work
    late_work(c, percent_per_day=10)

Without a due date nothing is ever late, and nothing changes.
"""

from __future__ import annotations

import math
from typing import Any

from nbgrader.plugins import LateSubmissionPlugin
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Float

__all__ = ["PenaltyPerDay", "RosterExtension", "late_work", "penalty_words"]

DAY = 24 * 60 * 60


class PenaltyPerDay(LateSubmissionPlugin):
    """A share of the notebook's score for each day, or part of a day, it is late.

    Examples
    --------
    >>> plugin = PenaltyPerDay(percent_per_day=10)
    >>> plugin.late_submission_penalty("ada", 8.0, 3600)      # an hour late: 10 % of 8
    0.8
    >>> plugin.late_submission_penalty("ada", 8.0, 3 * DAY + 1)  # into the 4th day
    3.2
    >>> plugin.late_submission_penalty("ada", 8.0, 30 * DAY)     # never more than the score
    8.0
    """

    percent_per_day = Float(10.0, help="Percent of the notebook's score taken for each day "
                            "(or part of a day) late.").tag(config=True)
    max_percent = Float(100.0, help="The most a late notebook loses, in percent of its "
                        "score.").tag(config=True)

    def late_submission_penalty(self, student_id: str, score: float,
                                total_seconds_late: float) -> float | None:
        """The points ``student_id``'s notebook loses for being ``total_seconds_late`` late."""
        if total_seconds_late <= 0 or not score:
            return None
        days = math.ceil(total_seconds_late / DAY)
        share = min(self.max_percent, self.percent_per_day * days) / 100.0
        return round(score * share, 6)


def penalty_words(percent_per_day: float, max_percent: float = 100.0) -> str:
    """The rule in words, for the guide and the report.

    >>> penalty_words(10)
    '10% of the score for each day or part of a day late, at most 100%'
    """
    return (f"{percent_per_day:g}% of the score for each day or part of a day late, at most "
            f"{max_percent:g}%")


class RosterExtension(NbGraderPreprocessor):
    """Give the submission being autograded the roster's extension, before the penalty.

    nbgrader computes lateness from the submission's ``extension``; this step writes the
    class list's standing extension (``course_roster.extension_minutes``) there. A student
    without one on the roster keeps whatever extension the gradebook already has (one given
    with ``Gradebook.grant_extension`` for this assignment alone).
    """

    def preprocess(self, nb: Any, resources: Any) -> tuple[Any, Any]:
        """Write the roster's extension to this submission; the notebook is unchanged."""
        from nbgrader.api import Gradebook, MissingEntry

        from .roster import roster_extension

        info = resources["nbgrader"]
        extension = roster_extension(info["db_url"], info["student"])
        if extension is None:
            return nb, resources
        with Gradebook(info["db_url"]) as gb:
            try:
                submission = gb.find_submission(info["assignment"], info["student"])
            except MissingEntry:
                return nb, resources
            if submission.extension != extension:
                submission.extension = extension
                gb.db.commit()
                self.log.info("%s: extension of %s from the roster", submission, extension)
        return nb, resources


def late_work(c: Any, *, percent_per_day: float = 10.0, max_percent: float = 100.0) -> None:
    """Penalise late work and honour the roster's extensions, in an ``nbgrader_config.py``.

    Sets :class:`PenaltyPerDay` as nbgrader's late-submission plugin and puts
    :class:`RosterExtension` into ``autograde``'s steps just before ``AssignLatePenalties``.
    Idempotent, and independent of the order of the other ``enable`` calls.

    Raises
    ------
    ValueError
        If a percentage is negative or above 100.
    """
    from nbgrader.converters.autograde import Autograde
    from nbgrader.preprocessors import AssignLatePenalties

    for name, value in (("percent_per_day", percent_per_day), ("max_percent", max_percent)):
        if not 0 <= value <= 100:
            raise ValueError(f"{name} must be from 0 to 100 (got {value!r})")
    c.AssignLatePenalties.plugin_class = PenaltyPerDay
    c.PenaltyPerDay.percent_per_day = float(percent_per_day)
    c.PenaltyPerDay.max_percent = float(max_percent)
    default = Autograde.class_traits()["autograde_preprocessors"].default()
    chain = [pp for pp in (c.Autograde.get("autograde_preprocessors") or default)
             if pp not in (RosterExtension, "course_grading.deadlines.RosterExtension")]
    names = [pp if isinstance(pp, str) else f"{pp.__module__}.{pp.__name__}" for pp in chain]
    late = next((i for i, (pp, n) in enumerate(zip(chain, names, strict=True))
                 if pp is AssignLatePenalties or n.endswith(".AssignLatePenalties")), None)
    if late is None:
        raise ValueError("autograde has no AssignLatePenalties step to put the roster's "
                         f"extensions before (its steps: {names})")
    chain.insert(late, RosterExtension)
    c.Autograde.autograde_preprocessors = chain
