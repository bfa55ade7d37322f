"""`agentcli acp` driven by a real ACP client: the Agent Client Protocol SDK's own client
side (tests/helpers/acp_client.py) talking to the installed command over stdio, as an
editor does, with the scripted model server behind it. Each test drives a whole review."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

from acp import text_block

from tests.e2e.conftest import Agent
from tests.helpers.acp_client import CANCEL, HOLD, Editor, editor
from tests.helpers.scripted_server import text, tool_calls

Play = Callable[[Editor, Any], Awaitable[Any]]


def drive(agent: Agent, answers: list[str], play: Play, *args: str) -> tuple[Editor, Any]:
    """`play(editor, connection)` against a fresh `agentcli acp`; what the editor saw, and
    what `play` returned."""

    async def main() -> tuple[Editor, Any]:
        async with editor(agent, *args, answers=answers) as (ed, conn, _):
            return ed, await play(ed, conn)

    return asyncio.run(main())


async def new(conn: Any, agent: Agent) -> str:
    return (await conn.new_session(cwd=str(agent.workspace))).session_id


async def say(conn: Any, session: str, message: str) -> str:
    done = await conn.prompt(session_id=session, prompt=[text_block(message)])
    return done.stop_reason


async def one_turn(ed: Editor, conn: Any, agent: Agent, message: str = "go") -> tuple[str, str]:
    session = await new(conn, agent)
    return session, await say(conn, session, message)


def calls(agent: Agent, thread: str) -> list[dict[str, Any]]:
    """The thread's calls as `threads show --json` reads them from the database."""
    result = agent.run("threads", "show", thread, "--json")
    assert result.returncode == 0, result.stderr
    entries = json.loads(result.stdout)["entries"]
    return [call for entry in entries for call in entry.get("calls", [])]


def tool_results(agent: Agent, request: int) -> list[str]:
    """The tool results the model was sent in request number `request` (from 0)."""
    messages = agent.server.requests[request]["messages"]
    return [m["content"] for m in messages if m["role"] == "tool"]


def test_allow_once_runs_the_call_and_reports_its_result(agent: Agent) -> None:
    agent.server.push(
        tool_calls(("shell", {"command": "echo made > made.txt; echo done-it"})), text("Made.")
    )
    ed, (thread, stop) = drive(agent, ["allow_once"], lambda e, c: one_turn(e, c, agent))

    assert stop == "end_turn"
    assert (agent.workspace / "made.txt").read_text() == "made\n"
    (asked,) = ed.asked
    assert asked["tool_call"].tool_call_id == "call_1"
    assert asked["tool_call"].title == "shell: echo made > made.txt; echo done-it"
    assert [(o.option_id, o.kind) for o in asked["options"]] == [
        ("allow_once", "allow_once"),
        ("allow_always", "allow_always"),
        ("reject_once", "reject_once"),
        ("reject_always", "reject_always"),
    ]
    states = ed.call_states("call_1")
    assert states[0] == "pending" and states[-1] == "completed", states
    assert "done-it" in ed.result("call_1")
    assert ed.text() == "Made."
    (call,) = calls(agent, thread)  # the session is the thread
    record = call["decision"]
    assert (record["decision"], record["who"], record["by"]) == (
        "approved",
        "client",
        "acp: test-editor",
    )


def test_reject_once_does_not_run_the_call_and_the_model_is_told(agent: Agent) -> None:
    agent.server.push(
        tool_calls(("write_file", {"path": "notes.md", "content": "secret plans\n"})),
        text("I will not write it."),
    )
    ed, (thread, stop) = drive(agent, ["reject_once"], lambda e, c: one_turn(e, c, agent))

    assert stop == "end_turn"
    assert not (agent.workspace / "notes.md").exists()
    (asked,) = ed.asked
    (diff,) = asked["tool_call"].content  # the file as it would be, for the editor's diff view
    assert diff.type == "diff" and diff.new_text == "secret plans\n" and diff.old_text is None
    assert diff.path == str(agent.workspace / "notes.md")
    assert ed.call_states("call_1")[-1] == "failed"
    assert tool_results(agent, 1) == ["rejected by the user"]
    assert ed.text() == "I will not write it."
    (call,) = calls(agent, thread)
    assert (call["decision"]["decision"], call["decision"]["by"]) == (
        "rejected",
        "acp: test-editor",
    )


