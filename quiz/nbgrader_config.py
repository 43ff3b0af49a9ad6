"""nbgrader configuration of the checkpoint quiz: run every nbgrader command from quiz/.

This directory is the nbgrader course directory (source/, release/, submitted/,
autograded/, feedback/ and gradebook.db all live here). docs/instructors.md
shows the commands.
"""

import os
import warnings

from sqlalchemy.exc import SAWarning

c = get_config()  # noqa: F821 (traitlets provides get_config when it loads this file)

c.CourseDirectory.course_id = "attention-course"
# The course directory is this file's directory, wherever nbgrader is started from.
c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))
# A secret variant (python -m course_grading.variants --seed ...) is written to
# secret_source/, which git ignores; while that directory exists it is the course's source
# (release, autograde and formgrader use it). rm -r secret_source to go back to source/.
if os.path.isdir(os.path.join(c.CourseDirectory.root, "secret_source")):
    c.CourseDirectory.source_directory = "secret_source"

# Grading runs every cell with a time limit: a student's infinite loop is interrupted
# after this many seconds (the cell records a timeout error) and grading goes on with
# the next cell. Every cell of the quiz takes well under a second.
c.Execute.timeout = 10
c.Execute.interrupt_on_timeout = True

# A student who deleted a test cell gets it back (and graded) instead of a silent 0.
c.OverwriteCells.add_missing_cells = True

# Autograding decides every check on the instructor's side (course_grading/verdicts.py):
# student code runs in a bubblewrap sandbox (course_grading/sandbox.py: no network, none
# of the instructor's files, writes only to a scratch dir, limits on memory, processes and
# time); the grader asks that kernel for plain data only and compares it here with values
# it computes with course_lib. Student markdown and outputs are made inert before
# formgrader or feedback show them; feedback explains each check in words and never shows
# a hidden one (course_grading/feedback.py). Without bubblewrap, autograding refuses to
# run and says how to install it. A notebook has 30 s in all (an honest one needs ~2 s).
from course_grading.verdicts import enable  # noqa: E402

enable(c, wall_time_limit=30)

# Per-student variants (python -m course_grading.variants --seed ..., the normal way to run
# a class): while secret_source/variant_secret exists, each submission is graded with the
# numbers of the student it was collected from (submitted/<student>/), derived from that
# secret and the student's id; the numbers in the notebook are never read.
# course_grading/personal.py; the release and hand-out of each student's own notebook too.
_secret = os.path.join(c.CourseDirectory.root, "secret_source", "variant_secret")
if os.path.isfile(_secret):
    from course_grading.personal import enable as per_student

    per_student(c, _secret)

# No feedback while a written answer waits to be graded by hand (formgrader's Manual
# Grading): generate_feedback refuses such a student's notebook, naming the cells, unless
# c.ManualGradesFirst.allow_pending = True (or --ManualGradesFirst.allow_pending=True).
from course_grading.feedback import guard_feedback  # noqa: E402

guard_feedback(c)

# Late work (course_grading/deadlines.py): a submission that comes after its due date
# (nbgrader db assignment add checkpoint --duedate="..."; without one nothing is late) loses
# 10% of its score for each day or part of a day; a student's extension from the class list
# (python -m course_grading.roster load class.csv) moves their due date.
from course_grading.deadlines import late_work  # noqa: E402

late_work(c, percent_per_day=10)

# nbgrader warns "Attribute 'checksum' ... has changed!" for every check with hidden tests of
# every student, because it compares the source with what the student got; that warning now
# means that the student changed the check (course_grading/quiet_overwrite.py).
from course_grading.quiet_overwrite import quiet_overwrite  # noqa: E402

quiet_overwrite(c)

# nbgrader 0.9.6's gradebook reads a new submission's relationships before adding it to its
# session, so SQLAlchemy warns "Object of type <SubmittedAssignment> not in session" (three
# times) at each student's first autograde. The rows are written all the same (the grading
# tests read every grade back); this message, and only it, is not shown.
warnings.filterwarnings("ignore", message=r"Object of type <Submitted\w+> not in session",
                        category=SAWarning)
