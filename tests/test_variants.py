"""Variants fill the hand-written quiz source with numbers; each hidden check isolates a mistake."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest

from course_grading import variants
from course_grading.check_calls import QuizSourceError, check_calls
from course_grading.checkpoint_answers import expected, weights_without_self
from course_grading.mistakes import CORRECT_ANSWER, MISTAKES, answer_function, hidden_test_id
from course_grading.variants import (
    DEFAULT_SEED,
    HIDDEN_WEIGHT_CHECKS,
    fill,
    isolation_table,
    make_variant,
    quiz_facts,
)
from course_quiz.checkpoint_checks import answer_as_data, judge
from course_quiz.checkpoint_spec import CHECKPOINT

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import lesson_index  # noqa: E402  (scripts/lesson_index.py: the notebooks, by their metadata)

PUBLIC = nbformat.read(ROOT / variants.SOURCE_PATH, as_version=4)
SEEDS = [DEFAULT_SEED, "x", "spring 2027, section B", "42"]


def _cells(nb) -> dict[str, nbformat.NotebookNode]:
    return {c.metadata["nbgrader"]["grade_id"]: c for c in nb.cells if "nbgrader" in c.metadata}


def _inputs(nb, grade_id: str) -> dict:
    """A check's inputs as the grader reads them (the hidden call's literals)."""
    from course_grading.verdicts import plan_checks

    return next(p.inputs for p in plan_checks(nb, CHECKPOINT).values()
                if p.grade_id == grade_id)


def test_the_committed_source_is_the_public_variant_exactly():
    """Filling the public notebook with the public seed changes nothing: one source."""
    assert PUBLIC.metadata["course_variant"] == "public"
    assert nbformat.writes(fill(PUBLIC, make_variant(DEFAULT_SEED))) == nbformat.writes(PUBLIC)


def _lesson_text() -> str:
    """Every markdown cell and every text output of the lessons."""
    parts = []
    for notebook in lesson_index.read_index(ROOT / "notebooks"):
        for cell in nbformat.read(notebook.path, as_version=4).cells:
            parts.append(cell.source)
            for out in cell.get("outputs", []):
                parts.append(out.get("text", ""))
                parts.append(out.get("data", {}).get("text/plain", ""))
    return "\n".join(parts)


def test_the_public_variant_draws_numbers_that_no_lesson_prints():
    """Issue 30: Q2's number was printed in five lessons; now even the public variant's
    example is drawn, and none of its answers (two decimals) is in a lesson."""
    from course_lib import the_cat_sat

    v = make_variant(DEFAULT_SEED)
    assert v.Q.shape == (4, 2) and not np.array_equal(v.Q[:3], the_cat_sat().Q)
    facts = quiz_facts(PUBLIC)
    assert np.array_equal(facts.Q, v.Q) and (facts.row, facts.shift_key, facts.c) == (
        v.row, v.shift_key, v.c)
    assert facts.right == {"mc_read_table": "B", "mc_duplicate_key": "C"}
    lessons = _lesson_text()
    for answer in (v.shifted_row, *weights_without_self(v.Q, v.K)):
        row = "[" + ", ".join(f"{x:.2f}" for x in answer) + "]"
        assert row not in lessons, row
    for scaled, unscaled in v.table:
        assert f"{unscaled:.2f}" != f"{scaled:.2f}"


def test_a_seed_is_deterministic_and_another_seed_changes_only_numbers_and_order():
    a, b = fill(PUBLIC, make_variant("x")), fill(PUBLIC, make_variant("x"))
    assert nbformat.writes(a) == nbformat.writes(b)
    other = fill(PUBLIC, make_variant("y"))
    assert [c.id for c in a.cells] == [c.id for c in other.cells] == [c.id for c in PUBLIC.cells]
    assert (_cells(a)["weights_without_self"].source
            == _cells(PUBLIC)["weights_without_self"].source)
    assert not np.array_equal(quiz_facts(a).Q, quiz_facts(PUBLIC).Q)
    for test_id in HIDDEN_WEIGHT_CHECKS:
        assert _inputs(a, test_id)["Q"] != _inputs(PUBLIC, test_id)["Q"], test_id
    assert a.metadata["course_variant"] not in ("public", "x")  # a hash, not the seed


@pytest.mark.parametrize("seed", ["", None])
def test_a_bad_seed_is_refused_with_a_clear_message(seed):
    with pytest.raises(ValueError, match="seed must be a non-empty string"):
        make_variant(seed)


def test_filling_another_variant_gives_the_same_notebook():
    """fill writes every number, letter and option of the variant, whatever the notebook
    held before: a variant made from another is the one made from the public notebook."""
    twice = fill(fill(PUBLIC, make_variant("x")), make_variant("y"))
    assert nbformat.writes(twice) == nbformat.writes(fill(PUBLIC, make_variant("y")))


def test_a_source_cell_in_the_wrong_form_is_refused_by_name():
    broken = fill(PUBLIC, make_variant("x"))
    cell = _cells(broken)["test_wrong_axis"]
    cell.source = cell.source.replace("### BEGIN HIDDEN TESTS", "").replace(
        "### END HIDDEN TESTS", "")
    with pytest.raises(QuizSourceError, match="test cell test_wrong_axis must hold exactly "
                       "one hidden"):
        fill(broken, make_variant("y"))


@pytest.mark.parametrize("seed", SEEDS)
def test_grade_ids_and_points_are_the_specs(seed):
    nb = fill(PUBLIC, make_variant(seed))
    graded = {gid: c.metadata["nbgrader"]["points"] for gid, c in _cells(nb).items()
              if c.metadata["nbgrader"]["grade"]}
    assert graded == CHECKPOINT.grade_ids
    answers = {gid for gid, c in _cells(nb).items() if c.metadata["nbgrader"]["solution"]}
    assert answers == {q.id for q in CHECKPOINT.questions}
    assert nb.metadata.kernelspec.name == "python3"


@pytest.mark.parametrize("seed", SEEDS)
def test_every_test_cell_calls_check_for_itself_and_opens_with_a_docstring(seed):
    """A bare value would be taken as a score; each test cell says what it checks."""
    for gid, cell in _cells(fill(PUBLIC, make_variant(seed))).items():
        meta = cell.metadata["nbgrader"]
        if not meta["grade"] or meta["solution"]:
            continue
        calls = check_calls(cell.source)
        assert calls and all(c.grade_id == gid for c in calls), gid
        assert calls[-1].answer == CHECKPOINT.check(gid).answer
        assert '"""' in cell.source, gid
        assert cell.source.rstrip().endswith((")", "### END HIDDEN TESTS")), gid


