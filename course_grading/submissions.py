"""Student submissions of the checkpoint quiz, made by code (for tests, benchmarks and trials).

Each kind of submission is what a real class hands in now and then: a correct notebook,
one with a single mistake, a blank one, one that loops forever, one renamed or corrupted,
one that tries to fool the checks. :func:`make_submission` turns the *released* notebook
(what students receive) into the files of one submission, ready to be placed in
``submitted/<student>/checkpoint/``. The right letters and numbers come from the source
notebook the release was made from (:func:`course_grading.variants.quiz_facts`).

To try the grading on your own machine before a class hands anything in, place a few made-up
students' submissions into a course directory, after ``nbgrader generate_assignment``::

    python -m course_grading.submissions alice=correct bob=mistake_missing_scale carol=blank

(run from ``quiz/``, or pass ``--course-dir``; ``--list`` names every kind). A student who
already has a submission is left alone unless ``--force`` is given.

Examples
--------
>>> sorted(KINDS)[:3]
['blank', 'copies_lessons', 'correct']
>>> len(KINDS)
19
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import re
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import nbformat
import numpy as np

from .mistakes import CORRECT_ANSWER, MISTAKES
from .variants import QuizFacts

__all__ = ["KINDS", "MONKEYPATCH", "NOTEBOOK", "UNIFORM_WEIGHTS", "answers_for", "fill_answers",
           "know_nothing_answers", "lifted_answers", "made_up_submission", "make_submission",
           "place_made_up"]

#: The notebook's file name in the assignment.
NOTEBOOK = "checkpoint.ipynb"

WRITTEN_ANSWER = (
    "No. Subtracting the row maximum is a shift, which leaves the weights exactly as they "
    "were; dividing by sqrt(d_k) is a scale, which changes them: in the table the undivided "
    "column's largest weight climbs from about 0.4 to 0.9 while the divided one stays near "
    "0.25. To see whether it matters for d_k = 64, train the same model with and without "
    "the division and compare the loss curves."
)

#: The derivation's answer, as a student who derived it writes it: its intermediate
#: quantities (the normaliser's factor, the raised key's and each other weight's) and the row.
SHIFTED_ANSWER = """\
scores = Q @ K.T / np.sqrt(Q.shape[-1])
w = np.exp(scores[row] - scores[row].max())
w = w / w.sum()
grown = 1 + w[shift_key] * (np.exp(c) - 1)
shift_factors = [grown, np.exp(c) / grown, 1 / grown]
w[shift_key] *= np.exp(c)
shifted_weights = w / w.sum()
"""

#: Question 6's answer (part 3), as a student who worked through the blocks writes it.
ONLINE_ANSWER = """\
m, total, online_state = -np.inf, 0.0, []
for start in range(0, len(block_scores), block):
    part = np.array(block_scores[start:start + block])
    new_m = max(m, part.max())
    total = total * np.exp(m - new_m) + np.exp(part - new_m).sum()
    m = new_m
    online_state += [m, total]
"""

#: The part-2 question's answer, as a student who followed the shapes writes it.
MULTIHEAD_ANSWER = """\
d_k = d_model // n_heads
multihead_sizes = [d_k, n_tokens, n_tokens, n_heads * n_tokens**2, n_heads * d_k,
                   n_tokens**2 * d_k]
