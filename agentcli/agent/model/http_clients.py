"""The HTTP clients that talk to the model server, and the TLS they need.

An httpx client builds a TLS context of its own and loads the trusted CA certificates into
it, about 0.05 s of CPU each time. A run made three: langchain-openai's sync and async
clients for the model, and the context window's probe. Now:

- an `https://` server: the three share one context, built once a process, as the OpenAI
  SDK builds its own (httpx2's `create_ssl_context`: SSL_CERT_FILE, SSL_CERT_DIR, else the
  system's store), so the requests trust what they trusted before;
- an `http://` server (a local one, mostly): its answers' redirects are not followed, so no
  request ever leaves that plain-HTTP address and no TLS is spoken to the server; the
  clients get a context that trusts nothing, which fails any handshake, and no certificate
  is loaded. A redirect is an error that names where it leads (chat_model.explain).
  A TLS proxy from the environment is unaffected: httpx gives it a context of its own.

Otherwise the model's clients are the SDK's defaults with the request timeout, proxies from
the environment included. langchain-openai's own also set TCP keepalive, which notices a
server gone silent within about two minutes; the read timeout (`[model] timeout`, 60 s by
default) notices it first.
"""

from __future__ import annotations

import functools
import ssl
from typing import Any
from urllib.parse import urlsplit


@functools.cache
def tls_context() -> ssl.SSLContext:
    import httpx2

    return httpx2.create_ssl_context()


def plain_http(url: str) -> bool:
    return urlsplit(url).scheme.lower() == "http"


def tls_for(url: str) -> ssl.SSLContext:
    """The context for requests to `url` that follow no redirect to another address."""
    if plain_http(url):
        return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # verifies, and trusts nothing
    return tls_context()


def model_clients(base_url: str, timeout: float) -> dict[str, Any]:
    """ChatOpenAI's `http_client` and `http_async_client` for the server at `base_url`."""
    import openai

    settings: dict[str, Any] = {
        "base_url": base_url,
        "timeout": timeout,
        "verify": tls_for(base_url),
        "follow_redirects": not plain_http(base_url),
    }
    return {
        "http_client": openai.DefaultHttpxClient(**settings),
        "http_async_client": openai.DefaultAsyncHttpxClient(**settings),
    }
