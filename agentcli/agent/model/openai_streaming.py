"""ChatOpenAI whose streamed tool-call arguments cost time in their size, not its square.

Two costs below agentcli make a big streamed tool call (a large `write_file`) slow:

- langchain-openai turns every streamed fragment into an AIMessageChunk, whose init "repairs"
  the fragment's text as partial JSON (`parse_partial_json`). A fragment from the middle of
  the arguments is no JSON at all: the repair tries every prefix of it, a cost per byte that
  grows with the square of the fragment's size.
- when the stream ends, `BaseChatModel.stream` merges every chunk it yielded for its
  callbacks (`merge_chat_generation_chunks`); merging appends each argument fragment to the
  call's arguments so far, a copy of all of them: time in the square of the size over the
  fragment size.

`StreamingChatOpenAI` builds a fragment that only continues one call's arguments as the same
chunk without the repair (its own partial `tool_calls` are left empty: a merge or agentcli's
Accumulator reads `tool_call_chunks` and parses the whole arguments once), and joins
consecutive such fragments into one chunk of up to COALESCE_CHARS characters, or of what
arrived within COALESCE_SECONDS, before yielding it. Text, tool-call heads (id, name), usage,
finish reasons and anything else pass through as they come; the merged message is the same.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any

from langchain_core.messages import AIMessageChunk
from langchain_core.messages.tool import tool_call_chunk
from langchain_core.outputs import ChatGenerationChunk
from langchain_openai import ChatOpenAI

# Largest joined fragment, in characters. Building a joined chunk costs its size and the merge
# at the end costs (size)² / (2 x this): large enough that the merge stays small next to the
# stream, small enough that one chunk stays cheap to build (bench/README.md, "Below agentcli").
COALESCE_CHARS = 64_000
# A joined fragment older than this is yielded with the next fragment that arrives, so a slow
# stream still reaches the caller (and its Ctrl-C check) about as often as before.
COALESCE_SECONDS = 0.05

_METADATA = {"model_provider": "openai"}  # what langchain-openai puts on every chunk


def _continuation(delta: Mapping[str, Any]) -> tuple[int, str] | None:
    """(index, text) when a streamed delta only continues one call's arguments, else None."""
    # every other field (content, role, refusal, audio, ...) empty: the chunk is the call's
    if any(value not in (None, "") for key, value in delta.items() if key != "tool_calls"):
        return None
    calls = delta.get("tool_calls")
    if not isinstance(calls, list) or len(calls) != 1 or not isinstance(calls[0], Mapping):
        return None
    call = calls[0]
    function = call.get("function")
    if set(call) - {"index", "id", "function", "type"} or not isinstance(function, Mapping):
        return None
    if set(function) - {"name", "arguments"} or function.get("name") is not None:
        return None
    if call.get("id") is not None or call.get("type") not in (None, "function"):
        return None
    index, args = call.get("index"), function.get("arguments")
    if type(index) is not int or type(args) is not str:
        return None
    return index, args


def _fragment_chunk(index: int, args: str) -> ChatGenerationChunk:
    """The chunk langchain-openai makes for one argument fragment, without repairing it."""
    message = AIMessageChunk(content="", response_metadata=dict(_METADATA))
    # set after the init, which would repair `args` as partial JSON (messages do not
    # validate assignments)
    message.tool_call_chunks = [tool_call_chunk(name=None, args=args, id=None, index=index)]
    return ChatGenerationChunk(message=message)


def _fragment(chunk: ChatGenerationChunk) -> tuple[int, str] | None:
    """(index, text) when `chunk` is only an argument fragment of one call, else None."""
    message = chunk.message
    if chunk.generation_info or not isinstance(message, AIMessageChunk):
        return None
    if message.content != "" or message.additional_kwargs or message.usage_metadata:
        return None
    if message.id is not None or message.name is not None or message.chunk_position:
        return None
    if message.response_metadata != _METADATA or len(message.tool_call_chunks) != 1:
        return None
    part = message.tool_call_chunks[0]
    if part.get("id") is not None or part.get("name") is not None:
        return None
    index, args = part.get("index"), part.get("args")
    if type(index) is not int or type(args) is not str:
        return None
    return index, args


class _Joiner:
    """Consecutive argument fragments of one call, joined; `push` yields what is ready."""

    def __init__(self) -> None:
        self.index: int | None = None
        self.parts: list[str] = []
        self.size = 0
        self.started = 0.0

    def push(self, chunk: ChatGenerationChunk) -> Iterator[ChatGenerationChunk]:
        fragment = _fragment(chunk)
        if fragment is None:
            yield from self.flush()
            yield chunk
            return
        index, args = fragment
        if index != self.index:
            yield from self.flush()
            self.index, self.started = index, time.monotonic()
        self.parts.append(args)
        self.size += len(args)
        if self.size >= COALESCE_CHARS or time.monotonic() - self.started >= COALESCE_SECONDS:
            yield from self.flush()

    def flush(self) -> Iterator[ChatGenerationChunk]:
        if self.index is not None and self.parts:
            if len(self.parts) == 1:
                yield _fragment_chunk(self.index, self.parts[0])
            else:
                yield _fragment_chunk(self.index, "".join(self.parts))
        self.index, self.parts, self.size = None, [], 0


class StreamingChatOpenAI(ChatOpenAI):
    """ChatOpenAI with big streamed tool calls in linear time (see the module's docstring)."""

    def _convert_chunk_to_generation_chunk(
        self,
        chunk: dict[str, Any],
        default_chunk_class: type,
        base_generation_info: dict[str, Any] | None,
    ) -> ChatGenerationChunk | None:
        choices = chunk.get("choices")
        if (
            not base_generation_info
            and default_chunk_class is AIMessageChunk
            and self.output_version != "v1"
            and chunk.get("type") != "content.delta"
            and not chunk.get("usage")
            and isinstance(choices, list)
            and len(choices) == 1
            and isinstance(choices[0], Mapping)
            and not choices[0].get("finish_reason")
            and not choices[0].get("logprobs")
            and isinstance(delta := choices[0].get("delta"), Mapping)
            and (fragment := _continuation(delta)) is not None
        ):
            return _fragment_chunk(*fragment)
        return super()._convert_chunk_to_generation_chunk(
            chunk, default_chunk_class, base_generation_info
        )

    def _stream(self, *args: Any, **kwargs: Any) -> Iterator[ChatGenerationChunk]:
        joiner = _Joiner()
        for chunk in super()._stream(*args, **kwargs):
            yield from joiner.push(chunk)
        yield from joiner.flush()

    async def _astream(self, *args: Any, **kwargs: Any) -> AsyncIterator[ChatGenerationChunk]:
        joiner = _Joiner()
        async for chunk in super()._astream(*args, **kwargs):
            for ready in joiner.push(chunk):
                yield ready
        for ready in joiner.flush():
            yield ready
