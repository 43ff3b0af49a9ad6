"""course_grading.kernel_messages: a sandboxed kernel's messages, read as hostile input."""

from __future__ import annotations

import pytest
from jupyter_client.session import Session

from course_grading.kernel_messages import CheckedSession, KernelMessageError, message_problem
from course_grading.sandbox import SandboxKernelManager

KEY = b"a-key-the-kernel-knows-too"


def _frames(session: Session, header: object = None, parent: object = None,
            content: bytes = b'{"name": "stdout", "text": "x"}') -> list[bytes]:
    """A signed message as the kernel would put it on the wire (after the identities)."""
    parts = [session.pack(session.msg_header("stream") if header is None else header),
             session.pack({} if parent is None else parent), session.pack({}), content]
    return [session.sign(parts), *parts]


def _message(msg_type: str, content: dict) -> dict:
    return {"header": {"msg_id": "m", "msg_type": msg_type}, "parent_header": {"msg_id": "p"},
            "metadata": {}, "content": content}


def test_the_sandboxed_kernels_client_checks_every_message() -> None:
    km = SandboxKernelManager()
    client = km.client()
    assert isinstance(client.session, CheckedSession)
    assert client.session.key == km.session.key and client.session.key  # it can verify


@pytest.mark.parametrize(("frames", "plain_error"), [
    ({"header": {}}, KeyError),                      # no msg_id
    ({"content": b"[1, 2, 3]"}, None),               # content a list: nbclient fails later
    ({"parent": [1, 2]}, None),                      # a list as parent header
])
def test_a_message_of_the_wrong_shape_is_refused_in_one_kind_of_error(frames, plain_error):
    plain, checked = Session(key=KEY), CheckedSession(key=KEY)
    if plain_error is not None:  # what jupyter_client alone raises, deep in nbclient's loop
        with pytest.raises(plain_error):
            plain.deserialize(_frames(plain, **frames))
    with pytest.raises(KernelMessageError, match="it sent a message the grader cannot read"):
        checked.deserialize(_frames(checked, **frames))


def test_unsigned_replayed_and_short_messages_are_refused() -> None:
    session = CheckedSession(key=KEY)
    frames = _frames(session)
    session.deserialize(frames)
    with pytest.raises(KernelMessageError, match=r"\(ValueError\)"):
        session.deserialize(frames)  # the same signature twice
    with pytest.raises(KernelMessageError, match=r"\(ValueError\)"):
        session.deserialize([b"", *_frames(session)[1:]])
    with pytest.raises(KernelMessageError, match="cannot read"):
        session.deserialize(_frames(session)[:3])  # too few parts


@pytest.mark.parametrize("msg", [
    _message("stream", {"name": "stdout", "text": "hello\n"}),
    _message("execute_reply", {"status": "ok", "execution_count": 3, "user_expressions": {}}),
    _message("execute_reply", {"status": "aborted"}),
    _message("status", {"execution_state": "idle"}),
    _message("display_data", {"data": {"text/plain": ["a", "b"], "image/png": "iVBOR",
                                        "application/json": {"a": [1]}}, "metadata": {}}),
    _message("execute_result", {"data": {"text/plain": "3"}, "metadata": {},
                                "execution_count": None}),
    _message("error", {"ename": "ValueError", "evalue": "x", "traceback": ["line"]}),
    _message("comm_msg", {"comm_id": "c", "data": [1]}),  # nbclient ignores it: not checked
])
def test_messages_of_the_protocols_shape_pass(msg):
    assert message_problem(msg) is None


@pytest.mark.parametrize(("content", "msg_type", "problem"), [
    ({"execution_state": ["idle"]}, "status",
     "its status's execution_state is a list, not a string"),
    ({"name": "stdout"}, "stream", "its stream has no text"),
    ({"status": "ok", "execution_count": "seven"}, "execute_reply",
     "its execute_reply's execution_count is a string, not a number or null"),
    ({"data": {"text/plain": 5}, "metadata": {}}, "display_data",
     "its display_data's 'text/plain' data is a int, not text"),
    ({"data": {}, "metadata": []}, "display_data",
     "its display_data's metadata is a list, not an object"),
    ({"ename": "E", "evalue": "", "traceback": [1]}, "error",
     "its error's traceback is not a list of strings"),
    ({"wait": "maybe"}, "clear_output", "its clear_output's wait is a string, not a bool"),
])
def test_each_wrong_field_is_named(content, msg_type, problem):
    assert message_problem(_message(msg_type, content)) == problem
