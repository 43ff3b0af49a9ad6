"""The grader reads test cells and the setup cell as data, and refuses anything else."""

from __future__ import annotations

import pytest

from course_grading.check_calls import QuizSourceError, SetupName, check_calls, setup_values


def test_calls_in_order_with_hidden_flags_and_literal_inputs():
    source = ('check("t", f, Q=Q)\n### BEGIN HIDDEN TESTS\n'
              'check("t", f, Q=[[1.0, -2.5]], right="C")\n### END HIDDEN TESTS\n')
    first, second = check_calls(source)
    assert (first.hidden, second.hidden) == (False, True)
    assert first.inputs == {"Q": SetupName("Q")}
    assert second.inputs["Q"].value == [[1.0, -2.5]] and second.inputs["right"].value == "C"


@pytest.mark.parametrize("source, message", [
    ('check(name, f)', "must read check"),
    ('check("t", f())', "must read check"),
    ('check("t", f, Q=__import__("os").system("x"))', "must be a literal"),
    ('check("t", f, **kw)', "name each input"),
    ('check("t", f', "not valid Python"),
    ("x = 1\n" * 20_000, "characters long"),
])
def test_anything_but_the_expected_form_is_refused(source, message):
    with pytest.raises(QuizSourceError, match=message):
        check_calls(source)


def test_setup_values_and_refusals():
    values = setup_values("import numpy as np\ntokens = ['a']\nQ = np.array([[1.0, 2.0]])\n")
    assert values["Q"].value == [[1.0, 2.0]] and values["Q"].array
    assert values["tokens"].value == ["a"]
    with pytest.raises(QuizSourceError, match="must assign a literal"):
        setup_values("print(1)\n")
    with pytest.raises(QuizSourceError, match="must be a literal"):
        setup_values("Q = np.ones(3)\n")