def test_allow_always_keeps_the_scoped_rule_and_the_next_same_call_is_not_asked(
    agent: Agent,
) -> None:
    same = ("shell", {"command": "ls -a"})
    agent.server.push(
        tool_calls(same), text("Once."), tool_calls(same), text("Twice."),
        tool_calls(("shell", {"command": "rm -rf build"})), text("Third."),
    )  # fmt: skip

    async def play(ed: Editor, conn: Any) -> str:
        session = await new(conn, agent)
        for message in ("status", "status again", "clean"):
            assert await say(conn, session, message) == "end_turn"
        return session

    ed, thread = drive(agent, ["allow_always", "reject_once"], play)
    first = ed.asked[0]
    always = next(o for o in first["options"] if o.option_id == "allow_always")
    assert always.name == 'Allow always in this thread: "shell" calls matching "ls *"'
    # the second `ls -a` ran without a question; `rm -rf build` was asked about
    assert [a["tool_call"].raw_input["command"] for a in ed.asked] == ["ls -a", "rm -rf build"]
    assert ed.call_states("call_2")[-1] == "completed"
    decided = [
        (c["args"]["command"], c["decision"]["decision"], c["decision"]["who"])
        for c in calls(agent, thread)
    ]
    assert decided[0] == ("ls -a", "approved", "client")
    assert decided[1][0] == "ls -a" and decided[1][2] != "client"  # the thread's rule
    assert decided[2] == ("rm -rf build", "rejected", "client")


def test_a_cancelled_request_leaves_the_call_pending_and_load_continues_it(agent: Agent) -> None:
    agent.server.push(tool_calls(("shell", {"command": "echo later > later.txt"})))
    ed, (thread, stop) = drive(agent, [CANCEL], lambda e, c: one_turn(e, c, agent, "later"))

    assert stop == "end_turn" and len(ed.asked) == 1
    assert not (agent.workspace / "later.txt").exists()
    assert "waiting for review" in ed.text("agent_thought_chunk")
    (call,) = calls(agent, thread)
    assert (call["status"], call["decision"]) == ("pending", None)
    listed = agent.run("review", thread, "--json")
    assert [p["call_id"] for p in json.loads(listed.stdout)] == ["call_1"]

    agent.server.push(text("Written later."), text("And hello."))

    async def resume(ed: Editor, conn: Any) -> str:
        await conn.load_session(cwd=str(agent.workspace), session_id=thread)
        return await say(conn, thread, "hello")

    ed, stop = drive(agent, ["allow_once"], resume)
    assert stop == "end_turn"
    assert (agent.workspace / "later.txt").read_text() == "later\n"
    # the load replayed the thread: the person's message, then the call, still pending
    assert ed.text("user_message_chunk") == "later"
    replayed = ed.of_kind("tool_call")[0]
    assert (replayed.tool_call_id, replayed.status) == ("call_1", "pending")
    assert [a["tool_call"].tool_call_id for a in ed.asked] == ["call_1"]
    assert ed.text() == "Written later.And hello."  # the message went once the call was decided
    assert agent.server.requests[-1]["messages"][-1]["content"] == "hello"


def test_an_unanswered_request_leaves_the_call_pending_when_the_editor_goes(
    agent: Agent,
) -> None:
    agent.server.push(tool_calls(("shell", {"command": "echo never > never.txt"})))

    async def play(ed: Editor, conn: Any) -> str:
        session = await new(conn, agent)
        asyncio.ensure_future(say(conn, session, "go"))
        await ed.waiting.wait()  # the request is open: the editor closes the connection
        return session

    _, thread = drive(agent, [HOLD], play)
    assert not (agent.workspace / "never.txt").exists()
    (call,) = calls(agent, thread)
    assert (call["status"], call["decision"]) == ("pending", None)


def test_cancel_stops_a_running_shell_call(agent: Agent) -> None:
    agent.server.push(
        tool_calls(("shell", {"command": "echo started; sleep 60; echo late > late.txt"}))
    )

    async def play(ed: Editor, conn: Any) -> str:
        session = await new(conn, agent)
        prompt = asyncio.ensure_future(say(conn, session, "go"))
        while not any("started" in (u.content[0].content.text if u.content else "")
                      for u in ed.of_kind("tool_call_update")):  # fmt: skip
            await asyncio.sleep(0.02)
        await conn.cancel(session_id=session)
        return await prompt

    ed, stop = drive(agent, ["allow_once"], play)
    assert stop == "cancelled"
    assert not (agent.workspace / "late.txt").exists()


