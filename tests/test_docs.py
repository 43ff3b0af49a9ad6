"""The README and the guides in docs/ name only what exists, and show how each figure is made.

Checked in README.md, CHANGELOG.md and every docs/*.md:

* every relative link points at a file of the checkout, and an ``#anchor`` at a heading of
  the file it names (GitHub's way of turning a heading into an anchor);
* every ``./course <verb>`` is a command of the ``course`` script;
* every ``course_grading.x``, ``course_exchange.x``, ``course_lib.x`` or ``course_site.x``
  named, in code or prose, resolves
  (a module, or a name in one), and every ``python -m`` of them is a module;
* every word of inline or fenced code that starts with a folder or file of the checkout
  (``quiz/...``, ``benchmarks/...``) exists there, unless git ignores it (a folder the course
  makes, like ``notebooks/my-work/``); a word with ``*`` must match a file;
* README.md has at most 150 lines, links to every guide and states no measurement at all
  (a newcomer's page; figures belong in a guide, beside their benchmark); the times of the
  course's parts in its lesson list are the lessons' own, added up by
  ``scripts/update_nav.py``, which writes that list;
* **no measurement without its command.** A measurement is a number followed by a unit of
  time (ms, s, min, seconds, minutes), of size (kB, MB, GB) or a ratio (%, or × or x right
  after the number), in prose: outside fenced code and inline code (so a setting such as
  ``--worker-memory 4096`` or ``Execute.timeout = 10`` in backticks is not one). Each section
  (the text from one heading to the next, of any level) that holds one must also show the
  command that makes it: a line of a fenced block, or inline code, that runs ``./course ...``
  or a ``benchmarks/*.py`` script (a fenced block of anything else, such as a config, is no
  command).

Prose is read a paragraph at a time, as Markdown does: inline code and links may run over a
line break (a figure after inline code that is split over two lines is still a figure).
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
GUIDES = sorted((ROOT / "docs").glob("*.md"))
DOCUMENTS = [README, ROOT / "CHANGELOG.md", *GUIDES]
README_MAX_LINES = 150

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
INLINE_CODE = re.compile(r"`([^`]+)`")  # over a paragraph: it may span a line break
COURSE_VERB = re.compile(r"(?:\./course|python3? course)\s+([a-z]\w*)")
PACKAGES = r"course_grading|course_exchange|course_lib|course_quiz|course_site"
PACKAGE_NAME = re.compile(rf"\b({PACKAGES})((?:\.\w+)*)")
RUN_MODULE = re.compile(rf"python3?\s+-m\s+((?:{PACKAGES})(?:\.\w+)*)")
MEASUREMENT = re.compile(
    r"(?<![\w.])\d[\d,]*(?:\.\d+)?"
    r"(?:\s?(?:ms|s|min|seconds?|minutes?|[kKMG]B|%)(?![\w])|[×x](?![\w\d]))")
COMMAND_IN_CODE = re.compile(r"^\./course\b|benchmarks/\w+\.py")


@dataclass
class Section:
    """The lines of a document from one heading to the next."""

    title: str
    # (number of its first line, text): each paragraph, its line breaks kept
    prose: list[tuple[int, str]] = field(default_factory=list)
    code: list[str] = field(default_factory=list)  # fenced lines and inline code spans


def sections(path: Path) -> list[Section]:
    """``path`` split at its headings, prose (by paragraph) apart from code."""
    found = [Section("(top)")]
    in_fence = False
    paragraph: list[tuple[int, str]] = []

    def end_paragraph() -> None:
        if paragraph:
            text = "\n".join(line for _, line in paragraph)
            found[-1].code.extend(INLINE_CODE.findall(text))
            found[-1].prose.append((paragraph[0][0], text))
            paragraph.clear()

    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.lstrip().startswith("```"):
            end_paragraph()
            in_fence = not in_fence
            continue
        if in_fence:
            found[-1].code.append(line)
        elif re.match(r"#{1,6} ", line):
            end_paragraph()
            found.append(Section(line.lstrip("#").strip()))
        elif line.strip():
            paragraph.append((number, line))
        else:
            end_paragraph()
    end_paragraph()
    return found


def figures(text: str, first: int) -> list[tuple[int, str]]:
    """(line number, figure) of each measurement in the prose ``text`` (a paragraph whose
    first line is ``first``), inline code left out."""
    found, at = [], 0
    for span in re.split(r"(`[^`]+`)", text):
        if not span.startswith("`"):
            found += [(first + text[:at + hit.start()].count("\n"), hit.group(0))
                      for hit in MEASUREMENT.finditer(span)]
        at += len(span)
    return found


def anchors(path: Path) -> set[str]:
    """The anchors GitHub makes of a markdown file's headings."""
    made: dict[str, int] = {}
    for section in sections(path)[1:]:
        slug = re.sub(r"[^\w\- ]", "", section.title.lower()).replace(" ", "-")
        made[slug] = made.get(slug, -1) + 1
        if made[slug]:
            made[f"{slug}-{made[slug]}"] = 0
    return set(made)


