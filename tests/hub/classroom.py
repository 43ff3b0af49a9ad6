"""A whole class on one machine: real Unix users, nbgrader's filesystem exchange, a gradebook.

Used by ``tests/hub`` and ``benchmarks/class_flow.py``. Everything here needs root: it creates
Unix users and groups (unique names per run, removed again), a world-readable run directory
under ``/tmp`` (removed again), and, for the PostgreSQL gradebook, a throw-away PostgreSQL
server on 127.0.0.1 with its data in a temporary directory (stopped and removed again).

The shared Python environment that every user runs is built from ``/usr/bin/python3`` (a venv
under root's 0700 home is unusable by other users) and cached under
``/var/cache/attention-course/`` keyed by the requirements, so a second run starts at once and
a fresh machine builds it (about a minute with a warm pip cache).
"""

from __future__ import annotations

import fcntl
import grp
import hashlib
import itertools
import json
import os
import pwd
import re
import secrets
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: localports

from localports import free_port, free_ports

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
COURSE_ID = "attention-course"
ASSIGNMENT = "checkpoint"
# The assignment the class works on: the real checkpoint quiz, and the instructor's course
# config is the quiz's own nbgrader_config.py followed by deploy/course_nbgrader_config.py.
QUIZ = REPO / "quiz"
ASSIGNMENT_SOURCE = QUIZ / "source" / ASSIGNMENT
ANSWER_CELL = "weights_without_self"
VISIBLE_TEST = "test_weights_visible"
SCALE_TEST = "test_missing_scale"

SYSTEM_PYTHON = "/usr/bin/python3"
ENV_CACHE = Path(os.environ.get("ATTENTION_HUB_ENV_CACHE", "/var/cache/attention-course"))
TEST_GECOS = "attention-course class test"

# Modes of the exchange and course directories (see docs/deploy.md, "The modes").
EXCHANGE_ROOT_MODE = 0o1777  # nbgrader insists on rwx for all; sticky: nobody deletes others'
COURSE_EXCHANGE_MODE = 0o755  # <exchange>/attention-course, owned by the instructor
OUTBOUND_MODE = 0o755  # released assignments: everyone reads
INBOUND_MODE = 0o2733  # submissions: everyone writes, nobody but the instructor lists
FEEDBACK_MODE = 0o711  # feedback: found by a hash of one's own submission, never listed
PRIVATE_MODE = 0o700  # homes and the instructor's course directory


# --------------------------------------------------------------------------------------
# The shared environment
# --------------------------------------------------------------------------------------


def hub_requirements() -> list[str]:
    """The course's dependencies and its `grading` extra (pyproject.toml), plus
    deploy/requirements-hub.txt: the class's shared environment, students and instructor."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    reqs = [*project["dependencies"], *project["optional-dependencies"]["grading"]]
    for line in (DEPLOY / "requirements-hub.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            reqs.append(line)
    return reqs


def http_proxy() -> str:
    """configurable-http-proxy's path; the calling test is skipped, saying how to install it,
    where it is missing."""
    import pytest

    found = shutil.which("configurable-http-proxy")
    if found is None:
        pytest.skip("configurable-http-proxy is missing: run scripts/install-system-packages.sh")
    return found


def ensure_env(log=print) -> Path:
    """Return a venv every user can run, building it on first use (cached by requirements)."""
    if not os.access(SYSTEM_PYTHON, os.X_OK):
        raise RuntimeError(f"{SYSTEM_PYTHON} is needed to build the multi-user environment")
    version = subprocess.run(
        [SYSTEM_PYTHON, "-c", "import sys; print(sys.version)"],
        capture_output=True, text=True, check=True,
    ).stdout
    reqs = hub_requirements()
    key = hashlib.sha256("\n".join([version, *reqs]).encode()).hexdigest()[:12]
    ENV_CACHE.mkdir(parents=True, exist_ok=True)
    ENV_CACHE.chmod(0o755)
    env = ENV_CACHE / f"hub-env-{key}"
    done = env / ".complete"
    with open(ENV_CACHE / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done.exists():
            return env
        log(f"building the multi-user environment {env} (first run on this machine)")
        shutil.rmtree(env, ignore_errors=True)
        # no pip of its own: this environment's (current) pip installs into it, skipping
        # ensurepip's bootstrap and the old pip's resolver (39 s against 62 s here)
        subprocess.run([SYSTEM_PYTHON, "-m", "venv", "--without-pip", str(env)], check=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "--python", str(env / "bin/python"), "install",
             "--quiet", *reqs],
            check=True,
        )
        subprocess.run(["chmod", "-R", "a+rX", str(env)], check=True)
        done.write_text("\n".join(reqs) + "\n")
    return env


# --------------------------------------------------------------------------------------
# The assignment
# --------------------------------------------------------------------------------------


KINDS = ("correct", "wrong", "blank")


def answer_notebook(nb: dict, kind: str, secret: str | None = None,
                    student: str | None = None) -> dict:
    """The released notebook ``nb`` (JSON dict) answered as a ``kind`` student would.

    ``correct`` answers every question right, ``wrong`` forgets the 1/sqrt(d_k) in
    ``weights_without_self`` (the other answers right), ``blank`` hands the
    released notebook back untouched. The answers are quiz-core's (course_grading): for
    the public variant (quiz/source/), or, given the class's ``secret``, for ``student``'s
    own numbers (course_grading.personal).
    """
    from course_grading.mistakes import MISTAKES
    from course_grading.submissions import answers_for, fill_answers
    from course_grading.variants import SOURCE_PATH, facts_of, quiz_facts

    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)} (got {kind!r})")
    if kind == "blank":
        return nb
    if secret is None:
        variant = quiz_facts(nbformat.read(REPO / SOURCE_PATH, as_version=4))  # quiz/source/
    else:
        from course_grading.personal import personal_variant

        if not student:
            raise ValueError(f"a per-student answer needs the student's id (got {student!r})")
        variant = facts_of(personal_variant(secret, student))
    answers = answers_for(variant) if kind == "correct" else answers_for(
        variant, MISTAKES["missing_scale"])
    filled = fill_answers(nbformat.from_dict(nb), answers)
    return json.loads(nbformat.writes(filled))


def expected_failures(kind: str, grade_ids: Sequence[str]) -> set[str]:
    """The autograded checks a ``kind`` student fails (the others score full points)."""
    if kind == "correct":
        return set()
    if kind == "wrong":
        return {VISIBLE_TEST, SCALE_TEST}
    return {g for g in grade_ids if g.startswith("test_")}


def grade_problems(kind: str, grades: dict[str, list[float]]) -> list[str]:
    """How the gradebook's ``{grade_id: [score, max]}`` of a ``kind`` student is wrong."""
    fails = expected_failures(kind, list(grades))
    problems = []
    for grade_id, (score, max_score) in sorted(grades.items()):
        if not grade_id.startswith("test_"):
            continue  # the written answer waits for a human
        want = 0.0 if grade_id in fails else max_score
        if score != want:
            problems.append(f"{kind}: {grade_id} scored {score}, expected {want} of {max_score}")
    if not any(g.startswith("test_") for g in grades):
        problems.append(f"{kind}: no autograded checks in {sorted(grades)}")
    return problems


# --------------------------------------------------------------------------------------
# Per-student variants (course_grading.personal): what each student is shown and hands in
# --------------------------------------------------------------------------------------