@pytest.mark.parametrize("seed", SEEDS)
def test_each_hidden_check_fails_for_exactly_its_own_mistake(seed):
    """The notebook's own inputs, judged as the grader judges them: the diagonal only."""
    nb = fill(PUBLIC, make_variant(seed))
    for answer, source in {"correct": CORRECT_ANSWER, **MISTAKES}.items():
        func = answer_function(source)
        for test_id in HIDDEN_WEIGHT_CHECKS:
            inputs = _inputs(nb, test_id)
            verdict = judge(test_id, json.loads(json.dumps(answer_as_data(
                "weights", func, (inputs["Q"], inputs["K"])))), inputs,
                expected=expected(test_id, inputs))
            should_fail = answer != "correct" and test_id == hidden_test_id(answer)
            assert verdict.passed != should_fail, (seed, answer, test_id, verdict)
            if should_fail:
                assert verdict.mistake == answer, verdict


@pytest.mark.parametrize("seed", SEEDS)
def test_isolation_table_and_informative_inputs(seed):
    """Each of the four mistakes fails its own hidden check only; what a copy of the
    lessons' code gives (no mask, lesson 07's mask, a mask after the softmax) fails every
    check; the setup example shows every mistake but the overflow; no hidden input has a
    one-hot row or a right answer uniform over the other tokens."""
    v = make_variant(seed)
    table = isolation_table(v)
    assert not any(table["correct"].values())
    for mistake in MISTAKES:
        hidden = [t for t, bad in table[mistake].items() if bad and t in HIDDEN_WEIGHT_CHECKS]
        assert hidden == [hidden_test_id(mistake)]
    for mistake in CHECKPOINT.mistakes:
        if mistake.everywhere:
            assert all(table[mistake.id].values()), mistake.id
        if mistake.id != "naive_exp_overflow":
            assert table[mistake.id]["test_weights_visible"], mistake.id
    for test_id, (Q, K) in v.hidden_inputs.items():
        w = weights_without_self(Q, K)
        inside = (w >= 0.01) & (w <= 0.9) & ~np.eye(len(Q), dtype=bool)
        assert inside.sum(axis=1).min() >= 2, (test_id, w)  # no row is one-hot
        uniform = (1 - np.eye(len(Q))) / (len(Q) - 1)
        assert np.abs(w - uniform).max() >= 0.02, (test_id, w)  # and none uniform


