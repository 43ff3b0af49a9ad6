"""nbgrader configuration of the checkpoint quiz: run every nbgrader command from quiz/.

This directory is the nbgrader course directory (source/, release/, submitted/,
autograded/, feedback/ and gradebook.db all live here). The README's section
"For instructors: the checkpoint quiz" shows the commands.
"""

import os

from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
from nbgrader.preprocessors import GetGrades

from course_grading.feedback import ExplainChecks

c = get_config()  # noqa: F821 (traitlets provides get_config when it loads this file)

c.CourseDirectory.course_id = "attention-course"
# The course directory is this file's directory, wherever nbgrader is started from.
c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))

# Grading runs every cell with a time limit: a student's infinite loop is interrupted
# after this many seconds (the cell records a timeout error) and grading goes on with
# the next cell. Every cell of the quiz takes well under a second.
c.Execute.timeout = 10
c.Execute.interrupt_on_timeout = True

# A student who deleted a test cell gets it back (and graded) instead of a silent 0.
c.OverwriteCells.add_missing_cells = True

# Feedback explains each failed check in words and never shows a hidden test's source,
# nor a traceback that quotes it (see course_grading/feedback.py).
c.GenerateFeedback.preprocessors = [GetGrades, CSSHTMLHeaderPreprocessor, ExplainChecks]

# Autograding runs student code in a bubblewrap sandbox (course_grading/sandbox.py):
# no network, none of the instructor's files (source/, the gradebook, other students),
# writes only to a scratch dir, limits on memory, processes and time. Without bubblewrap,
# autograding refuses to run and says how to install it.
from course_grading.sandbox import enable  # noqa: E402

enable(c)
