"""Instructor-side tools around nbgrader: quiz variants, feedback, grade tables, reports.

Students never import this package; the lesson notebooks import :mod:`course_lib` only.
Install it with the `grading` extra: ``pip install ".[grading]"``.
Each module here has one job and, where it is a command, a ``python -m`` entry point.
"""
