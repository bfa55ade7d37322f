"""A scripted, local OpenAI-compatible chat-completions server for tests.

    with ScriptedServer() as server:
        server.push(tool_calls(("read_file", {"path": "a.txt"})), text("done"))
        run_agentcli("--base-url", server.base_url, ...)
        assert server.requests[1]["messages"][-1]["tool_call_id"] == "call_1"

Each POST /v1/chat/completions consumes one reply (FIFO); an empty queue answers
HTTP 500 "scripted server: no reply queued". ``"stream": true`` requests get SSE
(chunked transfer encoding, so keep-alive works), others one JSON object.
Tool-call ids are "call_1", "call_2", ... in the order one server serves them.
Streamed text and arguments go out in pieces of PIECE characters (``delay=`` seconds before
each piece makes a slow model; ``pause=(event, offset)`` stops the stream after `offset`
characters of the text, or of the first call's arguments, until the test sets `event`:
what a screen shows mid-stream, read without timing); ``ScriptedServer(piece=N)``
or ``text(..., piece=N)`` / ``tool_calls(..., piece=N)`` choose another size (real servers
send a token or a few, 4 to 100 bytes). The chunks are made as they are sent, so a reply of
many megabytes costs the server time and memory in proportion to its size.
"""

from __future__ import annotations

import itertools
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from tests.helpers.server_profiles import Profile
from tests.helpers.waiting import until

PIECE = 4  # characters per streamed content / argument fragment


def request_tokens(body: dict) -> int:
    """The server's count of a request's prompt tokens: the JSON of its messages and tools,
    4 bytes a token. Not agentcli's estimate (token_count.py), which does not see the JSON."""
    sent = json.dumps(body.get("messages", [])) + json.dumps(body.get("tools", []))
    return len(sent.encode()) // 4


@dataclass
class Reply:
    kind: str  # "text" | "tool_calls" | "error" | "hang" | "drop"
    content: str = ""
    calls: tuple[tuple[str, dict | str], ...] = ()
    usage: tuple[int, int] = (10, 5)
    status: int = 500
    message: str = ""
    type_: str = "server_error"
    code: str | None = None
    seconds: float = 0.0
    ids: list[str] = field(default_factory=list)  # tool-call ids, filled in when served
    piece: int | None = None  # characters per streamed fragment; None: the server's
    delay: float = 0.0  # seconds before each streamed fragment (a slow model)
    # (event, offset): the stream waits for the event after `offset` characters of the
    # content, or of the first call's arguments when the reply has calls
    pause: tuple[threading.Event, int] | None = None


PAUSE_LIMIT_S = 300  # a paused stream goes on after this, set or not (a test that failed)


def text(
    content: str,
    *,
    usage: tuple[int, int] = (10, 5),
    piece: int | None = None,
    delay: float = 0.0,
    pause: tuple[threading.Event, int] | None = None,
) -> Reply:
    """An assistant text answer (finish_reason "stop"); `delay` seconds before each piece."""
    return Reply("text", content=content, usage=usage, piece=piece, delay=delay, pause=pause)


def tool_calls(
    *calls: tuple[str, dict | str],
    content: str = "",
    usage: tuple[int, int] = (10, 5),
    piece: int | None = None,
    delay: float = 0.0,
    ids: list[str] | None = None,
    pause: tuple[threading.Event, int] | None = None,
) -> Reply:
    """Tool calls (finish_reason "tool_calls"); each is (name, args dict | raw args string).
    `ids`: the call ids the server sends, any text (default: call_1, call_2, ...)."""
    reply = Reply(
        "tool_calls",
        content=content,
        calls=calls,
        usage=usage,
        piece=piece,
        delay=delay,
        pause=pause,
    )
    reply.ids = list(ids or [])
    return reply


def error(
    status: int,
    message: str = "scripted error",
    *,
    type_: str = "invalid_request_error",
    code: str | None = None,
) -> Reply:
    """HTTP ``status`` with body {"error": {"message", "type", "param", "code"}}."""
    return Reply("error", status=status, message=message, type_=type_, code=code)


def hang(seconds: float) -> Reply:
    """Wait ``seconds`` (cut short by stop() or cut_hangs()), then answer HTTP 500."""
    return Reply("hang", seconds=seconds, message="scripted server: hang finished")


def drop(*, partial: str = "") -> Reply:
    """Close the connection without a response. For a streamed request with ``partial``,
    first stream the role chunk and ``partial`` as content deltas, then cut the stream."""
    return Reply("drop", content=partial)


