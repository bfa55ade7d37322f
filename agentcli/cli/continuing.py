"""What the chat shows when it continues a thread (`resume`, `chat --thread/--last`,
`/switch`): the last exchanges, and a warning when the thread's workspace folder is gone."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from agentcli.cli.common_options import warn
from agentcli.errors import AgentcliError, Interrupted

if TYPE_CHECKING:
    from concurrent.futures import Future

    from rich.console import Console

    from agentcli.session.thread_session import ThreadSession


class Chat(Protocol):
    """What the recap uses of the chat (chat_loop.Chat)."""

    console: Console

    @property
    def session(self) -> ThreadSession: ...
    def error(self, exc: AgentcliError) -> None: ...


class Starting(Protocol):
    """What the recap reads of how the chat started (early_prompt.Starting)."""

    title: str | None  # None: a new thread
    future: Future[ThreadSession]


def continues(starting: Starting) -> bool:
    """The chat starts on a thread that has messages (not a new one)."""
    if starting.title is not None:  # found in the index at start
        return True
    future = starting.future  # a server's session is made before the prompt
    return future.done() and future.exception() is None and future.result().row is not None


def show_recap(chat: Chat) -> None:
    """Print the current thread's last exchanges (waits for the session: its state is read
    through the graph). Ctrl-C while waiting skips it and comes back to the prompt."""
    from agentcli.session.transcript import entries
    from agentcli.ui.recap import recap

    try:
        session = chat.session
    except Interrupted as exc:
        chat.error(exc)
        return
    if session.row is None:
        return
    console = chat.console
    markdown = console.is_terminal and not console.no_color  # as the chat's answers show
    for line in recap(entries(thread_values(session)), session.thread_id, markdown):
        console.print(line)


def thread_values(session: ThreadSession) -> dict[str, Any]:
    """The thread's latest state values: messages and audit."""
    return session.values()


def warn_if_gone(workspace: str | Path, thread_id: str) -> None:
    """One warning line when the folder a thread works in no longer exists."""
    if not Path(workspace).is_dir():
        warn(
            f"the workspace {workspace} of thread {thread_id} no longer exists: its file tools"
            " and shell will fail; resume with --workspace DIR to work in another folder"
        )
