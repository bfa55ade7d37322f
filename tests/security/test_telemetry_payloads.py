"""What the OpenTelemetry export sends (agentcli/telemetry/) holds no secret and no tool
argument, tool output or model text: the installed command runs against the scripted
model server with an OTLP/HTTP receiver on 127.0.0.1 that keeps every byte it is sent
(tests/helpers/otlp_receiver.py), and tests/helpers/leaks.py looks for the secrets in
them, as is and encoded.

Each payload plants a secret (a credential of the environment, DEPLOY_TOKEN, which the
session's redactor knows) where one attribute or another is made from: a tool's argument,
its output, the model's text, an argument's name, a tool's name, a hook's command line (the
audit's `by`), the resource attributes, a model error that is retried. The collector's own
key (OTEL_EXPORTER_OTLP_HEADERS) goes to the collector as a header, never into a payload,
and is redacted from what the model reads.
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import Agent
from tests.helpers.leaks import exposed
from tests.helpers.otlp_receiver import attributes, receiving
from tests.helpers.scripted_server import Reply, error, text, tool_calls

SECRET = "dpl-Vq7Xw2Lk9Zr4Tn8Bm3Hs6Jc1"
HEADER_TOKEN = "otlp-key-Pf5Gd8Ks2Wq7Nx4Rz1"
MARK = "PLAINMARK-3b9c71"  # not a secret: what must not leave because it is content
HOOKS = Path(__file__).parents[1] / "helpers" / "claude_hooks"
REDACTED = b"[redacted DEPLOY_TOKEN"


def _replies(where: str) -> list[Reply]:
    done = text("done")
    return {
        "tool_argument": [tool_calls(("shell", {"command": f"echo {SECRET} {MARK}"})), done],
        "tool_output": [tool_calls(("read_file", {"path": "notes.txt"})), done],
        "model_text": [
            tool_calls(("shell", {"command": "true"}), content=f"now {SECRET} {MARK}"),
            text(f"said {SECRET} {MARK}"),
        ],
        "argument_name": [tool_calls(("shell", {"command": "true", SECRET: MARK})), done],
        "tool_name": [tool_calls((f"tool_{SECRET}", {"x": MARK})), done],
        "hook_command": [tool_calls(("read_file", {"path": "notes.txt"})), done],
        "resource": [done],
        "model_error": [error(400, f"bad request near {SECRET}"), done],
    }[where]


# where the secret is planted; True: it reaches an attribute's value (redacted there)
PAYLOADS = [
    ("tool_argument", False),
    ("tool_output", False),
    ("model_text", False),
    ("argument_name", True),
    ("tool_name", True),
    ("hook_command", True),
    ("resource", True),
    ("model_error", False),
]


@pytest.mark.parametrize(("where", "attribute"), PAYLOADS)
def test_no_secret_and_no_content_leaves_by_otlp(agent: Agent, where: str, attribute: bool) -> None:
    hook = f"HOOK_NOTE={SECRET} {sys.executable} {HOOKS / 'decide.py'} allow"
    config = Path(agent.env["XDG_CONFIG_HOME"]) / "agentcli" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    if where == "hook_command":
        config.write_text(f'[[hooks.PreToolUse]]\nmatcher = "Read"\ncommand = {json.dumps(hook)}\n')
    (agent.workspace / "notes.txt").write_text(
        f"{SECRET}\n{base64.b64encode(SECRET.encode()).decode()}\n{HEADER_TOKEN}\n{MARK}\n"
    )
    agent.server.push(*_replies(where))
    with receiving() as otlp:
        agent.env.update(
            otlp.env(),
            DEPLOY_TOKEN=SECRET,
            OTEL_EXPORTER_OTLP_HEADERS=f"authorization=Bearer%20{HEADER_TOKEN}",
        )
        if where == "resource":
            agent.env["OTEL_RESOURCE_ATTRIBUTES"] = f"deployment.note={SECRET}"
        flags = [] if where == "hook_command" else ["--auto-approve"]
        ran = agent.run("run", *flags, "go")
    assert ran.returncode in (0, 1), ran.stderr  # a model error may end the run
    sent = otlp.received()
    assert otlp.requests and not otlp.bad
    assert exposed(sent, [SECRET, HEADER_TOKEN]) == []
    assert MARK.encode() not in sent  # arguments, outputs and text are never attributes
    if attribute:  # the value did reach an attribute: redacted, so the check sees bytes
        assert REDACTED in sent, [attributes(s.attributes) for s in otlp.spans()]
    # the collector got its key as a header, as the person configured it
    assert all(h.get("authorization") == f"Bearer {HEADER_TOKEN}" for h in otlp.headers)


def test_the_collectors_key_is_redacted_from_what_the_model_reads(agent: Agent) -> None:
    (agent.workspace / "notes.txt").write_text(f"key: {HEADER_TOKEN}\n")
    agent.server.push(tool_calls(("read_file", {"path": "notes.txt"})), text("done"))
    agent.env["OTEL_EXPORTER_OTLP_TRACES_HEADERS"] = f"x-api-key={HEADER_TOKEN}"
    ran = agent.run("run", "--auto-approve", "read it")
    assert ran.returncode == 0, ran.stderr
    told = json.dumps(agent.server.requests[-1]["messages"])
    assert HEADER_TOKEN not in told and "[redacted OTEL_EXPORTER_OTLP_TRACES_HEADERS]" in told
