"""Claude Code's hook protocol as agentcli speaks it: tool names and arguments both ways,
matchers, and replies read (unit level; the scripts themselves run in tests/security)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.hooks.command_run import Finished
from agentcli.hooks.hook_set import Hook
from agentcli.hooks.replies import read_reply
from agentcli.hooks.tool_names import agentcli_input, claude_input, claude_name

WS = Path("/work/space")


@pytest.mark.parametrize(
    ("tool", "args", "name", "payload"),
    [
        ("shell", {"command": "ls", "timeout": 5}, "Bash", {"command": "ls", "timeout": 5000}),
        ("read_file", {"path": "a/b.txt"}, "Read", {"file_path": "/work/space/a/b.txt"}),
        (
            "edit_file",
            {"path": "x", "old_text": "a", "new_text": "b"},
            "Edit",
            {"file_path": "/work/space/x", "old_string": "a", "new_string": "b"},
        ),
        ("list_dir", {}, "LS", {"path": "/work/space"}),
        ("search_files", {"pattern": "p"}, "Grep", {"pattern": "p", "path": "/work/space"}),
        ("fetch_url", {"url": "https://x.org"}, "WebFetch", {"url": "https://x.org"}),
        ("docs__search", {"q": 1}, "docs__search", {"q": 1}),
    ],
)
def test_calls_are_sent_under_claude_codes_names(
    tool: str, args: dict, name: str, payload: dict
) -> None:
    assert claude_name(tool) == name
    assert claude_input(tool, args, WS) == payload


def test_an_updated_input_comes_back_in_agentclis_names() -> None:
    args = {"path": "sub/../a.txt", "old_text": "a", "new_text": "b"}
    same = claude_input("edit_file", args, WS)
    assert agentcli_input("edit_file", same, args, WS) == args  # the model's own path kept
    moved = {**same, "file_path": "/work/space/b.txt", "replace_all": False}
    assert agentcli_input("edit_file", moved, args, WS) == {
        "path": "b.txt",
        "old_text": "a",
        "new_text": "b",
        "replace_all": False,  # not the tool's: the schema check refuses it
    }
    outside = {**same, "file_path": "/etc/passwd"}
    assert agentcli_input("edit_file", outside, args, WS)["path"] == "/etc/passwd"
    shell = {"command": "ls", "timeout": 3000, "description": "list"}
    assert agentcli_input("shell", shell, {"command": "x"}, WS) == {"command": "ls", "timeout": 3}


@pytest.mark.parametrize(
    ("matcher", "tool", "selects"),
    [
        ("", "shell", True),
        ("*", "read_file", True),
        ("Bash", "shell", True),
        ("shell", "shell", True),
        ("Bash", "bash_history__x", False),
        ("Edit|Write", "write_file", True),
        ("Edit|Write", "read_file", False),
        ("Bas", "shell", False),  # a plain name is exact, not a prefix
        ("mcp__.*|docs__.*", "docs__search", True),
        ("^Read$", "read_file", True),
        ("Notebook.*", "shell", False),
    ],
)
def test_matchers_select_as_claude_codes_do(matcher: str, tool: str, selects: bool) -> None:
    assert Hook(matcher, "x", 1).selects(tool) is selects


def reply(status: int | None, out: str = "", err: str = "", event: str = "PreToolUse"):  # noqa: ANN201
    failure = None if status is not None else "did not finish within 1 s: stopped"
    return read_reply("cmd", event, Finished(status, out, err, failure))


def test_replies_read_as_claude_code_reads_them() -> None:
    assert reply(2, '{"hookSpecificOutput": {"permissionDecision": "allow"}}', "no").decision == (
        "deny"
    )  # exit 2: stdout is ignored, stderr is the reason
    assert reply(2, err="no").reason == "no"
    assert reply(0).decision is None and not reply(0).failed
    assert reply(1, err="oops").decision is None and "oops" in reply(1, err="oops").message
    said = reply(
        0,
        '{"hookSpecificOutput": {"permissionDecision": "ask",'
        ' "permissionDecisionReason": "why", "updatedInput": {"command": "x"}}}',
    )
    assert (said.decision, said.reason, said.updated) == ("ask", "why", {"command": "x"})
    assert reply(0, '{"decision": "approve"}').decision == "allow"  # the older form
    assert reply(0, '{"decision": "block", "reason": "r"}').decision == "deny"
    assert reply(0, '{"continue": false, "stopReason": "s"}').decision == "deny"
    assert reply(0, "plain text").decision is None
    assert reply(0, "context", event="UserPromptSubmit").context == "context"
    assert reply(0, '{"decision": "block", "reason": "r"}', event="Stop").decision == "block"


@pytest.mark.parametrize(
    "out",
    [
        '{"hookSpecificOutput": {"permissionDecision": "allow"',
        '{"hookSpecificOutput": {"permissionDecision": "Allow"}}',
        '{"hookSpecificOutput": {"permissionDecision": "allow", "updatedInput": "rm -rf /"}}',
        '{"decision": "yes"}',
        "[1, 2]",
    ],
)
def test_a_reply_outside_the_protocol_fails(out: str) -> None:
    assert reply(0, out).failed or reply(0, out).decision is None
    assert reply(0, out).decision != "allow"


def test_a_hook_that_did_not_finish_failed() -> None:
    assert "did not finish" in reply(None).failed
