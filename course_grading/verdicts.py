"""Autograde a quiz with every check decided on the instructor's side.

Plain nbgrader runs each hidden test *inside* the student's kernel, after the student's
own code: whatever that code did (IPython hooks, patched builtins, objects whose ``__eq__``
always agrees, printing a check's expected values) can change how the test runs or what it
sees. :class:`DecideOnHost` replaces nbgrader's ``Execute`` preprocessor in
``nbgrader autograde``:

1. it reads the quiz's test cells (restored by nbgrader from the gradebook: the
   instructor's version) as data, without running them (:mod:`course_grading.check_calls`);
2. it runs the student's notebook in the sandboxed kernel (:mod:`course_grading.sandbox`),
   skipping every test cell;
3. for each check it asks the kernel for plain data (:mod:`course_grading.probe`): right at
   the test cell for a check with nothing hidden, and after the student's last cell for a
   check with hidden parts, so that no student cell runs after those inputs have reached
   the kernel. Of those, the checks that send the kernel nothing (a letter, a number the
   student computed) are read first, and the checks that call the student's function on
   hidden inputs last: whatever the function does with those inputs can change only the
   checks that come after it, which are told in fixed words (below);
4. it judges the data here (:func:`course_quiz.checkpoint_checks.judge`), with expectations
   computed here (:func:`course_grading.checkpoint_answers.expected`, never read from the
   notebook), and writes the verdict into the test cell as nbgrader's own scoring reads
   it: a passed check shows a line of text (full points), a failed one an error (0 points).
   The gradebook, formgrader, feedback, ``nbgrader export``, the grade table and the report
   work as before; the verdict itself is kept in the cell's metadata
   (``metadata["course"]["verdict"]``).

**One bit per hidden check.** From the moment the student's function has been called on a
hidden input, everything it does is chosen by code that knows that input: which exception
it raises, which known mistake it imitates, whether it answers in time, how much it prints,
whether it ends its kernel. So a check that sends hidden inputs is shown to the student as
exactly one of two verdicts, passed or failed, each in words fixed by the quiz's spec
(:meth:`DecideOnHost._hidden_verdict`); a notebook stopped during those checks (out of time,
memory or output, or a kernel that ended) shows only the checks that could not run, failed,
and no note of why. What the grader really saw goes to its log, for the instructor. The
student's own cells' time (``metadata["course"]["seconds"]``) ends where the hidden checks
begin. A function's check on the setup cell's own example (the graded call of
``test_weights_visible``, whose expected weights are its hidden part) sends nothing the
student's notebook does not hold: it is read with the checks that send nothing
(:func:`sends_hidden_inputs`).

It also bounds what a submission can cost: output kept per cell and per notebook, a kernel
killed when it floods the grader with output, and the sandbox's wall-time budget per
notebook. After a cell's reply the rest of its output is waited for up to 15 s (nbclient's
own 4 s can run out on a busy machine, and the notebook would stop there, every later check
0); a message dropped as too large ends that wait at once. A check that could not run (the
kernel died, was killed, or ran out of time) scores 0 with the reason in its verdict; the
rest of the notebook is still graded.

Enable it in ``nbgrader_config.py`` with :func:`enable` (the checkpoint's
``quiz/nbgrader_config.py`` does).
"""

from __future__ import annotations

import ast
import asyncio
import importlib
import json
import logging
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import nbformat
from jupyter_core.utils import run_sync
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat.notebooknode import NotebookNode
from traitlets import Dict, Float, Int, Unicode

from course_quiz.checkpoint_checks import Verdict, judge
from course_quiz.checkpoint_spec import CHECKPOINT, QuizSpec

from .check_calls import Literal, QuizSourceError, SetupName, check_calls, setup_values
from .checkpoint_answers import expected
from .kernel_messages import KernelMessageError
from .probe import (
    MAX_REPLY,
    new_marker,
    plain_names,
    probe_source,
    read_reply,
    reported_exception,
)
from .sandbox import SandboxedExecute, sandbox_of
from .shown_ids import for_terminal

__all__ = ["DecideOnHost", "PlannedCheck", "enable", "plan_checks", "verdict_output"]

#: Error names written for failed checks, by verdict reason (nbgrader scores an error 0).
ERROR_NAMES = {
    "wrong": "CheckFailed",
    "format": "CheckFailed",
    "raised": "AnswerRaised",
    "missing": "AnswerMissing",
    "not_plain": "NotPlainData",
    "not_run": "CheckNotRun",
    "hidden": "CheckFailed",
}