def course_verbs() -> set[str]:
    """The commands the ``course`` script accepts (its ``commands`` table)."""
    source = (ROOT / "course").read_text(encoding="utf-8")
    table = re.search(r"commands = \{(.*?)\}", source, re.DOTALL)
    assert table, "the course script has no `commands = {...}` table any more"
    return set(re.findall(r'"(\w+)":', table.group(1)))


def tracked_top_level() -> set[str]:
    """The names at the top of the checkout that git tracks (folders and files)."""
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout.split()
    return {name.split("/", 1)[0] for name in listed}


def ignored_by_git(path: str) -> bool:
    """Whether git ignores ``path`` (as a file, or as a folder the course makes)."""
    return any(subprocess.run(["git", "check-ignore", "-q", "--no-index", name], cwd=ROOT
                              ).returncode == 0 for name in (path, path.rstrip("/") + "/"))


def code_of(path: Path) -> list[str]:
    return [line for section in sections(path) for line in section.code]


def prose_of(path: Path) -> list[str]:
    return [line for section in sections(path) for _, line in section.prose]


def documented(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


@pytest.fixture(params=DOCUMENTS, ids=documented)
def document(request: pytest.FixtureRequest) -> Path:
    assert request.param.is_file(), f"{documented(request.param)} is missing"
    return request.param


def test_the_guides_exist_and_the_readme_links_each() -> None:
    names = {documented(g) for g in GUIDES}
    assert {"docs/instructors.md", "docs/deploy.md", "docs/site.md",
            "docs/development.md"} <= names, names
    links = {target.split("#", 1)[0] for line in prose_of(README) for target in
             LINK.findall(line)}
    unlinked = sorted((names | {"CHANGELOG.md"}) - links)
    assert unlinked == [], f"README.md does not link to {unlinked}"


def test_readme_is_short() -> None:
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= README_MAX_LINES, (
        f"README.md has {lines} lines; a newcomer's page keeps to {README_MAX_LINES} "
        "(move the rest into a guide under docs/)")


def _generated_lines(path: Path) -> range:
    """The lines of README's lesson list, which scripts/update_nav.py writes: each part's
    time there is the sum of its lessons' own ``Time:`` lines, not a measurement."""
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines, 1) if line.startswith("<!-- lessons:start"))
    end = next(i for i, line in enumerate(lines, 1) if line.startswith("<!-- lessons:end"))
    return range(start, end + 1)


def test_readme_states_no_measurement() -> None:
    generated = _generated_lines(README)
    found = [f"README.md:{number}: {figure!r}" for section in sections(README)
             for first, text in section.prose for number, figure in figures(text, first)
             if number not in generated]
    assert found == [], "figures go into a guide, beside their benchmark:\n" + "\n".join(found)


def broken_links(document: Path) -> list[str]:
    """Each relative link of ``document`` to a missing file or heading, and why."""
    broken = []
    for line in prose_of(document):
        for target in LINK.findall(line):
            if re.match(r"[a-z]+:", target):
                continue  # https:, mailto:
            file, _, anchor = target.partition("#")
            where = (document.parent / file).resolve() if file else document
            if not where.exists():
                broken.append(f"{target}: no {file}")
            elif anchor and where.suffix == ".md" and anchor not in anchors(where):
                broken.append(f"{target}: no heading makes #{anchor} in {where.name}")
    return broken


def test_relative_links_resolve(document: Path) -> None:
    broken = broken_links(document)
    assert broken == [], f"{documented(document)}: " + "; ".join(broken)


def test_course_commands_exist(document: Path) -> None:
    verbs = course_verbs()
    named = {verb for text in code_of(document) + prose_of(document)
             for verb in COURSE_VERB.findall(text)}
    assert named - verbs == set(), (
        f"{documented(document)} names ./course {sorted(named - verbs)}; "
        f"the course script has {sorted(verbs)}")


