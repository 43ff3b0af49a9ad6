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

import hashlib
import re
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
                   parts: str | None = None, options: str | None = None) -> dict[str, Any]:
    """Make the class in ``root``, hand in ``submit(course)``, grade it by both graders.

    ``options``, when given, is the text of the instructor's option bank
    (``--options FILE``, :mod:`course_grading.option_bank`).

    Returns
    -------
    dict
        ``nbgrader``: the course autograded by nbgrader (``root/quiz``); ``engine``: the
        copy graded by the engine (``root/engine/quiz``); ``log``: nbgrader's autograde log.
    """
    course = copy_course(QUIZ, root / "quiz")
    chosen = ["--parts", parts] if parts is not None else []
    if options is not None:
        (root / "my-options.md").write_text(options, encoding="utf-8")
        chosen += ["--options", str(root / "my-options.md")]
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


def public_wording_letters(read_table: Mapping[str, str], duplicate_key: Mapping[str, str],
                           fallback: str = "A") -> dict[str, str]:
    """The "rule" student's letters (letter -> option text of questions 3 and 4 in):
    a rule read off the public option templates, no code and no reasoning. Question 3: of
    the options worded as the public right template, the one whose quoted column climbs
    higher; question 4: of the two worded as the public right template, the one whose
    "together" is smaller (the right 2w / (1 + w), not its twin's 2w). Where no option is
    worded that way (the course has a bank of its own texts), the rule has nothing to go
    on and the student writes ``fallback``."""
    twins = {k: t for k, t in read_table.items() if "is the one without the division" in t}
    climb = {k: float(m[1]) for k, t in twins.items()
             if (m := re.search(r"goes from [\d.]+ to ([\d.]+)", t))}
    pairs = {k: float(m[1]) for k, t in duplicate_key.items()
             if "takes more of the budget" in t
             and (m := re.search(r"together get ([\d.]+) \(one copy had [\d.]+\)", t))}
    return {"mc_read_table": max(climb, key=climb.get) if climb else fallback,
            "mc_duplicate_key": min(pairs, key=pairs.get) if pairs else fallback}


#: Texts of the test's own (each gets a drawn marker word; none names its key).
TEXTS = {
    "mc_read_table": {
        "right": "{U} has no 1/sqrt(d_k): its top weight runs {u_first} -> {u_last}, and {D} "
                 "sits near {d_mean}.",
        "division_sharpens": "{U} is divided by sqrt(d_k), and dividing sharpens it: "
                             "{u_first} -> {u_last}.",
        "scale_like_shift": "The division cannot matter; {u_last} against {d_last} at "
                            "d_k = {dk_last} is chance.",
        "misreads_table": "{D} has no 1/sqrt(d_k): its top weight runs {d_first} -> "
                          "{d_last}, and {U} sits near {u_mean}.",
    },
    "mc_duplicate_key": {
        "right": "The pair of '{dup}' gets {pair} (one copy: {w}); others times {shrink}.",
        "copies_share_weight": "The copies split {w}: {half} each; nothing else moves.",
        "no_renormalising": "Each copy keeps {w}; the row adds up to {one_plus_w}.",
        "doubles_weight": "The pair of '{dup}' gets {double} (one copy: {w}); others times "
                          "{rest}.",
    },
}


def bank_text(nonce: str, texts: dict = TEXTS, marked: bool = True) -> str:
    """The markdown of a bank whose every text carries a marker made from ``nonce``."""
    lines = ["# my checkpoint's options (private)", ""]
    for question, options in texts.items():
        lines += [f"## {question}", "", "Some words of mine, ignored.", ""]
        for key, text in options.items():
            lines.append(f"- {key}: {marker(nonce, question, key) + ' ' if marked else ''}"
                         f"{text}")
        lines.append("")
    return "\n".join(lines)


def marker(nonce: str, question: str, key: str) -> str:
    return "Z" + hashlib.sha256(f"{nonce}/{question}/{key}".encode()).hexdigest()[:10]
