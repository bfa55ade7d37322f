"""The model's answer to one request, its text sent out token by token as it streams."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage

from agentcli.agent.model.answer_stream import Accumulator
from agentcli.agent.model.call_progress import Progress
from agentcli.agent.state import RunContext
from agentcli.agent.text_calls.recovery import with_text_calls
from agentcli.agent.text_calls.stream import HeldBack
from agentcli.errors import Interrupted
from agentcli.threads.stopped_answer import INTERRUPTED


def ask(
    chat: Any,
    messages: list[BaseMessage],
    write: Callable[[Any], None],
    ctx: RunContext,
    offered: Collection[str] = (),
) -> BaseMessage:
    """The model's answer; its text goes out token by token as custom stream parts
    (`{"token": ...}`). Not LangGraph's "messages" mode: that one scans the whole history
    at every node of every step, which made a long thread's turns slower.

    The chunks are gathered by an Accumulator, not added up: adding chunks costs the size of
    the answer so far at every chunk (time in the square of the answer's size). While tool
    calls stream (or text held back as a call written as text), how far they have come
    goes out as `{"call_progress": ...}` parts (model/call_progress.py): a big call is
    seconds of arguments with no text to show.

    With `offered` tool names, calls the model wrote as text are recovered (text_calls/):
    text from where one may start is held back, and once the answer is complete the rest
    of the saved text goes out, so the tokens add up to the answer as saved."""
    whole = Accumulator()
    answer: BaseMessage | None = None  # what a model that does not stream yields: all of it
    shown = False  # some text went out
    held = HeldBack(offered) if offered else None
    progress = Progress(lambda report: write({"call_progress": report}))
    try:
        for chunk in chat.stream(messages):
            if ctx.cancel is not None and ctx.cancel.is_set():  # Ctrl-C while it answered
                return _stopped(whole, shown)
            if text := chunk.text:
                out = held.feed(text) if held is not None else text
                if out:
                    write({"token": out})
                    shown = True
                elif held is not None and held.held:  # a call written as text, held back
                    progress.add([{"index": "text", "args": text}])
            if isinstance(chunk, AIMessageChunk):
                whole.add(chunk)
                if chunk.tool_call_chunks:
                    progress.add(chunk.tool_call_chunks)
            else:
                answer = chunk
    except Exception:
        if ctx.cancel is not None and ctx.cancel.is_set() and shown:
            return _stopped(whole, shown)  # the stream broke after the person stopped it
        raise
    if ctx.cancel is not None and ctx.cancel.is_set():
        return _stopped(whole, shown)
    if answer is None:
        answer = whole.message() if whole.chunks else AIMessage("")
    if held is not None:
        answer = with_text_calls(answer, offered)
        if rest := held.rest(answer.text):
            write({"token": rest})
    return answer


def _stopped(whole: Accumulator, shown: bool) -> AIMessage:
    """The answer the person stopped with Ctrl-C: its text so far, marked as interrupted.
    Tool calls in it are dropped (half-streamed, never reviewed): no call waits for a
    result. With no text out yet there is nothing to keep: the run stops."""
    if not shown:
        raise Interrupted("interrupted: the answer was dropped")
    partial = whole.message()
    metadata = {**partial.response_metadata, INTERRUPTED: True}
    return AIMessage(
        content=partial.text,
        id=partial.id,
        response_metadata=metadata,
        additional_kwargs={INTERRUPTED: True},
    )
