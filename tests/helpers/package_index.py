"""A PEP 503 (simple layout) package index on 127.0.0.1 serving one tiny wheel it builds.

    with PackageIndex() as index:
        index.url  # http://127.0.0.1:PORT/simple/
        ... pip install --index-url index.url PROJECT ...
        index.paths  # the paths pip asked for

The wheel (PROJECT 1.0, py3-none-any) holds one module, MODULE, whose VALUE is MARK; its
RECORD has each file's hash, so pip installs it as it would any wheel.
"""

from __future__ import annotations

import base64
import hashlib
import io
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType

PROJECT = "agentcli-probe"
MODULE = "agentcli_probe"
MARK = "installed-through-the-egress-proxy"
WHEEL = f"{MODULE}-1.0-py3-none-any.whl"


def _digest(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def build_wheel() -> bytes:
    """The wheel's bytes: the module, METADATA, WHEEL and RECORD."""
    info = f"{MODULE}-1.0.dist-info"
    files = {
        f"{MODULE}/__init__.py": f"VALUE = {MARK!r}\n".encode(),
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {PROJECT}\nVersion: 1.0\n".encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\n"
        b"Tag: py3-none-any\n",
    }
    record = "".join(f"{name},sha256={_digest(data)},{len(data)}\n" for name, data in files.items())
    files[f"{info}/RECORD"] = (record + f"{info}/RECORD,,\n").encode()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as wheel:
        for name, data in files.items():
            wheel.writestr(name, data)
    return buffer.getvalue()


class PackageIndex:
    def __init__(self) -> None:
        wheel = build_wheel()
        page = f'<!DOCTYPE html><html><body><a href="/files/{WHEEL}#sha256='
        page += f'{hashlib.sha256(wheel).hexdigest()}">{WHEEL}</a></body></html>'
        routes = {
            "/simple/": f'<a href="/simple/{PROJECT}/">{PROJECT}</a>'.encode(),
            f"/simple/{PROJECT}/": page.encode(),
            f"/files/{WHEEL}": wheel,
        }
        self.paths: list[str] = []
        self.hosts: list[str] = []
        index = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the http.server name
                index.paths.append(self.path)
                index.hosts.append(self.headers.get("Host", ""))
                body = routes.get(self.path)
                self.send_response(200 if body is not None else 404)
                kind = "application/octet-stream" if self.path.endswith(".whl") else "text/html"
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body or b"")))
                self.end_headers()
                self.wfile.write(body or b"")

            def log_message(self, *_: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/simple/"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> PackageIndex:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
