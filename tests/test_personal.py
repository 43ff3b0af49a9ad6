"""Per-student variants (course_grading.personal): each student their own numbers and order,
recomputed from the instructor's secret and the id alone, the proof holding for every one.

The slow half (nbgrader autograde and the engine on such a class, copies and edits of a
classmate's work) is tests/grading/test_personal_pipeline.py; the exchanges'
tests/test_personal_exchange.py.
"""

from __future__ import annotations

import itertools
import json
from collections import Counter
from pathlib import Path

import nbformat
import numpy as np
import pytest

from course_grading import personal, variants
from course_grading.check_calls import setup_values
from course_grading.checkpoint_answers import expected, weights_without_self
from course_grading.mistakes import CORRECT_ANSWER, MISTAKES, answer_function, hidden_test_id
from course_grading.variants import HIDDEN_WEIGHT_CHECKS, VISIBLE_WEIGHT_CHECK, fill, quiz_facts
from course_quiz.checkpoint_checks import answer_as_data, judge
from course_quiz.checkpoint_spec import CHECKPOINT

ROOT = Path(__file__).resolve().parents[1]
PUBLIC = nbformat.read(ROOT / variants.SOURCE_PATH, as_version=4)
SECRET = "a class secret"
#: 200 student ids of the kinds a class uses (login names, numbers, e-mail addresses).
IDS = ([f"student{i:03d}" for i in range(120)] + [f"{i:08d}" for i in range(40)]
       + [f"s.{i}@uni.example" for i in range(40)])


def _cells(nb) -> dict:
    return {c.metadata["nbgrader"]["grade_id"]: c for c in nb.cells if "nbgrader" in c.metadata}


def _inputs(nb, grade_id: str) -> dict:
    from course_grading.verdicts import plan_checks

    return next(p.inputs for p in plan_checks(nb, CHECKPOINT).values()
                if p.grade_id == grade_id)


def test_a_students_seed_is_an_hmac_of_their_id_under_the_secret():
    seed = personal.student_seed(SECRET, "alice")
    assert seed == personal.student_seed(SECRET, "alice")
    assert seed != personal.student_seed(SECRET, "bob")
    assert seed != personal.student_seed("another secret", "alice")
    assert SECRET not in seed and "alice" not in seed
    with pytest.raises(ValueError, match="needs a secret and a student id"):
        personal.student_seed(SECRET, "")


def test_two_students_get_different_numbers_in_every_input_and_their_own_order():
    """Issue 41's first test, on the notebooks they receive: every numeric input differs
    (the example, the derivation's row, key and c, question 4's tokens, the table, each
    hidden check's inputs), and so does the order of each question's options."""
    released = fill(PUBLIC, variants.make_variant("template"))
    a, b = (personal.personal_variant(SECRET, s) for s in ("alice", "bob"))
    na, nb_ = (personal.personal_notebook(released, SECRET, s) for s in ("alice", "bob"))
    sa, sb = (setup_values(_cells(n)["setup"].source) for n in (na, nb_))
    assert sa["Q"].value != sb["Q"].value and sa["K"].value != sb["K"].value
    assert (sa["row"].value, sa["shift_key"].value, sa["c"].value) != (
        sb["row"].value, sb["shift_key"].value, sb["c"].value)
    assert (sa["dup_query"].value, sa["dup_key"].value) != (
        sb["dup_query"].value, sb["dup_key"].value)
    assert not np.array_equal(a.table, b.table)
    for test_id in HIDDEN_WEIGHT_CHECKS:
        assert not np.array_equal(a.hidden_inputs[test_id][0], b.hidden_inputs[test_id][0])
    for question in variants.MC_QUESTIONS:
        assert a.mc_order[question] != b.mc_order[question], question
    assert na.metadata["course_student"] == "alice"
    assert na.metadata["course_variant"] == a.seed_id != b.seed_id


