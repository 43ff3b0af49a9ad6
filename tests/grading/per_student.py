"""A class graded twice on per-student variants: nbgrader's autograde and the course's engine.

The shape three pipeline tests share (test_personal_pipeline, test_parts_pipeline,
test_skimmed_coder): a copy of quiz/ gets per-student variants as an instructor makes them
(``python -m course_grading.variants --seed SECRET [--parts ...]``), is released with
nbgrader's ``generate_assignment``, the students go into the gradebook, their submissions are
placed in ``submitted/``, and then a copy of the course is graded by the engine
(``course_grading.parallel.grade_all``) while the original is autograded by nbgrader
(``NbGraderAPI.autograde``), so the two can be compared item by item.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from course_grading import variants
from course_grading.parallel import grade_all
from course_grading.pipeline import ASSIGNMENT, copy_course, open_api, place_submission

QUIZ = Path(__file__).resolve().parents[2] / "quiz"
NOTEBOOK = "checkpoint.ipynb"

#: What a test hands in: for a course folder, each student's files (name -> bytes).
Submissions = Callable[[Path], Mapping[str, Mapping[str, bytes]]]


def graded_by_both(root: Path, secret: str, submit: Submissions,
                   parts: str | None = None) -> dict[str, Any]:
    """Make the class in ``root``, hand in ``submit(course)``, grade it by both graders.

    Returns
    -------
    dict
        ``nbgrader``: the course autograded by nbgrader (``root/quiz``); ``engine``: the
        copy graded by the engine (``root/engine/quiz``); ``log``: nbgrader's autograde log.
    """
    course = copy_course(QUIZ, root / "quiz")
    chosen = ["--parts", parts] if parts is not None else []
    assert variants.main(["--seed", secret, *chosen, "--template",
                          str(course / "source" / ASSIGNMENT / NOTEBOOK)]) == 0
    api = open_api(course)
    result = api.generate_assignment(ASSIGNMENT)
    assert result["success"], result.get("error")
    handed_in = submit(course)
    with api.gradebook as gb:
        for student in handed_in:
            gb.add_student(student)
    for student, files in handed_in.items():
        place_submission(course, student, files)
    engine = shutil.copytree(course, root / "engine" / "quiz")
    result = open_api(course).autograde(ASSIGNMENT, "*")
    assert result["success"], result.get("error")
    summary = grade_all(engine, ASSIGNMENT, jobs=2, progress=False)
    assert all(r.ok for r in summary.results), summary.render()
    return {"nbgrader": course, "engine": engine, "log": result.get("log", "")}