def _pieces(s: str, size: int = PIECE) -> Iterator[str]:
    return (s[i : i + size] for i in range(0, len(s), size))


def _args(arguments: dict | str) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


def _usage(reply: Reply, prompt: int | None = None) -> dict:
    p, c = reply.usage
    p = p if prompt is None else prompt
    return {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}


def _envelope(body: dict, cid: str, obj: str) -> dict:
    model = body.get("model", "scripted")
    return {
        "id": cid,
        "object": obj,
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": None,
    }


def _completion(body: dict, cid: str, reply: Reply) -> dict:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content or None}
    if reply.calls:
        message["tool_calls"] = [
            {"id": id_, "type": "function", "function": {"name": name, "arguments": _args(args)}}
            for id_, (name, args) in zip(reply.ids, reply.calls, strict=True)
        ]
    finish = "tool_calls" if reply.calls else "stop"
    choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": finish}
    usage = _usage(reply, body.get("_counted"))
    return {**_envelope(body, cid, "chat.completion"), "choices": [choice], "usage": usage}


def _chunks(
    body: dict, cid: str, reply: Reply, *, complete: bool = True, piece: int = PIECE
) -> Iterator[dict]:
    """The chat.completion.chunk sequence; ``complete=False`` stops after the content."""
    base = _envelope(body, cid, "chat.completion.chunk")
    size = reply.piece or piece
    with_usage = bool((body.get("stream_options") or {}).get("include_usage"))

    def chunk(delta: dict, finish: str | None = None) -> dict:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return {**base, "choices": [choice], **({"usage": None} if with_usage else {})}

    def slowly(whole: str, paused: bool) -> Iterator[str]:
        """`whole` in pieces; when `paused`, the piece at the pause's offset waits for it."""
        cut = reply.pause[1] if paused and reply.pause else len(whole)
        parts = [*_pieces(whole[:cut], size), *_pieces(whole[cut:], size)]
        sent = 0
        for part in parts:
            if paused and reply.pause and sent == cut:
                reply.pause[0].wait(PAUSE_LIMIT_S)
            time.sleep(reply.delay)
            yield part
            sent += len(part)

    yield chunk({"role": "assistant", "content": ""})
    in_text = not reply.calls
    yield from (chunk({"content": part}) for part in slowly(reply.content, in_text))
    if not complete:
        return
    for i, (id_, (name, args)) in enumerate(zip(reply.ids, reply.calls, strict=True)):
        head = {"index": i, "id": id_, "type": "function"}
        yield chunk({"tool_calls": [{**head, "function": {"name": name, "arguments": ""}}]})
        yield from (
            chunk({"tool_calls": [{"index": i, "function": {"arguments": part}}]})
            for part in slowly(_args(args), i == 0)
        )
    yield chunk({}, "tool_calls" if reply.calls else "stop")
    if with_usage:
        yield {**base, "choices": [], "usage": _usage(reply, body.get("_counted"))}


