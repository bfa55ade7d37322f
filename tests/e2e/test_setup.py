"""Set-up help through the installed command: config init, config show, doctor."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pexpect

from tests.e2e.conftest import Agent
from tests.helpers import ROOT
from tests.helpers.scripted_server import ScriptedServer, text
from tests.helpers.terminal import doctor_line

KEY = "sk-test-1234567890"


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def config_path(agent: Agent) -> Path:
    return Path(agent.env["XDG_CONFIG_HOME"]) / "agentcli" / "config.toml"


def test_config_init_writes_once_then_needs_force(agent: Agent) -> None:
    path = config_path(agent)
    first = agent.run("config", "init")
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == str(path)
    example = (ROOT / "config.example.toml").read_text()
    written = path.read_text()
    assert_written_for(written, path, example)

    path.write_text('[model]\nname = "mine"\n')
    again = agent.run("config", "init")
    assert again.returncode == 2
    assert again.stderr.strip().count("\n") == 0 and "--force" in again.stderr
    assert path.read_text() == '[model]\nname = "mine"\n'  # untouched

    forced = agent.run("config", "init", "--force")
    assert forced.returncode == 0, forced.stderr
    assert path.read_text() == written

    shown = agent.run("config", "show", "--json")  # the written file loads
    assert shown.returncode == 0, shown.stderr
    report = json.loads(shown.stdout)
    assert report["config_file"] == str(path) and report["config_file_exists"]
    assert report["settings"]["agent.max_steps"] == {"value": 25, "source": str(path)}


def assert_written_for(written: str, path: Path, example: str) -> None:
    """The file config init wrote: the example's keys, under an opening comment that says
    where the file is, never to copy it somewhere (it is where it was written)."""
    head, _, body = written.partition("\n\n")
    assert body == example.partition("\n\n")[2]  # every key as documented
    assert f"written by `agentcli config init` to {path}." in head
    assert "Copy to" not in head and "copy" not in head.lower()


def test_config_init_at_a_path_creates_the_folder(agent: Agent) -> None:
    target = agent.workspace / "deep" / "er" / "agent.toml"
    result = agent.run("config", "init", "--path", str(target))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(target) and target.is_file()
    written = target.read_text()
    assert_written_for(written, target, (ROOT / "config.example.toml").read_text())
    # away from where agentcli looks: the file and the hint say how to use it
    assert (
        f"agentcli reads it when --config or AGENTCLI_CONFIG names it (else {config_path(agent)})"
        in written
    )
    assert f"agentcli doctor --config {target}" in result.stderr
    assert not config_path(agent).exists()
    shown = agent.run("config", "show", "--config", str(target))
    assert shown.returncode == 0, shown.stderr
    assert f"config file  {target}" in shown.stdout


def test_config_show_reports_each_source_and_masks_the_key(agent: Agent) -> None:
    path = config_path(agent)
    path.parent.mkdir(parents=True)
    path.write_text("[model]\ntimeout = 30\n[agent]\nmax_steps = 7\n")
    agent.env["OPENAI_API_KEY"] = KEY
    db = agent.workspace / "t.db"
    result = agent.run("config", "show", "--json", "--db", str(db), "--model", "flagged")
    assert result.returncode == 0, result.stderr
    assert KEY not in result.stdout
    report = json.loads(result.stdout)
    settings = report["settings"]
    assert settings["model.name"] == {"value": "flagged", "source": "flag"}  # beats AGENTCLI_MODEL
    assert settings["storage.db"] == {"value": str(db), "source": "flag"}
    assert settings["model.base_url"] == {
        "value": agent.server.base_url,
        "source": "OPENAI_BASE_URL",
    }
    assert settings["model.api_key"]["source"] == "OPENAI_API_KEY"
    assert settings["model.api_key"]["value"] == "sk-…7890"
    assert settings["agent.max_steps"] == {"value": 7, "source": str(path)}
    assert settings["model.timeout"] == {"value": 30.0, "source": str(path)}
    assert settings["agent.max_invalid_turns"] == {"value": 3, "source": "default"}
    assert report["database"] == str(db)

    text = agent.run("config", "show", "--db", str(db))
    assert text.returncode == 0, text.stderr
    assert KEY not in text.stdout and "sk-…7890" in text.stdout
    assert f"database     {db}" in text.stdout
    assert any(
        row.split() == ["agent.max_steps", "7", str(path)] for row in text.stdout.splitlines()
    )


def test_config_show_without_a_file_says_so(agent: Agent) -> None:
    result = agent.run("config", "show")
    assert result.returncode == 0, result.stderr
    assert f"config file  none (agentcli config init writes {config_path(agent)})" in result.stdout
    broken = agent.workspace / "broken.toml"
    broken.write_text("[model\n")
    bad = agent.run("config", "show", "--config", str(broken))
    assert bad.returncode == 2 and "not valid TOML" in bad.stderr and "Traceback" not in bad.stderr


def test_doctor_passes_against_the_scripted_server(agent: Agent) -> None:
    result = agent.run("doctor")
    assert result.returncode == 0, result.stdout + result.stderr
    server = doctor_line(result.stdout, "model server")
    assert server.startswith("✓") and f"{agent.server.base_url}/models: 200" in server
    assert doctor_line(result.stdout, "model") == "✓ model: 'scripted' is served"
    assert doctor_line(result.stdout, "database").startswith("✓")
    versions = doctor_line(result.stdout, "versions")
    for name in (
        "agentcli 0.1.0",
        "Python 3.",
        "langgraph ",
        "langchain-core ",
        "langchain-openai ",
    ):
        assert name in versions
    assert agent.server.requests == []  # never the chat endpoint


def test_doctor_fails_on_a_closed_port_naming_the_url(agent: Agent) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    result = agent.run("doctor", "--base-url", url)
    assert result.returncode == 1
    server = doctor_line(result.stdout, "model server")
    assert server.startswith("✗") and f"{url}/models" in server
    assert doctor_line(result.stdout, "database").startswith("✓")  # the other checks still ran


def test_doctor_sends_the_key_and_reports_a_refusal(agent: Agent) -> None:
    with ScriptedServer(require_key=KEY) as guarded:
        agent.env["OPENAI_BASE_URL"] = guarded.base_url
        agent.env["OPENAI_API_KEY"] = KEY
        ok = agent.run("doctor")
        assert ok.returncode == 0, ok.stdout
        assert KEY not in ok.stdout and "sk-…7890" in doctor_line(ok.stdout, "API key")
        agent.env["OPENAI_API_KEY"] = "sk-wrong-0000000000"
        refused = agent.run("doctor")
    assert refused.returncode == 1
    assert "401" in doctor_line(refused.stdout, "model server")


def test_doctor_without_a_key_for_openai_makes_no_request(agent: Agent) -> None:
    del agent.env["OPENAI_BASE_URL"]
    # every request would go through this "proxy", so a request would show up as a connection
    proxy = f"http://127.0.0.1:{agent.server.port}"
    agent.env.update(HTTPS_PROXY=proxy, HTTP_PROXY=proxy, ALL_PROXY=proxy)
    agent.env.pop("NO_PROXY", None)
    agent.env.pop("no_proxy", None)
    result = agent.run("doctor")
    assert result.returncode == 1
    key = doctor_line(result.stdout, "API key")
    assert key.startswith("✗") and "OPENAI_API_KEY" in key and "--base-url" in key
    assert doctor_line(result.stdout, "model server").startswith("-")
    assert agent.server.connections == 0
    assert "--base-url http://localhost:11434/v1" in result.stdout  # the set-up guide...
    assert "agentcli doctor" not in result.stdout  # ...does not send you to what you ran

    agent.env["OPENAI_API_KEY"] = KEY  # the control: with a key, the request does go out
    tried = agent.run("doctor")
    assert "https://api.openai.com/v1/models" in doctor_line(tried.stdout, "model server")
    assert agent.server.connections >= 1


def test_a_run_reaches_the_model_server_through_the_environments_proxy(agent: Agent) -> None:
    # the scripted server answers as a forward proxy would (HTTP_PROXY: an http server)
    agent.env["OPENAI_BASE_URL"] = "http://models.invalid/v1"
    agent.env["HTTP_PROXY"] = f"http://127.0.0.1:{agent.server.port}"
    agent.env.pop("NO_PROXY", None)
    agent.env.pop("no_proxy", None)
    agent.server.push(text("answered through the proxy"))
    result = agent.run("run", "hi")
    assert result.returncode == 0, result.stderr
    assert "answered through the proxy" in result.stdout
    assert "models.invalid" in agent.server.proxied and len(agent.server.requests) == 1


def test_doctor_reports_a_bad_config_and_an_unwritable_database(agent: Agent) -> None:
    bad = agent.workspace / "bad.toml"
    bad.write_text("[model]\nnmae = 'x'\n")
    result = agent.run("doctor", "--config", str(bad))
    assert result.returncode == 1
    assert doctor_line(result.stdout, "config").startswith("✗") and "nmae" in result.stdout
    assert doctor_line(result.stdout, "database").startswith("-")

    blocker = agent.workspace / "a-file"
    blocker.write_text("")
    result = agent.run("doctor", "--db", str(blocker / "threads.db"))
    assert result.returncode == 1
    assert doctor_line(result.stdout, "database").startswith("✗") and str(blocker) in result.stdout


def test_output_is_plain_when_piped(agent: Agent) -> None:
    del agent.env["NO_COLOR"]  # not a terminal is reason enough
    agent.env["OPENAI_API_KEY"] = KEY
    for args in (("doctor",), ("config", "show"), ("config", "init"), ("config", "init")):
        result = agent.run(*args)
        assert "\x1b[" not in result.stdout + result.stderr, args


def test_doctor_in_a_terminal_uses_colour(agent: Agent) -> None:
    del agent.env["NO_COLOR"]
    child = agent.spawn("doctor")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert "\x1b[" in child.before and "✓" in child.before


def test_config_init_honours_agentcli_config(agent: Agent) -> None:
    target = agent.workspace / "env.toml"
    agent.env["AGENTCLI_CONFIG"] = str(target)
    result = agent.run("config", "init")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(target) and target.is_file()
    assert json.loads(agent.run("config", "show", "--json").stdout)["config_file"] == str(target)
