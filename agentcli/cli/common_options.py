"""What every command shares: the contract's common options, settings, store, session."""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar, cast

import typer

from agentcli.agent.toolset.tool_names import config_name_problems, flag_problems
from agentcli.config import Settings, load_settings
from agentcli.errors import ConfigError, UsageError

if TYPE_CHECKING:
    from agentcli.events import ReviewRequest
    from agentcli.policy.approval_policy import Policy
    from agentcli.session.remote import RemoteSession
    from agentcli.session.thread_session import ThreadSession
    from agentcli.threads.store import Store

ModelOpt = Annotated[str | None, typer.Option("--model", "-m", help="Model name.")]
BaseUrlOpt = Annotated[
    str | None, typer.Option("--base-url", help="OpenAI-compatible server URL (e.g. Ollama).")
]
MaxTokensOpt = Annotated[
    int | None,
    typer.Option(
        "--max-tokens", min=1, metavar="N", help="Most tokens per answer ([model] max_tokens)."
    ),
]
TemperatureOpt = Annotated[
    float | None,
    typer.Option(
        "--temperature", min=0.0, metavar="T", help="Sampling temperature ([model] temperature)."
    ),
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
PlanOpt = Annotated[
    bool,
    typer.Option(
        "--plan",
        help="Plan mode: the model plans every step as one `plan` call, reviewed once; its"
        " tasks then run as a graph, independent ones at the same time.",
    ),
]


class SandboxMode(StrEnum):
    read_only = "read-only"
    workspace_write = "workspace-write"
    off = "off"


SandboxOpt = Annotated[
    SandboxMode | None,
    typer.Option(
        "--sandbox",
        metavar="MODE",
        help="Confine commands: workspace-write (default), read-only or off ([sandbox] mode).",
        show_default=False,
    ),
]
ServerOpt = Annotated[
    str | None,
    typer.Option("--server", metavar="URL", help="Drive threads on this LangGraph server."),
]


class OutputFormat(StrEnum):
    """`--output` of run and review: text, one JSON object, or JSON lines (events)."""

    text = "text"
    json = "json"
    jsonl = "jsonl"


Command = TypeVar("Command", bound=Callable[..., Any])


def common_options(*, server: bool = False, requests: bool = False) -> Callable[[Command], Command]:
    """Give a command the contract's options (--model, --base-url, --db, --config,
    --workspace, --server where it applies, and --max-tokens and --temperature on the
    commands that ask the model: `requests`); it receives them as `common: Common`."""
    options: dict[str, Any] = {
        "model": ModelOpt,
        **({"max_tokens": MaxTokensOpt, "temperature": TemperatureOpt} if requests else {}),
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
    max_tokens: int | None = None
    temperature: float | None = None
    sandbox: SandboxMode | None = None  # --sandbox, on the commands that run tools

    def settings(self) -> Settings:
        settings = self._settings()
        for line in settings.warnings:  # once per process, however often settings are read
            if line not in _WARNED:
                _WARNED.add(line)
                warn(line)
        return settings

    def _settings(self) -> Settings:
        return load_settings(
            self.config,
            {
                "model.name": self.model,
                "model.max_tokens": self.max_tokens,
                "model.temperature": self.temperature,
                "model.base_url": self.base_url,
                "storage.db": str(self.db) if self.db else None,
                "sandbox.mode": self.sandbox.value if self.sandbox else None,
            },
        )

    def checked_workspace(self) -> Path | None:
        """--workspace, if given; not a directory is a usage error."""
        if self.workspace is not None and not self.workspace.is_dir():
            raise UsageError(f"--workspace {self.workspace} is not a directory")
        return self.workspace

    def store(self, settings: Settings) -> Store:
        from agentcli.threads.backends import open_store

        return open_store(settings)


_WARNED: set[str] = set()


def warn(message: str) -> None:
    """One warning line on stderr: something is off, but the command goes on."""
    from agentcli.terminal_text import visible

    print(f"agentcli: warning: {visible(message)}", file=sys.stderr)


def make_policy(
    settings: Settings, auto_approve: bool, approve: list[str] | None, deny: list[str] | None
) -> Policy:
    """The config's rules with this command's flags on top."""
    from agentcli.policy.approval_policy import Policy

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
        return open_remote(common, settings, auto_approve, approve, deny)
    from agentcli.session.local import Session

    policy = make_policy(settings, auto_approve, approve, deny)
    store = store or common.store(settings)
    session = Session(settings, store, policy, workspace=common.checked_workspace())
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

    check_setup(settings)
    from agentcli_tools.catalogue import BUILTINS  # names only: no LangChain, no toolset

    if settings.modules or settings.mcp_servers or not set(settings.enabled) <= BUILTINS.keys():
        return  # the session checks the names when it loads the tools (agent/toolset/tool_names.py)
    offered = list(settings.enabled or BUILTINS)
    kept = [name for name in offered if name not in settings.disabled]
    problems = config_name_problems(settings, offered) + flag_problems(kept, approve, deny)
    if problems:
        raise ConfigError(*problems)


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
        auto_approve=auto_approve,
        approve=approve or (),
        deny=deny or (),
        workspace=common.workspace,
    )


def server_flag(session: ThreadSession) -> str:
    """What a hint to continue this session's thread needs: ` --server URL`, or nothing."""
    return session.server_flag