def test_the_students_notebook_keeps_nbgraders_checksums():
    """Validate and autograde compare each read-only cell with its checksum: the student's
    own numbers come with checksums of their own."""
    from nbgrader.utils import compute_checksum

    from course_grading.feedback import visible_part

    released = fill(PUBLIC, variants.make_variant("template"))
    for cell in released.cells:  # as generate_assignment makes them
        meta = cell.metadata.get("nbgrader")
        if meta:
            cell.source = visible_part(cell.source)
            if meta.get("locked") or meta.get("grade"):
                meta["checksum"] = compute_checksum(cell)
    own = personal.personal_notebook(released, SECRET, "alice")
    changed = 0
    for before, after in zip(released.cells, own.cells, strict=True):
        meta = after.metadata.get("nbgrader", {})
        if "checksum" in meta:
            assert meta["checksum"] == compute_checksum(after), meta["grade_id"]
            changed += before.source != after.source
    assert changed >= 1  # the setup cell at least


def _judge(func, nb, test_id, known: dict | None = None) -> bool:
    """Judge ``func`` on a check as the grader does (``known`` keeps each check's inputs
    and expected values, computed once per notebook)."""
    known = {} if known is None else known
    if test_id not in known:
        inputs = _inputs(nb, test_id)
        known[test_id] = (inputs, expected(test_id, inputs))
    inputs, want = known[test_id]
    data = answer_as_data("weights", func, (inputs["Q"], inputs["K"]))
    return judge(test_id, json.loads(json.dumps(data)), inputs, expected=want).passed


@pytest.mark.slow
def test_the_proof_holds_for_200_students():
    """Deterministic, and for each of 200 ids, judged as the grader judges on the inputs
    the grader reads from that student's notebook: the right answer passes every check;
    each of the four mistakes fails its own hidden check and no other hidden one; an
    answer that never reads Q and K fails every hidden check; the derivation's right row
    is not uniform; no option of the student's is an option of the public notebook."""
    template = fill(PUBLIC, variants.make_variant("template"))
    answers = {"correct": answer_function(CORRECT_ANSWER),
               **{m: answer_function(src) for m, src in MISTAKES.items()}}
    blind = variants.know_nothing_answers(variants.make_variant("template"))
    public_options = {q: set(variants.mc_options(variants.make_variant("public"), q))
                      for q in variants.MC_QUESTIONS}
    for student in IDS:
        v = personal.personal_variant(SECRET, student)
        assert variants.make_variant(personal.student_seed(SECRET, student)).Q.tolist() == \
            v.Q.tolist()
        nb = fill(template, v)
        known: dict = {}
        for name, func in answers.items():
            for test_id in (VISIBLE_WEIGHT_CHECK, *HIDDEN_WEIGHT_CHECKS):
                passed = _judge(func, nb, test_id, known)
                if name == "correct":
                    assert passed, (student, test_id)
                elif test_id in HIDDEN_WEIGHT_CHECKS:
                    assert passed != (test_id == hidden_test_id(name)), (student, name, test_id)
        replay = weights_without_self(v.Q, v.K)
        for name, func in [*blind.items(), ("replay", lambda Q, K, w=replay: w)]:
            if name == "visible_example_replayed":
                continue  # the template's example: "replay" is this student's own
            for test_id in HIDDEN_WEIGHT_CHECKS:
                assert not _judge(func, nb, test_id, known), (student, name, test_id)
        assert np.abs(v.shifted_row - 0.25).max() > 0.02, student
        assert np.abs(v.shift_factors - 1.0).min() > 0.02, student  # every factor moves
        for q in variants.MC_QUESTIONS:
            assert not set(variants.mc_options(v, q)) & public_options[q], (student, q)


def test_a_classmates_letter_is_right_as_often_as_a_guess():
    """Each student's options are in an order of their own, independent of everyone else's:
    over 200 students every letter is right for about a quarter of them, and of all pairs
    of classmates about a quarter share a right letter; so copying a classmate's letter,
    or the public notebook's, is a guess."""
    for question in variants.MC_QUESTIONS:
        right = [variants.mc_letters(personal.personal_variant(SECRET, s), question)[0]
                 for s in IDS]
        counts = Counter(right)
        assert set(counts) == set(CHECKPOINT.letters)
        assert all(30 <= n <= 70 for n in counts.values()), counts  # 50 expected
        pairs = list(itertools.combinations(right, 2))
        same = sum(x == y for x, y in pairs) / len(pairs)
        assert 0.2 <= same <= 0.3, same
        public = variants.mc_letters(variants.make_variant("public"), question)[0]
        assert 30 <= sum(r == public for r in right) <= 70


