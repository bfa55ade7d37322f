"""A confined command's request to a host `[sandbox] network` does not list, through the
installed command: in the chat it is a question for the person, and each answer does what
it says (allow once, for the thread, write to the config file, refuse; no answer before the
command ends refuses), audited as the person's; in `run` it is refused with a line saying so.

The host is the test's server on 127.0.0.1 (its address, not listed; `pypi.org` is listed
so that the proxy runs): what reaches it is what the proxy let through.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest
from agentcli_tools.sandbox import mechanism

from tests.e2e.conftest import Agent
from tests.e2e.test_sandbox import configure, results, run_shell
from tests.helpers.package_index import PackageIndex
from tests.helpers.scripted_server import text, tool_calls
from tests.helpers.terminal import PROMPT, leave

pytestmark = pytest.mark.skipif(
    mechanism()[0] != "landlock" or mechanism()[1] < 4, reason="needs Landlock ABI 4"
)

QUESTION = r"\[o\]nce  \[t\]his thread  \[w\]rite to the config file  \[r\]efuse > "
GONE = "the command no longer waits"
# each URL fetched in turn through the proxy ($HTTP_PROXY): its last part and the status
FETCH = """\
import sys, urllib.error, urllib.request
for url in sys.argv[1:]:
    try:
        with urllib.request.urlopen(url, timeout=120) as answer:
            code = answer.status
    except urllib.error.HTTPError as error:
        code = error.code
    print(url.rsplit("/", 1)[1], code, flush=True)
