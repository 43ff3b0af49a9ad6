"""The instructors' guide, run as typed: every shell block from "Set up once" to the export.

docs/instructors.md is read here, not copied: its ``sh`` blocks, from its first section to
step 7, are written into one bash script, line by line as an instructor types them, and run
in a throw-away clone (a copy of ``quiz/`` and the test's own ``.venv``). Each command's exit
status is recorded; all must be 0 except those the guide itself says end with 1 (dave's
corrupt notebook). Only the lines in :data:`NOT_RUN` are left out, each for a reason, and
the test fails if one of them is no longer in the guide (then this list needs a look). The
formgrader step (grading the written answer by hand) is done as formgrader does it: a manual
score in the gradebook.
"""

from __future__ import annotations

import csv
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from course_grading.pipeline import copy_course
from course_quiz.checkpoint_spec import CHECKPOINT

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "instructors.md"

#: Lines of the instructor flow this test does not type, and why.
NOT_RUN = {
    "./course setup grading": "installs into .venv; the test runs in that environment",
    "sudo apt-get install bubblewrap": "installs a system package (the test needs bwrap)",
    "python -m course_grading.formgrader_csp .": "a server for clicking in: "
    "tests/browser/test_formgrader_laptop_flow.py serves it, tests/test_formgrader_stop.py "
    "stops it; here the written answers are graded as formgrader saves a grade",
}
#: Commands the guide says end with status 1 when a submission cannot be read (dave's).
ENDS_WITH_1 = {"nbgrader autograde checkpoint", "python -m course_grading.parallel checkpoint"}
#: Where the flow ends: the sections after it explain and point at tests and benchmarks.
LAST_STEP = "## 7."

# Grading the written answers by hand, as formgrader's Manual Grading saves a score.
GRADE_BY_HAND = """\
from nbgrader.api import Gradebook

with Gradebook("sqlite:///gradebook.db") as gb:
    for student, score in (("alice", 2.0), ("bob", 1.0)):
        grade = gb.find_grade("written_shift_or_scale", "checkpoint", "checkpoint", student)
        grade.manual_score = score
        grade.needs_manual_grade = False
    gb.db.commit()
"""
MANUAL = {"alice": 2.0, "bob": 1.0}

# An instructor's own option texts (step 1's --options): docs/examples/options.md's items,
# each reworded ("In our class: ..."), so no text is the public example's or the templates'.
OWN_BANK = re.sub(r"^- (\w+): ", r"- \1: In our class: ",
                  (ROOT / "docs" / "examples" / "options.md").read_text(encoding="utf-8"),
                  flags=re.M)


def instructor_flow(text: str) -> list[tuple[str, str]]:
    """(section heading, command line) of every sh block up to the end of step 7, in order."""
    flow, section, in_block = [], "", False
    for line in text.splitlines():
        if not in_block and line.startswith("## "):
            if section.startswith(LAST_STEP):
                break
            section = line
        elif line.strip() == "```sh":
            in_block = True
        elif in_block and line.strip() == "```":
            in_block = False
        elif in_block:
            command = re.sub(r"\s+#.*$", "", line).strip()  # a trailing comment is not typed
            if command and not command.startswith("#"):
                flow.append((section, command))
    return flow


def fence_languages(text: str) -> list[str]:
    """The language of each fenced block up to the end of step 7 (``""`` for none)."""
    head = text.split(f"\n{LAST_STEP}", 1)
    rest = head[1].split("\n## ", 1)[0] if len(head) == 2 else ""
    fences = re.findall(r"^\s*```(.*)$", head[0] + rest, re.M)
    return [lang.strip() for lang in fences[::2]]  # every other fence opens a block


def test_the_flow_is_read_from_the_guide():
    text = GUIDE.read_text(encoding="utf-8")
    flow = instructor_flow(text)
    commands = [command for _, command in flow]
    for line in NOT_RUN:
        assert line in commands, f"the guide no longer types {line!r}: look at NOT_RUN"
    for line in ENDS_WITH_1:
        assert line in commands, f"the guide no longer types {line!r}: look at ENDS_WITH_1"
    sections = {section.split()[1] for section, _ in flow}
    # every step of the flow types something: a step left out would go unnoticed here
    assert {"Set", "1.", "2.", "3.", "4.", "5.", "6.", "7."} <= sections, sorted(sections)
    # a block typed as anything but sh would be skipped; python is the formgrader config
    others = [lang for lang in fence_languages(text) if lang not in ("sh", "python")]
    assert others == [], f"blocks of {others} up to step 7 would not run: write them as sh"
    # each line is run as one command: a line continued with \ would run in two halves
    continued = [c for c in commands if c.endswith("\\")]
    assert continued == [], f"commands continued over lines: {continued}"
    assert not any("benchmarks/" in c or c.startswith("./course test") for c in commands)


