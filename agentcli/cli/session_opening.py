"""Opening the session a command drives: its policy, its thread, here or on a server."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.cli.common_options import Common, warn
from agentcli.config import Settings
from agentcli.errors import ConfigError, UsageError

if TYPE_CHECKING:
    from agentcli.events import ReviewRequest
    from agentcli.session.remote import RemoteSession
    from agentcli.session.stores import Store
    from agentcli.session.thread_session import ThreadSession


def one_of(thread: str | None, last: bool) -> None:
    if thread and last:
        raise UsageError("--thread and --last do not go together")


def attach(session: ThreadSession, thread: str | None, last: bool) -> None:
    """Point the session at --thread ID or --last, if given (else it starts a new thread)."""
    one_of(thread, last)
    if thread:
        session.open(thread)
    elif last:
        session.open_latest()
    warn_expired(session.thread_id, session.expired, session.settings.expire_after)


def warn_expired(thread_id: str, review: ReviewRequest | None, after: str | None) -> None:
    """Say which calls of a thread `open` denied because their review expired."""
    for request in review.action_requests if review else []:
        warn(
            f"call {request['id']} ({request['name']}) of thread {thread_id} waited longer"
            f" than {after} for review: denied ([approval] expire_after); the model is told"
        )


def open_session(
    common: Common,
    auto_approve: bool = False,
    approve: list[str] | None = None,
    deny: list[str] | None = None,
    *,
    store: Store | None = None,
    quiet: bool = False,
) -> ThreadSession:
    """The session a command drives; `quiet` leaves the tools' warnings in
    `session.warnings` for the caller to show when it can (the chat, at its prompt)."""
    settings = common.settings()
    if common.server:
        remote = open_remote(common, settings, auto_approve, approve, deny)
        from agentcli.telemetry.attach import watch

        if said := watch(remote):
            warn(said)
        return remote
    from agentcli.session.local import Session
    from agentcli.session.setup import flag_problems, make_policy

    policy = make_policy(settings, auto_approve, approve, deny)
    store = store or common.store(settings)
    session = Session(settings, store, policy, workspace=common.checked_workspace())
    from agentcli.telemetry.attach import watch

    if said := watch(session):  # the OTEL_* variables ask for a trace
        session.warnings.append(said)
    for message in () if quiet else session.warnings:
        warn(message)
    if problems := flag_problems(session.tools, approve, deny):
        raise ConfigError(*problems)
    return session


def check_early(
    common: Common, settings: Settings, approve: list[str] | None, deny: list[str] | None
) -> None:
    """What can be known from the settings alone, before anything is drawn or loaded: a
    model server is configured (else the set-up guide), and, when the tools are the
    built-ins only (listed without LangChain), the tool names in the config and the flags."""
    if common.server:
        return
    from agentcli.cli.setup_guide import check_setup
    from agentcli.session.setup import tool_name_problems

    check_setup(settings)
    problems = tool_name_problems(settings, approve, deny)  # None: the session checks them
    if problems:
        raise ConfigError(*problems)


def checked_with_thread(common: Common, settings: Settings, continuing: bool) -> bool:
    """Whether check_early waits for the thread's row: a command that continues a thread
    runs on the thread's model and server (thread_origin.py), which its row names; a fresh
    install (no database yet) has no thread to continue, and is checked at once."""
    if common.server or not continuing:
        return False
    return bool(settings.db_url) or settings.db_path.exists()


def open_remote(
    common: Common,
    settings: Settings,
    auto_approve: bool,
    approve: list[str] | None,
    deny: list[str] | None,
) -> RemoteSession:
    """A session on a LangGraph server: the model and the storage are the server's."""
    from agentcli.session.remote import RemoteSession

    assert common.server
    flags = [
        ("--model", common.model),
        ("--base-url", common.base_url),
        ("--max-tokens", common.max_tokens),
        ("--temperature", common.temperature),
    ]
    for flag, value in flags:
        if value is not None:
            raise UsageError(f"{flag} does not go with --server: the server chooses the model")
    if common.db:
        raise UsageError("--db does not go with --server: the server keeps the threads")
    if common.sandbox:
        raise UsageError("--sandbox does not go with --server: the server confines its tools")
    return RemoteSession(
        settings,
        common.server,
        mode=settings.approval_mode,
        auto_approve=auto_approve,
        approve=approve or (),
        deny=deny or (),
        workspace=common.workspace,
    )
