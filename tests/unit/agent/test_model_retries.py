"""The retry policy: what is tried again, how often, and what each retry reports."""

from __future__ import annotations

from typing import Any

import httpx
import openai
import pytest
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage

from agentcli.agent.model.answer_stream import Accumulator
from agentcli.agent.model.retries import EMPTY_STREAM, Retries, answer, verdict

REQUEST = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")


def status(code: int, message: str) -> openai.APIStatusError:
    response = httpx.Response(code, request=REQUEST)
    body = {"error": {"message": message}}
    cls = {429: openai.RateLimitError, 400: openai.BadRequestError}.get(code)
    cls = cls or (openai.InternalServerError if code >= 500 else openai.APIStatusError)
    return cls(message, response=response, body=body)


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (status(429, "slow down"), "retry"),
        (status(503, "busy"), "retry"),
        (status(500, "2 validation errors: Input should be a valid string"), "final"),
        (status(400, "bad request"), "final"),
        (status(404, "no such model"), "final"),
        (openai.APITimeoutError(REQUEST), "timeout"),
        (openai.APIConnectionError(request=REQUEST), "retry"),
        (ValueError("anything else"), "final"),
    ],
)
def test_what_is_worth_another_try(exc: BaseException, kind: str) -> None:
    assert verdict(exc) == kind


class Script:
    """`ask`: raises the scripted errors in turn, then answers."""

    def __init__(self, *errors: BaseException) -> None:
        self.errors = list(errors)
        self.calls = 0

    def __call__(self, chat: Any) -> AIMessage:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return AIMessage("ok")


def run(script: Script, retries: Retries, chat: Any = None) -> tuple[Any, list[dict]]:
    written: list[dict] = []
    messages = [HumanMessage("hi")]
    reply = answer(script, chat, messages, written.append, None, retries)
    return reply, [w["retry"] for w in written if "retry" in w]


FAST = {"first_wait": 0.0, "max_wait": 0.0}


def test_transient_errors_are_retried_up_to_the_attempts_each_reported() -> None:
    script = Script(status(503, "busy"), status(429, "slow"))
    reply, notes = run(script, Retries(attempts=3, **FAST))
    assert reply.text == "ok" and script.calls == 3
    assert [(n["attempt"], n["attempts"]) for n in notes] == [(2, 3), (3, 3)]
    assert notes[0]["error"] == "HTTP 503: busy"


def test_the_last_failure_is_raised_after_the_attempts() -> None:
    script = Script(status(503, "a"), status(503, "b"), status(503, "c"))
    with pytest.raises(openai.InternalServerError, match="b"):
        run(script, Retries(attempts=2, **FAST))
    assert script.calls == 2


def test_errors_that_fail_again_are_never_retried() -> None:
    for exc in (status(400, "no"), status(500, "field required: messages.2.content")):
        script = Script(exc)
        with pytest.raises(openai.APIStatusError):
            run(script, Retries(attempts=5, **FAST))
        assert script.calls == 1


def test_a_timeout_is_retried_only_when_configured() -> None:
    script = Script(openai.APITimeoutError(REQUEST))
    with pytest.raises(openai.APITimeoutError):
        run(script, Retries(attempts=3, **FAST))
    assert script.calls == 1
    script = Script(openai.APITimeoutError(REQUEST))
    reply, notes = run(script, Retries(attempts=3, retry_timeouts=True, **FAST))
    assert reply.text == "ok" and len(notes) == 1


def test_an_empty_stream_is_asked_once_without_streaming() -> None:
    class Chat:
        def __init__(self) -> None:
            self.kwargs: list[dict] = []

        def invoke(self, messages: Any, **kwargs: Any) -> AIMessage:
            self.kwargs.append(kwargs)
            return AIMessage("plain")

    chat = Chat()
    reply, notes = run(Script(ValueError(EMPTY_STREAM)), Retries(attempts=1), chat)
    assert reply.text == "plain" and chat.kwargs == [{"stream": False}]
    assert notes == [
        {
            "error": "the server sent an empty stream",
            "attempt": 2,
            "attempts": 2,
            "change": "asking again without streaming",
        }
    ]


class Unstreamed:
    """A chat whose unstreamed answers fail with the scripted errors in turn, then answer."""

    def __init__(self, *errors: BaseException) -> None:
        self.errors = list(errors)
        self.calls = 0

    def invoke(self, messages: Any, **kwargs: Any) -> AIMessage:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return AIMessage("plain")