def _closest(options: list[str], text: str) -> int:
    import difflib

    return max(range(len(options)),
               key=lambda i: difflib.SequenceMatcher(None, options[i], text).ratio())


def test_the_public_notebooks_right_wording_picks_the_right_option_half_the_time():
    """Issue 41: 'a student who read the public source knows which text is right, whatever
    its letter'. No student's option is a public one word for word; and an attacker who
    picks, in each question, the option closest to the public notebook's right one (its
    wording, with other numbers) lands on the right option's twin as often as on it: the
    student's own numbers decide between the two. Over 200 students: about half."""
    public = variants.make_variant("public")
    for question in variants.MC_QUESTIONS:
        right_text = variants.mc_options(public, question)[
            CHECKPOINT.letters.index(variants.mc_letters(public, question)[0])]
        hits = 0
        for student in IDS:
            v = personal.personal_variant(SECRET, student)
            options = variants.mc_options(v, question)
            assert right_text not in options
            right = CHECKPOINT.letters.index(variants.mc_letters(v, question)[0])
            hits += _closest(options, right_text) == right
        assert 0.3 <= hits / len(IDS) <= 0.7, (question, hits)


def test_the_grader_puts_the_students_numbers_back_whatever_the_notebook_says():
    """PersonalVariant, on a submission as nbgrader restores it: the setup cell and every
    hidden check get the numbers of the student whose folder it came from, whatever the
    notebook held (a classmate's numbers, edited in); answer cells are the student's,
    even one that writes nbgrader's solution markers to get its letter rewritten."""
    source = fill(PUBLIC, variants.make_variant("template"))
    submitted = personal.personal_notebook(source, SECRET, "bob")  # bob's numbers...
    answer = _cells(submitted)["mc_read_table"]
    answer.source = '### BEGIN SOLUTION\nanswer_read_table = "A"\n### END SOLUTION'
    pre = personal.PersonalVariant(secret_file=_secret_file())
    graded, _ = pre.preprocess(submitted, {"nbgrader": {"assignment": "checkpoint",
                                                        "student": "alice"}})
    alice = personal.personal_variant(SECRET, "alice")
    facts = quiz_facts(graded)
    assert np.array_equal(facts.Q, alice.Q) and facts.right == variants.facts_of(alice).right
    for test_id in HIDDEN_WEIGHT_CHECKS:
        assert _inputs(graded, test_id)["Q"] == alice.hidden_inputs[test_id][0].tolist()
    assert _cells(graded)["mc_read_table"].source == answer.source
    assert graded.metadata["course_student"] == "alice"
    other, _ = pre.preprocess(submitted, {"nbgrader": {"assignment": "another",
                                                       "student": "alice"}})
    assert other is submitted  # another assignment is left alone


_SECRET_DIR: list[Path] = []


def _secret_file() -> str:
    import tempfile

    if not _SECRET_DIR:
        _SECRET_DIR.append(Path(tempfile.mkdtemp()))
        (_SECRET_DIR[0] / "variant_secret").write_text(SECRET + "\n")
    return str(_SECRET_DIR[0] / "variant_secret")


def test_the_secret_is_read_with_clear_errors(tmp_path):
    empty = tmp_path / "empty"
    empty.write_text("  \n")
    with pytest.raises(ValueError, match="is empty: it must hold the secret"):
        personal.read_secret(empty)
    binary = tmp_path / "binary"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ValueError, match="not UTF-8"):
        personal.read_secret(binary)
    assert personal.read_secret(_secret_file()) == SECRET


def test_the_command_line_writes_the_secret_private_and_per_class_removes_it(tmp_path):
    template = tmp_path / "quiz" / "source" / "checkpoint" / "checkpoint.ipynb"
    template.parent.mkdir(parents=True)
    template.write_text(nbformat.writes(PUBLIC))
    assert variants.main(["--seed", SECRET, "--template", str(template)]) == 0
    secret = tmp_path / "quiz" / "secret_source" / "variant_secret"
    assert personal.read_secret(secret) == SECRET and secret.stat().st_mode & 0o777 == 0o600
    assert variants.main(["--seed", SECRET, "--template", str(template), "--per-class"]) == 0
    assert not secret.exists()
    assert (tmp_path / "quiz" / "secret_source" / "checkpoint" / "checkpoint.ipynb").exists()


