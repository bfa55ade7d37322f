"""The graph's state and the per-run context its nodes and tools read."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, TypedDict

from agentcli_tools.context import ToolContext
from langchain_core.messages import AnyMessage
from langgraph.channels import DeltaChannel

from agentcli.agent.context.fixed_part import CORE
from agentcli.agent.input_bounds import bounded_reducer
from agentcli.policy.approval_policy import Policy
from agentcli.threads.langgraph_internals import messages_delta_reducer

# `messages` and `audit` grow with the thread, so they are DeltaChannels (beta in
# LangGraph 1.2): a checkpoint stores only the step's writes, plus a full copy every
# SNAPSHOT_EVERY updates; a load replays the writes since the nearest copy. A turn with
# a tool call updates `messages` 4 times (input, agent, tools, agent), a chat turn twice.
# `audit` is updated at least a third as often (each user message, since Session.send
# writes `audit: []`, and each review), so with a copy every quarter of SNAPSHOT_EVERY its
# nearest copy is never further back than that of `messages`, and a load walks back at
# most SNAPSHOT_EVERY steps. 250 rather than 1000: a resumed 300-turn thread loads in a
# quarter of the walk for more bytes stored (a long-lived session skips the walk: see
# Recall in threads/langgraph_internals.py). The figures: bench/README.md.
SNAPSHOT_EVERY = 250


def _extend(state: list[Any], writes: Sequence[list[Any]]) -> list[Any]:
    """operator.add over a batch of writes: appending is batching-invariant."""
    return [*state, *(item for write in writes for item in write)]


def _merged(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    return {**old, **new}


def _union(old: list[str], new: list[str]) -> list[str]:
    return old + [name for name in new if name not in old]


class AgentState(TypedDict, total=False):
    # as add_messages: a message with a known id replaces it (an edited tool call);
    # LangGraph gives every message written to a DeltaChannel an id before saving it.
    # Whoever writes one (a node, any client of a server), it is bounded (input_bounds.py)
    messages: Annotated[
        list[AnyMessage],
        DeltaChannel(bounded_reducer(messages_delta_reducer), snapshot_frequency=SNAPSHOT_EVERY),
    ]
    allowed_tools: Annotated[list[str], _union]  # tools the person allowed with `A`
    allowed_seals: Annotated[list[str], _union]  # their seals: a name without one does not count
    # hosts and ports the person allowed for this thread at an egress question (sealed
    # too: agent/review/approval_seals.py host_entry)
    allowed_hosts: Annotated[list[str], _union]
    invalid_turns: int  # consecutive model turns with an invalid call
    audit: Annotated[  # one record per decided call
        list[dict[str, Any]], DeltaChannel(_extend, snapshot_frequency=SNAPSHOT_EVERY // 4)
    ]
    # records of the tools tasks, which run side by side and cannot see `audit`: the next
    # node chains them into it (audit/chain.py)
    audit_pending: Annotated[list[dict[str, Any]], operator.add]
    review: dict[str, Any] | None  # the policy's verdicts, while a person decides the rest
    # the group of approved calls running and, for a model turn, the groups still to run,
    # sealed (executor.py)
    batch: dict[str, Any] | None
    # an approved plan while it runs (plan/plan_run.py), sealed, and its tasks' results
    plan: dict[str, Any] | None
    plan_results: Annotated[dict[str, Any], _merged]
    # what the model is sent in place of the oldest messages (context/compaction.py): `upto`, the
    # number of messages a model-written `summary` stands for; `messages` stays whole
    compaction: dict[str, Any] | None


@dataclass
class RunContext(ToolContext):
    """Values for one run, never stored in the checkpoint: the policy comes from flags."""

    policy: Policy = field(default_factory=Policy)
    max_steps: int = 25
    max_invalid_turns: int = 3
    max_repeated_calls: int = 3  # the same call this often in a turn: told, then stopped
    max_replans: int = 3  # [plan] max_replans: plans after the first, per user message
    system_prompt: str | None = None
    # where tool runs are recorded (threads/call_journal.CallJournal; None: not guarded).
    # Typed Any because LangGraph Server builds a JSON schema of the context, and a store
    # has none.
    journal: Any = None
    # seals what the review approves, for the tools node to check
    # (review/store_key.ApprovalKey; None: a key for this process only)
    approval_key: Any = None
    # where the workspace is snapshotted around calls that may change files
    # (snapshots/call_snapshots.WorkspaceSnapshots; None: no snapshots, nothing to undo)
    snapshots: Any = None
    # True on a server: answers come from its clients, whose say that a rule or flag
    # decided (`who`/`by`) is not believed
    from_clients: bool = False
    # the person's hooks (hooks/hook_set.HookSet; None: none configured)
    hooks: Any = None
    # the model's context window in tokens (None: unknown, nothing compacted unless the
    # server refuses a request as too long) and how a thread is kept inside it
    # (context/compaction.py)
    context_window: int | None = None
    compact: bool = True
    compact_threshold: float = 0.8
    compact_keep: float = 0.25
    tool_result_share: float = 0.2
    answer_reserve: int = 1024
    # with a small window: the tools offered first, and their descriptions' form
    # (context/fixed_part.py)
    tool_core: tuple[str, ...] = CORE
    tool_descriptions: str = "auto"

    def protection(self, tool: str, rel: str, typed: str | None = None) -> str | None:
        """The policy's deny and ask rules on paths, for the tools (one derivation: the CLI's
        run context and the server's, whatever the client chose, ask the same policy)."""
        return self.policy.protection(tool, rel, typed, workspace=self.workspace)
