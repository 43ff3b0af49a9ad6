# The global nbgrader configuration of the course, read by every user's nbgrader
# (students and instructor alike). Install it as /etc/jupyter/nbgrader_config.py, or as
# <env>/etc/jupyter/nbgrader_config.py of the class's shared environment.
# See docs/deploy.md.
c = get_config()  # noqa: F821 (provided by traitlets when it loads this file)

# One course on this server: students need not pass --course.
c.CourseDirectory.course_id = "attention-course"

# nbgrader's filesystem exchange. Root creates it once (see docs/deploy.md for the modes);
# the instructor's release creates nothing new because root pre-created the course's folders.
c.Exchange.root = "/srv/nbgrader/exchange"


# Submissions readable by the student and the instructor's group only (plain nbgrader makes
# them world-readable, hidden by an unguessable name). Needs course_exchange (not
# course_grading, which students cannot import: docs/deploy.md step 3) in the environment.
c.ExchangeFactory.submit = "course_exchange.exchange.PrivateSubmit"

# Per-student variants: a student's fetch gives them the notebook the instructor released
# with their own numbers (readable by them only), in place of the class's template.
c.ExchangeFactory.fetch_assignment = "course_exchange.exchange.PersonalFetch"
