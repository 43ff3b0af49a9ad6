"""The instructor's private option bank (issue 41: each multiple-choice item's "texts come
from the instructor's private bank"): ``python -m course_grading.variants --options FILE``.

Each test writes a bank of its own, its texts marked with words drawn when the test runs
(nobody's repository has them). What is checked: the class's template and every student's
notebook show the bank's texts, with the same right letters as without a bank; the public
wording rule (``per_student.public_wording_letters``) earns every multiple-choice point
without a bank and no more than a guess with one, over 200 students; a bad bank is refused
with one clear line and nothing is written. Both graders on a bank:
``test_public_repo_attacks.py``.
"""

from __future__ import annotations

import re
import secrets
import stat
from pathlib import Path

import nbformat
import pytest
from per_student import TEXTS, bank_text, marker, public_wording_letters

from course_grading import option_bank, variants
from course_grading.checkpoint_answers import OPTIONS, option_numbers
from course_grading.personal import personal_notebook, personal_variant
from course_grading.pipeline import copy_course
from course_quiz.checkpoint_spec import CHECKPOINT

ROOT = Path(__file__).resolve().parents[2]
QUIZ = ROOT / "quiz"
NOTEBOOK = "checkpoint.ipynb"
SECRET = "option bank: a secret of the test"
STUDENTS = tuple(f"s{i:03d}" for i in range(200))

@pytest.fixture(scope="module")
def nonce() -> str:
    return secrets.token_hex(8)


@pytest.fixture(scope="module")
def bank(nonce) -> option_bank.OptionBank:
    return option_bank.parse_bank(bank_text(nonce))


def _question(nb: nbformat.NotebookNode, answer_id: str) -> str:
    cells = nb.cells
    i = next(i for i, c in enumerate(cells)
             if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == answer_id)
    return next(c.source for c in reversed(cells[:i]) if c.cell_type == "markdown")


def _shown(nb: nbformat.NotebookNode, answer_id: str) -> dict[str, str]:
    """letter -> option text, as the notebook shows them."""
    return {line[4]: line.split("** ", 1)[1] for line in _question(nb, answer_id).splitlines()
            if line.startswith("- **")}


def test_the_placeholders_are_those_option_numbers_gives():
    v = variants.make_variant("placeholders")
    for question in option_bank.mc_questions():
        got = option_numbers(question, variants._option_inputs(v))
        assert option_bank.placeholders(question) == tuple(sorted(got)), question


def test_every_student_sees_the_banks_texts_with_the_same_right_letters(nonce, bank):
    """Each student's notebook (as the release writes it) shows the bank's four texts of
    each question with that student's numbers, and nothing of the public templates; the
    letter each text stands at is the one the grader reads as right or as its
    misconception, and the right letters are those of the same student without a bank."""
    released = nbformat.read(QUIZ / "source" / "checkpoint" / NOTEBOOK, as_version=4)
    # the public templates' own words: every stretch of 12 characters or more between two
    # placeholders
    public_words = {q: [w for _, t in OPTIONS[q] for w in re.split(r"\{\w+\}", t)
                        if len(w.strip()) >= 12] for q in OPTIONS}
    for student in STUDENTS[:20]:
        nb = personal_notebook(released, SECRET, student, None, bank)
        plain = personal_variant(SECRET, student)
        v = personal_variant(SECRET, student, None, bank)
        for question in option_bank.mc_questions():
            shown = _shown(nb, question)
            right, wrong = variants.mc_letters(v, question)
            assert (right, wrong) == variants.mc_letters(plain, question)
            numbers = option_numbers(question, variants._option_inputs(v))
            keyed = {right: "right", **wrong}
            for letter, text in shown.items():
                key = keyed[letter]
                assert text == (f"{marker(nonce, question, key)} "
                                f"{TEXTS[question][key].format(**numbers)}"), (student, letter)
                assert not any(w in text for w in public_words[question]), text


def _mc_points(bank: option_bank.OptionBank | None) -> list[float]:
    """The public wording rule's multiple-choice points, one per student of STUDENTS."""
    out = []
    for student in STUDENTS:
        v = personal_variant(SECRET, student, None, bank)
        shown = {q: dict(zip(CHECKPOINT.letters, variants.mc_options(v, q), strict=True))
                 for q in option_bank.mc_questions()}
        picked = public_wording_letters(shown["mc_read_table"], shown["mc_duplicate_key"])
        out.append(sum(CHECKPOINT.check(f"test_{q}").points for q in shown
                       if picked[q] == variants.mc_letters(v, q)[0]))
    return out


