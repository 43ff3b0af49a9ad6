"""Instructor-side tools around nbgrader: quiz variants, feedback, grade tables, reports.

Students never import this package; the lesson notebooks import :mod:`course_lib` only.
Each module here has one job and, where it is a command, a ``python -m`` entry point.
"""