@dataclass(frozen=True)
class PlannedCheck:
    """A check of one test cell, read from the instructor's version of the cell."""

    index: int
    grade_id: str
    kind: str
    answer: str
    inputs: dict[str, Any]
    deferred: bool  # has hidden parts: probed after the student's last cell
    #: whether an input comes from the instructor's hidden call rather than the setup cell
    #: (a student knows their setup cell: a function called on it learns nothing hidden)
    secret_inputs: bool = True


def _load_spec(dotted: str) -> QuizSpec:
    module, _, name = dotted.partition(":")
    spec = getattr(importlib.import_module(module), name)
    if not isinstance(spec, QuizSpec):
        raise TypeError(f"{dotted} is not a QuizSpec (got {type(spec).__name__})")
    return spec


def _grade_id(cell: NotebookNode) -> str | None:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def _is_test(cell: NotebookNode) -> bool:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return cell.cell_type == "code" and bool(meta.get("grade")) and not meta.get("solution")


def plan_checks(nb: NotebookNode, spec: QuizSpec) -> dict[int, PlannedCheck]:
    """Read every test cell of ``nb`` into the check it asks for (cell index -> check).

    Raises
    ------
    QuizSourceError
        If a test cell has no check of ``spec``, or its ``check(...)`` calls are not in
        the form the grader reads, or an input names something the setup cell does not
        assign: the notebook is then not graded (its checks would otherwise run in the
        student's kernel).
    """
    setup = next((c for c in nb.cells if _grade_id(c) == "setup"), None)
    values = setup_values(setup.source) if setup is not None else {}
    plan = {}
    for index, cell in enumerate(nb.cells):
        if not _is_test(cell):
            continue
        grade_id = _grade_id(cell)
        try:
            check = spec.check(str(grade_id))
        except KeyError as exc:
            raise QuizSourceError(f"test cell {grade_id!r} has no host-side check: "
                                  f"{exc.args[0]}") from None
        calls = [c for c in check_calls(cell.source) if c.grade_id == grade_id]
        if not calls:
            raise QuizSourceError(f"test cell {grade_id!r} does not call "
                                  f"check(\"{grade_id}\", ...)")
        call = calls[-1]  # the hidden call, when there is one, carries every input
        if call.answer != check.answer:
            raise QuizSourceError(f"test cell {grade_id!r} checks {call.answer!r}; the spec "
                                  f"says {check.answer!r}")
        inputs: dict[str, Any] = {}
        secret = False
        for name, given in call.inputs.items():
            if name == "expected":  # for the student's kernel only: the grader computes its own
                continue
            secret = secret or not isinstance(given, SetupName)
            if isinstance(given, SetupName):
                if given.name not in spec.setup_names or given.name not in values:
                    raise QuizSourceError(f"test cell {grade_id!r} uses {given.name!r}, which "
                                          "the setup cell does not assign")
                given = values[given.name]
            assert isinstance(given, Literal)
            inputs[name] = given.value
        plan[index] = PlannedCheck(index, check.grade_id, check.kind, check.answer, inputs,
                                   any(c.hidden for c in calls), secret)
    return plan


def verdict_output(verdict: Verdict) -> NotebookNode:
    """The output nbgrader scores: text for a passed check, an error for a failed one."""
    if verdict.passed:
        return nbformat.v4.new_output("stream", name="stdout",
                                      text=f"✓ {verdict.grade_id}: {verdict.message}\n")
    ename = ERROR_NAMES.get(verdict.reason, "CheckFailed")
    return nbformat.v4.new_output("error", ename=ename, evalue=verdict.message,
                                  traceback=[f"{ename}: {verdict.message}"])


def sends_hidden_inputs(planned: PlannedCheck) -> bool:
    """Whether a check's probe hands the student's code inputs it has not seen: a function's
    check on the instructor's inputs. A function's check on the setup cell's own example
    (the graded call of ``test_weights_visible``, whose expected weights are the hidden
    part) sends only what the student's notebook already holds."""
    return planned.kind == "weights" and planned.secret_inputs


_sends_inputs = sends_hidden_inputs


