"""Ask a student's kernel for plain data, and read its reply without trusting it.

The grader never runs a check inside the student's kernel. For each check it sends a
*probe*: the source of :func:`course_quiz.checkpoint_checks.answer_as_data` (the same code
students' own checks run), a call of it on the check's inputs, and one ``print`` of the
result as JSON on a line that starts with a random marker. Whatever the student's code has
done to that kernel, what comes back is text: :func:`read_reply` takes exactly one marked
line, of bounded size, parses it as JSON and hands it on; the instructor's side then
judges it (:func:`course_quiz.checkpoint_checks.judge`). A kernel that lies can only send
data, which earns points only if it is the right answer for inputs it has not seen before
the probe.

Examples
--------
>>> source = probe_source("letter", "answer_read_table", (), "M" * 32)
>>> "def _course_probe_" + "M" * 32 in source and "print(" in source
True
>>> read_reply("noise\\n" + "M" * 32 + '{"value": "C"}\\n', "M" * 32)
{'value': 'C'}
>>> read_reply("no marker here", "M" * 32)
'no reply from the kernel'
>>> plain_names({"raised": "Q_0_31415_1_27182"}), plain_names({"raised": "ValueError"})
({'raised': 'an exception'}, {'raised': 'ValueError'})
"""

from __future__ import annotations

import ast
import builtins
import inspect
import json
import re
import secrets
import textwrap
from typing import Any

from course_quiz.checkpoint_checks import MAX_VALUES, answer_as_data

__all__ = ["MAX_REPLY", "REPORTED_EXCEPTIONS", "REPORTED_TYPES", "new_marker", "plain_names",
           "probe_source", "read_reply", "reported_exception"]

#: The longest reply line read, in characters (4096 floats as JSON fit in about 100 kB).
MAX_REPLY = 200_000
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,100}$")

#: The exception names a verdict or feedback may show: Python's built-in exceptions and
#: numpy's. Any other name is the student's own and could carry anything (a class named
#: after the hidden inputs): it is shown as "an exception".
REPORTED_EXCEPTIONS = frozenset(
    [name for name, value in vars(builtins).items()
     if isinstance(value, type) and issubclass(value, BaseException)]
    + ["LinAlgError", "AxisError", "ComplexWarning", "TooHardError"])
#: The type names a verdict may show for an answer that is not numbers or not text.
REPORTED_TYPES = frozenset(
    ["NoneType", "bool", "int", "float", "complex", "str", "bytes", "bytearray", "list",
     "tuple", "dict", "set", "frozenset", "range", "function", "builtin_function_or_method",
     "method", "type", "module", "generator", "ndarray", "matrix", "object"])
_REPLY_KEYS = frozenset(["value", "raised", "not_numbers", "not_text", "too_big", "missing"])


def reported_exception(name: object) -> str:
    """``name`` if it is one of :data:`REPORTED_EXCEPTIONS`, else ``"an exception"``.

    >>> reported_exception("ZeroDivisionError"), reported_exception("Leak_0_5")
    ('ZeroDivisionError', 'an exception')
    """
    return name if isinstance(name, str) and name in REPORTED_EXCEPTIONS else "an exception"


def plain_names(reply: Any) -> Any:
    """A parsed reply whose names come from fixed lists only.

    An exception's name not in :data:`REPORTED_EXCEPTIONS` becomes ``"an exception"``, a
    type's name not in :data:`REPORTED_TYPES` becomes ``"object"``; a reply that is not an
    object of one known key becomes a sentence (a ``str``, as :func:`read_reply` gives for a
    reply that cannot be used), which names nothing the kernel sent.
    """
    if isinstance(reply, str):
        return reply
    if type(reply) is not dict or len(reply) != 1 or next(iter(reply)) not in _REPLY_KEYS:
        return "a reply of a form the grader does not know"
    (key, value), = reply.items()
    if key == "raised":
        return {key: reported_exception(value)}
    if key in ("not_numbers", "not_text"):
        return {key: value if isinstance(value, str) and value in REPORTED_TYPES else "object"}
    return reply


def _without_annotations(source: str) -> str:
    """The function's source with its type hints removed (the kernel cannot resolve them)."""
    tree = ast.parse(textwrap.dedent(source))
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            node.returns = None
            for arg in (*node.args.args, *node.args.kwonlyargs, *node.args.posonlyargs):
                arg.annotation = None
    return ast.unparse(tree)


_FUNCTION = _without_annotations(inspect.getsource(answer_as_data))


def new_marker() -> str:
    """A fresh random marker for one probe (``m`` and 32 hex digits)."""
    return "m" + secrets.token_hex(16)


def _literal(value: Any) -> str:
    """Python source for a value made of lists, floats, ints and strings only."""
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int | float):
        return repr(float(value))
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    raise TypeError(f"a probe input must be numbers, strings or lists (got {type(value).__name__})")


def probe_source(kind: str, answer: str, args: tuple[Any, ...], marker: str) -> str:
    """The code sent to the kernel to read ``answer`` as plain data.

    Parameters
    ----------
    kind : str
        The check's kind (``weights``, ``output``, ``letter``).
    answer : str
        The student's name to read (an identifier from the instructor's test cell).
    args : tuple
        The inputs a function answer is called with (lists of numbers).
    marker : str
        The random marker the reply line starts with (:func:`new_marker`).

    Raises
    ------
    ValueError
        If ``answer`` or ``marker`` is not a plain identifier.
    """
    if not _IDENT.match(answer) or not _IDENT.match(marker):
        raise ValueError(f"answer and marker must be identifiers (got {answer!r}, {marker!r})")
    fn = f"_course_probe_{marker}"
    function = _FUNCTION.replace("def answer_as_data(", f"def {fn}(", 1)
    arguments = ", ".join(_literal(a) for a in args)
    return "\n".join([
        function,
        "try:",
        f"    _course_value_{marker} = {answer}",
        "except NameError:",
        f"    _course_reply_{marker} = {{'missing': True}}",
        "else:",
        f"    _course_reply_{marker} = {fn}({kind!r}, _course_value_{marker}, "
        f"({arguments}{',' if args else ''}), {MAX_VALUES})",
        f"    del _course_value_{marker}",
        f"import json as _course_json_{marker}",
        f"print({marker!r} + _course_json_{marker}.dumps(_course_reply_{marker}))",
        f"del {fn}, _course_reply_{marker}, _course_json_{marker}",
    ])


def read_reply(text: str, marker: str, limit: int = MAX_REPLY) -> Any:
    """The JSON on the one line of ``text`` that starts with ``marker``.

    Parameters
    ----------
    text : str
        Everything the probe printed on stdout.
    marker : str
    limit : int
        The longest reply line accepted.

    Returns
    -------
    object or str
        The parsed JSON (to be checked by
        :func:`course_quiz.checkpoint_checks.plain_reply`), or a ``str`` saying why there
        is no usable reply. A reply is data; a ``str`` result is always a problem, since
        every real reply is a JSON object.
    """
    lines = [line for line in text.split("\n") if line.startswith(marker)]
    if not lines:
        return "no reply from the kernel"
    if len(lines) > 1:
        return f"{len(lines)} replies instead of one (something else printed the marker)"
    body = lines[0][len(marker):]
    if len(body) > limit:
        return f"a reply of {len(body):,} characters (at most {limit:,} are read)"
    try:
        reply = json.loads(body)
    except Exception:  # any failure to parse (deep nesting included) is refused
        return "a reply that is not valid JSON"
    if isinstance(reply, str):
        return "a reply that is a string, not an object"
    return reply
