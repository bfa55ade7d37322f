"""What every command shares: the contract's common options, settings, store, session."""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar, cast

import typer

from agentcli.config import Settings, load_settings
from agentcli.errors import UsageError

if TYPE_CHECKING:
    from agentcli.policy import Policy
    from agentcli.remote import RemoteSession
    from agentcli.session import Session

    AnySession = Session | RemoteSession  # what chat, run and review drive
    from agentcli.store import Store

ModelOpt = Annotated[str | None, typer.Option("--model", "-m", help="Model name.")]
BaseUrlOpt = Annotated[
    str | None, typer.Option("--base-url", help="OpenAI-compatible server URL (e.g. Ollama).")
]
DbOpt = Annotated[
    str | None, typer.Option("--db", help="Thread database: a file, or a postgresql:// URL.")
]
ConfigOpt = Annotated[Path | None, typer.Option("--config", help="Config file to read.")]
WorkspaceOpt = Annotated[
    Path | None,
    typer.Option("--workspace", "-w", help="Root for file tools and the shell (default: here)."),
]
AutoApproveOpt = Annotated[
    bool, typer.Option("--auto-approve", "-y", help="Allow every tool call not denied.")
]
ApproveOpt = Annotated[
    list[str] | None,
    typer.Option("--approve", metavar="TOOL", help="Allow this tool without review (repeatable)."),
]
DenyOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--deny", metavar="TOOL", help="Never run this tool; the model is told (repeatable)."
    ),
]
LastOpt = Annotated[bool, typer.Option("--last", help="The most recent thread in this workspace.")]
ThreadOpt = Annotated[str | None, typer.Option("--thread", "-t", help="Thread id or prefix.")]
ServerOpt = Annotated[
    str | None,
    typer.Option("--server", metavar="URL", help="Drive threads on this LangGraph server."),
]


Command = TypeVar("Command", bound=Callable[..., Any])


def common_options(*, server: bool = False) -> Callable[[Command], Command]:
    """Give a command the contract's options (--model, --base-url, --db, --config,
    --workspace, and --server where it applies); it receives them as `common: Common`."""
    options: dict[str, Any] = {
        "model": ModelOpt,
        "base_url": BaseUrlOpt,
        "db": DbOpt,
        "config": ConfigOpt,
        "workspace": WorkspaceOpt,
        **({"server": ServerOpt} if server else {}),
    }

    def decorate(func: Command) -> Command:
        signature = inspect.signature(func, eval_str=True)
        kept = [p for name, p in signature.parameters.items() if name != "common"]
        added = [
            inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=kind)
            for name, kind in options.items()
        ]

        @functools.wraps(func)
        def command(*args: Any, **kwargs: Any) -> Any:
            common = Common(**{name: kwargs.pop(name) for name in options})
            return func(*args, common=common, **kwargs)

        command.__signature__ = signature.replace(parameters=[*kept, *added])  # type: ignore[attr-defined]
        return cast(Command, command)

    return decorate


@dataclass
class Common:
    """The options every command accepts, turned into settings and a store."""

    model: str | None = None
    base_url: str | None = None
    db: str | Path | None = None
    config: Path | None = None
    workspace: Path | None = None
    server: str | None = None  # a LangGraph server's URL: threads live there

    def settings(self) -> Settings:
        return load_settings(
            self.config,
            {
                "model.name": self.model,
                "model.base_url": self.base_url,
                "storage.db": str(self.db) if self.db else None,
            },
        )

    def checked_workspace(self) -> Path | None:
        """--workspace, if given; not a directory is a usage error."""
        if self.workspace is not None and not self.workspace.is_dir():
            raise UsageError(f"--workspace {self.workspace} is not a directory")
        return self.workspace

    def store(self, settings: Settings) -> Store:
        from agentcli.store import open_store

        return open_store(settings)


def warn(message: str) -> None:
    """One warning line on stderr: something is off, but the command goes on."""
    from agentcli.visible import visible

    print(f"agentcli: warning: {visible(message)}", file=sys.stderr)


def make_policy(
    settings: Settings, auto_approve: bool, approve: list[str] | None, deny: list[str] | None
) -> Policy:
    """The config's rules with this command's flags on top."""
    from agentcli.policy import Policy

    return Policy.build(
        settings.allow,
        settings.deny,
        settings.rules,
        flag_allow=approve or (),
        flag_deny=deny or (),
        auto_approve=auto_approve,
    )


def one_of(thread: str | None, last: bool) -> None:
    if thread and last:
        raise UsageError("--thread and --last do not go together")


def attach(session: AnySession, thread: str | None, last: bool) -> None:
    """Point the session at --thread ID or --last, if given (else it starts a new thread)."""
    one_of(thread, last)
    if thread:
        session.open(thread)
    elif last:
        session.open_latest()


def open_session(
    common: Common,
    auto_approve: bool = False,
    approve: list[str] | None = None,
    deny: list[str] | None = None,
    *,
    store: Store | None = None,
    quiet: bool = False,
) -> AnySession:
    """The session a command drives; `quiet` leaves the tools' warnings in
    `session.warnings` for the caller to show when it can (the chat, at its prompt)."""
    settings = common.settings()
    if common.server:
        return open_remote(common, settings, auto_approve, approve, deny)
    from agentcli.session import Session

    policy = make_policy(settings, auto_approve, approve, deny)
    store = store or common.store(settings)
    session = Session(settings, store, policy, workspace=common.checked_workspace())
    for message in () if quiet else session.warnings:
        warn(message)
    for flag, names in (("--approve", approve), ("--deny", deny)):
        unknown = sorted(set(names or ()) - set(session.tools))
        if unknown:
            raise UsageError(f"unknown tool '{unknown[0]}' in {flag} (agentcli tools lists them)")
    return session


def open_remote(
    common: Common,
    settings: Settings,
    auto_approve: bool,
    approve: list[str] | None,
    deny: list[str] | None,
) -> RemoteSession:
    """A session on a LangGraph server: the model and the storage are the server's."""
    from agentcli.remote import RemoteSession

    assert common.server
    for flag, value in (("--model", common.model), ("--base-url", common.base_url)):
        if value:
            raise UsageError(f"{flag} does not go with --server: the server chooses the model")
    if common.db:
        raise UsageError("--db does not go with --server: the server keeps the threads")
    return RemoteSession(
        settings,
        common.server,
        auto_approve=auto_approve,
        approve=approve or (),
        deny=deny or (),
        workspace=common.workspace,
    )


def server_flag(session: AnySession) -> str:
    """What a hint to continue this session's thread needs: ` --server URL`, or nothing."""
    from agentcli.remote import RemoteSession

    return f" --server {session.url}" if isinstance(session, RemoteSession) else ""
