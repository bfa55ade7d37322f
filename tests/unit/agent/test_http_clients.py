"""The model's HTTP clients share one TLS context a process (agent/model/http_clients.py):
trusted certificates are loaded once, from where the OpenAI SDK would load them."""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Any

import certifi
import pytest

import agentcli.agent.model.compatible_chat  # noqa: F401 (langchain-openai: a context at import)
from agentcli.agent.context.window import probe
from agentcli.agent.model.chat_model import make_model
from agentcli.agent.model.http_clients import tls_context, tls_for
from agentcli.config import Settings
from tests.helpers.ports import reserved_port


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    """Each load of trusted certificates into a TLS context, from a fresh process's start."""
    seen: list[tuple[Any, ...]] = []
    real = ssl.SSLContext.load_verify_locations

    def load(self: ssl.SSLContext, *args: Any, **kwargs: Any) -> None:
        seen.append((*args, *kwargs.values()))
        real(self, *args, **kwargs)

    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", load)
    tls_context.cache_clear()
    yield seen
    tls_context.cache_clear()


def test_an_https_servers_clients_and_probe_load_the_certificates_once(
    loads: list[tuple[Any, ...]],
) -> None:
    url = f"https://127.0.0.1:{reserved_port()}/v1"
    for model in ("a", "b"):
        chat: Any = make_model(Settings(base_url=url, model=model))
        assert chat.root_client._client.follow_redirects
    assert probe(url, "a") is None  # nothing listens: unknown, never an error
    assert len(loads) == 1
    context = tls_context()
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    assert context.get_ca_certs()  # it trusts the system's authorities


def test_a_plain_http_server_needs_no_certificates_and_is_never_left(
    loads: list[tuple[Any, ...]],
) -> None:
    url = f"HTTP://127.0.0.1:{reserved_port()}/v1"  # the scheme in any case
    chat: Any = make_model(Settings(base_url=url, model="m"))
    assert probe(url, "m") is None
    assert loads == []
    for client in (chat.root_client._client, chat.root_async_client._client):
        assert not client.follow_redirects
    context = tls_for(url)  # what they would use if TLS were ever spoken: it trusts nothing
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    assert context.get_ca_certs() == []


def test_the_certificates_are_the_ones_ssl_cert_file_names(
    loads: list[tuple[Any, ...]], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    bundle = tmp_path / "company-ca.pem"
    bundle.write_bytes(Path(certifi.where()).read_bytes())
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    make_model(Settings(base_url="https://models.example.com/v1", model="m"))
    assert loads == [(str(bundle), None, None)]
