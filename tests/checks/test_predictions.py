"""Predictions that close (issue 44): a guess read back beside the measurement, no grade.

Each kind of part reads a guess the way a student writes it; an unanswered guess gets a
one-line nudge that shows nothing of the measurement; a filled guess is shown beside the
measurement with, in words, which part held. ``tests/test_lessons.py`` fills every
lesson's guesses and runs its comparison cell.
"""

from __future__ import annotations

import numpy as np
import pytest

import course_lib as cl
from course_lib import checks
from course_lib.checks import predictions

THE_ROW = cl.attention_weights(cl.the_cat_sat().Q, cl.the_cat_sat().K)[0]  # 0.4, 0.2, 0.4
TOKENS = ("the", "cat", "sat")


def tie() -> checks.Part:
    return checks.largest(THE_ROW, TOKENS, "the token 'the' gives the most weight to")


def test_every_kind_is_handed_out_by_checks():
    for name in ("compare_guess", "compare_reason", "largest", "yes_no", "nearest", "number",
                 "one_of"):
        assert getattr(checks, name) is getattr(predictions, name)


@pytest.mark.parametrize("guess, outcome", [
    ("a tie", "held"), ("tie", "held"), ("A tie between the and sat", "held"),
    (("the", "sat"), "held"), ("sat", "partly held"), ("'The'", "partly held"),
    ("cat", "did not hold"), (("cat", "sat"), "partly held"), ("dog", "could not be read"),
    (3, "could not be read"),
])
def test_largest_reads_a_tie_and_its_parts(guess, outcome):
    assert tie().judge(guess)[0] == outcome


def test_largest_without_a_tie():
    part = checks.largest([0.25, 0.5, 0.25], TOKENS, "sat gives half to")
    assert part.measured == "cat"
    assert [part.judge(g)[0] for g in ("CAT", "a tie", "sat", ("cat",))] == [
        "held", "did not hold", "did not hold", "held"]
    assert "alone" in part.judge("a tie")[1]


def test_largest_refuses_a_row_that_does_not_fit_its_names():
    with pytest.raises(cl.AttentionInputError, match=r"one name each \(got shape \(3,\) "
                                                     r"and 2 names\)"):
        checks.largest([1.0, 2.0, 3.0], ["a", "b"], "x")
    with pytest.raises(cl.AttentionInputError, match="finite"):
        checks.largest([1.0, np.nan], ["a", "b"], "x")


@pytest.mark.parametrize("guess, outcome", [
    (True, "did not hold"), (False, "held"), ("No", "held"), ("yes", "did not hold"),
    (np.bool_(False), "held"), ("perhaps", "could not be read"), (0.5, "could not be read"),
])
def test_yes_no(guess, outcome):
    assert checks.yes_no(False, "the table stays symmetric").judge(guess)[0] == outcome


@pytest.mark.parametrize("guess, outcome", [
    ("above 0.8", "held"), (0.9, "held"), ("about 0.5", "did not hold"), (0.06, "did not hold"),
    ("most of it", "could not be read"), (True, "could not be read"),
])
def test_nearest_reads_numbers_in_words(guess, outcome):
    part = checks.nearest(0.883, [0.06, 0.25, 0.5, 0.8], "the largest weight")
    assert part.judge(guess)[0] == outcome


def test_nearest_on_a_log_scale():
    part = checks.nearest(0.74, [1e-6, 0.01, 0.1], "the largest difference", log=True)
    assert [part.judge(g)[0] for g in ("more than 0.1", "1e-6", 0.01, -1)] == [
        "held", "did not hold", "did not hold", "could not be read"]
    with pytest.raises(cl.AttentionInputError, match="all positive with log=True"):
        checks.nearest(0.5, [0.0, 1.0], "x", log=True)


def test_number_and_one_of():
    part = checks.number(0.0, "each row of J adds up to", tolerance=1e-9)
    assert [part.judge(g)[0] for g in (0, "0.0", 1, "none")] == [
        "held", "held", "did not hold", "could not be read"]
    phrases = ["all six", "only row 5", "rows 0 to 4"]
    part = checks.one_of("only row 5", phrases, "which rows change")
    assert [part.judge(g)[0] for g in ("only row 5", "Only", "all", "rows 0", "x")] == [
        "held", "held", "did not hold", "did not hold", "could not be read"]
    with pytest.raises(cl.AttentionInputError, match=r"measured must be one of"):
        checks.one_of("some", phrases, "x")


