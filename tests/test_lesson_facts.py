"""What the lessons say must be true: facts a teacher found wrong or misleading (issue 13).

Each test reads the stored lessons (text and outputs), so a lesson or a library sentence
that brings a fixed mistake back fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
LESSONS = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))


def text_of(path: Path) -> str:
    """Every cell's source and every text output of a stored lesson."""
    parts = []
    for cell in nbformat.read(path, as_version=4).cells:
        parts.append(cell.source)
        for out in cell.get("outputs", []):
            parts.append(out.get("text", ""))
            parts.append(out.get("data", {}).get("text/plain", ""))
    return "\n".join(parts)


@pytest.mark.parametrize("path", LESSONS, ids=[p.stem for p in LESSONS])
def test_a_sum_written_out_adds_up(path: Path) -> None:
    """0.25·[1,0] + 0.25·[0,2] + 0.50·[2,2] is [1.25, 1.50], never [1.26, 1.50]."""
    for m in re.finditer(r"((?:\d\.\d\d·\[-?\d\.\d\d, -?\d\.\d\d\](?: \+ )?)+) = "
                         r"\[(-?\d\.\d\d), (-?\d\.\d\d)\]", text_of(path)):
        terms = re.findall(r"(\d\.\d\d)·\[(-?\d\.\d\d), (-?\d\.\d\d)\]", m.group(1))
        x = sum(float(w) * float(a) for w, a, _ in terms)
        y = sum(float(w) * float(b) for w, _, b in terms)
        assert (f"{x:.2f}", f"{y:.2f}") == (m.group(2), m.group(3)), m.group(0)


def test_the_blend_sums_are_checked_somewhere() -> None:
    """The test above must find the worked example's sum, rounded and unrounded."""
    text = text_of(NOTEBOOKS / "06_worked_example.ipynb")
    assert ("0.50·[2.00, 2.00] = [1.25, 1.50] with these rounded weights "
            "(≈ [1.26, 1.50] with the unrounded ones)") in text


def test_02_says_the_diagonal_is_highest_only_because_k_is_q() -> None:
    text = text_of(NOTEBOOKS / "02_scores.ipynb")
    assert "($K = Q$)" in text and "not a law of attention" in text


def test_04_says_why_softmax_and_its_budget_uses_the_scaled_scores() -> None:
    text = text_of(NOTEBOOKS / "04_softmax.ipynb")
    assert "### Why softmax, and not something simpler?" in text
    assert "argmax, cat +0.1: [0. 0. 1.]" in text  # the argmax does not move
    assert "Softmax turns sat's scaled scores 0.71, 0.71, 1.41" in text
    assert "0.21 to the" not in text  # the raw scores' weights, once called attention's


def test_07_gives_the_training_reason_and_shows_renormalising_agrees() -> None:
    nb = nbformat.read(NOTEBOOKS / "07_causal_masking.ipynb", as_version=4)
    text = text_of(NOTEBOOKS / "07_causal_masking.ipynb")
    assert "predict\nthe next token at every position at once" in text
    [cell] = [c for c in nb.cells if c.source.startswith("renormalised = ")]
    assert cell.outputs[0]["data"]["text/plain"] == "True"


def test_03_names_weights_as_weights() -> None:
    from course_lib.widgets import scaling_explorer

    assert "Histogram of each row's largest weight: 256 weights with" in (
        scaling_explorer().description)


# --- issue 30: lesson 12's self-study -------------------------------------------------

