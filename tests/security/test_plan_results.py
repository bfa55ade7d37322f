"""A task's result put into a later task of a plan (issue 20): it must never do more than the
person approved. A result is untrusted text (a file, a web page, a command's output).

In a shell command `$N` becomes one quoted word (substitution.py). Every payload here is run
under real bash after substitution, in a scratch folder, and must not create PWNED. Where the
reference is a plain word of the command that holds; inside double or single quotes, a
here-document, backticks or bash arithmetic it does not (the quoting a person would write
around "$1" turns the quoted result back into shell syntax): such a plan is refused before
review (agent/plan/result_targets.py), and checked again once the result is in.
The e2e tests run one such plan through the installed command and `review --approve all`.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest
from langchain_core.messages import ToolMessage

from agentcli.agent.plan.plan_check import read_plan
from agentcli.agent.plan.plan_task import run_task
from agentcli.agent.plan.result_targets import moved
from agentcli.agent.plan.substitution import references, substitute
from agentcli.policy.approval_policy import Policy, Rule
from agentcli.threads.store_key import ApprovalKey
from tests.e2e.conftest import Agent
from tests.helpers.scripted_server import text, tool_calls

# results a web page or a file could hold, each an attempt to run `touch PWNED`
RESULTS = [
    "$(touch PWNED)",
    "`touch PWNED`",
    "'; touch PWNED; '",
    '"; touch PWNED; "',
    "a b; touch PWNED",
    "x\ntouch PWNED",
    "$'\\x27'; touch PWNED",
    "a[$(touch PWNED)]",
    "-rf; touch PWNED",
    "*; touch PWNED #",
    "\\'; touch PWNED; \\'",
    "'\"$(touch PWNED)\"'",
]
# commands where `$1` is a plain word: the result is one word, whatever it holds
PLAIN = [
    "printf '%s' $1",
    "printf '%s' ${1}",
    "echo $1 | wc -c",
    "echo prefix$1suffix",
    "echo $(echo $1)",
    "test -n $1 && echo set",
    "for word in $1; do printf '%s|' $word; done",
]
PAYLOADS_PLAIN = [(command, result) for command in PLAIN for result in RESULTS]

# the same reference inside quoting a person would approve without a second look; each
# paired with a result that gets through there (checked against bash in the test itself)
PAYLOADS_QUOTED = [
    ('echo "$1"', "$(touch PWNED)"),
    ('echo "${1}" | wc -c', "`touch PWNED`"),
    ("echo '$1'", "; touch PWNED; "),
    ("echo '$1'", "$(touch PWNED)"),
    ("cat <<EOF\n$1\nEOF", "$(touch PWNED)"),
    ("echo `echo $1`", "`; touch PWNED; `"),
    ("[[ $1 -eq 1 ]] && echo one", "a[$(touch PWNED)]"),
    ("(( $1 > 0 )) && echo positive", "a[$(touch PWNED)]"),
    ("declare -i n=$1; echo $n", "a[$(touch PWNED)]"),
    ("awk '{print $1}' /dev/null", "$(touch PWNED)"),
]


def bash(command: str, where: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", command], cwd=where, capture_output=True, text=True, timeout=10
    )


@pytest.mark.parametrize(("command", "result"), PAYLOADS_PLAIN)
def test_a_result_put_in_as_a_plain_word_stays_one_word(
    tmp_path: Path, command: str, result: str
) -> None:
    ran = substitute("shell", {"command": command}, {1: result})["command"]
    bash(ran, tmp_path)
    assert not (tmp_path / "PWNED").exists(), ran
    if command.startswith("printf '%s' "):  # one word, exactly the result
        assert bash(ran, tmp_path).stdout == result


@pytest.mark.parametrize(("command", "result"), PAYLOADS_QUOTED)
def test_a_result_inside_quotes_or_arithmetic_never_runs_as_a_command(
    tmp_path: Path, command: str, result: str
) -> None:
    """Each of these runs the result as code in bash (checked here). The plan is refused
    before anyone reviews it, naming the reference; and were such a template run anyway,
    the check once the result is in refuses it too."""
    ran = substitute("shell", {"command": command}, {1: result})["command"]
    bash(ran, tmp_path)
    assert (tmp_path / "PWNED").exists() or command.startswith(("awk", "echo '$1'")), ran
    tasks = [
        {"id": 1, "tool": "shell", "args": {"command": "cat page.txt"}},
        {"id": 2, "tool": "shell", "args": {"command": command}},
    ]
    plan = read_plan({"tasks": tasks}, {"shell": _shell_tool()})
    assert isinstance(plan, str) and plan.startswith("task 2 (shell): $1 in the command"), plan
    if '"$' in command or '"${' in command or "`" in command or "<<" in command:
        # in double quotes, backticks or a here-document bash reads other commands: the
        # second check refuses it too (arithmetic and single quotes only the first catches)
        assert moved("shell", {"command": command}, {"command": ran}, {1}, {1: result})


# `\d` is any Unicode digit: `$١` (ARABIC-INDIC DIGIT ONE) or `$１` (FULLWIDTH) would stand for
# task 1's result in text a person reads as no reference at all
PAYLOADS_DIGITS = ["$١", "${١}", "$１", "$𝟏", "$¹", "${²}"]


@pytest.mark.parametrize("written", PAYLOADS_DIGITS)
def test_only_ascii_digits_refer_to_a_task(written: str) -> None:
    args = {"content": f"price: {written}"}
    assert references(args, {1}) == set()
    assert substitute("write_file", args, {1: "SECRET"}) == args


def _shell_tool():  # the real tool: its schema is what the plan is checked against
    from agentcli_tools.registry import builtin_tools

    [shell] = builtin_tools(["shell"])
    return shell


# -- through the installed command ---------------------------------------------------------


def plan_call(*tasks: tuple[int, str, dict, list[int]]):
    return tool_calls(
        ("plan", {"tasks": [{"id": i, "tool": t, "args": a, "deps": d} for i, t, a, d in tasks]})
    )


def approve_plan(agent: Agent, command: str) -> dict[int, dict]:
    """A plan that reads page.txt and puts it into `command`, approved by a person with
    `review --approve all`; each task's outcome."""
    agent.server.push(
        plan_call(
            (1, "shell", {"command": "cat page.txt"}, []),
            (2, "shell", {"command": command}, [1]),
        )
    )
    parked = agent.run("run", "--plan", "copy the page", "-o", "json")
    assert parked.returncode == 3, parked.stderr
    thread = json.loads(parked.stdout)["thread_id"]
    agent.server.push(text("Copied."))
    decided = agent.run("review", thread, "--approve", "all")
    assert decided.returncode == 0, decided.stderr
    shown = json.loads(agent.run("threads", "show", thread, "--json").stdout)
    [planned] = [c for e in shown["entries"] for c in e.get("calls", []) if c.get("plan")]
    return {task["id"]: task for task in planned["plan"]}