#: The inputs of the setup cell that are numbers (``tokens`` is the same words for everyone).
NUMERIC_INPUTS = ("Q", "K", "row", "shift_key", "c", "dup_query", "dup_key", "block_scores",
                  "block", "n_tokens", "d_model", "n_heads")
#: Those a class's students see differ between any two of them (tests/hub's rounds
#: choose such a seed: :func:`class_seed`). Not ``block`` (the
#: same for everyone) nor the multi-head layer's sizes (each from a handful of values: a seed
#: under which three students share none of them as well is rare enough that looking for it
#: takes minutes); each student's are checked to be their own all the same.
APART = ("Q", "K", "row", "shift_key", "c", "dup_query", "dup_key", "block_scores")


def class_seed(students: Sequence[str], tries: int = 3000) -> tuple[str, str, str]:
    """The instructor's secret seed for this class, and who copies whom: the first of
    ``hub round 0``, ``hub round 1``, ... under which every numeric input of the setup cell
    differs between any two of ``students`` and one student's right letters are all wrong
    for another; ``(seed, classmate, copier)``.

    Why a search: ``row``, ``shift_key``, ``dup_query`` and ``dup_key`` are each one of four
    token positions and ``c`` one of nine tenths, so under any one seed two of three students
    share at least one of them about 98 times in 100 (by chance, as two students of a class
    share a birthday); and a classmate's letter is right as often as a guess, one time in
    four (tests/test_personal.py). The round (tests/hub/test_term_hub.py) asserts that each
    student is shown their own variant, recomputed from the seed and their id, that the three
    differ in every input, and that the copier scores what a blank notebook scores; for the
    last two to be seen (and for a grader that took the numbers of the notebook it was handed
    to be caught), the seed is one under which chance shares nothing (about one in 70 here).
    """
    for seed, chosen in apart_seeds("hub round", students, tries):
        for (i, a), (j, b) in itertools.permutations(enumerate(chosen), 2):
            if copying_gains_nothing(a, b):
                return seed, students[i], students[j]
    raise AssertionError(f"no seed of {tries} gives {list(students)} pairwise different "
                         f"values of {', '.join(APART)} and different right answers")


def apart_seeds(prefix: str, students: Sequence[str], tries: int
                ) -> Iterator[tuple[str, list[Any]]]:
    """The seeds ``<prefix> 0``, ``<prefix> 1``, ... (``tries`` of them) under which the
    variants of ``students`` differ pairwise in every input of :data:`APART`, each with
    those variants (in the order of ``students``)."""
    from course_grading.personal import personal_variant

    for n in range(tries):
        seed = f"{prefix} {n}"
        chosen: list[Any] = []
        for student in students:  # short-cut: most seeds fail on the first two students
            v = personal_variant(seed, student)
            if not all(apart(v, other) for other in chosen):
                break
            chosen.append(v)
        else:
            yield seed, chosen


def apart(a: Any, b: Any) -> bool:
    """Do the variants ``a`` and ``b`` differ in every input of :data:`APART`?"""
    return all(not np.array_equal(getattr(a, n), getattr(b, n)) for n in APART)


def copier_seed(students: Sequence[str], classmate: str, copier: str, tries: int = 5000
                ) -> str:
    """A seed for a class of ``students`` and a ``copier`` who hands in ``classmate``'s
    notebook with their answers: the first of ``ngshare round 0``, ``ngshare round 1``, ...
    under which ``students`` differ pairwise in every input of :data:`APART`, the copier's
    numbers from the classmate's too, and copying gains nothing (why a search:
    :func:`class_seed`). For four sample classes here the first such seed was round 106 to
    671: 2 to 13 s."""
    from course_grading.personal import personal_variant

    for seed, _ in apart_seeds("ngshare round", students, tries):
        theirs, mine = personal_variant(seed, classmate), personal_variant(seed, copier)
        if apart(theirs, mine) and copying_gains_nothing(theirs, mine):
            return seed
    raise AssertionError(f"no seed of {tries} gives {list(students)} pairwise different "
                         f"values of {', '.join(APART)}, and {copier} nothing from "
                         f"{classmate}'s answers")


def copying_gains_nothing(theirs: Any, mine: Any) -> bool:
    """Is every right letter of ``theirs`` wrong for ``mine``, and their multi-head sizes
    too (so that a copy of the classmate's answers, graded with ``mine``, scores what a
    blank notebook scores, given :func:`apart` numbers)?"""
    from course_grading.variants import MC_QUESTIONS, mc_letters

    return (all(mc_letters(theirs, q)[0] != mc_letters(mine, q)[0] for q in MC_QUESTIONS)
            and answer_values(theirs)["multihead_sizes"] != answer_values(mine)["multihead_sizes"])


def answer_values(variant: Any) -> dict[str, list]:
    """The right answers of the online-softmax and multi-head questions for ``variant``, as
    values: what a student who worked them out passes on."""
    from course_grading.submissions import MULTIHEAD_ANSWER, ONLINE_ANSWER

    names = {n: getattr(variant, n) for n in NUMERIC_INPUTS}
    names["block_scores"] = list(names["block_scores"])
    names["np"] = np
    exec(ONLINE_ANSWER + MULTIHEAD_ANSWER, names)  # the course's own answer cells
    return {"online_state": np.round(np.array(names["online_state"], dtype=float), 4).tolist(),
            "multihead_sizes": [int(x) for x in names["multihead_sizes"]]}


def setup_numbers(source: str) -> dict[str, Any]:
    """The numeric inputs a setup cell's source assigns (read as the grader reads it)."""
    from course_grading.check_calls import setup_values

    values = setup_values(source)
    return {n: values[n].value for n in NUMERIC_INPUTS}


def setup_cell_numbers(nb: dict) -> dict[str, Any]:
    """The numeric inputs of the setup cell of the notebook ``nb`` (JSON dict)."""
    [setup] = [c for c in nb["cells"]
               if c["metadata"].get("nbgrader", {}).get("grade_id") == "setup"]
    source = setup["source"]
    return setup_numbers(source if isinstance(source, str) else "".join(source))


def variant_numbers(variant: Any) -> dict[str, Any]:
    """The numeric inputs of a variant, as its setup cell writes them."""
    return {n: (v.tolist() if isinstance(v := getattr(variant, n), np.ndarray)
                else list(v) if isinstance(v, tuple) else v)
            for n in NUMERIC_INPUTS}


def copied_answers(secret: str, classmate: str) -> dict[str, str]:
    """A classmate's completed answers, passed on as answers pass between students ("Q2
    is [0.12, 0.61, ...], Q3 is B"): the classmate's weights, their row, their letters and
    their written answer. (A classmate's working *code* works on anyone's numbers, which no
    choice of numbers can stop: tests/grading/test_personal_pipeline.py and the
    instructors' guide, step 1.)"""
    from course_grading.checkpoint_answers import weights_without_self
    from course_grading.personal import personal_variant
    from course_grading.submissions import WRITTEN_ANSWER
    from course_grading.variants import facts_of

    theirs = personal_variant(secret, classmate)
    facts = facts_of(theirs)
    weights = np.round(weights_without_self(theirs.Q, theirs.K), 3).tolist()
    return {
        "weights_without_self": f"def weights_without_self(Q, K):\n"
                                f"    return np.array({weights})\n",
        "shifted_key": f"shift_factors = {np.round(facts.shift_factors, 4).tolist()}\n"
                       f"shifted_weights = np.array({np.round(facts.shifted_row, 3).tolist()})",
        "mc_read_table": f'answer_read_table = "{facts.mc_answer("read_table")}"',
        "mc_duplicate_key": f'answer_duplicate_key = "{facts.mc_answer("duplicate_key")}"',
        "written_shift_or_scale": WRITTEN_ANSWER,
        **{q: f"{q} = {v}" for q, v in answer_values(theirs).items()},
    }


