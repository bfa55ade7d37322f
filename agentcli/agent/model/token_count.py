"""How many tokens a request takes: agentcli's one estimate, a heuristic, not a tokenizer.

It serves both places that need a count agentcli makes itself: before a request, to keep a
thread inside the context window (context/fit.py, compaction.py), and after a streamed answer
whose server sent no usage (`estimate_usage`, marked `estimated`).

No tokenizer fits every model a server may run: tiktoken's encodings are OpenAI's and are
downloaded on first use (no network here, nor on many machines agentcli runs on); a local
model's own tokenizer is in its weights file, on the server, not here. So the count is the
rule of thumb `HEURISTIC`: UTF-8 bytes / 4 of the text (about right for English prose with BPE
tokenizers, low for code and JSON, high for CJK), plus a few tokens per message for the chat
template. `Calibration` corrects it upwards with the server's own count: when an answer
reports more prompt tokens than were estimated, later estimates are scaled by that ratio
(never down: underestimating overflows the window, overestimating only compacts a little
early).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.messages.ai import UsageMetadata

HEURISTIC = "UTF-8 bytes / 4"  # how the estimate is made, where it is shown
BYTES_PER_TOKEN = 4
PER_MESSAGE = 4  # role markers and separators of a chat template
MAX_SCALE = 4.0  # a correction beyond this is a server's odd count, not the estimate's error


def text_tokens(text: str) -> int:
    """Tokens in `text`, by bytes/4 (rounded up)."""
    return -(-len(text.encode("utf-8", "surrogatepass")) // BYTES_PER_TOKEN)


def message_tokens(message: BaseMessage) -> int:
    """One message: its text, its tool calls' names and arguments, the template's markers."""
    content = message.content
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    count = PER_MESSAGE + text_tokens(text)
    if isinstance(message, AIMessage):
        for call in message.tool_calls:
            args = json.dumps(call["args"], ensure_ascii=False)
            count += PER_MESSAGE + text_tokens(call["name"]) + text_tokens(args)
        for bad in message.invalid_tool_calls:
            count += PER_MESSAGE + text_tokens(str(bad.get("args") or ""))
    return count


def messages_tokens(messages: Iterable[BaseMessage]) -> int:
    return sum(message_tokens(message) for message in messages)


def tools_tokens(schemas: Sequence[Any]) -> int:
    """The tool definitions a request carries (their JSON, as the server's template sees it)."""
    return sum(
        text_tokens(json.dumps(schema, ensure_ascii=False, default=str)) for schema in schemas
    )


def estimate_usage(
    messages: Sequence[BaseMessage], tools: Sequence[Any] | None, answer: str
) -> UsageMetadata:
    """The usage of one request whose server counted none: its messages and tool schemas
    in, `answer` (its text and calls' names and arguments, as streamed) out."""
    prompt = messages_tokens(messages) + tools_tokens(tools or ())
    out = text_tokens(answer)
    return {"input_tokens": prompt, "output_tokens": out, "total_tokens": prompt + out}


@dataclass
class Calibration:
    """The estimate's correction for one model, learnt from the usage its answers report."""

    scale: float = 1.0

    def apply(self, estimate: int) -> int:
        return int(estimate * self.scale) + 1

    def learn(self, estimate: int, reported: int | None) -> None:
        if reported and estimate > 0 and reported > estimate * self.scale:
            self.scale = min(MAX_SCALE, reported / estimate)
