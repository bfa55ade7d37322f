"""How many tokens a request will take, estimated before it is sent.

No tokenizer is exact for every server's model, and tiktoken's encodings are downloaded on
first use (no network here, nor on many machines agentcli runs on). So the estimate is
bytes/4 of the UTF-8 text (about right for English prose with BPE tokenizers, low for code
and JSON), plus a few tokens per message for the chat template. `Calibration` corrects it
upwards with the server's own count: when an answer reports more prompt tokens than were
estimated, later estimates are scaled by that ratio (never down: underestimating overflows
the window, overestimating only compacts a little early).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

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


def tools_tokens(schemas: Sequence[dict[str, Any]]) -> int:
    """The tool definitions a request carries (their JSON, as the server's template sees it)."""
    return sum(text_tokens(json.dumps(schema, ensure_ascii=False)) for schema in schemas)


@dataclass
class Calibration:
    """The estimate's correction for one model, learnt from the usage its answers report."""

    scale: float = 1.0

    def apply(self, estimate: int) -> int:
        return int(estimate * self.scale) + 1

    def learn(self, estimate: int, reported: int | None) -> None:
        if reported and estimate > 0 and reported > estimate * self.scale:
            self.scale = min(MAX_SCALE, reported / estimate)