def test_a_student_id_that_is_not_a_folder_name_is_refused():
    from course_exchange.exchange import personal_folder

    for bad in ("../bob", "a/b", ".", "..", "", "x" * 200, "bob\n"):
        with pytest.raises(ValueError, match="must be a plain name"):
            personal_folder(Path("/x"), "checkpoint", bad)


ONLINE = variants.ONLINE_CHECK


def _online_verdict(nb, answer, inputs=None):
    inputs = _inputs(nb, ONLINE) if inputs is None else inputs
    data = answer_as_data("output", answer)
    return judge(ONLINE, json.loads(json.dumps(data)), inputs,
                 expected=expected(ONLINE, inputs) if inputs else None)


@pytest.mark.slow
def test_the_online_softmax_item_isolates_its_misconceptions_for_200_students():
    """Part 3's item (issue 41: the whole course assessed), judged as the grader judges on
    the inputs it reads from each of 200 students' notebooks: the right state passes; each
    misconception of the spec fails, named by its own words and no other; constant answers,
    and the whole row's maximum and sum written for every block (a softmax called on the
    row, no blocks worked through), fail; the visible check passes every six finite numbers,
    right or wrong (it confirms the form only)."""
    from course_grading.checkpoint_answers import MISCONCEIVED

    template = fill(PUBLIC, variants.make_variant("template"))
    names = [m.id for m in CHECKPOINT.misconceptions_of("online_state")]
    assert names == ["no_rescale", "rescale_inverted", "unshifted_sum", "block_max"]
    seen = set()
    for student in IDS:
        v = personal.personal_variant(SECRET, student)
        nb = fill(template, v)
        inputs = _inputs(nb, ONLINE)
        assert inputs == {"scores": list(v.block_scores), "block": v.block}, student
        seen.add(v.block_scores)
        right = v.online_state
        assert _online_verdict(nb, right.tolist()).passed, student
        for name in names:
            verdict = _online_verdict(nb, MISCONCEIVED[name](inputs).tolist())
            assert not verdict.passed and verdict.mistake == name, (student, name, verdict)
            assert CHECKPOINT.misconception(name).hint[1:] in verdict.message
        for name, state in variants.online_know_nothing(inputs).items():
            verdict = _online_verdict(nb, state.tolist())
            assert not verdict.passed and verdict.mistake is None, (student, name)
        for state in (right, MISCONCEIVED["no_rescale"](inputs)):
            assert _online_verdict(nb, state.tolist(), inputs={}).passed  # form only
    assert len(seen) == len(IDS)  # every student their own row


def test_the_online_softmax_items_visible_check_names_its_form_mistakes():
    nb = fill(PUBLIC, personal.personal_variant(SECRET, "alice"))
    inputs = _inputs(nb, ONLINE)
    short = _online_verdict(nb, [1.0, 2.0], inputs)
    assert not short.passed and "must hold 6 numbers, two per block (m, then l)" in short.message
    assert not _online_verdict(nb, [1.0, float("nan")] * 3, {}).passed
    assert "checked when the quiz is graded" in _online_verdict(nb, [0.0] * 6, {}).message


CHOICES = ("1", "1,2", "1,3", "1,2,3")


def _right_answer(planned, inputs):
    """The right answer of one planned check, as plain data (what the kernel would send)."""
    if planned.kind == "weights":
        return answer_as_data("weights", weights_without_self, (inputs["Q"], inputs["K"]))
    if planned.kind == "output":
        return answer_as_data("output", expected(planned.grade_id, inputs)["want"])
    return answer_as_data("letter", inputs["right"])


