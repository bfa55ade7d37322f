"""An MCP server written with the `mcp` package, configured for the installed command:
its tools are listed, reviewed, approved and run; `--help` never imports the MCP client."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agentcli.session.call_digests import digest
from tests.e2e.conftest import Agent
from tests.helpers import MCP_SERVER as SERVER
from tests.helpers.scripted_server import text, tool_calls

CONFIG = f"""
[mcp.servers.calc]
command = {json.dumps(sys.executable)}
args = [{json.dumps(SERVER)}]

[mcp.servers.broken]
command = "/nonexistent/agentcli-test-server"
"""
WARNING = (
    "agentcli: warning: MCP server 'broken' skipped:"
    " cannot run command '/nonexistent/agentcli-test-server': not found"
)


@pytest.fixture
def mcp_agent(agent: Agent) -> Agent:
    path = Path(agent.env["XDG_CONFIG_HOME"]) / "agentcli" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text(CONFIG)
    return agent


def test_tools_lists_the_mcp_tools_with_their_source(mcp_agent: Agent) -> None:
    result = mcp_agent.run("tools", "--json", "--approve", "calc__mark")
    assert result.returncode == 0, result.stderr
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    # a stdio server's tools run in the sandbox, as the shell does; a read_file does not
    assert rows["calc__add"].pop("sandbox") == rows["shell"]["sandbox"] != None  # noqa: E711
    assert rows["read_file"]["sandbox"] is None
    assert rows["calc__add"] == {
        "name": "calc__add",
        "source": "mcp:calc",
        "policy": "ask",
        "policy_by": "default",
        "description": "Add two integers.",
    }
    assert rows["calc__mark"]["policy"] == "allow" and rows["shell"]["source"] == "builtin"
    assert result.stderr.strip() == WARNING
    table = mcp_agent.run("tools").stdout.splitlines()
    assert any(line.split()[:3] == ["calc__add", "mcp:calc", "ask"] for line in table)


def test_an_mcp_call_is_reviewed_then_approved_and_its_result_reaches_the_model(
    mcp_agent: Agent,
) -> None:
    marker = mcp_agent.workspace / "marker.txt"
    mcp_agent.server.push(
        tool_calls(("calc__add", {"a": 2, "b": 3}), ("calc__mark", {"path": str(marker)}))
    )
    parked = mcp_agent.run("run", "add 2 and 3, then leave a mark", "-o", "json")
    assert parked.returncode == 3, parked.stderr
    assert WARNING in parked.stderr
    result = json.loads(parked.stdout)
    assert result["status"] == "awaiting_approval"
    undo = "{} is not a built-in tool: what it changes outside the workspace stays changed"
    assert result["pending"] == [
        {
            "call_id": "call_1",
            "digest": digest(result["thread_id"], "call_1", 0, "calc__add", {"a": 2, "b": 3}),
            "tool": "calc__add",
            "args": {"a": 2, "b": 3},
            "undo": undo.format("calc__add"),
        },
        {
            "call_id": "call_2",
            "digest": digest(result["thread_id"], "call_2", 0, "calc__mark", {"path": str(marker)}),
            "tool": "calc__mark",
            "args": {"path": str(marker)},
            "undo": undo.format("calc__mark"),
        },
    ]
    offered = {t["function"]["name"]: t for t in mcp_agent.server.requests[0]["tools"]}
    assert offered["calc__add"]["function"]["parameters"]["required"] == ["a", "b"]
    assert not marker.exists()  # nothing runs before a decision

    mcp_agent.server.push(text("2 + 3 = 5, and the mark is left."))
    finished = mcp_agent.run("run", "--thread", result["thread_id"], "--auto-approve", "-o", "json")
    assert finished.returncode == 0, finished.stderr
    assert json.loads(finished.stdout)["final"] == "2 + 3 = 5, and the mark is left."
    assert marker.read_text() == "ran"
    tool_messages = {
        m["tool_call_id"]: m["content"]
        for m in mcp_agent.server.requests[1]["messages"]
        if m["role"] == "tool"
    }
    assert tool_messages == {"call_1": "5", "call_2": f"wrote {marker}"}


def test_a_rejected_mcp_call_does_not_run(mcp_agent: Agent) -> None:
    marker = mcp_agent.workspace / "marker.txt"
    mcp_agent.server.push(tool_calls(("calc__mark", {"path": str(marker)})), text("Understood."))
    result = mcp_agent.run("run", "leave a mark", "--deny", "calc__mark", "-o", "json")
    assert result.returncode == 0, result.stderr
    assert not marker.exists()
    sent = mcp_agent.server.requests[1]["messages"][-1]
    assert sent["role"] == "tool" and "denied by flag --deny" in sent["content"]


MODULES_AFTER = """
import sys
from agentcli.cli import main
sys.argv = ["agentcli", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
print([m for m in ("langchain_mcp_adapters", "mcp") if m in sys.modules], file=sys.stderr)
"""


@pytest.mark.parametrize(
    ("args", "config", "imported"),
    [
        (["--help"], CONFIG, "[]"),
        (["tools", "--help"], CONFIG, "[]"),
        (["tools"], "[tools]\nenabled = ['calculator']\n", "[]"),
        (["tools"], CONFIG, "['langchain_mcp_adapters', 'mcp']"),  # the check can fail
    ],
)
def test_the_mcp_client_is_imported_only_when_servers_are_used(
    tmp_path: Path, args: list[str], config: str, imported: str
) -> None:
    path = tmp_path / "config.toml"
    path.write_text(config)
    result = subprocess.run(
        [sys.executable, "-c", MODULES_AFTER, *args],
        capture_output=True,
        text=True,
        env={"AGENTCLI_CONFIG": str(path), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
        timeout=60,
    )
    assert result.stdout, result.stderr
    assert result.stderr.strip().splitlines()[-1] == imported
