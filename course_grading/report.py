"""The class report: how the class did on each question, and which mistakes it made.

Built from the same data as :mod:`course_grading.gradetable` (the nbgrader gradebook
plus the ``submitted/`` and ``autograded/`` folders), it writes into one folder:

``scores.png``
    One panel per question: how many students got each score, with the submissions that
    could not be graded (or wait for a manual grade) as their own grey bar, never as 0.
``mistakes.png``
    How many students made each diagnosed mistake, one bar per hidden test (each named
    for the mistake it catches), plus the students whose function did not run at all.
``report.md`` and ``report.html``
    Both pictures with a text description generated from the same numbers, the tables
    behind them, and the list of submissions the instructor has to look at by hand.

It reads the gradebook nbgrader is configured with (SQLite or PostgreSQL), and lists the
students with an extension, a longer time limit (the roster's accommodations) or a late
submission.

Run it in the course directory (``quiz/``)::

    python -m course_grading.report                  # writes ./report-checkpoint/
    python -m course_grading.report --course-dir quiz --out class-report
"""

from __future__ import annotations

import argparse
import html
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from course_quiz.checkpoint_spec import CHECKPOINT, PARTS

from .gradebook import locate
from .gradetable import DIAGNOSED_MISTAKES, GradeTable, build_grade_table
from .roster import format_minutes
from .shown_ids import for_html, for_markdown

__all__ = ["ClassSummary", "main", "summarize", "write_report"]

CRASHED = "function missing, crashed or wrong on every check"
_GRADED_COLOR = "#3b6ea8"
_FULL_COLOR = "#2e8b57"
_GREY = "#9a9a9a"
_MISTAKE_COLOR = "#c0504d"


@dataclass
class ClassSummary:
    """The numbers behind the report.

    Attributes
    ----------
    table : GradeTable
    distributions : dict of str to Counter
        Per question: score -> number of students (graded submissions only).
    pending : dict of str to int
        Per question: graded submissions whose answer waits for a manual grade.
    ungraded : dict of str to str
        Student -> reason, for every submission that could not be graded.
    troubled : dict of str to list of str
        Student -> what stopped or broke a graded notebook (a time limit, a crashed
        kernel, an answer that does not parse), for every such submission.
    mistakes : dict of str to list of str
        Hidden test grade id -> students who failed it on an assertion (made the mistake).
    crashed : list of str
        Students whose code question failed every hidden test with an exception that is
        not an assertion (blank, NotImplementedError, a crash): no mistake diagnosed.
    """

    table: GradeTable
    distributions: dict[str, Counter]
    pending: dict[str, int]
    ungraded: dict[str, str]
    mistakes: dict[str, list[str]]
    crashed: list[str]
    troubled: dict[str, list[str]] = field(default_factory=dict)

    @property
    def n_graded(self) -> int:
        """Number of graded submissions."""
        return sum(r.graded for r in self.table.rows)


def summarize(table: GradeTable) -> ClassSummary:
    """Count scores per question and diagnosed mistakes over the graded submissions."""
    dist: dict[str, Counter] = {q: Counter() for q in table.questions}
    pending = dict.fromkeys(table.questions, 0)
    ungraded: dict[str, str] = {}
    mistakes: dict[str, list[str]] = {name: [] for name in DIAGNOSED_MISTAKES}
    crashed: list[str] = []
    for row in table.rows:
        if not row.graded:
            if row.status != "no submission":
                ungraded[row.student] = row.status.removeprefix("ungraded: ")
            continue
        for q in table.questions:
            score = row.scores.get(q)
            if score is None:
                pending[q] += 1
            else:
                dist[q][score] += 1
        for name in row.failed_checks:
            mistakes[name].append(row.student)
        if row.crashed_checks:
            crashed.append(row.student)
    troubled = {row.student: row.problems for row in table.rows if row.problems}
    return ClassSummary(table, dist, pending, ungraded, mistakes, crashed, troubled)


# --------------------------------------------------------------------------------------
# pictures (matplotlib's object API: no pyplot, no global state touched)
# --------------------------------------------------------------------------------------


def _score_ticks(max_score: float, seen: Sequence[float]) -> list[float]:
    ticks = set(seen) | {0.0, float(max_score)}
    if float(max_score).is_integer() and max_score <= 10:
        ticks |= {float(i) for i in range(int(max_score) + 1)}
    return sorted(ticks)