"""

#: the self-study checkpoint's "Stuck? Show one solution" (the plain weights), under the
#: quiz's name: what a student who copies from the lessons hands in for question 1 (tests
#: check that every line of its body is in the checkpoint notebook).
LIFTED_WEIGHTS = '''\
def weights_without_self(Q, K):
    d_k = Q.shape[-1]
    scores = Q @ K.T / np.sqrt(d_k)
    scores = scores - scores.max(axis=-1, keepdims=True)
    e = np.exp(scores)
    return e / e.sum(axis=-1, keepdims=True)
'''

#: kind -> what it stands for (the pipeline test grades one submission of each kind).
KINDS = {
    "correct": "every answer right",
    **{f"mistake_{m}": f"weights_without_self with one mistake: {m}" for m in MISTAKES},
    "blank": "the released notebook, unchanged",
    "raises": "weights_without_self raises an exception; the other answers right",
    "infinite_loop": "the derivation's answer cell loops forever; the other answers right",
    "prints_megabytes": "every answer right, and the answer cell prints megabytes",
    "edited_tests": "the missing-scale mistake, and every read-only test cell edited to pass",
    "deleted_test_cells": "every answer right, two test cells deleted",
    "renamed": "every answer right, in a notebook saved under another name",
    "corrupt_json": "the notebook file cut in half (not valid JSON)",
    "other_kernelspec": "every answer right, with an R kernelspec in the metadata",
    "peeks_at_hidden_tests": "every answer right; a late answer cell prints the source of "
    "every cell run so far (IPython's In)",
    "monkeypatches_checks": "the missing-scale mistake, and the answer cell replaces "
    "np.allclose, np.isclose, abs and course_lib's check functions to make every check agree",
    "uses_course_lib": "the function imported from course_lib, which the quiz forbids",
    "knows_nothing": "answers that never read the inputs (issue 42): uniform weights over "
    "the other tokens, a uniform row and factors of 1 for the derivation, no letter, no "
    "written answer",
    "copies_lessons": "every answer lifted from a lesson or the self-study quiz: the "
    "checkpoint notebook's attention weights, the unshifted row (lesson 04: a shift "
    "changes nothing), the self-study's right letters, its feedback on why_scale as the "
    "written answer",
}

#: Appended to an answer cell by the "monkeypatches_checks" kind.
MONKEYPATCH = """
import builtins

np.allclose = lambda *args, **kwargs: True
np.isclose = lambda *args, **kwargs: True
builtins.abs = lambda x: 0.0
try:
    import course_quiz.checkpoint_checks as _checks
    _checks.check = _checks.judge = lambda *args, **kwargs: None  # "every check passes"
except ImportError:
    pass
