"""Preconditions: a call that will be refused goes back to the model before any review."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

import pytest
from agentcli_tools.context import ToolContext
from agentcli_tools.preconditions import path_inside, precheck_of, url_reachable
from agentcli_tools.registry import BUILTIN_TOOLS
from langchain_core.messages import ToolMessage
from langchain_core.tools import tool

from agentcli.agent.review.preconditions import precondition
from agentcli.config import Settings
from agentcli.events import ReviewRequest, ToolResult
from agentcli.policy.approval_policy import Policy
from agentcli.session.local import Session
from agentcli.threads.backends import open_store
from tests.helpers.fakes import FakeChatModel, call, say

SETTING = "[tools] allow_private_urls"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "work"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "a.txt").write_text("a\n")
    (tmp_path / "outside").mkdir()
    os.symlink(tmp_path / "outside", root / "away")  # a link inside that leads outside
    os.symlink("sub", root / "near")  # one that stays inside
    return root


@pytest.mark.parametrize(
    "path",
    ["../x", "/etc/passwd", "~/x", "away/new.txt", "sub/../../x", "a\x00b", "near/../../x"],
)
def test_a_path_leading_outside_is_refused_with_the_full_reason(workspace: Path, path: str) -> None:
    problem = path_inside({"path": path}, ToolContext(workspace=workspace))
    assert problem is not None
    if "\x00" not in path:
        assert "outside the workspace" in problem and "--workspace" in problem
    assert not (workspace.parent / "x").exists()


@pytest.mark.parametrize("path", ["sub/a.txt", "near/a.txt", "new/deeper/file.txt", ".", "sub"])
def test_a_path_inside_passes_and_nothing_is_made(workspace: Path, path: str) -> None:
    before = sorted(str(p) for p in workspace.rglob("*"))
    assert path_inside({"path": path}, ToolContext(workspace=workspace)) is None
    assert sorted(str(p) for p in workspace.rglob("*")) == before  # a pure read


def test_every_file_tool_and_fetch_url_carry_their_precheck() -> None:
    for name in ("read_file", "write_file", "edit_file", "list_dir", "search_files"):
        assert precheck_of(BUILTIN_TOOLS[name]) is path_inside, name
    assert precheck_of(BUILTIN_TOOLS["fetch_url"]) is url_reachable
    assert precheck_of(BUILTIN_TOOLS["shell"]) is None


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        ("http://127.0.0.1:8080/admin", "loopback"),
        ("http://[::1]/", "loopback"),
        ("http://10.1.2.3/", "private"),
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://0x7f.1/", "loopback"),  # another spelling of 127.0.0.1
        ("http://[::ffff:192.168.0.1]/", "private"),
        ("http://localhost:9/", "loopback"),
    ],
)
def test_a_private_address_is_refused_naming_the_setting(url: str, kind: str) -> None:
    problem = url_reachable({"url": url}, ToolContext(workspace=Path(".")))
    assert problem is not None and f"a {kind} address" in problem
    assert SETTING in problem and problem.startswith("refusing to fetch")
    allowed = ToolContext(workspace=Path("."), allow_private_urls=True)
    assert url_reachable({"url": url}, allowed) is None


@pytest.mark.parametrize(
    "url", ["ftp://example.com/", "http://user@example.com/", "http://exa mple.com/", "x"]
)
def test_a_url_fetch_url_would_not_read_is_refused(url: str) -> None:
    problem = url_reachable({"url": url}, ToolContext(workspace=Path(".")))
    assert problem is not None and problem.startswith(f"refusing to fetch {url!r}: ")


def test_a_name_is_never_looked_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """A lookup would tell the name's DNS server about the call before anyone approved it."""
    asked: list[Any] = []
    monkeypatch.setattr(socket, "getaddrinfo", lambda *a, **k: asked.append(a) or [])
    context = ToolContext(workspace=Path("."))
    assert url_reachable({"url": "https://secret.attacker.example/"}, context) is None
    assert url_reachable({"url": "http://93.184.216.34/"}, context) is None  # public
    assert asked == []


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
