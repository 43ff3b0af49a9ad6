"""No exercise's answer is printed where the student is asked for it (issue 30).

For every exercise of a lesson we compute its answer from the lesson's own solution:

* the code lines the student has to write: the lines of the solution (the collapsed
  "Stuck? Show one solution" block) that the template does not already give verbatim;
* for an exercise that asks for numbers (``return [..., ...]``), those numbers, to 2
  decimals, and the library's exact answer that the check also accepts.

Then, in what a student sees up to the exercise and right after its check (every cell
above the check, and the first cell after it that is not the solution), none of them may
appear: not in a markdown cell, not in an output, not in a code cell (a worked cell that
writes the solution out line for line gives it away as surely as a printed number). The
collapsed solution block is the one place an answer may be.

Nor may an earlier lesson have printed it: a number a lesson asks for by hand must not
appear in any lesson before it (05 printed sat's output [1.25, 1.50] before 06 asked for it
by hand), the earlier lessons' own collapsed solutions aside. A small whole number (below
10) is not counted as given away: 1 and 2 are printed everywhere, as indices and shapes.

The template itself may not give the answer away either: the ``...`` of a template must
stand for most of what the solution adds. A template that writes out more than two thirds
of the characters the student's lines need (leaving only ``...`` for an axis, say) fails.

Lessons join through :data:`LESSONS`; the self-study checkpoint (its own issue) joins by adding its
notebook there and, for its self-study questions, an entry in :data:`EXTRA_ANSWERS` that
returns each question's right option (letter and text) with the index of the cell that
asks it.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

import course_lib as cl
from course_lib.checks.reasoning import online_example_state

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
sys.path.insert(0, str(NOTEBOOKS.parent / "scripts"))

import lesson_index  # noqa: E402  (scripts/lesson_index.py: the notebooks, by their metadata)

#: The lessons whose exercises this test reads: every notebook of kind "lesson".
LESSONS = [n.path for n in lesson_index.lessons(NOTEBOOKS)]


@dataclass(frozen=True)
class Answer:
    """One thing that must not be shown: ``text`` (a code line or a number) for the
    exercise whose check is cell ``check_index``; ``kind`` is "line" or "number"."""

    check_index: int
    kind: str
    text: str
    exercise: str


#: Other answers a lesson asks for (the self-study checkpoint's questions): notebook name ->
#: a function of the notebook that returns its Answers.
EXTRA_ANSWERS: dict[str, Callable[[nbformat.NotebookNode], list[Answer]]] = {}

#: Exact answers a check accepts besides the solution's (the function's name -> values).
EXACT_VALUES: dict[str, Callable[[], list[float]]] = {
    "own_the_output": lambda: list(cl.attention(cl.the_cat_sat_own_keys().Q,
                                                cl.the_cat_sat_own_keys().K,
                                                cl.the_cat_sat_own_keys().V)[0][0]),
    # lesson 14: the running sum and partial output after the third block, unrounded
    "third_block": lambda: [float(online_example_state(3).running_sum[0]),
                            float(online_example_state(3).partial_output[0, 0])],
}

#: What a predict cell asks the student to guess, in the words a lesson states it in
#: (notebook name -> phrases). None may appear above the lesson's predict cell, its
#: learning goals and headings included: a heading that states the result answers the
#: guess before it is made (lesson 15's "A new token changes no earlier row" did).
PREDICTED: dict[str, list[str]] = {
    # question 3: what cross-entropy on the scores does to the saturated rows (the
    # learning goals said it "hides the saturation")
    "13_training.ipynb": ["hides the saturation", "skips softmax's Jacobian"],
    "14_without_the_table.ipynb": ["like $n^2$", "grows like $n$", "grow like $n$",
                                   "instead of $n^2$", "nothing grows with $n$"],
    "15_kv_cache_and_block.ipynb": ["changes no earlier row", "only row 5",
                                    "rows 0 to 4 change"],
    # which head does which job (above both predict cells), and what removing one
    # induction head does (above the second)
    "16_trained_transformer.ipynb": ["0.1 is the previous-token", "layer 1's heads",
                                     "previous-token head in layer 0",
                                     "induction heads in layer 1", "covers for",
                                     "changes almost nothing", "the whole job"],
}

#: The formula a by-hand exercise asks the student to find (exercise name -> how a
#: lesson would write it): stated before the check, it turns the exercise into
#: substitution (lesson 15 gave $2nd$ and $2n^2 d$ above its count by hand).
FORMULAS: dict[str, list[str]] = {
    "multiply_adds": ["$2nd$", "$n d$", "$n^2 d$", "2 * n * d", "2 * n * n * d", "2d + 4d",
                      "like $n$ with the cache"],  # the ratio it asks the student to guess
}

#: The largest share of the student's lines a template may already write out.
MOST_OF_THE_ANSWER = 2 / 3


def _tags(cell: nbformat.NotebookNode) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


def _norm(line: str) -> str:
    """A code line without its comment and with single spaces."""
    return " ".join(line.split("  #")[0].split(" # ")[0].split())


def _code_lines(source: str) -> list[str]:
    return [n for n in (_norm(line) for line in source.splitlines()) if n]


@dataclass(frozen=True)
class Exercise:
    name: str
    template: nbformat.NotebookNode
    check_index: int
    solution: str


def exercises(nb: nbformat.NotebookNode) -> Iterator[Exercise]:
    """Each exercise: its template, the index of its check cell, its solution's code."""
    cells = nb.cells
    for i, cell in enumerate(cells):
        if cell.cell_type != "code" or "exercise" not in _tags(cell):
            continue
        check, folded = cells[i + 1], cells[i + 2]
        assert "check" in _tags(check) and "solution" in _tags(folded)
        code = re.search(r"```python\n(.*?)```", folded.source, flags=re.S)
        assert code and "<details>" in folded.source
        name = re.search(r"def (\w+)\(", cell.source).group(1)
        yield Exercise(name, cell, i + 1, code.group(1))