def _props(n_ctx: int) -> dict:
    """llama-server's GET /props (tools/server/README.md): the window is the slot's
    `default_generation_settings.n_ctx`."""
    params = {"n_predict": -1, "temperature": 0.8}
    settings = {"id": 0, "id_task": -1, "n_ctx": n_ctx, "speculative": False,
                "is_processing": False, "params": params}  # fmt: skip
    return {
        "default_generation_settings": settings,
        "total_slots": 1,
        "model_path": "models/scripted.gguf",
        "chat_template": "{{ messages }}",
        "modalities": {"vision": False},
        "build_info": "b0000-scripted",
    }


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # as uvicorn, Go's net/http and Ollama do: a response's head and body (each a write of
    # their own) go out at once, not 40 ms apart (Nagle's algorithm, the client's delayed ACK)
    disable_nagle_algorithm = True
    server: Any  # ThreadingHTTPServer with a .scripted attribute

    def log_message(self, format: str, *args: Any) -> None:  # no request logging
        pass

    def handle(self) -> None:
        srv = self.server.scripted
        with srv._lock:
            srv.connections += 1
        try:
            super().handle()
        except ConnectionError:  # clients hanging up is normal
            pass

    def parse_request(self) -> bool:
        """As a server, and as a forward proxy: an absolute-form target ("POST http://host/v1/
        chat/completions", what a client sends its HTTP proxy) is answered as its path, and
        the host it named is kept in `proxied`."""
        if not super().parse_request():
            return False
        if self.path.startswith("http://"):
            target = urlsplit(self.path)
            srv = self.server.scripted
            with srv._lock:
                srv.proxied.append(target.netloc)
            self.path = target.path + (f"?{target.query}" if target.query else "")
        return True

    def _json(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str, type_: str, code: str | None = None) -> None:
        err = {"message": message, "type": type_, "param": None, "code": code}
        self._json(status, {"error": err})

    def _sse(self, events: Iterable[dict | str]) -> None:
        """Start a chunked text/event-stream response and write ``events`` to it."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for ev in events:
            data = f"data: {ev if isinstance(ev, str) else json.dumps(ev)}\n\n".encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def _authorized(self) -> bool:
        key = self.server.scripted.require_key
        if key is None or self.headers.get("Authorization") == f"Bearer {key}":
            return True
        self._error(401, "Incorrect API key provided.", "invalid_request_error", "invalid_api_key")
        return False

    def do_GET(self) -> None:
        if not self._authorized():
            return
        srv = self.server.scripted
        told = srv.context_window if srv.announce_window else None
        if self.path.rstrip("/") == "/v1/models":
            model = {"id": "scripted", "object": "model"}
            if told and srv.window_api == "vllm":  # vLLM's, beside the usual fields
                model.update(owned_by="vllm", root="scripted", max_model_len=told)
            self._json(200, {"object": "list", "data": [model]})
        elif self.path == "/props" and told and srv.window_api == "llama.cpp":
            self._json(200, _props(told))
        else:
            self._error(404, f"scripted server: no route GET {self.path}", "not_found")

    def _ollama_show(self, body: dict) -> None:
        """Ollama's POST /api/show: the model's parameters as Ollama prints them (a name,
        spaces, a value, one a line), with `num_ctx` when the window is told that way, and
        the trained context length in `model_info`."""
        srv = self.server.scripted
        if body.get("model") != "scripted":  # Ollama's answer for a model it does not have
            return self._json(404, {"error": f"model '{body.get('model')}' not found"})
        parameters = ['stop                           "<|im_end|>"']
        if srv.ollama_num_ctx:
            parameters.append(f"num_ctx                        {srv.ollama_num_ctx}")
        info = {"general.architecture": "llama", "llama.context_length": srv.ollama_trained}
        shown = {"modelfile": "FROM scripted", "parameters": "\n".join(parameters)}
        self._json(200, {**shown, "template": "{{ .Prompt }}", "model_info": info})

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        srv = self.server.scripted
        path = self.path.rstrip("/")
        ollama = path == "/api/show" and srv.announce_window and srv.window_api == "ollama"
        if path != "/v1/chat/completions" and not ollama:
            return self._error(404, f"scripted server: no route POST {self.path}", "not_found")
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            return self._error(400, "scripted server: body is not JSON", "invalid_request_error")
        if ollama:
            return self._ollama_show(body)
        srv._record(body, {k.lower(): v for k, v in self.headers.items()})
        if getattr(self, "failed_stream", False):  # a server quirk (server_profiles.py)
            return self._drop()
        if not self._authorized():
            return
        if refused := srv.profile.refusal(body):  # a server quirk (server_profiles.py)
            return self._json(*refused)
        if srv.context_window:  # too long: refused as a real server does, no reply consumed
            body["_counted"] = count = srv.count(body)
            if count > srv.context_window:
                if refused := srv.profile.overflow(count, srv.context_window):
                    return self._json(400, refused)
                message = (
                    f"This model's maximum context length is {srv.context_window} tokens."
                    f" However, your messages resulted in {count} tokens."
                )
                return self._error(400, message, "invalid_request_error", "context_length_exceeded")
        srv._stopping.wait(srv.profile.delay())
        reply, cid = srv._next(body)
        self._answer(body, cid, reply)
        with srv._lock:
            srv.answered += 1

    def _drop(self) -> None:
        """Close the connection without a response."""
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _answer(self, body: dict, cid: str, reply: Reply | None) -> None:
        stream = bool(body.get("stream"))
        piece = self.server.scripted.piece
        if reply is None:
            self._error(500, "scripted server: no reply queued", "server_error")
        elif reply.kind in ("error", "hang"):
            self.server.scripted._hold(reply.seconds)
            self._error(reply.status, reply.message, reply.type_, reply.code)
        elif reply.kind == "drop":
            if stream and reply.content:
                self._sse(_chunks(body, cid, reply, complete=False, piece=piece))
            self._drop()
        elif stream:
            profile = self.server.scripted.profile
            chunks = profile.stream(_chunks(body, cid, reply, piece=piece))
            self._sse(itertools.chain(chunks, ["[DONE]"] if profile.says_done() else []))
            self.wfile.write(b"0\r\n\r\n")
            # this connection's next request is dropped (kept on the handler: one a connection)
            self.failed_stream = profile.empty_stream and profile.drop_after_empty
        else:
            self._json(200, self.server.scripted.profile.completion(_completion(body, cid, reply)))


class ScriptedServer:
    """Scripted OpenAI-compatible server on 127.0.0.1 (a free port)."""

    def __init__(
        self,
        require_key: str | None = None,
        *,
        piece: int = PIECE,
        context_window: int | None = None,
        announce_window: bool = True,
        window_api: str = "llama.cpp",
        ollama_trained: int = 32768,
        count: Callable[[dict], int] = request_tokens,
    ) -> None:
        self.require_key = require_key  # if set, demand "Authorization: Bearer <key>"
        # a model with this many tokens of context (request_tokens counts them): a longer
        # request gets 400 context_length_exceeded, and usage reports the real prompt size
        self.context_window = context_window
        # how it counts a request's tokens: request_tokens, or a real tokenizer on the
        # prompt a chat template makes (tests/helpers/template_tokens.py)
        self.count = count
        # and the server tells the window, unless not `announce_window`, as `window_api` does:
        # "llama.cpp" (GET /props, `default_generation_settings.n_ctx`), "vllm" (GET /v1/models,
        # `max_model_len`) or "ollama" (POST /api/show: `num_ctx` in its parameters, set to
        # `ollama_num_ctx`, which is the window unless a test changes it; the model's trained
        # length, `ollama_trained`, in `model_info`)
        self.announce_window = announce_window
        self.window_api = window_api
        self.ollama_num_ctx = context_window
        self.ollama_trained = ollama_trained
        self.piece = piece  # characters per streamed fragment, unless a reply says otherwise
        self.requests: list[dict] = []  # JSON body of every chat-completions request, in order
        self.headers: list[dict[str, str]] = []  # their headers (lower-cased names), same order
        self.connections = 0  # TCP connections accepted (keep-alive reuses one)
        self.proxied: list[str] = []  # the host of each request sent here as to a proxy
        self.answered = 0  # chat-completions requests whose answer has been sent
        self.profile = Profile()  # how replies are sent: a real server's quirks, or none
        self._replies: deque[Reply] = deque()
        # answer the requests they return a Reply for, before the queue is asked (a test's
        # stand-in for a model that answers some requests, say summaries, on its own)
        self.responders: list[Callable[[dict], Reply | None]] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._cut = threading.Condition()  # hang() replies wait on it
        self._cuts = 0
        self._call_ids = itertools.count(1)
        self._completion_ids = itertools.count(1)
        self._httpd: ThreadingHTTPServer | None = None

    def start(self) -> ScriptedServer:
        self._stopping.clear()
        httpd = self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        httpd.scripted = self  # type: ignore[attr-defined]
        # a short poll interval keeps stop() (and so each test's teardown) fast
        threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self.cut_hangs()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def cut_hangs(self) -> None:
        """End the hang() replies waiting now: they answer at once (later ones wait)."""
        with self._cut:
            self._cuts += 1
            self._cut.notify_all()

    def _hold(self, seconds: float) -> None:
        with self._cut:
            cuts = self._cuts
            self._cut.wait_for(lambda: self._cuts != cuts or self._stopping.is_set(), seconds)

    def restart_call_ids(self) -> None:
        """Number the next tool calls from call_1 again, as a server that restarted does."""
        with self._lock:
            self._call_ids = itertools.count(1)

    def push(self, *replies: Reply) -> None:
        with self._lock:
            self._replies.extend(replies)

    @property
    def pending(self) -> int:
        """Queued replies not served yet."""
        with self._lock:
            return len(self._replies)

    def wait_for_request(self, count: int = 1) -> None:
        """Until `count` requests have come in: a client's call is under way."""
        until(lambda: len(self.requests) >= count, what=f"{count} request(s) came in")

    def _record(self, body: dict, headers: dict[str, str]) -> None:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)

    def _next(self, body: dict | None = None) -> tuple[Reply | None, str]:
        answered = (respond(body) for respond in self.responders) if body is not None else ()
        auto = next((reply for reply in answered if reply is not None), None)
        with self._lock:
            reply = auto or (self._replies.popleft() if self._replies else None)
            if reply is not None and reply.calls and reply.kind == "tool_calls" and not reply.ids:
                reply.ids = [f"call_{next(self._call_ids)}" for _ in reply.calls]
            return reply, f"chatcmpl-scripted-{next(self._completion_ids)}"
