"""A real ACP client for tests: the Agent Client Protocol SDK's own client side
(`acp.ClientSideConnection`) driving the installed `agentcli acp` over its stdin and stdout,
as an editor does; the command is started warm (tests/helpers/warm_run.py), else through
the SDK's `spawn_agent_process`.

    async with editor(agent, answers=["allow_once"]) as (ed, conn):
        await ed.start(conn)
        session = await conn.new_session(cwd=str(agent.workspace))
        await conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])

`Editor` records every session/update and permission request; each permission request
takes the next of `answers`: an option id, CANCEL (the outcome "cancelled"), or HOLD (no
answer until the test sets `editor.release`, then `editor.late`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from acp import PROTOCOL_VERSION, connect_to_agent, spawn_agent_process
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    Implementation,
    RequestPermissionResponse,
)

from tests.e2e.conftest import AGENTCLI, Agent
from tests.helpers.warm_run import warm_allowed, warm_launch

SHUTDOWN_S = 2.0  # as the SDK's transport: stdin closed, then SIGTERM, then SIGKILL

CANCEL, HOLD = "<cancel>", "<hold>"


@dataclass
class Editor:
    answers: list[str] = field(default_factory=list)
    updates: list[tuple[str, Any]] = field(default_factory=list)  # (session id, update)
    asked: list[Any] = field(default_factory=list)  # the RequestPermissionRequest params
    release: asyncio.Event = field(default_factory=asyncio.Event)
    waiting: asyncio.Event = field(default_factory=asyncio.Event)  # a request is held
    late: str = CANCEL  # what a held request answers once released
    answered: int = 0  # permission requests answered so far
    incoming: list[dict[str, Any]] = field(default_factory=list)  # every message, as sent

    def heard(self, event: Any) -> None:
        """The connection's observer: every JSON-RPC message agentcli sent, as parsed."""
        if event.direction.value == "incoming":
            self.incoming.append(event.message)

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **_: Any
    ) -> RequestPermissionResponse:
        self.asked.append({"session_id": session_id, "tool_call": tool_call, "options": options})
        answer = self.answers.pop(0) if self.answers else CANCEL
        if answer == HOLD:
            self.waiting.set()
            await self.release.wait()
            answer = self.late
        self.answered += 1
        if answer == CANCEL:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=answer)
        )

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append((session_id, update))

    def on_connect(self, conn: Any) -> None:
        pass

    # -- what the editor was shown ------------------------------------------------

    def of_kind(self, kind: str) -> list[Any]:
        return [u for _, u in self.updates if u.session_update == kind]

    def text(self, kind: str = "agent_message_chunk") -> str:
        return "".join(u.content.text for u in self.of_kind(kind))

    def call_states(self, call_id: str) -> list[str]:
        """The statuses the editor was told for one call, in order."""
        return [
            u.status
            for u in self.of_kind("tool_call") + self.of_kind("tool_call_update")
            if u.tool_call_id == call_id and u.status
        ]

    def result(self, call_id: str) -> str:
        """The text of the call's last reported content."""
        for update in reversed(self.of_kind("tool_call_update")):
            if update.tool_call_id == call_id and update.content:
                return update.content[0].content.text
        raise AssertionError(f"no result reported for {call_id}")


async def start(conn: Any, name: str = "test-editor") -> Any:
    return await conn.initialize(
        protocol_version=PROTOCOL_VERSION,
        client_capabilities=ClientCapabilities(),
        client_info=Implementation(name=name, version="1.0"),
    )


@contextlib.asynccontextmanager
async def editor(
    agent: Agent, *args: str, answers: list[str] | None = None
) -> AsyncIterator[tuple[Editor, Any, Any]]:
    """The installed `agentcli acp` with an Editor connected to it; yields (editor,
    connection, process); the process is ended when the block ends (stdin closed)."""
    client = Editor(list(answers or []))
    log = agent.workspace.parent / "acp-stderr.log"  # read when a test fails
    argv = [AGENTCLI, "acp", *args]
    with log.open("ab") as stderr:
        if not warm_allowed(agent.env):
            async with spawn_agent_process(
                client,
                *argv,
                env=agent.env,
                cwd=str(agent.workspace),
                transport_kwargs={"stderr": stderr.fileno()},
                observers=[client.heard],
            ) as (conn, process):
                await start(conn)
                yield client, conn, process
            return
        async with _warm_stdio(argv, agent, os.dup(stderr.fileno())) as (reader, writer, process):
            conn = connect_to_agent(client, writer, reader, observers=[client.heard])
            try:
                await start(conn)
                yield client, conn, process
            finally:
                await conn.close()


@contextlib.asynccontextmanager
async def _warm_stdio(
    argv: list[str], agent: Agent, stderr: int
) -> AsyncIterator[tuple[asyncio.StreamReader, asyncio.StreamWriter, Any]]:
    """The command started warm, its stdin and stdout as asyncio streams; at the end, its
    stdin closed and its exit awaited, then stopped as the SDK's transport stops one."""
    loop = asyncio.get_running_loop()
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    try:
        process = warm_launch(argv, env=agent.env, cwd=agent.workspace, fds=[in_r, out_w, stderr])
    except BaseException:
        os.close(in_w)
        os.close(out_r)
        raise
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), open(out_r, "rb", 0))
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, open(in_w, "wb", 0)
    )
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    try:
        yield reader, writer, process
    finally:
        writer.close()
        for then in (signal.SIGTERM, signal.SIGKILL, None):
            try:
                await loop.run_in_executor(None, process.wait, SHUTDOWN_S if then else None)
                break
            except subprocess.TimeoutExpired:
                process.send_signal(then)
