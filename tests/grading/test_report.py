"""The class report, from a gradebook that nbgrader's real autograder filled in."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter

import numpy as np
import pytest

from course_grading.gradetable import build_grade_table
from course_grading.report import summarize, write_report

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def report(mini_graded_course, tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    return write_report(mini_graded_course.root, out), out


def test_mistake_counts_come_from_the_failing_hidden_tests(mini_graded_course):
    s = summarize(build_grade_table(mini_graded_course.root))
    assert s.mistakes == {
        "test_missing_scale": ["s02_missing_scale", "s10_two_mistakes"],
        "test_wrong_axis": ["s03_wrong_axis", "s10_two_mistakes"],
        "test_naive_exp_overflow": ["s04_naive_exp"],
        "test_dk_from_wrong_axis": ["s05_dk_wrong_axis"],
    }
    # the blank notebook failed every hidden test with NameError: no mistake diagnosed
    assert s.crashed == ["s06_blank"]


def test_score_distributions_leave_out_ungraded_and_pending(mini_graded_course):
    s = summarize(build_grade_table(mini_graded_course.root))
    assert s.n_graded == 10
    assert s.distributions["weights_without_self"] == Counter({5: 4, 3: 3, 4: 1, 2: 1, 0: 1})
    assert s.distributions["mc_read_table"] == Counter({2: 8, 0: 2})
    assert s.distributions["written_shift_or_scale"] == Counter({0: 8, 1.5: 1})
    assert s.pending == {"weights_without_self": 0, "shifted_key": 0, "mc_read_table": 0,
                         "mc_duplicate_key": 0, "written_shift_or_scale": 1}
    assert s.ungraded == {
        "s11_corrupt": "corrupt notebook (not valid JSON)",
        "s12_renamed": "renamed notebook (expected 'checkpoint.ipynb', "
                       "found 'checkpoint (1).ipynb')",
        "s13_missing": "missing notebook (no 'checkpoint.ipynb' submitted)",
        "s14_kernel_dies": "autograde failed (no autograded notebook)",
    }


def test_pictures_are_real_pngs(report):
    from matplotlib.image import imread

    _, out = report
    for name in ("scores.png", "mistakes.png"):
        img = imread(out / name)
        assert img.shape[0] > 300 and img.shape[1] > 700, (name, img.shape)
        # not a blank canvas: many distinct colours were drawn
        assert len(np.unique(img.reshape(-1, img.shape[-1]), axis=0)) > 20


def test_markdown_report_describes_the_pictures_in_words(report):
    _, out = report
    md = (out / "report.md").read_text()
    assert "15 students: 10 graded, 4 could not be graded, 1 without a submission." in md
    assert "![Score distribution per question](scores.png)" in md
    assert "![Diagnosed mistakes](mistakes.png)" in md
    assert ("- weights_without_self (out of 5): 4 of 10 graded students full marks, 1 scored 0, "
            "mean 3.50 (1 scored 0, 1 scored 2, 3 scored 3, 1 scored 4, 4 scored 5). "
            "4 could not be graded.") in md
    assert "1 wait for a manual grade." in md
    assert ("- forgot to divide the scores by sqrt(d_k) (test_missing_scale): "
            "2 of 10 graded students.") in md
    assert ("| test_wrong_axis | softmax over the wrong axis (columns, not rows) | 2 | "
            "s03_wrong_axis, s10_two_mistakes |") in md
    assert "| - | function missing, crashed or wrong on every check | 1 | s06_blank |" in md
    assert "| s14_kernel_dies | autograde failed (no autograded notebook) |" in md


def test_html_report_has_the_images_with_alt_text(report):
    _, out = report
    page = (out / "report.html").read_text()
    assert '<img src="scores.png" alt="weights_without_self (out of 5): 4 of 10' in page
    assert '<img src="mistakes.png" alt="forgot to divide the scores by sqrt(d_k)' in page
    assert "<td>s11_corrupt</td><td>corrupt notebook (not valid JSON)</td>" in page


def test_cli_writes_the_report(mini_graded_course, tmp_path):
    out = tmp_path / "class-report"
    proc = subprocess.run(
        [sys.executable, "-m", "course_grading.report",
         "--course-dir", str(mini_graded_course.root), "--out", str(out)],
        capture_output=True, text=True, check=True,
    )
    assert sorted(p.name for p in out.iterdir()) == [
        "mistakes.png", "report.html", "report.md", "scores.png"
    ]
    assert "# Class report: checkpoint" in proc.stdout
    assert "10 graded submissions" in proc.stdout.splitlines()[-1]


# --------------------------------------------------------------------------------------
# the real checkpoint (quiz/), graded by quiz-core's pipeline fixture: one submission of
# each kind in course_grading.submissions.KINDS, each student named for its kind
# --------------------------------------------------------------------------------------


def test_real_checkpoint_mistakes_are_diagnosed_one_each(graded_course):
    s = summarize(build_grade_table(graded_course.course))
    # knows_nothing (uniform weights) fails every hidden check with no mistake of the spec
    # matched: a failed hidden check is counted as the mistake it was built to catch
    assert s.mistakes == {
        "test_missing_scale": ["edited_tests", "knows_nothing", "mistake_missing_scale",
                               "monkeypatches_checks"],
        "test_wrong_axis": ["knows_nothing", "mistake_wrong_axis"],
        "test_naive_exp_overflow": ["knows_nothing", "mistake_naive_exp_overflow"],
        "test_dk_from_wrong_axis": ["knows_nothing", "mistake_dk_from_wrong_axis"],
    }
    # the copy of the lessons fails every hidden check with the verdict "no_mask": no
    # hidden check's own mistake is counted for it
    assert s.crashed == ["blank", "copies_lessons", "raises", "uses_course_lib"]
    assert "test_missing_scale (no_mask)" in table_row_text(s, "copies_lessons")
    assert s.ungraded == {
        "corrupt_json": "corrupt notebook (not valid JSON)",
        "renamed": "renamed notebook (expected 'checkpoint.ipynb', "
                   "found 'checkpoint-final.ipynb')",
    }
    assert s.n_graded == len(s.table.rows) - 2


def table_row_text(s, student: str) -> str:
    return " ".join(str(v) for v in s.table.row(student).values())


def test_real_checkpoint_table_and_report(graded_course, tmp_path):
    table = build_grade_table(graded_course.course)
    assert table.header == [
        "student", "name", "email", "roster", "status", "weights_without_self (/5)",
        "shifted_key (/2)", "mc_read_table (/2)", "mc_duplicate_key (/1)",
        "written_shift_or_scale (/3)", "multihead_sizes (/2)", "online_state (/2)",
        "total (/17)", "late", "late penalty", "final (/17)", "failed hidden tests",
    ]
    # (not "correct": test_pipeline.py grades that student's written answer by hand)
    assert list(table.row("other_kernelspec").values()) == [
        "other_kernelspec", "", "", "", "graded; needs manual grade: written_shift_or_scale",
        "5", "2", "2", "1", "needs manual grade", "2", "2", "14 + pending", "", "",
        "14 + pending", "",
    ]
    assert list(table.row("raises").values())[5:] == [
        "0", "2", "2", "1", "needs manual grade", "2", "2", "9 + pending", "", "",
        "9 + pending",
        "test_missing_scale (RuntimeError) test_wrong_axis (RuntimeError) "
        "test_naive_exp_overflow (RuntimeError) test_dk_from_wrong_axis (RuntimeError)",
    ]
    s = write_report(graded_course.course, tmp_path)
    md = (tmp_path / "report.md").read_text()
    assert f"{len(table.rows)} students: {s.n_graded} graded, 2 could not be graded" in md
    assert "| renamed | renamed notebook (expected 'checkpoint.ipynb', " in md