def student_lines(ex: Exercise) -> list[str]:
    """The solution's lines that the template does not already give verbatim."""
    given = set(_code_lines(ex.template.source))
    return [line for line in _code_lines(ex.solution)
            if line not in given and not line.startswith(("def ", '"""'))]


def _numbers(ex: Exercise) -> list[float]:
    """The numbers an exercise asks for: a solution that returns a list of literals."""
    found = re.search(r"return \[([-\d., ]+)\]", ex.solution)
    if not found:
        return []
    values = [float(x) for x in found.group(1).split(",")]
    return values + [float(v) for v in EXACT_VALUES.get(ex.name, list)()]


def _telling(value: float) -> bool:
    """Whether a number gives an answer away: not a small whole number (1, 2, ...)."""
    return not (float(value).is_integer() and abs(value) < 10)


def answers(nb: nbformat.NotebookNode, name: str) -> list[Answer]:
    found = []
    for ex in exercises(nb):
        numbers = [v for v in _numbers(ex) if _telling(v)]
        if numbers:
            found += [Answer(ex.check_index, "number", f"{v:.2f}", ex.name) for v in numbers]
        else:
            found += [Answer(ex.check_index, "line", line, ex.name)
                      for line in student_lines(ex)]
    return found + (EXTRA_ANSWERS[name](nb) if name in EXTRA_ANSWERS else [])


def _number_pattern(text: str) -> re.Pattern[str]:
    """1.50 also as 1.5; 1.25 not inside 11.25 or 1.255."""
    whole, frac = text.split(".")
    frac = frac.rstrip("0")
    body = rf"{re.escape(whole)}\.{frac}0?" if frac else rf"{re.escape(whole)}(?:\.0+)?"
    return re.compile(rf"(?<![\d.]){body}(?!\d)")


def seen_before_answering(nb: nbformat.NotebookNode, check_index: int) -> list[str]:
    """What a student sees up to a check and right after it, the solution block aside:
    every cell's source and outputs above the check, the check's own output, and the
    first cell after the check that is not the collapsed solution."""
    cells = nb.cells
    after = next((c for c in cells[check_index + 1:] if "solution" not in _tags(c)), None)
    shown = [*cells[:check_index], *([after] if after is not None else [])]
    parts = []
    for cell in shown:
        if "solution" in _tags(cell):
            continue
        if "exercise" in _tags(cell):  # a template: its lines are judged below, its
            continue                   # `...` are not the answer
        parts.append(cell.source)
        for out in cell.get("outputs", []):
            parts.append(out.get("text", "") + out.get("data", {}).get("text/plain", ""))
    for out in cells[check_index].get("outputs", []):
        parts.append(out.get("text", "") + out.get("data", {}).get("text/plain", ""))
    return parts


def given_away(nb: nbformat.NotebookNode, name: str) -> list[str]:
    """Every answer a student can read before answering: (exercise, where, what)."""
    problems = []
    for answer in answers(nb, name):
        parts = seen_before_answering(nb, answer.check_index)
        if answer.kind == "number":
            pattern = _number_pattern(answer.text)
            hits = [p for p in parts if pattern.search(p)]
        else:
            hits = [p for p in parts if answer.text in {_norm(x) for x in p.splitlines()}]
        problems += [f"{answer.exercise}: {answer.text!r} shown in: {hit[:80]!r}"
                     for hit in hits]
    return problems


