"""The HTTP clients that talk to the model server: one TLS context for the whole process.

An httpx client builds a TLS context of its own and loads the trusted CA certificates into
it, about 0.05 s of CPU each time. A run made three: langchain-openai's sync and async
clients for the model, and the context window's probe. They now share one, built once, as
the OpenAI SDK builds its own (httpx2's `create_ssl_context`: SSL_CERT_FILE, SSL_CERT_DIR,
else the system's store), so the model's requests trust what they trusted before, and the
probes trust the same.

Otherwise the model's clients are the SDK's defaults with the request timeout, proxies from
the environment included. langchain-openai's own also set TCP keepalive, which notices a
server gone silent within about two minutes; the read timeout (`[model] timeout`, 60 s by
default) notices it first.
"""

from __future__ import annotations

import functools
import ssl
from typing import Any


@functools.cache
def tls_context() -> ssl.SSLContext:
    import httpx2

    return httpx2.create_ssl_context()


def model_clients(base_url: str, timeout: float) -> dict[str, Any]:
    """ChatOpenAI's `http_client` and `http_async_client`, sharing `tls_context()`."""
    import openai

    verify = tls_context()
    return {
        "http_client": openai.DefaultHttpxClient(base_url=base_url, timeout=timeout, verify=verify),
        "http_async_client": openai.DefaultAsyncHttpxClient(
            base_url=base_url, timeout=timeout, verify=verify
        ),
    }
