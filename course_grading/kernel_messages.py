"""Read a sandboxed kernel's messages as hostile input: of the Jupyter protocol's shape, or refused.

Student code in the kernel holds the connection's signing key (the kernel needs it), so it
can send any signed message it likes on any channel: a header without ``msg_id``, a parent
header that is a list, content that is not an object, an ``execute_reply`` whose status is
a number, the same signed message twice. jupyter_client and nbclient trust the shape of
what they receive and fail with a ``KeyError``, ``TypeError``, ``AttributeError`` or
``ValueError`` deep in their loops; nbgrader then marks the submission *ungraded* (to be
run again) instead of scoring it. Sent by a student's function after a hidden check has
called it, that choice between "ungraded" and "failed" is a bit of the hidden input the
student's code chooses (issue 42, second red team).

:class:`CheckedSession` is the :class:`jupyter_client.session.Session` of every sandboxed
kernel's client (:class:`course_grading.sandbox.SandboxKernelManager`): a message that
cannot be read, or whose parts are not of the protocol's types for the fields that
nbclient and nbformat read, raises :class:`KernelMessageError`, one exception type the
grader turns into a stopped kernel (:mod:`course_grading.verdicts`). The manager hands it to
the client through ``KernelManager.client(session=...)``, jupyter_client's public way to give
a client its session (:func:`checked_copy`).

Examples
--------
>>> message_problem({"header": {"msg_id": "a", "msg_type": "stream"}, "parent_header": {},
...                  "metadata": {}, "content": {"name": "stdout", "text": "hi"}})
>>> message_problem({"header": {"msg_id": "a", "msg_type": "stream"}, "parent_header": [],
...                  "metadata": {}, "content": {}})
'its parent_header is a list, not an object'
>>> message_problem({"header": {"msg_id": "a", "msg_type": "execute_reply"},
...                  "parent_header": {}, "metadata": {}, "content": {"status": 1}})
"its execute_reply's status is a int, not a string"
"""

from __future__ import annotations

from typing import Any

from jupyter_client.session import Session

__all__ = ["CheckedSession", "KernelMessageError", "checked_copy", "message_problem"]


class KernelMessageError(Exception):
    """A sandboxed kernel sent a message the grader cannot read (its words say why)."""


_TEXT = (str,)
_COUNT = (int, type(None))

#: For each message type nbclient or nbformat reads: field -> the types it must have.
_FIELDS: dict[str, dict[str, tuple[type, ...]]] = {
    "status": {"execution_state": _TEXT},
    "stream": {"name": _TEXT, "text": _TEXT},
    "display_data": {"data": (dict,), "metadata": (dict,)},
    "update_display_data": {"data": (dict,), "metadata": (dict,)},
    "execute_result": {"data": (dict,), "metadata": (dict,), "execution_count": _COUNT},
    "error": {"ename": _TEXT, "evalue": _TEXT, "traceback": (list,)},
    "clear_output": {"wait": (bool,)},
    "execute_input": {"code": _TEXT, "execution_count": _COUNT},
    "execute_reply": {"status": _TEXT, "execution_count": _COUNT},
    "kernel_info_reply": {"language_info": (dict,)},
}
#: Fields that must be there (others may be left out; nbclient reads them with .get).
_REQUIRED = {"status": ("execution_state",), "stream": ("name", "text"),
             "display_data": ("data",), "update_display_data": ("data",),
             "execute_result": ("data",), "error": ("ename", "evalue", "traceback"),
             "execute_reply": ("status",)}


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", type(None): "null"}.get(
        type(value), f"a {type(value).__name__}")


def _bundle_problem(msg_type: str, data: dict[str, Any]) -> str | None:
    """A MIME bundle nbformat can store: text (or a list of text) per type, or JSON."""
    for mime, value in data.items():
        if not isinstance(mime, str):
            return f"its {msg_type} has a MIME type that is not a string"
        if mime.endswith("json") or mime.endswith("+json"):
            continue  # any JSON value
        if isinstance(value, str):
            continue
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            continue
        return f"its {msg_type}'s {mime!r} data is {_kind(value)}, not text"
    return None


def message_problem(msg: dict[str, Any]) -> str | None:
    """Why ``msg`` (a deserialized message) is not of the protocol's shape, or ``None``."""
    for part in ("header", "parent_header", "metadata", "content"):
        if not isinstance(msg.get(part), dict):
            return f"its {part} is {_kind(msg.get(part))}, not an object"
    header = msg["header"]
    for key in ("msg_id", "msg_type"):
        if not isinstance(header.get(key), str):
            return f"its header's {key} is {_kind(header.get(key))}, not a string"
    parent_id = msg["parent_header"].get("msg_id")
    if parent_id is not None and not isinstance(parent_id, str):
        return f"its parent_header's msg_id is {_kind(parent_id)}, not a string"
    msg_type, content = header["msg_type"], msg["content"]
    for field in _REQUIRED.get(msg_type, ()):
        if field not in content:
            return f"its {msg_type} has no {field}"
    for field, types in _FIELDS.get(msg_type, {}).items():
        value = content.get(field)
        if field not in content or (isinstance(value, types) and
                                    (bool in types or not isinstance(value, bool))):
            continue
        wanted = ("a string" if types == _TEXT else "a number or null" if types == _COUNT
                  else _kind(types[0]()))
        return f"its {msg_type}'s {field} is {_kind(value)}, not {wanted}"
    if msg_type == "error" and not all(isinstance(t, str) for t in content["traceback"]):
        return "its error's traceback is not a list of strings"
    if msg_type == "kernel_info_reply" and \
            not isinstance(content.get("language_info", {}).get("name", ""), str):
        return "its kernel_info_reply's language name is not a string"
    if "data" in _FIELDS.get(msg_type, {}):
        return _bundle_problem(msg_type, content["data"])
    return None


class CheckedSession(Session):
    """A Session whose :meth:`deserialize` refuses what the grader cannot read.

    Every failure to read a message (an unsigned or replayed one, too few parts, JSON that
    does not parse) and every message of the wrong shape (:func:`message_problem`) raises
    :class:`KernelMessageError`, never the library's own ``KeyError`` or ``TypeError``.
    """

    def deserialize(self, msg_list: Any, content: bool = True, copy: bool = True
                    ) -> dict[str, Any]:
        try:
            msg = super().deserialize(msg_list, content=content, copy=copy)
        except Exception as exc:  # whatever the kernel sent that could not be read
            raise KernelMessageError(
                f"it sent a message the grader cannot read ({type(exc).__name__})") from exc
        problem = message_problem(msg) if content else None
        if problem:
            raise KernelMessageError(f"it sent a message the grader cannot read: {problem}")
        return msg


def checked_copy(session: Session) -> CheckedSession:
    """A :class:`CheckedSession` with ``session``'s key, scheme and settings (what
    ``Session.clone`` copies), for a client of the same kernel."""
    checked = CheckedSession()
    for name in session.traits():
        setattr(checked, name, getattr(session, name))
    checked.digest_history = set(session.digest_history)
    return checked