def test_the_request_after_an_empty_stream_is_asked_once_more_if_its_connection_fails() -> None:
    lost = openai.APIConnectionError(message="Server disconnected", request=REQUEST)
    chat = Unstreamed(lost)
    reply, notes = run(Script(ValueError(EMPTY_STREAM)), Retries(attempts=1), chat)
    assert reply.text == "plain" and chat.calls == 2
    assert [n["change"] for n in notes] == [
        "asking again without streaming",
        "asking again on a new connection",
    ]
    assert [n["attempt"] for n in notes] == [2, 3] and notes[-1]["attempts"] == 3


def test_only_one_lost_connection_after_an_empty_stream_is_asked_again() -> None:
    lost = openai.APIConnectionError(message="Server disconnected", request=REQUEST)
    chat = Unstreamed(lost, lost)
    with pytest.raises(openai.APIConnectionError):
        run(Script(ValueError(EMPTY_STREAM)), Retries(attempts=1), chat)
    assert chat.calls == 2


def test_a_timeout_after_an_empty_stream_is_not_a_lost_connection() -> None:
    chat = Unstreamed(openai.APITimeoutError(REQUEST))  # the server is slow: not asked again
    with pytest.raises(openai.APITimeoutError):
        run(Script(ValueError(EMPTY_STREAM)), Retries(attempts=1), chat)
    assert chat.calls == 1


def test_retry_after_is_honoured_and_backoff_is_bounded() -> None:
    response = httpx.Response(429, request=REQUEST, headers={"retry-after": "3"})
    exc = openai.RateLimitError("slow", response=response, body=None)
    assert Retries().wait(1, exc) == 3.0
    assert all(Retries().wait(n) <= 8.0 * 1.2 for n in range(1, 20))


def chunk(**call: Any) -> AIMessageChunk:
    part = {"index": 0, "id": None, "name": None, "args": None, **call}
    return AIMessageChunk(content="", tool_call_chunks=[part])


def built_name(*chunks: AIMessageChunk) -> str:
    whole = Accumulator()
    for piece in chunks:
        whole.add(piece)
    return whole.message().tool_calls[0]["name"]


def test_a_name_repeated_in_every_delta_is_one_name() -> None:
    repeated = [chunk(id="c1", name="calculator", args='{"a"')]
    repeated += [chunk(id="c1", name="calculator", args=p) for p in (": 1", "}")]
    assert built_name(*repeated) == "calculator"


def test_a_name_streamed_in_pieces_still_joins() -> None:
    pieces = [chunk(id="c1", name="calc", args=""), chunk(name="ulator", args="{}")]
    assert built_name(*pieces) == "calculator"
    pieces = [chunk(id="c1", name="read", args=""), chunk(name="_"), chunk(name="read", args="{}")]
    assert built_name(*pieces) == "read_read"


def test_a_long_server_message_is_named_on_the_line_and_kept_whole_in_the_log() -> None:
    from agentcli.agent.log_files import log_dir

    dump = "busy: " + " ".join(
        f"worker {i} of the pool is still loading the model" for i in range(9)
    )
    reply, notes = run(Script(status(503, dump)), Retries(attempts=2, **FAST))
    assert reply.text == "ok"
    (note,) = notes
    assert note["error"].startswith("HTTP 503 from the model server (") and len(note["error"]) < 100
    assert note["detail"] == f"HTTP 503: {dump}"
    logged = (log_dir() / "model.log").read_text()
    assert dump in logged and note["error"] in logged
    # a short message is the line itself, with nothing more to keep
    _, notes = run(Script(status(503, "busy")), Retries(attempts=2, **FAST))
    assert notes[0]["error"] == "HTTP 503: busy" and "detail" not in notes[0]


def test_the_log_shows_a_servers_controls_as_marks() -> None:
    from agentcli.agent.log_files import log_dir

    dump = "refused \x1b[2J\x1b]0;owned\x07 " + "x" * 200
    run(Script(status(503, dump)), Retries(attempts=2, **FAST))
    logged = (log_dir() / "model.log").read_text()
    assert "x" * 200 in logged and "\x1b" not in logged and "\x07" not in logged
