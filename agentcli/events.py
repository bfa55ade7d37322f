"""The typed events a session emits; the chat UI and `run --output jsonl` both consume them."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

PLAN = "plan"  # the plan tool's name (DESIGN.md): its one result lists the plan's tasks
PLAN_RESULTS = "Plan results"  # how that result begins; a renderer folds it to its tasks


@dataclass
class Event:
    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, **asdict(self)}

    @property
    def type(self) -> str:
        return _snake(type(self).__name__)


@dataclass
class Start(Event):
    """The first event of a scripted run (`run --output jsonl`): the thread it drives,
    known before anything is sent, so a script can name it whatever happens next."""

    thread_id: str
    new: bool  # the run starts this thread (it has no messages yet)


@dataclass
class TextDelta(Event):
    """A piece of the assistant's answer, as it streams."""

    text: str


@dataclass
class CallProgress(Event):
    """A tool call of the answer is streaming: the tool, its target (`path`, `command`...)
    as far as it has come, and the bytes of arguments so far. The model's text, half
    written: a sign of life, not the call (the review shows that)."""

    index: int  # which call of the answer, from 0
    name: str
    target: str
    bytes: int


@dataclass
class AssistantMessage(Event):
    """A complete model turn: its text and the tool calls it proposes."""

    text: str
    tool_calls: list[dict[str, Any]]
    usage: dict[str, int] | None = None


@dataclass
class ReviewRequest(Event):
    """Calls waiting for a person: the v1 HITL action requests, each with its call `id`."""

    thread_id: str
    action_requests: list[dict[str, Any]]
    # a plan's review: every task (id, tool, args, deps, verdict, reason), the asked ones
    # being the action requests (agent/plan/plan_review.py)
    plan: list[dict[str, Any]] | None = None


@dataclass
class ToolResult(Event):
    """What the model will read for one call: a result, an error, a rejection, feedback."""

    call_id: str
    name: str
    content: str
    status: str = "success"


@dataclass
class ToolOutput(Event):
    """Output of a running tool as it comes (the shell's), before its result."""

    call_id: str
    text: str


@dataclass
class EgressQuestion(Event):
    """A confined command's egress proxy asks whether it may connect to a host and port
    that `[sandbox] network` does not list (tools/egress_questions.py); the command waits
    until the person answers (`answer_egress`) or it ends. `host` is what the proxy would
    connect to (normalised), untrusted: a command chose it."""

    call_id: str
    question_id: str
    how: str  # "CONNECT" or "HTTP"
    host: str
    port: int


class RunStatus(StrEnum):
    """How a run ended (`status` in `run --output json`)."""

    DONE = "done"
    INCOMPLETE = "incomplete"  # the server cut the answer off (max_tokens, a full context)
    AWAITING_APPROVAL = "awaiting_approval"
    ERROR = "error"


@dataclass
class Retry(Event):
    """A model request failed and is tried again: what failed, and which try comes next."""

    error: str
    attempt: int
    attempts: int
    change: str = ""  # what this try does differently (no streaming, empty content)
    # the error's whole text when `error` only names it (a server's long message): shown
    # with --debug, kept in logs/model.log
    detail: str = ""


@dataclass
class HookNote(Event):
    """What one of the person's hooks said for the person (its systemMessage, the stderr of
    a non-blocking error): their own program's words, shown as untrusted text."""

    text: str


@dataclass
class HookDecision(Event):
    """What one of the person's hooks decided (hooks/decision_notes.py), named as the audit
    names it: `hook` is "hook COMMAND"; `event`, `decision`, `reason` (the hook's words,
    untrusted), and the call it was about (`call_id`, `tool`) where there is one."""

    hook: str
    event: str
    decision: str
    reason: str = ""
    call_id: str | None = None
    tool: str | None = None


@dataclass
class AnswerCutOff(Event):
    """The server cut the answer off (`length`: max_tokens or a full context; `truncated`):
    the run ends `incomplete`, and the calls it named (`dropped_calls`) did not run."""

    reason: str
    dropped_calls: list[str] = field(default_factory=list)


# why an answer was cut off, in the words of the run's warning and the transcript
CUT_OFF_REASONS = {
    "length": "it reached max_tokens or filled the model's context",
    "truncated": "the server truncated it (its context is full)",
}


def why_cut_off(reason: str) -> str:
    """An AnswerCutOff's reason as a person reads it."""
    return CUT_OFF_REASONS.get(reason, reason)


@dataclass
class Compacted(Event):
    """The older messages were summarised to fit the context window (the thread keeps them):
    the model is now sent the summary and the messages from number `upto` on."""

    upto: int
    reason: str  # "threshold", "overflow" (the server refused a request) or "command"
    tokens_before: int | None = None  # the request's estimated tokens, before and after
    tokens_after: int | None = None
    window: int | None = None


@dataclass
class Done(Event):
    """The run stopped: finished (`done`), cut off (`incomplete`: see AnswerCutOff) or
    waiting at a review (`awaiting_approval`)."""

    thread_id: str
    status: RunStatus
    final: str
    usage: dict[str, Any] = field(default_factory=dict)  # tokens, and cost_usd if priced
    pending: list[dict[str, Any]] = field(default_factory=list)


def add_usage_value(key: str, total: Any, value: Any) -> Any:
    """Usage added up: tokens are summed; `estimated` holds if any part was estimated."""
    if key == "estimated":
        return bool(total) or bool(value)
    return (total or 0) + value


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name).lstrip("_")
