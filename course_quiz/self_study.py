"""The self-study quiz: pick an answer, read at once why it is right or wrong.

For learners without an instructor. Seven questions on what the lessons taught, each
naming the lesson that teaches it: why divide by sqrt(d_k) (03), what a causal mask changes
(07), the worked example's weights and output for 'sat' (06), what sums to 1 (04), where
Q, K and V come from (08) and many heads with ``swapaxes`` (09). Every option has its own
feedback; a wrong option's feedback explains what is wrong with it, without naming the
right letter. A question may have more than one right option; each right option's
feedback then says which kind of right it is.

The quiz starts unanswered: no option is chosen and the score line reads "not answered
yet" until the first choice.

In a notebook, show the widget and click::

    from course_quiz.self_study import SelfStudyQuiz
    quiz = SelfStudyQuiz()
    quiz                                   # per question: its options, buttons A to D

or answer in code, which is also how the tests drive it (no browser needed)::

    print(quiz.explain("why_scale", "B"))  # what option B would get, choosing nothing
    print(quiz.answer("why_scale", "B"))   # choose B: its feedback, and the score counts it
    quiz.controls["why_scale"].value = "C"  # what a click on button C does

How the answers are kept out of sight
-------------------------------------
The question bank (:mod:`course_lib._self_study_bank`) stores, per option, a SHA-256
digest of "this letter is right" or "this letter is wrong" (so not even the number of
right options shows), and each option's feedback XOR-ed with a SHA-256 key stream
(base64). Nothing readable says which letter is right, neither in the notebook, nor in
its outputs, nor in a plain ``grep`` of the library. This deters casual peeking, not a
determined reader: there are only two verdicts to hash, and the key of each feedback is
derived from public strings, so anyone who reads this module can decode everything
(``python -m course_lib.quiz unseal`` does it, for maintainers). The graded checkpoint
does not rely on it: its source with the answers stays with the instructor, and
:mod:`course_grading.variants` makes a fresh variant for a class.

Editing the questions: ``python -m course_lib.quiz unseal > bank.json``, edit the JSON,
then ``python -m course_lib.quiz seal bank.json`` rewrites the bank module.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import html
import json
import sys
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from course_lib.explore.style import GREEN, VERMILION

__all__ = ["Feedback", "Question", "SelfStudyQuiz", "load_questions"]

_NAMESPACE = "attention-term-by-term/self-study/v2"
_BANK_MODULE = Path(__file__).with_name("_self_study_bank.py")


# --------------------------------------------------------------------------------------
# sealing (obfuscation, not security: see the module docstring)
# --------------------------------------------------------------------------------------


def _key_stream(question: str, letter: str, n: int) -> bytes:
    key = hashlib.sha256(f"{_NAMESPACE}/feedback/{question}/{letter}".encode()).digest()
    blocks = (hashlib.sha256(key + i.to_bytes(4, "big")).digest() for i in range(n // 32 + 1))
    return b"".join(blocks)[:n]


def _seal(text: str, question: str, letter: str) -> str:
    data = text.encode("utf-8")
    stream = _key_stream(question, letter, len(data))
    return base64.b64encode(bytes(a ^ b for a, b in zip(data, stream, strict=True))).decode()


def _unseal(token: str, question: str, letter: str) -> str:
    data = base64.b64decode(token)
    stream = _key_stream(question, letter, len(data))
    return bytes(a ^ b for a, b in zip(data, stream, strict=True)).decode("utf-8")


def _mark(question: str, letter: str, right: bool) -> str:
    verdict = "right" if right else "wrong"
    return hashlib.sha256(f"{_NAMESPACE}/mark/{question}/{letter}/{verdict}".encode()
                          ).hexdigest()


# --------------------------------------------------------------------------------------
# questions and feedback
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Feedback:
    """What the quiz says about one chosen option.

    Attributes
    ----------
    question : str
        The question's id, e.g. ``"why_scale"``.
    letter : str
        The chosen option, ``"A"``, ``"B"``, ...
    correct : bool
    text : str
        Why the option is right, or what is wrong with it.
    """

    question: str
    letter: str
    correct: bool
    text: str

    def __str__(self) -> str:
        return textwrap.fill(f"{self.question}, option {self.letter}: {self.text}", width=88)


@dataclass(frozen=True)
class Question:
    """One multiple-choice question of the bank.

    Attributes
    ----------
    id : str
    prompt : str
        The question, as Markdown-free text.
    lesson : str
        The number of the lesson that teaches what it asks, e.g. ``"03"``.
    choices : tuple of (str, str)
        ``(letter, text)`` pairs in display order.
    """

    id: str
    prompt: str
    lesson: str
    choices: tuple[tuple[str, str], ...]
    _marks: dict[str, str]
    _sealed: dict[str, str]

    @property
    def letters(self) -> tuple[str, ...]:
        """The option letters, in order."""
        return tuple(letter for letter, _ in self.choices)

    def check(self, letter: str) -> Feedback:
        """The feedback for choosing ``letter`` (case and spaces ignored).

        Raises
        ------
        ValueError
            If ``letter`` is not one of this question's options.
        """
        if not isinstance(letter, str):
            raise ValueError(
                f"choose one of the letters {', '.join(self.letters)} as a string "
                f"(got {letter!r})"
            )
        chosen = letter.strip().upper()
        if chosen not in self._sealed:
            raise ValueError(
                f"question {self.id!r} has options {', '.join(self.letters)} (got {letter!r})"
            )
        return Feedback(
            self.id,
            chosen,
            self._marks.get(chosen) == _mark(self.id, chosen, True),
            _unseal(self._sealed[chosen], self.id, chosen),
        )


def load_questions() -> list[Question]:
    """The questions of the self-study quiz, from :mod:`course_lib._self_study_bank`."""
    from ._self_study_bank import QUESTIONS

    return [
        Question(
            id=q["id"],
            prompt=q["prompt"],
            lesson=q["lesson"],
            choices=tuple((c[0], c[1]) for c in q["choices"]),
            _marks=dict(q["marks"]),
            _sealed=dict(q["feedback"]),
        )
        for q in QUESTIONS
    ]


# --------------------------------------------------------------------------------------
# the widget
# --------------------------------------------------------------------------------------


# Widget HTML is laid out on one line of fixed height by default; these let it wrap.
_TEXT_STYLE = "white-space:normal; line-height:1.45; overflow-wrap:anywhere;"


def _feedback_html(fb: Feedback) -> str:
    """The verdict in words and a mark, in the theme's text colour; a coloured bar beside it.

    Text colours fixed for a white page vanish in the dark theme, so the words keep the
    page's colour and only the bar (not text) is green or vermilion.
    """
    mark, bar = ("✓ Right.", GREEN) if fb.correct else ("✗ Not quite.", VERMILION)
    return (
        f'<div style="{_TEXT_STYLE} margin-top:0.4em; padding-left:0.6em; '
        f'border-left:4px solid {bar}"><div><b>{mark}</b></div>'
        f"<div>{html.escape(fb.text)}</div></div>"
    )


def _options_html(q: Question) -> str:
    """The options of ``q`` as wrapping HTML, one per line, with a hanging letter."""
    rows = "".join(
        f'<div style="{_TEXT_STYLE} display:flex; gap:0.5em; margin:0.15em 0">'
        f'<b style="flex:none; width:1.4em">{html.escape(letter)}.</b>'
        f'<span style="flex:1 1 auto; min-width:0">{html.escape(text)}</span></div>'
        for letter, text in q.choices
    )
    return f"<div>{rows}</div>"


class SelfStudyQuiz:
    """The self-study quiz as ipywidgets: per question, its options and letter buttons.

    Each question shows its options' full text as HTML (which wraps to the width of the
    notebook, however long an option is) and a row of toggle buttons that carry only the
    letters (A to D, or E). No button is pressed at the start. Choosing a letter shows its
    feedback under the question at once and updates the score line at the bottom.
    :meth:`answer` does the same from code, and so does setting the ``value`` of a
    question's control in :attr:`controls`; :meth:`explain` shows an option's feedback
    without choosing it.

    Parameters
    ----------
    questions : iterable of Question, optional
        Defaults to :func:`load_questions`.

    Attributes
    ----------
    controls : dict of str to ipywidgets.ToggleButtons
        Per question id, the buttons A to D (``value`` is the chosen letter or None).

    Examples
    --------
    >>> quiz = SelfStudyQuiz()
    >>> len(quiz.questions), [q.id for q in quiz.questions][:3]
    (11, ['why_scale', 'causal_mask', 'sat_weights'])
    >>> quiz.score_text, quiz.controls["why_scale"].value
    ('not answered yet', None)
    >>> quiz.explain("why_scale", "D").correct, quiz.score_text
    (False, 'not answered yet')
    >>> fb = quiz.answer("why_scale", "D")
    >>> fb.correct, quiz.controls["why_scale"].value
    (False, 'D')
    >>> quiz.score_text
    '0 of 11 right (1 answered)'
    """

    def __init__(self, questions: Iterable[Question] | None = None) -> None:
        import ipywidgets as w

        self.questions = list(load_questions() if questions is None else questions)
        self._by_id = {q.id: q for q in self.questions}
        self._results: dict[str, Feedback] = {}
        self.controls: dict[str, Any] = {}
        self._feedback: dict[str, Any] = {}
        boxes = []
        for number, q in enumerate(self.questions, start=1):
            prompt = w.HTML(
                f'<div style="{_TEXT_STYLE} font-weight:bold; margin-top:0.8em">'
                f"{number}. {html.escape(q.prompt)} "
                f'<span style="font-weight:normal">(lesson {html.escape(q.lesson)})</span>'
                "</div>",
                # "auto": stretched to the box; "100%" plus ipywidgets' margins overflows it
                layout=w.Layout(width="auto"),
            )
            options = w.HTML(_options_html(q), layout=w.Layout(width="auto"))
            buttons = w.ToggleButtons(
                options=list(q.letters),
                value=None,
                description="Your answer:",
                tooltips=[text for _, text in q.choices],
                style={"button_width": "3em", "description_width": "initial"},
                layout=w.Layout(width="auto"),
            )
            fb = w.HTML(value="", layout=w.Layout(width="auto"))
            buttons.observe(self._on_change(q.id), names="value")
            self.controls[q.id] = buttons
            self._feedback[q.id] = fb
            boxes.append(w.VBox([prompt, options, buttons, fb], layout=w.Layout(width="auto")))
        self._score = w.HTML(value=self._score_html())
        self.widget = w.VBox([*boxes, self._score], layout=w.Layout(width="100%"))

    # the notebook shows the widget when the quiz is the last expression of a cell; its
    # text/plain is the quiz as text, for viewers without widgets and for screen readers
    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = dict(self.widget._repr_mimebundle_(**kwargs))
        bundle["text/plain"] = self.as_text()
        return bundle

    def as_text(self) -> str:
        """The questions and their options as plain text, and the score line.

        Examples
        --------
        >>> print(SelfStudyQuiz().as_text().splitlines()[0])
        1. Why does the equation divide the scores by sqrt(d_k)? (lesson 03)
        """
        lines = []
        for number, q in enumerate(self.questions, start=1):
            lines.append(textwrap.fill(f"{number}. {q.prompt} (lesson {q.lesson})", width=88,
                                       subsequent_indent="   "))
            for letter, text in q.choices:
                lines.append(textwrap.fill(f"{letter}. {text}", width=88,
                                           initial_indent="  ", subsequent_indent="     "))
        lines.append(f"Score: {self.score_text}. Answer in code with quiz.answer(question, "
                     "letter).")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"SelfStudyQuiz({len(self.questions)} questions; {self.score_text})"

    def _on_change(self, qid: str):
        def handler(change: dict[str, Any]) -> None:
            if change["new"] is not None:
                self._show(self._by_id[qid].check(change["new"]))

        return handler

    def _show(self, fb: Feedback) -> None:
        self._results[fb.question] = fb
        self._feedback[fb.question].value = _feedback_html(fb)
        self._score.value = self._score_html()

    def _score_html(self) -> str:
        return f"<i>{html.escape(self.score_text)}</i>"

    @property
    def score_text(self) -> str:
        """``'not answered yet'``, then ``'<right> of <questions> right (<answered> answered)'``."""
        if not self._results:
            return "not answered yet"
        right = sum(fb.correct for fb in self._results.values())
        return f"{right} of {len(self.questions)} right ({len(self._results)} answered)"

    def feedback_text(self, question: str) -> str:
        """The feedback currently shown under ``question`` ('' before an answer)."""
        fb = self._results.get(self._question(question).id)
        return "" if fb is None else fb.text

    def _question(self, question: str) -> Question:
        try:
            return self._by_id[question]
        except KeyError:
            raise KeyError(
                f"no question {question!r} in the quiz (have {', '.join(self._by_id)})"
            ) from None

    def explain(self, question: str, letter: str) -> Feedback:
        """The feedback ``letter`` would get, without choosing it (the score is unchanged).

        Raises
        ------
        KeyError
            If there is no such question.
        ValueError
            If ``letter`` is not one of its options.
        """
        return self._question(question).check(letter)

    def answer(self, question: str, letter: str) -> Feedback:
        """Choose ``letter`` for ``question``, as a click would, and return the feedback.

        Raises the same errors as :meth:`explain`.
        """
        q = self._question(question)
        fb = q.check(letter)
        control = self.controls[q.id]
        if control.value == fb.letter:
            self._show(fb)  # the same choice again: no change event, show it anyway
        else:
            control.value = fb.letter  # the observer shows the feedback
        return fb


# --------------------------------------------------------------------------------------
# maintainers: turn a plain JSON bank into the sealed module, and back
# --------------------------------------------------------------------------------------


def _py_str(s: str, indent: str) -> str:
    """A string literal for the generated module, split into lines of at most ~90 chars."""
    pieces = textwrap.wrap(s, 64, drop_whitespace=False, replace_whitespace=False) or [""]
    if "".join(pieces) != s:  # pragma: no cover - textwrap keeps every character here
        raise ValueError(f"cannot split {s!r} losslessly")
    if len(pieces) == 1:
        return json.dumps(pieces[0], ensure_ascii=False)
    inner = f"\n{indent}    ".join(json.dumps(p, ensure_ascii=False) for p in pieces)
    return f"(\n{indent}    {inner}\n{indent})"


def _write_bank(plain: Sequence[dict[str, Any]], path: Path) -> None:
    lines = [
        '"""The self-study quiz, sealed (generated by `python -m course_lib.quiz seal`).',
        "",
        "Do not edit by hand: unseal, edit the JSON, seal again (see course_lib.quiz).",
        '"""',
        "",
        "QUESTIONS = [",
    ]
    for q in plain:
        letters = [c[0] for c in q["choices"]]
        right = [q["right"]] if isinstance(q["right"], str) else list(q["right"])
        if not right or any(r not in letters for r in right):
            raise ValueError(f"question {q['id']!r}: right letters {right!r} must be some of "
                             f"{letters}")
        if sorted(q["feedback"]) != sorted(letters):
            raise ValueError(f"question {q['id']!r}: feedback needed for each of {letters}")
        lines += [
            "    {",
            f'        "id": {json.dumps(q["id"])},',
            f'        "prompt": {_py_str(q["prompt"], "        ")},',
            f'        "lesson": {json.dumps(q["lesson"])},',
            '        "choices": [',
        ]
        for letter, text in q["choices"]:
            lines.append(f'            ({json.dumps(letter)}, {_py_str(text, "            ")}),')
        lines += ["        ],", '        "marks": {']
        for letter in letters:
            mark = _mark(q["id"], letter, letter in right)
            lines.append(f'            {json.dumps(letter)}: {_py_str(mark, "            ")},')
        lines += ["        },", '        "feedback": {']
        for letter in letters:
            token = _seal(q["feedback"][letter], q["id"], letter)
            lines.append(f'            {json.dumps(letter)}: {_py_str(token, "            ")},')
        lines += ["        },", "    },"]
    lines.append("]")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _unseal_bank() -> list[dict[str, Any]]:
    out = []
    for q in load_questions():
        right = [fb.letter for fb in map(q.check, q.letters) if fb.correct]
        out.append({
            "id": q.id,
            "prompt": q.prompt,
            "lesson": q.lesson,
            "choices": [list(c) for c in q.choices],
            "right": right,
            "feedback": {letter: q.check(letter).text for letter in q.letters},
        })
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m course_lib.quiz seal BANK.json`` or ``... unseal`` (maintainers only)."""
    p = argparse.ArgumentParser(prog="python -m course_lib.quiz",
                                description="Seal or unseal the self-study question bank.")
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("seal", help="write course_lib/_self_study_bank.py from a plain JSON")
    s.add_argument("bank", type=Path)
    s.add_argument("--out", type=Path, default=_BANK_MODULE)
    sub.add_parser("unseal", help="print the bank as plain JSON (answers included)")
    args = p.parse_args(argv)
    if args.cmd == "seal":
        _write_bank(json.loads(args.bank.read_text(encoding="utf-8")), args.out)
        print(f"wrote {args.out}")
    else:
        print(json.dumps(_unseal_bank(), indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
