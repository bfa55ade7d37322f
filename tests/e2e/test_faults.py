"""Model and network faults: retried with bounded backoff, then one line, thread resumable."""

from __future__ import annotations

import json

from tests.e2e.conftest import Agent
from tests.helpers.scripted_server import drop, error, hang, text


def test_rate_limit_and_5xx_are_retried(agent: Agent) -> None:
    agent.server.push(
        error(429, "slow down", type_="rate_limit_error"), error(503, "busy"), text("made it")
    )
    result = agent.run("run", "hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "made it"
    assert len(agent.server.requests) == 3


def test_a_stream_cut_midway_is_retried(agent: Agent) -> None:
    agent.server.push(drop(partial="Half an ans"), text("A whole answer."))
    result = agent.run("run", "hi", "-o", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["final"] == "A whole answer."


def test_retries_are_bounded_then_one_line_and_the_thread_resumes(agent: Agent) -> None:
    config = agent.workspace / "c.toml"
    config.write_text("[model]\nmax_retries = 1\ntimeout = 1.0\n")
    agent.server.push(error(500, "down"), hang(5))
    failed = agent.run("run", "keep this message", "--config", str(config), "-o", "json")
    assert failed.returncode == 1
    lines = [line for line in failed.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "did not answer within 1 s" in lines[0], failed.stderr
    assert len(agent.server.requests) == 2  # one try and one retry, no more
    thread = json.loads(failed.stdout)["thread_id"]
    agent.server.push(text("Back."))
    again = agent.run("run", "--thread", thread, "--config", str(config))
    assert again.returncode == 0, again.stderr
    assert agent.server.requests[-1]["messages"][-1]["content"] == "keep this message"


def test_a_malformed_response_is_an_error_not_a_crash(agent: Agent) -> None:
    # a 200 whose body is an error object: an empty stream, asked once more without streaming
    agent.server.push(error(200, "not a completion"), error(200, "not a completion"))
    result = agent.run("run", "hi")
    assert result.returncode == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("agentcli: error")]
    assert "Traceback" not in result.stderr and len(errors) == 1, result.stderr
    assert "not a completion" in errors[0]
    assert "empty stream; asking again without streaming (attempt 2 of 4)" in result.stderr
    assert len(agent.server.requests) == 2
