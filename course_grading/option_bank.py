"""The instructor's private option bank: the texts of the multiple-choice options.

The public templates (:data:`course_grading.checkpoint_answers.OPTIONS`) are in the
repository, "right" key and all: a student who read them knows which wording is right,
whatever its letter (issue 41). An instructor who grades a class writes option texts of
their own, one block per question, and gives them to the variant maker::

    python -m course_grading.variants --seed "my secret" --options my-options.md

The file (an example: ``docs/examples/options.md``, used by nothing)::

    ## mc_read_table
    - right: {U} is the undivided one: its largest weight climbs from {u_first} to ...
    - division_sharpens: ...
    - scale_like_shift: ...
    - misreads_table: ...

    ## mc_duplicate_key
    - right: ...

A ``## question`` heading per multiple-choice question of the parts the checkpoint covers;
under it one ``- key: text`` item for ``right`` and one for each misconception the spec
names for the question (:data:`course_quiz.checkpoint_spec.CHECKPOINT`), in any order. A
text may go on over indented lines (joined with spaces) and uses the placeholders of
:func:`course_grading.checkpoint_answers.option_numbers` (``{U}``, ``{w}``...), which each
student's variant fills with their own numbers; ``{{`` and ``}}`` write braces. Lines
outside the items (text under a heading, ``#`` comments) are ignored.

The bank is checked whole before anything is written, and kept as
``secret_source/variant_options.json`` (mode 0600, like the secret): from then on every
notebook the course writes (the class's template, each student's release or hand-out)
shows its texts. Which letter is right comes from the student's option order and the
key of each option, never from a text, so the graders, the feedback, the report and the
grade table need no bank and read the same letters with one or without.

Examples
--------
>>> bank = parse_bank(EXAMPLE_TEXT)
>>> sorted(bank.questions)
['mc_duplicate_key', 'mc_read_table']
>>> try:
...     parse_bank(EXAMPLE_TEXT.replace("{dup}", "{token}", 1))
... except BankError as exc:
...     print(exc)
the option bank: option 'right' of mc_duplicate_key uses {token}: expected only \
placeholders of mc_duplicate_key (double, dup, half, one_plus_w, pair, rest, shrink, w)
"""

from __future__ import annotations

import json
import os
import re
import string
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from course_quiz.checkpoint_spec import CHECKPOINT

from .checkpoint_answers import OPTIONS

__all__ = [
    "BANK_FILE",
    "EXAMPLE_TEXT",
    "BankError",
    "OptionBank",
    "mc_questions",
    "parse_bank",
    "placeholders",
    "read_bank",
    "write_bank",
]

#: The file of the bank in the secret source directory, beside ``variant_secret``.
BANK_FILE = "variant_options.json"

_HEADING = re.compile(r"^#{1,6}\s+(\S+)\s*$")
_ITEM = re.compile(r"^[-*]\s+`?([A-Za-z_][A-Za-z0-9_]*)`?\s*:\s*(.*)$")
# one variant's numbers, so that the placeholders a question has can be listed without one
_PLACEHOLDERS = {
    "mc_read_table": ("U", "D", "u_first", "u_last", "u_mean", "d_first", "d_last", "d_mean",
                      "dk_last"),
    "mc_duplicate_key": ("dup", "w", "half", "one_plus_w", "pair", "shrink", "double",
                         "rest"),
}


class BankError(ValueError):
    """An option bank that cannot be used: the message names what was expected and what
    arrived."""


def mc_questions(parts: Iterable[int] | None = None) -> tuple[str, ...]:
    """The multiple-choice questions (their answers' grade ids) of the parts a checkpoint
    covers (default: every part)."""
    spec = CHECKPOINT if parts is None else CHECKPOINT.for_parts(tuple(parts))
    return tuple(q.id for q in spec.questions
                 if any(CHECKPOINT.check(c).kind == "letter" for c in q.checks))


def _keys(question: str) -> tuple[str, ...]:
    """The option keys of a question: "right", then its misconceptions in the spec's order."""
    return ("right", *(m.id for m in CHECKPOINT.misconceptions_of(question)))


