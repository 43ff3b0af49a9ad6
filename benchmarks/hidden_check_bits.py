"""How much can a student's function tell itself through a hidden check's verdict?

A hidden check calls the student's function on inputs the student has not seen. Whatever
the function then does (return a known mistake's weights, raise one exception or another,
return something that is not numbers, delete itself, run out of time) was chosen by code
that knew those inputs, and each choice that reaches the student with its own words is a
channel: with K distinct verdicts a check carries log2(K) bits of its hidden inputs back to
the student (issue 42, item 2), at the cost of that check's point, e.g. on a practice round.

This script enumerates every reply a function can make to each hidden check of the
checkpoint's public variant, has the grader judge it and word it as the student sees it
(``course_grading.verdicts.DecideOnHost``: the verdict's message, reason, mistake, detail
and the error nbgrader scores), and counts the distinct verdicts, separately for the named
mistakes the function can imitate. It runs no kernel and asserts nothing.

    python benchmarks/hidden_check_bits.py
    python benchmarks/hidden_check_bits.py --smoke   # the same: it takes seconds already
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import nbformat
import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from course_grading.checkpoint_answers import expected  # noqa: E402
from course_grading.probe import REPORTED_EXCEPTIONS, REPORTED_TYPES  # noqa: E402
from course_grading.verdicts import (  # noqa: E402
    DecideOnHost,
    plan_checks,
    sends_hidden_inputs,
    verdict_output,
)
from course_quiz.checkpoint_checks import Verdict, judge  # noqa: E402
from course_quiz.checkpoint_spec import CHECKPOINT  # noqa: E402

SOURCE = HERE.parent / "quiz" / "source" / "checkpoint" / "checkpoint.ipynb"


def replies(want: list, mistaken: dict[str, list]) -> dict[str, list[object]]:
    """Every kind of reply a function can send, by kind (a reply is what the probe sends)."""
    n = len(want)
    right = np.asarray(want, dtype=float)
    return {
        "passed": [{"value": want}],
        "imitates a named mistake": [{"value": t} for t in mistaken.values()],
        "raises an exception": [{"raised": name} for name in sorted(REPORTED_EXCEPTIONS)]
        + [{"raised": "an exception"}],
        "returns something else": [
            {"value": np.zeros((n, n)).tolist()}, {"value": [[0.5]]},
            {"value": np.full((n, n), np.nan).tolist()},
            {"value": (right * 0.5).tolist()}, {"value": np.eye(n).tolist()},
            {"too_big": [5000, 5000]}, {"missing": True},
            "no reply from the kernel", "a reply that is not valid JSON",
            *({"not_numbers": t} for t in sorted(REPORTED_TYPES))],
    }


def shown(grader: DecideOnHost, planned, reply: object) -> tuple:
    """The verdict as the student sees it: its record and the error nbgrader scores."""
    if isinstance(reply, str):  # what _decide makes of a reply it cannot read
        verdict = Verdict(planned.grade_id, False, f"The grader could not read "
                          f"`{planned.answer}` from your notebook: {reply}.", "not_plain")
    else:
        verdict = judge(planned.grade_id, reply, planned.inputs, CHECKPOINT,
                        expected(planned.grade_id, planned.inputs, CHECKPOINT))
    word = getattr(grader, "_hidden_verdict", None) or grader._in_fixed_words
    told = word(planned, verdict)
    out = verdict_output(told)
    return (told.passed, told.message, told.reason, told.mistake, told.detail,
            out.get("ename"), out.get("evalue"), out.get("text"))


def main(argv: list[str] | None = None) -> int:
    """Print, per hidden check, the distinct verdicts a function can make the grader say."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--smoke", action="store_true",
                        help="the suite's check that it runs: the whole run (seconds, no kernel)")
    parser.parse_args(argv)
    nb = nbformat.read(SOURCE, as_version=4)
    grader = DecideOnHost()
    grader._spec = CHECKPOINT
    grader._verdicts = {}
    print(f"{'hidden check':<26}{'verdicts':>9}{'bits':>7}   of which named mistakes")
    for planned in plan_checks(nb, CHECKPOINT).values():
        if not planned.deferred or not sends_hidden_inputs(planned):
            continue
        facts = expected(planned.grade_id, planned.inputs, CHECKPOINT)
        kinds = replies(facts["want"], facts.get("mistaken") or {})
        seen = {shown(grader, planned, r) for rs in kinds.values() for r in rs}
        named = {v for v in (shown(grader, planned, r)
                             for r in kinds["imitates a named mistake"]) if v[3]}
        print(f"{planned.grade_id:<26}{len(seen):>9}{math.log2(len(seen)):>7.2f}   "
              f"{len(named)} ({', '.join(sorted({v[3] for v in named})) or '-'})")
    print("A failed check that is told the same way whatever happened leaves 2 verdicts: "
          "1 bit, the point itself.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