@pytest.mark.slow
@pytest.mark.sandbox
@pytest.mark.timeout(600)
def test_the_instructors_guide_runs_as_typed(tmp_path, bwrap_ok):
    prefix = Path(sys.prefix)
    if not (prefix / "bin" / "activate").is_file():
        pytest.skip(f"the tests' Python ({prefix}) is not a virtual environment with bin/activate")
    clone = tmp_path / "clone"
    copy_course(ROOT / "quiz", clone / "quiz")
    (clone / ".venv").symlink_to(prefix)
    (tmp_path / "grade_by_hand.py").write_text(GRADE_BY_HAND)
    # the instructor's own option bank, beside the clone as step 1 says: the public example's
    # form with texts of the instructor's own
    (tmp_path / "my-options.md").write_text(OWN_BANK, encoding="utf-8")

    flow = instructor_flow(GUIDE.read_text(encoding="utf-8"))
    script: list[str] = []
    graded_by_hand = False
    for section, command in flow:
        if command in NOT_RUN:
            continue
        if section.startswith("## 6.") and not graded_by_hand:  # what step 5 does in formgrader
            script.append(f"python {shlex.quote(str(tmp_path / 'grade_by_hand.py'))}")
            graded_by_hand = True
        script.append(command)
    assert graded_by_hand, "no step 6 (feedback) found in the guide"
    lines = []
    for n, command in enumerate(script):
        lines += [f"echo '>>> {n}' >&2", command, f"echo \"@@status {n} $?\""]
    result = subprocess.run(["bash", "-c", "\n".join(lines)], cwd=clone, capture_output=True,
                            text=True, timeout=540)
    statuses = {int(n): int(s) for n, s in re.findall(r"^@@status (\d+) (\d+)$",
                                                      result.stdout, re.M)}
    log = result.stdout[-4000:] + result.stderr[-6000:]
    assert sorted(statuses) == list(range(len(script))), log
    for n, command in enumerate(script):
        expected = 1 if command in ENDS_WITH_1 else 0
        assert statuses[n] == expected, f"{command!r} ended with {statuses[n]}\n{log}"

    quiz = clone / "quiz"
    # the engine's summary and the grade table name dave's notebook for what it is
    assert "FAILED dave: the notebook is not valid JSON" in result.stdout, log
    assert "ungraded: corrupt notebook (not valid JSON)" in result.stdout, log
    # nbgrader export: every student; full marks but the hand-graded answer for alice,
    # fewer for bob's one mistake, nothing for the blank and the unreadable notebooks
    rows = {}
    # nbgrader export writes its cells unquoted: a name with a comma (alice's "Martin, Jr.")
    # shifts the columns after it, so only the id (4th) and the last two are read here
    for row in (quiz / "grades.csv").read_text(encoding="utf-8").splitlines()[1:]:
        cells = row.split(",")
        rows[cells[3]] = (float(cells[-2]), float(cells[-1]))
    assert set(rows) == {"alice", "bob", "carol", "dave"}
    # the grade table's CSV carries the class list's names as written
    with open(quiz / "grades-checkpoint.csv", encoding="utf-8", newline="") as f:
        names = {r["student"]: r["name"] for r in csv.DictReader(f)}
    assert names == {"alice": "Alice Martin, Jr.", "bob": "Bob Ó Briain",
                     "carol": "Carol Nguyễn", "dave": 'Dave O"Hara'}
    written_max = CHECKPOINT.question("written_shift_or_scale").points
    score, max_score = rows["alice"]
    assert score == max_score - written_max + MANUAL["alice"]
    assert MANUAL["bob"] < rows["bob"][0] < score
    assert rows["carol"][0] == rows["dave"][0] == 0
    assert (quiz / "grades-checkpoint.csv").is_file()
    # the LMS files: every final grade on its LMS key (dave's could not be graded)
    with open(quiz / "canvas-checkpoint.csv", encoding="utf-8", newline="") as f:
        canvas = list(csv.reader(f))
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                         "checkpoint"]
    assert {r[1]: float(r[5]) for r in canvas[2:]} == {
        "70001": score, "70002": rows["bob"][0], "70003": rows["carol"][0]}
    assert canvas[2][0] == "Martin, Jr., Alice"
    with open(quiz / "moodle-checkpoint.csv", encoding="utf-8", newline="") as f:
        moodle = {r["ID number"]: r for r in csv.DictReader(f)}
    assert sorted(moodle) == ["70001", "70002", "70003"]
    assert moodle["70002"]["Last name"] == "Ó Briain"
    assert (quiz / "report-checkpoint" / "report.html").is_file()
    for student in ("alice", "bob", "carol"):
        assert (quiz / "feedback" / student / "checkpoint" / "checkpoint.html").is_file()
    # the variant of step 1 is what was released and graded, with the instructor's bank
    released = (quiz / "release" / "checkpoint" / "checkpoint.ipynb").read_text()
    assert '"course_variant": "public"' not in released
    assert OWN_BANK.count("In our class: ") >= 8
    assert released.count("In our class: ") >= 8, "the bank's texts are not in the release"
    fed_back = (quiz / "feedback" / "alice" / "checkpoint" / "checkpoint.html").read_text()
    assert "In our class: " in fed_back


@pytest.fixture(scope="module")
def bwrap_ok() -> None:
    """Skip unless bubblewrap sandboxes work here, as the guide's set-up checks."""
    from course_grading.sandbox import sandbox_problem

    problem = sandbox_problem()
    if problem:
        pytest.skip(f"{problem} (scripts/install-system-packages.sh installs it)")