def placeholders(question: str) -> tuple[str, ...]:
    """The placeholders a question's option texts may use (sorted)."""
    return tuple(sorted(_PLACEHOLDERS[question]))


def _fields(text: str, where: str) -> set[str]:
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as exc:
        raise BankError(f"{where} has a stray brace ({exc}): expected {{name}} placeholders, "
                        "and {{ or }} for a brace itself") from None
    names = set()
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if not name or spec or conversion or not name.isidentifier():
            written = name + (f"!{conversion}" if conversion else "") + (
                f":{spec}" if spec else "")
            raise BankError(f"{where} has the placeholder {{{written}}}: expected a bare "
                            "{name}")
        names.add(name)
    return names


@dataclass(frozen=True)
class OptionBank:
    """The instructor's option templates: ``questions[q]`` is ``(key, template)`` for each
    option of question ``q``, in the order of the public templates' keys
    (:data:`~course_grading.checkpoint_answers.OPTIONS`), so that a variant's option order
    and right letter are the same with a bank and without one. Hashable (a variant
    carries it)."""

    entries: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]

    @property
    def questions(self) -> dict[str, tuple[tuple[str, str], ...]]:
        return dict(self.entries)

    def templates(self, question: str) -> tuple[tuple[str, str], ...]:
        """A question's ``(key, template)`` pairs in the public templates' key order."""
        return self.questions[question]

    def as_json(self) -> dict[str, dict[str, str]]:
        return {q: dict(pairs) for q, pairs in self.entries}


def _checked(found: Mapping[str, Mapping[str, str]], parts: Iterable[int] | None,
             origin: str) -> OptionBank:
    """The bank of ``found`` (question -> key -> template), checked whole."""
    wanted = mc_questions(parts)
    for question in found:
        if question not in wanted:
            raise BankError(f"{origin}: no multiple-choice question {question!r} in the "
                            f"checkpoint: expected one block for each of {', '.join(wanted)}")
    missing = [q for q in wanted if q not in found]
    if missing:
        raise BankError(f"{origin}: no options for {', '.join(missing)}: expected one block "
                        f"for each of {', '.join(wanted)}")
    entries = []
    for question in wanted:
        options, keys = found[question], _keys(question)
        if "right" not in options:
            raise BankError(f"{origin}: {question} has no 'right' option: expected one "
                            f"'- right: ...' and one for each of {', '.join(keys[1:])}")
        unknown = [k for k in options if k not in keys]
        if unknown:
            raise BankError(f"{origin}: {question} has the option {unknown[0]!r}, which is "
                            f"no misconception of it in the spec: expected right, "
                            f"{', '.join(keys[1:])}")
        absent = [k for k in keys if k not in options]
        if absent:
            raise BankError(f"{origin}: {question} has {len(options)} options, expected "
                            f"{len(keys)}: no option for {', '.join(absent)}")
        allowed = set(_PLACEHOLDERS[question])
        public = {text for _, text in OPTIONS[question]}
        seen: dict[str, str] = {}
        for key in keys:
            text = options[key]
            where = f"option {key!r} of {question}"
            if not isinstance(text, str) or not text.strip():
                raise BankError(f"{origin}: {where} is empty: expected the option's text")
            stray = sorted(_fields(text, where) - allowed)
            if stray:
                raise BankError(f"{origin}: {where} uses {{{stray[0]}}}: expected only "
                                f"placeholders of {question} ({', '.join(placeholders(question))})")
            if text in public:
                raise BankError(f"{origin}: {where} is a text of the public templates "
                                "(course_grading.checkpoint_answers.OPTIONS), which anyone can "
                                "read: expected a text of your own")
            if text in seen:
                raise BankError(f"{origin}: {where} is the same text as option "
                                f"{seen[text]!r}: expected {len(keys)} different texts")
            seen[text] = key
        order = [k for k, _ in OPTIONS[question]]
        entries.append((question, tuple((k, options[k]) for k in order)))
    return OptionBank(tuple(entries))