def _describe_question(s: ClassSummary, q: str) -> str:
    t = s.table
    counts = s.distributions[q]
    n = sum(counts.values())
    maxs = t.max_scores[q]
    parts = [f"{q} (out of {maxs:g}):"]
    if n:
        full = counts.get(maxs, 0)
        zero = counts.get(0.0, 0)
        mean = sum(k * v for k, v in counts.items()) / n
        spread = ", ".join(f"{v} scored {k:g}" for k, v in sorted(counts.items()))
        parts.append(f"{full} of {n} graded students full marks, {zero} scored 0, "
                     f"mean {mean:.2f} ({spread}).")
    else:
        parts.append("no graded answers yet.")
    if s.pending[q]:
        parts.append(f"{s.pending[q]} wait for a manual grade.")
    if s.ungraded:
        parts.append(f"{len(s.ungraded)} could not be graded.")
    return " ".join(parts)


def plot_scores(s: ClassSummary, path: Path) -> str:
    """Draw the per-question score distributions to ``path``; return their description."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    qs = s.table.questions
    ncols = max(1, min(3, len(qs)))  # an assignment without graded cells: one empty panel
    nrows = max(1, -(-len(qs) // ncols))
    fig = Figure(figsize=(4.2 * ncols, 3.2 * nrows), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, squeeze=False)
    n_ungraded = len(s.ungraded)
    # one y scale for every panel (the whole class), so that panels compare at a glance
    top = max(len(s.table.rows), 1)
    for ax, q in zip(axes.flat, qs, strict=False):
        maxs = s.table.max_scores[q]
        counts = s.distributions[q]
        ticks = _score_ticks(maxs, list(counts))
        labels = [f"{t:g}" for t in ticks]
        values = [counts.get(t, 0) for t in ticks]
        colors = [_FULL_COLOR if t == maxs else _GRADED_COLOR for t in ticks]
        if s.pending[q]:
            labels.append("manual\npending")
            values.append(s.pending[q])
            colors.append(_GREY)
        if n_ungraded:
            labels.append("not\ngraded")
            values.append(n_ungraded)
            colors.append(_GREY)
        xs = range(len(labels))
        bars = ax.bar(xs, values, color=colors, edgecolor="black", linewidth=0.6)
        for hatch_bar, label in zip(bars, labels, strict=True):
            if not label[0].isdigit():
                hatch_bar.set_hatch("//")
        ax.bar_label(bars, labels=[str(v) if v else "" for v in values], padding=2)
        ax.set_xticks(list(xs), labels)
        ax.set_title(f"{q}  (max {maxs:g})", fontsize=11)
        ax.set_xlabel("score")
        ax.set_ylabel("students")
        ax.set_ylim(0, top * 1.15 + 0.3)
        ax.yaxis.get_major_locator().set_params(integer=True)
        ax.spines[["top", "right"]].set_visible(False)
    spare = list(axes.flat)[len(qs):]
    for ax in spare:
        ax.set_axis_off()
    if spare:  # an empty panel: say in words who is in the picture
        lines = [f"{len(s.table.rows)} students", f"{s.n_graded} graded"]
        if s.ungraded:
            lines.append(f"{len(s.ungraded)} could not be graded")
            lines += [f"  {k}: {v.split(' (')[0]}" for k, v in sorted(s.ungraded.items())][:6]
        spare[0].text(0.05, 0.95, "\n".join(lines), va="top", ha="left", fontsize=10,
                      transform=spare[0].transAxes, family="monospace")
    fig.suptitle(
        f"{s.table.assignment}: score per question ({s.n_graded} graded; green = full marks, "
        "grey = not scored)",
        fontsize=12,
    )
    fig.savefig(path, dpi=110)
    return "\n".join(_describe_question(s, q) for q in qs)


def plot_mistakes(s: ClassSummary, path: Path) -> str:
    """Draw how many students made each diagnosed mistake; return its description."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    names = list(DIAGNOSED_MISTAKES)
    labels = [f"{DIAGNOSED_MISTAKES[n]}\n({n})" for n in names] + [
        f"{CRASHED}\n(no mistake diagnosed)"
    ]
    counts = [len(s.mistakes[n]) for n in names] + [len(s.crashed)]
    colors = [_MISTAKE_COLOR] * len(names) + [_GREY]
    n = s.n_graded
    fig = Figure(figsize=(9.5, 0.75 * len(labels) + 1.4), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    ys = list(range(len(labels)))[::-1]
    bars = ax.barh(ys, counts, color=colors, edgecolor="black", linewidth=0.6)
    ax.bar_label(
        bars,
        labels=[f"{c} of {n} ({100 * c / n:.0f}%)" if n else "0" for c in counts],
        padding=4,
    )
    ax.set_yticks(ys, labels, fontsize=9)
    ax.set_xlim(0, max(n, 1) * 1.25)
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.set_xlabel(f"students (of {n} graded submissions)")
    fig.suptitle(
        f"{s.table.assignment}: how many students made each mistake in the function",
        fontsize=12,
    )
    ax.spines[["top", "right"]].set_visible(False)
    fig.savefig(path, dpi=110)
    lines = [
        f"{DIAGNOSED_MISTAKES[name]} ({name}): {len(s.mistakes[name])} of {n} graded students."
        for name in names
    ]
    lines.append(f"{CRASHED}: {len(s.crashed)} of {n} graded students.")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------
# the report
# --------------------------------------------------------------------------------------


def _question_rows(s: ClassSummary) -> list[list[str]]:
    rows = []
    for q in s.table.questions:
        counts = s.distributions[q]
        n = sum(counts.values())
        maxs = s.table.max_scores[q]
        mean = f"{sum(k * v for k, v in counts.items()) / n:.2f}" if n else "-"
        rows.append([q, f"{maxs:g}", str(n), mean, str(counts.get(maxs, 0)),
                     str(counts.get(0.0, 0)), str(s.pending[q]), str(len(s.ungraded))])
    return rows


def _mistake_rows(s: ClassSummary) -> list[list[str]]:
    rows = [[name, DIAGNOSED_MISTAKES[name], str(len(s.mistakes[name])),
             ", ".join(s.mistakes[name])] for name in DIAGNOSED_MISTAKES]
    rows.append(["-", CRASHED, str(len(s.crashed)), ", ".join(s.crashed)])
    return rows


def _lost_rows(s: ClassSummary) -> list[list[str]]:
    """student, check, points lost, why: every automatic point a graded student lost."""
    rows = []
    for row in s.table.rows:
        for gid, why in row.lost.items() if row.graded else ():
            rows.append([row.student, gid, f"{CHECKPOINT.autograded[gid]:g}", why])
    return rows


def time_limits(course_dir: Path | str) -> tuple[float | None, float | None]:
    """The course's cell time limit and notebook budget in seconds (``Execute.timeout``,
    ``SandboxProvisioner.wall_time_limit``), as its nbgrader config sets them."""
    from .sandbox import SandboxProvisioner

    config = locate(course_dir).config
    cell = config.Execute.get("timeout", 30)
    budget = config.SandboxProvisioner.get(
        "wall_time_limit", SandboxProvisioner.class_traits()["wall_time_limit"].default())
    return (float(cell) if cell else None, float(budget) if budget else None)


def _deadline_rows(s: ClassSummary, limits: tuple[float | None, float | None]
                   ) -> list[list[str]]:
    """student, name, due date, extension, late by, penalty, time limits: every student
    with an extension, an accommodation or a late submission."""
    cell, budget = limits
    rows = []
    for row in s.table.rows:
        factor = row.time_limit_factor
        if not (row.extension_minutes or row.seconds_late > 0 or factor != 1.0):
            continue
        due = f"{row.due:%Y-%m-%d %H:%M} UTC" if row.due is not None else "no due date"
        limit = "as everyone" if factor == 1.0 else (
            f"x{factor:g}: " + ", ".join(
                f"{what} {value * factor:g} s" for what, value in
                (("cell", cell), ("notebook", budget)) if value))
        rows.append([row.student, row.name, due,
                     format_minutes(row.extension_minutes) if row.extension_minutes else "",
                     row.late or ("on time" if row.graded or row.status.startswith(
                         "ungraded") else row.status),
                     f"-{row.penalty:g}" if row.penalty else "", limit])
    return rows


_D_HEAD = ["student", "name", "due (with extension)", "extension", "late by", "late penalty",
           "time limits"]


def _deadline_note(limits: tuple[float | None, float | None]) -> str:
    cell, budget = limits
    said = [f"each cell {cell:g} s" if cell else "", f"each notebook {budget:g} s"
            if budget else ""]
    return ("Extensions move a student's due date (nbgrader's own per-submission extension, "
            "from the class list); the late penalty is nbgrader's (its late-submission "
            "plugin). A time-limit factor multiplies every time limit on that student's code "
            f"(for everyone: {', '.join(w for w in said if w) or 'none'}).")


_L_HEAD = ["student", "check", "points lost", "why"]
_LOST_NOTE = ("Every automatic point lost, with the mistake the check saw. One mistake can "
              "cost more than one check (the visible check and the hidden one built for "
              "it, as the quiz's spec decides); the second says 'same mistake as' the first. "
              "A check of the function on hidden inputs records only that it failed (what "
              "the function did there was its own choice, knowing those inputs): it says "
              "what it is built to catch, and whether the visible check failed too.")

_Q_HEAD = ["question", "max", "graded", "mean", "full marks", "scored 0",
           "manual pending", "ungraded"]
_M_HEAD = ["hidden test", "mistake", "students", "who"]


def _md_table(head: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(for_markdown(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def _html_table(head: list[str], rows: list[list[str]]) -> str:
    th = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    body = "".join(
        "<tr>" + "".join(f"<td>{for_html(c)}</td>" for c in r) + "</tr>" for r in rows
    )
    return f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


def _covers(parts: Sequence[int]) -> str:
    """What the checkpoint covers, in words, from the grade table's parts (the instructor's
    recorded choice, the same one the grader used)."""
    covered = CHECKPOINT.for_parts(parts)
    named = "; ".join(f"{p}, {PARTS[p]}" for p in covered.covers)
    return (f"The checkpoint covers part{'s' * (len(covered.covers) > 1)} {named} of the "
            f"course: {len(covered.questions)} questions, {covered.total_points:g} points.")


def write_report(course_dir: Path | str, out_dir: Path | str,
                 assignment: str = "checkpoint") -> ClassSummary:
    """Write scores.png, mistakes.png, report.md and report.html into ``out_dir``.

    Parameters
    ----------
    course_dir : path
        The nbgrader course directory (as in
        :func:`~course_grading.gradetable.build_grade_table`).
    out_dir : path
        Created if missing; existing report files in it are replaced.
    assignment : str, default "checkpoint"

    Returns
    -------
    ClassSummary
        The numbers the report shows.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    s = summarize(build_grade_table(course_dir, assignment))
    scores_alt = plot_scores(s, out / "scores.png")
    mistakes_alt = plot_mistakes(s, out / "mistakes.png")
    n_students = len(s.table.rows)
    missing = [r.student for r in s.table.rows if r.status == "no submission"]
    late = [r for r in s.table.rows if r.seconds_late > 0]
    headline = (
        f"{n_students} students: {s.n_graded} graded, {len(s.ungraded)} could not be "
        f"graded, {len(missing)} without a submission."
        + (f" {len(s.troubled)} graded but stopped or broken." if s.troubled else "")
        + (f" {len(late)} came late." if late else "")
        + (f" {_covers(s.table.parts)}" if s.table.parts else "")
    )
    ungraded_rows = [[k, v] for k, v in sorted(s.ungraded.items())]
    troubled_rows = [[k, "; ".join(v)] for k, v in sorted(s.troubled.items())]
    troubled_note = ("These have scores, but part of the notebook did not run: a cell hit "
                     "the time limit, the kernel crashed, or an answer does not parse.")
    ungraded_note = (
        "These are not zeros: nbgrader could not grade them. Fix or ask for the notebook, "
        "then autograde again."
    )

    md = [
        f"# Class report: {assignment}",
        "",
        headline,
        "",
        "## Scores per question",
        "",
        "![Score distribution per question](scores.png)",
        "",
        *(f"- {line}" for line in scores_alt.splitlines()),
        "",
        _md_table(_Q_HEAD, _question_rows(s)),
        "",
        "## Diagnosed mistakes",
        "",
        "Each hidden test of the code question is named for the mistake it catches; a "
        "student counts for a mistake when that test failed, unless the visible check "
        "shows that the function did not run, or made a mistake that every check "
        "catches. One submission can make more than one mistake.",
        "",
        "![Diagnosed mistakes](mistakes.png)",
        "",
        *(f"- {line}" for line in mistakes_alt.splitlines()),
        "",
        _md_table(_M_HEAD, _mistake_rows(s)),
        "",
        "## Submissions that could not be graded",
        "",
    ]
    if ungraded_rows:
        md += [ungraded_note, "", _md_table(["student", "reason"], ungraded_rows), ""]
    else:
        md += ["None.", ""]
    md += ["## Graded, but stopped or broken", "", troubled_note, ""]
    md += ([_md_table(["student", "what happened"], troubled_rows), ""] if troubled_rows
           else ["None.", ""])
    lost_rows = _lost_rows(s)
    md += ["## Why points were lost", "", _LOST_NOTE, ""]
    md += [_md_table(_L_HEAD, lost_rows), ""] if lost_rows else ["None.", ""]
    limits = time_limits(course_dir)
    deadline_rows = _deadline_rows(s, limits)
    md += ["## Due dates, extensions and time limits", "", _deadline_note(limits), ""]
    md += [_md_table(_D_HEAD, deadline_rows), ""] if deadline_rows else [
        "Nobody has an extension or a longer time limit, and nothing came late.", ""]
    (out / "report.md").write_text("\n".join(md), encoding="utf-8")

    def ul(text: str) -> str:
        return "<ul>" + "".join(f"<li>{html.escape(x)}</li>" for x in text.splitlines()) + "</ul>"

    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>Class report: {html.escape(assignment)}</title>
<style>body{{font-family:sans-serif;max-width:70em;margin:2em auto;line-height:1.4}}
table{{border-collapse:collapse;margin:1em 0}}td,th{{border:1px solid #bbb;padding:.2em .6em}}
th{{background:#eee}}img{{max-width:100%}}</style></head><body>
<h1>Class report: {html.escape(assignment)}</h1>
<p>{html.escape(headline)}</p>
<h2>Scores per question</h2>
<img src="scores.png" alt="{html.escape(scores_alt)}">
{ul(scores_alt)}
{_html_table(_Q_HEAD, _question_rows(s))}
<h2>Diagnosed mistakes</h2>
<p>Each hidden test of the code question is named for the mistake it catches; a student
counts for a mistake when that test failed, unless the visible check shows that the function
did not run, or made a mistake that every check catches. One submission can make more than
one mistake.</p>
<img src="mistakes.png" alt="{html.escape(mistakes_alt)}">
{ul(mistakes_alt)}
{_html_table(_M_HEAD, _mistake_rows(s))}
<h2>Submissions that could not be graded</h2>
{(f"<p>{html.escape(ungraded_note)}</p>" + _html_table(["student", "reason"], ungraded_rows))
 if ungraded_rows else "<p>None.</p>"}
<h2>Graded, but stopped or broken</h2>
<p>{html.escape(troubled_note)}</p>
{_html_table(["student", "what happened"], troubled_rows) if troubled_rows else "<p>None.</p>"}
<h2>Why points were lost</h2>
<p>{html.escape(_LOST_NOTE)}</p>
{_html_table(_L_HEAD, lost_rows) if lost_rows else "<p>None.</p>"}
<h2>Due dates, extensions and time limits</h2>
<p>{html.escape(_deadline_note(limits))}</p>
{_html_table(_D_HEAD, deadline_rows) if deadline_rows else
 "<p>Nobody has an extension or a longer time limit, and nothing came late.</p>"}
</body></html>
"""
    (out / "report.html").write_text(page, encoding="utf-8")
    return s


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m course_grading.report``: write the class report, print its summary."""
    p = argparse.ArgumentParser(
        prog="python -m course_grading.report",
        description="Class report from the nbgrader gradebook: score distribution per "
        "question and diagnosed mistakes, as PNGs with an HTML and a Markdown page.",
    )
    p.add_argument("assignment", nargs="?", default="checkpoint")
    p.add_argument("--course-dir", default=".", type=Path,
                   help="nbgrader course directory (default: the current directory)")
    p.add_argument("--out", type=Path, default=None,
                   help="output folder (default: <course-dir>/report-<assignment>)")
    args = p.parse_args(argv)
    out = args.out or args.course_dir / f"report-{args.assignment}"
    try:
        s = write_report(args.course_dir, out, args.assignment)
    except (FileNotFoundError, ValueError) as exc:
        print(f"report: {exc}", file=sys.stderr)
        return 2
    print((out / "report.md").read_text(encoding="utf-8"))
    print(f"\nReport written to {out / 'report.html'} (and report.md, scores.png, "
          f"mistakes.png); {s.n_graded} graded submissions.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
