r"""Predictions that close: the student's guess, read back beside what the run measured.

Every lesson asks for a guess before an experiment (a code cell tagged ``predict`` that
holds ``my_guess = ...``), runs the experiment, and then reads the guess back in a cell
of its own:

>>> from course_lib import attention_weights, checks, the_cat_sat
>>> ex = the_cat_sat()
>>> row = attention_weights(ex.Q, ex.K)[0]
>>> part = checks.largest(row, ex.tokens, "the token 'the' gives the most weight to")
>>> checks.compare_guess(..., part)
No guess yet: write it in `my_guess` above as one of 'the', 'cat', 'sat' or 'a tie', then
run that cell and this one; nothing is graded.
>>> checks.compare_guess("sat", part)
Your guess: 'sat'. Measured: 'the' 0.40, 'cat' 0.20, 'sat' 0.40: a tie between 'the' and
'sat'. Partly held: 'sat' gets the most, but not alone: 'the' gets as much.
Why it came out this way: open "What happened" below.

Nothing is graded: each part of the guess is shown beside what was measured, and said in
words to have held, partly held or not held. A guess still ``...`` gets a one-line nudge
and no answer, so a lesson stored as *Run All* leaves it shows none. Why the run came out
as it did stays in the lesson's folded *What happened* cell.

A part of a guess is made by one of :func:`largest` (which name has the largest value, or
a tie), :func:`yes_no`, :func:`nearest` (which of a few numbers the measurement is
nearest), :func:`number` (a number within a tolerance) and :func:`one_of` (one of a few
phrases). Each reads a guess the way a student writes it: ``"Sat"``, ``'a tie'``,
``"yes"``, ``0.5``, ``"above 0.8"``, ``"1e-6"``.

The "say why" prompts of the exercises close the same way: the student writes a sentence
in ``my_reason``, and :func:`compare_reason` then lists what a good answer mentions (kept
here, in :data:`REASONS`, not in the notebook, so that it is not on screen before the
student wrote).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..errors import AttentionInputError
from ..explore.render import feedback_html

__all__ = [
    "REASONS",
    "GuessComparison",
    "Part",
    "compare_guess",
    "compare_reason",
    "largest",
    "nearest",
    "number",
    "one_of",
    "yes_no",
]

HELD = "held"
PARTLY = "partly held"
MISSED = "did not hold"
UNREAD = "could not be read"
NOT_GUESSED = "not guessed"
#: Every outcome a part of a guess can have, in the words the comparison uses.
OUTCOMES = (HELD, PARTLY, MISSED, UNREAD, NOT_GUESSED)

_WHY = 'Why it came out this way: open "What happened" below.'

Judge = Callable[[Any], tuple[str, str]]


@dataclass(frozen=True)
class Part:
    """One part of a prediction, as the run measured it.

    Attributes
    ----------
    about : str
        What this part of the guess is about, as a phrase ("the token 'the' gives the
        most weight to"). It must not state the answer.
    measured : Any
        The measured answer as a student would write it (``'sat'``, ``True``, ``0.88``).
    said : str
        The measurement in words, shown beside the guess.
    judge : callable
        A guess -> (outcome, a sentence saying why, or "").
    form : str
        What a guess looks like, for the nudge ("one of 'the', 'cat' or 'a tie'").
    examples : tuple
        Guesses this part can read (tests try them all).
    """

    about: str
    measured: Any
    said: str
    judge: Judge = field(repr=False)
    form: str = "your guess"
    examples: tuple[Any, ...] = ()


@dataclass(frozen=True)
class GuessComparison:
    """The guess beside the measurement, in words; no grade.

    ``answered`` is False while the guess is still ``...``; ``outcomes`` holds one of
    :data:`OUTCOMES` per part (tests read it); the repr is the text a lesson shows.
    """

    answered: bool
    outcomes: tuple[str, ...]
    message: str

    def __repr__(self) -> str:
        return self.message

    __str__ = __repr__

    def _repr_html_(self) -> str:
        return feedback_html(self.message)


# --------------------------------------------------------------------------------------
# reading a guess (private)
# --------------------------------------------------------------------------------------


def _words(x: Any) -> str:
    """A guess as lower-case words: quotes, brackets and repeated spaces removed."""
    text = str(x).strip().lower()
    text = re.sub(r"[\"'`“”‘’()\[\]{}.,;:!?]", " ", text)
    return " ".join(text.split())


def _shown(x: Any) -> str:
    """A guess or a value as the student wrote it (strings quoted, numbers plain)."""
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x))
    if isinstance(x, (float, np.floating)):
        return f"{float(x):g}"
    return repr(x)


_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def _as_number(guess: Any) -> float | None:
    """A number, or the first number written in a string ("above 0.8" is 0.8)."""
    if isinstance(guess, (bool, np.bool_)):
        return None
    if isinstance(guess, (int, float, np.integer, np.floating)):
        value = float(guess)
        return value if math.isfinite(value) else None
    if isinstance(guess, str):
        found = _NUMBER.search(guess.replace("−", "-").replace("×10^", "e"))
        if found:
            return float(found.group())
    return None


def _fmt(x: float, decimals: int) -> str:
    return f"{x:.{decimals}f}"


def _listed(names: Sequence[str], last: str = "and") -> str:
    quoted = [repr(str(n)) for n in names]
    return (quoted[0] if len(quoted) == 1
            else ", ".join(quoted[:-1]) + f" {last} " + quoted[-1])


# --------------------------------------------------------------------------------------
# the kinds of part
# --------------------------------------------------------------------------------------


_TIE_WORDS = {"tie", "a tie", "tied", "equal", "a draw", "draw", "both"}


def largest(values: ArrayLike, names: Sequence[str], about: str, *, decimals: int = 2,
            what: str = "", said: str | None = None) -> Part:
    """Which name has the largest value (to ``decimals``), or "a tie" when several do.

    A guess names one of ``names`` (any case, quotes or not), says "a tie", or lists the
    tied names. Naming one of several tied names partly holds. The measurement is said as
    the values by name, after ``what`` they are ("how much each row moved") if given.

    Raises
    ------
    AttentionInputError
        If ``values`` is not one row of finite numbers with one name each.

    Examples
    --------
    >>> part = largest([0.25, 0.5, 0.25], ["the", "cat", "sat"], "sat gives half to")
    >>> part.measured, part.said
    ('cat', "'the' 0.25, 'cat' 0.50, 'sat' 0.25: the largest is 'cat'")
    >>> [part.judge(g)[0] for g in ("Cat", "sat", "a tie", "dog")]
    ['held', 'did not hold', 'did not hold', 'could not be read']
    """
    row = np.asarray(values, dtype=np.float64)
    names = [str(n) for n in names]
    if row.ndim != 1 or row.size != len(names) or row.size < 2 or not np.isfinite(row).all():
        raise AttentionInputError(
            f"values must be one row of finite numbers with one name each (got shape "
            f"{row.shape} and {len(names)} names)")
    rounded = row.round(decimals)
    top = [n for n, v in zip(names, rounded, strict=True) if v == rounded.max()]
    measured = top[0] if len(top) == 1 else "a tie"
    shown = ", ".join(f"{n!r} {_fmt(v, decimals)}" for n, v in zip(names, row, strict=True))
    if said is None:
        said = (f"{what}: " if what else "") + shown + (
            f": the largest is {top[0]!r}" if len(top) == 1 else f": a tie between {_listed(top)}")
    lookup = {n.lower(): n for n in names}

    def read(guess: Any) -> set[str] | str | None:
        if isinstance(guess, (tuple, list, set)) and guess:
            picked = {lookup.get(_words(g)) for g in guess}
            return None if None in picked else picked
        if not isinstance(guess, str):
            return None
        w = _words(guess)
        if w in lookup:
            return {lookup[w]}
        if w in _TIE_WORDS:
            return "tie"
        if w.startswith(("a tie", "tie")):  # "a tie between the and sat"
            picked = {lookup[t] for t in w.split() if t in lookup}
            return picked if len(picked) > 1 else "tie"
        return None

    def judge(guess: Any) -> tuple[str, str]:
        picked = read(guess)
        if picked is None:
            return UNREAD, "write one of " + ", ".join(map(repr, names)) + " or 'a tie'"
        if picked == "tie":
            if len(top) > 1:
                return HELD, ""
            return MISSED, f"no tie: {top[0]!r} gets the most, alone"
        if picked == set(top):
            return HELD, ""
        if len(top) > 1 and picked < set(top):
            others = [n for n in top if n not in picked]
            return PARTLY, (f"{_listed(sorted(picked, key=names.index))} gets the most, but "
                            f"not alone: {_listed(others)} gets as much")
        if len(top) > 1 and picked & set(top):
            return PARTLY, f"the tie is between {_listed(top)} only"
        return MISSED, ""

    form = "one of " + ", ".join(map(repr, names)) + " or 'a tie'"
    return Part(about, measured, said, judge, form, (*names, "a tie"))


_YES = {"yes", "y", "true", "it does", "does", "changes", "yes it does"}
_NO = {"no", "n", "false", "it does not", "does not", "doesnt", "doesn t", "no it does not"}


def yes_no(measured: bool, about: str, *, said: str | None = None) -> Part:
    """A yes-or-no part: a guess ``True``/``False`` or ``"yes"``/``"no"``.

    Examples
    --------
    >>> part = yes_no(False, "the table stays symmetric")
    >>> [part.judge(g)[0] for g in (True, "no", "False", "maybe")]
    ['did not hold', 'held', 'held', 'could not be read']
    """
    measured = bool(measured)

    def judge(guess: Any) -> tuple[str, str]:
        if isinstance(guess, (bool, np.bool_)):
            said_yes = bool(guess)
        elif _words(guess) in _YES:
            said_yes = True
        elif _words(guess) in _NO:
            said_yes = False
        else:
            return UNREAD, "write True or False (or 'yes' or 'no')"
        return (HELD, "") if said_yes == measured else (MISSED, "")

    return Part(about, measured, said if said is not None else str(measured), judge,
                "True or False", (True, False))


def nearest(measured: float, options: Sequence[float], about: str, *, log: bool = False,
            decimals: int = 2, said: str | None = None) -> Part:
    """Which of a few numbers the measurement is nearest (on a log scale with ``log``).

    A guess is a number, or words with a number in them ("about 0.5", "above 0.8"); it
    holds when it is nearest the same option as the measurement.

    Raises
    ------
    AttentionInputError
        If ``options`` has fewer than two numbers, or ``log`` meets a number that is not
        positive.

    Examples
    --------
    >>> part = nearest(0.883, [0.06, 0.25, 0.5, 0.8], "the largest weight of a row")
    >>> part.said
    '0.88, nearest about 0.8'
    >>> [part.judge(g)[0] for g in ("above 0.8", 0.5, "most of it")]
    ['held', 'did not hold', 'could not be read']
    """
    opts = [float(o) for o in options]
    value = float(measured)
    if len(opts) < 2 or (log and (min(opts) <= 0 or value <= 0)):
        raise AttentionInputError(
            f"options must be two or more numbers, all positive with log=True (got "
            f"{list(options)} and a measurement of {measured!r})")

    def closest(x: float) -> float:
        if log:
            x = max(x, 1e-300)
            return min(opts, key=lambda o: abs(math.log(x) - math.log(o)))
        return min(opts, key=lambda o: abs(x - o))

    target = closest(value)
    if said is None:
        said = f"{_fmt(value, decimals) if abs(value) >= 10**-decimals else f'{value:.2g}'}"
        said += f", nearest about {target:g}"

    def judge(guess: Any) -> tuple[str, str]:
        x = _as_number(guess)
        if x is None or (log and x <= 0):
            return UNREAD, f"write a number, one of {', '.join(f'{o:g}' for o in opts)}"
        got = closest(x)
        if got == target:
            return HELD, ""
        return MISSED, f"your guess is nearest {got:g}, the run nearest {target:g}"

    return Part(about, value, said, judge,
                "a number: " + ", ".join(f"{o:g}" for o in opts[:-1]) + f" or {opts[-1]:g}",
                tuple(opts))


def number(measured: float, about: str, *, tolerance: float, decimals: int = 2,
           said: str | None = None) -> Part:
    """A number that holds within ``tolerance`` of the measurement.

    Examples
    --------
    >>> part = number(0.0, "each row of J adds up to", tolerance=1e-9)
    >>> [part.judge(g)[0] for g in (0, "1", "zero?")]
    ['held', 'did not hold', 'could not be read']
    """
    value = float(measured)
    if not tolerance >= 0:
        raise AttentionInputError(f"tolerance must be 0 or more (got {tolerance!r})")

    def judge(guess: Any) -> tuple[str, str]:
        x = _as_number(guess)
        if x is None:
            return UNREAD, "write a number"
        return (HELD, "") if abs(x - value) <= tolerance else (MISSED, "")

    return Part(about, value, said if said is not None else _fmt(value, decimals), judge,
                "a number", (round(value, decimals) + 0.0, round(value, decimals) + 1.0))


def one_of(measured: str, options: Sequence[str], about: str, *,
           said: str | None = None) -> Part:
    """One of a few phrases; a guess may be any unambiguous part of one ("close").

    Raises
    ------
    AttentionInputError
        If ``measured`` is not one of ``options``.

    Examples
    --------
    >>> part = one_of("only row 5", ["all six", "only row 5", "rows 0 to 4"], "rows that change")
    >>> [part.judge(g)[0] for g in ("Only row 5", "all", "five")]
    ['held', 'did not hold', 'could not be read']
    """
    opts = [str(o) for o in options]
    if measured not in opts:
        raise AttentionInputError(f"measured must be one of {opts} (got {measured!r})")
    keys = {_words(o): o for o in opts}

    def judge(guess: Any) -> tuple[str, str]:
        w = _words(guess) if isinstance(guess, str) else ""
        found = keys.get(w)
        if found is None and w:
            near = [o for k, o in keys.items() if k.startswith(w) or w.startswith(k)]
            found = near[0] if len(near) == 1 else None
        if found is None:
            return UNREAD, f"write one of {_listed(opts, 'or')}"
        return (HELD, "") if found == measured else (MISSED, "")

    return Part(about, measured, said if said is not None else repr(measured), judge,
                f"one of {_listed(opts, 'or')}", tuple(opts))


# --------------------------------------------------------------------------------------
# the comparison
# --------------------------------------------------------------------------------------


def _unanswered(guess: Any) -> bool:
    return guess is ... or guess is None or (isinstance(guess, str) and not guess.strip())


def compare_guess(guess: Any, *parts: Part, name: str = "my_guess") -> GuessComparison:
    """Show the student's guess beside what the run measured, and say which part held.

    Parameters
    ----------
    guess : Any
        What the student wrote in the predict cell: one value for one part, a tuple (in
        the order of ``parts``) for several. ``...`` is no guess yet.
    *parts : Part
        What was measured, one :class:`Part` per part of the question.
    name : str, default "my_guess"
        The variable the predict cell asks for, named in the nudge.

    Returns
    -------
    GuessComparison
        Its text: the guess, the measurement, and in words whether each part held. With
        no guess, a one-line nudge that shows nothing of the measurement.

    Raises
    ------
    AttentionInputError
        If no part is given (a lesson's mistake, not the student's).
    """
    if not parts or not all(isinstance(p, Part) for p in parts):
        raise AttentionInputError("compare_guess needs one Part per part of the question "
                                  f"(got {[type(p).__name__ for p in parts]})")
    forms = [p.form for p in parts]
    form = (forms[0] if len(parts) == 1
            else f"a tuple of {len(parts)}, each {forms[0]}" if len(set(forms)) == 1
            else "a tuple (" + "; ".join(forms) + ")")
    if _unanswered(guess) or (len(parts) > 1 and isinstance(guess, (tuple, list))
                              and all(_unanswered(g) for g in guess)):
        return GuessComparison(False, (NOT_GUESSED,) * len(parts),
                               f"No guess yet: write it in `{name}` above as {form}, then run "
                               "that cell and this one; nothing is graded.")
    if len(parts) == 1:
        guesses = [guess]
    elif isinstance(guess, (tuple, list)) and len(guess) == len(parts):
        guesses = list(guess)
    else:
        shown = "; ".join(f"{p.about}: {p.said}" for p in parts)
        return GuessComparison(
            True, (UNREAD,) * len(parts),
            f"Your guess: {_shown(guess)}. The question has {len(parts)} parts, so write "
            f"{form}. Measured: {shown}.\n{_WHY}")
    outcomes, lines = [], []
    for part, g in zip(parts, guesses, strict=True):
        if _unanswered(g):
            outcome, detail = NOT_GUESSED, ""
        else:
            outcome, detail = part.judge(g)
        outcomes.append(outcome)
        verdict = outcome[0].upper() + outcome[1:] + (f": {detail}." if detail else ".")
        if len(parts) == 1:
            lines.append(f"Your guess: {_shown(g)}. Measured: {part.said}. {verdict}")
        else:
            said_g = "no guess" if outcome == NOT_GUESSED else f"you said {_shown(g)}"
            lines.append(f"- {part.about}: {said_g}; measured {part.said}. {verdict}")
    head = [] if len(parts) == 1 else ["Your guess beside the run, part by part:"]
    return GuessComparison(True, tuple(outcomes), "\n".join([*head, *lines, _WHY]))


# --------------------------------------------------------------------------------------
# "say why": what a good answer mentions
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Point:
    """One thing a good answer mentions, and words that show a sentence mentions it."""

    text: str
    words: tuple[str, ...]


#: What a good answer to each "say why" prompt mentions, by the exercise it follows.
REASONS: dict[str, tuple[Point, ...]] = {
    "which_is_qkt": (
        Point("in the cat-sat example the keys are the queries (K = Q)",
              ("k = q", "k=q", "same", "equal", "identical")),
        Point("so QKᵀ is symmetric, and B's table, KQᵀ, is its transpose",
              ("symmetric", "transpose", "kq", "swap")),
        Point("only an example with K ≠ Q (or n_q ≠ n_k) tells the two apart",
              ("different", "≠", "!=", "not equal", "shape")),
    ),
    "rows_the_bug_changes": (
        Point("a hidden score of 0 still gets weight e⁰ = 1 before dividing, so a row with "
              "a hidden key keeps some budget for it", ("e^0", "e0", "exp(0)", "weight",
                                                        "not zero", "nonzero", "budget")),
        Point("'sat' hides no key (it is the last token), so its row is unchanged",
              ("sat", "last", "nothing hidden", "no key", "sees every")),
        Point("only −∞ gives weight exactly 0", ("-inf", "−inf", "infinity", "−∞", "-∞")),
    ),
    "mat_key": (
        Point("'sat' scores highest: its query [1, 1] adds both coordinates of the key",
              ("sat",)),
        Point("the key [0.7, 0.1] scores 0.7 with 'the', 0.1 with 'cat' and 0.8 with 'sat'",
              ("0.8", "0.7", "both", "add", "sum")),
    ),
    "head_table_sizes": (
        Point("every head keeps its own n × n table of weights", ("own", "each head",
                                                                 "per head", "every head")),
        Point("splitting d_model makes each head's d_k smaller, not n: the table's size does "
              "not depend on d_k", ("d_k", "dk", "depend", "not on", "n × n", "n x n", "n^2",
                                     "n²")),
    ),
    "table_bytes_doubled": (
        Point("each head's table holds n × n weights, so twice the tokens make it four times "
              "as large (72 MB to 288 MB)", ("four", "4", "quadr", "n²", "n^2", "n × n",
                                             "n x n", "square", "288")),
        Point("the 12 heads' tables grow by the same factor of four (864 MB to about 3.5 GB): "
              "the number of heads does not change", ("same", "both", "heads", "3.5", "3456",
                                                      "12")),
    ),
    "buggy_line": (
        Point("line 2 divides by the square root of Q.shape[0], the number of heads (12), "
              "not of d_k (32)", ("head", "12", "shape[0]", "first axis", "axis 0")),
        Point("dividing by a smaller number leaves the scores larger", ("smaller", "larger",
                                                                        "bigger")),
        Point("so its weights come out sharper than the model's", ("sharper", "peak",
                                                                    "one-hot")),
    ),
}


def compare_reason(reason: Any, exercise: str, *, name: str = "my_reason"
                   ) -> GuessComparison:
    """After the student wrote a sentence: what a good answer to the prompt mentions.

    Parameters
    ----------
    reason : str
        The student's sentence; ``...`` (or an empty string) is none yet.
    exercise : str
        The exercise whose prompt it answers, a key of :data:`REASONS`.
    name : str, default "my_reason"
        The variable the cell asks for, named in the nudge.

    Returns
    -------
    GuessComparison
        With a sentence: it, then each point a good answer mentions, marked where the
        sentence uses a word of it (a hint, not a grade). Without: a one-line nudge.

    Raises
    ------
    AttentionInputError
        If ``exercise`` is not one the course has points for.

    Examples
    --------
    >>> compare_reason(..., "head_table_sizes")
    No sentence yet: write yours in `my_reason` (in quotes), then run this cell to see what a
    good answer mentions; nothing is graded.
    >>> print(compare_reason("Each head has its own table", "head_table_sizes"))
    Your sentence: 'Each head has its own table'. A good answer mentions:
    - every head keeps its own n × n table of weights (yours says 'own');
    - splitting d_model makes each head's d_k smaller, not n: the table's size does not
      depend on d_k (not in your words).
    Compare them with what you wrote; nothing is graded.
    """
    if exercise not in REASONS:
        raise AttentionInputError(f"exercise must be one of {sorted(REASONS)} (got "
                                  f"{exercise!r})")
    points = REASONS[exercise]
    if _unanswered(reason):
        return GuessComparison(False, (NOT_GUESSED,),
                               f"No sentence yet: write yours in `{name}` (in quotes), then "
                               "run this cell to see what a good answer mentions; nothing "
                               "is graded.")
    text = str(reason)
    low = text.lower()
    lines = [f"Your sentence: {text!r}. A good answer mentions:"]
    for i, point in enumerate(points):
        hit = next((w for w in point.words if w in low), None)
        mark = f"yours says {hit!r}" if hit else "not in your words"
        end = ";" if i < len(points) - 1 else "."
        lines.append(f"- {point.text} ({mark}){end}")
    lines.append("Compare them with what you wrote; nothing is graded.")
    return GuessComparison(True, (HELD,), "\n".join(lines))
