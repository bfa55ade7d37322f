"""A thread keeps the model and server it runs on: every command that continues it uses
them, and every hint agentcli prints for it works when pasted (issue 27, bug 1).

The person here has no API key and nothing configured: the server and the model come from
the first command's flags only, as in `agentcli run --base-url http://127.0.0.1:18080/v1
-m scripted "list"`.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pexpect

from tests.e2e.conftest import Agent
from tests.helpers.scripted_server import text, tool_calls
from tests.helpers.terminal import PROMPT


def flags_only(agent: Agent) -> list[str]:
    """Nothing configured but this command's flags: the URL and the model."""
    for name in ("OPENAI_BASE_URL", "AGENTCLI_MODEL"):
        agent.env.pop(name, None)
    return ["--base-url", agent.server.base_url, "-m", "scripted"]


def hinted(output: str, before: str, after: str | None = None) -> list[str]:
    """The command a hint names, as the shell would split it when pasted."""
    line = next(text for text in output.splitlines() if before in text)
    command = line.split(before, 1)[1]
    if after is not None:
        command = command.split(after, 1)[0]
    argv = shlex.split(command)
    assert argv[0] == "agentcli", line
    return argv[1:]


def notify_config(agent: Agent, told: Path) -> str:
    path = agent.workspace.parent / "notify.toml"
    path.write_text(f"[notify]\ncommand = {json.dumps(f'cat > {shlex.quote(str(told))}')}\n")
    return str(path)


def test_the_review_hint_of_a_parked_run_works_when_pasted(agent: Agent, tmp_path: Path) -> None:
    flags = flags_only(agent)
    told = tmp_path / "told.json"
    agent.server.push(tool_calls(("list_dir", {"path": "."})), text("Two files."))
    parked = agent.run("run", *flags, "list", "--config", notify_config(agent, told))
    assert parked.returncode == 3, parked.stderr
    out = parked.stdout + parked.stderr
    review = hinted(out, "decide with: ", "  (or:")
    thread = review[1]
    # notify's `resume` field is the same command, without the decision
    assert json.loads(told.read_text())["resume"] == shlex.join(["agentcli", *review[:-2]])

    done = agent.run(*review)  # exactly as printed
    assert done.returncode == 0, done.stderr
    assert "Two files." in done.stdout
    assert [r["model"] for r in agent.server.requests] == ["scripted", "scripted"]
    shown = agent.run("threads", "show", thread)
    assert f"scripted on {agent.server.base_url}" in shown.stdout

    # the second trap: --thread with the server named, the model left to the thread
    agent.server.push(text("More."))
    more = agent.run("run", "--thread", thread, "--base-url", agent.server.base_url, "more")
    assert more.returncode == 0, more.stderr
    assert agent.server.requests[-1]["model"] == "scripted"


def test_the_record_alone_continues_the_thread(agent: Agent) -> None:
    """No flag at all: with no key to protect, the thread's own server and model are used
    by review, run --thread, run --last and the inbox's decisions."""
    flags = flags_only(agent)
    agent.server.push(tool_calls(("list_dir", {"path": "."})))
    parked = agent.run("run", *flags, "list", "-o", "json")
    assert parked.returncode == 3, parked.stderr
    thread = json.loads(parked.stdout)["thread_id"]
    agent.server.push(text("Listed."), tool_calls(("list_dir", {"path": "."})), text("Again."))
    decided = agent.run("review", thread, "--approve", "all")
    assert decided.returncode == 0, decided.stderr
    assert "Listed." in decided.stdout
    parked = agent.run("run", "--last", "again")
    assert parked.returncode == 3, parked.stderr
    [pending] = json.loads(agent.run("review", "--json").stdout)
    inbox = agent.run("review", "--approve", pending["call_id"])  # no thread id: the inbox
    assert inbox.returncode == 0, inbox.stderr
    assert "Again." in inbox.stdout
    assert {r["model"] for r in agent.server.requests} == {"scripted"}
    assert len(agent.server.requests) == 4


def test_the_resume_hint_after_ctrl_d_works_when_pasted(agent: Agent) -> None:
    flags = flags_only(agent)
    agent.server.push(text("Hello there."))
    child = agent.spawn("chat", *flags)
    child.expect(PROMPT)
    child.sendline("hello")
    child.expect("Hello there.")
    child.expect(PROMPT)
    child.sendeof()
    child.expect(r"to continue: (agentcli resume [^\r\n]+)")
    hint = child.match.group(1).strip()
    child.expect(pexpect.EOF)
    child.close()
    assert "--base-url" in hint, hint  # the flag chose the server: the hint repeats it

    agent.server.push(text("Still here."))
    again = agent.spawn(*shlex.split(hint)[1:])
    again.expect(PROMPT)
    again.sendline("still there?")
    again.expect("Still here.")
    again.expect(PROMPT)
    again.sendeof()
    again.expect(pexpect.EOF)
    again.close()
    assert [r["model"] for r in agent.server.requests] == ["scripted", "scripted"]