def with_answers(nb: dict, answers: dict[str, str]) -> dict:
    """The notebook ``nb`` (JSON dict) with the answer cells named in ``answers`` replaced."""
    import nbformat

    from course_grading.submissions import fill_answers

    return json.loads(nbformat.writes(fill_answers(nbformat.from_dict(nb), answers)))


# --------------------------------------------------------------------------------------
# Users and commands
# --------------------------------------------------------------------------------------


# Every answer waiting for a human gets full marks, saved as formgrader saves a score
# (manual_score set, needs_manual_grade cleared); run by the instructor in the course.
GRADE_BY_HAND = (
    "from traitlets.config.loader import PyFileConfigLoader\n"
    "from nbgrader.api import Gradebook\n"
    "from nbgrader.coursedir import CourseDirectory\n"
    "cfg = PyFileConfigLoader('nbgrader_config.py', path='.').load_config()\n"
    "cd = CourseDirectory(config=cfg)\n"
    "n = 0\n"
    f"with Gradebook(cd.db_url, {COURSE_ID!r}) as gb:\n"
    f"    for sub in gb.assignment_submissions({ASSIGNMENT!r}):\n"
    "        for nb in sub.notebooks:\n"
    "            for g in nb.grades:\n"
    "                if g.needs_manual_grade:\n"
    "                    g.manual_score, g.needs_manual_grade = g.max_score, False\n"
    "                    n += 1\n"
    "    gb.db.commit()\n"
    "print(f'graded {n} answers by hand')\n"
)


@dataclass
class Person:
    name: str
    home: Path
    password: str
    uid: int = 0
    kind: str = ""  # the answer this student gives (students only)
    work: Path = Path()  # where they run nbgrader: ~/work on the CLI, ~ in JupyterLab


