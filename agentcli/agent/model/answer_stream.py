"""A streamed model answer gathered in linear time, and built into one AIMessage at the end.

Adding AIMessageChunks (`whole = whole + chunk`) costs the size of everything received so far
at every chunk: langchain-core copies the text and the tool-call arguments gathered so far and
parses every call's arguments again to build each partial message: time in the square of the
answer's size (bench/bigoutput.py). `Accumulator` keeps the pieces in lists instead and joins
and parses them once, in `message()`; the message it builds equals the one the chunks would
add up to (same content, tool calls, invalid tool calls, usage, metadata and id), with two
deliberate differences: see `parse_args`, and a name repeated whole in every delta
(`_Call.add`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.messages.ai import UsageMetadata, add_usage
from langchain_core.messages.base import merge_content
from langchain_core.messages.tool import (
    InvalidToolCall,
    ToolCall,
    invalid_tool_call,
    tool_call,
)
from langchain_core.utils._merge import merge_dicts
from langchain_core.utils.json import parse_partial_json

# Arguments that are not valid JSON are repaired (langchain's parse_partial_json: a cut-off
# call becomes a call with what arrived) only up to this size: the repair can take time in
# the square of the size. Larger ones are invalid calls, sent back to the model.
REPAIR_LIMIT = 10_000

_LC_ID_PREFIX = "lc_run-"  # langchain_core.outputs.LC_ID_PREFIX: an id langchain made up
_LC_AUTO_PREFIX = "lc_"


def parse_args(raw: str | None) -> Any:
    """A call's arguments as langchain parses a streamed call's, JSON read once.

    Raises ValueError (or RecursionError) when they are not JSON. Unlike langchain, text over
    REPAIR_LIMIT characters is not repaired: a cut-off 1 MB `write_file` is refused rather
    than run with part of its content, and cannot take hours to repair.
    """
    if not raw:
        return {}
    if len(raw) <= REPAIR_LIMIT:
        return parse_partial_json(raw)
    return json.loads(raw, strict=False)


@dataclass
class _Call:
    """One tool call's fragments, merged as langchain's merge_lists/merge_dicts merge them."""

    index: Any
    id: str | None = None
    name: list[str] | None = None  # None until a fragment brings a name, as in langchain
    args: list[str] | None = None
    _name_so_far: str = ""

    def add(self, fragment: dict[str, Any]) -> None:
        if (id_ := fragment.get("id")) is not None:
            # merge_dicts: a string id is appended unless it is the same id again
            self.id = id_ if self.id is None else self.id if self.id == id_ else self.id + id_
        # the fragments of a name and of the arguments, joined in build(). Some servers
        # (older llama.cpp, some vLLM parsers) repeat the whole name in every delta: a
        # fragment that is the whole name so far again is that repeat, not more of the name
        # (a name streamed in pieces still joins: "calc" + "ulator")
        if (name := fragment.get("name")) is not None:
            if self.name is None:
                self.name, self._name_so_far = [], ""
            if not name or name != self._name_so_far:
                self.name.append(name)
                self._name_so_far += name
        if (args := fragment.get("args")) is not None:
            self.args = self.args or []
            self.args.append(args)

    def build(self) -> ToolCall | InvalidToolCall:
        name = None if self.name is None else "".join(self.name)
        raw = None if self.args is None else "".join(self.args)
        try:
            args = parse_args(raw)
        except Exception:  # as langchain: whatever fails to parse is an invalid call
            args = None
        if isinstance(args, dict):
            return tool_call(name=name or "", args=args, id=self.id)
        return invalid_tool_call(name=name, args=raw, id=self.id, error=None)


@dataclass
class Accumulator:
    """Add each streamed AIMessageChunk with `add`; `message()` builds the answer once."""

    content: list[Any] = field(default_factory=list)
    calls: list[_Call] = field(default_factory=list)
    additional_kwargs: dict[str, Any] = field(default_factory=dict)
    response_metadata: dict[str, Any] = field(default_factory=dict)
    chunks: int = 0
    _by_index: dict[Any, list[_Call]] = field(default_factory=dict)
    _usage: UsageMetadata | None = None
    _has_usage: bool = False
    _id: str | None = None
    _id_rank: int = -1  # 2: the provider's id (final), 1: langchain's run id, 0: other lc_ ids
    _name: str | None = None

    def add(self, chunk: AIMessageChunk) -> None:
        first = self.chunks == 0
        self.chunks += 1
        self.content.append(chunk.content)
        # a few small keys per chunk: merged as they come, as langchain merges them
        if chunk.additional_kwargs:
            self.additional_kwargs = merge_dicts(self.additional_kwargs, chunk.additional_kwargs)
        if chunk.response_metadata:
            self.response_metadata = merge_dicts(self.response_metadata, chunk.response_metadata)
        if first:
            self._usage, self._has_usage = chunk.usage_metadata, bool(chunk.usage_metadata)
            self._name = chunk.name  # kept only when one chunk is the whole answer
        else:
            self._has_usage = self._has_usage or chunk.usage_metadata is not None
            self._usage = add_usage(self._usage, chunk.usage_metadata)
        self._note_id(chunk.id)
        for fragment in chunk.tool_call_chunks:
            self._add_fragment(dict(fragment), merge=not first)

    def _note_id(self, id_: str | None) -> None:
        if not id_ or self._id_rank == 2:
            return
        rank = 2 if not id_.startswith((_LC_ID_PREFIX, _LC_AUTO_PREFIX)) else 0
        rank = 1 if id_.startswith(_LC_ID_PREFIX) else rank
        if rank > self._id_rank:
            self._id, self._id_rank = id_, rank

    def _add_fragment(self, fragment: dict[str, Any], *, merge: bool) -> None:
        """merge_lists: a fragment joins the first call with its index (an int, or a
        langchain "lc_" index) and no other id; anything else starts a call of its own."""
        index = fragment.get("index")
        mergeable = isinstance(index, int) or (isinstance(index, str) and index.startswith("lc_"))
        if merge and mergeable:
            for call in self._by_index.get(index, ()):
                if (
                    call.id in (None, "")
                    or fragment.get("id") in (None, "")
                    or (call.id == fragment.get("id"))
                ):
                    call.add(fragment)
                    return
        call = _Call(index)
        call.add(fragment)
        self.calls.append(call)
        try:
            self._by_index.setdefault(index, []).append(call)
        except TypeError:  # an unhashable index can never be matched
            pass

    @property
    def usage(self) -> UsageMetadata | None:
        return self._usage if self._has_usage else None

    def message(self) -> AIMessage:
        """The answer as one AIMessage: text joined once, each call's arguments parsed once."""
        if all(isinstance(piece, str) for piece in self.content):
            content: Any = "".join(self.content)
        else:  # content blocks (not ChatOpenAI's chat completions): langchain's merge, once
            content = merge_content(self.content[0], *self.content[1:]) if self.content else ""
        built = [call.build() for call in self.calls]
        return AIMessage(
            content=content,
            additional_kwargs=self.additional_kwargs,
            response_metadata=self.response_metadata,
            name=self._name if self.chunks == 1 else None,
            id=self._id,
            tool_calls=[c for c in built if c["type"] == "tool_call"],
            invalid_tool_calls=[c for c in built if c["type"] == "invalid_tool_call"],
            usage_metadata=self.usage,
        )
