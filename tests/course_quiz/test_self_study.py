"""The self-study quiz: feedback per option, checked by hash, driven from Python."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest

from course_lib import attention, attention_weights, the_cat_sat
from course_quiz.self_study import SelfStudyQuiz, load_questions, main

ROOT = Path(__file__).resolve().parents[2]
BANK = ROOT / "course_quiz" / "_self_study_bank.py"
CHECKPOINT = ROOT / "quiz" / "source" / "checkpoint" / "checkpoint.ipynb"
sys.path.insert(0, str(ROOT / "scripts"))

import lesson_index  # noqa: E402  (scripts/lesson_index.py: the notebooks, by their metadata)

NOTEBOOK = lesson_index.the_one(ROOT / "notebooks", kind=lesson_index.CHECKPOINT).path


def right_letters(question) -> list[str]:
    return [letter for letter in question.letters if question.check(letter).correct]


def right_letter(question) -> str:
    right = right_letters(question)
    assert len(right) == 1, f"{question.id}: right letters {right}"
    return right[0]


def test_every_question_has_its_options_and_its_right_ones():
    questions = load_questions()
    assert [q.id for q in questions] == [
        "why_scale", "causal_mask", "sat_weights", "sat_output", "row_sums", "projections",
        "heads", "one_hot_row", "adam_first_step", "online_rescale", "kv_cache"
    ]
    for q in questions:
        expected = ("A", "B", "C", "D", "E") if q.id == "sat_output" else ("A", "B", "C", "D")
        assert q.letters == expected
    assert [right_letters(q) for q in questions] == [["C"], ["A"], ["B"], ["D"], ["C"],
                                                        ["B"], ["B"], ["C"], ["B"], ["B"], ["C"]]


def test_feedback_says_right_or_explains_the_wrong_choice():
    for q in load_questions():
        for letter in q.letters:
            fb = q.check(letter)
            if fb.correct:
                assert fb.text.startswith("Right. ")
            else:
                assert fb.text.startswith(("Not this one. ", "Not this one, ")), fb.text
                # the explanation of a wrong choice never gives the answer away
                assert not re.search(r"\b(answer|option) [A-D]\b", fb.text), fb.text
                assert len(fb.text) > 80


def _numbers(text: str) -> np.ndarray:
    return np.array([float(x) for x in re.findall(r"-?\d+\.?\d*", text)])


def test_worked_example_questions_agree_with_course_lib():
    """The options marked right by their hash are what course_lib computes; no other is."""
    ex = the_cat_sat()
    weights = attention_weights(ex.Q, ex.K)[2]
    exact = attention(ex.Q, ex.K, ex.V)[0][2].round(2)
    by_id = {q.id: q for q in load_questions()}
    for qid, truths in (("sat_weights", [weights.round(2)]), ("sat_output", [exact])):
        q = by_id[qid]
        for letter, text in q.choices:
            nums = _numbers(text)
            matches = any(nums.shape == t.shape and np.allclose(nums, t) for t in truths)
            assert matches == q.check(letter).correct, (qid, letter, text)


def test_sat_output_exact_means_exact():
    """Issue 30 (2): the stem asks for the exact weights, so only the exact output is right;
    the rounded weights' [1.25, 1.50] is a wrong option whose feedback names the rounding."""
    ex = the_cat_sat()
    q = {q.id: q for q in load_questions()}["sat_output"]
    assert q.prompt.startswith("Using the exact weights (not rounded), what is the attention "
                               "output for 'sat', to two decimals?")
    from_rounded = attention_weights(ex.Q, ex.K)[2].round(2) @ ex.V
    [rounded_letter] = [lt for lt, text in q.choices
                        if np.allclose(_numbers(text), from_rounded.round(2))]
    assert not np.allclose(from_rounded.round(2), attention(ex.Q, ex.K, ex.V)[0][2].round(2))
    rounded = q.check(rounded_letter)
    assert not rounded.correct and "rounded" in rounded.text
    assert right_letters(q) == ["D"] and q.check("D").text.startswith(
        "Right. That is the exact output")


def test_texts_of_the_self_study_questions():
    """/work/notes/quiz-texts.md (issue 12): why_scale's options and feedback, causal_mask's
    stem and its option C's exact feedback."""
    q = {q.id: q for q in load_questions()}
    assert q["why_scale"].choices[1][1].startswith("It prevents overflow: without it, scores "
                                                   "that grow with d_k would make exp overflow")
    assert not any("cheaper to compute" in text for _, text in q["why_scale"].choices)
    assert q["why_scale"].check("B").text.startswith(
        "Not this one, though lesson 04 makes it tempting. Overflow is prevented by subtracting")
    assert "softmax([1000, 0]) in float64 is [1, 0]" in q["why_scale"].check("A").text
    assert q["why_scale"].check("D").text.startswith("Not this one. Softmax makes every row "
                                                     "sum to 1 by itself")
    assert q["causal_mask"].prompt == ("A text generator (a decoder) uses a causal mask in its "
                                       "attention. What does the mask change?")
    c = q["causal_mask"].check("C").text
    assert "without renormalising" in c and "less than 1" in c
    assert "same weights as masking before the softmax" in c and "one exact step" in c