def answer_cell_trouble(nb: NotebookNode, answer: str, question: str,
                        cell_limit: float) -> str | None:
    """Why the student's answer ``answer`` is not defined, when its own cell says why: the
    answer cell of ``question`` (its grade id), or a cell that defines the name, does not
    parse or was stopped by the cell time limit, in the words of the instructor's grade
    table (:data:`course_grading.gradetable.STOPPING_ERRORS`); None when no such cell is
    found (the name was never written, or renamed).

    The error's name comes from the student's own cell, run before any hidden input reaches
    the kernel, so it tells the student nothing they could not see in their notebook.
    """
    from .gradetable import STOPPING_ERRORS

    defines = re.compile(rf"^\s*(def\s+{re.escape(answer)}\b|{re.escape(answer)}\s*=)",
                         re.MULTILINE)
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.cell_type != "code" or not meta.get("solution") or not (
                meta.get("grade_id") == question or defines.search(cell.source[:100_000])):
            continue
        for out in cell.get("outputs", []):
            if out.get("output_type") != "error":
                continue
            what = STOPPING_ERRORS.get(str(out.get("ename"))[:80])
            if what == "does not parse":
                return (f"its cell does not parse ({str(out.get('ename'))[:80]}), so none of "
                        "it ran: fix the line the error points to, then run the cell")
            if what == "stopped by the cell time limit":
                return (f"its cell was stopped by the cell time limit ({cell_limit:g} s) "
                        "before it got there: make the cell finish well within the limit")
            if what:
                return f"its cell stopped: {what}"
    return None


def _answer_cells_using(nb: NotebookNode, packages: tuple[str, ...]) -> list[str]:
    """Grade ids of the student's answer cells that import one of ``packages``."""
    found = []
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.cell_type != "code" or not meta.get("solution"):
            continue
        try:
            tree = ast.parse(cell.source[:100_000])
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            tree = None
        names: set[str] = set()
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, ast.Import):
                names.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module:
                names.add(node.module.split(".")[0])
        if names & set(packages) or any(f"'{p}'" in cell.source or f'"{p}"' in cell.source
                                        for p in packages):
            found.append(str(meta.get("grade_id")))
    return found


def _size(part: Any) -> int:
    """Characters of ``part`` (a message's content or metadata, a kept output) as JSON:
    every field counts, metadata and display ids included."""
    try:
        return len(json.dumps(part, default=repr, ensure_ascii=False))
    except (ValueError, RecursionError):  # nested too deeply to be an honest output
        return 1 << 40


def _message_size(msg: Mapping[str, Any]) -> int:
    """Characters (and binary buffer bytes) of a whole kernel message."""
    buffers = msg.get("buffers") or []
    return (_size(msg.get("content")) + _size(msg.get("metadata")) + _size(msg.get("header"))
            + _size(msg.get("parent_header")) + sum(len(b) for b in buffers))


#: Failed checks whose inputs were hidden are told in these words only: whatever the
#: student's code sent back (values, shapes, sums, names) may encode the hidden inputs.
_HIDDEN_WORDS = {
    "format": "an answer of the wrong form",
    "wrong": "a wrong answer",
    "not_plain": "something that is not plain data",
}


def _memory_reason(sandbox: Any) -> str | None:
    """"it used more than N MB of memory" when the sandbox's control group killed the
    kernel for memory (:meth:`SandboxProvisioner.killed_for_memory`), else None."""
    asked = getattr(sandbox, "killed_for_memory", None)
    return asked() if asked is not None else None


def _alive_after(sandbox: Any, seconds: float) -> bool:
    """Whether the ``sandbox``'s process still runs after ``seconds`` (True at once when
    there is none to ask about: not a sandbox)."""
    alive = getattr(sandbox, "process_alive", None)
    if alive is None:
        return True
    deadline = time.monotonic() + seconds
    while alive():
        if time.monotonic() > deadline:
            return True
        time.sleep(0.05)
    return False


def timeout_reason(err: CellTimeoutError, cell_limit: float, output_wait: float) -> str:
    """Why nbclient's ``CellTimeoutError`` stopped a notebook: the cell's own time limit, or
    the wait for the rest of its output after its reply (nbclient raises the same error for
    both; its message names which before it quotes the cell, which the student wrote)."""
    said = str(err).split("Here is a preview", 1)[0]
    if "Timeout waiting for IOPub output" in said:
        return f"its output did not all arrive within {output_wait:g} s of the cell's end"
    return f"a cell ran past its {cell_limit:g} s limit and did not stop when interrupted"


class _WhoseNotebook(logging.LoggerAdapter):
    """Prefix each log line with the student and notebook being graded (nbclient's own
    lines, such as "Timeout waiting for execute reply", name neither)."""

    def process(self, msg: Any, kwargs: Any) -> tuple[Any, Any]:
        return f"[{self.extra['whose']}] {msg}", kwargs


