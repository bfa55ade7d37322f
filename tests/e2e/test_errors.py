"""Every failure is one clear line on stderr with the contract's exit code, and loses nothing."""

from __future__ import annotations

import json
import signal
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.e2e.conftest import Agent
from tests.helpers.scripted_server import error, hang, text
from tests.helpers.terminal import one_line


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_no_api_key_for_the_default_endpoint(agent: Agent) -> None:
    del agent.env["OPENAI_BASE_URL"]
    result = agent.run("run", "hello")
    assert result.returncode == 2
    first = result.stderr.splitlines()[0]  # then the set-up guide (tests/e2e/test_first_things)
    assert (
        first
        == "agentcli: error: no model server is set up: agentcli needs an API key or a --base-url."
    )
    assert "OPENAI_API_KEY" in result.stderr and "--base-url" in result.stderr
    assert agent.server.requests == []


def test_a_custom_base_url_needs_no_key(agent: Agent) -> None:
    agent.server.push(text("hi"))
    result = agent.run("run", "hello", "--base-url", agent.server.base_url)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "hi"


def test_auth_failure(agent: Agent) -> None:
    agent.server.push(
        error(
            401, "Incorrect API key provided", type_="invalid_request_error", code="invalid_api_key"
        )
    )
    result = agent.run("run", "hello")
    assert result.returncode == 1
    line = one_line(result.stderr)
    assert "401" in line and "OPENAI_API_KEY" in line and agent.server.base_url in line


def test_refused_connection_names_the_url_and_the_message_survives(agent: Agent) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    failed = agent.run("run", "please remember this", "--base-url", url, "-o", "json")
    assert failed.returncode == 1
    line = one_line(failed.stderr)
    assert url in line and "connection refused" in line
    report = json.loads(failed.stdout)
    assert report["status"] == "error" and url in report["error"]
    listed = json.loads(agent.run("threads", "list", "--json").stdout)
    assert listed[0]["status"] == "error"

    # the thread keeps the server it ran on: the retry names the one that answers
    agent.server.push(text("Remembered."))
    retried = agent.run("run", "--thread", report["thread_id"], "--base-url", agent.server.base_url)
    assert retried.returncode == 0, retried.stderr
    assert retried.stdout.strip() == "Remembered."
    assert agent.server.requests[0]["messages"][-1]["content"] == "please remember this"


class _Redirecting(BaseHTTPRequestHandler):
    """Answers every request with a 307 to the server.location it is given."""

    def _send(self) -> None:
        self.send_response(307)
        self.send_header("Location", self.server.location)  # type: ignore[attr-defined]
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST = _send

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_a_plain_http_server_is_never_left_for_where_it_redirects(agent: Agent) -> None:
    # a plain-HTTP answer can be anyone's: agentcli does not follow it to another address
    # (and so never needs TLS for an http:// server), it names where it leads
    target = f"{agent.server.base_url}/chat/completions"
    with ThreadingHTTPServer(("127.0.0.1", 0), _Redirecting) as redirecting:
        redirecting.location = target  # type: ignore[attr-defined]
        threading.Thread(target=redirecting.serve_forever, daemon=True).start()
        url = f"http://127.0.0.1:{redirecting.server_address[1]}/v1"
        result = agent.run("run", "hello", "--base-url", url)
        redirecting.shutdown()
    assert result.returncode == 1
    line = one_line(result.stderr)
    assert f"{url} redirects (307) to {target}" in line and "--base-url" in line
    assert agent.server.requests == [] and agent.server.connections == 0


def test_unknown_thread_id(agent: Agent) -> None:
    result = agent.run("run", "--thread", "doesnotexist")
    assert result.returncode == 2
    assert "no thread 'doesnotexist'" in one_line(result.stderr)
    assert agent.run("resume", "nope").returncode == 2


def test_bad_config_names_the_file_and_line(agent: Agent) -> None:
    config = agent.workspace / "bad.toml"
    config.write_text("[model]\nname = 'x'\ntimeout = = 3\n")
    result = agent.run("run", "hi", "--config", str(config))
    assert result.returncode == 2
    line = one_line(result.stderr)
    assert str(config) in line and "line 3" in line


def test_unknown_config_key_and_wrong_type(agent: Agent) -> None:
    config = agent.workspace / "c.toml"
    config.write_text("[model]\nnmae = 'typo'\n")
    line = one_line(agent.run("run", "hi", "--config", str(config)).stderr)
    assert "unknown key 'model.nmae'" in line
    config.write_text("[agent]\nmax_steps = 'many'\n")
    result = agent.run("tools", "--config", str(config))
    expected = 'agent.max_steps = "many" in ' + f"{config}: expected a whole number"
    assert result.returncode == 2 and expected in one_line(result.stderr)


def test_usage_errors_exit_2(agent: Agent) -> None:
    assert agent.run("run").returncode == 2
    assert agent.run("run", "hi", "--output", "yaml").returncode == 2
    unknown_tool = agent.run("run", "hi", "--approve", "rm_rf")
    unknown = "--approve rm_rf: no tool is named 'rm_rf'"
    assert unknown_tool.returncode == 2 and unknown in one_line(unknown_tool.stderr)


def test_server_error_is_one_line(agent: Agent) -> None:
    agent.server.push(error(400, "context length exceeded"))
    result = agent.run("run", "hi")
    assert result.returncode == 1
    assert "400: context length exceeded" in one_line(result.stderr)


def test_ctrl_c_during_run_exits_130_at_once_and_run_thread_retries(agent: Agent) -> None:
    agent.server.push(hang(300))
    child = agent.start("run", "slow one", "-o", "json")
    agent.server.wait_for_request()
    child.send_signal(signal.SIGINT)
    child.wait(timeout=120)  # before the 300 s hang ends
    assert child.returncode == 130
    assert agent.server.answered == 0  # not held by the request in flight
    row = json.loads(agent.run("threads", "list", "--json").stdout)[0]
    assert (row["status"], row["last_error"]) == ("error", "interrupted before the run finished")
    thread = row["thread_id"]
    agent.server.push(text("Done now."))
    retried = agent.run("run", "--thread", thread)
    assert retried.returncode == 0, retried.stderr
    assert retried.stdout.strip() == "Done now."
    assert agent.server.requests[-1]["messages"][-1]["content"] == "slow one"
