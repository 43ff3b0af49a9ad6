# What a JupyterHub class adds to the quiz's own course configuration. The instructor's
# <home>/attention-course/nbgrader_config.py is quiz/nbgrader_config.py followed by this file
# (mode 0600, in a 0700 directory: it may hold the gradebook's database password).
# The instructor runs every nbgrader command in that directory. See docs/deploy.md.
c = get_config()  # noqa: F821 (provided by traitlets when it loads this file)

# Refuse submissions whose files do not belong to the student they name: plain nbgrader
# accepts `nbgrader submit --student=<someone else>` and collects it, with only a warning.
c.ExchangeFactory.collect = "course_exchange.exchange.OwnerCheckedCollect"

# With per-student variants (python -m course_grading.variants --seed ...), the release also
# gives each student of the gradebook's class list a notebook of their own numbers, readable
# by them only; students' PersonalFetch (deploy/nbgrader_config.py) hands it to them.
c.ExchangeFactory.release_assignment = "course_grading.personal.PersonalRelease"

# release_feedback refuses while any student it would release to has answers that wait to be
# graded by hand (formgrader's Manual Grading), naming them; generate_feedback refuses the
# same (quiz/nbgrader_config.py). --ManualGradesFirst.allow_pending=True sends it anyway.
c.ExchangeFactory.release_feedback = "course_grading.feedback.CheckedReleaseFeedback"

# The gradebook. The default is SQLite in this directory (gradebook.db). For a large class,
# or several instructors grading at once, use PostgreSQL (see docs/deploy.md):
# c.CourseDirectory.db_url = "postgresql+psycopg2://instructor:PASSWORD@127.0.0.1:5432/gradebook"
