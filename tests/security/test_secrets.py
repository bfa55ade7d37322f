"""Secrets reaching tools (issue 13, item 6): the model's API key and other credentials in
agentcli's environment must not reach a tool's environment, the model server, the data
folder or stdout, whatever an approved command prints; a passthrough variable does reach
the tool.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import sys
from pathlib import Path

import pytest
from agentcli_tools.environment import tool_environment
from agentcli_tools.redacted_stream import RedactedStream
from agentcli_tools.redaction import Redactor
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.e2e.conftest import Agent
from tests.helpers import ENV_MCP_SERVER
from tests.helpers.leaks import shown_in_chunks
from tests.helpers.scripted_server import error, text, tool_calls
from tests.helpers.stored import data_bytes

KEY = "sk-test-Zq8vW3kP1xN7mR4tY6uB9cE2"
SECRETS = {
    "OPENAI_API_KEY": KEY,
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY",
    "GITHUB_TOKEN": "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
    "DATABASE_URL": "postgresql://app:Pa55w0rd-db-secret@db.internal/app",
}
VISIBLE = "passthrough-value-4711"

# Each command is approved (-y) and run by the shell tool; each tries to get a secret out.
PAYLOADS = [
    "echo $OPENAI_API_KEY",
    "echo ${OPENAI_API_KEY:-unset} $AWS_SECRET_ACCESS_KEY $GITHUB_TOKEN $DATABASE_URL",
    "env",
    "printenv",
    "set",
    "declare -p",
    "export -p",
    "cat /proc/$PPID/environ | tr '\\0' '\\n'",
    "cat /proc/$$/environ | tr '\\0' '\\n'",
    # agentcli itself, the supervisor's parent: readable only as root (non-dumpable otherwise),
    # then the redactor is what stops it
    "tr '\\0' '\\n' < /proc/$(awk '{print $4}' /proc/$PPID/stat)/environ",
    "for p in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $p; done 2>/dev/null | grep -a KEY",
    "cat ~/.bashrc",  # the person's own file, holding the key: redacted in the result
    "cat ~/.bashrc >&2; exit 7",
    f"printf '%s' {KEY[:12]}; sleep 0.3; printf '%s\\n' {KEY[12:]}",  # split across chunks
    "python3 -c 'import os; print(os.environ)'",
    "echo $AGENTCLI_DB $AGENTCLI_CONFIG",
]


def _data_bytes(agent: Agent) -> bytes:
    """Every file agentcli keeps: the data folder (the database, its WAL) and the config
    folder (the person's ~/.bashrc, which holds the key, is elsewhere in the home)."""
    folders = [Path(agent.env["XDG_DATA_HOME"]), Path(agent.env["XDG_CONFIG_HOME"])]
    return data_bytes(*folders)  # the database's values decompressed too


def _leaks(blob: bytes | str, values: list[str]) -> list[str]:
    data = blob.encode() if isinstance(blob, str) else blob
    return [value for value in values if value.encode() in data]


def _with_secrets(agent: Agent) -> None:
    agent.env.update(SECRETS)
    agent.env["AGENTCLI_DB"] = str(Path(agent.env["XDG_DATA_HOME"]) / "agentcli" / "threads.db")
    home = Path(agent.env["HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / ".bashrc").write_text(f"export OPENAI_API_KEY={KEY}\n")


@pytest.mark.parametrize("command", PAYLOADS)
def test_no_secret_leaves_through_a_shell_command(agent: Agent, command: str) -> None:
    _with_secrets(agent)
    agent.server.push(tool_calls(("shell", {"command": command})), text("done"))
    result = agent.run("run", "go", "-y", "-o", "jsonl")
    assert result.returncode == 0, result.stderr
    assert len(agent.server.requests) == 2  # the command ran and its result went back
    sent = json.dumps(agent.server.requests)
    values = list(SECRETS.values()) + ["Pa55w0rd-db-secret"]
    assert _leaks(sent, values) == []
    assert _leaks(result.stdout, values) == []
    assert _leaks(result.stderr, values) == []
    assert _leaks(_data_bytes(agent), values) == []


def test_redacted_results_still_say_what_was_there(agent: Agent) -> None:
    """Legitimate use: the result is kept, only the value is replaced, and the minimal
    environment (PATH, HOME) is there for commands to work."""
    _with_secrets(agent)
    agent.server.push(
        tool_calls(("shell", {"command": "cat ~/.bashrc; echo home=$HOME; ls / | head -1"})),
        text("done"),
    )
    assert agent.run("run", "go", "-y").returncode == 0
    result = agent.server.requests[1]["messages"][-1]["content"]
    assert "export OPENAI_API_KEY=[redacted OPENAI_API_KEY]" in result
    assert f"home={agent.env['HOME']}" in result and "exit code 0" in result


def test_a_passthrough_variable_reaches_the_tool_and_others_do_not(agent: Agent) -> None:
    _with_secrets(agent)
    agent.env.update(MY_VISIBLE=VISIBLE, MY_HIDDEN="hidden-value-0815", NPM_CONFIG_X="npm-1")
    config = Path(agent.env["XDG_CONFIG_HOME"]) / "agentcli" / "config.toml"
    config.parent.mkdir(parents=True)
    # a glob does not pull in credential-looking names; OPENAI_API_KEY never passes
    config.write_text(
        '[tools]\nenv_passthrough = ["MY_VISIBLE", "NPM_*", "GITHUB_*", "*KEY*",'
        ' "OPENAI_API_KEY", "AGENTCLI_*"]\n'
    )
    agent.server.push(tool_calls(("shell", {"command": "env"})), text("done"))
    assert agent.run("run", "go", "-y").returncode == 0
    result = agent.server.requests[1]["messages"][-1]["content"]
    assert f"MY_VISIBLE={VISIBLE}" in result and "NPM_CONFIG_X=npm-1" in result
    names = {line.split("=")[0] for line in result.splitlines()}
    assert not names & {"MY_HIDDEN", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "OPENAI_API_KEY"}
    assert not any(name.startswith("AGENTCLI_") for name in names)


def test_an_exact_passthrough_name_is_the_persons_call_but_its_value_is_redacted(
    agent: Agent,
) -> None:
    _with_secrets(agent)
    config = Path(agent.env["XDG_CONFIG_HOME"]) / "agentcli" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('[tools]\nenv_passthrough = ["GITHUB_TOKEN"]\n')
    command = 'test -n "$GITHUB_TOKEN" && echo has-token; echo $GITHUB_TOKEN'
    agent.server.push(tool_calls(("shell", {"command": command})), text("done"))
    assert agent.run("run", "go", "-y").returncode == 0
    result = agent.server.requests[1]["messages"][-1]["content"]
    assert "has-token" in result and "[redacted GITHUB_TOKEN]" in result
    assert SECRETS["GITHUB_TOKEN"] not in json.dumps(agent.server.requests)


def test_an_mcp_stdio_server_gets_the_scrubbed_environment(agent: Agent) -> None:
    _with_secrets(agent)
    agent.env["MY_VISIBLE"] = VISIBLE
    dump = agent.workspace / "server-env.txt"
    server = Path(ENV_MCP_SERVER)
    config = Path(agent.env["XDG_CONFIG_HOME"]) / "agentcli" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(
        f'[tools]\nenv_passthrough = ["MY_VISIBLE"]\n\n[mcp.servers.envsrv]\n'
        f"command = {json.dumps(sys.executable)}\nargs = [{json.dumps(str(server))}]\n"
        f"env = {{ ENV_DUMP = {json.dumps(str(dump))} }}\n"
    )
    agent.server.push(tool_calls(("envsrv__environment", {})), text("done"))
    result = agent.run("run", "go", "-y")
    assert result.returncode == 0, result.stderr
    seen = dump.read_text()
    assert f"MY_VISIBLE={VISIBLE}" in seen and "PATH=" in seen
    assert _leaks(seen, list(SECRETS.values())) == []
    assert _leaks(json.dumps(agent.server.requests), list(SECRETS.values())) == []
    assert "MY_VISIBLE" in agent.server.requests[1]["messages"][-1]["content"]


def test_an_error_quoting_the_key_is_stored_redacted(agent: Agent) -> None:
    _with_secrets(agent)
    agent.server.push(error(400, f"bad request for key {KEY}"))
    result = agent.run("run", "go", "-y")
    assert result.returncode == 1
    assert KEY not in result.stderr and "[redacted OPENAI_API_KEY]" in result.stderr
    assert _leaks(_data_bytes(agent), [KEY]) == []
    listed = json.loads(agent.run("threads", "list", "--json").stdout)
    assert "[redacted OPENAI_API_KEY]" in listed[0]["last_error"]


def test_an_encoded_copy_of_agentclis_environment_does_not_leave(agent: Agent) -> None:
    """agentcli is non-dumpable and the supervisors start with an empty environment, and a
    confined command has no CAP_SYS_PTRACE even as root: no process's /proc/PID/environ up
    the tree holds the key for it to encode past the redactor."""
    _with_secrets(agent)
    up = (
        "p=$$; while [ $p -gt 1 ]; do base64 -w0 < /proc/$p/environ; echo;"
        " p=$(awk '{print $4}' /proc/$p/stat); done"
    )
    agent.server.push(tool_calls(("shell", {"command": up})), text("done"))
    assert agent.run("run", "go", "-y").returncode == 0
    sent = agent.server.requests[1]["messages"][-1]["content"]
    decoded = b""
    for line in sent.splitlines()[1:]:
        with contextlib.suppress(binascii.Error, ValueError):
            decoded += base64.b64decode(line.strip(), validate=True)
    assert b"PATH=" in decoded, sent  # the command's own environment: the route works
    assert KEY.encode() not in decoded, sent
    assert "[redacted" not in sent, sent  # nothing to redact: no copy of the key was read


# -- the pieces, property-based -------------------------------------------------------------

secret_text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=80)


@settings(max_examples=200, deadline=None)
@given(
    before=secret_text,
    after=secret_text,
    secret=st.text(alphabet="abcdefXYZ0123456789-_", min_size=8, max_size=40),
    cuts=st.lists(st.integers(min_value=0, max_value=200), max_size=6),
)
def test_live_output_never_shows_a_secret_however_it_is_chunked(
    before: str, after: str, secret: str, cuts: list[int]
) -> None:
    redactor = Redactor({"SECRET_NAME": secret})
    data = f"{before}{secret}{after}".encode()
    joined = shown_in_chunks(RedactedStream, redactor, data, cuts)
    assert secret not in joined
    assert "[redacted SECRET_NAME]" in joined
    if data.isascii():  # (a multi-byte character cut between chunks decodes differently)
        assert joined == redactor(data.decode())


@settings(max_examples=200, deadline=None)
@example(name="LC", value="0", glob="*")  # LC_API_KEY: a locale's prefix, a credential's name
@given(
    name=st.from_regex(r"[A-Z][A-Z0-9_]{0,20}", fullmatch=True),
    value=st.text(min_size=1, max_size=20),
    glob=st.sampled_from(["*", "*KEY*", "*_TOKEN", "AWS_*", "OPENAI_*", "AGENTCLI_*", "*PASS*"]),
)
def test_a_glob_never_passes_a_credential_or_agentcli_variable(
    name: str, value: str, glob: str
) -> None:
    secret_names = [f"{name}_API_KEY", f"{name}_TOKEN", f"AWS_{name}", f"AGENTCLI_{name}"]
    source = {n: value for n in secret_names} | {"PATH": "/bin"}
    env = tool_environment([glob], source=source)
    assert env == {"PATH": "/bin"}
    # the model's key never passes, whatever its name and however it is asked for
    hidden = tool_environment([name, "*"], source={name: KEY}, never_values=[KEY])
    assert hidden == {}
