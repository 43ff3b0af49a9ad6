"""The probe reads an answer as plain data; its reply is taken only in one exact form."""

from __future__ import annotations

import contextlib
import io
import json

import numpy as np
import pytest

from course_grading.probe import MAX_REPLY, new_marker, probe_source, read_reply
from course_quiz.checkpoint_checks import answer_as_data


def _run(source: str, namespace: dict) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(source, namespace)
    return out.getvalue()


@pytest.mark.parametrize("answer", [
    lambda Q, K: np.ones((len(Q), len(K))) / len(K),
    lambda Q, K: (np.ones((len(Q), len(K))) / len(K)).astype(np.float32).tolist(),
    lambda Q, K: tuple(tuple(1.0 / len(K) for _ in K) for _ in Q),
    lambda Q, K: 1 / 0,
    lambda Q, K: "no",
])
def test_the_kernel_side_gives_exactly_what_the_students_own_check_gives(answer):
    Q, K = [[1.0, 0.0], [0.5, 0.5]], [[1.0, 2.0], [0.0, 1.0], [3.0, 1.0]]
    marker = new_marker()
    ns = {"attention_weights": answer}
    reply = read_reply(_run(probe_source("weights", "attention_weights", (Q, K), marker), ns),
                       marker)
    assert reply == json.loads(json.dumps(answer_as_data("weights", answer, (Q, K))))
    assert sorted(k for k in ns if not k.startswith("__")) == ["attention_weights"]


def test_a_missing_name_and_a_letter():
    marker = new_marker()
    assert read_reply(_run(probe_source("letter", "answer_x", (), marker), {}), marker) == \
        {"missing": True}
    reply = read_reply(_run(probe_source("letter", "answer_x", (), marker),
                            {"answer_x": "c"}), marker)
    assert reply == {"value": "c"}


def test_replies_other_than_one_bounded_json_line_are_refused():
    m = new_marker()
    assert read_reply("", m) == "no reply from the kernel"
    assert "2 replies" in read_reply(f"{m}{{}}\n{m}{{}}\n", m)
    assert "not valid JSON" in read_reply(m + "[" * 50_000 + "\n", m)
    assert "characters" in read_reply(m + "1" * (MAX_REPLY + 1) + "\n", m)
    assert "string" in read_reply(m + '"x"\n', m)


def test_only_identifiers_reach_the_probe_source():
    with pytest.raises(ValueError, match="identifiers"):
        probe_source("letter", "x); import os; (", (), new_marker())
    with pytest.raises(TypeError, match="numbers, strings or lists"):
        probe_source("weights", "f", (object(),), new_marker())


def test_names_in_a_reply_come_from_fixed_lists_only():
    from course_grading.probe import plain_names

    assert plain_names({"raised": "ZeroDivisionError"}) == {"raised": "ZeroDivisionError"}
    assert plain_names({"raised": "LinAlgError"}) == {"raised": "LinAlgError"}
    # a class of the student's own, named after what it saw
    assert plain_names({"raised": "Leak_31415_127182"}) == {"raised": "an exception"}
    assert plain_names({"not_numbers": "Q_31415"}) == {"not_numbers": "object"}
    assert plain_names({"not_text": "ndarray"}) == {"not_text": "ndarray"}
    assert plain_names({"value": [0.5, 0.5]}) == {"value": [0.5, 0.5]}
    # a reply of an unknown form says nothing of what it held
    for forged in ({"Q_31415": 1}, {"value": 1, "x": 2}, [1, 2], 3.0):
        said = plain_names(forged)
        assert isinstance(said, str) and "31415" not in said
    assert plain_names("no reply from the kernel") == "no reply from the kernel"
