"""The checkpoint quiz, described once: its questions, checks, points and mistakes.

Everything that grades, explains or reports the checkpoint reads this module and nothing
else for these facts: the visible checks students run (:mod:`course_lib.checkpoint_checks`,
also what nbgrader's *Validate* shows), the instructor's grader that decides every check
outside the student's kernel (:mod:`course_grading.verdicts`), the feedback
(:mod:`course_grading.feedback`), the grade table and the class report, the variants and
the submission kinds made for tests.

It holds no answer: the numbers of a quiz (the worked example, the hidden checks' inputs,
the right letters) live in the instructor's source notebook,
``quiz/source/checkpoint/checkpoint.ipynb``, and every expected value is computed from
them with :mod:`course_lib` when the quiz is graded. The likely mistakes are spelled out
as wrong answers (:attr:`Mistake.source`), so that a failed check can say which mistake it
saw.

Examples
--------
>>> CHECKPOINT.check("test_missing_scale").mistake
'missing_scale'
>>> [q.id for q in CHECKPOINT.questions]
['attention_weights', 'sat_output', 'mc_why_scale', 'mc_causal_mask', 'written_scaling']
>>> CHECKPOINT.question("attention_weights").points
5
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CHECKPOINT", "Check", "Mistake", "Question", "QuizSpec"]

#: What a check reads from the student's notebook, and so how it is judged.
KINDS = {
    "weights": "calls the student's function on (Q, K) and compares the attention weights",
    "output": "reads an array of numbers the student computed and compares it",
    "letter": "reads a multiple-choice letter the student assigned",
}


@dataclass(frozen=True)
class Mistake:
    """A mistake students make in a function answer, and how to name it.

    Attributes
    ----------
    id : str
        Short name, e.g. ``"missing_scale"``; the hidden check built to catch it is
        ``"test_" + id``.
    words : str
        The mistake in the lesson's words, for the grade table and the class report.
    hint : str
        What a failed check says about it (feedback, Validate): names the mistake and what
        it does to the weights, without writing the fix.
    source : str
        The answer cell of a student who made exactly this mistake (plain numpy).
    """

    id: str
    words: str
    hint: str
    source: str


@dataclass(frozen=True)
class Check:
    """One graded check (an nbgrader test cell) of the quiz.

    Attributes
    ----------
    grade_id : str
        The nbgrader grade id of the test cell.
    question : str
        The question (answer cell's grade id) whose points it carries.
    points : int
    answer : str
        The name the check reads in the student's notebook (a function or a variable).
    kind : str
        One of :data:`KINDS`.
    looks_at : str
        What the check looks at, in words (feedback starts with it).
    hint : str
        What a failure usually means, when no known mistake explains it.
    mistake : str or None
        The :class:`Mistake` this check is built to catch (hidden checks), or None.
    hidden : bool
        True when part of the check is hidden from students until grading.
    tolerance : float
        Largest difference from the expected numbers that still passes.
    """

    grade_id: str
    question: str
    points: int
    answer: str
    kind: str
    looks_at: str
    hint: str
    mistake: str | None = None
    hidden: bool = False
    tolerance: float = 1e-6


@dataclass(frozen=True)
class Question:
    """A question of the quiz: its answer cell, title and points.

    A question with no checks is graded by hand (the written answer).
    """

    id: str
    title: str
    points: int
    checks: tuple[str, ...] = ()

    @property
    def manual(self) -> bool:
        """True when the instructor grades this question by hand."""
        return not self.checks


@dataclass(frozen=True)
class QuizSpec:
    """A quiz: its nbgrader names, questions, checks and mistakes.

    Attributes
    ----------
    assignment, notebook : str
        nbgrader's assignment id and the notebook's name (without ``.ipynb``).
    questions : tuple of Question
        In notebook order.
    checks : tuple of Check
        In notebook order.
    mistakes : tuple of Mistake
    setup_names : tuple of str
        The names of the locked setup cell whose values checks may use (``Q``, ``K``...).
    course_lib_allowed : bool
        Whether answers may call :mod:`course_lib`. When False the grader runs student code
        where ``course_lib`` cannot be imported, and the feedback says so when an answer
        tried.
    letters : str
        The options of the multiple-choice questions.
    """

    assignment: str
    notebook: str
    questions: tuple[Question, ...]
    checks: tuple[Check, ...]
    mistakes: tuple[Mistake, ...]
    setup_names: tuple[str, ...]
    course_lib_allowed: bool
    letters: str = "ABCD"

    def check(self, grade_id: str) -> Check:
        """The check with this grade id.

        Raises
        ------
        KeyError
            If the quiz has no such check; the message lists the ones it has.
        """
        for check in self.checks:
            if check.grade_id == grade_id:
                return check
        raise KeyError(f"the {self.assignment} quiz has no check {grade_id!r} (it has "
                       f"{', '.join(c.grade_id for c in self.checks)})")

    def question(self, question_id: str) -> Question:
        """The question with this id (its answer cell's grade id)."""
        for question in self.questions:
            if question.id == question_id:
                return question
        raise KeyError(f"the {self.assignment} quiz has no question {question_id!r} (it has "
                       f"{', '.join(q.id for q in self.questions)})")

    def mistake(self, mistake_id: str) -> Mistake:
        """The mistake with this id."""
        for mistake in self.mistakes:
            if mistake.id == mistake_id:
                return mistake
        raise KeyError(f"unknown mistake {mistake_id!r}: expected one of "
                       f"{', '.join(m.id for m in self.mistakes)}")

    @property
    def grade_ids(self) -> dict[str, int]:
        """Grade id -> points of every graded cell (checks and hand-graded answers)."""
        out = {c.grade_id: c.points for c in self.checks}
        out.update({q.id: q.points for q in self.questions if q.manual})
        return out

    @property
    def diagnosed(self) -> dict[str, Mistake]:
        """Hidden check's grade id -> the mistake it is built to catch."""
        return {c.grade_id: self.mistake(c.mistake) for c in self.checks if c.mistake}

    @property
    def total_points(self) -> int:
        """The quiz's maximum score."""
        return sum(q.points for q in self.questions)


_MISSING_SCALE = '''\
def attention_weights(Q, K):
    """Row-wise softmax of Q K^T (the scale is missing)."""
    Q = np.asarray(Q, dtype=float)
    K = np.asarray(K, dtype=float)
    scores = Q @ K.T
    scores = scores - scores.max(axis=-1, keepdims=True)
    e = np.exp(scores)
    return e / e.sum(axis=-1, keepdims=True)
'''

_WRONG_AXIS = '''\
def attention_weights(Q, K):
    """Softmax of Q K^T / sqrt(d_k) over axis 0 (the columns) instead of the rows."""
    Q = np.asarray(Q, dtype=float)
    K = np.asarray(K, dtype=float)
    scores = Q @ K.T / np.sqrt(Q.shape[-1])
    scores = scores - scores.max(axis=0, keepdims=True)
    e = np.exp(scores)
    return e / e.sum(axis=0, keepdims=True)
'''

_NAIVE_EXP = '''\
def attention_weights(Q, K):
    """Row-wise softmax of Q K^T / sqrt(d_k), without subtracting the row maximum."""
    Q = np.asarray(Q, dtype=float)
    K = np.asarray(K, dtype=float)
    scores = Q @ K.T / np.sqrt(Q.shape[-1])
    e = np.exp(scores)
    return e / e.sum(axis=-1, keepdims=True)
'''

_DK_WRONG_AXIS = '''\
def attention_weights(Q, K):
    """Row-wise softmax of Q K^T / sqrt(n), with d_k read from the wrong axis."""
    Q = np.asarray(Q, dtype=float)
    K = np.asarray(K, dtype=float)
    d_k = Q.shape[0]
    scores = Q @ K.T / np.sqrt(d_k)
    scores = scores - scores.max(axis=-1, keepdims=True)
    e = np.exp(scores)
    return e / e.sum(axis=-1, keepdims=True)
'''

_ATTENTION_CHECK = dict(question="attention_weights", points=1, answer="attention_weights",
                        kind="weights", hidden=True)

#: The checkpoint quiz of the course (nbgrader assignment ``checkpoint``).
CHECKPOINT = QuizSpec(
    assignment="checkpoint",
    notebook="checkpoint",
    setup_names=("tokens", "Q", "K", "V"),
    course_lib_allowed=False,
    questions=(
        Question("attention_weights", "the attention weights", 5, (
            "test_attention_weights_visible", "test_missing_scale", "test_wrong_axis",
            "test_naive_exp_overflow", "test_dk_from_wrong_axis")),
        Question("sat_output", "the output for 'sat'", 1, ("test_sat_output",)),
        Question("mc_why_scale", "why divide by sqrt(d_k)?", 1, ("test_mc_why_scale",)),
        Question("mc_causal_mask", "what does a causal mask change?", 1,
                 ("test_mc_causal_mask",)),
        Question("written_scaling", "in your own words", 2),
    ),
    mistakes=(
        Mistake("missing_scale", "forgot to divide the scores by sqrt(d_k)",
                "the weights look like softmax(Q K^T): the scores were not divided by "
                "sqrt(d_k), so each row is more peaked than it should be",
                _MISSING_SCALE),
        Mistake("wrong_axis", "softmax over the wrong axis (columns, not rows)",
                "the softmax seems to run down each column (over the queries) instead of "
                "along each row (over the keys), so a row of weights does not sum to 1",
                _WRONG_AXIS),
        Mistake("naive_exp_overflow",
                "exp without subtracting the row max: overflows on large scores",
                "on large scores exp overflowed to inf and the weights came out as NaN; "
                "softmax gives the same weights after any shift of a row, which is how it "
                "stays finite",
                _NAIVE_EXP),
        Mistake("dk_from_wrong_axis",
                "took d_k from the wrong axis (number of tokens, not vector length)",
                "the scores seem to be divided by the square root of the number of tokens; "
                "d_k is the length of each query and key vector",
                _DK_WRONG_AXIS),
    ),
    checks=(
        Check("test_attention_weights_visible", question="attention_weights", points=1,
              answer="attention_weights", kind="weights",
              looks_at="attention_weights on the worked example: the shape, rows summing "
                       "to 1, the weights",
              hint="compare your weights with the worked example in the lessons, row by "
                   "row"),
        Check("test_missing_scale", **_ATTENTION_CHECK, mistake="missing_scale",
              looks_at="whether attention_weights divides the scores by sqrt(d_k)",
              hint="the weights are not softmax(Q K^T / sqrt(d_k)) on inputs where only "
                   "the scale changes them"),
        Check("test_wrong_axis", **_ATTENTION_CHECK, mistake="wrong_axis",
              looks_at="whether the softmax is taken over each row, so that each query's "
                       "weights sum to 1",
              hint="the weights are not softmax over each row on inputs where only the "
                   "axis changes them"),
        Check("test_naive_exp_overflow", **_ATTENTION_CHECK, mistake="naive_exp_overflow",
              looks_at="whether attention_weights still works when the scores are very "
                       "large",
              hint="the weights are wrong, or not finite, when the scores are very large"),
        Check("test_dk_from_wrong_axis", **_ATTENTION_CHECK, mistake="dk_from_wrong_axis",
              looks_at="whether d_k is the length of each query and key vector",
              hint="the weights are wrong on inputs where only the value of d_k changes "
                   "them"),
        Check("test_sat_output", question="sat_output", points=1, answer="sat_output",
              kind="output", hidden=True, tolerance=0.005,
              looks_at="the attention output for 'sat' in the worked example",
              hint="recompute the third row of softmax(QK^T / sqrt(d_k)) V for the worked "
                   "example from the exact weights and round only the result (weights "
                   "rounded first move it by more than 0.005)"),
        Check("test_mc_why_scale", question="mc_why_scale", points=1,
              answer="answer_why_scale", kind="letter", hidden=True,
              looks_at="your answer to 'why divide by sqrt(d_k)?'",
              hint="not the right option: reread what happens to softmax when the scores "
                   "grow with d_k"),
        Check("test_mc_causal_mask", question="mc_causal_mask", points=1,
              answer="answer_causal_mask", kind="letter", hidden=True,
              looks_at="your answer to 'what does a causal mask change?'",
              hint="not the right option: reread what a masked row of weights sums to"),
    ),
)
