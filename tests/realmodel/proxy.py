"""A recording proxy between agentcli and the real model server, on 127.0.0.1.

It keeps every chat request and the status it got (what agentcli sent, as the server saw
it), and can add fields to the next requests: `tool_choice` (llama-cpp-python's
chatml-function-calling ignores `tools` without it) and `max_tokens` (a small model may
ramble until its window is full). agentcli has no setting for either yet (issue 16, item
1, is another branch's), so the suite sets them here. For the same reason it sends `""`
for an assistant message's `content: null`, which llama-cpp-python's server refuses (HTTP
500, validation errors: item 3, also another branch's).
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Proxy:
    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")  # http://127.0.0.1:PORT
        self.requests: list[dict[str, Any]] = []
        self.statuses: list[int] = []
        self.seconds: list[float] = []  # how long each chat request took the server
        self.extra: dict[str, Any] = {}  # added to every chat request
        self.once: list[dict[str, Any]] = []  # added to the next requests, one each
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
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                body = json.loads(raw or b"{}")
                if self.path.endswith("/chat/completions"):
                    body.update(proxy.extra)
                    for message in body.get("messages", []):
                        if message.get("role") == "assistant" and message.get("content") is None:
                            message["content"] = ""
                    if proxy.once:
                        body.update(proxy.once.pop(0))
                    proxy.requests.append(body)
                self._forward(json.dumps(body).encode())

            def _forward(self, data: bytes | None) -> None:
                request = urllib.request.Request(
                    proxy.upstream + self.path,
                    data=data,
                    method=self.command,
                    headers={"Content-Type": "application/json"},
                )
                start = time.monotonic()
                try:
                    answer = urllib.request.urlopen(request, timeout=600)
                except urllib.error.HTTPError as error:
                    answer = error
                if self.path.endswith("/chat/completions"):
                    proxy.statuses.append(answer.status)
                self.send_response(answer.status)
                kind = answer.headers.get("Content-Type", "application/json")
                self.send_header("Content-Type", kind)
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                while chunk := answer.read1(65536) if hasattr(answer, "read1") else answer.read():
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
                if self.path.endswith("/chat/completions"):
                    proxy.seconds.append(round(time.monotonic() - start, 1))

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