def _given_share(template: str, lines: list[str]) -> float:
    """How much of the student's lines the template already writes out (0 … 1)."""
    written, needed = 0, 0
    stubs = [t for t in _code_lines(template) if "..." in t]
    for line in lines:
        needed += len(line.replace(" ", ""))
        best = 0
        for stub in stubs:
            pattern = "^" + ".+?".join(re.escape(p) for p in stub.split("...")) + "$"
            if re.match(pattern, line):
                best = max(best, len(stub.replace(" ", "")) - 3 * stub.count("..."))
        written += best
    return written / needed if needed else 0.0


@pytest.mark.parametrize("path", LESSONS, ids=[p.stem for p in LESSONS])
def test_no_answer_is_shown_before_the_student_gives_it(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    assert list(exercises(nb)), f"{path.name}: no exercise found"
    assert not given_away(nb, path.name), "\n".join(given_away(nb, path.name))


def shown_in(nb: nbformat.NotebookNode) -> list[str]:
    """All a student sees in a whole lesson, its collapsed solutions and templates aside."""
    parts = []
    for cell in nb.cells:
        if {"solution", "exercise"} & set(_tags(cell)):
            continue
        parts.append(cell.source)
        for out in cell.get("outputs", []):
            parts.append(out.get("text", "") + out.get("data", {}).get("text/plain", ""))
    return parts


def given_by_an_earlier_lesson(path: Path) -> list[str]:
    """Every hand answer of this lesson that an earlier lesson printed: all the numbers
    of one answer (to 2 decimals) in one cell's source or output. (A lone 0.30 in a
    table of another lesson gives nothing away; [1.25, 1.50] in one sentence does.)"""
    nb = nbformat.read(path, as_version=4)
    earlier = [(p.name, shown_in(nbformat.read(p, as_version=4)))
               for p in LESSONS if p.name < path.name]
    wanted: dict[str, set[str]] = {}
    for answer in answers(nb, path.name):
        if answer.kind == "number":
            wanted.setdefault(answer.exercise, set()).add(answer.text)
    problems = []
    for exercise, texts in wanted.items():
        solution = [t for t in texts if t not in {f"{v:.2f}" for v in
                                                   EXACT_VALUES.get(exercise, list)()}]
        for group in (solution or list(texts), list(texts - set(solution))):
            if not group:
                continue
            patterns = [_number_pattern(t) for t in group]
            problems += [f"{exercise}: {sorted(group)} already shown in {lesson}: "
                         f"{hit[:80]!r}" for lesson, parts in earlier for hit in parts
                         if all(p.search(hit) for p in patterns)]
    return problems


@pytest.mark.parametrize("path", LESSONS, ids=[p.stem for p in LESSONS])
def test_no_hand_answer_was_printed_by_an_earlier_lesson(path: Path) -> None:
    problems = given_by_an_earlier_lesson(path)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", LESSONS, ids=[p.stem for p in LESSONS])
def test_no_template_writes_out_most_of_its_answer(path: Path) -> None:
    for ex in exercises(nbformat.read(path, as_version=4)):
        if _numbers(ex):
            continue  # a hand calculation: the numbers are the answer, `[..., ...]` is not
        if "choose" in _tags(ex.template):
            continue  # a choice: the answer is an option's name, which `...` stands for
        share = _given_share(ex.template.source, student_lines(ex))
        assert share <= MOST_OF_THE_ANSWER, (
            f"{path.name}: the template of {ex.name} already writes {share:.0%} of the "
            "solution's lines; leave more than `...` for an axis or a name")


def test_the_test_sees_what_it_should() -> None:
    """The detectors find an answer written out, printed, or nearly given by a template."""
    nb = nbformat.v4.new_notebook()
    template = nbformat.v4.new_code_cell(
        "def f(x):\n    raise NotImplementedError\n    shifted = x - x.max(axis=..., "
        "keepdims=True)\n    return [..., ...]")
    template.metadata["tags"] = ["exercise"]
    check = nbformat.v4.new_code_cell("checks.check_softmax(f)")
    check.metadata["tags"] = ["check"]
    folded = nbformat.v4.new_markdown_cell(
        "<details>\n<summary>Stuck? Show one solution</summary>\n\n```python\ndef f(x):\n"
        "    shifted = x - x.max(axis=-1, keepdims=True)\n    return [1.25, 1.5]\n```\n\n"
        "</details>")
    folded.metadata["tags"] = ["solution"]
    printed = nbformat.v4.new_code_cell("print(out)")
    printed.outputs = [nbformat.v4.new_output("stream", text="with rounded weights: [1.25 1.5 ]")]
    nb.cells = [template, check, folded, printed]
    [ex] = exercises(nb)
    assert student_lines(ex) == ["shifted = x - x.max(axis=-1, keepdims=True)",
                                 "return [1.25, 1.5]"]
    assert [a.text for a in answers(nb, "x")][:2] == ["1.25", "1.50"]
    assert any("1.25" in p for p in given_away(nb, "x"))
    assert _given_share(template.source, ["shifted = x - x.max(axis=-1, keepdims=True)"]) > 0.9
    assert _number_pattern("1.50").search("[1.25 1.5 ]")
    assert not _number_pattern("1.25").search("11.25 and 1.255")


def stated_before_predicting(nb: nbformat.NotebookNode, name: str) -> list[str]:
    """Every phrase of :data:`PREDICTED` in a cell above the lesson's predict cells."""
    predict = [i for i, c in enumerate(nb.cells) if "predict" in _tags(c)]
    problems = []
    for i in predict:
        for cell in nb.cells[:i]:
            texts = [cell.source, *(o.get("text", "") + o.get("data", {}).get("text/plain", "")
                                    for o in cell.get("outputs", []))]
            problems += [f"{name}: {phrase!r} above predict cell {i}: {t[:80]!r}"
                         for phrase in PREDICTED.get(name, []) for t in texts
                         if phrase in " ".join(t.split())]
    return problems


@pytest.mark.parametrize("name", sorted(PREDICTED))
def test_no_predict_cell_is_answered_above_it(name: str) -> None:
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    assert any("predict" in _tags(c) for c in nb.cells), f"{name}: no predict cell"
    problems = stated_before_predicting(nb, name)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", LESSONS, ids=[p.stem for p in LESSONS])
def test_no_by_hand_formula_is_stated_before_its_exercise(path: Path) -> None:
    """Above the check only: the cell after the solution may explain the formula."""
    nb = nbformat.read(path, as_version=4)
    problems = []
    for ex in exercises(nb):
        for formula in FORMULAS.get(ex.name, []):
            problems += [f"{ex.name}: {formula!r} shown in: {p[:80]!r}"
                         for cell in nb.cells[:ex.check_index] if "exercise" not in _tags(cell)
                         for p in (cell.source, *(o.get("text", "") for o in
                                                  cell.get("outputs", [])))
                         if formula in " ".join(p.split())]
    assert not problems, "\n".join(problems)


def _words(ex: Exercise) -> list[str]:
    """The words an exercise asks for: a solution that returns a list of string literals."""
    found = re.search(r"return \[((?:\s*\"[^\"]*\"\s*,?)+)\]", ex.solution)
    return re.findall(r"\"([^\"]*)\"", found.group(1)) if found else []


def printed_after_the_check(nb: nbformat.NotebookNode) -> list[str]:
    """Every exercise whose answer a stored output below its check prints: two of its
    numbers (to 2 decimals; its one number, if it asks for one), or all its words, in one
    output. The collapsed solution may give the answer; an output a student scrolls past
    before running anything may not."""
    problems = []
    for ex in exercises(nb):
        numbers = sorted({f"{v:.2f}" for v in _numbers(ex) if _telling(v)})
        patterns = ([_number_pattern(t) for t in numbers] or
                    [re.compile(rf"(?<!\w){re.escape(w)}(?!\w)") for w in _words(ex)])
        needed = min(2, len(patterns)) if numbers else len(patterns)
        if not patterns:
            continue
        for i, cell in enumerate(nb.cells[ex.check_index + 1:], ex.check_index + 1):
            for out in cell.get("outputs", []):
                text = out.get("text", "") + out.get("data", {}).get("text/plain", "")
                if sum(bool(p.search(text)) for p in patterns) >= needed:
                    problems.append(f"{ex.name}: cell {i} prints its answer: {text[:80]!r}")
    return problems


@pytest.mark.parametrize("path", LESSONS, ids=[p.stem for p in LESSONS])
def test_no_students_copy_prints_an_answer_below_its_exercise(path: Path) -> None:
    """In a student's copy (``./course lab``'s, the site's: course_site.lessons), the
    stored outputs after an exercise never hold its answer: a cell that prints it is tagged
    ``shows-answer`` and comes to the student empty, until they run it."""
    from course_site.lessons import students_notebook

    nb = nbformat.read(path, as_version=4)
    students_notebook(nb)
    problems = printed_after_the_check(nb)
    assert not problems, "\n".join(problems)


def test_an_answer_printed_below_its_exercise_is_seen() -> None:
    """The course's own lesson 06 prints sat's row below the exercise (its students' copy
    must not); and the detector reads words as well as numbers."""
    nb = nbformat.read(NOTEBOOKS / "06_worked_example.ipynb", as_version=4)
    assert any("sat_by_hand: cell" in p for p in printed_after_the_check(nb))
    [ex] = [e for e in exercises(nbformat.read(NOTEBOOKS / "16_trained_transformer.ipynb",
                                               as_version=4)) if e.name == "induction_by_hand"]
    assert _words(ex) == ["n", "c"]