def parse_bank(text: str, parts: Iterable[int] | None = None,
               origin: str = "the option bank") -> OptionBank:
    """The bank written in ``text`` (the markdown of the module docstring), checked.

    Parameters
    ----------
    text : str
        One ``## question`` heading per multiple-choice question, ``- key: template`` items.
    parts : iterable of int, optional
        The parts the checkpoint covers (default: every part): the bank must have exactly
        their multiple-choice questions.
    origin : str
        What to call the bank in an error (its file).

    Raises
    ------
    BankError
        If an item is outside a question, a question or key appears twice, or the bank is
        not what the spec expects (see :class:`OptionBank`).
    """
    found: dict[str, dict[str, str]] = {}
    question = key = None
    for number, line in enumerate(text.splitlines(), 1):
        heading = _HEADING.match(line)
        if heading:
            question, key = heading[1].strip("`"), None
            if question in found:
                raise BankError(f"{origin}, line {number}: a second block for {question}: "
                                "expected one block per question")
            found[question] = {}
            continue
        item = _ITEM.match(line)
        if item:
            if question is None:
                raise BankError(f"{origin}, line {number}: the option {item[1]!r} comes "
                                "before any '## question' heading: expected one of "
                                f"{', '.join(mc_questions(parts))} above it")
            key = item[1]
            if key in found[question]:
                raise BankError(f"{origin}, line {number}: a second {key!r} option in "
                                f"{question}: expected one of each")
            found[question][key] = item[2].strip()
            continue
        if key is not None and line[:1] in (" ", "\t") and line.strip():
            found[question][key] = f"{found[question][key]} {line.strip()}".strip()
        elif not line.strip():
            key = None
    return _checked(found, parts, origin)


def read_bank(folder: str | os.PathLike[str],
              parts: Iterable[int] | None = None) -> OptionBank | None:
    """The option bank a course keeps (``folder`` is the course directory or its
    ``secret_source/``), checked; None when it has none (the public templates are used).

    Raises
    ------
    BankError
        If the kept bank is not readable or no longer fits the spec.
    """
    folder = Path(folder)
    path = folder / BANK_FILE if folder.name == "secret_source" else \
        folder / "secret_source" / BANK_FILE
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise BankError(f"{path} could not be read ({type(exc).__name__}: {exc})") from None
    try:
        found = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise BankError(f"{path} is not JSON ({exc}): expected the bank as "
                        "python -m course_grading.variants --options wrote it") from None
    if not isinstance(found, dict) or not all(isinstance(v, dict) for v in found.values()):
        raise BankError(f"{path} must map each question to its options (got "
                        f"{type(found).__name__})")
    return _checked(found, parts, str(path))


def write_bank(path: str | os.PathLike[str], bank: OptionBank) -> None:
    """Keep ``bank`` at ``path`` (mode 0600: readable by the instructor only)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(bank.as_json(), handle, indent=1, ensure_ascii=False)
        handle.write("\n")
    os.chmod(path, 0o600)


#: A bank of made-up texts for the doctests (the docs' example file is another).
EXAMPLE_TEXT = """\
## mc_read_table
- right: {U} lacks the 1/sqrt(d_k): its top weight runs {u_first} -> {u_last}; {D} sits at
  about {d_mean}.
- division_sharpens: {U} has the 1/sqrt(d_k), which sharpens it: {u_first} -> {u_last}.
- scale_like_shift: Both columns are the same attention; {u_last} vs {d_last} at
  d_k = {dk_last} is noise.
- misreads_table: {D} lacks the 1/sqrt(d_k): its top weight runs {d_first} -> {d_last};
  {U} sits at about {u_mean}.

## mc_duplicate_key
- right: '{dup}' now gets {pair} in all (was {w}); the rest scale by {shrink}.
- copies_share_weight: The copies of '{dup}' halve its {w}: {half} each, nothing else moves.
- no_renormalising: Each copy keeps {w}; the row sums to {one_plus_w}.
- doubles_weight: '{dup}' now gets {double} in all (was {w}); the rest scale by {rest}.
"""
