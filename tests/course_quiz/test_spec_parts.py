"""The checkpoint's parts are the course's parts: same numbers, same titles, same core.

``course_quiz.checkpoint_spec.PARTS`` (what an instructor chooses with ``--parts`` and what
the report names) repeats ``scripts/lesson_index.PARTS`` (what the lessons' metadata and the
contents page use), because the students' and graders' packages do not ship ``scripts/``.
This test ties the two copies together.
"""

from __future__ import annotations

import sys
from pathlib import Path

from course_quiz.checkpoint_spec import CHECKPOINT, CORE_PART, PARTS

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import lesson_index  # noqa: E402  (scripts/lesson_index.py: the notebooks, by their metadata)


def test_the_spec_names_the_parts_as_the_lessons_do() -> None:
    assert sorted(PARTS) == sorted(lesson_index.PARTS)
    for number, title in PARTS.items():
        assert title.casefold() == lesson_index.PARTS[number].casefold(), number


def test_the_core_part_is_the_one_no_class_can_leave_out() -> None:
    assert CORE_PART not in lesson_index.OPTIONAL_PARTS
    assert sorted({CORE_PART, *lesson_index.OPTIONAL_PARTS}) == sorted(PARTS)


def test_every_part_the_checkpoint_assesses_has_lessons() -> None:
    for part in CHECKPOINT.parts:
        assert lesson_index.lessons(ROOT / "notebooks", part=part), part
    assert set(CHECKPOINT.parts) == set(PARTS)  # the default checkpoint covers every part
