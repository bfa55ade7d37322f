"""Preconditions in the agent: a call that will be refused goes back to the model before any
review (the tools' own prechecks: tests/tools/test_preconditions.py)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from agentcli_tools.context import ToolContext
from agentcli_tools.registry import BUILTIN_TOOLS
from langchain_core.messages import ToolMessage
from langchain_core.tools import tool

from agentcli.agent.review.precheck import precondition
from agentcli.config import Settings
from agentcli.events import ReviewRequest, ToolResult
from agentcli.policy.approval_policy import Policy
from agentcli.session.local import Session
from agentcli.threads.backends import open_store
from tests.helpers.fakes import FakeChatModel, call, say
from tests.helpers.tooling import linked_workspace

SETTING = "[tools] allow_private_urls"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return linked_workspace(tmp_path)


@tool
def guarded(where: str) -> str:
    """Go somewhere.

    Args:
        where: the place
    """
    return f"went to {where}"


def test_a_tool_may_carry_any_precheck_and_a_broken_one_is_no_verdict() -> None:
    context = ToolContext(workspace=Path("."))
    plain = guarded.model_copy()
    assert precondition(plain, {"where": "x"}, context) is None
    refusing = guarded.model_copy(
        update={"metadata": {"precheck": lambda a, c: f"no {a['where']}"}}
    )
    assert precondition(refusing, {"where": "x"}, context) == "no x"
    assert precondition(refusing, {"where": "x"}, None) is None  # no context: cannot tell

    def broken(args: Any, context: ToolContext) -> str | None:
        raise RuntimeError("bug")

    crashing = guarded.model_copy(update={"metadata": {"precheck": broken}})
    assert precondition(crashing, {"where": "x"}, context) is None  # asked as usual


def session(tmp_path: Path, workspace: Path, replies: list, **settings: Any) -> Session:
    config = Settings(db=str(tmp_path / "threads.db"), **settings)
    tools = [BUILTIN_TOOLS[name] for name in ("write_file", "read_file", "fetch_url")]
    model = FakeChatModel(replies=replies, calls=[])
    return Session(
        config, open_store(config), Policy(), workspace=workspace, model=model, tools=tools
    )


def test_a_refused_call_goes_back_to_the_model_without_a_review(
    tmp_path: Path, workspace: Path
) -> None:
    replies = [
        call(("write_file", {"path": "away/new.txt", "content": "x"})),
        call(("fetch_url", {"url": "http://127.0.0.1:1/"})),
        call(("write_file", {"path": "sub/new.txt", "content": "x"})),
        say("done"),
    ]
    s = session(tmp_path, workspace, replies)
    events = list(s.send("go"))
    results = [e for e in events if isinstance(e, ToolResult)]
    assert [r.status for r in results] == ["error", "error"]
    reviews = [e for e in events if isinstance(e, ReviewRequest)]
    assert len(reviews) == 1  # only the call that can run reaches the person
    assert reviews[0].action_requests[0]["args"]["path"] == "sub/new.txt"
    assert not (tmp_path / "outside" / "new.txt").exists()
    sent = s.model().calls[1][-1]  # the model's next request carries the reason, whole
    assert isinstance(sent, ToolMessage) and "outside the workspace" in sent.content
    assert "--workspace" in sent.content and sent.content.endswith("call again.")
    fetch = s.model().calls[2][-1].content
    assert SETTING in fetch and "127.0.0.1" in fetch
    audit = s.state().values["audit"]
    assert [a["decision"] for a in audit[:2]] == ["invalid", "invalid"]


def test_refusals_count_as_invalid_turns(tmp_path: Path, workspace: Path) -> None:
    bad = [call(("read_file", {"path": f"../{i}"})) for i in range(2)]
    s = session(tmp_path, workspace, [*bad, say("sorry")], max_invalid_turns=2)
    with pytest.raises(Exception, match="invalid tool calls 2 turns in a row"):
        list(s.send("go"))


def test_an_edit_that_leads_outside_is_refused(tmp_path: Path, workspace: Path) -> None:
    s = session(tmp_path, workspace, [call(("write_file", {"path": "a", "content": "x"}))])
    review = [e for e in s.send("go") if isinstance(e, ReviewRequest)][0]
    args = {"path": "away/b", "content": "x"}
    problem = s.check_edit("write_file", dict(args), review.action_requests[0]["args"])
    assert problem and "outside the workspace" in problem
    with pytest.raises(Exception, match="outside the workspace"):
        list(s.decide([{"type": "edit", "edited_action": {"name": "write_file", "args": args}}]))
    assert not (tmp_path / "outside" / "b").exists()


def test_the_tool_still_checks_when_it_runs(tmp_path: Path, workspace: Path) -> None:
    """Time of check, time of use: a folder swapped for a link after the review."""
    (workspace / "later").mkdir()
    s = session(
        tmp_path, workspace, [call(("write_file", {"path": "later/f", "content": "x"})), say("ok")]
    )
    assert any(isinstance(e, ReviewRequest) for e in s.send("go"))  # the precheck passed
    (workspace / "later").rmdir()
    os.symlink(tmp_path / "outside", workspace / "later")
    results = [e for e in s.decide([{"type": "approve"}]) if isinstance(e, ToolResult)]
    assert results[0].status == "error" and "outside the workspace" in results[0].content
    assert not (tmp_path / "outside" / "f").exists()


def test_a_denied_host_goes_back_naming_the_rules_setting(tmp_path: Path, workspace: Path) -> None:
    config = Settings(db=str(tmp_path / "threads.db"))
    rule = {"tool": "fetch_url", "match": "*.evil.example", "decision": "deny"}
    s = Session(
        config,
        open_store(config),
        Policy.build(rules=[rule]),
        workspace=workspace,
        model=FakeChatModel(
            replies=[call(("fetch_url", {"url": "https://a.evil.example/x"})), say("ok")],
            calls=[],
        ),
        tools=[BUILTIN_TOOLS["fetch_url"]],
    )
    events = list(s.send("go"))
    assert not any(isinstance(e, ReviewRequest) for e in events)
    sent = s.model().calls[1][-1].content
    assert "denied by rule 1" in sent and "[[approval.rules]]" in sent