def _run(argv: Sequence[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(list(argv), capture_output=True, text=True, **kw)


def _check(proc: subprocess.CompletedProcess, what: str) -> subprocess.CompletedProcess:
    if proc.returncode != 0:
        raise RuntimeError(
            f"{what} failed (exit {proc.returncode}): {proc.args}\n"
            f"--- stdout\n{proc.stdout[-4000:]}\n--- stderr\n{proc.stderr[-4000:]}"
        )
    return proc


@dataclass
class ClassRun:
    """One class: an instructor, ``n_students`` students, an exchange and a gradebook.

    Use as a context manager; everything it creates is removed on exit.
    """

    n_students: int = 3
    backend: str = "sqlite"  # or "postgres"
    exchange_kind: str = "filesystem"  # or "ngshare": no exchange folder, servers share nothing
    engine: str = "nbgrader"  # autograde with `nbgrader autograde` or "parallel" (the engine)
    extra_students: int = 0  # students who work through JupyterHub instead of the CLI
    log: object = print
    tag: str = field(default_factory=lambda: "atn" + secrets.token_hex(3))
    instructor: Person | None = None
    students: list[Person] = field(default_factory=list)
    hub_students: list[Person] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)
    postgres: Postgres | None = None
    timings: dict[str, float] = field(default_factory=dict)
    created_users: list[Person] = field(default_factory=list)
    hub: Hub | None = None
    tokens: dict[str, str] = field(default_factory=dict)  # JupyterHub API tokens, by user
    # the class's per-student secret (course_grading.variants --seed), once the instructor
    # made it: students answer for their own numbers; None: the public variant
    secret: str | None = None
    fetched: dict[str, dict] = field(default_factory=dict)  # each student's notebook as fetched

    # ---- set up and tear down --------------------------------------------------------

    def __enter__(self) -> ClassRun:
        if os.geteuid() != 0:
            raise PermissionError("a class of Unix users needs root")
        if self.backend not in ("sqlite", "postgres"):
            raise ValueError(f"backend must be 'sqlite' or 'postgres' (got {self.backend!r})")
        if self.exchange_kind not in ("filesystem", "ngshare"):
            raise ValueError("exchange_kind must be 'filesystem' or 'ngshare' "
                             f"(got {self.exchange_kind!r})")
        self.env = ensure_env(self.log)
        try:
            self._setup()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc) -> None:
        if self.hub is not None:
            self.hub.stop()
        for person in self.created_users:  # whatever they left running (by uid, not by name)
            if person.uid > 0:  # never 0: that would be every root process
                _run(["pkill", "-KILL", "-U", str(person.uid)])
        if self.postgres is not None:
            self.postgres.stop()
        for person in self.created_users:
            _run(["userdel", "--remove", person.name])
            shutil.rmtree(person.home, ignore_errors=True)
        self.created_users.clear()
        for group in self.groups:
            _run(["groupdel", group])
        if getattr(self, "root", None):
            shutil.rmtree(self.root, ignore_errors=True)

    def _setup(self) -> None:
        t0 = time.perf_counter()
        # World-readable run directory: the students' code, config, exchange.
        self.root = Path(tempfile.mkdtemp(prefix=f"{self.tag}-", dir="/tmp"))
        self.root.chmod(0o755)
        self.code = self.root / "code"
        # What a `pip install` of the clone gives everyone (docs/deploy.md step 2), but
        # course_grading: the students' library, the quizzes' spec and checks (no answers),
        # the exchange, and course_site (students' servers make their copies of the lessons
        # with it).
        for package in ("course_lib", "course_quiz", "course_exchange", "course_site"):
            shutil.copytree(REPO / package, self.code / package,
                            ignore=shutil.ignore_patterns("__pycache__"))
        # course_grading (the quiz's answers, the grader) in a folder only root and the
        # instructors' group enter (docs/deploy.md step 3), on everyone's path: a
        # student's Python finds no course_grading there and cannot open its files.
        self.instructors_code = self.root / "instructors"
        shutil.copytree(REPO / "course_grading", self.instructors_code / "course_grading",
                        ignore=shutil.ignore_patterns("__pycache__"))
        # Byte-compiled by root: the users cannot write __pycache__ here.
        for folder in (self.code, self.instructors_code):
            subprocess.run([SYSTEM_PYTHON, "-m", "compileall", "-q", str(folder)], check=True)
        self.pythonpath = f"{self.code}:{self.instructors_code}"
        self.config_dir = self.root / "etc" / "jupyter"
        self.config_dir.mkdir(parents=True)
        self.exchange = self.root / "exchange"
        # The global nbgrader config students and instructor share: the shipped file,
        # with this run's exchange directory (ngshare: the shipped file as it is; its URL
        # comes from NGSHARE_URL, which the hub gives every server).
        if self.exchange_kind == "ngshare":
            shutil.copy(DEPLOY / "nbgrader_config_ngshare.py",
                        self.config_dir / "nbgrader_config.py")
        else:
            shipped = (DEPLOY / "nbgrader_config.py").read_text()
            (self.config_dir / "nbgrader_config.py").write_text(
                shipped + "\n# tests/hub: this run's exchange\n"
                f"c.Exchange.root = {str(self.exchange)!r}\n"
            )
        subprocess.run(["chmod", "-R", "a+rX", str(self.root)], check=True)

        self.students_group = f"{self.tag}-students"
        self.instructors_group = f"{self.tag}-instructors"
        for group in (self.students_group, self.instructors_group):
            _check(_run(["groupadd", group]), f"groupadd {group}")
            self.groups.append(group)
        _check(_run(["chgrp", "-R", self.instructors_group, str(self.instructors_code)]),
               "chgrp course_grading")
        _check(_run(["chmod", "-R", "g+rX,g-w,o=", str(self.instructors_code)]),
               "chmod course_grading")
        self.instructor = self._add_user(f"{self.tag}-instr", self.instructors_group)
        self.students = [
            self._add_user(f"{self.tag}-s{i + 1}", self.students_group)
            for i in range(self.n_students)
        ]
        for i, s in enumerate(self.students):
            s.kind = KINDS[i % len(KINDS)]
        self.hub_students = [
            self._add_user(f"{self.tag}-h{i + 1}", self.students_group)
            for i in range(self.extra_students)
        ]
        for i, s in enumerate(self.hub_students):
            s.kind = ("correct", "wrong")[i % 2]
            s.work = s.home  # deploy/jupyterhub_config.py: notebook_dir = "~"

        # The exchange, pre-created by root with the modes nbgrader would give it.
        instr = self.instructor
        self.course_exchange = self.exchange / COURSE_ID
        if self.exchange_kind == "filesystem":
            self._make_exchange()

        # The instructor's course directory, private, pre-created by root.
        self.course = instr.home / COURSE_ID
        self.course.mkdir(mode=PRIVATE_MODE)
        shutil.copytree(ASSIGNMENT_SOURCE, self.course / "source" / ASSIGNMENT)
        # ngshare: the quiz's own config and the checked release of feedback (the other
        # exchange steps come from the global one; owner-checked collect reads Unix owners in
        # a folder that does not exist here)
        course_config = (QUIZ / "nbgrader_config.py").read_text() + "\n\n" + (
            (DEPLOY / "course_nbgrader_config.py").read_text()
            if self.exchange_kind == "filesystem"
            else (DEPLOY / "course_nbgrader_config_ngshare.py").read_text())
        if self.backend == "postgres" or self.exchange_kind == "ngshare":
            self.postgres = Postgres(self.root, self.log)
            self.postgres.start()
        if self.backend == "postgres":
            url = self.postgres.create_gradebook(owner=instr.name)
            course_config += ("\n# tests/hub: the PostgreSQL gradebook\n"
                              f"c.CourseDirectory.db_url = {url!r}\n")
        (self.course / "nbgrader_config.py").write_text(course_config)
        (self.course / "nbgrader_config.py").chmod(0o600)
        _check(_run(["chown", "-R", f"{instr.name}:", str(self.course)]), "chown course")
        self.course.chmod(PRIVATE_MODE)
        for s in self.students:
            s.work.mkdir(mode=0o755)
            os.chown(s.work, s.uid, pwd.getpwuid(s.uid).pw_gid)
        if self.exchange_kind == "ngshare":  # each user's own scratch folder (user_env)
            for p in self.created_users:
                (p.home / ".tmp").mkdir(mode=0o700)
                os.chown(p.home / ".tmp", p.uid, pwd.getpwuid(p.uid).pw_gid)
        self.timings["setup"] = time.perf_counter() - t0

    def _make_exchange(self) -> None:
        instr = self.instructor
        self.exchange.mkdir(mode=0o755)
        self.exchange.chmod(EXCHANGE_ROOT_MODE)
        for path, mode in [
            (self.course_exchange, COURSE_EXCHANGE_MODE),
            (self.course_exchange / "outbound", OUTBOUND_MODE),
            (self.course_exchange / "inbound", INBOUND_MODE),
            (self.course_exchange / "feedback", FEEDBACK_MODE),
        ]:
            path.mkdir()
            os.chown(path, instr.uid, pwd.getpwuid(instr.uid).pw_gid)
            path.chmod(mode)

    def _add_user(self, name: str, group: str | None) -> Person:
        home = Path("/home") / name
        groups = ["--groups", group] if group else []
        _check(_run(["useradd", "--create-home", "--home-dir", str(home), "--shell", "/bin/bash",
                     "--comment", TEST_GECOS, *groups, name]), f"useradd {name}")
        person = Person(name=name, home=home, password=secrets.token_urlsafe(12),
                        work=home / "work")
        person.uid = pwd.getpwnam(name).pw_uid
        self.created_users.append(person)  # from now on __exit__ removes it
        home.chmod(PRIVATE_MODE)  # Debian's useradd makes 0755 homes unless HOME_MODE is set
        _check(_run(["chpasswd"], input=f"{name}:{person.password}\n"), "chpasswd")
        return person

    # ---- running things as someone -----------------------------------------------------

    def user_env(self, person: Person) -> dict[str, str]:
        env = {
            "HOME": str(person.home), "USER": person.name, "LOGNAME": person.name,
            "PATH": f"{self.env}/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
            "PYTHONPATH": self.pythonpath, "JUPYTER_CONFIG_PATH": str(self.config_dir),
            "JUPYTER_PLATFORM_DIRS": "1", "MPLBACKEND": "Agg",
        }
        if self.exchange_kind == "ngshare" and self.hub is not None:
            # as in a terminal of their own server: their hub token (and, for a student,
            # their own scratch folder: deploy/jupyterhub_config.py)
            env.update(JUPYTERHUB_USER=person.name, NGSHARE_URL=self.hub.ngshare_url,
                       JUPYTERHUB_API_TOKEN=self.tokens.get(person.name, ""))
            if person is not self.instructor:
                env["TMPDIR"] = str(person.home / ".tmp")
        return env

    def as_user(self, person: Person, argv: Sequence[str], cwd: Path | None = None,
                check: bool = True, what: str = "") -> subprocess.CompletedProcess:
        """Run ``argv`` as ``person`` (runuser, a clean environment) and return the result."""
        env = [f"{k}={v}" for k, v in self.user_env(person).items()]
        proc = _run(["runuser", "-u", person.name, "--", "env", "-i", *env, *argv],
                    cwd=str(cwd or person.home))
        return _check(proc, what or f"{person.name}: {' '.join(argv)}") if check else proc

    def write_as(self, person: Person, path: Path, text: str) -> None:
        """Write ``text`` into ``path`` as ``person`` (the file is theirs, made with their
        umask), as they would in a terminal of their own."""
        proc = subprocess.run(
            ["runuser", "-u", person.name, "--", "/bin/sh", "-c", 'cat > "$0"', str(path)],
            input=text, capture_output=True, text=True,
        )
        _check(proc, f"{person.name}: write {path}")

    def nbgrader(self, person: Person, *args: str, cwd: Path | None = None,
                 check: bool = True) -> subprocess.CompletedProcess:
        return self.as_user(person, [f"{self.env}/bin/nbgrader", *args], cwd=cwd, check=check)

    def instructor_formgrader_config(self) -> Path:
        """``~instructor/.jupyter/nbgrader_config.py``: where formgrader finds the course
        (docs/deploy.md step 6), written by the instructor (so it is theirs)."""
        path = self.instructor.home / ".jupyter" / "nbgrader_config.py"
        self.as_user(self.instructor, ["/bin/sh", "-c",
                                       'mkdir -p "$(dirname "$0")" && cat > "$0"', str(path)],
                     what="instructor: ~/.jupyter/nbgrader_config.py")
        path.write_text(f"c.CourseDirectory.root = {str(self.course)!r}\n")
        return path

    # ---- the class flow --------------------------------------------------------------

    def release(self) -> None:
        t0 = time.perf_counter()
        self.nbgrader(self.instructor, "generate_assignment", ASSIGNMENT, "--force",
                      cwd=self.course)
        self.nbgrader(self.instructor, "release_assignment", ASSIGNMENT, "--force",
                      cwd=self.course)
        self.timings["release"] = time.perf_counter() - t0

    def released_notebook(self, student: Person) -> Path:
        return student.work / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"

    def student_works(self, student: Person) -> None:
        """Fetch, answer as ``student.kind`` says, submit: all as the student."""
        self.nbgrader(student, "fetch_assignment", ASSIGNMENT, cwd=student.work)
        nb_path = self.released_notebook(student)
        nb = self.fetched[student.name] = json.loads(nb_path.read_text())
        text = json.dumps(answer_notebook(nb, student.kind, self.secret, student.name),
                          indent=1)
        self.write_as(student, nb_path, text)  # a file they own
        self.nbgrader(student, "submit", ASSIGNMENT, cwd=student.work)

    def students_work(self) -> None:
        t0 = time.perf_counter()
        for s in self.students:
            self.student_works(s)
        self.timings["students_work"] = time.perf_counter() - t0

    def impostor_submits(self, impostor: Person, victim: Person
                         ) -> tuple[subprocess.CompletedProcess, subprocess.CompletedProcess]:
        """``impostor`` submits their own notebook under ``victim``'s id: with the class's
        submit (refused at once), then with plain nbgrader's, which a student can name on
        their own command line (it goes in, for collect to refuse)."""
        refused = self.nbgrader(impostor, "submit", ASSIGNMENT, f"--student={victim.name}",
                                cwd=impostor.work, check=False)
        plain = self.nbgrader(
            impostor, "submit", ASSIGNMENT, f"--student={victim.name}",
            "--ExchangeFactory.submit=nbgrader.exchange.default.submit.ExchangeSubmit",
            cwd=impostor.work)
        return refused, plain

    def plant_linked_submission(self, student: Person) -> str:
        """``student`` makes, by hand, a newer submission holding a link to the source.

        No nbgrader command: the student creates a folder in ``inbound`` (they may create
        entries there) with their notebook and a symbolic link to the instructor's source
        notebook, which they cannot read themselves. Returns the folder's name.
        """
        stamp = time.strftime("%Y-%m-%d %H:%M:%S.000000 UTC", time.gmtime(time.time() + 60))
        name = f"{student.name}+{ASSIGNMENT}+{stamp}+linked"
        script = (f'set -e; d="$0/$1"; mkdir -m 0770 "$d"; cp "$2" "$d/{ASSIGNMENT}.ipynb"; '
                  'printf "%s" "$3" > "$d/timestamp.txt"; ln -s "$4" "$d/solutions.txt"'
                  )
        source = self.course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
        self.as_user(student, ["/bin/sh", "-c", script, str(self.course_exchange / "inbound"),
                               name, str(self.released_notebook(student)), stamp, str(source)],
                     what=f"{student.name}: plant a linked submission")
        return name

    def grade(self) -> dict[str, str]:
        """Collect, autograde, generate and release feedback; return each step's log."""
        logs = {}
        t0 = time.perf_counter()
        for step in ("collect", "autograde", "grade_by_hand", "generate_feedback",
                     "release_feedback"):
            args = [step, ASSIGNMENT]
            if step == "grade_by_hand":  # feedback waits for it (course_grading.feedback)
                logs[step] = self.grade_by_hand()
                self.timings[step] = time.perf_counter() - t0
                t0 = time.perf_counter()
                continue
            if step == "autograde" and self.engine == "parallel":
                proc = self.as_user(self.instructor, [
                    f"{self.env}/bin/python", "-m", "course_grading.parallel", ASSIGNMENT,
                    "--no-progress"], cwd=self.course)
                logs[step] = proc.stdout + proc.stderr
                self.timings[step] = time.perf_counter() - t0
                t0 = time.perf_counter()
                continue
            if step == "autograde":
                args.append("--force")
            proc = self.nbgrader(self.instructor, *args, cwd=self.course)
            logs[step] = proc.stdout + proc.stderr
            self.timings[step] = time.perf_counter() - t0
            t0 = time.perf_counter()
        return logs

    def grade_by_hand(self) -> str:
        """Every answer waiting for a human gets full marks, saved as formgrader saves a
        score (manual_score set, needs_manual_grade cleared); the instructor runs it."""
        proc = self.as_user(self.instructor, [f"{self.env}/bin/python", "-c", GRADE_BY_HAND],
                            cwd=self.course)
        return proc.stdout + proc.stderr

    def fetch_feedback(self, student: Person) -> list[Path]:
        self.nbgrader(student, "fetch_feedback", ASSIGNMENT, cwd=student.work)
        return sorted((student.work / ASSIGNMENT / "feedback").glob(f"*/{ASSIGNMENT}.html"))

    def students_fetch_feedback(self) -> dict[str, list[Path]]:
        t0 = time.perf_counter()
        out = {s.name: self.fetch_feedback(s) for s in self.students}
        self.timings["fetch_feedback"] = time.perf_counter() - t0
        return out

    def grades(self) -> dict[str, dict[str, list[float]]]:
        """{student: {grade_id: [score, max_score]}} read from the gradebook by the instructor."""
        script = (
            "import json\n"
            "from traitlets.config.loader import PyFileConfigLoader\n"
            "from nbgrader.api import Gradebook\n"
            "from nbgrader.coursedir import CourseDirectory\n"
            "cfg = PyFileConfigLoader('nbgrader_config.py', path='.').load_config()\n"
            "cd = CourseDirectory(config=cfg)\n"
            "out = {}\n"
            f"with Gradebook(cd.db_url, {COURSE_ID!r}) as gb:\n"
            f"    for sub in gb.assignment_submissions({ASSIGNMENT!r}):\n"
            "        out[sub.student_id] = {g.name: [g.score, g.max_score]\n"
            "                               for nb in sub.notebooks for g in nb.grades}\n"
            "print(json.dumps(out))\n"
        )
        proc = self.as_user(self.instructor, [f"{self.env}/bin/python", "-c", script],
                            cwd=self.course)
        return json.loads(proc.stdout.strip().splitlines()[-1])

    def gradebook_path(self) -> Path:
        return self.course / "gradebook.db"