@pytest.mark.slow
@pytest.mark.parametrize("parts", CHOICES)
def test_the_proof_holds_for_200_students_for_every_choice_of_parts(parts):
    """--parts (issue 41): for each choice and each of 200 students, the notebook the
    student receives has the checks of the chosen parts exactly (read as the grader reads
    them, with the spec for the choice), the right answer passes every one, a wrong letter
    and each named misconception of a numeric item fail theirs, and the variant's proof
    (each hidden check of the function fails for exactly its own mistake) holds."""
    from course_grading.checkpoint_answers import MISCONCEIVED
    from course_grading.verdicts import plan_checks

    spec = CHECKPOINT.for_parts(parts)
    template = fill(PUBLIC, variants.make_variant("template", parts))
    for student in IDS:
        v = personal.personal_variant(SECRET, student, spec.covers)
        assert v.parts == spec.covers and variants._check_variant(v) is None, student
        nb = personal.personal_notebook(template, SECRET, student, spec.covers)
        plan = {p.grade_id: p for p in plan_checks(nb, spec).values()}
        assert set(plan) == set(spec.autograded), student
        for grade_id, planned in plan.items():
            inputs = planned.inputs
            if not inputs:
                continue  # a visible call: its graded twin is another cell's hidden call
            want = expected(grade_id, inputs, spec)
            data = json.loads(json.dumps(_right_answer(planned, inputs)))
            assert judge(grade_id, data, inputs, spec, want).passed, (student, grade_id)
            if planned.kind == "letter":
                for letter, misconception in inputs["wrong"].items():
                    got = judge(grade_id, answer_as_data("letter", letter), inputs, spec, want)
                    assert not got.passed and got.mistake == misconception, (student, letter)
            if planned.kind == "output":
                for m in spec.misconceptions_of_check(grade_id):
                    wrong = answer_as_data("output", MISCONCEIVED[m.id](inputs).tolist())
                    got = judge(grade_id, json.loads(json.dumps(wrong)), inputs, spec, want)
                    assert not got.passed and got.mistake == m.id, (student, m.id)
    for q in spec.questions:  # every misconception of a question is named by one check
        named = [m.id for c in q.checks for m in spec.misconceptions_of_check(c)]
        assert sorted(named) == sorted(m.id for m in spec.misconceptions_of(q.id)), q.id


MULTIHEAD = variants.MULTIHEAD_CHECK


@pytest.mark.slow
def test_the_multihead_item_isolates_its_misconceptions_for_200_students():
    """Part 2's item (issue 41: the whole course assessed), judged as the grader judges on
    the inputs it reads from each of 200 students' notebooks: the right sizes pass; each
    misconception of the spec fails, named by its own words; constants, and the setup
    cell's sizes written back, fail unnamed; the visible check passes any six finite
    numbers (it confirms the form only), and names a row of the wrong length."""
    from course_grading.checkpoint_answers import MISCONCEIVED

    template = fill(PUBLIC, variants.make_variant("template"))
    names = [m.id for m in CHECKPOINT.misconceptions_of("multihead_sizes")]
    assert names == ["full_width_heads", "features_table", "shared_table",
                     "cost_with_d_model"]
    seen = set()
    for student in IDS:
        v = personal.personal_variant(SECRET, student)
        inputs = _inputs(fill(template, v), MULTIHEAD)
        assert inputs == {"n_tokens": v.n_tokens, "d_model": v.d_model,
                          "n_heads": v.n_heads}, student
        seen.add((v.n_tokens, v.d_model, v.n_heads))

        def verdict(answer, given=inputs):
            data = json.loads(json.dumps(answer_as_data("output", answer)))
            return judge(MULTIHEAD, data, given,
                         expected=expected(MULTIHEAD, given) if given else None)

        assert verdict(v.multihead_sizes.tolist()).passed, student
        for name in names:
            got = verdict(MISCONCEIVED[name](inputs).tolist())
            assert not got.passed and got.mistake == name, (student, name, got)
            assert CHECKPOINT.misconception(name).hint[1:] in got.message
        for name, sizes in variants.multihead_know_nothing(inputs).items():
            got = verdict(sizes.tolist())
            assert not got.passed and got.mistake is None, (student, name)
        assert verdict(MISCONCEIVED["shared_table"](inputs).tolist(), {}).passed  # form only
        short = verdict([1.0, 2.0])
        assert not short.passed and "must hold 6 numbers, in the order" in short.message
    assert len(seen) > 100  # the class's sizes vary from student to student
