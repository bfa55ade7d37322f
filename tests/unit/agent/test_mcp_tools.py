"""MCP servers' tools: loaded over stdio and HTTP, named SERVER__tool, run synchronously;
a server that fails is a warning and the other tools still load."""

from __future__ import annotations

import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agentcli_tools.registry import BUILTIN_TOOLS

from agentcli.agent.toolset.loading import LoadedTool, load_tools
from agentcli.agent.toolset.mcp import servers as mcptools
from agentcli.agent.toolset.mcp.logs import log_path
from agentcli.config import Settings
from tests.helpers import MCP_SERVER as SERVER
from tests.helpers.mcp_http import served
from tests.helpers.mcp_server import PNG
from tests.helpers.tooling import ToolEnv

GOOD = {"command": sys.executable, "args": [SERVER]}
SERVED = ["add", "mark", "shout", "picture", "reach", "strict", "slow_pattern", "loop"]


def load(
    servers: dict[str, dict[str, Any]], **settings: Any
) -> tuple[dict[str, LoadedTool], list[str]]:
    warnings: list[str] = []
    loaded = load_tools(Settings(mcp_servers=servers, **settings), warn=warnings.append)
    return {item.name: item for item in loaded}, warnings


@pytest.fixture(scope="module")
def calc() -> tuple[dict[str, LoadedTool], list[str]]:
    """The test server's tools, loaded once for this module's tests: unconfined, as `mark`
    writes into each test's own temp folder (tests/e2e/test_sandbox.py confines servers)."""
    return load({"calc": GOOD}, enabled=["read_file"], sandbox_mode="off")


def test_stdio_server_tools_are_named_and_run_like_any_tool(
    calc: tuple[dict[str, LoadedTool], list[str]], tool_env: ToolEnv
) -> None:
    tools, warnings = calc
    assert warnings == []
    assert [(name, item.source) for name, item in tools.items()] == [
        ("read_file", "builtin"),
        *((f"calc__{name}", "mcp:calc") for name in SERVED),
    ]
    add = tools["calc__add"].tool
    assert add.description == "Add two integers."
    assert add.tool_call_schema["required"] == ["a", "b"]  # type: ignore[index]
    reply = tool_env(add, a=2, b=3)  # through a ToolNode, synchronously
    assert (reply.content, reply.status) == ("5", "success")
    marker = tool_env.workspace / "marker.txt"
    assert tool_env(tools["calc__mark"].tool, path=str(marker), text="hi").status == "success"
    assert marker.read_text() == "hi"


def test_a_tool_error_goes_back_to_the_model_as_text(
    calc: tuple[dict[str, LoadedTool], list[str]], tool_env: ToolEnv
) -> None:
    tools, _ = calc
    reply = tool_env(tools["calc__add"].tool, a="two", b=3)
    assert reply.status == "error"
    assert reply.content.startswith("Error executing tool add") and "valid integer" in reply.content


def test_results_are_capped(tool_env: ToolEnv) -> None:
    tools, _ = load({"calc": GOOD}, enabled=["read_file"], max_output_chars=60)
    marker = tool_env.workspace / ("x" * 200)
    reply = tool_env(tools["calc__mark"].tool, path=str(marker))
    assert len(reply.content) <= 60 and "characters cut" in reply.content


def test_an_image_audio_or_blob_result_becomes_text_without_its_data(
    calc: tuple[dict[str, LoadedTool], list[str]], tool_env: ToolEnv
) -> None:
    tools, _ = calc
    reply = tool_env(tools["calc__picture"].tool)
    assert reply.status == "success" and isinstance(reply.message.content, str)
    assert reply.content.splitlines() == [
        "a picture of the sea",
        "[image: image/png, 10248 bytes, not shown to the model]",
        "[audio: audio/wav, 3000 bytes, not shown to the model]",
        "the notes' text",
        "[resource: file:///sea.png, application/octet-stream, 10248 bytes, not shown to the"
        " model]",
    ]
    assert PNG[:40] not in reply.content and PNG[-40:] not in reply.content


def test_a_stdio_servers_stderr_goes_to_its_private_log_not_the_terminal(
    calc: tuple[dict[str, LoadedTool], list[str]],
    tool_env: ToolEnv,
    capfd: pytest.CaptureFixture[str],
) -> None:
    tools, _ = calc
    reply = tool_env(tools["calc__shout"].tool, text="stderr-marker-5150")
    assert reply.content == "shouted"
    out, err = capfd.readouterr()
    assert "STDERR-MARKER-5150" not in out + err
    log = log_path("calc")
    assert "STDERR-MARKER-5150" in log.read_text()
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    assert stat.S_IMODE(log.parent.stat().st_mode) == 0o700


def test_a_failing_server_is_a_warning_and_the_rest_still_load() -> None:
    tools, warnings = load({"broken": {"command": "/nonexistent/agentcli-mcp"}, "calc": GOOD})
    assert warnings == [
        "MCP server 'broken' skipped: cannot run command '/nonexistent/agentcli-mcp': not found"
    ]
    assert list(tools) == [*BUILTIN_TOOLS, *(f"calc__{name}" for name in SERVED)]


def test_a_server_that_exits_or_hangs_is_a_warning(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(mcptools, "LIST_TIMEOUT", 5.0)
    outlived = tmp_path / "outlived"  # the hanging server's mark, were it waited for
    tools, warnings = load(
        {
            "exits": {"command": sys.executable, "args": ["-c", "pass"]},
            "hangs": {"command": "sh", "args": ["-c", f"sleep 120; touch {outlived}"]},
        }
    )
    assert not outlived.exists()  # given up at its time limit, not waited out
    assert sorted(warnings) == [
        "MCP server 'exits' skipped: it exited or closed the connection",
        "MCP server 'hangs' skipped: TimeoutError: no tool list within 5 s",
    ]
    assert list(tools) == list(BUILTIN_TOOLS)


def test_disabled_removes_an_mcp_tool_and_a_down_servers_names_are_not_warned() -> None:
    tools, warnings = load(
        {"calc": GOOD, "down": {"command": "/nonexistent/x"}},
        disabled=["calc__mark", "down__thing"],
    )
    assert "calc__add" in tools and "calc__mark" not in tools
    assert len(warnings) == 1 and "'down' skipped" in warnings[0]


def test_without_the_mcp_extra_a_warning_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "langchain_mcp_adapters", None)  # import fails
    tools, warnings = load({"calc": GOOD, "web": {"url": "http://127.0.0.1:9/mcp"}})
    assert warnings == [
        "MCP servers (calc, web) skipped: the MCP client is not installed:"
        " pip install 'agentcli[mcp]'"
    ]
    assert list(tools) == list(BUILTIN_TOOLS)


@pytest.fixture
def http_server() -> Iterator[str]:
    with served(SERVER) as (url, _):
        yield url


def test_streamable_http_server(http_server: str, tool_env: ToolEnv) -> None:
    tools, warnings = load({"web": {"url": http_server, "headers": {"X-Test": "1"}}})
    assert warnings == [] and tools["web__add"].source == "mcp:web"
    assert tool_env(tools["web__add"].tool, a=40, b=2).content == "42"


def test_connections_for_the_adapter() -> None:
    assert mcptools.connection({"command": "srv", "env": {"A": "1"}}) == {
        "transport": "stdio",
        "command": "srv",
        "args": [],
        "env": {"A": "1"},
    }
    assert mcptools.connection({"url": "http://h/mcp"}) == {
        "transport": "streamable_http",
        "url": "http://h/mcp",
        "headers": None,
    }
