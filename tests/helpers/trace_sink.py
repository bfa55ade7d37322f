"""A local stand-in for the LangSmith API that keeps, decoded, every body it is sent.

    with TraceSink(compressed=True) as sink:
        env |= sink.env()  # LANGSMITH_TRACING=true, LANGSMITH_ENDPOINT=http://127.0.0.1:PORT
        ... run agentcli ...
        assert b"secret" not in sink.received()

GET /info says whether the client may compress (``zstd_compression_enabled``) and
whether it may use the multipart endpoint; every other request is answered 200 with
``{}``. A body is undone as the client made it: ``Content-Encoding`` (zstd, gzip,
deflate) first, then, for ``multipart/form-data``, each part's own encoding. What is kept
is the decoded bytes: the parts' headers and payloads, so a test looks at what left.
"""

from __future__ import annotations

import gzip
import json
import threading
import zlib
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import zstandard


class TraceSink:
    def __init__(self, *, compressed: bool = True, multipart: bool = True) -> None:
        self.compressed, self.multipart = compressed, multipart
        self.bodies: list[bytes] = []
        self.paths: list[str] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> TraceSink:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def env(self) -> dict[str, str]:
        return {
            "LANGSMITH_TRACING": "true",
            "LANGSMITH_ENDPOINT": self.url,
            "LANGSMITH_API_KEY": "lsv2-fake-key-for-the-sink",
            "LANGSMITH_PROJECT": "agentcli-tests",
        }

    def received(self) -> bytes:
        with self._lock:
            return b"\n".join(self.bodies)

    def _info(self) -> dict[str, Any]:
        return {
            "version": "0.10.0",
            "instance_flags": {"zstd_compression_enabled": self.compressed},
            "batch_ingest_config": {
                "use_multipart_endpoint": self.multipart,
                "size_limit": 100,
                "size_limit_bytes": 20_000_000,
                "scale_up_nthreads_limit": 16,
                "scale_up_qsize_trigger": 1000,
                "scale_down_nempty_trigger": 4,
            },
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        sink = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                self._answer(sink._info() if self.path.startswith("/info") else {})

            def do_POST(self) -> None:
                body = self._body()
                decoded = _decoded(body, self.headers)
                with sink._lock:
                    sink.bodies.append(decoded)
                    sink.paths.append(self.path)
                self._answer({})

            do_PATCH = do_PUT = do_POST

            def _body(self) -> bytes:
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    data = bytearray()
                    while True:
                        size = int(self.rfile.readline().strip().split(b";")[0], 16)
                        data += self.rfile.read(size)
                        self.rfile.readline()
                        if size == 0:
                            return bytes(data)
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))

            def _answer(self, document: dict[str, Any]) -> None:
                data = json.dumps(document).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


def _undo(data: bytes, encoding: str) -> bytes:
    for step in reversed([e.strip().lower() for e in encoding.split(",") if e.strip()]):
        if step == "zstd":
            data = zstandard.ZstdDecompressor().decompressobj().decompress(data)
        elif step in ("gzip", "x-gzip"):
            data = gzip.decompress(data)
        elif step == "deflate":
            data = zlib.decompress(data)
        elif step != "identity":
            raise AssertionError(f"trace sink: unknown Content-Encoding {step!r}")
    return data


def _decoded(body: bytes, headers: Any) -> bytes:
    """The body with its encodings undone; a multipart body as its parts, each undone."""
    data = _undo(body, headers.get("Content-Encoding", ""))
    kind = headers.get("Content-Type", "")
    if not kind.startswith("multipart/"):
        return data
    message = BytesParser(policy=HTTP).parsebytes(f"Content-Type: {kind}\r\n\r\n".encode() + data)
    assert message.is_multipart(), "trace sink: a multipart body that does not parse"
    parts = []
    for part in message.iter_parts():
        payload = part.get_payload(decode=True) or b""
        payload = _undo(payload, part.get("Content-Encoding", ""))
        parts.append(f"{part.get('Content-Disposition', '')}\n".encode() + payload)
    return b"\n".join(parts)