def _whose(resources: Mapping[str, Any] | None) -> str:
    """``"<student>/<notebook>"`` from nbgrader's resources, printable characters only."""
    info = (resources or {}).get("nbgrader", {})
    text = f"{info.get('student', '?')}/{info.get('notebook', '?')}"
    return for_terminal(text)


class DecideOnHost(SandboxedExecute):
    """nbgrader's ``Execute``, with every check decided outside the student's kernel.

    Configure it with :func:`enable`; the traits are ``c.DecideOnHost.<name>``.
    """

    specs = Dict(
        {CHECKPOINT.assignment: "course_quiz.checkpoint_spec:CHECKPOINT"},
        help="assignment id -> 'module:NAME' of its QuizSpec. An assignment without a spec "
             "is refused: its test cells would have to run in the student's kernel.",
    ).tag(config=True)
    max_cell_output = Int(100_000, help="Characters of output kept per cell (the rest is "
                          "cut, with a marker).").tag(config=True)
    max_notebook_output = Int(1_000_000, help="Characters of output kept per notebook.").tag(
        config=True)
    max_output_received = Int(32_000_000, help="Characters of output received from a "
                              "kernel before it is killed as a flood.").tag(config=True)
    probe_timeout = Float(10.0, help="Seconds a probe may take (it calls student code)."
                          ).tag(config=True)
    iopub_timeout = Int(15, help="Seconds to wait, after a cell's reply, for the rest of its "
                        "output (nbclient's own 4 s can run out on a busy machine). A message "
                        "dropped as too large ends the wait at once.").tag(config=True)
    spec_override = Unicode("", help="'module:NAME' of a QuizSpec for every assignment "
                            "(tests).").tag(config=True)

    # -- what happened, per notebook -------------------------------------------------
    def _reset(self) -> None:
        self._received = 0
        self._kept = 0
        self._stopped: str | None = None  # why the kernel stopped early, if it did
        self._started = time.monotonic()
        self._hidden_from: float | None = None  # when hidden inputs first reach the kernel
        self._stopped_before_hidden: str | None = None  # a stop the student may be told of

    def _spec_for(self, resources: Mapping[str, Any]) -> QuizSpec:
        if self.spec_override:
            return _load_spec(self.spec_override)
        assignment = (resources or {}).get("nbgrader", {}).get("assignment", "")
        if assignment not in self.specs:
            raise QuizSourceError(
                f"no quiz spec for assignment {assignment!r} (c.DecideOnHost.specs has "
                f"{sorted(self.specs)}): its checks would have to run in the student's kernel")
        spec = _load_spec(self.specs[assignment])
        if assignment != CHECKPOINT.assignment:
            return spec
        # the parts the class's checkpoint covers, as the instructor recorded them beside
        # the secret source (never what a notebook says): a test cell of another part is
        # then no check of this quiz, and the notebook is not graded (plan_checks)
        from nbgrader.coursedir import CourseDirectory

        from .variants import read_parts

        try:
            return spec.for_parts(read_parts(CourseDirectory(config=self.config).root))
        except ValueError as exc:
            raise QuizSourceError(str(exc)) from None

    # -- the notebook -------------------------------------------------------------------
    def preprocess(self, nb: NotebookNode, resources: Any, km: Any = None) -> Any:
        """Run the student's cells, probe every check, and write each verdict."""
        base = self.log.logger if isinstance(self.log, _WhoseNotebook) else self.log
        self.log = _WhoseNotebook(base, {"whose": _whose(resources)})
        self._spec = self._spec_for(resources)
        self.allow_course_lib = self._spec.course_lib_allowed
        plan = plan_checks(nb, self._spec)
        self._plan = plan
        self._using_course_lib = ([] if self._spec.course_lib_allowed else
                                  _answer_cells_using(nb, ("course_lib", "course_grading")))
        self._reset()
        self._verdicts: dict[int, Verdict] = {}
        return super().preprocess(nb, resources, km)  # refuses links, then _execute_notebook

    def _run_notebook(self) -> None:
        """The loop of nbconvert's ExecutePreprocessor.preprocess, checks decided here."""
        deferred: list[PlannedCheck] = []
        for index, cell in enumerate(self.nb.cells):
            if self._stopped:
                break
            planned = self._plan.get(index)
            if planned is not None:
                if planned.deferred:
                    deferred.append(planned)
                else:
                    self._decide(planned)
                continue
            if cell.cell_type == "code":
                self._execute_student_cell(cell, index)
        # checks that send the kernel nothing first: no hidden input has reached it yet
        for planned in [p for p in deferred if not _sends_inputs(p)]:
            if self._stopped:
                break
            self._decide(planned)
        self._stopped_before_hidden = self._stopped
        self._hidden_from = time.monotonic()
        for planned in [p for p in deferred if _sends_inputs(p)]:
            if self._stopped:
                break
            try:
                self._decide(planned)
            except (CellTimeoutError, DeadKernelError):
                raise  # a stop of known words (_execute_notebook)
            except Exception as exc:
                # The student's function has seen a hidden input: if what its kernel does
                # next could break the grader into "ungraded" (run again) rather than
                # "failed", that choice would be one more bit of the hidden input. So
                # anything unforeseen here stops the notebook; the instructor's log keeps
                # the traceback.
                self.log.error("the grader failed during the hidden checks; the notebook is "
                               "stopped there", exc_info=exc)
                self._stop(f"the grader could not go on reading the kernel "
                           f"({type(exc).__name__})")

    def _execute_student_cell(self, cell: NotebookNode, index: int) -> None:
        try:
            self.execute_cell(cell, index, store_history=True)
        except DeadKernelError:
            self._stopped = self._stopped or self._death_reason()
        except KernelMessageError as exc:
            self._stop(str(exc))
        except CellTimeoutError:
            if not self._output_refused():
                raise  # a cell that did not stop when interrupted: the notebook stops
        finally:
            self._bound(cell)
        self._output_refused()

    # -- the kernel's output channel ----------------------------------------------------
    def _watch_output_channel(self) -> None:
        """Be told when the kernel's output channel drops a message (too large)."""
        import zmq

        self._monitor = None
        socket = getattr(getattr(self.kc, "iopub_channel", None), "socket", None)
        if socket is None:
            return
        address = f"inproc://course-iopub-{id(self)}-{time.monotonic_ns()}"
        socket.monitor(address, zmq.EVENT_DISCONNECTED)
        self._monitor = zmq.Context.shadow(socket.context.underlying).socket(zmq.PAIR)
        self._monitor.connect(address)

    async def async_execute_cell(self, cell: NotebookNode, cell_index: int,
                                 execution_count: int | None = None,
                                 store_history: bool = True) -> NotebookNode:
        """nbclient's execution of one cell, with the kernel's output channel watched.

        A message too large for the channel is dropped and the channel disconnects: no more
        output will come, and nbclient would wait ``iopub_timeout`` seconds for it after the
        cell's reply. So while the cell runs, the channel is looked at every quarter of a
        second (:meth:`_output_refused`), and the kernel is killed as soon as it dropped a
        message; nbclient's own check on the kernel (once a second) then ends its wait with
        ``DeadKernelError``, and the notebook stops with the reason recorded here.
        """
        watcher = asyncio.ensure_future(self._kill_if_output_refused())
        try:
            return await super().async_execute_cell(cell, cell_index, execution_count,
                                                    store_history)
        finally:
            watcher.cancel()

    # nbclient binds the synchronous wrapper to its own coroutine: rebind it to this one.
    execute_cell = run_sync(async_execute_cell)

    async def _kill_if_output_refused(self) -> None:
        """Look at the output channel until it refused a message (the kernel is killed)."""
        while not self._output_refused():
            await asyncio.sleep(0.25)

    def _output_refused(self) -> bool:
        """True (and the kernel killed) when its output channel dropped a message.

        The channel also disconnects when the kernel dies (the notebook's time budget, or
        the student's code ending it): that is told apart by the sandbox's process, which
        is gone then (or going: it is given half a second), and reported as a death.
        """
        import zmq

        if getattr(self, "_monitor", None) is None or self._stopped:
            return bool(self._stopped)
        try:
            self._monitor.recv_multipart(zmq.NOBLOCK)
        except zmq.Again:
            return False
        sandbox = sandbox_of(self.km)
        # a kernel killed for memory drops its channel too (asked first: its sandbox can
        # take a while to go, while the memory it filled is freed)
        if getattr(sandbox, "killed_because", None) or _memory_reason(sandbox) or \
                not _alive_after(sandbox, 0.5):
            self._stopped = self._death_reason()
            return True
        limit = getattr(sandbox, "max_message_size", 0)
        self._stop(f"it sent an output message larger than the grader accepts "
                   f"({limit / 2**20:g} MB)" if limit else "its output could not be received")
        return True

    def _death_reason(self) -> str:
        sandbox = sandbox_of(self.km)
        why = getattr(sandbox, "killed_because", None)
        return why or _memory_reason(sandbox) or \
            "the kernel died (it crashed, or the student's code ended it)"

    def _decide(self, planned: PlannedCheck) -> None:
        marker = new_marker()
        args = tuple(planned.inputs[n] for n in ("Q", "K")) if planned.kind == "weights" \
            else ()
        probe = nbformat.v4.new_code_cell(
            probe_source(planned.kind, planned.answer, args, marker))
        probe.metadata["execution"] = {}
        original = self.nb.cells[planned.index]
        old_timeout = self.timeout
        self.timeout = int(self.probe_timeout)
        self._probe_stdout: list[str] | None = []  # what the probe printed: read, not kept
        try:
            self.execute_cell(probe, planned.index, store_history=False)
        except DeadKernelError:
            self._stopped = self._stopped or self._death_reason()
        except KernelMessageError as exc:
            self._stop(str(exc))
        except CellTimeoutError:
            if not self._output_refused():
                raise
        finally:
            self.timeout = old_timeout
            self.nb.cells[planned.index] = original
            text, self._probe_stdout = "".join(self._probe_stdout or []), None
        self._output_refused()
        if self._stopped:
            verdict = Verdict(planned.grade_id, False, f"This check could not run: "
                              f"{self._stopped}.", "not_run")
        else:
            reply = plain_names(read_reply(text, marker))
            if isinstance(reply, str):
                timed_out = any(o.get("ename") == "CellTimeoutError" for o in probe.outputs)
                why = (f"it did not finish within {self.probe_timeout:g} s" if timed_out
                       else reply)
                verdict = Verdict(planned.grade_id, False, f"The grader could not read "
                                  f"`{planned.answer}` from your notebook: {why}.",
                                  "not_run" if timed_out else "not_plain")
            else:
                verdict = judge(planned.grade_id, reply, planned.inputs, self._spec,
                                expected(planned.grade_id, planned.inputs, self._spec))
                why = answer_cell_trouble(
                    self.nb, planned.answer, self._spec.check(planned.grade_id).question,
                    float(self.timeout or 0)) if verdict.reason == "missing" else None
                if why:
                    verdict = Verdict(planned.grade_id, False, f"`{planned.answer}` is not "
                                      f"defined: {why}.", "missing")
        if planned.deferred and _sends_inputs(planned):
            verdict = self._hidden_verdict(planned, verdict)
        elif planned.deferred:
            verdict = self._in_fixed_words(planned, verdict)
        self._record(planned.index, verdict)

    def _hidden_verdict(self, planned: PlannedCheck, verdict: Verdict) -> Verdict:
        """A check that called the student's function on hidden inputs, as the student is
        told of it: passed, or failed, in the spec's words, and nothing else.

        Whether the function raised (and what), returned a known mistake's weights or
        something else, ran out of time or ended its kernel: all of it was chosen by code
        that knew the hidden inputs. Only the pass/fail bit, which the score carries
        anyway, and what the student already knew before those inputs were sent (whether
        the visible check of the same question failed) are shown. The instructor's log
        keeps what the grader saw.
        """
        check = self._spec.check(planned.grade_id)
        if verdict.passed:
            return Verdict(planned.grade_id, True, f"passed ({check.looks_at}).", "passed")
        self.log.info("hidden check %s failed: %s (%s%s); not shown to the student",
                      planned.grade_id, verdict.reason, verdict.mistake or "",
                      f", {verdict.detail}" if verdict.detail else "")
        message = (f"`{planned.answer}` failed on this check's hidden inputs. What such a "
                   f"failure usually means: {check.hint}. For a hidden check the grader "
                   "tells only whether it passed, not what your function returned, "
                   "whether it raised or which exception, nor how long it took.")
        # the checks of the same question decided before any hidden input was sent
        visible = [c.grade_id for c in self._spec.checks
                   if c.question == check.question and c.on_own_inputs]
        failed_before = [gid for gid in visible if any(
            v.grade_id == gid and not v.passed for v in self._verdicts.values())]
        if failed_before:
            message += (f" {', '.join(failed_before)} failed too: fix what it found first, "
                        "it may be the same mistake.")
        return Verdict(planned.grade_id, False, message, "hidden")

    def _in_fixed_words(self, planned: PlannedCheck, verdict: Verdict) -> Verdict:
        """A failed verdict of a check with hidden inputs, told without anything of the
        reply: the student's code had those inputs and could encode them in any value."""
        if verdict.passed or verdict.reason in ("not_run", "missing") or verdict.mistake:
            return verdict  # fixed texts already (a known mistake's hint is the spec's)
        answer = f"`{planned.answer}`"
        if verdict.reason == "raised":
            name = reported_exception(verdict.detail)
            return Verdict(verdict.grade_id, False, f"{answer} raised {name} when the check "
                           "called it.", "raised", None, name)
        hint = self._spec.check(planned.grade_id).hint
        said = _HIDDEN_WORDS.get(verdict.reason, "a wrong answer")
        return Verdict(verdict.grade_id, False, f"{answer} gave {said} on the hidden "
                       f"inputs: {hint}.", verdict.reason)

    def _record(self, index: int, verdict: Verdict) -> None:
        if not verdict.passed and self._spec.check(verdict.grade_id).question in \
                self._using_course_lib:
            verdict = Verdict(verdict.grade_id, False, verdict.message + (
                " (Your answers import course_lib, which this quiz does not allow; it does "
                "not exist where the quiz is graded.)"), verdict.reason, verdict.mistake,
                verdict.detail)
        self._verdicts[index] = verdict
        cell = self.nb.cells[index]
        cell.outputs = [verdict_output(verdict)]
        cell.execution_count = None
        record = {"passed": verdict.passed, "reason": verdict.reason,
                  "mistake": verdict.mistake, "detail": verdict.detail,
                  "message": verdict.message}
        cell.metadata["course"] = {"verdict": record}
        self.resources.setdefault("course_verdicts", {})[index] = record

    def _execute_notebook(self, nb: NotebookNode, resources: Any,
                          km: Any) -> tuple[NotebookNode, Any]:
        """nbconvert's ExecutePreprocessor.preprocess, with the loop of DecideOnHost."""
        from nbclient import NotebookClient

        NotebookClient.__init__(self, nb, km)
        self.reset_execution_trackers()
        if resources or not hasattr(self, "resources"):  # as nbconvert's preprocess keeps
            self.resources = resources                      # them across notebooks
        started = False
        try:
            with self.setup_kernel():
                assert self.kc is not None
                self._watch_output_channel()
                info = self.wait_for_reply(self.kc.kernel_info())
                if info:
                    self.nb.metadata["language_info"] = info["content"]["language_info"]
                started = True
                try:
                    self._run_notebook()
                finally:
                    if self._monitor is not None:
                        self._monitor.close(linger=0)
        except DeadKernelError:
            self._stopped = self._stopped or self._death_reason()
        except KernelMessageError as exc:
            if not started:  # before any of the student's code ran: ungraded, as below
                raise
            self._stop(str(exc))
        except CellTimeoutError as err:
            self._stopped = self._stopped or timeout_reason(err, self.timeout,
                                                            self.iopub_timeout)
        except (RuntimeError, OSError, TimeoutError) as exc:
            if not started:  # no sandbox, no kernel: nobody's answers were looked at, so
                raise       # the autograde fails (ungraded), it does not score zeros
            self._stopped = self._stopped or f"the kernel stopped ({type(exc).__name__})"
            self.log.error("The notebook stopped: %s", exc)
        # A stop while the function ran on hidden inputs (out of time, memory or output, or a
        # kernel it ended) was the student's code's choice, made knowing those inputs: the
        # instructor's log says what it was; the student sees those checks failed, no more.
        hidden_stop = bool(self._stopped) and self._hidden_from is not None and \
            self._stopped_before_hidden is None
        if hidden_stop:
            self.log.warning("The notebook stopped during its hidden checks: %s "
                             "(not shown to the student)", self._stopped)
        for index, planned in self._plan.items():
            if index not in self._verdicts:
                why = self._stopped or "the notebook stopped before this check"
                verdict = Verdict(planned.grade_id, False, f"This check could not run: {why}.",
                                  "not_run")
                if planned.deferred and _sends_inputs(planned):
                    verdict = self._hidden_verdict(planned, verdict)
                self._record(index, verdict)
        # whatever the student's notebook said under "course" is replaced, never merged
        # the time of the student's own cells: how long the hidden checks took is the
        # student's code's to choose, so it could tell the hidden inputs
        ran = (self._hidden_from or time.monotonic()) - self._started
        course: dict[str, Any] = {"graded_outside_kernel": True, "seconds": round(ran, 2)}
        if self._stopped and not hidden_stop:
            course["stopped"] = self._stopped
        if self._using_course_lib:
            course["course_lib_used_in"] = self._using_course_lib
        self.nb.metadata["course"] = course  # stored as a copy: complete it first
        self.resources["course_graded"] = True
        return self.nb, self.resources

    # -- output: bounded ------------------------------------------------------------------
    def process_message(self, msg: dict[str, Any], cell: NotebookNode, cell_index: int) -> Any:
        """Count what the kernel sends; ignore widgets; kill a kernel that floods."""
        msg_type = msg.get("msg_type", "")
        content = msg.get("content", {})
        self._received += _message_size(msg)  # every byte, whatever its kind
        if self._received > self.max_output_received:
            self._stop(f"it sent more than {self.max_output_received:,} characters of output")
            return None
        if getattr(self, "_probe_stdout", None) is not None:
            # A probe's reply is read from its stdout; nothing else it sends is kept or
            # acted on (a display with an earlier display_id would rewrite kept outputs).
            if msg_type == "stream" and content.get("name") == "stdout" and \
                    sum(map(len, self._probe_stdout)) < 4 * MAX_REPLY:
                self._probe_stdout.append(str(content.get("text", "")))
            if msg_type == "status":
                return super().process_message(msg, cell, cell_index)
            return None
        if msg_type.startswith("comm") or msg_type == "update_display_data":
            return None  # widgets and display updates play no part in grading
        return super().process_message(msg, cell, cell_index)

    def _stop(self, why: str) -> None:
        if self._stopped is None:
            self._stopped = why
            sandbox = sandbox_of(self.km)
            if sandbox is not None:
                sandbox.killed_because = why
                sandbox.kill_now()

    def _bound(self, cell: NotebookNode) -> None:
        """Cut a cell's outputs to the per-cell and per-notebook budgets, with a marker."""
        budget = min(self.max_cell_output, max(0, self.max_notebook_output - self._kept))
        kept: list[NotebookNode] = []
        used = 0
        cut = 0
        for out in cell.get("outputs", []):
            size = _size(out)
            if used + size <= budget:
                kept.append(out)
                used += size
                continue
            room = budget - used
            if out.get("output_type") == "stream" and room > 0:
                out["text"] = out["text"][:room]
                kept.append(out)
                used += room
            cut += size - max(room, 0) if out.get("output_type") == "stream" else size
        if cut:
            kept.append(nbformat.v4.new_output(
                "stream", name="stdout",
                text=f"\n[... output cut by the grader: {cut:,} more characters]\n"))
        cell.outputs = kept
        self._kept += used