# --------------------------------------------------------------------------------------
# Permissions
# --------------------------------------------------------------------------------------


def mode_of(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def permission_violations(run: ClassRun) -> list[str]:
    """Everything a student could do that they must not; empty when the class is sealed.

    Checks the modes of homes, course directory and exchange, and then tries, as each student
    (runuser), to read another student's work, list the submissions, read the instructor's
    source, config and gradebook, list the feedback, and write into the released assignment.
    """
    bad: list[str] = []
    expect = [(p.home, PRIVATE_MODE) for p in [run.instructor, *run.students, *run.hub_students]]
    expect += [
        (run.course, PRIVATE_MODE),
        (run.exchange, EXCHANGE_ROOT_MODE),
        (run.course_exchange, COURSE_EXCHANGE_MODE),
        (run.course_exchange / "outbound", OUTBOUND_MODE),
        (run.course_exchange / "inbound", INBOUND_MODE),
        (run.course_exchange / "feedback", FEEDBACK_MODE),
    ]
    for path, mode in expect:
        if mode_of(path) != mode:
            bad.append(f"{path} has mode {oct(mode_of(path))}, expected {oct(mode)}")

    everyone = [*run.students, *run.hub_students]
    secrets_of_instructor = [
        run.course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb",
        run.course / "nbgrader_config.py",
    ]
    if run.backend == "sqlite":
        secrets_of_instructor.append(run.gradebook_path())
    # the quiz's answers in the instructor's package (docs/deploy.md step 3)
    secrets_of_instructor.append(
        run.instructors_code / "course_grading" / "checkpoint_answers.py")
    for i, s in enumerate(everyone):
        other = everyone[(i + 1) % len(everyone)]
        attempts = {
            f"read {other.name}'s notebook": ["cat", str(run.released_notebook(other))],
            f"list {other.name}'s home": ["ls", str(other.home)],
            "list the submissions (inbound)": ["ls", str(run.course_exchange / "inbound")],
            "list the feedback": ["ls", str(run.course_exchange / "feedback")],
            "write into the released assignment": [
                "touch", str(run.course_exchange / "outbound" / ASSIGNMENT / "planted.txt")],
            "list the instructor's home": ["ls", str(run.instructor.home)],
        }
        for path in secrets_of_instructor:
            attempts[f"read {path.name} of the instructor"] = ["cat", str(path)]
        attempts["import course_grading"] = [f"{run.env}/bin/python", "-c",
                                             "import course_grading.checkpoint_answers"]
        if run.postgres is not None:
            attempts["connect to the gradebook database without the password"] = [
                f"{run.env}/bin/python", "-c",
                "import psycopg2; psycopg2.connect(host='127.0.0.1', "
                f"port={run.postgres.port}, dbname={run.postgres.dbname!r}, "
                f"user={run.instructor.name!r}, connect_timeout=5)",
            ]
        for sub in sorted((run.course_exchange / "inbound").glob(f"{other.name}+*")):
            if sub.stat().st_uid == s.uid:  # an impostor's own folder under the other's name
                continue
            attempts[f"read {other.name}'s submission {sub.name}"] = [
                "cat", str(sub / f"{ASSIGNMENT}.ipynb")]
        if i > 0:  # once is enough for these
            attempts = {k: v for k, v in attempts.items() if other.name in k}
        for what, argv in attempts.items():
            proc = run.as_user(s, argv, check=False)
            if proc.returncode == 0:
                bad.append(f"{s.name} could {what}: {' '.join(argv)}")
    return bad


# --------------------------------------------------------------------------------------
# PostgreSQL
# --------------------------------------------------------------------------------------


def postgres_bindir() -> Path | None:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"),
                   key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0)
    return found[-1].parent if found else None