"""
LISTED = '[sandbox]\nnetwork = ["pypi.org"]  # the one registry\n'


@pytest.fixture
def index(agent: Agent) -> Iterator[PackageIndex]:
    (agent.workspace / "fetch.py").write_text(FETCH)
    configure(agent, LISTED)
    with PackageIndex() as served:
        yield served


def fetch(index: PackageIndex, *names: str, **args: object) -> tuple[str, dict]:
    urls = " ".join(f"http://127.0.0.1:{index.port}/{name}" for name in names)
    return ("shell", {"command": f"{sys.executable} fetch.py {urls}", **args})


def asked(child: pexpect.spawn, index: PackageIndex) -> None:
    """The next question: the host and port the proxy would connect to, then the choice."""
    child.expect(r"network: .*\(HTTP\).*does not list")
    child.expect(r"host 127\.0\.0\.1\s")
    child.expect(rf"port {index.port}\s")
    child.expect(QUESTION)


def network(agent: Agent) -> list[tuple[str, str, str]]:
    audit = json.loads(agent.run("audit", "--json").stdout)
    return [(e["decision"], e["who"], e["by"]) for e in audit if e["tool"] == "network"]


def test_once_then_refuse_then_for_the_thread(agent: Agent, index: PackageIndex) -> None:
    agent.server.push(
        tool_calls(fetch(index, "one", "two")),
        tool_calls(fetch(index, "three", "four")),
        tool_calls(fetch(index, "five")),
        text("fetched"),
    )
    child = agent.spawn("chat", "fetch them", "--approve", "shell")
    asked(child, index)
    child.send("o")  # /one, once
    asked(child, index)  # /two: asked again
    assert index.paths == ["/one"]
    child.send("r")
    asked(child, index)  # /three: a new command, asked again
    child.send("t")  # for the thread: /four and /five are not asked
    child.expect("fetched")
    leave(child)
    assert index.paths == ["/one", "/three", "/four", "/five"]
    got = results(agent)
    assert "one 404" in got[0] and "two 403" in got[0]  # the index's 404, the proxy's 403
    assert "refused HTTP to 127.0.0.1:" in got[0] and "refused by the person" in got[0]
    assert "three 404" in got[1] and "four 404" in got[1] and "five 404" in got[2]
    earlier = "egress proxy: allowed by this thread's allowance (the person's answer earlier)"
    assert network(agent) == [
        ("allowed", "person", "egress proxy: allowed once by the person"),
        ("refused", "person", "egress proxy: refused by the person"),
        ("allowed", "person", "egress proxy: allowed for this thread by the person"),
        ("allowed", "person", earlier),
        ("allowed", "person", earlier),
    ]


def test_write_to_the_config_then_run_allows_it(agent: Agent, index: PackageIndex) -> None:
    agent.server.push(tool_calls(fetch(index, "one")), text("fetched"))
    child = agent.spawn("chat", "fetch it", "--approve", "shell")
    asked(child, index)
    child.send("w")
    child.expect("written to .*config.toml")
    child.expect("fetched")
    leave(child)
    config = Path(agent.env["XDG_CONFIG_HOME"]) / "agentcli" / "config.toml"
    entry = f"127.0.0.1:{index.port}"
    assert config.read_text() == LISTED.replace('["pypi.org"]', f'["{entry}", "pypi.org"]')
    assert run_shell(agent, fetch(index, "two")[1]["command"])[0].count("two 404") == 1
    assert index.paths == ["/one", "/two"]
    assert network(agent)[0] == (
        "allowed",
        "person",
        "egress proxy: added to [sandbox] network by the person",
    )


def test_a_question_no_one_answers_refuses_when_the_command_ends(
    agent: Agent, index: PackageIndex
) -> None:
    agent.server.push(tool_calls(fetch(index, "one", timeout=6)), text("gave up"))
    child = agent.spawn("chat", "fetch it", "--approve", "shell")
    asked(child, index)
    child.expect(GONE)  # the command timed out: the question is withdrawn
    child.expect("gave up")
    child.expect(PROMPT)
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    assert index.paths == []
    assert "the person did not answer before the command ended" in results(agent)[0]
    assert network(agent) == [
        ("refused", "agentcli", "egress proxy: the person did not answer before the command ended")
    ]


def test_run_refuses_with_a_line_that_says_so(agent: Agent, index: PackageIndex) -> None:
    got = run_shell(agent, fetch(index, "one")[1]["command"])[0]
    assert "one 403" in got and index.paths == []
    assert (
        f"[sandbox] the egress proxy refused HTTP to 127.0.0.1:{index.port}: not in"
        " [sandbox] network. If the command needs it, ask the person to list it there."
    ) in got
    assert network(agent) == [("refused", "agentcli", "egress proxy: not in [sandbox] network")]


def test_for_the_thread_lasts_with_the_thread_and_nowhere_else(
    agent: Agent, index: PackageIndex
) -> None:
    agent.server.push(tool_calls(fetch(index, "one")), text("fetched"))
    child = agent.spawn("chat", "fetch it", "--approve", "shell")
    asked(child, index)
    child.send("t")  # for this thread: kept with it, past the chat's end
    child.expect("fetched")
    leave(child)
    thread = agent.store().latest(str(agent.workspace)).thread_id
    with PackageIndex() as other:  # the same host on another port: not allowed
        since = len(agent.server.requests)
        agent.server.push(
            tool_calls(fetch(index, "two")), tool_calls(fetch(other, "three")), text("done")
        )
        ran = agent.run("run", "again", "--thread", thread, "--approve", "shell", "-o", "json")
        assert ran.returncode == 0, ran.stderr
        got = results(agent, since)
        assert "two 404" in got[0]  # no one asked: the thread's allowance let it through
        assert "three 403" in got[1] and "not in [sandbox] network" in got[1]
        elsewhere = run_shell(agent, fetch(index, "four")[1]["command"])  # a new thread
        assert "four 403" in elsewhere[0] and "not in [sandbox] network" in elsewhere[0]
        assert other.paths == []
    agent.server.push(tool_calls(fetch(index, "five")), text("fetched again"))
    child = agent.spawn("resume", thread, "--approve", "shell")  # a resumed chat: not asked
    child.expect(PROMPT)
    child.sendline("once more")
    child.expect("fetched again")
    leave(child)
    assert "five 404" in results(agent)[-1]
    assert index.paths == ["/one", "/two", "/five"]
    earlier = "egress proxy: allowed by this thread's allowance (the person's answer earlier)"
    refused = ("refused", "agentcli", "egress proxy: not in [sandbox] network")
    assert sorted(network(agent)) == sorted(
        [
            ("allowed", "person", "egress proxy: allowed for this thread by the person"),
            ("allowed", "person", earlier),
            ("allowed", "person", earlier),
            refused,
            refused,
        ]
    )