def test_the_public_wording_rule_earns_a_guess_with_a_bank(bank, capsys):
    """Without a bank the public rule earns every multiple-choice point of every one of 200
    students; with one, no more than a guess. A guess is right one time in four per
    question, whatever the letter (each student's order is their own), so 200 students
    average 0.75 of 3 points (standard error 0.08); the bound is five standard errors
    above it."""
    full = sum(CHECKPOINT.check(f"test_{q}").points for q in option_bank.mc_questions())
    without, with_bank = _mc_points(None), _mc_points(bank)
    mean = sum(with_bank) / len(with_bank)
    with capsys.disabled():
        print(f"\npublic wording rule, multiple-choice points of {full} over "
              f"{len(STUDENTS)} students: without a bank {sum(without) / len(without):.2f}, "
              f"with a bank {mean:.2f} (a guess: {full / 4:.2f})")
    assert without == [full] * len(STUDENTS)
    assert mean <= full / 4 + 5 * 0.0823


def _run(tmp_path: Path, text: str) -> tuple[int, Path]:
    course = copy_course(QUIZ, tmp_path / "quiz")
    (tmp_path / "bank.md").write_text(text, encoding="utf-8")
    rc = variants.main(["--seed", SECRET, "--options", str(tmp_path / "bank.md"),
                        "--template", str(course / "source" / "checkpoint" / NOTEBOOK)])
    return rc, course / "secret_source"


def test_the_bank_is_kept_private_and_the_template_shows_it(tmp_path, nonce):
    rc, secret_source = _run(tmp_path, bank_text(nonce))
    assert rc == 0
    kept = secret_source / option_bank.BANK_FILE
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert option_bank.read_bank(secret_source) == option_bank.parse_bank(bank_text(nonce))
    nb = nbformat.read(secret_source / "checkpoint" / NOTEBOOK, as_version=4)
    for question in option_bank.mc_questions():
        markers = {marker(nonce, question, k) for k in TEXTS[question]}
        assert {t.split(" ", 1)[0] for t in _shown(nb, question).values()} == markers
    # run again without a bank: the kept one goes, and the template is the public texts'
    course = secret_source.parent
    assert variants.main(["--seed", SECRET, "--template",
                          str(course / "source" / "checkpoint" / NOTEBOOK)]) == 0
    assert not kept.exists()


def _edited(nonce: str, question: str, edit) -> str:
    texts = {q: dict(o) for q, o in TEXTS.items()}
    edit(texts[question])
    return bank_text(nonce, texts)


def _without_right(options):
    del options["right"]


@pytest.mark.parametrize(("bad", "says"), [
    (lambda n: _edited(n, "mc_duplicate_key", lambda o: o.update(right="{dup} gets {tokens}")),
     "option 'right' of mc_duplicate_key uses {tokens}: expected only placeholders of "
     "mc_duplicate_key (double, dup, half, one_plus_w, pair, rest, shrink, w)"),
    (lambda n: _edited(n, "mc_read_table", _without_right),
     "mc_read_table has no 'right' option: expected one '- right: ...' and one for each of "
     "division_sharpens, scale_like_shift, misreads_table"),
    (lambda n: bank_text(n).replace("- copies_share_weight:", "- right:"),
     "a second 'right' option in mc_duplicate_key: expected one of each"),
    (lambda n: _edited(n, "mc_read_table", lambda o: o.update(guessed="{U} or {D}")),
     "mc_read_table has the option 'guessed', which is no misconception of it in the spec: "
     "expected right, division_sharpens, scale_like_shift, misreads_table"),
    (lambda n: _edited(n, "mc_read_table", lambda o: o.pop("scale_like_shift")),
     "mc_read_table has 3 options, expected 4: no option for scale_like_shift"),
    (lambda n: bank_text(n) + "\n## mc_softmax_axis\n- right: rows\n",
     "no multiple-choice question 'mc_softmax_axis' in the checkpoint: expected one block for "
     "each of mc_read_table, mc_duplicate_key"),
    (lambda n: bank_text(n).split("## mc_duplicate_key")[0],
     "no options for mc_duplicate_key: expected one block for each of mc_read_table, "
     "mc_duplicate_key"),
    (lambda n: _edited(n, "mc_read_table", lambda o: o.update(right="{U climbs")),
     "option 'right' of mc_read_table has a stray brace"),
    (lambda n: _edited(n, "mc_duplicate_key", lambda o: o.update(right="{w:.3f} doubled")),
     "option 'right' of mc_duplicate_key has the placeholder {w:.3f}: expected a bare {name}"),
    (lambda n: bank_text(n, {**TEXTS, "mc_read_table": dict(OPTIONS["mc_read_table"])},
                         marked=False),
     "is a text of the public templates (course_grading.checkpoint_answers.OPTIONS), which "
     "anyone can read: expected a text of your own"),
])
def test_a_bad_bank_is_refused_with_one_clear_line_and_nothing_written(tmp_path, capsys,
                                                                       nonce, bad, says):
    rc, secret_source = _run(tmp_path, bad(nonce))
    err = capsys.readouterr().err
    assert rc == 2
    assert says in err and err.startswith("variants: ") and err.count("\n") == 1, err
    assert not secret_source.exists()


