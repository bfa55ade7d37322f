"""Server profiles: the scripted server behaving like a real server with a quirk.

    server.profile = Profile(repeat_names=True)      # every test's server, from then on
    server.push(tool_calls(("calculator", {...})))

A profile changes how every reply is sent (ScriptedServer calls `refusal`, `delay`,
`stream` and `completion` while it answers); each flag is one quirk seen in the wild:

- repeat_names: the whole `function.name` again in every streamed argument delta (older
  llama.cpp, some vLLM tool parsers);
- refuse_null_content: HTTP 500 with pydantic's validation errors for an assistant message
  with tool calls whose `content` is null, worded as llama-cpp-python's server words them;
- empty_stream: a 200 stream with no chunk at all, only `[DONE]`;
- drop_after_empty: the empty stream is llama-cpp-python's after an error in its handler
  (not even `[DONE]`), and the next request on the same keep-alive connection is dropped
  unanswered (that server closes the connection its failed stream was on, as the client
  sends the next request on it);
- no_stream_usage: no usage chunk when streaming, whatever `stream_options` asks;
- finish_length: `finish_reason: "length"` instead of "stop"/"tool_calls";
- truncated_final: a final chunk (or completion) with llama.cpp's `truncated: true` and
  `stop_type: "limit"`, the finish reason left "stop";
- first_delay: seconds the first request waits before its answer (a server still busy);
- call_ids: "none", tool calls without an id (older llama.cpp builds, some vLLM parsers);
  "same", every call of an answer with the id `call_0`.

`LLAMA_SERVER` (and `llama_server(jinja=False)`) is llama.cpp's own server as its README
(tools/server/README.md) and source (tools/server/server-task.cpp, server-common.cpp)
describe it: the first streamed delta `{"role": "assistant", "content": null}`; deltas
without `logprobs` or `usage` keys; a final chunk with `delta: {}` and the finish reason;
with `stream_options.include_usage` a last chunk of `choices: []` and the usage, `timings`
on the last chunk (and on a non-streamed answer, which always has usage); a request over
the window refused with 400 `exceed_context_size_error` naming `n_prompt_tokens` and
`n_ctx`. Tool calls need `--jinja`: without it a request with `tools` is refused with 500
"tools param requires --jinja flag", and one with a `tool_choice` with "Unsupported param:
tool_choice". The window is told at GET /props (`default_generation_settings.n_ctx`;
ScriptedServer serves it with `window_api="llama.cpp"`, the default).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

SERVER_ERROR = {"type": "internal_server_error", "param": None, "code": None}


def _null_refused(i: int, message: dict[str, Any]) -> str:
    """llama-cpp-python 0.3's refusal of message `i`, word for word: one pydantic error per
    kind of message it might have been, the one about `content` third, then where it
    failed. A client that reads only the first 200 characters never sees `content`."""

    def wrong_role(kind: str, role: str) -> dict[str, Any]:
        return {
            "type": "literal_error",
            "loc": ("body", "messages", i, f"ChatCompletionRequest{kind}Message", "role"),
            "msg": f"Input should be '{role}'",
            "input": "assistant",
            "ctx": {"expected": f"'{role}'"},
        }

    def missing(kind: str, field: str) -> dict[str, Any]:
        loc = ("body", "messages", i, f"ChatCompletionRequest{kind}Message", field)
        return {"type": "missing", "loc": loc, "msg": "Field required", "input": message}

    content = {
        "type": "string_type",
        "loc": ("body", "messages", i, "ChatCompletionRequestAssistantMessage", "content"),
        "msg": "Input should be a valid string",
        "input": None,
    }
    errors = [
        wrong_role("System", "system"),
        wrong_role("User", "user"),
        content,
        wrong_role("Tool", "tool"),
        missing("Tool", "tool_call_id"),
        wrong_role("Function", "function"),
        missing("Function", "name"),
    ]
    where = (
        '  File "llama_cpp/server/app.py", line 376, in create_chat_completion\n'
        "    POST /v1/chat/completions"
    )
    lines = "".join(f"  {error!r}\n" for error in errors)
    return f"{len(errors)} validation errors:\n{lines}\n{where}"


@dataclass
class Profile:
    repeat_names: bool = False
    refuse_null_content: bool = False
    empty_stream: bool = False
    drop_after_empty: bool = False
    no_stream_usage: bool = False
    finish_length: bool = False
    truncated_final: bool = False
    first_delay: float = 0.0
    call_ids: str = ""  # "" (the server's own), "none" or "same"
    llama_server: bool = False  # llama.cpp's server, as the module's docstring says
    jinja: bool = True  # llama-server started with --jinja (tool calls on)
    served: int = field(default=0, repr=False)  # requests answered so far

    def refusal(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
        """(status, error body) when this server refuses the request outright."""
        if self.llama_server and not self.jinja:
            if body.get("tools"):
                return 500, _llama_error(500, "tools param requires --jinja flag", "server_error")
            if body.get("tool_choice") is not None:
                return 500, _llama_error(500, "Unsupported param: tool_choice", "server_error")
        if not self.refuse_null_content:
            return None
        for i, message in enumerate(body.get("messages") or []):
            if message.get("role") == "assistant" and message.get("content") is None:
                return 500, {"error": {"message": _null_refused(i, message), **SERVER_ERROR}}
        return None

    def overflow(self, count: int, window: int) -> dict[str, Any] | None:
        """llama-server's 400 for a request over its window (None: OpenAI's, the default)."""
        if not self.llama_server:
            return None
        message = "the request exceeds the available context size, try increasing it"
        error = _llama_error(400, message, "exceed_context_size_error")
        error["error"].update(n_prompt_tokens=count, n_ctx=window)
        return error

    def delay(self) -> float:
        """Seconds to wait before answering this request."""
        self.served += 1
        return self.first_delay if self.served == 1 else 0.0

    def says_done(self) -> bool:
        """Whether a stream ends with `data: [DONE]`."""
        return not (self.empty_stream and self.drop_after_empty)

    def stream(self, chunks: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        """The streamed chunks as this server sends them."""
        if self.empty_stream:
            return
        if self.llama_server:
            chunks = _as_llama_server(chunks)
        heads: dict[int, dict[str, Any]] = {}  # each call's id, type and name
        for chunk in chunks:
            choices = chunk.get("choices") or []
            if self.no_stream_usage and not choices and chunk.get("usage"):
                continue
            if self.no_stream_usage:
                chunk.pop("usage", None)
            for choice in choices:
                delta = choice.get("delta") or {}
                for call in delta.get("tool_calls") or []:
                    function = call.setdefault("function", {})
                    if function.get("name"):
                        heads[call["index"]] = {**call, "function": dict(function)}
                    elif self.repeat_names and call["index"] in heads:
                        head = heads[call["index"]]
                        call.update(id=head["id"], type=head["type"])
                        function["name"] = head["function"]["name"]
                    self._call_id(call)
                if choice.get("finish_reason") and self.finish_length:
                    choice["finish_reason"] = "length"
                if choice.get("finish_reason") and self.truncated_final:
                    choice["finish_reason"] = "stop"
                    chunk.update(truncated=True, stop_type="limit")
            yield chunk

    def completion(self, completion: dict[str, Any]) -> dict[str, Any]:
        """A non-streamed answer as this server sends it."""
        if self.llama_server:
            completion["timings"] = _timings(completion["usage"])
        for choice in completion["choices"]:
            for call in (choice.get("message") or {}).get("tool_calls") or []:
                self._call_id(call)
            if self.finish_length:
                choice["finish_reason"] = "length"
            if self.truncated_final:
                choice["finish_reason"] = "stop"
                completion.update(truncated=True, stop_type="limit")
        return completion

    def _call_id(self, call: dict[str, Any]) -> None:
        if self.call_ids == "none":
            call.pop("id", None)
        elif self.call_ids == "same" and call.get("id"):
            call["id"] = "call_0"


LLAMA_SERVER = Profile(llama_server=True)


def llama_server(jinja: bool = True) -> Profile:
    return Profile(llama_server=True, jinja=jinja)


def _llama_error(code: int, message: str, type_: str) -> dict[str, Any]:
    """llama.cpp's error body: OpenAI's shape, with the HTTP status as `code`."""
    return {"error": {"code": code, "message": message, "type": type_}}


def _timings(usage: dict[str, Any] | None) -> dict[str, Any]:
    prompt = (usage or {}).get("prompt_tokens", 0)
    predicted = (usage or {}).get("completion_tokens", 0)
    return {
        "cache_n": 0, "prompt_n": prompt, "prompt_ms": 1.0, "prompt_per_token_ms": 0.1,
        "prompt_per_second": 1000.0, "predicted_n": predicted, "predicted_ms": 1.0,
        "predicted_per_token_ms": 0.1, "predicted_per_second": 1000.0,
    }  # fmt: skip


def _as_llama_server(chunks: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The chunks as llama-server streams them (server-task.cpp, to_json_oaicompat_chat*):
    the first delta's content null, no `logprobs` or `usage: null` keys, `timings` on the
    last chunk."""
    last: dict[str, Any] | None = None
    usage: dict[str, Any] | None = None
    first = True
    for chunk in chunks:
        if chunk.get("usage") is None:
            chunk.pop("usage", None)
        else:
            usage = chunk["usage"]
        for choice in chunk.get("choices") or []:
            choice.pop("logprobs", None)
            if first and choice.get("delta", {}).get("role"):
                choice["delta"]["content"] = None
                first = False
        if last is not None:
            yield last
        last = chunk
    if last is not None:
        last["timings"] = _timings(usage)
        yield last
