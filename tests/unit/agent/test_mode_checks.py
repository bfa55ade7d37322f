"""An approval mode in a session (fake chat model): what it runs, what the run's context
makes it ask after all (agentcli/agent/review/mode_checks.py), and what the audit says."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from agentcli_tools.registry import BUILTIN_TOOLS

from agentcli.agent.toolset.sandboxing import mode_box
from agentcli.config import Settings
from agentcli.events import ReviewRequest, ToolResult
from agentcli.policy.approval_policy import Policy
from agentcli.session.local import Session
from agentcli.threads.backends import open_store
from tests.helpers.fakes import FakeChatModel, call, say

TOOLS = ("read_file", "write_file", "shell", "list_dir")


def session(tmp_path: Path, mode: str, replies: list, **settings: Any) -> Session:
    workspace = tmp_path / "work"
    workspace.mkdir(exist_ok=True)
    (workspace / "a.txt").write_text("a\n")
    config = Settings(db=str(tmp_path / "threads.db"), **settings)
    policy = Policy.build(mode=mode, box=mode_box(config))
    model = FakeChatModel(replies=replies, calls=[])
    tools = [BUILTIN_TOOLS[name] for name in TOOLS]
    return Session(
        config, open_store(config), policy, workspace=workspace, model=model, tools=tools
    )


def asked(events: list) -> list[str]:
    return [r["name"] for e in events if isinstance(e, ReviewRequest) for r in e.action_requests]


def test_edit_runs_a_write_and_records_the_mode_but_asks_for_one_undo_cannot_take_back(
    tmp_path: Path,
) -> None:
    (tmp_path / "work" / ".git" / "hooks").mkdir(parents=True)
    hook = {"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\nid\n"}
    replies = [
        call(("read_file", {"path": "a.txt"}), ("write_file", {"path": "b.txt", "content": "b"})),
        call(("write_file", {"path": ".gitignore", "content": "*\n"}), ("write_file", hook)),
        say("done"),
    ]
    s = session(tmp_path, "edit", replies)
    events = list(s.send("go"))
    review = next(e for e in events if isinstance(e, ReviewRequest))
    requests = review.action_requests
    assert [r["args"]["path"] for r in requests] == [".gitignore", ".git/hooks/pre-commit"]
    # .gitignore: the mode granted it, this run's undo could not take it back (mode_checks)
    assert "does not: it cannot be undone" in requests[0]["description"]
    assert (tmp_path / "work" / "b.txt").read_text() == "b"
    audit = s.state().values["audit"]
    by_mode = [(a["tool"], a["who"], a["by"]) for a in audit if a["who"] == "mode"]
    assert by_mode == [
        ("read_file", "mode", "mode edit (a read inside the workspace)"),
        ("write_file", "mode", "mode edit (an undoable write inside the workspace)"),
    ]
    assert not (tmp_path / "work" / ".git" / "hooks" / "pre-commit").exists()


@pytest.mark.parametrize(
    "settings",
    [{"sandbox_mode": "off"}, {"sandbox_network": True}, {"sandbox_network": ["pypi.org"]}],
    ids=["sandbox off", "network on", "hosts listed"],
)
def test_auto_asks_for_a_command_the_sandbox_would_not_confine(
    tmp_path: Path, settings: dict[str, Any]
) -> None:
    s = session(tmp_path, "auto", [call(("shell", {"command": "ls"})), say("done")], **settings)
    assert asked(list(s.send("go"))) == ["shell"]


def test_the_run_context_is_checked_whatever_the_policy_was_told(tmp_path: Path) -> None:
    """A policy built as if the sandbox confined (a bug, a server's other settings) still
    asks when this run's sandbox is off: the context decides (mode_checks.held)."""
    s = session(tmp_path, "auto", [call(("shell", {"command": "ls"})), say("done")])
    s.engine.sandbox = replace(s.engine.sandbox, mode="off")  # what each run is given
    assert asked(list(s.send("go"))) == ["shell"]


def test_a_mode_set_mid_thread_decides_the_next_calls_not_the_pending_ones(
    tmp_path: Path,
) -> None:
    replies = [call(("list_dir", {})), say("ok"), call(("read_file", {"path": "a.txt"})), say("ok")]
    s = session(tmp_path, "ask", replies)
    assert asked(list(s.send("one"))) == ["list_dir"]
    s.set_mode("read")
    review = s.pending()
    assert review is not None and s.policy_decisions(review) is None  # still the person's
    list(s.decide([{"type": "approve"}]))
    events = list(s.send("two"))
    assert asked(events) == [] and any(isinstance(e, ToolResult) for e in events)
