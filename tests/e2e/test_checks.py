"""Checks that fail early and whole (issue 27, bug 11): `policy check` refuses a tool that
does not exist, and a config with several problems reports every one at once."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import Agent
from tests.helpers.terminal import one_line


def test_policy_check_refuses_a_tool_that_does_not_exist(agent: Agent) -> None:
    result = agent.run("policy", "check", "nosuchtool", "{}")
    assert result.returncode == 2, result.stdout  # usage, as the contract says
    assert "no tool is named 'nosuchtool'" in one_line(result.stderr)
    assert "decision" not in result.stdout
    near = agent.run("policy", "check", "shel")
    assert near.returncode == 2 and "did you mean 'shell'" in one_line(near.stderr)
    flag = agent.run("policy", "check", "shell", "--deny", "red_file")
    assert flag.returncode == 2 and "--deny red_file" in one_line(flag.stderr)
    fine = agent.run("policy", "check", "shell", '{"command": "ls"}')
    assert fine.returncode == 0 and "decision: ask" in fine.stdout


CONFIGS = {  # each with two problems, found by different checks until now
    "value and name": '[model]\ntemperature = "hot"\n[approval]\ndeny = ["shel"]\n',
    "layout and name": 'model = 5\n[approval]\nallow = ["red_file"]\n',
    "enabled and name": '[tools]\nenabled = ["nope"]\n[approval]\ndeny = ["shel"]\n',
}


@pytest.mark.parametrize("command", [("run", "hi"), ("policy", "check", "shell")])
@pytest.mark.parametrize("name", list(CONFIGS))
def test_a_config_reports_every_problem_at_once(
    agent: Agent, tmp_path, name: str, command: tuple[str, ...]
) -> None:
    config = tmp_path / "c.toml"
    config.write_text(CONFIGS[name])
    result = agent.run(*command, "--config", str(config))
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 2 and all(line.startswith("agentcli: error: ") for line in lines), lines
    assert "Traceback" not in result.stderr
