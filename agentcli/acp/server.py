"""agentcli as an ACP agent: the editor's requests (initialize, session/new, session/load,
session/prompt, session/cancel, session/set_mode) answered over stdio.

A session is a thread: session/new makes one in the editor's folder, whose id (the
thread's) is the session's; session/load opens a thread by id, replays its history and
continues it. Threads are opened through the session layer as the chat opens them (the
command passes `opener`), each on a store of its own, so that a thread driven here is held
against other processes as the chat holds it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from acp import PROTOCOL_VERSION, RequestError
from acp.agent.connection import AgentSideConnection
from acp.schema import (
    AgentCapabilities,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionMode,
    SessionModeState,
    SetSessionModeResponse,
)

from agentcli import __version__
from agentcli.acp.prompt_text import prompt_text
from agentcli.acp.stdio_channel import ProtocolChannel
from agentcli.errors import AgentcliError
from agentcli.terminal_text import line

if TYPE_CHECKING:  # LangChain and LangGraph load with the first session, not before
    from agentcli.acp.editor_session import EditorSession
    from agentcli.session.thread_session import ThreadSession

Opener = Callable[[Path | None], "ThreadSession"]
CLIENT_NAME_CHARS = 40
MODES = {
    "ask": "Every call waits for your review",
    "read": "Reads in the workspace run unasked",
    "edit": "Reads and undoable writes in the workspace run unasked",
    "auto": "And commands the sandbox confines run unasked",
    "plan": "The model plans; you review the plan",
}


class Agent:
    """The ACP agent side: sessions by id, each an EditorSession."""

    def __init__(self, opener: Opener, mode: str) -> None:
        self.opener = opener
        self.mode = mode
        self.client: Any = None
        self.by = "acp"  # who decided, in the audit; the editor's name once it says it
        self.sessions: dict[str, EditorSession] = {}

    def on_connect(self, conn: Any) -> None:
        self.client = conn

    async def initialize(
        self, protocol_version: int, client_info: Implementation | None = None, **_: Any
    ) -> InitializeResponse:
        if client_info is not None and client_info.name:
            self.by = f"acp: {line(client_info.name)[:CLIENT_NAME_CHARS]}"
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True, prompt_capabilities=PromptCapabilities(embedded_context=True)
            ),
            agent_info=Implementation(name="agentcli", title="agentcli", version=__version__),
        )

    async def new_session(self, cwd: str, **_: Any) -> NewSessionResponse:
        folder = Path(cwd)
        if not folder.is_absolute() or not folder.is_dir():
            raise RequestError.invalid_params({"cwd": "not an absolute path to a folder"})
        session = await self._open(lambda: self.opener(folder), None)
        return NewSessionResponse(session_id=session.session_id, modes=self._modes())

    async def load_session(self, cwd: str, session_id: str, **_: Any) -> LoadSessionResponse:
        if session_id in self.sessions:
            raise RequestError.invalid_params({"sessionId": "this session is open already"})

        def opened() -> ThreadSession:
            thread = self.opener(None)  # the thread's recorded workspace, unless --workspace
            thread.open(session_id)
            return thread

        session = await self._open(opened, session_id)
        from agentcli.acp.replay import history

        values = await session.call(session.thread.values)
        for update in history(values, session.thread.workspace):
            await session.outbox.send(update)
        expired = session.thread.expired  # [approval] expire_after denied them as it opened
        for request in expired.action_requests if expired else []:
            await session.outbox.note(
                f"call {request['id']} ({request['name']}) waited longer than"
                f" {session.thread.settings.expire_after} for review: denied; the model is told"
            )
        return LoadSessionResponse(modes=self._modes())

    async def _open(
        self, make: Callable[[], ThreadSession], session_id: str | None
    ) -> EditorSession:
        from agentcli.acp.editor_session import EditorSession
        from agentcli.acp.permission_options import Choices
        from agentcli.session.redaction import current_redactor

        try:
            thread = await asyncio.to_thread(make)
        except AgentcliError as exc:  # no such thread, held by another process, a bad config
            said = current_redactor()(str(exc))  # a config error may quote a value
            raise RequestError.invalid_params({"message": said}) from None
        session_id = session_id or thread.thread_id
        session = EditorSession(session_id, thread, self.client, Choices(self.by), self.mode)
        self.sessions[session_id] = session
        return session

    def _modes(self) -> SessionModeState:
        modes = [SessionMode(id=mode, name=mode, description=said) for mode, said in MODES.items()]
        return SessionModeState(current_mode_id=self.mode, available_modes=modes)

    async def set_session_mode(
        self, mode_id: str, session_id: str, **_: Any
    ) -> SetSessionModeResponse:
        session = self._session(session_id)
        if mode_id not in MODES:
            raise RequestError.invalid_params({"modeId": f"one of {', '.join(MODES)}"})
        await session.call(session.thread.set_mode, mode_id)
        session.mode = mode_id
        return SetSessionModeResponse()

    async def prompt(self, prompt: list[Any], session_id: str, **_: Any) -> PromptResponse:
        session = self._session(session_id)
        if session.busy:
            raise RequestError.invalid_request({"sessionId": "a prompt is under way"})
        text = prompt_text(prompt)
        if not text.strip():
            raise RequestError.invalid_params({"prompt": "no text in the prompt"})
        return PromptResponse(stop_reason=await session.prompt(text))  # type: ignore[arg-type]

    async def cancel(self, session_id: str, **_: Any) -> None:
        if (session := self.sessions.get(session_id)) is not None:
            session.cancel()

    def _session(self, session_id: str) -> EditorSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params({"sessionId": "no such session: new or load it"})
        return session

    async def close(self) -> None:
        for session in self.sessions.values():
            await session.close()


def serve(opener: Opener, mode: str) -> None:
    """Answer the editor on stdin/stdout until it closes the connection."""
    channel = ProtocolChannel.take()
    asyncio.run(_serve(Agent(opener, mode), channel))


async def _serve(agent: Agent, channel: ProtocolChannel) -> None:
    reader, writer = await channel.streams()
    # Agent answers the SDK's Agent protocol's requests it serves (the others: not found)
    connection = AgentSideConnection(cast(Any, agent), writer, reader, listening=False)
    try:
        await connection.listen()  # until the editor closes stdin
    finally:
        await agent.close()  # a run under way ends its step before the process does
        await connection.close()