def _shingles(text: str, n: int = 6) -> set[tuple[str, ...]]:
    words = re.findall(r"[a-z0-9_]+", text.lower())
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


def test_the_self_study_and_the_checkpoint_share_no_item():
    """Issue 30: the graded checkpoint asked the self-study's two questions, with the same
    options and answers. Now no question, option or feedback of one is in the other."""
    from course_quiz.checkpoint_spec import CHECKPOINT as SPEC

    graded = nbformat.read(CHECKPOINT, as_version=4)
    # what students read: the stems and options (markdown), and the answer cells' templates
    graded_text = _shingles("\n".join(c.source for c in graded.cells
                                      if c.cell_type == "markdown"
                                      or c.metadata.get("nbgrader", {}).get("solution")))
    graded_ids = {q.id.removeprefix("mc_") for q in SPEC.questions}
    for q in load_questions():
        assert q.id not in graded_ids, q.id
        texts = [q.prompt, *(text for _, text in q.choices),
                 *(q.check(letter).text for letter in q.letters)]
        for text in texts:
            shared = _shingles(text) & graded_text
            assert not shared, (q.id, sorted(shared)[:3])


def test_widget_click_shows_feedback_and_score():
    quiz = SelfStudyQuiz()
    wrong = next(x for x in "ABCD" if not quiz.questions[0].check(x).correct)
    assert quiz.score_text == "not answered yet"
    assert all(c.value is None for c in quiz.controls.values())
    quiz.controls["why_scale"].value = wrong  # what a click on that letter's button does
    expected = quiz.questions[0].check(wrong).text
    assert quiz.feedback_text("why_scale") == expected
    assert "Not quite." in quiz._feedback["why_scale"].value
    assert quiz.score_text == f"0 of {len(quiz.questions)} right (1 answered)"
    right = right_letter(quiz.questions[0])
    fb = quiz.answer("why_scale", right.lower())
    assert fb.correct and fb.letter == right
    assert quiz.controls["why_scale"].value == right
    assert "Right." in quiz._feedback["why_scale"].value
    assert quiz.score_text == f"1 of {len(quiz.questions)} right (1 answered)"
    assert not quiz.answer("sat_output", "B").correct and quiz.answer("sat_output", "D").correct
    assert quiz.score_text == f"2 of {len(quiz.questions)} right (2 answered)"
    quiz.answer("why_scale", right)  # the same choice again still shows its feedback
    assert quiz.feedback_text("why_scale") == fb.text
    assert quiz.feedback_text("row_sums") == ""


def test_widget_shows_full_options_as_wrapping_html_and_letter_buttons():
    """Long options wrap: their text is in HTML, the buttons carry only the letters."""
    import html

    import ipywidgets as w

    quiz = SelfStudyQuiz()
    for box, q in zip(quiz.widget.children, quiz.questions, strict=False):
        prompt, options, buttons, feedback = box.children
        assert isinstance(options, w.HTML) and isinstance(buttons, w.ToggleButtons)
        assert buttons is quiz.controls[q.id]
        assert list(buttons.options) == list(q.letters) and buttons.value is None
        assert q.prompt in html.unescape(prompt.value)
        for letter, text in q.choices:
            assert f"<b style=\"flex:none; width:1.4em\">{letter}.</b>" in options.value
            assert html.escape(text) in options.value
        assert options.value.count("white-space:normal") == len(q.choices)
        assert feedback.value == ""
    assert len(quiz.widget.children) == len(quiz.questions) + 1  # and the score line


def test_widget_is_what_the_notebook_displays():
    quiz = SelfStudyQuiz()
    bundle = quiz._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert repr(quiz) == "SelfStudyQuiz(11 questions; not answered yet)"
    assert "not answered yet" in quiz.widget.children[-1].value


def test_explain_shows_feedback_without_choosing():
    """The notebook's code examples must not pre-select options or count in the score."""
    quiz = SelfStudyQuiz()
    fb = quiz.explain("why_scale", "b")
    assert fb.letter == "B" and not fb.correct
    assert quiz.controls["why_scale"].value is None and quiz.score_text == "not answered yet"
    assert quiz.feedback_text("why_scale") == ""