@pytest.mark.slow
def test_the_proof_holds_with_a_bank_for_200_students(bank):
    """With a bank, for each of 200 students: the variant's numbers are those without a
    bank and its proof holds (each hidden check of the function fails for exactly its own
    mistake); in the notebook the student receives, read as the grader reads it, each
    question shows four different texts, the right letter passes and every wrong letter
    fails naming the misconception of the bank's text at that letter."""
    from course_grading.checkpoint_answers import expected
    from course_grading.verdicts import plan_checks
    from course_quiz.checkpoint_checks import answer_as_data, judge

    released = nbformat.read(QUIZ / "source" / "checkpoint" / NOTEBOOK, as_version=4)
    template = variants.fill(released, variants.make_variant("template", None, bank))
    for student in STUDENTS:
        v = personal_variant(SECRET, student, None, bank)
        plain = personal_variant(SECRET, student)
        assert variants._check_variant(v) is None, student
        nb = personal_notebook(template, SECRET, student, None, bank)
        without = personal_notebook(template, SECRET, student)
        # every cell but the options' the same as without the bank (the numbers, the checks)
        differ = [i for i, (a, b) in enumerate(zip(nb.cells, without.cells, strict=True))
                  if a.source != b.source]
        assert differ and all(nb.cells[i].cell_type == "markdown" for i in differ), student
        assert personal_variant(SECRET, student).mc_order == v.mc_order == plain.mc_order
        plan = {p.grade_id: p for p in plan_checks(nb, CHECKPOINT).values()}
        for question in option_bank.mc_questions():
            shown = _shown(nb, question)
            assert len(set(shown.values())) == len(CHECKPOINT.letters), (student, shown)
            grade_id = f"test_{question}"
            inputs = plan[grade_id].inputs
            want = expected(grade_id, inputs)
            right = judge(grade_id, answer_as_data("letter", inputs["right"]), inputs,
                          CHECKPOINT, want)
            assert right.passed, student
            for letter, misconception in inputs["wrong"].items():
                assert shown[letter].startswith(marker_of(bank, question, misconception))
                got = judge(grade_id, answer_as_data("letter", letter), inputs, CHECKPOINT,
                            want)
                assert not got.passed and got.mistake == misconception, (student, letter)


def marker_of(bank: option_bank.OptionBank, question: str, key: str) -> str:
    """The marker word the bank's text of ``key`` begins with."""
    return dict(bank.templates(question))[key].split(" ", 1)[0]


def test_the_docs_example_is_a_bank_the_course_accepts():
    """docs/examples/options.md, which docs/instructors.md shows, is a whole, valid bank
    (used by nothing: the course's default is the public templates)."""
    bank = option_bank.parse_bank((ROOT / "docs" / "examples" / "options.md").read_text(
        encoding="utf-8"))
    assert set(bank.questions) == set(option_bank.mc_questions())
    assert option_bank.read_bank(QUIZ) is None