class Postgres:
    """A throw-away PostgreSQL server on 127.0.0.1, run by the ``postgres`` user."""

    def __init__(self, parent: Path, log=print) -> None:
        bindir = postgres_bindir()
        if bindir is None:
            raise RuntimeError(
                "PostgreSQL is not installed: run scripts/install-system-packages.sh")
        self.bindir = bindir
        self.log = log
        self.dir = Path(tempfile.mkdtemp(prefix="pg-", dir=parent))
        shutil.chown(self.dir, "postgres", "postgres")
        self.dir.chmod(0o700)
        self.data = self.dir / "data"
        self.port = free_port()
        self.dbname = "gradebook_" + secrets.token_hex(4)
        self.started = False

    def _pg(self, *argv: str, input: str | None = None) -> subprocess.CompletedProcess:
        proc = subprocess.run(["runuser", "-u", "postgres", "--", *argv], input=input,
                              capture_output=True, text=True, cwd=str(self.dir))
        return _check(proc, f"postgres: {argv[0]}")

    def start(self) -> None:
        self._pg(str(self.bindir / "initdb"), "-D", str(self.data), "-U", "postgres",
                 "--auth-local=peer", "--auth-host=scram-sha-256", "--no-sync", "-E", "UTF8")
        self.start_server()
        self.started = True

    def psql(self, sql: str) -> str:
        return self._pg(str(self.bindir / "psql"), "-h", str(self.dir), "-p", str(self.port),
                        "-U", "postgres", "-v", "ON_ERROR_STOP=1", "-qAt", "-c", sql).stdout

    def create_gradebook(self, owner: str) -> str:
        """Create a role ``owner`` with a fresh password and a database it owns; return db_url."""
        self.owner = owner
        return self.create_database(owner, self.dbname)

    def create_database(self, owner: str, dbname: str) -> str:
        """A new role ``owner`` (fresh password) owning a new database ``dbname``; its URL.

        Sessions use UTC, whatever the machine's time zone (ngshare stores times without one).
        """
        if not re.fullmatch(r"[a-z0-9_-]+", owner) or not re.fullmatch(r"[a-z0-9_]+", dbname):
            raise ValueError(f"role and database names must be [a-z0-9_-]+ "
                             f"(got {owner!r}, {dbname!r})")
        password = secrets.token_urlsafe(18)
        self.psql(f"CREATE ROLE \"{owner}\" LOGIN PASSWORD '{password}'")
        self.psql(f'CREATE DATABASE {dbname} OWNER "{owner}"')
        self.psql(f"ALTER ROLE \"{owner}\" SET timezone = 'UTC'")
        return f"postgresql+psycopg2://{owner}:{password}@127.0.0.1:{self.port}/{dbname}"

    def stop_server(self) -> None:
        """Stop the server, keeping its data (a gradebook that becomes unreachable)."""
        self._pg(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")

    def start_server(self) -> None:
        """Start it again after :meth:`stop_server`."""
        opts = (f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.dir} "
                "-c fsync=off -c password_encryption=scram-sha-256")
        self._pg(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-o", opts,
                 "-l", str(self.dir / "server.log"), "-w", "-t", "60", "start")

    def stop(self) -> None:
        if self.started:
            subprocess.run(["runuser", "-u", "postgres", "--", str(self.bindir / "pg_ctl"),
                            "-D", str(self.data), "-m", "immediate", "-w", "stop"],
                           capture_output=True, cwd=str(self.dir))
            self.started = False
        shutil.rmtree(self.dir, ignore_errors=True)



# --------------------------------------------------------------------------------------
# JupyterHub
# --------------------------------------------------------------------------------------


PROFILE_SNIPPET = Path("/etc/profile.d/attention-course.sh")
SNIPPET_WAS_THERE = PROFILE_SNIPPET.exists()  # before this process started any hub


