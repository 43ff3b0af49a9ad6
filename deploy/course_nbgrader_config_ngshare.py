# What a JupyterHub class whose exchange is ngshare adds to the quiz's own course
# configuration: the instructor's <home>/attention-course/nbgrader_config.py is
# quiz/nbgrader_config.py followed by this file (mode 0600). See docs/deploy.md.
c = get_config()  # noqa: F821 (provided by traitlets when it loads this file)

# release_feedback refuses while any student it would release to has answers that wait to be
# graded by hand (formgrader's Manual Grading), naming them, before anything goes to ngshare;
# generate_feedback refuses the same (quiz/nbgrader_config.py).
# --ManualGradesFirst.allow_pending=True sends it anyway. Here, not in the global config:
# students' nbgrader reads that one, and students cannot import course_grading.
c.ExchangeFactory.release_feedback = "course_grading.feedback.CheckedNgshareReleaseFeedback"

# With per-student variants (python -m course_grading.variants --seed ...), the release also
# uploads each student's own notebook; the course's ngshare fetch gives each their own.
c.ExchangeFactory.release_assignment = "course_grading.personal.PersonalNgshareRelease"
