"""The agent graph for LangGraph Server: `langgraph.json` points here
(`agentcli.server.graph:graph`).

The graph is exported uncompiled: the server brings its own checkpointer. Its settings are
read once, at import, as the CLI reads them (the config file, then OPENAI_BASE_URL,
AGENTCLI_MODEL, OPENAI_API_KEY ...), and so are its tools. The workspace is
AGENTCLI_WORKSPACE, else the server's current directory.

Every run's tool calls are journalled in the database the server's `storage.db` names
(server/server_journal.py), so a call cut off by a server crash is asked about again, not re-run.

A run's `context` may carry two things (everything else comes from the server's settings,
whatever a client sends: see `context_schema`):
- `workspace`: a folder inside the server's workspace (relative to it, or absolute);
- `approval`: a client's flags, `{"auto_approve": bool, "approve": [TOOL], "deny": [TOOL]}`,
  applied on top of the server's `[approval]` rules as `-y/--approve/--deny` are locally.
  A client that may resume a review can approve any call anyway: this adds no power.
With no context at all (Agent Chat UI, Studio) every call the server's rules do not decide
waits for a decision in the v1 human-in-the-loop schema, which those clients render.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, fields
from functools import partial
from pathlib import Path
from typing import Any

from langgraph.graph import StateGraph

from agentcli.agent.agent_graph import build_graph
from agentcli.agent.model.chat_model import make_model
from agentcli.agent.model.retries import Retries
from agentcli.agent.outbound import guard_outbound
from agentcli.agent.run_context import run_context
from agentcli.agent.secrets import hide_environment, session_redactor
from agentcli.agent.state import RunContext
from agentcli.agent.toolset.sandboxing import mode_box
from agentcli.config import Settings, load_settings
from agentcli.errors import ConfigError
from agentcli.policy.approval_modes import MODES
from agentcli.policy.approval_policy import Policy
from agentcli.server.server_journal import ServerJournal
from agentcli.threads.store_key import PROCESS_KEY, ApprovalKey

WORKSPACE_ENV = "AGENTCLI_WORKSPACE"

log = logging.getLogger("agentcli.server.graph")


def server_workspace() -> Path:
    """The root the server's runs work in: AGENTCLI_WORKSPACE, else the current directory."""
    root = Path(os.environ.get(WORKSPACE_ENV) or Path.cwd()).expanduser().resolve()
    if not root.is_dir():
        raise ConfigError(f"{WORKSPACE_ENV}={root} is not a directory")
    return root


def inside(root: Path, requested: Path | str) -> Path:
    """A client's workspace, which must be a folder inside the server's."""
    path = (root / Path(requested).expanduser()).resolve()
    if not path.is_relative_to(root):
        raise ValueError(f"workspace {requested} is outside the server's workspace {root}")
    if not path.is_dir():
        raise ValueError(f"workspace {requested} is not a directory on the server")
    return path


def client_policy(settings: Settings, approval: Mapping[str, Any] | None) -> Policy:
    """The server's approval rules with a client's flags on top."""
    flags = dict(approval or {})
    unknown = set(flags) - {"auto_approve", "approve", "deny", "mode"}
    names = [flags.get(key, []) for key in ("approve", "deny")]
    if (
        unknown
        or flags.get("mode", settings.approval_mode) not in MODES
        or not isinstance(flags.get("auto_approve", False), bool)
        or not all(isinstance(v, list) and all(isinstance(n, str) for n in v) for v in names)
    ):
        raise ValueError(
            'context "approval" takes auto_approve (a boolean), approve and deny (tool names)'
            f" and mode (one of {', '.join(MODES)})"
        )
    return Policy.build(
        settings.allow,
        settings.deny,
        settings.rules,
        flag_allow=names[0],
        flag_deny=names[1],
        auto_approve=flags.get("auto_approve", False),
        mode=flags.get("mode", settings.approval_mode),
        box=mode_box(settings),
    )


@dataclass
class ClientChoices:
    """What a client of the server may choose for a run: the context schema it is shown."""

    workspace: str | None = None
    approval: dict[str, Any] | None = None


CLIENT_FIELDS = frozenset(f.name for f in fields(ClientChoices))


def server_context(
    settings: Settings, root: Path, key: ApprovalKey, journal: Any = None
) -> RunContext:
    """Every value of a server run's context that no client chooses, from the settings.

    A field added to RunContext later is the server's too: `ServerContext` copies every
    field from here but the client's (CLIENT_FIELDS), whatever a client sent for it."""
    return run_context(
        settings,
        workspace=root,
        policy=client_policy(settings, None),
        redactor=session_redactor(settings),
        journal=journal,
        approval_key=key,
        context_window=settings.context_window or None,  # not asked of the model server here
        from_clients=True,
    )


def context_schema(
    settings: Settings,
    root: Path,
    key: ApprovalKey | None = None,
    journal: ServerJournal | None = None,
) -> type[RunContext]:
    """A RunContext whose every field has a default, for runs started by any client.

    LangGraph builds it from a client's JSON (`ServerContext(**context)`): it takes any
    field, so every field but `workspace` and `approval` is set again from the server's
    settings, and its JSON schema (which the server filters a client's context with)
    shows those two only."""
    journal = journal or ServerJournal(settings)  # one per server: its settings' store
    base = server_context(settings, root, key or PROCESS_KEY, journal)

    @dataclass
    class ServerContext(RunContext):
        """Run context on the server: a client may choose `workspace` and `approval`."""

        workspace: Path = root
        approval: dict[str, Any] | None = None

        def __post_init__(self) -> None:
            for item in fields(RunContext):  # one place: the server's, not the client's
                if item.name not in CLIENT_FIELDS:
                    setattr(self, item.name, getattr(base, item.name))
            self.workspace = inside(root, self.workspace)
            self.policy = client_policy(settings, self.approval)
            self.url_check = self.policy.redirect_refusal

        @classmethod
        def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
            return handler(ClientChoices)  # the schema published to clients

    return ServerContext


def make_graph(settings: Settings, root: Path) -> StateGraph[Any, Any, Any, Any]:
    """The uncompiled agent graph with these settings' model and tools."""
    from agentcli.agent.toolset.loading import load_tools

    # traces and MCP servers' logs pass the redactor (agent/outbound.py): before tools load
    guard_outbound(session_redactor(settings))
    tools = [item.tool for item in load_tools(settings, warn=log.warning)]
    model = partial(make_model, settings)
    # the key of the server's store (call_journal.py): a task another worker sealed verifies
    journal = ServerJournal(settings)
    key = ApprovalKey.of_store(journal.store)
    context = context_schema(settings, root, key, journal)
    return build_graph(model, tools, context, Retries.of(settings), tool_calls=settings.tool_calls)


hide_environment()  # tool processes of this user cannot read the server's environment
graph = make_graph(load_settings(), server_workspace())
