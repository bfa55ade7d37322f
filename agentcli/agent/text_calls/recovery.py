"""Tool calls a model wrote as text, recovered from its answer.

Models without native tool calling, and servers started without a tool-call parser, put the
call in the answer's text. `recover` finds them in the model's own answer, in the forms
agentcli/agent/text_calls/formats.py reads (Hermes, Mistral, Llama 3, `<function=>`, ChatGLM,
bare JSON).

What it promises:

- Only tools that were offered are recovered; markup naming any other tool, or that does
  not parse, is left as text. A block whose call names an offered tool but whose
  arguments are not an object becomes an invalid call (the review sends it back to the
  model, bounded by agent.max_invalid_turns).
- Markers inside a fenced code block or an inline code span are examples, not calls (the
  ChatGLM block is the one fenced form, and it must hold nothing but the call).
- The work is linear in the answer's size: the markers are found in one scan, each
  payload is the text between its marker and the next one (disjoint spans), and a payload
  over MAX_PAYLOAD characters (formats.py) is not parsed.
- The text left is the answer without the recovered markup (see `join`).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.messages.tool import InvalidToolCall, ToolCall

from agentcli.agent.text_calls.formats import bare, chatglm, marked


@dataclass
class Recovered:
    """What `recover` found: the calls (in the order written), and the text without them."""

    text: str
    calls: list[ToolCall] = field(default_factory=list)
    invalid: list[InvalidToolCall] = field(default_factory=list)
    formats: list[str] = field(default_factory=list)


def join(parts: list[str]) -> str:
    """The pieces of text around the removed calls: blanks at each cut dropped, a blank line
    between pieces, and the whole stripped."""
    kept = [part.strip() for part in parts]
    return "\n\n".join(part for part in kept if part)


def recover(text: str, offered: Collection[str]) -> Recovered | None:
    """The calls of offered tools written in `text`, or None if there are none."""
    if not offered or not text:
        return None
    found = marked(text, offered) or chatglm(text, offered) or bare(text, offered)
    if not found:
        return None
    found.sort(key=lambda hit: hit.start)
    parts: list[str] = []
    at = 0
    out = Recovered(text="")
    for hit in found:
        if hit.start < at:  # overlaps an earlier one: keep the earlier
            continue
        parts.append(text[at : hit.start])
        at = hit.end
        for call in hit.calls:
            if call["type"] == "tool_call":
                out.calls.append(call)
            else:
                out.invalid.append(call)
        if hit.format not in out.formats:
            out.formats.append(hit.format)
    parts.append(text[at:])
    out.text = join(parts)
    return out


def with_text_calls(answer: BaseMessage, offered: Collection[str]) -> BaseMessage:
    """`answer` with the calls it wrote as text as its tool calls (fresh ids) and its text
    without them; unchanged when it made a native call or wrote none. Its response metadata
    says which forms were found (`text_tool_calls`)."""
    if not isinstance(answer, AIMessage) or answer.tool_calls or answer.invalid_tool_calls:
        return answer
    if not isinstance(answer.content, str):
        return answer
    found = recover(answer.content, offered)
    if found is None:
        return answer
    metadata = {**answer.response_metadata, "text_tool_calls": found.formats}
    return answer.model_copy(
        update={
            "content": found.text,
            "tool_calls": found.calls,
            "invalid_tool_calls": found.invalid,
            "response_metadata": metadata,
        }
    )
