"""The session's secrets: what tools never get, and what is redacted from what is stored.

`session_redactor` collects, once per session, the values to keep out of tool results,
checkpoints, the thread index and the terminal: the model's API key (under the name it was
read from), every credential-looking environment variable (tools.environment.is_credential),
the password of the database URL, the credential values of MCP server tables, and the
values of the OpenTelemetry collector's headers (OTEL_EXPORTER_OTLP_*HEADERS: an API key,
a bearer token). The model's key is also "protected": no tool environment carries it,
under any name.

`hide_environment` makes this process non-dumpable, so that a tool process of the same
(non-root) user cannot read agentcli's initial environment from /proc/PID/environ (nor its
memory). Root, and anything with CAP_SYS_PTRACE, still can: the redactor is the second line.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import unquote

from agentcli_tools.environment import is_credential, tool_environment
from agentcli_tools.redaction import Redactor, environment_secrets

from agentcli.config import Settings

MODEL_KEY_VARIABLE = "OPENAI_API_KEY"
NEVER_PASS = ("AGENTCLI_*", MODEL_KEY_VARIABLE)
"""Variables no tool gets, even if env_passthrough names them."""

PR_SET_DUMPABLE = 4
# the OTLP exporter's headers (`k=v,k2=v2`, values percent-encoded): the collector's keys
OTLP_HEADERS = tuple(
    f"OTEL_EXPORTER_OTLP_{signal}HEADERS" for signal in ("", "TRACES_", "METRICS_", "LOGS_")
)


def session_redactor(settings: Settings, environ: Mapping[str, str] | None = None) -> Redactor:
    environ = os.environ if environ is None else environ
    secrets: list[tuple[str, str]] = []
    protected: list[str] = []
    if settings.api_key:
        source = settings.sources.get("model.api_key", "")
        label = source if source.isidentifier() else "model.api_key"
        secrets.append((label, settings.api_key))
        protected.append(settings.api_key)
    if environ.get(MODEL_KEY_VARIABLE):
        secrets.append((MODEL_KEY_VARIABLE, environ[MODEL_KEY_VARIABLE]))
        protected.append(environ[MODEL_KEY_VARIABLE])
    secrets += environment_secrets(environ)
    secrets += otlp_header_secrets(environ)
    if settings.db:
        secrets.append(("storage.db", settings.db))
    for name, server in settings.mcp_servers.items():
        for key, value in server.get("env", {}).items():
            if is_credential(key, value):
                secrets.append((f"mcp.servers.{name}.env.{key}", value))
        for key, value in server.get("headers", {}).items():
            secrets.append((f"mcp.servers.{name}.headers.{key}", value))
    return Redactor(secrets, protected=protected)


def otlp_header_secrets(environ: Mapping[str, str]) -> list[tuple[str, str]]:
    """Each OTLP header's value, decoded, and its last word alone ("Bearer TOKEN")."""
    found = []
    for name in OTLP_HEADERS:
        for pair in environ.get(name, "").split(","):
            _, equals, value = pair.partition("=")
            value = unquote(value).strip()
            if equals and value:
                found += [(name, value), (name, value.split()[-1])]
    return found


def tools_environment(settings: Settings) -> dict[str, str]:
    """The environment of MCP stdio servers (before their own `env` table): as a shell
    command's, the minimal set plus [tools] env_passthrough, never the model's key."""
    keys = (settings.api_key or "", os.environ.get(MODEL_KEY_VARIABLE, ""))
    return tool_environment(settings.env_passthrough, never=NEVER_PASS, never_values=keys)


def redact_saved_errors(saver: Any, redactor: Redactor) -> None:
    """Make ``saver`` store a failed task's error (LangGraph keeps it with the checkpoint:
    a model error quoting the key, say) as its redacted text. The saver is the store's,
    shared by sessions of one process: it is wrapped once and uses the latest redactor."""
    from agentcli.threads.langgraph_internals import ERROR_CHANNEL, rewrite_writes

    saver._agentcli_redactor = redactor
    if getattr(saver, "_agentcli_redacts", False):
        return
    saver._agentcli_redacts = True

    def clean(writes: Sequence[tuple[str, Any]]) -> list[tuple[str, Any]]:
        redact = saver._agentcli_redactor
        return [
            (channel, redact(repr(value)) if channel == ERROR_CHANNEL and redact else value)
            for channel, value in writes
        ]

    rewrite_writes(saver, clean)  # loaded with the saver


def hide_environment() -> None:
    """Make this process non-dumpable (Linux): its /proc/PID/environ, mem and the like
    become readable only with CAP_SYS_PTRACE. Children that exec get their own setting."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    except (OSError, AttributeError):  # no prctl: nothing to hide it with
        return
