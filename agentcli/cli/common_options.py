"""What every command shares: the contract's common options, its settings and its store."""

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

from agentcli.config import Settings
from agentcli.errors import UsageError

if TYPE_CHECKING:
    from agentcli.session.stores import Store

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
        help="Plan mode (--mode plan): the model plans every step as one `plan` call,"
        " reviewed once; its tasks then run as a graph, independent ones at the same time.",
    ),
]


class ApprovalMode(StrEnum):
    """--mode: what runs without asking (agentcli/policy/approval_modes.py)."""

    ask = "ask"
    read = "read"
    edit = "edit"
    auto = "auto"
    plan = "plan"


# what each mode runs unasked, in a line (the chat's /mode says it)
MODE_SUMMARIES = {
    ApprovalMode.ask: "every call waits for your review",
    ApprovalMode.read: "reads inside the workspace run; everything else asks",
    ApprovalMode.edit: "reads and undoable file writes inside the workspace run; everything"
    " else asks",
    ApprovalMode.auto: "reads, undoable writes and confined commands inside the workspace run;"
    " what leaves the box (network, paths outside, unconfined, fetch_url, MCP tools) asks",
    ApprovalMode.plan: "nothing runs unreviewed: the model proposes a plan, you review it whole",
}


ModeOpt = Annotated[
    ApprovalMode | None,
    typer.Option(
        "--mode",
        metavar="MODE",
        help="What runs without asking ([approval] mode): ask (every call, the default),"
        " read (reads in the workspace), edit (and undoable writes there), auto (and"
        " commands the sandbox confines), plan (nothing: the model plans, you review)."
        " Deny and ask rules beat every mode.",
        show_default=False,
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
    mode: ApprovalMode | None = None  # --mode (--plan is --mode plan)

    def settings(self) -> Settings:
        settings = self._settings()
        for line in settings.warnings:  # once per process, however often settings are read
            if line not in _WARNED:
                _WARNED.add(line)
                warn(line)
        return settings

    def _settings(self) -> Settings:
        from agentcli.session.setup import checked_settings

        return checked_settings(
            self.config,
            {
                "model.name": self.model,
                "model.max_tokens": self.max_tokens,
                "model.temperature": self.temperature,
                "model.base_url": self.base_url,
                "storage.db": str(self.db) if self.db else None,
                "sandbox.mode": self.sandbox.value if self.sandbox else None,
                "approval.mode": self.mode.value if self.mode else None,
            },
        )

    def take_mode(self, mode: ApprovalMode | None, plan: bool) -> None:
        """--mode, and --plan, which is --mode plan."""
        if plan and mode not in (None, ApprovalMode.plan):
            raise UsageError(f"--plan is --mode plan: it does not go with --mode {mode}")
        self.mode = ApprovalMode.plan if plan else mode

    def checked_workspace(self) -> Path | None:
        """--workspace, if given; not a directory is a usage error."""
        if self.workspace is not None and not self.workspace.is_dir():
            raise UsageError(f"--workspace {self.workspace} is not a directory")
        return self.workspace

    def store(self, settings: Settings) -> Store:
        from agentcli.session.stores import open_store

        return open_store(settings)


_WARNED: set[str] = set()


def warn(message: str) -> None:
    """One warning line on stderr: something is off, but the command goes on."""
    from agentcli.terminal_text import visible

    print(f"agentcli: warning: {visible(message)}", file=sys.stderr)


def warn_if_clipped(text: str | None, what: str) -> None:
    """A warning when `text` (a message, feedback) is over what a thread takes: the model
    gets its start and a note (agent/input_bounds.py)."""
    from agentcli.session.attachments import over_bound

    if text is not None and (over := over_bound(text)) is not None:
        size, most = over
        warn(
            f"{what} is {size:,} bytes: only its first {most:,} are sent, with a"
            " note telling the model it was clipped"
        )
