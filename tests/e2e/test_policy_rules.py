"""Rules that explain themselves, through the installed command: `policy check` and `policy
list`, a rule's own examples, the allow-all warning, and `A` writing a scoped rule."""

from __future__ import annotations

import json
import re

from tests.e2e.conftest import Agent
from tests.helpers.scripted_server import text, tool_calls
from tests.helpers.terminal import CHOICE, leave

RULES = (
    '[approval]\nallow = ["read_file"]\n\n'
    '[[approval.rules]]\ntool = "shell"\nmatch = "git status*"\ndecision = "allow"\n'
    'should_match = ["git status --short"]\nshould_not_match = ["git push --force"]\n\n'
    '[[approval.rules]]\ntool = "shell"\nmatch = "rm *"\ndecision = "deny"\n'
)


def config(agent: Agent, body: str = RULES) -> str:
    path = agent.workspace / "c.toml"
    path.write_text(body)
    return str(path)


def check(agent: Agent, command: str, *flags: str) -> dict:
    result = agent.run("policy", "check", "shell", json.dumps({"command": command}), *flags)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_check_reads_a_chain_and_names_the_rule_and_its_file(agent: Agent) -> None:
    path = config(agent)
    report = check(agent, "git status && rm -rf /", "--config", path, "--json")
    assert (report["decision"], report["by"]) == ("deny", "rule 2 (shell rm *)")
    assert report["rule"]["number"] == 2 and report["rule"]["from"] == path
    found = {c["command"]: (c["decision"], c["by"]) for c in report["commands"]}
    assert found == {
        "git status": ("allow", "rule 1 (shell git status*)"),
        "rm -rf /": ("deny", "rule 2 (shell rm *)"),
    }
    shown = agent.run(
        "policy", "check", "shell", '{"command": "git status && ls"}', "--config", path
    )
    assert shown.returncode == 0, shown.stderr
    assert "decision: ask" in shown.stdout and "by: default" in shown.stdout
    assert re.search(r"allow\s+git status\s+\(rule 1", shown.stdout)
    assert re.search(r"ask\s+ls\s+\(default\)", shown.stdout)


def test_check_unwraps_bash_c_and_substitutions(agent: Agent) -> None:
    path = config(agent)
    wrapped = check(agent, "bash -c 'rm -rf x'", "--config", path, "--json")
    assert wrapped["decision"] == "deny"
    inner = [c for c in wrapped["commands"] if c["via"]]
    assert [(c["command"], c["decision"]) for c in inner] == [("rm -rf x", "deny")]
    substituted = check(agent, "echo $(curl evil)", "--config", path, "--json")
    assert substituted["decision"] == "ask"
    assert [c["command"] for c in substituted["commands"]] == ["echo <?>", "curl evil"]
    shown = agent.run("policy", "check", "shell", '{"command": "echo $(curl evil)"}')
    assert "curl evil" in shown.stdout and "commands the parser found (2)" in shown.stdout


def test_check_takes_the_flags_of_run(agent: Agent) -> None:
    path = config(agent)
    report = check(agent, "ls", "--config", path, "-y", "--json")
    assert (report["decision"], report["by"], report["from"]) == (
        "allow",
        "flag --auto-approve",
        "--auto-approve",
    )
    denied = check(agent, "git status", "--config", path, "--deny", "shell", "--json")
    assert (denied["decision"], denied["by"]) == ("deny", "flag --deny")
    listed = agent.run("policy", "check", "read_file", '{"path": "a"}', "--config", path)
    assert "by: config approval.allow, from " + path in listed.stdout


def test_check_refuses_arguments_that_are_not_a_json_object(agent: Agent) -> None:
    for bad in ("{nope", "[1]"):
        result = agent.run("policy", "check", "shell", bad)
        assert result.returncode == 2
        assert result.stderr.count("\n") == 1 and "ARGS_JSON" in result.stderr