def plan_goes_back(agent: Agent, command: str) -> None:
    """A plan that reads page.txt and puts it into `command` goes back to the model before
    any review (the reference is where code goes), and nothing ran."""
    agent.server.push(
        plan_call(
            (1, "shell", {"command": "cat page.txt"}, []),
            (2, "shell", {"command": command}, [1]),
        ),
        text("I will plan it another way."),
    )
    result = agent.run("run", "--plan", "copy the page", "-o", "json")
    assert result.returncode == 0, result.stderr  # nothing to review: the plan went back
    assert not (agent.workspace / "PWNED").exists()
    told = agent.server.requests[-1]["messages"][-1]
    assert told["role"] == "tool" and "$1 in the command" in told["content"]


def test_a_page_read_by_a_plan_cannot_run_a_command_in_the_next_task(agent: Agent) -> None:
    (agent.workspace / "page.txt").write_text("$(touch PWNED)")
    plan_goes_back(agent, 'echo "$1" > copy.txt')


def test_a_deny_rule_stops_what_a_result_would_run(agent: Agent) -> None:
    """The policy's second look: with the substituted command in front of it, a deny rule
    refuses the task: the person approved `rm -f $1`, the page said `keep.txt`."""
    config = Path(agent.env["XDG_CONFIG_HOME"]) / "agentcli" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        '[[approval.rules]]\ntool = "shell"\nmatch = "rm *keep*"\ndecision = "deny"\n'
    )
    (agent.workspace / "page.txt").write_text("keep.txt")
    (agent.workspace / "keep.txt").write_text("kept")
    tasks = approve_plan(agent, "rm -f $1")
    assert (agent.workspace / "keep.txt").exists()
    assert tasks[2]["state"] == "refused" and "denied once" in tasks[2]["why"]


def test_a_page_read_by_a_plan_goes_into_a_plain_word_as_data(agent: Agent) -> None:
    (agent.workspace / "page.txt").write_text("$(touch PWNED); touch PWNED")
    tasks = approve_plan(agent, "printf '%s' $1 > copy.txt")
    assert tasks[2]["state"] == "done"
    assert not (agent.workspace / "PWNED").exists()
    assert (agent.workspace / "copy.txt").read_text() == "$(touch PWNED); touch PWNED"


