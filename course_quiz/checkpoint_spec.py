"""The checkpoint quiz, described once: its questions, checks, points and mistakes.

Everything that grades, explains or reports the checkpoint reads this module and nothing
else for these facts: the visible checks students run (:mod:`course_lib.checkpoint_checks`,
also what nbgrader's *Validate* shows), the instructor's grader that decides every check
outside the student's kernel (:mod:`course_grading.verdicts`), the feedback
(:mod:`course_grading.feedback`), the grade table and the class report, the variants and
the submission kinds made for tests.

The checkpoint asks what no lesson and no self-study question answers (issue 30): a
function the lessons do not write (attention weights with each token hidden from itself),
a short derivation on the numbers of the instructor's seeded variant, a measured table to
read, a prediction to explain, and a written answer graded by hand with the instructor's
rubric (kept in the instructor's private source, never here: issue 41).
Every wrong option of a multiple-choice question, and every wrong number of the
derivation, is a named :class:`Misconception`; every wrong function a named
:class:`Mistake`.

**What one mistake costs (decided, issue 33).** The function question's 5 points are one
for the check on the setup cell's example and one for each hidden check, built to catch
one :class:`Mistake` alone. Students run the example's check before handing in, but it
shows them only the form of their weights (shape, zero diagonal, rows summing to 1) and
the mistakes that show in the form; its point is for the weights themselves, judged when
the quiz is graded (issue 41: a check that confirmed the values could be passed by trial
and error). A mistake that the example shows (a missing division by sqrt(d_k), the wrong
axis, d_k from the wrong axis) so costs 2 of the function's 5 points: the example's check
and the hidden check, which names the mistake. A naive exp costs 1 (the example's scores
are too small to overflow); a mistake every check catches (the lessons' plain weights, a
causal mask) costs all 5. The feedback and the class report name the mistake for every
lost point, and call the second one "same mistake as" the first
(:func:`course_grading.gradetable.lost_points`).

It holds no answer, no number of a quiz and no right letter
(``tests/test_checkpoint_answers_hidden.py`` keeps it so): the
numbers and letters live in the instructor's source notebook,
``quiz/source/checkpoint/checkpoint.ipynb`` (its hidden check calls say which letter is
right and which misconception each wrong letter stands for), the right answers and the
answer cell of a student who made each mistake in the instructor's package
(``course_grading.checkpoint_answers``), which computes every expected value when the quiz
is made and graded.

Examples
--------
>>> CHECKPOINT.check("test_missing_scale").mistake
'missing_scale'
>>> [q.id for q in CHECKPOINT.questions]  # doctest: +NORMALIZE_WHITESPACE
['weights_without_self', 'shifted_key', 'mc_read_table', 'mc_duplicate_key',
 'written_shift_or_scale', 'multihead_sizes', 'online_state']
>>> CHECKPOINT.question("weights_without_self").points, CHECKPOINT.total_points
(5, 17)
>>> {part: CHECKPOINT.points_of_part(part) for part in CHECKPOINT.parts}
{1: 13, 2: 2, 3: 2}
>>> CHECKPOINT.question("written_shift_or_scale").manual
True
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["CHECKPOINT", "PARTS", "Check", "Misconception", "Mistake", "Question", "QuizSpec",
           "parse_parts"]

#: The parts of the course (issue 44) a question can assess: part 1 is the equation, parts 2
#: and 3 are optional and build on part 1 only.
PARTS = {
    1: "the equation, term by term",
    2: "attention in a real model",
    3: "under the hood",
}

#: The part every class takes (lessons 01-07); the others are optional.
CORE_PART = 1


def parse_parts(text: str | Iterable[int]) -> tuple[int, ...]:
    """The parts of the course a checkpoint covers, from an instructor's choice.

    ``text`` is part numbers separated by commas (``"1,3"``), or the numbers themselves.
    Part 1 is always covered, whether named or not: it is the course every class takes,
    and the parts 2 and 3 build on it.

    Raises
    ------
    ValueError
        If a part is not one of :data:`PARTS`; the message says what was expected and
        what arrived.

    Examples
    --------
    >>> parse_parts("1,3"), parse_parts("3"), parse_parts([2, 1])
    ((1, 3), (1, 3), (1, 2))
    >>> parse_parts("1,4")
    Traceback (most recent call last):
    ...
    ValueError: parts must be numbers among 1, 2, 3 separated by commas, e.g. '1,3' (got '1,4')
    """
    expected = ", ".join(str(p) for p in PARTS)
    shown = text if isinstance(text, str) else ",".join(str(p) for p in text)
    words = shown.split(",") if isinstance(text, str) else [str(p) for p in text]
    chosen = set()
    for word in words:
        word = word.strip()
        if not word.isdigit() or int(word) not in PARTS:
            raise ValueError(f"parts must be numbers among {expected} separated by commas, "
                             f"e.g. '1,3' (got {shown!r})")
        chosen.add(int(word))
    return tuple(sorted(chosen | {CORE_PART}))

#: What a check reads from the student's notebook, and so how it is judged.
KINDS = {
    "weights": "calls the student's function on (Q, K) and compares the attention weights",
    "output": "reads an array of numbers the student computed and compares it",
    "letter": "reads a multiple-choice letter the student assigned",
}


@dataclass(frozen=True)
class Mistake:
    """A mistake students make in the function answer, and how to name it.

    The answer cell of a student who made it is on the instructor's side only
    (``course_grading.checkpoint_answers.MISTAKE_SOURCES``): it is one edit from the answer.

    Attributes
    ----------
    id : str
        Short name, e.g. ``"missing_scale"``; a hidden check built to catch it alone is
        ``"test_" + id``.
    words : str
        The mistake in the lesson's words, for the grade table and the class report.
    hint : str
        What a failed check says about it (feedback, Validate): names the mistake and what
        it does to the weights, without writing the fix.
    everywhere : bool
        True for a mistake every check must catch (what a copy from the lessons gives:
        the plain weights, lesson 07's causal mask, a mask after the softmax).
    """

    id: str
    words: str
    hint: str
    everywhere: bool = False


@dataclass(frozen=True)
class Misconception:
    """A wrong idea behind a wrong option (or a wrong number) of one question.

    Attributes
    ----------
    id : str
    question : str
        The question (answer cell's grade id) it belongs to.
    words : str
        The misconception, for the grade table and the class report.
    hint : str
        What the feedback says when a student's answer shows it (never the right answer).
    check : str or None
        For a question graded by several output checks (a derivation graded for its
        intermediate quantities and its result), the check whose numbers it explains;
        None for a question with one check.
    """

    id: str
    question: str
    words: str
    hint: str
    check: str | None = None


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
        The :class:`Mistake` this check is built to catch alone (hidden checks), or None.
    hidden : bool
        True when part of the check is hidden from students until grading.
    example : bool
        True for a hidden check whose inputs are the setup cell's example, which the
        student has: only its expected values are hidden (:attr:`on_own_inputs`).
    tolerance : float
        Largest difference from the expected numbers that still passes.
    computes : str or None
        For an ``output`` check: the name of the computation of its expected numbers in
        ``course_grading.checkpoint_answers`` (the instructor's package).
    what, layout : str
        For an ``output`` check: what its numbers are ("the row's new weights") and how
        they are laid out (", one per key"), in the words of its failure messages.
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
    example: bool = False
    tolerance: float = 1e-6
    computes: str | None = None
    what: str = "the right numbers"
    layout: str = ""

    @property
    def on_own_inputs(self) -> bool:
        """Whether the student's code meets only inputs the student has in this check (a
        visible check, or the graded call on the setup cell's example): what it saw may be
        told in full, and it is decided before any hidden input reaches the kernel."""
        return not self.hidden or self.example


@dataclass(frozen=True)
class Question:
    """A question of the quiz: its answer cell, title and points.

    ``part`` is the part of the course it assesses (:data:`PARTS`, issue 44): 1 the
    equation, 2 attention in a real model, 3 under the hood. ``setup`` names the setup
    cell's values that this question alone uses: a checkpoint that leaves its part out
    has neither the question nor those values.

    A question with no checks is graded by hand (the written answer). Its model answer and
    rubric are the instructor's, in their private source notebook
    (:func:`course_grading.variants.read_rubric`): anything written here would be public,
    in the repository and in every student's library.
    """

    id: str
    title: str
    points: int
    checks: tuple[str, ...] = ()
    part: int = 1
    setup: tuple[str, ...] = ()

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
        The function answer's mistakes.
    setup_names : tuple of str
        The names of the locked setup cell whose values checks may use (``Q``, ``K``...).
    course_lib_allowed : bool
        Whether answers may call :mod:`course_lib`. When False the grader runs student code
        where ``course_lib`` cannot be imported, and the feedback says so when an answer
        tried.
    misconceptions : tuple of Misconception
        The wrong ideas behind the other questions' wrong answers.
    letters : str
        The options of the multiple-choice questions.
    covers : tuple of int
        The parts of the course the quiz covers (:data:`PARTS`): every part for the spec
        as written, the instructor's choice for :meth:`for_parts`.
    """

    assignment: str
    notebook: str
    questions: tuple[Question, ...]
    checks: tuple[Check, ...]
    mistakes: tuple[Mistake, ...]
    setup_names: tuple[str, ...]
    course_lib_allowed: bool
    misconceptions: tuple[Misconception, ...] = ()
    letters: str = "ABCD"
    covers: tuple[int, ...] = tuple(PARTS)

    def __post_init__(self) -> None:
        for q in self.questions:
            if not q.manual and sum(self.check(c).points for c in q.checks) != q.points:
                raise ValueError(f"the checks of {q.id!r} must add up to its {q.points} points")
        for m in self.misconceptions:
            self.question(m.question)
            if m.check is not None and self.check(m.check).question != m.question:
                raise ValueError(f"misconception {m.id!r} names check {m.check!r}, which is "
                                 f"not a check of its question {m.question!r}")
        for q in self.questions:
            if q.part not in PARTS:
                raise ValueError(f"question {q.id!r} must assess one of the parts "
                                 f"{sorted(PARTS)} (got {q.part!r})")
            if q.part not in self.covers:
                raise ValueError(f"question {q.id!r} assesses part {q.part}, which the quiz "
                                 f"does not cover (it covers {list(self.covers)})")
            if not set(q.setup) <= set(self.setup_names):
                raise ValueError(f"question {q.id!r} uses setup values the setup cell does "
                                 f"not assign: {sorted(set(q.setup) - set(self.setup_names))}")
        if self.covers != parse_parts(self.covers):
            raise ValueError(f"a quiz covers part {CORE_PART} and parts among {list(PARTS)}, "
                             f"in order (got {list(self.covers)})")

    def for_parts(self, parts: str | Iterable[int]) -> QuizSpec:
        """The quiz as a class that covers ``parts`` of the course takes it: the questions
        of those parts, their checks, misconceptions and setup values (part 1 always).

        The instructor chooses the parts (``python -m course_grading.variants --parts``);
        everything that grades, explains or totals the quiz of that class reads this.

        Examples
        --------
        >>> one = CHECKPOINT.for_parts("1")
        >>> one.covers, one.total_points, "test_online_state" in one.autograded
        ((1,), 13, False)
        >>> CHECKPOINT.for_parts("1,3").total_points, CHECKPOINT.for_parts("3,2").total_points
        (15, 17)
        """
        covers = parse_parts(parts)
        questions = tuple(q for q in self.questions if q.part in covers)
        kept = {q.id for q in questions}
        dropped = {name for q in self.questions if q.id not in kept for name in q.setup}
        return dataclasses.replace(
            self, questions=questions, covers=covers,
            checks=tuple(c for c in self.checks if c.question in kept),
            misconceptions=tuple(m for m in self.misconceptions if m.question in kept),
            setup_names=tuple(n for n in self.setup_names if n not in dropped))

    def dropped_by(self, parts: str | Iterable[int]) -> tuple[Question, ...]:
        """The questions a class that covers only ``parts`` does not take."""
        covers = parse_parts(parts)
        return tuple(q for q in self.questions if q.part not in covers)

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
        """The function mistake with this id."""
        for mistake in self.mistakes:
            if mistake.id == mistake_id:
                return mistake
        raise KeyError(f"unknown mistake {mistake_id!r}: expected one of "
                       f"{', '.join(m.id for m in self.mistakes)}")

    def misconception(self, misconception_id: str) -> Misconception:
        """The misconception with this id."""
        for m in self.misconceptions:
            if m.id == misconception_id:
                return m
        raise KeyError(f"unknown misconception {misconception_id!r}: expected one of "
                       f"{', '.join(m.id for m in self.misconceptions)}")

    def misconceptions_of(self, question_id: str) -> tuple[Misconception, ...]:
        """The misconceptions behind one question's wrong answers."""
        return tuple(m for m in self.misconceptions if m.question == question_id)

    def misconceptions_of_check(self, grade_id: str) -> tuple[Misconception, ...]:
        """The misconceptions one check can name: those of its question that explain its
        numbers (a misconception tied to another check of the question is left out).

        Examples
        --------
        >>> [m.id for m in CHECKPOINT.misconceptions_of_check("test_shift_factors")]
        ['factors_unchanged', 'normaliser_as_weight_sum', 'every_score_raised']
        """
        check_ = self.check(grade_id)
        return tuple(m for m in self.misconceptions_of(check_.question)
                     if m.check in (None, grade_id))

    @property
    def grade_ids(self) -> dict[str, int]:
        """Grade id -> points of every graded cell (checks and hand-graded answers)."""
        out = {c.grade_id: c.points for c in self.checks}
        out.update({q.id: q.points for q in self.questions if q.manual})
        return out

    @property
    def autograded(self) -> dict[str, int]:
        """Grade id -> points of every check (what nbgrader autograde scores)."""
        return {c.grade_id: c.points for c in self.checks}

    @property
    def diagnosed(self) -> dict[str, Mistake]:
        """Hidden check's grade id -> the mistake it is built to catch."""
        return {c.grade_id: self.mistake(c.mistake) for c in self.checks if c.mistake}

    @property
    def parts(self) -> tuple[int, ...]:
        """The parts of the course the quiz's questions assess, in order."""
        return tuple(sorted({q.part for q in self.questions}))

    def points_of_part(self, part: int) -> int:
        """The points of the questions that assess ``part``."""
        return sum(q.points for q in self.questions if q.part == part)

    @property
    def total_points(self) -> int:
        """The quiz's maximum score."""
        return sum(q.points for q in self.questions)


_WEIGHTS_CHECK = dict(question="weights_without_self", points=1,
                      answer="weights_without_self", kind="weights", hidden=True)

#: The checkpoint quiz of the course (nbgrader assignment ``checkpoint``).
CHECKPOINT = QuizSpec(
    assignment="checkpoint",
    notebook="checkpoint",
    setup_names=("tokens", "Q", "K", "row", "shift_key", "c", "dup_query", "dup_key",
                 "n_tokens", "d_model", "n_heads", "block_scores", "block"),
    course_lib_allowed=False,
    questions=(
        Question("weights_without_self", "attention weights with each token hidden from "
                 "itself", 5, (
                     "test_weights_visible", "test_missing_scale", "test_wrong_axis",
                     "test_naive_exp_overflow", "test_dk_from_wrong_axis")),
        Question("shifted_key", "one key's scores raised by c: derive the new row", 2,
                 ("test_shift_factors", "test_shifted_key")),
        Question("mc_read_table", "read a measured table", 2, ("test_mc_read_table",)),
        Question("mc_duplicate_key", "predict, then explain: a token twice", 1,
                 ("test_mc_duplicate_key",)),
        Question("written_shift_or_scale", "in your own words: shift or scale?", 3),
        Question("multihead_sizes", "the sizes and the cost inside a multi-head layer", 2,
                 ("test_multihead_sizes",), part=2, setup=("n_tokens", "d_model", "n_heads")),
        Question("online_state", "an online softmax's state after each block", 2,
                 ("test_online_state",), part=3, setup=("block_scores", "block")),
    ),
    mistakes=(
        Mistake("missing_scale", "forgot to divide the scores by sqrt(d_k)",
                "the weights look like the scores were not divided by sqrt(d_k), so each "
                "row is more peaked than it should be"),
        Mistake("wrong_axis", "softmax over the wrong axis (columns, not rows)",
                "the softmax seems to run down each column (over the queries) instead of "
                "along each row (over the keys)"),
        Mistake("naive_exp_overflow",
                "exp without subtracting the row max: overflows on large scores",
                "on large scores exp overflowed to inf and the weights came out as NaN; "
                "softmax gives the same weights after any shift of a row, which is how it "
                "stays finite"),
        Mistake("dk_from_wrong_axis",
                "took d_k from the wrong axis (number of tokens, not vector dimension)",
                "the scores seem to be divided by the square root of the number of tokens; "
                "d_k is the dimension of each query and key vector"),
        Mistake("no_mask", "did not hide the diagonal (the lessons' plain weights)",
                "each token still gives itself some weight: the diagonal is not hidden",
                everywhere=True),
        Mistake("causal_mask", "used the causal mask instead of hiding the diagonal",
                "the weights look causal (each token sees itself and the tokens before "
                "it), not 'every token but itself'", everywhere=True),
        Mistake("mask_after_softmax", "zeroed the diagonal after the softmax, no renormalising",
                "the diagonal was zeroed after the softmax, so the rows sum to less than 1: "
                "hide a key before the softmax", everywhere=True),
        Mistake("zero_score", "set the hidden scores to 0 instead of -inf",
                "the diagonal's scores seem to be set to 0, which still gives each token a "
                "weight on itself; a hidden key needs a weight of exactly 0", everywhere=False),
    ),
    misconceptions=(
        Misconception("factors_unchanged", "shifted_key",
                      "derived that nothing changes: every factor 1",
                      "every factor is 1, as if nothing changed; but only one key's scores "
                      "were raised, and the shift that changes nothing is one of the whole "
                      "row", check="test_shift_factors"),
        Misconception("normaliser_as_weight_sum", "shifted_key",
                      "took the normaliser for the sum of the weights (always 1), not the "
                      "sum of e^score",
                      "the normaliser's factor is 1, the ratio of the two rows' sums of "
                      "weights, which are 1 before and after; the normaliser is the sum of "
                      "e^score over the row, and raising one key's score by c changes it",
                      check="test_shift_factors"),
        Misconception("every_score_raised", "shifted_key",
                      "took the normaliser to grow by e^c, as if every score were raised",
                      "the normaliser's factor is e^c, which is what raising every score of "
                      "the row by c would give; only one key's e^score grows by e^c",
                      check="test_shift_factors"),
        Misconception("row_shift_rule", "shifted_key",
                      "applied 'a shift changes nothing' to one key's scores",
                      "the row did not change, but only one key's scores were raised: "
                      "the shift that changes nothing is one of the whole row",
                      check="test_shifted_key"),
        Misconception("times_e_c", "shifted_key",
                      "multiplied the key's weight by e^c and did not renormalise",
                      "the key's weight was multiplied by e^c but the row no longer sums "
                      "to 1: the other weights change too", check="test_shifted_key"),
        Misconception("plus_c", "shifted_key", "added c to the key's weight",
                      "c was added to a weight; c is added to scores, before the softmax",
                      check="test_shifted_key"),
        Misconception("division_sharpens", "mc_read_table",
                      "thinks dividing by sqrt(d_k) makes softmax more peaked",
                      "dividing the scores by a number larger than 1 flattens softmax; it "
                      "does not sharpen it"),
        Misconception("scale_like_shift", "mc_read_table",
                      "thinks softmax ignores a division of the scores, like a shift",
                      "a shift of a row leaves softmax unchanged; a division does not"),
        Misconception("misreads_table", "mc_read_table",
                      "read the columns the wrong way round: the flat one as undivided",
                      "the column you chose as undivided is the one whose largest weight "
                      "stays flat: read how each column moves as d_k grows"),
        Misconception("copies_share_weight", "mc_duplicate_key",
                      "thinks two copies of a key share the weight one copy had",
                      "softmax gives each copy the weight of a key with that score: two "
                      "copies take more of the budget, not the same amount split"),
        Misconception("no_renormalising", "mc_duplicate_key",
                      "forgets that each row still sums to 1 after adding a key",
                      "a row of weights always sums to 1, whatever keys are added"),
        Misconception("doubles_weight", "mc_duplicate_key",
                      "doubles the key's weight and shares what is left among the others",
                      "the two copies do not get twice the old weight: each gets e^s over "
                      "the new total, Z + e^s, which is larger than before"),
        Misconception("full_width_heads", "multihead_sizes",
                      "gave each head queries and keys as wide as d_model",
                      "one head's queries and keys look as wide as the whole token vector: "
                      "the heads share d_model between them, each getting d_model / n_heads "
                      "of it"),
        Misconception("features_table", "multihead_sizes",
                      "took a head's table of weights as d_k by d_k, features against "
                      "features",
                      "the table of weights looks d_k by d_k: a head's table has a row per "
                      "query and a column per key, one of each per token"),
        Misconception("shared_table", "multihead_sizes",
                      "counted one table of weights for the whole layer, not one per head",
                      "the count of weights is that of one table: every head computes a table "
                      "of its own"),
        Misconception("cost_with_d_model", "multihead_sizes",
                      "counted the multiply-adds of Q K^T with d_model, not the head's d_k",
                      "the multiply-adds look counted with the whole width d_model: each dot "
                      "product of one head is d_k long"),
        Misconception("no_rescale", "online_state",
                      "kept the running sum as it was when the maximum rose",
                      "after the block that raised the maximum, the running sum still counts "
                      "the earlier terms against the old maximum: when the maximum rises, "
                      "what was summed before must be put on the new maximum's scale"),
        Misconception("rescale_inverted", "online_state",
                      "rescaled the old running sum by e^(m_new - m_old), the wrong way",
                      "the sum kept from earlier blocks was scaled up when the maximum rose; "
                      "its terms e^(s - m) get smaller when m grows"),
        Misconception("unshifted_sum", "online_state",
                      "summed e^s without subtracting the running maximum",
                      "the running sums look like sums of e^s itself; each term is taken "
                      "after subtracting the running maximum, which is what keeps it "
                      "from overflowing"),
        Misconception("block_max", "online_state",
                      "kept each block's own maximum instead of the running one",
                      "after the last block the maximum is that block's own largest score; "
                      "the state keeps the largest score of every block read so far"),
    ),
    checks=(
        Check("test_weights_visible", question="weights_without_self", points=1,
              answer="weights_without_self", kind="weights", hidden=True, example=True,
              looks_at="weights_without_self on the setup cell's example: the shape, rows "
                       "summing to 1, the diagonal (shown in your notebook), and the weights "
                       "(checked when graded)",
              hint="the weights are not softmax(Q K^T / sqrt(d_k)) over each row with the "
                   "diagonal hidden"),
        Check("test_missing_scale", **_WEIGHTS_CHECK, mistake="missing_scale",
              looks_at="whether the scores are divided by sqrt(d_k)",
              hint="the weights are wrong on inputs where only the scale changes them"),
        Check("test_wrong_axis", **_WEIGHTS_CHECK, mistake="wrong_axis",
              looks_at="whether the softmax is taken over each row, so that each query's "
                       "weights sum to 1",
              hint="the weights are wrong on inputs where only the axis changes them"),
        Check("test_naive_exp_overflow", **_WEIGHTS_CHECK, mistake="naive_exp_overflow",
              looks_at="whether the weights are still right when the scores are very large",
              hint="the weights are wrong, or not finite, when the scores are very large"),
        Check("test_dk_from_wrong_axis", **_WEIGHTS_CHECK, mistake="dk_from_wrong_axis",
              looks_at="whether d_k is the dimension of each query and key vector",
              hint="the weights are wrong on inputs where only the value of d_k changes "
                   "them"),
        Check("test_shift_factors", question="shifted_key", points=1,
              answer="shift_factors", kind="output", hidden=True, tolerance=0.005,
              computes="shift_factors",
              what="the factors of your derivation",
              layout=" (the normaliser's, the raised key's weight's, each other weight's)",
              looks_at="the derivation: the factor the new normaliser is of the old one, "
                       "and the factors the raised key's weight and each other weight are "
                       "multiplied by",
              hint="write the row's weights as e^score over the normaliser, the sum of "
                   "e^score over the row; raise one key's score by c and see what happens "
                   "to its e^score, to the normaliser, and so to each weight"),
        Check("test_shifted_key", question="shifted_key", points=1,
              answer="shifted_weights", kind="output", hidden=True, tolerance=0.005,
              computes="shifted_key_row", what="the row's new weights",
              layout=", one per key",
              looks_at="the weights of the row after one key's scores were raised by c",
              hint="derive what raising one column of scores by c does to a row's "
                   "weights: which weights grow, which shrink, and what the row sums to"),
        Check("test_mc_read_table", question="mc_read_table", points=2,
              answer="answer_read_table", kind="letter", hidden=True,
              looks_at="your reading of the measured table",
              hint="not the right reading: compare how each column moves as d_k grows"),
        Check("test_mc_duplicate_key", question="mc_duplicate_key", points=1,
              answer="answer_duplicate_key", kind="letter", hidden=True,
              looks_at="your prediction for a token that appears twice",
              hint="not the right prediction: write out one row's softmax with the key "
                   "counted twice"),
        Check("test_multihead_sizes", question="multihead_sizes", points=2,
              answer="multihead_sizes", kind="output", hidden=True, tolerance=0.001,
              computes="multihead_sizes", what="the sizes and the cost of your layer",
              layout=", in the order the question lists them",
              looks_at="d_k, one head's table of weights, the weights of all heads, the "
                       "concatenated width and one head's multiply-adds for Q K^T",
              hint="write out the shapes one head goes through, from the split of d_model "
                   "to its table of weights, then count"),
        Check("test_online_state", question="online_state", points=2,
              answer="online_state", kind="output", hidden=True, tolerance=0.005,
              computes="online_softmax_state",
              what="the running maximum and sum after each block",
              layout=", two per block (m, then l)",
              looks_at="the running maximum and running sum after each block",
              hint="work through the blocks one at a time: what the largest score read so "
                   "far is, and what the sum of e^(score - that maximum) is, after each"),
    ),
)