def test_a_choice_that_was_not_offered_decides_nothing(agent: Agent) -> None:
    agent.server.push(tool_calls(("shell", {"command": "echo x > x.txt"})))
    _, (thread, stop) = drive(agent, ["allow"], lambda e, c: one_turn(e, c, agent))

    assert stop == "end_turn"
    assert not (agent.workspace / "x.txt").exists()
    (call,) = calls(agent, thread)
    assert (call["status"], call["decision"]) == ("pending", None)


def test_reject_always_rejects_the_like_calls_of_the_session_without_asking(
    agent: Agent,
) -> None:
    agent.server.push(
        tool_calls(("shell", {"command": "ls -l one"})),
        tool_calls(("shell", {"command": "ls two"}), ("shell", {"command": "echo fine"})),
        text("Done."),
    )
    ed, (thread, stop) = drive(
        agent, ["reject_always", "allow_once"], lambda e, c: one_turn(e, c, agent)
    )

    assert stop == "end_turn"
    # `ls two` fits the scope rejected always ("ls *"): only `echo fine` was asked about
    assert [a["tool_call"].raw_input["command"] for a in ed.asked] == ["ls -l one", "echo fine"]
    assert ed.call_states("call_3")[-1] == "completed"
    assert tool_results(agent, 1) == ["rejected by the user"]
    assert tool_results(agent, 2)[1:] == ["rejected by the user", "exit code 0\nfine\n"]
    decided = [(c["args"]["command"], c["decision"]["decision"]) for c in calls(agent, thread)]
    assert decided == [
        ("ls -l one", "rejected"),
        ("ls two", "rejected"),
        ("echo fine", "approved"),
    ]


def test_the_editor_sets_the_mode_and_a_plan_is_shown_and_asked_task_by_task(
    agent: Agent,
) -> None:
    agent.server.push(
        tool_calls(("plan", {"tasks": [
            {"id": 1, "tool": "write_file", "args": {"path": "a.txt", "content": "a"}, "deps": []},
            {"id": 2, "tool": "shell", "args": {"command": "cat a.txt"}, "deps": [1]},
        ]})),
        text("Planned and done."),
    )  # fmt: skip

    async def play(ed: Editor, conn: Any) -> tuple[list[str], str]:
        created = await conn.new_session(cwd=str(agent.workspace))
        modes = [mode.id for mode in created.modes.available_modes]
        await conn.set_session_mode(session_id=created.session_id, mode_id="plan")
        return modes, await say(conn, created.session_id, "write a and read it")

    ed, (modes, stop) = drive(agent, ["allow_once", "allow_once"], play)
    assert modes == ["ask", "read", "edit", "auto", "plan"]
    assert stop == "end_turn"
    shown, *progress = ed.of_kind("plan")
    assert [e.content for e in shown.entries] == ["write_file: a.txt", "shell: cat a.txt"]
    assert [e.status for e in shown.entries] == ["pending", "pending"]
    assert [[e.status for e in p.entries] for p in progress] == [
        ["completed", "pending"],
        ["completed", "completed"],
    ]
    assert [a["tool_call"].title for a in ed.asked] == ["write_file: a.txt", "shell: cat a.txt"]
    assert (agent.workspace / "a.txt").read_text() == "a"
    assert ed.text().endswith("Planned and done.")


def test_cancel_during_a_permission_request_leaves_the_call_pending(agent: Agent) -> None:
    agent.server.push(tool_calls(("shell", {"command": "echo no > no.txt"})))

    async def play(ed: Editor, conn: Any) -> tuple[str, str]:
        session = await new(conn, agent)
        prompt = asyncio.ensure_future(say(conn, session, "go"))
        await ed.waiting.wait()
        await conn.cancel(session_id=session)
        stop = await prompt  # the turn ends before the editor answers the request
        ed.late = "allow_once"  # ... which then answers "allow": too late, it decides nothing
        ed.release.set()
        while not ed.answered:
            await asyncio.sleep(0)
        await asyncio.sleep(0)  # the answer is queued to agentcli before the next request
        await conn.set_session_mode(session_id=session, mode_id="ask")
        return session, stop

    _, (thread, stop) = drive(agent, [HOLD], play)
    assert stop == "cancelled"
    assert not (agent.workspace / "no.txt").exists()
    (call,) = calls(agent, thread)
    assert (call["status"], call["decision"]) == ("pending", None)