def enable(c: Any, **limits: Any) -> None:
    """Make ``nbgrader autograde`` decide every check on the instructor's side.

    Sets up, in the ``c`` of an ``nbgrader_config.py``:

    * :class:`DecideOnHost` in place of nbgrader's ``Execute`` (student code runs in the
      bubblewrap sandbox of :mod:`course_grading.sandbox`, with ``limits`` as its limits);
    * :class:`course_grading.inert.MakeInert` at the end of autograding, so that nothing a
      student wrote runs as script in formgrader or feedback pages;
    * feedback explained in words (:class:`course_grading.feedback.ExplainChecks`), its
      math as MathML (:class:`course_grading.math_markup.RenderMath`), and written as pages
      that allow no script (:class:`~course_grading.feedback.SafeHTMLExporter`).

    Parameters
    ----------
    c : traitlets.config.Config
    **limits
        Traits of :class:`~course_grading.sandbox.SandboxProvisioner`, e.g.
        ``wall_time_limit=30``.
    """
    from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
    from nbgrader.converters.autograde import Autograde
    from nbgrader.preprocessors import Execute, GetGrades

    from . import sandbox
    from .feedback import ExplainChecks, SafeHTMLExporter
    from .inert import MakeInert
    from .math_markup import RenderMath

    sandbox.enable(c, **limits)
    default = Autograde.class_traits()["autograde_preprocessors"].default()
    current = c.Autograde.get("autograde_preprocessors") or default
    chain = [DecideOnHost if pp in (Execute, SandboxedExecute, "nbgrader.preprocessors.Execute")
             else pp for pp in current]
    if MakeInert not in chain:
        chain.append(MakeInert)
    c.Autograde.autograde_preprocessors = chain
    c.GenerateFeedback.preprocessors = [GetGrades, CSSHTMLHeaderPreprocessor, ExplainChecks,
                                        RenderMath]
    c.GenerateFeedback.exporter_class = SafeHTMLExporter