class Hub:
    """deploy/jupyterhub_config.py run by root on 127.0.0.1 (free ports) for ``run``'s class.

    ``deploy`` is the folder the hub's config is read from; by default a copy of the
    checkout's ``deploy/`` inside a private (0700) folder, as in a clone made in
    ``mktemp -d``: what students read must not depend on where the checkout lies.
    ``student_settings`` is where the hub installs the settings students' servers obey
    (``ATTENTION_HUB_STUDENT_SETTINGS``); by default a folder every user can read.
    """

    def __init__(self, run: ClassRun, deploy: Path | None = None,
                 student_settings: Path | None = None,
                 env: dict[str, str] | None = None) -> None:
        self.run = run
        self.extra_env = dict(env or {})  # more ATTENTION_HUB_* settings (the LTI login's)
        # the public port, the hub's API, the proxy's API, ngshare's
        self.port, self.api_port, self.proxy_api_port, self.ngshare_port = free_ports(4)
        self.base = f"http://127.0.0.1:{self.port}"
        self.state = Path(tempfile.mkdtemp(prefix="hub-state-", dir=run.root))
        self.logfile = self.state / "jupyterhub.log"
        if deploy is None:
            deploy = Path(tempfile.mkdtemp(prefix="private-checkout-", dir=run.root)) / "deploy"
            shutil.copytree(DEPLOY, deploy)
        self.deploy = deploy
        self.student_settings = student_settings or self.state.with_name(
            self.state.name + "-student-settings")
        self.proc: subprocess.Popen | None = None
        # the hub installs it (deploy/jupyterhub_config.py); removed again unless it was there
        # before any test's hub (several hubs of one run may overlap)
        self.profile_snippet = PROFILE_SNIPPET
        self.snippet_was_there = SNIPPET_WAS_THERE
        self.ngshare_url = f"{self.base}/services/ngshare/"
        if run.exchange_kind == "ngshare":
            self._prepare_ngshare()

    def _prepare_ngshare(self) -> None:
        """ngshare's own Unix user, file storage (0700) and PostgreSQL database."""
        run = self.run
        self.ngshare_user = run._add_user(f"{run.tag}-ngs", None)
        self.ngshare_storage = run.root / "ngshare-files"
        self.ngshare_storage.mkdir(mode=0o700)
        os.chown(self.ngshare_storage, self.ngshare_user.uid,
                 pwd.getpwuid(self.ngshare_user.uid).pw_gid)
        url = run.postgres.create_database(self.ngshare_user.name,
                                           "ngshare_" + secrets.token_hex(4))
        self.ngshare_db_url_file = self.state / "ngshare-database-url"
        self.ngshare_db_url_file.write_text(url + "\n")
        self.ngshare_db_url_file.chmod(0o600)
        self.ngshare_service_url = f"http://127.0.0.1:{self.ngshare_port}"

    def start(self, timeout: float = 90) -> None:
        run = self.run
        chp = shutil.which("configurable-http-proxy")
        if chp is None:
            raise RuntimeError("configurable-http-proxy is missing: "
                               "run scripts/install-system-packages.sh")
        env = {
            "PATH": f"{run.env}/bin:{Path(chp).parent}:/usr/local/bin:/usr/bin:/bin",
            "LANG": "C.UTF-8", "HOME": "/root",
            "PYTHONPATH": run.pythonpath, "JUPYTER_CONFIG_PATH": str(run.config_dir),
            "ATTENTION_HUB_ENV": str(run.env),
            "ATTENTION_HUB_STATE_DIR": str(self.state),
            # no lessons installed for this class (tests/hub/test_instructor_hub.py installs
            # them as docs/deploy.md says): never the machine's /opt/attention-course/lessons
            "ATTENTION_HUB_LESSONS": str(run.root / "lessons"),
            "ATTENTION_HUB_STUDENT_SETTINGS": str(self.student_settings),
            "ATTENTION_HUB_INSTRUCTOR_SETTINGS": str(self.state.with_name(
                self.state.name + "-instructor-settings")),
            "ATTENTION_HUB_STUDENTS_GROUP": run.students_group,
            "ATTENTION_HUB_INSTRUCTORS_GROUP": run.instructors_group,
            "ATTENTION_HUB_URL": self.base,
            "ATTENTION_HUB_API_URL": f"http://127.0.0.1:{self.api_port}",
            "ATTENTION_HUB_PROXY_API_URL": f"http://127.0.0.1:{self.proxy_api_port}",
            "ATTENTION_HUB_EXCHANGE": run.exchange_kind,
            **self.extra_env,
        }
        if run.exchange_kind == "ngshare":
            env.update(ATTENTION_HUB_NGSHARE_SERVICE_URL=self.ngshare_service_url,
                       ATTENTION_HUB_NGSHARE_USER=self.ngshare_user.name,
                       ATTENTION_HUB_NGSHARE_STORAGE=str(self.ngshare_storage),
                       ATTENTION_HUB_NGSHARE_DB_URL_FILE=str(self.ngshare_db_url_file))
        with open(self.logfile, "w") as log:
            self.proc = subprocess.Popen(
                [f"{run.env}/bin/jupyterhub", "-f", str(self.deploy / "jupyterhub_config.py")],
                cwd=str(self.state), env=env, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        import requests

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"jupyterhub exited ({self.proc.returncode}):\n{self.log_tail()}")
            try:
                if requests.get(f"{self.base}/hub/api/", timeout=2).status_code == 200 and (
                        self.run.exchange_kind != "ngshare" or self.ngshare_up()):
                    return
            except (requests.ConnectionError, requests.Timeout):  # not up yet, or busy
                pass
            time.sleep(0.5)
        raise RuntimeError(f"jupyterhub did not answer within {timeout} s:\n{self.log_tail()}")

    def ngshare_up(self) -> bool:
        """Does ngshare answer (its health check, through the hub's proxy)?"""
        import requests

        try:
            return requests.get(self.ngshare_url + "healthz", timeout=5).status_code == 200
        except requests.RequestException:
            return False

    def ngshare_pids(self) -> list[int]:
        """The ngshare service's processes (run by its own user)."""
        proc = _run(["pgrep", "-U", str(self.ngshare_user.uid), "-f",
                     "course_exchange.ngshare_service serve"])
        return [int(p) for p in proc.stdout.split()]

    def token_by_login(self, person: Person) -> str:
        """A JupyterHub API token for ``person``, asked for after a password login."""
        s, r = self.login(person)
        if r.status_code != 302:
            raise RuntimeError(f"{person.name} could not log in: {r.status_code}")
        got = s.post(f"{self.base}/hub/api/users/{person.name}/tokens",
                     headers={"X-XSRFToken": _cookie(s, "_xsrf", "/hub/")},
                     json={"note": "tests/hub", "expires_in": 7200}, timeout=60)
        got.raise_for_status()
        return got.json()["token"]

    def admin_api(self, admin_token: str, method: str, path: str, **kw):
        import requests

        r = requests.request(method, f"{self.base}/hub/api/{path}", timeout=120,
                             headers={"Authorization": f"token {admin_token}"}, **kw)
        if r.status_code >= 400:
            raise RuntimeError(f"hub API {method} {path}: {r.status_code} {r.text[:300]}")
        return r.json() if r.content else None

    def tokens_for(self, admin_token: str, names: Sequence[str]) -> dict[str, str]:
        """Make hub users of (existing Unix users) ``names``; a fresh API token for each."""
        known = {u["name"] for u in self.admin_api(admin_token, "GET", "users") or []}
        new = [n for n in names if n not in known]
        if new:
            self.admin_api(admin_token, "POST", "users", json={"usernames": new})
        return {n: self.admin_api(admin_token, "POST", f"users/{n}/tokens",
                                  json={"note": "tests/hub", "expires_in": 7200})["token"]
                for n in names}

    def log_tail(self, n: int = 6000) -> str:
        return self.logfile.read_text(errors="replace")[-n:] if self.logfile.exists() else ""

    def stop(self) -> None:
        if self.proc is None:
            return
        self._stop()
        # Keep the hub's log (and its users' servers' output) for a post-mortem.
        artifacts = REPO / "test-artifacts" / "hub"
        artifacts.mkdir(parents=True, exist_ok=True)
        if self.logfile.exists():
            shutil.copy(self.logfile, artifacts / f"jupyterhub-{self.state.name}.log")

    def _stop(self) -> None:
        if not self.snippet_was_there:
            self.profile_snippet.unlink(missing_ok=True)
        if self.proc.poll() is None:
            self.proc.terminate()  # the hub stops the users' servers and its proxy
            try:
                # a server gets SIGINT, then SIGTERM, then SIGKILL: up to ~20 s each
                self.proc.wait(timeout=90)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, 9)
                self.proc.wait(timeout=10)
        # Anything left in the hub's process group goes too.
        try:
            os.killpg(self.proc.pid, 15)
        except ProcessLookupError:
            pass
        self.proc = None
        self._stop_orphaned_proxy()

    def _stop_orphaned_proxy(self) -> None:
        """The proxy runs in a session of its own (JupyterHub starts it so): a hub that died
        while starting (a port taken, say) leaves it running, with its pid file behind."""
        pid_file = self.state / "jupyterhub-proxy.pid"
        try:
            pid = int(pid_file.read_text().strip())
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except (OSError, ValueError):
            return  # no pid file (the hub stopped its proxy) or no such process
        if b"configurable-http-proxy" in cmdline:
            os.kill(pid, 15)

    # ---- a student's browser, with requests ------------------------------------------

    def login(self, person: Person, password: str | None = None):
        """Log ``person`` in through the hub's login form; return (session, response)."""
        import requests

        s = requests.Session()
        s.get(f"{self.base}/hub/login", timeout=30).raise_for_status()
        xsrf = _cookie(s, "_xsrf", "/hub/")
        r = s.post(f"{self.base}/hub/login",
                   data={"username": person.name,
                         "password": person.password if password is None else password,
                         "_xsrf": xsrf},
                   allow_redirects=False, timeout=60)
        return s, r

    def open_lab(self, s, person: Person, timeout: float = 240):
        """Open the student's JupyterLab (spawning it), as a browser would; return the page."""
        deadline = time.monotonic() + timeout
        url = f"{self.base}/hub/spawn/{person.name}"
        r = s.get(url, timeout=60)
        while time.monotonic() < deadline:
            r = s.get(f"{self.base}/user/{person.name}/lab", timeout=60)
            if r.status_code == 200 and r.url.startswith(f"{self.base}/user/{person.name}/"):
                return r
            time.sleep(1)
        raise RuntimeError(f"{person.name}'s server did not start: last {r.status_code} {r.url}"
                           f" (hub log in test-artifacts/hub/)")

    def spawn_failure(self, s, person: Person, timeout: float = 120) -> str | None:
        """Ask for ``person``'s server as a browser would; the hub's failure message, or None.

        Reads the hub's progress events (what the spawn page shows) until the spawn ends.
        """
        import requests

        s.get(f"{self.base}/hub/spawn/{person.name}", timeout=60)
        url = f"{self.base}/hub/api/users/{person.name}/server/progress"
        with s.get(url, stream=True, timeout=timeout) as r:
            r.raise_for_status()
            try:
                for line in r.iter_lines(decode_unicode=True):
                    if not line or not line.startswith("data:"):
                        continue
                    event = json.loads(line[len("data:"):])
                    if event.get("failed"):
                        return event.get("message", "")
                    if event.get("ready"):
                        return None
            except requests.exceptions.ChunkedEncodingError:
                pass
        raise RuntimeError(f"{person.name}'s spawn neither failed nor finished")

    def lab_student_works(self, s, h: Person) -> dict:
        """In ``h``'s running JupyterLab: list, fetch, answer as ``h.kind``, submit.

        Returns what a browser would have seen: the list, the answer to submit, formgrader's
        status. Every step goes through nbgrader's Assignments endpoints of the server.
        """
        rec: dict = {}
        listed = self.user_api(s, h, "GET", "assignments", params={"course_id": COURSE_ID})
        rec["listed"] = listed.json() if listed.ok else listed.status_code
        data = {"course_id": COURSE_ID, "assignment_id": ASSIGNMENT}
        fetched = self.user_api(s, h, "POST", "assignments/fetch", data=data)
        fetched.raise_for_status()
        rec["fetched"] = fetched.json()
        path = f"api/contents/{ASSIGNMENT}/{ASSIGNMENT}.ipynb"
        got = self.user_api(s, h, "GET", path)
        got.raise_for_status()
        fetched_nb = self.run.fetched[h.name] = got.json()["content"]
        nb = answer_notebook(fetched_nb, h.kind, self.run.secret, h.name)
        put = self.user_api(s, h, "PUT", path, data=json.dumps(
            {"type": "notebook", "format": "json", "content": nb}))
        put.raise_for_status()
        rec["after_submit"] = self.lab_submit(s, h)
        rec["formgrader_status"] = self.user_api(s, h, "GET", "formgrader").status_code
        return rec

    def lab_submit(self, s, h: Person) -> dict:
        """Press *Submit* in ``h``'s Assignments tab; the answer the tab shows."""
        data = {"course_id": COURSE_ID, "assignment_id": ASSIGNMENT}
        submitted = self.user_api(s, h, "POST", "assignments/submit", data=data)
        submitted.raise_for_status()
        return submitted.json()

    def lab_fetch_feedback(self, s, h: Person) -> str:
        """Press *Fetch feedback* in ``h``'s Assignments tab; the feedback page's text."""
        data = {"course_id": COURSE_ID, "assignment_id": ASSIGNMENT}
        r = self.user_api(s, h, "POST", "assignments/fetch_feedback", data=data)
        r.raise_for_status()
        if not r.json().get("success", True):
            raise RuntimeError(f"{h.name}: fetch_feedback failed: {r.json()}")
        listing = self.user_api(s, h, "GET", f"api/contents/{ASSIGNMENT}/feedback")
        listing.raise_for_status()
        stamps = sorted(item["name"] for item in listing.json()["content"])
        html = self.user_api(s, h, "GET",
                             f"api/contents/{ASSIGNMENT}/feedback/{stamps[-1]}/{ASSIGNMENT}.html")
        html.raise_for_status()
        return html.json()["content"]

    def user_api(self, s, owner: Person, method: str, path: str, **kw):
        """Call ``/user/<owner>/<path>`` with the session's cookies and the server's XSRF token."""
        headers = kw.pop("headers", {})
        token = _cookie(s, "_xsrf", f"/user/{owner.name}/", default=None)
        if token:
            headers["X-XSRFToken"] = token
        return s.request(method, f"{self.base}/user/{owner.name}/{path}", headers=headers,
                         timeout=120, **kw)


def _cookie(s, name: str, path_prefix: str, default: object = ...) -> str:
    for c in s.cookies:
        if c.name == name and (c.path or "/").startswith(path_prefix.rstrip("/")):
            return c.value
    for c in s.cookies:
        if c.name == name:
            return c.value
    if default is ...:
        raise KeyError(f"no cookie {name!r} for {path_prefix}: {[c.name for c in s.cookies]}")
    return default


def have_groupadd() -> bool:
    return all(shutil.which(t) for t in ("useradd", "userdel", "groupadd", "runuser", "chpasswd"))


def group_exists(name: str) -> bool:
    try:
        grp.getgrnam(name)
    except KeyError:
        return False
    return True


__all__ = ["ClassRun", "Hub", "Postgres", "ensure_env", "permission_violations"]

if __name__ == "__main__":  # python tests/hub/classroom.py: build the environment only
    print(ensure_env())
    sys.exit(0)