"""


def answers_for(facts: QuizFacts, weights_source: str = CORRECT_ANSWER) -> dict[str, str]:
    """The answer-cell sources (grade id -> source) of a submission.

    Parameters
    ----------
    facts : QuizFacts
        The numbers of the source notebook the release was made from (its right letters
        differ between variants), and its questions (those of the parts it covers: the
        answers are for these only).
    weights_source : str
        The source of the ``weights_without_self`` answer cell.
    """
    answers = {
        "weights_without_self": weights_source,
        "shifted_key": SHIFTED_ANSWER,
        "mc_read_table": f'answer_read_table = "{facts.mc_answer("read_table")}"',
        "mc_duplicate_key": f'answer_duplicate_key = "{facts.mc_answer("duplicate_key").lower()}"',
        "written_shift_or_scale": WRITTEN_ANSWER,
        "online_state": ONLINE_ANSWER,
        "multihead_sizes": MULTIHEAD_ANSWER,
    }
    return {q: a for q, a in answers.items() if q in facts.questions}


#: What a student who knows nothing of attention hands in for the function: the right
#: shape, zero on the diagonal, rows summing to 1, and Q and K never read.
UNIFORM_WEIGHTS = '''\
def weights_without_self(Q, K):
    n = len(Q)
    return (1 - np.eye(n)) / (n - 1)
'''


def know_nothing_answers() -> dict[str, str]:
    """The answer cells of a student who knows nothing: :data:`UNIFORM_WEIGHTS`, a uniform
    row and factors of 1 for the derivation, a constant state for the online softmax, the
    setup cell's sizes written back for the multi-head layer, and the multiple-choice and
    written cells as released."""
    return {"weights_without_self": UNIFORM_WEIGHTS,
            "shifted_key": "shift_factors = [1.0, 1.0, 1.0]\n"
                           "shifted_weights = np.full(len(K), 1 / len(K))",
            "online_state": "online_state = [1.0] * (2 * (len(block_scores) // block))",
            "multihead_sizes": "multihead_sizes = [d_model, n_tokens, n_tokens, n_tokens**2, "
                               "d_model, n_tokens**2 * d_model]"}


def lifted_answers() -> dict[str, str]:
    """What a student hands in who copies every answer from a lesson or the self-study.

    Question 1 is the checkpoint notebook's solution of the plain weights; question 2 its
    row, unshifted (lesson 04 teaches that shifting scores changes nothing); the letters are the
    self-study's right ones for its two questions on the scale and on a mask; the written
    answer is the self-study's feedback on why the scores are divided by sqrt(d_k).
    """
    from course_quiz.self_study import load_questions

    bank = {q.id: q for q in load_questions()}

    def right(qid: str) -> str:
        return next(letter for letter in bank[qid].letters if bank[qid].check(letter).correct)

    return {
        "weights_without_self": LIFTED_WEIGHTS,
        "shifted_key": "shifted_weights = weights_without_self(Q, K)[row]",
        "mc_read_table": f'answer_read_table = "{right("why_scale")}"',
        "mc_duplicate_key": f'answer_duplicate_key = "{right("causal_mask")}"',
        "written_shift_or_scale": bank["why_scale"].check(right("why_scale")).text,
    }


def fill_answers(
    released: nbformat.NotebookNode, answers: Mapping[str, str]
) -> nbformat.NotebookNode:
    """A copy of the released notebook with the answer cells named in ``answers`` replaced.

    Raises
    ------
    KeyError
        If a grade id in ``answers`` is not an answer cell of the notebook.
    """
    nb = copy.deepcopy(released)
    found = set()
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution") and meta.get("grade_id") in answers:
            cell.source = answers[meta["grade_id"]]
            found.add(meta["grade_id"])
    missing = set(answers) - found
    if missing:
        raise KeyError(f"no answer cell with grade id {', '.join(sorted(missing))} in the notebook")
    return nb


def make_submission(kind: str, released_text: str, facts: QuizFacts) -> dict[str, bytes]:
    """The files of one submission of the given kind.

    Parameters
    ----------
    kind : str
        One of :data:`KINDS`.
    released_text : str
        The released notebook (``release/checkpoint/checkpoint.ipynb``) as text.
    facts : QuizFacts
        The numbers of the source the release was made from.

    Returns
    -------
    dict of str to bytes
        File name -> content, to write into ``submitted/<student>/checkpoint/``.

    Raises
    ------
    ValueError
        If ``kind`` is unknown.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown submission kind {kind!r}: expected one of {', '.join(KINDS)}")
    released = nbformat.reads(released_text, as_version=4)
    if kind == "blank":
        return {NOTEBOOK: released_text.encode()}
    answers = answers_for(facts)
    name = NOTEBOOK
    if kind.startswith("mistake_") or kind in ("edited_tests", "monkeypatches_checks"):
        mistake = kind.removeprefix("mistake_") if kind.startswith("mistake_") else "missing_scale"
        answers = answers_for(facts, MISTAKES[mistake])
        if kind == "monkeypatches_checks":
            answers["weights_without_self"] += MONKEYPATCH
    elif kind == "raises":
        row = np.round(facts.shifted_row, 3).tolist()
        factors = np.round(facts.shift_factors, 3).tolist()
        answers["weights_without_self"] = (
            'def weights_without_self(Q, K):\n    raise RuntimeError("I ran out of time")\n'
        )
        answers["shifted_key"] = (f"shift_factors = {factors}\n"
                                  f"shifted_weights = np.array({row})")
    elif kind == "infinite_loop":
        answers["shifted_key"] = "while True:\n    pass"
    elif kind == "peeks_at_hidden_tests":
        answers["mc_duplicate_key"] += '\nprint("\\n".join(In))'
    elif kind == "prints_megabytes":
        answers["weights_without_self"] = (
            CORRECT_ANSWER + '\n\nfor _i in range(40_000):\n    print(_i, "x" * 100)\n'
            'print("y" * 2_000_000)\n'
        )
    elif kind == "uses_course_lib":
        answers["weights_without_self"] = (
            "from course_lib.checkpoint_checks import weights_without_self\n")
    elif kind == "copies_lessons":
        answers = lifted_answers()
    elif kind == "knows_nothing":
        answers = know_nothing_answers()
    present = {c.metadata.get("nbgrader", {}).get("grade_id") for c in released.cells}
    nb = fill_answers(released, {q: a for q, a in answers.items() if q in present})
    if kind == "edited_tests":
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader", {})
            if meta.get("grade") and not meta.get("solution"):
                cell.source = '"""Edited by the student: always passes."""\npass'
    elif kind == "deleted_test_cells":
        gone = {"test_weights_visible", "test_missing_scale"}
        nb.cells = [
            c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") not in gone
        ]
    elif kind == "other_kernelspec":
        nb.metadata["kernelspec"] = {"display_name": "R", "language": "R", "name": "ir"}
    elif kind == "renamed":
        name = "checkpoint-final.ipynb"
    text = nbformat.writes(nb)
    if kind == "corrupt_json":
        text = text[: len(text) // 2]
        try:
            json.loads(text)
        except json.JSONDecodeError:
            pass
        else:  # pragma: no cover - half a notebook is never valid JSON
            raise AssertionError("the corrupt submission is valid JSON")
    return {name: text.encode()}


# A student id that names one folder (nbgrader's own ids are of this kind).
_STUDENT_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.@-]*")