KNOW_NOTHING = {
    "uniform over the others": "def weights_without_self(Q, K):\n"
    "    n = len(Q)\n    return (1 - np.eye(n)) / (n - 1)\n",
    "uniform over all": "def weights_without_self(Q, K):\n"
    "    return np.full((len(Q), len(Q)), 1 / len(Q))\n",
    "zeros": "def weights_without_self(Q, K):\n    return np.zeros((len(Q), len(Q)))\n",
    "a constant": "def weights_without_self(Q, K):\n    return np.full((len(Q), len(K)), 0.5)\n",
}


@pytest.mark.parametrize("seed", SEEDS)
def test_an_answer_that_never_reads_Q_and_K_fails_every_hidden_check(seed):
    """Issue 42: uniform weights over the other tokens passed test_wrong_axis and
    test_naive_exp_overflow (four identical keys, identical rows: the right answer was
    uniform). Judged as the grader judges, on the notebook's own inputs: no answer that
    ignores Q and K passes a hidden check, nor does the example's right table replayed."""
    nb = fill(PUBLIC, make_variant(seed))
    facts = quiz_facts(nb)
    replay = weights_without_self(facts.Q, facts.K).tolist()
    answers = {name: answer_function(source) for name, source in KNOW_NOTHING.items()}
    answers["the example's right table replayed"] = lambda Q, K: np.array(replay)
    for name, func in answers.items():
        for test_id in HIDDEN_WEIGHT_CHECKS:
            inputs = _inputs(nb, test_id)
            verdict = judge(test_id, json.loads(json.dumps(answer_as_data(
                "weights", func, (inputs["Q"], inputs["K"])))), inputs,
                expected=expected(test_id, inputs))
            assert not verdict.passed, (seed, name, test_id)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_variant_proof_covers_answers_that_never_read_Q_and_K(seed):
    """make_variant refuses inputs on which such an answer comes within 0.02 of the right
    weights; measured here on what it returned."""
    v = make_variant(seed)
    table = variants.baseline_table(v)
    assert {"uniform_over_others", "visible_example_replayed"} <= set(table)
    for name, row in table.items():
        assert set(row) == set(HIDDEN_WEIGHT_CHECKS)
        assert min(row.values()) >= 0.02, (name, row)


def test_the_overflow_check_really_overflows_a_naive_exp():
    Q, K = make_variant(DEFAULT_SEED).hidden_inputs["test_naive_exp_overflow"]
    assert (Q @ K.T / np.sqrt(Q.shape[1])).min() > np.log(np.finfo(float).max)
    with np.errstate(all="ignore"):
        got = answer_function(MISTAKES["naive_exp_overflow"])(Q, K)
    assert np.isnan(got[~np.eye(len(Q), dtype=bool)]).all()  # every weight but the hidden


def _options(nb, cell_id: str) -> dict[str, str]:
    text = next(c.source for c in nb.cells if c.id == cell_id)
    return {line[4]: line.split("** ", 1)[1] for line in text.splitlines()
            if line.startswith("- **")}


@pytest.mark.parametrize("seed", SEEDS)
def test_each_option_carries_the_variants_numbers_and_its_letter_the_grade(seed):
    """Issue 41: the option texts were the same in every variant, so a reader of the public
    source knew the right text whatever its letter. Each option is now written with the
    variant's own numbers (its table's columns and values, its query and duplicated key);
    the grader's right letter and misconceptions are those of the text at each letter."""
    from course_grading.checkpoint_answers import OPTIONS, option_numbers

    variant = make_variant(seed)
    nb = fill(PUBLIC, variant)
    facts = quiz_facts(nb)
    for question, cell_id in (("mc_read_table", "q3"), ("mc_duplicate_key", "q4")):
        numbers = option_numbers(question, variants._option_inputs(variant))
        templates = dict(OPTIONS[question])
        shown = _options(nb, cell_id)
        assert shown[facts.right[question]] == templates["right"].format(**numbers)
        for letter, named in facts.wrong[question].items():
            assert shown[letter] == templates[named].format(**numbers)
        assert f'= "{facts.right[question]}"' in _cells(nb)[question].source  # the solution
    assert facts.dup_query != facts.dup_key


