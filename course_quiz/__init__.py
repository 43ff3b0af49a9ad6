"""The course's quizzes as students have them: the self-study quiz, and the checkpoint's spec
and visible checks. No answer is here: the checkpoint's answers, hidden tests and grading
live in the instructor's package, ``course_grading``.

- :mod:`course_quiz.self_study`: the self-study quiz of the checkpoint notebook, with
  instant feedback (its questions sealed in :mod:`course_quiz._self_study_bank`);
- :mod:`course_quiz.checkpoint_spec`: the graded checkpoint described once (its questions,
  checks, points and the mistakes each check names), read by the grader and the feedback;
- :mod:`course_quiz.checkpoint_checks`: the checks the checkpoint's test cells call, which
  judge an answer as plain data.

It uses the students' library (:mod:`course_lib`) and is apart from it: the lessons' library
holds no quiz.
"""
