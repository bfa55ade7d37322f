"""What leaves agentcli besides the model's requests passes the redactor (issue 25, item 5):
LangSmith traces (to a local sink that decodes what it gets: zstd, multipart, or plain
JSON batches), the notify document, `threads export` / `show`, `audit`, and the --debug
traceback. Each run puts secrets, plain and encoded, where that channel reads from (a
tool's output, the model's arguments or answer, the person's message, a model error) and
checks with tests/helpers/leaks.py that none left, and that the channel did carry the
redacted text (so the check is not vacuous).
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import Agent
from tests.helpers import ENV_MCP_SERVER
from tests.helpers.leaks import exposed
from tests.helpers.scripted_server import error, text, tool_calls
from tests.helpers.trace_sink import TraceSink

KEY = "sk-test-Zq8vW3kP1xN7mR4tY6uB9cE2"
PASSWORD = 'p@ss/w0rd "q" & more+=x?'
MCP_TOKEN = "mcp-token-Hq2Lw9Zx4Vb7Nm1Kj5"
VALUES = [KEY, PASSWORD, MCP_TOKEN]


def b64(value: str, before: bytes = b"") -> str:
    return base64.b64encode(before + value.encode()).decode()


def _config(agent: Agent, extra: str = "") -> Path:
    config = Path(agent.env["XDG_CONFIG_HOME"]) / "agentcli" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        f"[mcp.servers.envsrv]\ncommand = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(ENV_MCP_SERVER)}]\n"
        f"env = {{ SERVICE_TOKEN = {json.dumps(MCP_TOKEN)}, ENV_STDERR = '1' }}\n{extra}"
    )
    return config


def _prepare(agent: Agent, extra: str = "") -> None:
    agent.env.update(OPENAI_API_KEY=KEY, SERVICE_PASSWORD=PASSWORD)
    _config(agent, extra)
    (agent.workspace / "notes.txt").write_text(
        f"key={KEY}\nkey64={b64(KEY, b'x')}\npassword={PASSWORD}\n"
        f"password64={b64(PASSWORD)}\nhex={KEY.encode().hex().upper()}\n"
    )


SINKS = {
    "zstd-multipart": {"compressed": True, "multipart": True},
    "multipart": {"compressed": False, "multipart": True},
    "json-batch": {"compressed": False, "multipart": False},
}


@pytest.mark.parametrize("sink_kind", list(SINKS))
def test_traces_carry_no_secret(agent: Agent, sink_kind: str) -> None:
    """Tool output (read_file, shell, an MCP tool), the model's answer and an error
    quoting secrets, traced with LANGSMITH_TRACING=true: what reaches the endpoint is
    redacted, plain and encoded."""
    _prepare(agent)
    with TraceSink(**SINKS[sink_kind]) as sink:
        agent.env.update(sink.env())
        agent.server.push(
            tool_calls(
                ("read_file", {"path": "notes.txt"}),
                ("shell", {"command": "cat notes.txt | base64; xxd -p notes.txt"}),
                ("envsrv__environment", {}),
            ),
            text(f"done; the key in hex is {KEY.encode().hex()} and {b64(PASSWORD, b'ab')}"),
        )
        result = agent.run("run", "go", "-y")
        assert result.returncode == 0, result.stderr
        sent = sink.received()
    assert sink.paths, "no trace reached the sink"
    assert exposed(sent, VALUES) == []
    for label in ("OPENAI_API_KEY]", "SERVICE_PASSWORD]", "SERVICE_TOKEN]", "as base64]"):
        assert label.encode() in sent, label  # each was traced, redacted


def test_the_notify_document_carries_no_secret(agent: Agent, tmp_path: Path) -> None:
    told = tmp_path / "told.json"
    _prepare(agent, f"\n[notify]\ncommand = {json.dumps(f'cat > {told}')}\n")
    command = f"curl -H 'Authorization: Bearer {KEY}' -d {b64(PASSWORD, b'a')} x"
    agent.server.push(tool_calls(("shell", {"command": command})))
    parked = agent.run("run", "go")
    assert parked.returncode == 3, parked.stderr
    document = told.read_text()
    assert exposed(document, VALUES) == []
    assert "[redacted OPENAI_API_KEY]" in document
    assert "[redacted SERVICE_PASSWORD as base64]" in document


def test_exports_and_audit_carry_no_secret(agent: Agent) -> None:
    """The person's message, the model's arguments and answer hold secrets (stored as
    they were: they are the thread); what the commands print does not."""
    _prepare(agent)
    hexed = PASSWORD.encode().hex()
    agent.server.push(
        tool_calls(("shell", {"command": f"echo {b64(KEY, b'ab')} {hexed} >/dev/null"})),
        text(f"used {KEY} and %{'%'.join(f'{b:02X}' for b in KEY.encode())}"),
    )
    assert agent.run("run", f"here is my key {KEY}", "-y").returncode == 0
    thread = json.loads(agent.run("threads", "list", "--json").stdout)[0]["thread_id"]
    outputs = {}
    for args in (
        ("threads", "export", thread, "-f", "json"),
        ("threads", "export", thread, "-f", "md"),
        ("threads", "show", thread, "--json"),
        ("threads", "show", thread),
        ("audit", "--json"),
        ("audit",),
    ):
        result = agent.run(*args)
        assert result.returncode == 0, (args, result.stderr)
        outputs[" ".join(args)] = result.stdout + result.stderr
    for what, output in outputs.items():
        assert exposed(output, VALUES) == [], what
        assert "[redacted" in output, what


def test_the_debug_traceback_carries_no_secret(agent: Agent) -> None:
    _prepare(agent)
    agent.server.push(error(400, f"bad key {KEY} ({b64(KEY, b'a')}, {KEY.encode().hex()})"))
    result = agent.run("run", "go", "-y", "--debug")
    assert result.returncode == 1
    assert "Traceback" in result.stderr
    assert exposed(result.stderr, VALUES) == []
    assert "[redacted OPENAI_API_KEY as base64]" in result.stderr


def test_an_mcp_servers_log_carries_no_secret(agent: Agent) -> None:
    """The server prints its environment (its token) to stderr, plain and in base64 wrapped
    at 76: its log file in the data folder gets them redacted."""
    _prepare(agent)
    agent.server.push(tool_calls(("envsrv__environment", {})), text("done"))
    assert agent.run("run", "go", "-y").returncode == 0
    logs = Path(agent.env["XDG_DATA_HOME"]) / "agentcli" / "logs"
    written = b"".join(path.read_bytes() for path in logs.glob("mcp-envsrv.log*"))
    assert b"PATH=" in written  # the server did print its environment
    assert exposed(written, VALUES) == []
    assert b"[redacted mcp.servers.envsrv.env.SERVICE_TOKEN" in written
    assert b"as base64]" in written