def _resolves(dotted: str) -> bool:
    """A module, or a name inside the longest module the dotted name starts with."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            thing = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            if not hasattr(thing, name):
                return False
            thing = getattr(thing, name)
        return True
    return False


def test_named_modules_and_names_import(document: Path) -> None:
    code = code_of(document)
    # a module named in prose without backticks counts too (`course_grading.exchange` moved)
    named = {package + rest for text in code + prose_of(document)
             for package, rest in PACKAGE_NAME.findall(text)}
    missing = sorted(name for name in named if not _resolves(name))
    run = {module for text in code for module in RUN_MODULE.findall(text)}
    not_modules = sorted(m for m in run if importlib.util.find_spec(m) is None)
    assert missing == [] and not_modules == [], (
        f"{documented(document)}: nothing called {missing}; no module to run {not_modules}")


def test_named_paths_exist(document: Path) -> None:
    top = tracked_top_level()
    missing = []
    for text in code_of(document):
        for word in text.split():
            word = word.strip("\"'(),;:").split("::", 1)[0].removeprefix("./")
            first = word.split("/", 1)[0]
            if first not in top or (first == word and "." not in word and first != "course"
                                    and not (ROOT / word).is_dir()):
                continue
            if any(mark in word for mark in ("<", ">", "{", "$", "...", "…", "NN")):
                continue
            if "*" in word:
                if not list(ROOT.glob(word)):
                    missing.append(word)
            elif not (ROOT / word).exists() and not ignored_by_git(word):
                missing.append(word)
    assert missing == [], f"{documented(document)} names paths that do not exist: {missing}"


def measurements_without_command(path: Path) -> list[str]:
    """Each measurement in the prose of ``path``, in a section that shows no command."""
    found = []
    for section in sections(path):
        if any(COMMAND_IN_CODE.search(c.strip()) for c in section.code):
            continue
        for first, text in section.prose:
            found += [f"{path.name}:{number} ({section.title}): {figure!r}"
                      for number, figure in figures(text, first)]
    return found


def test_every_measurement_shows_its_command(document: Path) -> None:
    found = measurements_without_command(document)
    assert found == [], ("a figure without the command that makes it (add the benchmark "
                         "beside it, or drop the figure):\n" + "\n".join(found))


@pytest.mark.parametrize(("line", "is_measurement"), [
    ("the first run took 33.0 s here", True),
    ("1,630 s of busy CPU", True),
    ("a site of 56.98 MB", True),
    ("the two cores 98 % busy", True),
    ("1.61x faster", True),
    ("the ~22× narrower scores", True),
    ("each cell has 10 seconds", True),
    ("5 minutes on 2 cores", True),
    ("13 points over 5 questions", False),
    ("Python 3.11 or newer, lessons 01-07", False),
    ("a 3 × 2 table of 12 heads", False),
    ("d_k = 32, mode 0700, port 8000", False),
])
def test_what_counts_as_a_measurement(line: str, is_measurement: bool) -> None:
    assert bool(MEASUREMENT.search(line)) is is_measurement, line


@pytest.mark.parametrize(("text", "caught"), [
    ("## A\n\nIt took 12 s.\n", True),
    # inline code split over two lines is still inline code; the figure after it is prose
    ("## A\n\npip stops (`pip install\nx`, 42 s here), and `--no-deps` would\n", True),
    # a fenced block that runs nothing (a config) is not the command behind a figure
    ("## A\n\nIt took 12 s.\n\n```python\nc.X = 1\n```\n", True),
    ("## A\n\nIt took 12 s (`benchmarks/import_cost.py`).\n", False),
    ("## A\n\nIt took 12 s.\n\n```sh\n./course test --durations=5\n```\n", False),
    ("## A\n\nSet `--timeout 12 s` and\n`Execute.timeout = 10 s`.\n", False),
])
def test_what_counts_as_a_figure_without_its_command(tmp_path: Path, text: str,
                                                     caught: bool) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text("# Doc\n\n" + text, encoding="utf-8")
    assert bool(measurements_without_command(doc)) is caught, text


def test_a_link_split_over_lines_is_checked(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text("# Doc\n\nSee [the\nguide](missing.md) and [here](doc.md).\n",
                   encoding="utf-8")
    assert broken_links(doc) == ["missing.md: no missing.md"]