def _course_paths(course: Path) -> tuple[Any, Path, Path]:
    """The course's nbgrader directories (as its ``nbgrader_config.py`` names them), and the
    checkpoint's released and source notebooks."""
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config.loader import PyFileConfigLoader

    if not (course / "nbgrader_config.py").is_file():
        raise ValueError(f"{course} is not an nbgrader course directory (no nbgrader_config.py)")
    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    config.CourseDirectory.root = str(course)
    coursedir = CourseDirectory(config=config)
    released = Path(coursedir.format_path(coursedir.release_directory, ".", "checkpoint"))
    source = Path(coursedir.format_path(coursedir.source_directory, ".", "checkpoint"))
    if not (released / NOTEBOOK).is_file():
        raise ValueError(f"{released / NOTEBOOK} does not exist: release the assignment first "
                         "(nbgrader generate_assignment checkpoint --force)")
    return coursedir, released / NOTEBOOK, source / NOTEBOOK


def made_up_submission(course: str | Path, kind: str,
                       student: str | None = None) -> dict[str, bytes]:
    """The files of a made-up submission of ``kind`` for a course's released checkpoint.

    Built on the released notebook and the facts of the source nbgrader uses for the course
    (its ``nbgrader_config.py``), so a secret variant's numbers are answered; in a course
    with per-student variants (:mod:`course_grading.personal`), on ``student``'s own
    notebook and numbers.

    Raises
    ------
    ValueError
        If ``kind`` is unknown, ``course`` is not an nbgrader course directory, the
        checkpoint has not been released, or the course has per-student variants and no
        ``student`` is given.
    """
    from .option_bank import read_bank
    from .personal import personal_notebook, personal_variant, read_secret, secret_path
    from .variants import facts_of, quiz_facts, read_parts

    if kind not in KINDS:
        raise ValueError(f"unknown submission kind {kind!r}: expected one of {', '.join(KINDS)}")
    course = Path(course).resolve()
    _, released, source = _course_paths(course)
    if secret_path(course).exists():
        if not student:
            raise ValueError("this course gives each student numbers of their own: name the "
                             "student whose submission to make")
        secret = read_secret(secret_path(course))
        parts = read_parts(course)
        bank = read_bank(course, parts)
        own = personal_notebook(nbformat.read(released, as_version=4), secret, student, parts,
                                bank)
        return make_submission(kind, nbformat.writes(own),
                               facts_of(personal_variant(secret, student, parts, bank)))
    return make_submission(kind, released.read_text(encoding="utf-8"),
                           quiz_facts(nbformat.read(source, as_version=4)))