def test_no_variant_shows_an_option_text_of_the_public_notebook():
    public = {text for cell_id in ("q3", "q4") for text in _options(PUBLIC, cell_id).values()}
    for seed in [s for s in SEEDS if s != DEFAULT_SEED] + [f"id{i}" for i in range(20)]:
        nb = fill(PUBLIC, make_variant(seed))
        for cell_id in ("q3", "q4"):
            assert not public & set(_options(nb, cell_id).values()), (seed, cell_id)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_table_is_the_variants_measurement(seed):
    """The unscaled column climbs towards one-hot; the scaled one stays flat. The stem says
    how this variant's table was measured (head sizes, keys, entries' size)."""
    v = make_variant(seed)
    md = next(c.source for c in fill(PUBLIC, v).cells if c.id == "q3")
    rows = [line.split("|")[1:4] for line in md.splitlines() if variants._TABLE_ROW.match(line)]
    dks, n_keys, scale = v.table_setup
    assert [int(r[0]) for r in rows] == list(dks)
    assert f"over 400 rows of {n_keys} keys" in md
    assert f"entries of size about {scale:g}.\n" in md
    x, y = (np.array([float(r[i]) for r in rows]) for i in (1, 2))
    unscaled, scaled = (x, y) if v.unscaled_first else (y, x)
    assert np.all(np.diff(unscaled) > 0) and unscaled[-1] - unscaled[0] >= 0.3
    assert scaled.max() - scaled.min() <= 0.05
    assert np.array_equal(np.stack([scaled, unscaled], axis=1), v.table)


