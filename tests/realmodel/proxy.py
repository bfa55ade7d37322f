"""A recording proxy between agentcli and the real model server, on 127.0.0.1.

It changes nothing: every request and answer passes through as it is. It keeps each chat
request as agentcli sent it, the status and time of its answer, and what the server sent
back (`Seen`: streamed or not, chunks, usage, finish reasons, a tool name repeated in every
delta, an error's message), so the tests can check what agentcli sent and report what it
had to handle.

It opens a new connection to the server for each request, so what a server does to a
keep-alive connection (closing it after a failed stream) does not reach agentcli through it:
a test of that talks to the server straight.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

KEEP = 1 << 20  # bytes of an answer kept to read it


@dataclass
class Seen:
    """What the server answered one chat request."""

    status: int
    seconds: float
    streamed: bool = False
    chunks: int = 0  # streamed chunks before [DONE]
    usage: bool = False  # the answer counted its tokens
    prompt_tokens: int | None = None  # the server's count of the request, if it said
    finish: list[str] = field(default_factory=list)
    repeated_names: int = 0  # streamed deltas that named the call again
    error: str = ""  # a refusal's message, on one line

    def quirks(self) -> list[str]:
        found = []
        if self.status != 200:
            found.append(f"HTTP {self.status}: {self.error[:160]}")
        if self.streamed and self.status == 200 and not self.chunks:
            found.append("empty stream")
        if self.streamed and self.chunks and not self.usage:
            found.append("no usage when streaming")
        if self.repeated_names:
            found.append(f"tool name repeated in {self.repeated_names} deltas")
        if "length" in self.finish:
            found.append('finish_reason "length"')
        return found


def read(status: int, seconds: float, kind: str, raw: bytes) -> Seen:
    seen = Seen(status, seconds, streamed=kind.startswith("text/event-stream"))
    if status != 200:
        try:
            body = json.loads(raw)
            inner = body.get("error", body) if isinstance(body, dict) else body
            message = inner.get("message", inner) if isinstance(inner, dict) else inner
        except ValueError:
            message = raw.decode(errors="replace")
        seen.error = " ".join(str(message).split())
        return seen
    if not seen.streamed:
        body = json.loads(raw)
        seen.usage = bool(body.get("usage"))
        seen.prompt_tokens = (body.get("usage") or {}).get("prompt_tokens")
        seen.finish = [str(c.get("finish_reason")) for c in body.get("choices") or []]
        return seen
    named: set[int] = set()
    for line in raw.decode(errors="replace").splitlines():
        data = line.removeprefix("data:").strip()
        if not line.startswith("data:") or data == "[DONE]":
            continue
        chunk = json.loads(data)
        seen.chunks += 1
        seen.usage = seen.usage or bool(chunk.get("usage"))
        if chunk.get("usage"):
            seen.prompt_tokens = chunk["usage"].get("prompt_tokens")
        for choice in chunk.get("choices") or []:
            if choice.get("finish_reason"):
                seen.finish.append(choice["finish_reason"])
            for call in (choice.get("delta") or {}).get("tool_calls") or []:
                if (call.get("function") or {}).get("name"):
                    index = call.get("index", 0)
                    seen.repeated_names += index in named
                    named.add(index)
    return seen


class Proxy:
    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")  # http://127.0.0.1:PORT
        self.requests: list[dict[str, Any]] = []  # chat requests, as agentcli sent them
        self.seen: list[Seen] = []  # what the server answered each, same order
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def handle(self) -> None:
                try:
                    super().handle()
                except ConnectionError:  # a client hanging up is normal
                    pass

            def do_GET(self) -> None:
                self._forward(None)

            def do_POST(self) -> None:
                self._forward(self.rfile.read(int(self.headers.get("Content-Length") or 0)))

            def _forward(self, data: bytes | None) -> None:
                chat = self.path.endswith("/chat/completions")
                if chat:
                    proxy.requests.append(json.loads(data or b"{}"))
                request = urllib.request.Request(
                    proxy.upstream + self.path,
                    data=data,
                    method=self.command,
                    headers={"Content-Type": "application/json"},
                )
                start = time.monotonic()
                try:
                    answer = urllib.request.urlopen(request, timeout=900)
                except urllib.error.HTTPError as error:
                    answer = error
                kind = answer.headers.get("Content-Type", "application/json")
                self.send_response(answer.status)
                self.send_header("Content-Type", kind)
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                kept = bytearray()
                while chunk := answer.read1(65536) if hasattr(answer, "read1") else answer.read():
                    kept += chunk[: max(0, KEEP - len(kept))]
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
                if chat:
                    seconds = round(time.monotonic() - start, 1)
                    proxy.seen.append(read(answer.status, seconds, kind, bytes(kept)))

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    @property
    def statuses(self) -> list[int]:
        return [seen.status for seen in self.seen]

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