def test_an_unanswered_guess_is_nudged_and_shows_nothing_of_the_run():
    nudge = checks.compare_guess(..., tie())
    assert not nudge.answered and nudge.outcomes == ("not guessed",)
    assert len(str(nudge).splitlines()) == 1 and "nothing is graded" in str(nudge)
    assert "`my_guess`" in str(nudge)
    for leak in ("0.40", "0.20", "tie between", "Measured"):
        assert leak not in str(nudge)
    two = checks.compare_guess((..., ...), tie(), checks.yes_no(False, "symmetric"),
                               name="my_guesses")
    assert not two.answered and str(two).startswith(
        "No guess yet: write it in `my_guesses` above as a tuple (one of 'the', 'cat', 'sat' "
        "or 'a tie'; True or False), then")
    assert "Measured" not in str(two) and "symmetric" not in str(two)
    # parts asked the same way are described once (lesson 16 said one form four times)
    same = checks.compare_guess((..., ...), tie(), tie())
    assert str(same).startswith("No guess yet: write it in `my_guess` above as a tuple of 2, "
                                "each one of 'the', 'cat', 'sat' or 'a tie', then"), str(same)


def test_a_filled_guess_is_shown_beside_the_measurement_in_words():
    shown = str(checks.compare_guess("sat", tie()))
    assert shown.startswith("Your guess: 'sat'. Measured: 'the' 0.40, 'cat' 0.20, 'sat' 0.40")
    assert "Partly held: 'sat' gets the most, but not alone: 'the' gets as much." in shown
    assert 'open "What happened" below' in shown
    for word in ("score", "points", "grade", "%", "correct", "wrong"):
        assert word not in shown.lower().replace("nothing is graded", "")


def test_a_guess_in_parts_says_which_part_held():
    result = checks.compare_guess(("sat", False),
                                  checks.largest([1.0, 2.0, 1.0], TOKENS, "sat scores most"),
                                  checks.yes_no(False, "the table stays symmetric"))
    assert result.outcomes == ("did not hold", "held")
    lines = str(result).splitlines()
    assert lines[1].startswith("- sat scores most: you said 'sat'; measured ")
    assert lines[1].endswith("Did not hold.") and lines[2].endswith("Held.")
    half = checks.compare_guess(("cat", ...), checks.largest([1.0, 2.0, 1.0], TOKENS, "a"),
                                checks.yes_no(False, "b"))
    assert half.outcomes == ("held", "not guessed") and "b: no guess" in str(half)


def test_a_guess_of_the_wrong_form_is_read_as_far_as_it_goes():
    result = checks.compare_guess("sat", checks.largest([1.0, 2.0, 1.0], TOKENS, "a"),
                                  checks.yes_no(False, "b"))
    assert result.answered and result.outcomes == ("could not be read",) * 2
    assert "The question has 2 parts" in str(result) and "Measured:" in str(result)


def test_compare_guess_needs_parts():
    with pytest.raises(cl.AttentionInputError, match="one Part per part"):
        checks.compare_guess("sat")
    with pytest.raises(cl.AttentionInputError, match=r"\['str'\]"):
        checks.compare_guess("sat", "sat")


def test_the_html_wraps_between_words():
    html = checks.compare_guess("sat", tie())._repr_html_()
    assert html.startswith('<p class="course-feedback"') and "Partly held" in html


def test_a_reason_is_met_by_what_a_good_answer_mentions_after_it_is_written():
    nudge = checks.compare_reason(..., "which_is_qkt")
    assert not nudge.answered and len(str(nudge).splitlines()) == 1
    for point in predictions.REASONS["which_is_qkt"]:
        assert point.text not in str(nudge)
    assert not checks.compare_reason("   ", "which_is_qkt").answered
    shown = str(checks.compare_reason("Because K = Q the table is symmetric", "which_is_qkt"))
    assert shown.startswith("Your sentence: 'Because K = Q the table is symmetric'.")
    lines = shown.splitlines()
    assert "(yours says 'k = q')" in lines[1] and "(yours says 'symmetric')" in lines[2]
    assert "(not in your words)" in lines[3]
    assert lines[-1] == "Compare them with what you wrote; nothing is graded."


def test_compare_reason_knows_its_exercises():
    with pytest.raises(cl.AttentionInputError, match="exercise must be one of"):
        checks.compare_reason("x", "no_such_exercise")
    for points in predictions.REASONS.values():
        assert points and all(p.words for p in points)