def test_command_line_writes_a_variant_and_keeps_the_seed_private(tmp_path, capsys):
    out = tmp_path / "deep" / "checkpoint.ipynb"
    assert variants.main(["--seed", "my secret", "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert text == nbformat.writes(fill(PUBLIC, make_variant("my secret"))) + "\n"
    assert "my secret" not in text
    assert "wrote" in capsys.readouterr().out
    assert variants.main(["--seed", "other", "--template", str(out), "--out",
                          str(tmp_path / "again.ipynb")]) == 0
    assert (tmp_path / "again.ipynb").read_text() == nbformat.writes(
        fill(PUBLIC, make_variant("other"))) + "\n"
    with pytest.raises(SystemExit):
        variants.main(["--seed", ""])


def test_the_next_step_names_the_course_folder_the_variant_went_to(tmp_path, monkeypatch,
                                                                   capsys):
    """On the hub the instructor runs it in ~/attention-course (deploy.md step 8), which
    has no quiz/: the next step must not say "cd quiz"."""
    course = tmp_path / "attention-course"
    (course / "source" / "checkpoint").mkdir(parents=True)
    shutil.copy(ROOT / variants.SOURCE_PATH, course / "source" / "checkpoint")
    monkeypatch.chdir(course)
    assert variants.main(["--seed", "s", "--template", "source/checkpoint/checkpoint.ipynb"]) == 0
    assert (course / "secret_source" / "checkpoint" / "checkpoint.ipynb").is_file()
    said = capsys.readouterr().out.splitlines()
    assert said[-1] == "next: nbgrader generate_assignment checkpoint --force", said
    monkeypatch.chdir(tmp_path)  # a clone's layout, from its top: quiz/ is the course
    (course / "secret_source").rename(tmp_path / "elsewhere")
    assert variants.main(["--seed", "s", "--template",
                          "attention-course/source/checkpoint/checkpoint.ipynb"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        "next: cd attention-course && nbgrader generate_assignment checkpoint --force")


def test_every_wrong_answer_is_a_misconception_named_in_the_spec():
    """Issue 30: each distractor is a mistake students make, named once in the spec."""
    facts = quiz_facts(PUBLIC)
    for question in variants.MC_QUESTIONS:
        named = sorted(facts.wrong[question].values())
        assert named == sorted(m.id for m in CHECKPOINT.misconceptions_of(question))
        assert facts.right[question] not in facts.wrong[question]
    shifted = {c: [m.id for m in CHECKPOINT.misconceptions_of_check(c)]
               for c in CHECKPOINT.question("shifted_key").checks}
    assert shifted == {
        "test_shift_factors": ["factors_unchanged", "normaliser_as_weight_sum",
                               "every_score_raised"],
        "test_shifted_key": ["row_shift_rule", "times_e_c", "plus_c"]}
    for m in CHECKPOINT.misconceptions:
        assert m.words and m.hint, m.id


MY_WRITTEN = """She is not right: a shift leaves softmax as it was, a scale does not.

*Rubric:*

- 1 point: a shift leaves the weights unchanged
- 1 point: a scale changes them, read off the table
- 1 point: train with and without it and compare
"""


def test_the_model_answer_and_rubric_are_in_no_public_file():
    """Issue 41: the written question's model answer was in the public source and its
    rubric in the spec (course_lib: the repository and every student's library). The public
    notebook's written cell says where they are instead, and the spec holds no words of a
    rubric; the instructor's go into their private variant with --written."""
    import course_quiz.checkpoint_spec as spec_module

    written = CHECKPOINT.question(variants.WRITTEN)
    assert written.manual and written.points == 3 and not hasattr(written, "rubric")
    cell = _cells(PUBLIC)[variants.WRITTEN]
    assert "No model answer or rubric here" in cell.source
    with pytest.raises(QuizSourceError, match="must give its 3 points"):
        variants.read_rubric(cell.source)
    text = " ".join(Path(spec_module.__file__).read_text().split()).lower()
    for words in ("loss curves", "gradient vanishes", "keeps exp finite", "spread like"):
        assert words not in text, words


def test_the_instructors_written_answer_goes_into_the_private_variant(tmp_path, capsys):
    mine = tmp_path / "written.md"
    mine.write_text(MY_WRITTEN)
    out = tmp_path / "v.ipynb"
    assert variants.main(["--seed", "s", "--out", str(out), "--written", str(mine)]) == 0
    cell = _cells(nbformat.read(out, as_version=4))[variants.WRITTEN]
    assert cell.source == MY_WRITTEN.strip()
    assert variants.read_rubric(cell.source) == [
        (1, "a shift leaves the weights unchanged"),
        (1, "a scale changes them, read off the table"),
        (1, "train with and without it and compare")]
    assert "no model answer" not in capsys.readouterr().err
    assert variants.main(["--seed", "s", "--out", str(out)]) == 0  # without: said so
    assert "has no model answer or rubric yet" in capsys.readouterr().err
    mine.write_text(MY_WRITTEN.replace("- 1 point: train", "- 2 points: train"))
    assert variants.main(["--seed", "s", "--out", str(tmp_path / "w.ipynb"), "--written",
                          str(mine)]) == 2
    assert "must give its 3 points" in capsys.readouterr().err
    assert not (tmp_path / "w.ipynb").exists()


#: Every choice of parts an instructor can make (part 1 always), and what the class's
#: checkpoint then has: its questions, and its points (part 1: 13; part 2's multi-head
#: layer: 2; part 3's online softmax: 2).
CHOICES = {
    "1": (("weights_without_self", "shifted_key", "mc_read_table", "mc_duplicate_key",
           "written_shift_or_scale"), 13),
    "1,2": (("weights_without_self", "shifted_key", "mc_read_table", "mc_duplicate_key",
             "written_shift_or_scale", "multihead_sizes"), 15),
    "1,3": (("weights_without_self", "shifted_key", "mc_read_table", "mc_duplicate_key",
             "written_shift_or_scale", "online_state"), 15),
    "1,2,3": (("weights_without_self", "shifted_key", "mc_read_table", "mc_duplicate_key",
               "written_shift_or_scale", "multihead_sizes", "online_state"), 17),
}


def _course_copy(tmp_path: Path) -> Path:
    template = tmp_path / "quiz" / "source" / "checkpoint" / "checkpoint.ipynb"
    template.parent.mkdir(parents=True)
    shutil.copy(ROOT / variants.SOURCE_PATH, template)
    return template


@pytest.mark.parametrize("parts", CHOICES)
def test_the_chosen_parts_questions_and_nothing_else_are_in_the_class_notebook(
        parts, tmp_path, capsys):
    """``--parts`` (issue 41): the notebook written for the class has the chosen parts'
    questions only (markdown, answer and test cells, setup values), its first cell counts
    them and their points, the questions are numbered 1, 2, ... and the choice is recorded
    beside the secret for the grader, the grade table and the report."""
    questions, points = CHOICES[parts]
    template = _course_copy(tmp_path)
    assert variants.main(["--seed", "s", "--parts", parts, "--template", str(template)]) == 0
    course = template.parents[2]
    assert variants.read_parts(course) == tuple(int(p) for p in parts.split(","))
    assert f"{points} points" in capsys.readouterr().out
    nb = nbformat.read(course / "secret_source" / "checkpoint" / "checkpoint.ipynb", 4)
    spec = CHECKPOINT.for_parts(parts)
    assert tuple(q.id for q in spec.questions) == questions and spec.total_points == points
    cells = _cells(nb)
    assert set(cells) == {"setup", *spec.grade_ids, *questions}
    assert sum(c.metadata["nbgrader"].get("points", 0) for c in cells.values()) == points
    text = "\n".join(c.source for c in nb.cells)
    headings = [c.source.split("\n")[0] for c in nb.cells
                if c.cell_type == "markdown" and c.source.startswith("## Question")]
    assert [h.split()[2] for h in headings] == [str(i) for i in range(1, len(questions) + 1)]
    count = ("Five", "Six", "Seven")[len(questions) - 5]
    assert f"{count} questions, {points} points" in nb.cells[0].source
    online = "online_state" in questions
    for said in ("online softmax", "block_scores", "Part 3"):
        assert (said in text) is online, said
    multihead = "multihead_sizes" in questions
    for said in ("multi-head layer", "n_heads", "Part 2"):
        assert (said in text) is multihead, said
    assert ("Question 7" in text) is (len(questions) == 7)
    setup = variants.setup_values(cells["setup"].source)
    assert set(setup) == set(spec.setup_names)
    # what the grader reads from it is the choice's checks, exactly
    from course_grading.verdicts import plan_checks

    assert sorted(p.grade_id for p in plan_checks(nb, spec).values()) == sorted(spec.autograded)


def test_a_students_numbers_do_not_depend_on_the_parts_chosen():
    """The same student in a class that covers part 1 and in one that covers all parts has
    the same numbers for every question both have."""
    one, every = (fill(PUBLIC, make_variant("s", parts)) for parts in ("1", "1,2,3"))
    a, b = _cells(one), _cells(every)
    for name, value in variants.setup_values(a["setup"].source).items():
        assert variants.setup_values(b["setup"].source)[name].value == value.value, name
    for grade_id in CHECKPOINT.for_parts("1").autograded:
        assert a[grade_id].source == b[grade_id].source, grade_id


@pytest.mark.parametrize("given", ["1,4", "0", "three", "", "1;3", "1,,3"])
def test_a_bad_choice_of_parts_is_refused_in_one_line(given, tmp_path, capsys):
    template = _course_copy(tmp_path)
    assert variants.main(["--seed", "s", "--parts", given, "--template", str(template)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("variants: --parts must be numbers among 1, 2, 3 separated by commas, "
                   f"e.g. '1,3' (got {given!r})")
    assert not (template.parents[2] / "secret_source").exists()


def test_part_1_is_always_covered_and_a_choice_needs_the_secret_source(tmp_path, capsys):
    template = _course_copy(tmp_path)
    assert variants.main(["--seed", "s", "--parts", "3", "--template", str(template)]) == 0
    assert variants.read_parts(template.parents[2]) == (1, 3)
    out = tmp_path / "elsewhere.ipynb"
    assert variants.main(["--seed", "s", "--parts", "1", "--out", str(out)]) == 2
    assert "needs the variant written into a secret_source/" in capsys.readouterr().err
    assert not out.exists()


def test_a_recorded_choice_that_is_not_parts_is_refused_by_name(tmp_path):
    (tmp_path / "secret_source").mkdir()
    (tmp_path / "secret_source" / variants.PARTS_FILE).write_text("1, 5\n")
    with pytest.raises(ValueError, match=r"variant_parts: parts must be numbers among "
                                         r"1, 2, 3 .*\(got '1, 5'\)"):
        variants.read_parts(tmp_path)


def test_a_notebook_of_other_parts_is_refused_not_regraded():
    """fill never grades a notebook against a choice its graded cells do not match: a
    submission (as nbgrader restores it) with a question the choice leaves out, or without
    one it covers, is refused by name."""
    every = fill(PUBLIC, make_variant("s"))
    with pytest.raises(QuizSourceError, match="has online_state, test_online_state, of "
                                              "parts the checkpoint does not cover"):
        fill(every, make_variant("s", "1,2"), questions=False)
    one = fill(PUBLIC, make_variant("s", "1"))
    with pytest.raises(QuizSourceError, match="has no cell online_state, test_online_state"):
        fill(one, make_variant("s", "1,3"), questions=False)
