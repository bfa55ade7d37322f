"""Hooks in Claude Code's protocol, through the installed command: hook scripts written as
Claude Code's docs write them (tests/helpers/claude_hooks/) decide calls in agentcli as they
would in Claude Code, and nothing a hook says or does gets past the policy, the screen or the
sandbox: deny and ask rules beat a hook's allow, an updatedInput is re-checked and shown, a
hanging hook is stopped and its call asked, its words are marks, and no workspace file adds
a hook."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest
from agentcli_tools.sandbox import mechanism

from tests.e2e.conftest import Agent
from tests.helpers.scripted_server import text, tool_calls
from tests.helpers.terminal import CHOICE, PROMPT
from tests.helpers.waiting import until

HOOKS = Path(__file__).parents[1] / "helpers" / "claude_hooks"
VALIDATOR = f"{shlex.quote(sys.executable)} {HOOKS / 'bash_validator.py'}"
PROTECT = f"bash {HOOKS / 'protect_files.sh'}"


def decide(*said: str) -> str:
    """decide.py's command line: a hook that answers with Claude Code's JSON."""
    return " ".join(
        [shlex.quote(sys.executable), str(HOOKS / "decide.py"), *map(shlex.quote, said)]
    )


def configure(agent: Agent, *hooks: tuple[str, str], more: str = "", timeout: float = 60) -> None:
    """The person's own config file ($XDG_CONFIG_HOME/agentcli/config.toml): PreToolUse hooks
    as (matcher, command), and `more` TOML."""
    path = Path(agent.env["XDG_CONFIG_HOME"]) / "agentcli" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    tables = [
        f"[[hooks.PreToolUse]]\nmatcher = {json.dumps(m)}\ncommand = {json.dumps(c)}\n"
        f"timeout = {timeout}\n"
        for m, c in hooks
    ]
    path.write_text("\n".join(tables) + more)


def audit(agent: Agent) -> list[dict]:
    listed = agent.run("audit", "--json")
    assert listed.returncode == 0, listed.stderr
    return json.loads(listed.stdout)


def told(agent: Agent, call_id: str = "call_1") -> str:
    """What the model was sent as the call's result (the last request's tool message)."""
    messages = agent.server.requests[-1]["messages"]
    return next(m["content"] for m in messages if m.get("tool_call_id") == call_id)


# commands the docs-style validator blocks, each with a side effect that shows if it ran
BLOCKED = [
    "grep secret notes.txt; touch ran.txt",
    "find . -name '*.py'; touch ran.txt",
    "grep -r x . && touch ran.txt",
]


@pytest.mark.parametrize("command", BLOCKED)
def test_the_docs_bash_validator_blocks_even_with_auto_approve(agent: Agent, command: str) -> None:
    configure(agent, ("Bash", VALIDATOR))
    agent.server.push(tool_calls(("shell", {"command": command})), text("ok"))
    done = agent.run("run", "-y", "look", "-o", "json")
    assert done.returncode == 0, done.stderr
    assert not (agent.workspace / "ran.txt").exists()
    assert "Use 'rg" in told(agent) and "denied by hook" in told(agent)
    [record] = audit(agent)
    assert (record["decision"], record["who"]) == ("denied", "hook")
    assert record["by"].startswith("hook ") and "bash_validator.py" in record["by"]


def test_a_command_the_validator_passes_is_left_to_the_policy(agent: Agent) -> None:
    configure(agent, ("Bash", VALIDATOR))
    agent.server.push(tool_calls(("shell", {"command": "touch ran.txt"})))
    parked = agent.run("run", "make it", "-o", "json")  # no decision from the hook: asked
    assert parked.returncode == 3, parked.stderr
    assert not (agent.workspace / "ran.txt").exists()
    agent.server.push(tool_calls(("shell", {"command": "touch ran.txt"}), ids=["c2"]), text("ok"))
    done = agent.run("run", "-y", "make it", "-o", "json")
    assert done.returncode == 0, done.stderr
    assert (agent.workspace / "ran.txt").exists()


PROTECTED = [
    ("write_file", {"path": ".env", "content": "KEY=stolen\n"}),
    ("write_file", {"path": "sub/../.env", "content": "KEY=stolen\n"}),
    ("edit_file", {"path": ".env", "old_text": "KEY=mine", "new_text": "KEY=stolen"}),
    ("write_file", {"path": "package-lock.json", "content": "{}"}),
]


@pytest.mark.parametrize(("tool", "args"), PROTECTED)
def test_the_jq_protect_files_hook_blocks_writes_to_protected_files(
    agent: Agent, tool: str, args: dict
) -> None:
    (agent.workspace / ".env").write_text("KEY=mine")
    (agent.workspace / "sub").mkdir()
    configure(agent, ("Edit|Write", PROTECT))
    agent.server.push(tool_calls((tool, args)), text("ok"))
    done = agent.run("run", "-y", "edit", "-o", "json")
    assert done.returncode == 0, done.stderr
    assert (agent.workspace / ".env").read_text() == "KEY=mine"
    assert not (agent.workspace / "package-lock.json").exists()
    assert "Blocked:" in told(agent) and "protected pattern" in told(agent)
    assert audit(agent)[0]["who"] == "hook"


def test_the_payload_speaks_claude_codes_names(agent: Agent, tmp_path: Path) -> None:
    log = tmp_path / "hook.jsonl"
    agent.env["HOOK_LOG"] = str(log)
    configure(agent, ("Write|Bash", decide("allow")))
    calls = [("write_file", {"path": "a.txt", "content": "x"}), ("shell", {"command": "true"})]
    agent.server.push(tool_calls(*calls), text("ok"))
    done = agent.run("run", "write", "-o", "json")
    assert done.returncode == 0, done.stderr
    thread = json.loads(done.stdout)["thread_id"]
    first, second = (json.loads(line) for line in log.read_text().splitlines())
    assert first["hook_event_name"] == "PreToolUse" and first["session_id"] == thread
    assert first["cwd"] == str(agent.workspace) and first["tool_use_id"] == "call_1"
    assert first["tool_name"] == "Write"
    assert first["tool_input"] == {"file_path": str(agent.workspace / "a.txt"), "content": "x"}
    assert (second["tool_name"], second["tool_input"]) == ("Bash", {"command": "true"})
    assert {r["who"] for r in audit(agent)} == {"hook"}


@pytest.mark.parametrize("decision", ["deny", "ask"])
def test_deny_and_ask_rules_beat_a_hooks_allow(agent: Agent, decision: str) -> None:
    rule = f'[[approval.rules]]\ntool = "shell"\nmatch = "touch *"\ndecision = "{decision}"\n'
    configure(agent, ("Bash", decide("allow", "fine by me")), more=rule)
    agent.server.push(tool_calls(("shell", {"command": "touch ran.txt"})), text("ok"))
    out = agent.run("run", "go", "-o", "json")
    assert out.returncode == (0 if decision == "deny" else 3), out.stderr
    assert not (agent.workspace / "ran.txt").exists()
    if decision == "deny":
        [record] = audit(agent)
        assert (record["decision"], record["who"]) == ("denied", "rule")


# updatedInputs: (what the hook says, and whether a deny rule on "rm *" must stop it)
UPDATES = [
    ({"command": "rm -f keep.txt"}, "denied"),  # the policy judges what would run
    ({"command": "true; rm -f keep.txt"}, "denied"),
    ({"command": "touch ok.txt", "sandbox": "off"}, "denied"),  # no key the tool lacks
    ({"command": ["rm", "-f", "keep.txt"]}, "denied"),  # not the tool's schema
]


@pytest.mark.parametrize(("updated", "outcome"), UPDATES)
def test_an_updated_input_is_checked_by_the_policy(
    agent: Agent, updated: dict, outcome: str
) -> None:
    (agent.workspace / "keep.txt").write_text("mine")
    rule = '[[approval.rules]]\ntool = "shell"\nmatch = "rm *"\ndecision = "deny"\n'
    configure(agent, ("Bash", decide("allow", "", json.dumps(updated))), more=rule)
    agent.server.push(tool_calls(("shell", {"command": "ls"})), text("ok"))
    out = agent.run("run", "-y", "go", "-o", "json")
    assert out.returncode == 0, out.stderr
    assert (agent.workspace / "keep.txt").read_text() == "mine"
    assert not (agent.workspace / "ok.txt").exists()
    [record] = audit(agent)
    assert record["decision"] == outcome


def test_an_updated_input_asked_about_is_shown_and_no_flag_answers_it(agent: Agent) -> None:
    updated = {"command": "touch hooked.txt"}
    configure(agent, ("Bash", decide("ask", "check the new name", json.dumps(updated))))
    agent.server.push(tool_calls(("shell", {"command": "touch model.txt"})), text("ok"))
    parked = agent.run("run", "-y", "go", "-o", "json")  # -y does not answer a hook's ask
    assert parked.returncode == 3, parked.stderr
    thread = json.loads(parked.stdout)["thread_id"]
    [pending] = json.loads(parked.stdout)["pending"]
    assert pending["args"] == updated and "check the new name" in pending["hook"]
    [request] = json.loads(agent.run("review", thread, "--json").stdout)
    assert "check the new name" in request["hook"] and "touch model.txt" in request["hook"]
    again = agent.run("run", "-y", "--thread", thread, "-o", "json")
    assert again.returncode == 3 and not list(agent.workspace.iterdir())
    approved = agent.run("review", thread, "--approve", "all")
    assert approved.returncode == 0, approved.stderr
    assert (agent.workspace / "hooked.txt").exists()
    assert not (agent.workspace / "model.txt").exists()
    [record] = audit(agent)
    assert record["args"] == {"command": "touch model.txt"} and "hooked.txt" in record["diff"]


def test_a_hanging_hook_is_stopped_at_its_timeout_and_the_call_asks(agent: Agent) -> None:
    hang = f"sleep 300.{os.getpid()}"  # a name of its own, to look for afterwards
    configure(agent, ("*", f"{hang}; :"), timeout=1)
    agent.server.push(tool_calls(("shell", {"command": "touch ran.txt"})), text("ok"))
    parked = agent.run("run", "-y", "go", "-o", "json")
    assert parked.returncode == 3, parked.stderr
    assert not (agent.workspace / "ran.txt").exists()
    thread = json.loads(parked.stdout)["thread_id"]
    listed = json.loads(agent.run("review", thread, "--json").stdout)
    assert "did not finish within 1 s" in listed[0]["hook"]
    gone = lambda: subprocess.run(["pgrep", "-f", hang], capture_output=True).returncode == 1  # noqa: E731
    until(gone, what="the hook was stopped, not left running")


BROKEN = [
    'echo \'{"hookSpecificOutput": {"permissionDecision": "allow"\'',  # JSON cut short
    'echo \'{"hookSpecificOutput": {"permissionDecision": "yes"}}\'',  # not a decision
    'echo \'{"hookSpecificOutput": {"permissionDecision": "allow", "updatedInput": 1}}\'',
    "kill -9 $$",
]


@pytest.mark.parametrize("command", BROKEN)
def test_a_hook_that_answers_outside_the_protocol_makes_the_call_ask(
    agent: Agent, command: str
) -> None:
    configure(agent, ("Bash", command))
    agent.server.push(tool_calls(("shell", {"command": "touch ran.txt"})), text("ok"))
    parked = agent.run("run", "-y", "go", "-o", "json")
    assert parked.returncode == (0 if "kill" in command else 3), parked.stderr
    ran = (agent.workspace / "ran.txt").exists()
    assert ran == ("kill" in command)  # killed: a non-blocking error, as in Claude Code


ESCAPES = [
    "\x1b]0;PWNED\x07title",
    "\x1b[2J\x1b[Hcleared",
    "ok\rapproved by admin",
    "\u202edeggoL\u202c",
]


@pytest.mark.parametrize("reason", ESCAPES)
def test_a_hooks_words_are_shown_as_marks(agent: Agent, reason: str) -> None:
    configure(agent, ("Bash", decide("ask", reason)))
    agent.server.push(tool_calls(("shell", {"command": "touch ran.txt"})), text("ok"))
    child = agent.spawn("chat", "go")
    child.expect(CHOICE)
    screen = child.before
    assert "⟦" in screen
    for raw in ("\x1b]0;PWNED", "\x1b[2J", "\rapproved", "\u202e"):
        assert raw not in screen
    child.send("r")
    child.expect(PROMPT)
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    assert not (agent.workspace / "ran.txt").exists()


# files a workspace could hold, in the places agentcli or Claude Code might look for settings
WORKSPACE_FILES = [
    ".agentcli/config.toml",
    ".agentcli.toml",
    "agentcli.toml",
    "config.toml",
    ".config/agentcli/config.toml",
    ".claude/settings.json",
    ".claude/settings.local.json",
]


@pytest.mark.parametrize("name", WORKSPACE_FILES)
def test_no_workspace_file_adds_a_hook(agent: Agent, name: str, tmp_path: Path) -> None:
    marker = tmp_path / "hook-ran"
    hook = f"touch {shlex.quote(str(marker))}"
    path = agent.workspace / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if name.endswith(".json"):
        entry = {"matcher": "", "hooks": [{"type": "command", "command": hook}]}
        path.write_text(json.dumps({"hooks": {"PreToolUse": [entry], "Stop": [entry]}}))
    else:
        path.write_text(f'[[hooks.PreToolUse]]\ncommand = "{hook}"\n')
    agent.server.push(tool_calls(("list_dir", {"path": "."})), text("ok"))
    done = agent.run("run", "-y", "look", "-o", "json")
    assert done.returncode == 0, done.stderr
    assert not marker.exists()


@pytest.mark.skipif(not mechanism()[0], reason="neither Landlock nor bubblewrap")
def test_a_hooks_allow_never_runs_a_command_unconfined(agent: Agent, tmp_path: Path) -> None:
    outside = Path.home() / f".agentcli-hooks-test-{os.getpid()}"
    outside.mkdir()
    try:
        configure(agent, ("Bash", decide("allow")))
        command = f"touch {shlex.quote(str(outside / 'escaped'))}"
        agent.server.push(tool_calls(("shell", {"command": command})), text("ok"))
        done = agent.run("run", "go", "-o", "json")
        assert done.returncode == 0, done.stderr
        assert not (outside / "escaped").exists()
        [record] = audit(agent)
        assert record["who"] == "hook" and record["sandbox"] != "off"
    finally:
        for child in outside.iterdir():
            child.unlink()
        outside.rmdir()


def test_a_plans_tasks_pass_the_hooks_too(agent: Agent) -> None:
    configure(agent, ("Bash", VALIDATOR))
    tasks = [
        {"id": 1, "tool": "shell", "args": {"command": "grep x y; touch ran.txt"}, "deps": []},
        {"id": 2, "tool": "write_file", "args": {"path": "kept.txt", "content": "k"}, "deps": []},
    ]
    agent.server.push(tool_calls(("plan", {"tasks": tasks})), text("one of two"))
    done = agent.run("run", "--plan", "two things", "-y", "-o", "json")
    assert done.returncode == 0, done.stderr
    assert not (agent.workspace / "ran.txt").exists()
    assert (agent.workspace / "kept.txt").read_text() == "k"
    assert any(r["who"] == "hook" and r["decision"] == "denied" for r in audit(agent))


# a hook that keeps every payload it is given and answers by what the command holds
WATCHER = (
    "import json,sys; e=json.load(sys.stdin); open(sys.argv[1],'a').write(json.dumps(e)+'\\n');"
    " c=e['tool_input'].get('command','');"
    " d='{decision}' if c.startswith('touch') and 'danger' in c else 'allow';"
    " print(json.dumps({{'hookSpecificOutput': {{'permissionDecision': d,"
    " 'permissionDecisionReason': 'not that file'}}}}))"
)


@pytest.mark.parametrize(
    ("decision", "result"), [("deny", "danger"), ("ask", "danger"), ("deny", "fine")]
)
def test_a_plan_task_is_hooked_with_its_deps_results_put_in(
    agent: Agent, tmp_path: Path, decision: str, result: str
) -> None:
    log = tmp_path / "hook-saw.jsonl"
    code = WATCHER.format(decision=decision)
    configure(agent, ("Bash", f"{shlex.quote(sys.executable)} -c {shlex.quote(code)} {log}"))
    tasks = [
        {"id": 1, "tool": "shell", "args": {"command": f"printf {result}.txt"}, "deps": []},
        {"id": 2, "tool": "shell", "args": {"command": "touch $1"}, "deps": [1]},
    ]
    agent.server.push(tool_calls(("plan", {"tasks": tasks})), text("done"))
    done = agent.run("run", "--plan", "make the file", "-y", "-o", "json")
    assert done.returncode == 0, done.stderr
    seen = [json.loads(line)["tool_input"]["command"] for line in log.read_text().splitlines()]
    # at the review the hook saw the template; once task 1 ran, what task 2 runs
    assert "touch $1" in seen and f"touch {result}.txt" in seen
    made = (agent.workspace / f"{result}.txt").exists()
    records = [r for r in audit(agent) if r["call_id"].endswith(".2")]
    if result == "fine":  # the hook allows it: it runs, so the test can tell
        assert made
        return
    assert not made
    [hooked] = [r for r in records if r["who"] == "hook"]
    assert hooked["decision"] == ("denied" if decision == "deny" else "refused")
    assert hooked["args"] == {"command": "touch $1"}  # the plan; and what it would have run:
    assert "touch danger.txt" in json.dumps(hooked["diff"])
    said = told(agent)  # the plan's one result, as the model reads it
    assert ("not that file" if decision == "deny" else "asks a person") in said


def test_policy_check_names_the_hooks_that_would_run_and_runs_none(
    agent: Agent, tmp_path: Path
) -> None:
    ran = tmp_path / "ran.txt"
    touch = f"touch {ran}; exit 2"  # would deny, and leave a file, if it ran
    configure(agent, ("Bash", touch), ("Write|Edit", f"{touch} # files"), ("*", f"{touch} # all"))
    checked = agent.run("policy", "check", "shell", '{"command": "ls"}', "--json")
    assert checked.returncode == 0, checked.stderr
    report = json.loads(checked.stdout)
    assert [(h["matcher"], h["command"]) for h in report["hooks"]] == [
        ("Bash", touch),
        ("*", f"{touch} # all"),
    ]
    assert report["decision"] == "ask"  # the policy's own verdict: no hook was asked
    shown = agent.run("policy", "check", "write_file", '{"path": "a", "content": "b"}')
    assert shown.returncode == 0, shown.stderr
    assert "not run by a check (2)" in shown.stdout
    assert f'matcher "Write|Edit": {touch} # files' in shown.stdout
    assert 'matcher "Bash"' not in shown.stdout
    fetch = agent.run("policy", "check", "calculator", '{"expression": "1+1"}', "--json")
    assert [h["matcher"] for h in json.loads(fetch.stdout)["hooks"]] == ["*"]
    assert not ran.exists()


def test_run_json_names_each_hook_decision_as_the_audit_does(agent: Agent) -> None:
    updated = {"file_path": str(agent.workspace / "a.txt"), "content": "hooked"}
    deny, edit = decide("deny", "no shell today"), decide("allow", "", json.dumps(updated))
    context = '[[hooks.UserPromptSubmit]]\ncommand = "echo ticket OPS-7"\n'
    configure(agent, ("Bash", deny), ("Write", edit), more=context)
    calls = tool_calls(
        ("shell", {"command": "touch ran.txt"}), ("write_file", {"path": "a.txt", "content": "x"})
    )
    agent.server.push(calls, text("ok"))
    out = agent.run("run", "go", "-o", "json")  # the hooks decide both
    assert out.returncode == 0, out.stderr
    hooks = json.loads(out.stdout)["hooks"]
    said = {(h["event"], h["decision"], h["call_id"], h["tool"]): h for h in hooks}
    assert set(said) == {
        ("UserPromptSubmit", "context", None, None),
        ("PreToolUse", "deny", "call_1", "shell"),
        ("PreToolUse", "allow", "call_2", "write_file"),
        ("PreToolUse", "updated_input", "call_2", "write_file"),
    }
    assert said["UserPromptSubmit", "context", None, None]["hook"] == "hook echo ticket OPS-7"
    denied = said["PreToolUse", "deny", "call_1", "shell"]
    assert denied["reason"] == "no shell today"
    records = {r["call_id"]: r for r in audit(agent)}
    assert records["call_1"]["by"] == denied["hook"]  # who decided: named as the audit does
    assert records["call_2"]["by"] == said["PreToolUse", "allow", "call_2", "write_file"]["hook"]
    assert (agent.workspace / "a.txt").read_text() == "hooked"
    assert not (agent.workspace / "ran.txt").exists()
    agent.server.push(calls, text("ok"))
    lines = agent.run("run", "again", "-o", "jsonl").stdout.splitlines()
    streamed = [e for e in map(json.loads, lines) if e["type"] == "hook_decision"]
    assert [{k: v for k, v in e.items() if k != "type"} for e in streamed] == hooks