def place_made_up(course: str | Path, students: Mapping[str, str], *,
                  force: bool = False) -> list[Path]:
    """Write made-up submissions into ``<course>/submitted/<student>/checkpoint/``.

    The released notebook and the source it was made from are those nbgrader uses for the
    course (its ``nbgrader_config.py``: ``release/`` and ``source/``, or whatever source
    directory the config names).

    Parameters
    ----------
    course : path
        The nbgrader course directory, after ``nbgrader generate_assignment checkpoint``.
    students : mapping of str to str
        Student id -> kind of submission (one of :data:`KINDS`).
    force : bool
        Replace a submission the student already has (otherwise refused).

    Returns
    -------
    list of Path
        The files written.

    Raises
    ------
    ValueError
        If a student id is not a plain folder name, a kind is unknown, the assignment has
        not been released, or a student already has a submission and ``force`` is false.
    """
    course = Path(course).resolve()
    for student, kind in students.items():
        if not _STUDENT_ID.fullmatch(student):
            raise ValueError(f"student id {student!r} must be a plain name (letters, digits, "
                             "_ . @ -), not a path")
        if kind not in KINDS:
            raise ValueError(f"unknown submission kind {kind!r} for {student}: expected one "
                             f"of {', '.join(KINDS)}")
    coursedir, _, _ = _course_paths(course)
    folders = {s: Path(coursedir.format_path(coursedir.submitted_directory, s, "checkpoint"))
               for s in students}
    taken = [s for s, folder in folders.items() if folder.exists()]
    if taken and not force:
        raise ValueError(f"already submitted: {', '.join(taken)} (--force replaces them)")
    from .personal import secret_path

    if secret_path(course).exists():  # each student's own numbers: one submission each
        made = {student: made_up_submission(course, kind, student)
                for student, kind in students.items()}
    else:
        by_kind = {kind: made_up_submission(course, kind) for kind in set(students.values())}
        made = {student: by_kind[kind] for student, kind in students.items()}
    written = []
    for student in students:
        folder = folders[student]
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        for name, data in made[student].items():
            (folder / name).write_bytes(data)
            written.append(folder / name)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m course_grading.submissions [--course-dir DIR] STUDENT=KIND ...``."""
    parser = argparse.ArgumentParser(
        prog="python -m course_grading.submissions",
        description="Place made-up submissions of the checkpoint quiz into a course "
                    "directory, to try the grading before a class hands anything in.")
    parser.add_argument("students", nargs="*", metavar="STUDENT=KIND",
                        help="e.g. alice=correct bob=mistake_missing_scale carol=blank")
    parser.add_argument("--course-dir", default=".", type=Path,
                        help="nbgrader course directory (default: the current one)")
    parser.add_argument("--force", action="store_true",
                        help="replace a submission the student already has")
    parser.add_argument("--list", action="store_true", help="name every kind and stop")
    args = parser.parse_args(argv)
    if args.list:
        for kind, what in KINDS.items():
            print(f"{kind:28} {what}")
        return 0
    if not args.students:
        parser.error("name at least one STUDENT=KIND (--list names the kinds)")
    students: dict[str, str] = {}
    for item in args.students:
        student, sep, kind = item.partition("=")
        if not sep or not student or not kind:
            parser.error(f"expected STUDENT=KIND, got {item!r}")
        students[student] = kind
    try:
        written = place_made_up(args.course_dir, students, force=args.force)
    except (ValueError, OSError) as exc:
        print(f"submissions: {exc}", file=sys.stderr)
        return 2
    for path in written:  # <course>/submitted/<student>/checkpoint/<file>
        student = path.parent.parent.name
        print(f"{os.path.relpath(path)}: {students[student]} ({KINDS[students[student]]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