_COUNTS = {"five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9}


def _self_study_counts(text: str) -> list[int]:
    """The numbers of self-study questions a text promises ('seven questions ...')."""
    return [_COUNTS[m] if m in _COUNTS else int(m) for m in re.findall(
        r"\b(\d+|five|six|seven|eight|nine) (?:multiple-choice )?questions\b", text)]


def test_12_and_the_readme_promise_the_questions_the_widget_has() -> None:
    """Issue 30 (3): both said 5 while the widget had 7."""
    from course_lib.quiz import load_questions

    n = len(load_questions())
    lesson = text_of(NOTEBOOKS / "12_checkpoint_self_study.ipynb")
    readme = (NOTEBOOKS.parent / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Self-study: the checkpoint without an instructor", 1)[1]
    section = section.split("\n## ", 1)[0]
    for where, text in (("lesson 12", lesson), ("README", section)):
        counts = _self_study_counts(text)
        assert counts and set(counts) == {n}, (where, counts, n)
    assert "three more on the worked example" not in lesson + section
    nb = nbformat.read(NOTEBOOKS / "12_checkpoint_self_study.ipynb", as_version=4)
    [listing] = [c.source for c in nb.cells if c.source.startswith("## No widgets?")]
    listed = re.findall(r'`"(\w+)"`', listing)
    assert listed == [q.id for q in load_questions()]


def test_every_self_study_question_names_the_lesson_that_teaches_it() -> None:
    """Issue 30 (3): each question is about what a lesson taught, and says which."""
    from course_lib.quiz import SelfStudyQuiz, load_questions

    quiz_text = " ".join(SelfStudyQuiz().as_text().split())
    for q in load_questions():
        [path] = NOTEBOOKS.glob(f"{q.lesson}_*.ipynb")
        assert q.lesson != "12", q.id
        assert f"(lesson {q.lesson})" in quiz_text, q.id
        assert path.exists()


def test_self_study_q6_says_the_embeddings_feed_only_the_first_layer() -> None:
    """Issue 30 (7): Q, K, V come from the embeddings only in layer 1."""
    from course_lib.quiz import load_questions

    q = {q.id: q for q in load_questions()}["projections"]
    [right] = [text for letter, text in q.choices if q.check(letter).correct]
    assert "first layer" in right and "previous" in right, right
    [letter] = [lt for lt in q.letters if q.check(lt).correct]
    assert "bias" in q.check(letter).text  # lesson 11's model adds one


# --- issue 30: lesson 12 gives no answer away ----------------------------------------

def _lesson_12() -> nbformat.NotebookNode:
    return nbformat.read(NOTEBOOKS / "12_checkpoint_self_study.ipynb", as_version=4)


def test_12_prints_no_feedback_on_run_all() -> None:
    """Issue 30: the "No widgets?" cells printed "Not this one" for Q1-D and Q2-C."""
    from course_lib.quiz import load_questions

    feedback = [q.check(letter).text for q in load_questions() for letter in q.letters]
    for cell in _lesson_12().cells:
        for out in cell.get("outputs", []):
            shown = out.get("text", "") + out.get("data", {}).get("text/plain", "")
            assert "Not this one" not in shown and "Right." not in shown, cell.source
            for text in feedback:
                assert text[:60] not in " ".join(shown.split()), cell.source


def _shingles(text: str, n: int = 4) -> set[tuple[str, ...]]:
    words = re.findall(r"[a-z0-9_.'()-]+", text.lower().replace("*", ""))
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


def test_12_summary_states_no_answer() -> None:
    """Issue 30: the Summary stated the answers to Q1-Q3 (the scale, the mask, sat's row)."""
    from course_lib.quiz import load_questions

    [summary] = [c.source for c in _lesson_12().cells if c.source.startswith("## Summary")]
    said = _shingles(summary.replace("$\\sqrt{d_k}$", "sqrt(d_k)"))
    for q in load_questions():
        for letter, text in q.choices:
            fb = q.check(letter)
            if fb.correct:
                assert not said & (_shingles(text) | _shingles(fb.text)), (q.id, said & (
                    _shingles(text) | _shingles(fb.text)))
                for numbers in re.findall(r"\[[-\d., ]+\]", text):
                    assert numbers not in summary, (q.id, numbers)


def test_12_exercise_template_holds_no_line_of_its_solution() -> None:
    """Issue 30: the template held `Q @ K.T / np.sqrt(d_k)`, so the scale could not be missed."""
    cells = _lesson_12().cells
    [i] = [i for i, c in enumerate(cells) if "Student exercise" in c.source]
    [solution] = [c.source for c in cells[i:] if "Stuck? Show one solution" in c.source]
    code = solution.split("```python", 1)[1].split("```", 1)[0]
    template = {line.strip() for line in cells[i].source.splitlines()}
    for line in code.strip().splitlines()[1:]:  # every line but the `def`
        assert line.strip() not in template, line
