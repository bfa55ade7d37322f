"""The chat model as OpenAI-compatible servers other than OpenAI's need it.

What `CompatibleChatOpenAI` adds to StreamingChatOpenAI (openai_streaming.py):

- `default_tool_choice` ([model] tool_choice) is sent whenever tools are bound; a tool name
  must name an offered tool.
- `max_tokens` goes out as `max_tokens` to any server but OpenAI's: langchain-openai renames
  it `max_completion_tokens` (OpenAI's newer name), which llama.cpp, llama-cpp-python,
  Ollama and older vLLM ignore, so the limit would silently not apply.
- `empty_tool_call_content`: assistant messages with tool calls carry `content: ""` instead
  of langchain's `null` (set by retries.py when a server has refused `null`).
- a server-side truncation that is not `finish_reason: "length"` (llama.cpp's
  `truncated: true` / `stop_type: "limit"`) is kept as `response_metadata["truncated"]`.
- a streamed answer that came without usage (servers that ignore `stream_options`) gets an
  estimated usage (token_count.py's heuristic, the one the context window is kept with),
  marked `response_metadata["usage_estimated"]`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from langchain_core.messages import AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGenerationChunk, ChatResult

from agentcli.agent.model.openai_streaming import StreamingChatOpenAI
from agentcli.agent.model.token_count import estimate_usage
from agentcli.errors import ConfigError

OPENAI_HOSTS = ("https://api.openai.com",)
CHOICES = ("auto", "required", "none")


def truncated(raw: Any) -> bool:
    """Whether a server's chunk or completion says it cut the answer off (llama.cpp)."""
    if not isinstance(raw, dict):
        return False
    places = [raw, *(c for c in raw.get("choices") or () if isinstance(c, dict))]
    return any(p.get("truncated") is True or p.get("stop_type") == "limit" for p in places)


def _tool_name(tool: Any) -> str | None:
    """A LangChain tool's name, or an OpenAI tool schema's (a small window's terse ones)."""
    if isinstance(tool, dict):
        return (tool.get("function") or {}).get("name")
    return getattr(tool, "name", None)


class CompatibleChatOpenAI(StreamingChatOpenAI):
    """StreamingChatOpenAI for any OpenAI-compatible server (see the module's docstring)."""

    default_tool_choice: str | None = None
    empty_tool_call_content: bool = False

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: Any = None, **kwargs: Any) -> Any:
        choice = tool_choice if tool_choice is not None else self.default_tool_choice
        if isinstance(choice, str) and choice not in CHOICES:
            names = [_tool_name(tool) for tool in tools]
            if choice not in names:
                raise ConfigError(
                    f"[model] tool_choice = '{choice}' names no tool this session offers"
                    " (auto, required, none, or a name from `agentcli tools`)"
                )
        return super().bind_tools(tools, tool_choice=choice, **kwargs)

    def _get_request_payload(
        self, input_: Any, *, stop: list[str] | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        payload = super()._get_request_payload(input_, stop=stop, **kwargs)
        base = self.openai_api_base or OPENAI_HOSTS[0]
        if "max_completion_tokens" in payload and not base.startswith(OPENAI_HOSTS):
            payload["max_tokens"] = payload.pop("max_completion_tokens")
        if self.empty_tool_call_content:
            for message in payload.get("messages", ()):
                if message.get("role") == "assistant" and message.get("content") is None:
                    message["content"] = ""
        return payload

    def _convert_chunk_to_generation_chunk(
        self,
        chunk: dict[str, Any],
        default_chunk_class: type,
        base_generation_info: dict[str, Any] | None,
    ) -> ChatGenerationChunk | None:
        converted = super()._convert_chunk_to_generation_chunk(
            chunk, default_chunk_class, base_generation_info
        )
        if truncated(chunk):
            if converted is None:
                converted = ChatGenerationChunk(message=AIMessageChunk(content=""))
            converted.message.response_metadata["truncated"] = True
        return converted

    def _create_chat_result(self, response: Any, generation_info: Any = None) -> ChatResult:
        result = super()._create_chat_result(response, generation_info)
        raw = response if isinstance(response, dict) else response.model_dump()
        if truncated(raw):
            for generation in result.generations:
                generation.message.response_metadata["truncated"] = True
        return result

    def _stream(
        self, messages: list[BaseMessage], *args: Any, **kwargs: Any
    ) -> Iterator[ChatGenerationChunk]:
        counted = False  # the server sent usage
        chunks = 0
        out: list[str] = []  # the answer as streamed, text and calls' names and arguments
        names: dict[Any, str] = {}  # each call's name so far (by index), to skip its repeats
        for chunk in super()._stream(messages, *args, **kwargs):
            chunks += 1
            message = chunk.message
            if isinstance(message, AIMessageChunk):
                counted = counted or bool(message.usage_metadata)
                out.append(message.text)
                for part in message.tool_call_chunks:
                    name, so_far = part.get("name") or "", names.get(part.get("index"), "")
                    if name and name != so_far:  # not a whole name repeated (answer_stream.py)
                        names[part.get("index")] = so_far + name
                        out.append(name)
                    out.append(part.get("args") or "")
            yield chunk
        if chunks and not counted:  # (no chunk at all: the caller's empty-stream error)
            usage = estimate_usage(messages, kwargs.get("tools"), "".join(out))
            message = AIMessageChunk(
                content="", usage_metadata=usage, response_metadata={"usage_estimated": True}
            )
            yield ChatGenerationChunk(message=message)
