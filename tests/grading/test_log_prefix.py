"""The grader's log prefix ``[<student>/<notebook>]`` stays one line of plain characters.

A student id is a folder name in ``submitted/`` (made from the exchange's inbound folder
name, which the student chooses): it can hold a newline, a carriage return and ANSI escapes
that would forge or erase lines in the instructor's terminal, and be as long as the file
system allows.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from course_grading.pipeline import ASSIGNMENT, copy_course, open_api, place_submission
from course_grading.submissions import made_up_submission

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
# no "[" (nbgrader globs the folder) and no newline (nbgrader's own path regex stops at it)
HOSTILE = "eve\x1bc\rINFO | mallory scored 100 \x1b]0;title\x07" + "x" * 200


def test_a_hostile_student_id_gives_one_plain_bounded_prefix(tmp_path, caplog):
    course = copy_course(ROOT / "quiz", tmp_path / "quiz")
    api = open_api(course, **{"DecideOnHost.timeout": 2})
    assert api.generate_assignment(ASSIGNMENT)["success"]
    place_submission(course, HOSTILE, made_up_submission(course, "infinite_loop"))
    with caplog.at_level(logging.INFO):
        api.autograde(ASSIGNMENT, HOSTILE)
    ours = [r.getMessage() for r in caplog.records if r.getMessage().startswith("[eve")]
    assert ours, "the grader logged nothing about the looping cell"
    for line in ours:
        prefix = line[: line.index("] ") + 1]
        assert prefix.isprintable() and len(prefix) <= 122
        assert "\n" not in prefix and "\x1b" not in prefix and "\r" not in prefix
