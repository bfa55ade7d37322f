"""A user folder with its own `tools` package does not break agentcli: the tool library is
installed as `agentcli_tools`, so `python -m agentcli` (which puts the folder first on
sys.path) still finds its own tools, and the user's package is never imported."""

from __future__ import annotations

import subprocess
import sys

from tests.e2e.conftest import Agent
from tests.helpers.scripted_server import text, tool_calls


def _shadowing_tools_package(agent: Agent) -> None:
    package = agent.workspace / "tools"
    package.mkdir()
    boom = "raise SystemExit('the user folder tools package was imported')\n"
    for name in ("__init__.py", "catalogue.py", "registry.py", "file_reading.py", "supervised.py"):
        (package / name).write_text(boom)


def python_m_agentcli(agent: Agent, *args: str) -> subprocess.CompletedProcess[str]:
    """`python -m agentcli ARGS` in the workspace, where the user's `tools` package is."""
    return subprocess.run(
        [sys.executable, "-m", "agentcli", *args],
        capture_output=True,
        text=True,
        env=agent.env,
        cwd=agent.workspace,
        timeout=60,
    )


def test_python_m_agentcli_runs_a_builtin_tool_beside_a_user_tools_package(agent: Agent) -> None:
    _shadowing_tools_package(agent)
    (agent.workspace / "notes.txt").write_text("kept\n")
    agent.server.push(tool_calls(("read_file", {"path": "notes.txt"})), text("read it"))
    done = python_m_agentcli(agent, "run", "read notes.txt", "--approve", "read_file")
    assert done.returncode == 0, done.stderr
    assert "read it" in done.stdout
    sent = agent.server.requests[-1]["messages"]
    assert any(m["role"] == "tool" and "kept" in str(m["content"]) for m in sent)


def test_agentcli_tools_lists_the_builtins_beside_a_user_tools_package(agent: Agent) -> None:
    _shadowing_tools_package(agent)
    done = python_m_agentcli(agent, "tools")
    assert done.returncode == 0, done.stderr
    assert "read_file" in done.stdout and "shell" in done.stdout
