"""Token usage estimated from characters, for servers that send none when streaming.

tiktoken (a dependency of langchain-openai) downloads its encodings on first use and caches
them; it has none offline, and a local model's tokenizer is not OpenAI's anyway. So the
estimate is the usual rule of thumb, about four characters per token, plus a few tokens per
message for the chat template: right to within a few tens of percent for English text and
code, and marked `estimated` wherever it is shown.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.messages.ai import UsageMetadata

CHARS_PER_TOKEN = 4
TOKENS_PER_MESSAGE = 4  # role and separators in a chat template


def tokens(chars: int) -> int:
    return -(-chars // CHARS_PER_TOKEN)  # rounded up


def message_chars(message: BaseMessage) -> int:
    text = message.content if isinstance(message.content, str) else json.dumps(message.content)
    calls = message.tool_calls if isinstance(message, AIMessage) else []
    return len(text) + sum(len(c["name"]) + len(json.dumps(c["args"])) for c in calls)


def estimate_usage(
    messages: Sequence[BaseMessage], tools: Sequence[Any] | None, output_chars: int
) -> UsageMetadata:
    """The usage of one request: its messages and tool schemas in, `output_chars` out."""
    prompt = sum(tokens(message_chars(m)) + TOKENS_PER_MESSAGE for m in messages)
    prompt += tokens(len(json.dumps(list(tools or ()), default=str)))
    answer = tokens(output_chars)
    return {"input_tokens": prompt, "output_tokens": answer, "total_tokens": prompt + answer}