def test_feedback_words_take_the_themes_colour():
    """Red and green text fixed for a white page fail contrast in the dark theme."""
    quiz = SelfStudyQuiz()
    quiz.answer("why_scale", "A")
    page = quiz._feedback["why_scale"].value
    assert not re.search(r"(?<![-\w])color:", page)
    assert "border-left:4px solid" in page and "✗ Not quite." in page


def test_bad_answers_get_clear_errors():
    quiz = SelfStudyQuiz()
    with pytest.raises(KeyError, match=r"no question 'why' in the quiz .*why_scale"):
        quiz.answer("why", "A")
    with pytest.raises(ValueError, match=r"'why_scale' has options A, B, C, D \(got 'E'\)"):
        quiz.answer("why_scale", "E")
    with pytest.raises(ValueError, match=r"as a string \(got 3\)"):
        quiz.answer("why_scale", 3)


def test_bank_module_holds_no_feedback_or_answer_in_plain_text():
    source = BANK.read_text()
    # every option has a mark, so the number of right options does not show either
    for q in load_questions():
        assert sorted(q._marks) == sorted(q.letters)
    for q in load_questions():
        for letter in q.letters:
            text = q.check(letter).text
            for sentence in re.split(r"(?<=\.) ", text):
                if len(sentence) > 20:
                    assert sentence[:40] not in source, sentence
    assert "Right." not in source and "Not this one" not in source


def test_seal_unseal_round_trip(tmp_path, capsys):
    assert main(["unseal"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert {q["id"]: q["right"] for q in plain}["sat_weights"] == [right_letter(
        load_questions()[2])]
    assert {q["id"]: q["right"] for q in plain}["sat_output"] == ["D"]
    assert {q["id"]: q["lesson"] for q in plain}["heads"] == "09"
    (tmp_path / "bank.json").write_text(json.dumps(plain))
    out = tmp_path / "bank.py"
    assert main(["seal", str(tmp_path / "bank.json"), "--out", str(out)]) == 0
    assert out.read_text() == BANK.read_text()
    plain[0]["right"] = ["E"]
    (tmp_path / "bad.json").write_text(json.dumps(plain))
    with pytest.raises(ValueError, match=r"right letters \['E'\] must be some of"):
        main(["seal", str(tmp_path / "bad.json"), "--out", str(out)])


def test_self_study_notebook_never_shows_a_right_answer():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    text = NOTEBOOK.read_text()
    by_id = {q.id: q for q in load_questions()}
    for q in by_id.values():
        for letter in right_letters(q):
            right = q.check(letter).text
            assert right[len("Right. "):][:40] not in text
    assert "Right." not in text
    code = "\n".join(line for c in nb.cells if c.cell_type == "code"
                     for line in c.source.splitlines() if not line.lstrip().startswith("#"))
    # Run All shows no option's feedback (even a wrong one narrows the choice: issue 30)
    # and leaves the quiz unanswered: no quiz.answer() or control set in a cell
    assert "quiz.explain(" not in code and "quiz.answer(" not in code
    assert ".value =" not in code
    ignored = [c for c in nb.cells if "nbval-ignore-output" in c.metadata.get("tags", [])]
    assert len(ignored) == 1 and "quiz" in ignored[0].source
    assert all(c.execution_count for c in nb.cells if c.cell_type == "code")
    assert nb.metadata.kernelspec.name == "python3"


def test_the_quiz_as_text_for_viewers_without_widgets():
    """A stored notebook (no widget state) and a screen reader get the questions in words."""
    quiz = SelfStudyQuiz()
    text = quiz._repr_mimebundle_()["text/plain"]
    assert text == quiz.as_text()
    for q in quiz.questions:
        for letter, option in q.choices:
            assert f"{letter}. {option.split()[0]}" in text
    assert text.endswith("Score: not answered yet. Answer in code with quiz.answer(question, "
                         "letter).")


def test_the_heads_question_is_true_of_numpy():
    """Each option of 'heads' is an expression: only the right one gives (2, 4, 5, 5)."""
    import numpy as np

    q = {q.id: q for q in load_questions()}["heads"]
    rng = np.random.default_rng(0)
    Q, K = rng.standard_normal((2, 4, 5, 8)), rng.standard_normal((2, 4, 5, 8))
    shapes = {}
    for letter, expression in q.choices:
        try:
            shapes[letter] = eval(expression, {}, {"Q": Q, "K": K}).shape
        except ValueError:
            shapes[letter] = None
    assert [letter for letter, shape in shapes.items() if shape == (2, 4, 5, 5)] == (
        right_letters(q))
    assert shapes["A"] is None and shapes["C"] is None and shapes["D"] == (2, 4, 5)