# -- the policy's second look at a task a person approved ----------------------------------


def second_look(rules: tuple, template: str, result: str, who: str = "person") -> dict:
    """Run task 2 (`template`, approved by `who`) of a plan whose task 1 returned `result`,
    as the tools node does; its entry in plan_results."""
    ctx = SimpleNamespace(policy=Policy(rules=rules), workspace=None, cancel=None)
    call = {"id": "p.2", "name": "shell", "args": {"command": template}}
    part = {"run": "second-look", "given": {"1": result}, "who": who, "allowed": []}

    def ran(ready: dict) -> dict:
        return {"messages": [ToolMessage("exit code 0\nran", tool_call_id=ready["id"])]}

    key = ApprovalKey(b"s" * 32)
    return run_task(call, part, ctx, key, "t", ran)["plan_results"]["p.2"]


def test_an_ask_rule_the_substituted_command_meets_is_not_passed_by() -> None:
    """The person approved `git $1` (task 1's result: a branch name, they thought). An ask
    rule says `git push*` always goes to a person; with `push` put in, nobody saw it."""
    rules = (Rule("shell", "ask", "git push*"),)
    entry = second_look(rules, "git $1 --dry-run", "push")
    assert entry["outcome"] == "refused", entry


def test_a_deny_rule_the_substituted_command_meets_refuses_it() -> None:
    rules = (Rule("shell", "deny", "git push*"),)
    entry = second_look(rules, "git $1 --dry-run", "push")
    assert entry["outcome"] == "refused" and entry["why"].startswith("denied once")
    assert second_look(rules, "git $1 --dry-run", "status")["outcome"] == "done"


# -- results in paths and URLs: the part of the target the template fixed ---------------------

# (tool, template args, result): the template fixes where the call goes (a folder, a host
# suffix); the result moves it elsewhere, though the tools' own checks all pass
PAYLOADS_TARGETS = [
    ("fetch_url", {"url": "https://$1.github.io/profile"}, "attacker.invalid/#"),
    ("fetch_url", {"url": "https://$1.github.io/profile"}, "x@attacker.invalid/#"),
    ("fetch_url", {"url": "https://example.com$1"}, "@attacker.invalid/"),
    ("fetch_url", {"url": "https://example.com$1"}, ".attacker.invalid/"),
    ("write_file", {"path": "notes/$1.md", "content": "x"}, "../README"),
    ("write_file", {"path": "notes/$1.md", "content": "x"}, "a/../../docs/index"),
]


def _target(tool: str, args: dict) -> str:
    """Where a call goes: a URL's host, or a path's folder (as the tool resolves them)."""
    from posixpath import dirname, normpath
    from urllib.parse import urlsplit

    if tool == "fetch_url":
        return urlsplit(args["url"]).hostname or ""
    return dirname(normpath(args["path"]))


@pytest.mark.parametrize(("tool", "template", "result"), PAYLOADS_TARGETS)
def test_a_result_cannot_move_a_task_to_another_host_or_folder(
    tool: str, template: dict, result: str
) -> None:
    ran: list[dict] = []
    ctx = SimpleNamespace(policy=Policy(), workspace=None, cancel=None)
    call = {"id": "p.2", "name": tool, "args": template}
    part = {"run": "targets", "given": {"1": result}, "who": "person", "allowed": []}

    def record(ready: dict) -> dict:
        ran.append(ready["args"])
        return {"messages": [ToolMessage("ok", tool_call_id=ready["id"])]}

    run_task(call, part, ctx, ApprovalKey(b"u" * 32), "t", record)
    expected = _target(tool, substitute(tool, template, {1: "plain"}))
    assert all(_target(tool, args) == expected for args in ran), (ran, expected)


def test_a_result_cannot_move_a_write_out_of_the_folder_approved(agent: Agent) -> None:
    (agent.workspace / "notes").mkdir()
    (agent.workspace / "README.md").write_text("original\n")
    agent.server.push(
        plan_call(
            (1, "shell", {"command": "printf '%s' ../README"}, []),  # a name from a page
            (2, "write_file", {"path": "notes/$1.md", "content": "overwritten\n"}, [1]),
        )
    )
    parked = agent.run("run", "--plan", "save a note", "-o", "json")
    assert parked.returncode == 3, parked.stderr
    agent.server.push(text("Saved."))
    decided = agent.run("review", json.loads(parked.stdout)["thread_id"], "--approve", "all")
    assert decided.returncode == 0, decided.stderr
    assert (agent.workspace / "README.md").read_text() == "original\n"