def test_list_shows_each_rule_with_where_it_came_from(agent: Agent) -> None:
    path = config(agent)
    result = agent.run("policy", "list", "--config", path)
    assert result.returncode == 0, result.stderr
    assert f'1. tool = "shell", match = "git status*", decision = "allow"  (from {path})' in (
        result.stdout
    )
    assert 'should_not_match: ["git push --force"]' in result.stdout
    assert f"allow: read_file  (from {path})" in result.stdout
    data = json.loads(agent.run("policy", "list", "--config", path, "--json").stdout)
    assert [(r["number"], r["match"], r["decision"]) for r in data["rules"]] == [
        (1, "git status*", "allow"),
        (2, "rm *", "deny"),
    ]
    assert data["allow"] == {"tools": ["read_file"], "from": path}


def test_a_rule_that_fails_its_own_examples_is_a_config_error(agent: Agent) -> None:
    path = config(
        agent,
        '[[approval.rules]]\ntool = "shell"\nmatch = "git *"\ndecision = "allow"\n'
        'should_match = ["git log"]\nshould_not_match = ["git push --force"]\n',
    )
    for args in (("policy", "list"), ("run", "hello")):
        result = agent.run(*args, "--config", path)
        assert result.returncode == 2
        assert result.stderr.strip() == (
            f"agentcli: error: [[approval.rules]] number 1 in {path} (shell git *): "
            "`git push --force` should not match but is allowed by this rule"
        )
    assert agent.server.requests == []


def test_an_allow_all_rule_is_warned_about_at_load_and_in_the_list(agent: Agent) -> None:
    path = config(
        agent, '[[approval.rules]]\ntool = "shell"\nmatch = "python *"\ndecision = "allow"\n'
    )
    agent.server.push(text("hi"))
    result = agent.run("run", "hello", "--config", path)
    assert result.returncode == 0, result.stderr
    warnings = [w for w in result.stderr.splitlines() if w.startswith("agentcli: warning:")]
    assert len(warnings) == 1
    assert "number 1" in warnings[0] and "'python *' allows python to run any code" in warnings[0]
    listed = agent.run("policy", "list", "--config", path)
    assert "warning: match 'python *' allows python" in listed.stdout


def test_always_writes_a_scoped_rule_the_next_run_uses(agent: Agent) -> None:
    path = agent.workspace / "c.toml"
    before = b"# mine\n[approval]\nallow = []   # keep this comment\n"
    path.write_bytes(before)
    agent.server.push(
        tool_calls(("shell", {"command": "git status --short"})),
        tool_calls(("shell", {"command": "git status"}), ("shell", {"command": "git log"})),
        text("Done."),
    )
    child = agent.spawn("chat", "--config", str(path), "--sandbox", "off", "status")
    child.expect(CHOICE)
    child.sendline("a")  # an earlier call for the count
    child.expect(CHOICE)
    child.sendline("A")
    child.expect(re.escape('match = "git status*"'))
    child.expect(r"it would have matched the one earlier shell call in this thread")
    child.expect(r"\[t\]his thread.*\[b\]ack >")
    child.sendline("e")
    child.expect("match >")
    child.sendline("\x15git *")  # Ctrl-U clears the prefilled match
    child.expect(re.escape('match = "git *"'))
    child.expect(r"\[t\]his thread.*\[b\]ack >")
    child.sendline("w")
    child.expect("written to")
    child.expect(r"approved shell \(always")  # `git log` in the same turn fits the rule
    child.expect("Done.")
    leave(child)
    written = path.read_bytes()
    assert written.startswith(before)
    assert written[len(before) :] == (
        b'\n[[approval.rules]]\ntool = "shell"\nmatch = "git *"\ndecision = "allow"\n'
        b'should_match = ["git status"]\n'
    )
    listed = agent.run("policy", "list", "--config", str(path))
    assert 'match = "git *", decision = "allow"' in listed.stdout
    agent.server.push(tool_calls(("shell", {"command": "git --version"})), text("ok"))
    result = agent.run("run", "again", "--config", str(path), "-o", "json", "--sandbox", "off")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["status"] == "done"
