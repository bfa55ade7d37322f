"""The review node: every tool call passes here before it can run.

Invalid calls go straight back to the model; the policy allows or denies what it can;
whatever is left waits for a person in one `interrupt()` whose payload and resume value
follow LangChain v1's human-in-the-loop schema. Nothing here has side effects before the
interrupt: on resume the node re-runs from the start and must reach the same question.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, ToolCall, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.graph import END
from langgraph.runtime import Runtime
from langgraph.types import Command

from agentcli.agent.model.storable_calls import UNKEPT
from agentcli.agent.review.answers import ask, checked
from agentcli.agent.review.approval_seals import (
    allowed_tools,
    review_sealed,
    seal_review,
    seal_tool,
    step_of,
    thread_of,
)
from agentcli.agent.review.argument_check import validate_args
from agentcli.agent.review.hook_checks import HOOK, weigh
from agentcli.agent.review.interrupt_payload import review_request
from agentcli.agent.review.pending_calls import ALTERED, answered_ids, vet
from agentcli.agent.review.precheck import precondition
from agentcli.agent.state import AgentState, RunContext
from agentcli.agent.toolset.sandboxing import UNCONFINED, unconfined_rule, would_confine
from agentcli.audit.records import ALTERED_BY, PEOPLE, audit_record, decider, refusal_kind
from agentcli.hooks.decision_notes import STREAM_KEY
from agentcli.policy.thread_rules import scoped_entry
from agentcli.threads.langgraph_internals import step_checkpoint
from agentcli.threads.store_key import key_of
from agentcli.undo.around_calls import review_note

# (ctx, key, thread, step, message, approved, unconfined, checkpoint) -> (goto, update):
# the executor's start of a turn (agent/executor.py), passed in by the graph
Start = Callable[..., tuple[Any, dict[str, Any]]]
UNCONFINED_BY_PERSON = "off (unconfined once, chosen at the review)"

REJECTED = "rejected by the user"


@dataclass
class Turn:
    """What one review decides: tool messages, the calls to run, and an audit record each."""

    replies: list[ToolMessage] = field(default_factory=list)
    approved: list[ToolCall] = field(default_factory=list)
    audit: list[dict[str, Any]] = field(default_factory=list)
    unconfined: set[str | None] = field(default_factory=set)  # ids run outside the sandbox

    def run(
        self,
        call: ToolCall,
        decision: str,
        who: str,
        by: str,
        args: Any = None,
        unconfined: str | None = None,
    ) -> None:
        """Run the call (with `args`, if edited); `unconfined`: why it runs outside the
        sandbox (audited as its `sandbox`)."""
        ran = call if args is None else {**call, "args": args}
        self.approved.append(ran)
        extra = {"sandbox": unconfined} if unconfined else {}
        if unconfined:
            self.unconfined.add(call["id"])
        self.note(call, decision, who, by, ran_args=ran["args"], **extra)

    def refuse(self, call: ToolCall, decision: str, who: str, by: str, text: str) -> None:
        self.replies.append(_refused(call, text))
        said = text if decision in ("feedback", "expired") else None
        self.note(call, decision, who, by, feedback=said)

    def invalid(self, call_id: str | None, name: str, args: Any, problem: str) -> None:
        self.replies.append(_error(call_id, name, problem))
        self.note({"id": call_id, "name": name, "args": args}, "invalid", "agentcli", problem)

    def update(self, **extra: Any) -> dict[str, Any]:
        # no "messages" key without replies: even an empty write makes LangGraph's reducer
        # index the whole history again
        replies = {"messages": self.replies} if self.replies else {}
        return {**replies, "audit": self.audit, **extra}

    def note(self, call: Any, decision: str, who: str, by: str, **extra: Any) -> None:
        self.audit.append(audit_record(call, decision, who, by, **extra))


STOPPED = "not run: the run stopped after too many invalid tool calls"


def make_review_nodes(tools: Sequence[BaseTool], start: Start):  # noqa: ANN201 - two nodes
    """`review` validates and applies the policy; `approve` asks a person for the rest;
    `start` hands the approved calls to the executor.

    They are two nodes so that the policy's verdicts are saved before the interrupt: a
    resume (maybe by another process with other flags) answers exactly what was asked.
    Every call either sends to the tools node carries its seal (approval_seals.py), for the step
    the tools task runs at (this one's next).
    """
    by_name = {tool.name: tool for tool in tools}

    def run(ctx: Any, key: Any, config: RunnableConfig, turn: Turn, message: AIMessage) -> Any:
        """The approved calls to the executor, in the model's order: (goto, update)."""
        where = (thread_of(config), step_of(config))
        approved, lifted = turn.approved, turn.unconfined
        return start(ctx, key, *where, message, approved, lifted, step_checkpoint(config))

    def review(state: AgentState, runtime: Runtime[RunContext], config: RunnableConfig) -> Command:
        ctx = runtime.context
        key, thread = key_of(ctx), thread_of(config)
        allowed = allowed_tools(key, thread, state)
        message = _last_assistant(state["messages"])
        turn = Turn()
        asking: list[dict[str, Any]] = []
        changed: dict[str | None, dict[str, Any]] = {}  # call id: the arguments a hook gave
        hooked: dict[str | None, dict[str, Any]] = {}  # call id: what the person is told
        for bad in message.invalid_tool_calls:
            error = str(bad.get("error") or "parse error")
            detail = (
                error if error.startswith(UNKEPT) else f"the arguments are not valid JSON ({error})"
            )
            turn.invalid(bad.get("id"), bad.get("name") or "unknown", bad.get("args"), detail)
        for call in message.tool_calls:
            tool = by_name.get(call["name"])
            # arguments the tool cannot take, or a call its preconditions say it will refuse
            problem = validate_args(
                tool, call["args"], list(by_name), name=call["name"]
            ) or precondition(tool, call["args"], ctx)
            if problem:
                turn.invalid(call["id"], call["name"], call["args"], problem)
                continue

            def unfit(args: dict[str, Any], tool: Any = tool) -> str | None:
                return validate_args(tool, args, list(by_name)) or precondition(tool, args, ctx)

            # the person's PreToolUse hooks, then the policy (hook_checks.py)
            verdict = weigh(ctx, call, allowed, thread, unfit)
            for said in verdict.told:  # a hook's words for the person: shown as marks
                runtime.stream_writer({"hook_note": said})
            for record in verdict.decided:  # and what each decided, for scripts
                runtime.stream_writer({STREAM_KEY: record})
            ran = None if verdict.args == call["args"] else verdict.args
            if ran is not None:  # a hook's updatedInput: what runs, and what the model sees
                changed[call["id"]] = verdict.args
            if verdict.decision == "allow":
                lifted = (
                    unconfined_rule(ctx.policy.rules, call["name"], verdict.args)
                    if verdict.policy and would_confine(ctx, call["name"])
                    else None
                )
                turn.run(call, "allowed", verdict.who, verdict.by, ran, unconfined=_off(lifted))
            elif verdict.decision == "deny":
                turn.refuse(call, "denied", verdict.who, verdict.by, verdict.refusal)
            else:
                asking.append({"call": {**call, "args": verdict.args}, "reason": verdict.reason})
                note = verdict.note or (f"asked by {verdict.by}" if verdict.who == HOOK else "")
                if note or ran is not None:  # shown, and never answered by a flag
                    hooked[call["id"]] = {"note": note or "arguments changed by a hook"}
                    if ran is not None:
                        hooked[call["id"]]["model_args"] = call["args"]

        invalid = any(record["decision"] == "invalid" for record in turn.audit)
        invalid_turns = state.get("invalid_turns", 0) + 1 if invalid else 0
        if invalid_turns >= ctx.max_invalid_turns:  # every call still gets its tool message
            for call in [*turn.approved, *(item["call"] for item in asking)]:
                turn.refuse(call, "denied", "agentcli", "max_invalid_turns", STOPPED)
            turn.approved = []
            return Command(update=turn.update(invalid_turns=invalid_turns), goto=END)
        step = step_of(config) + 1  # of the approve task this sends
        update = turn.update(invalid_turns=invalid_turns)
        if changed:  # the history shows what runs: same message id, the hooks' arguments
            message = _with_args(message, changed)
            update["messages"] = [message, *turn.replies]
        if asking:
            lifted_ids = [c["id"] for c in turn.approved if c["id"] in turn.unconfined]
            more = {"hooked": hooked} if hooked else {}
            update["review"] = seal_review(
                key, thread, step, turn.approved, asking, lifted_ids, **more
            )
            return Command(update=update, goto="approve")
        goto, batch = run(ctx, key, config, turn, message)
        return Command(update={**update, **batch}, goto=goto)

    def approve(state: AgentState, runtime: Runtime[RunContext], config: RunnableConfig) -> Command:
        ctx = runtime.context
        key, thread = key_of(ctx), thread_of(config)
        message = _last_assistant(state["messages"])
        # the review's own verdicts (sealed by it for this step), each exactly a call of the
        # model's turn (pending_calls.py): else every call left is refused, none asked
        review = state.get("review")
        if not review_sealed(key, thread, step_of(config), review):
            review = None
        pending = vet(review, message, answered_ids(state["messages"], message))
        asking = pending.asking
        calls = [call for call, _ in asking]
        confined = {c["id"] for c in calls if would_confine(ctx, c["name"])}
        hooked = review.get("hooked") if isinstance(review, Mapping) else None
        hooked = hooked if isinstance(hooked, dict) else {}  # sealed with the review
        request = review_request(
            asking,
            sandbox=lambda c: ctx.sandbox.label() if c["id"] in confined else None,
            undo=lambda call: review_note(ctx, would_confine(ctx, call["name"]), call),
            hook=lambda call: (hooked.get(call["id"]) or {}).get("note"),
        )
        decisions = (
            ask(
                request,
                lambda answer: checked(answer, calls, by_name, context=ctx, confined=confined),
            )
            if asking
            else []
        )
        turn = Turn()
        for call in pending.altered:
            turn.refuse(call, "refused", "agentcli", ALTERED_BY, ALTERED)
        for stray in pending.strays:
            turn.note(stray, "refused", "agentcli", "not a call of the model's turn")

        def denied(call: ToolCall, args: Any) -> bool:
            """Refused when the policy of this run denies it (a resume may bring --deny; an
            edit's arguments were never decided): only a deny counts here, which no
            allowance of the thread undoes, so they are not read again."""
            verdict = ctx.policy.denial(call["name"], args, workspace=ctx.workspace)
            if verdict is not None:
                turn.refuse(call, "denied", verdict.who, verdict.by, verdict.refusal)
            return verdict is not None

        turn.approved = list(pending.allowed)  # audited by the review, whatever the flags now
        lifted = review.get("unconfined") if isinstance(review, Mapping) else None
        turn.unconfined = {c["id"] for c in turn.approved if c["id"] in (lifted or [])}
        remember: list[str] = []
        edited: dict[str | None, dict[str, Any]] = {}
        for (asked, _), decision in zip(asking, decisions, strict=True):
            who, by = decider(decision, ctx.from_clients)
            personal = who in PEOPLE
            kind = decision["type"]
            # the audit's record names the model's arguments, where a hook changed them
            proposed = (hooked.get(asked["id"]) or {}).get("model_args")
            call = asked if proposed is None else {**asked, "args": proposed}
            ran = None if proposed is None else asked["args"]
            if kind == "approve":
                if denied(call, asked["args"]):
                    continue
                off = UNCONFINED_BY_PERSON if decision.get("sandbox") == UNCONFINED else None
                verb = "approved" if personal else "allowed"
                turn.run(call, verb, who, by, ran, unconfined=off)
                if decision.get("always"):  # the whole tool, or the calls a match fits
                    remember.append(scoped_entry(call["name"], decision.get("match")))
            elif kind == "edit":  # its arguments were checked before it was taken
                args = decision["edited_action"]["args"]
                if denied(call, args):
                    continue
                edited[asked["id"]] = args
                turn.run(call, "edited", who, by, args)
            else:
                said = decision.get("message")
                kind = refusal_kind(who, by, bool(said))
                turn.refuse(call, kind, who, by, said or REJECTED)
        update = turn.update(review=None)
        if edited:  # the history shows what really ran: same message id, new arguments
            update["messages"] = [_with_args(message, edited), *turn.replies]
        if remember:
            update["allowed_tools"] = remember
            update["allowed_seals"] = [seal_tool(key, thread, name) for name in remember]
        goto, batch = run(ctx, key, config, turn, message)
        return Command(update={**update, **batch}, goto=goto)

    return review, approve


def _with_args(message: AIMessage, args: Mapping[str | None, Any]) -> AIMessage:
    """The model's turn with these calls' arguments in place of its own."""
    calls = [{**c, "args": args.get(c["id"], c["args"])} for c in message.tool_calls]
    return message.model_copy(update={"tool_calls": calls})


def _off(rule: str | None) -> str | None:
    return f"off (by {rule})" if rule else None


def _last_assistant(messages: Sequence[Any]) -> AIMessage:
    return next(m for m in reversed(messages) if isinstance(m, AIMessage))


def _refused(call: ToolCall, text: str) -> ToolMessage:
    """A call that did not run: rejected, denied, or answered with feedback."""
    return ToolMessage(text, tool_call_id=call["id"] or "", name=call["name"], status="error")


def _error(call_id: str | None, name: str, problem: str) -> ToolMessage:
    text = f"Error: {problem}. The call was not run; correct it and call again."
    return ToolMessage(text, tool_call_id=call_id or "", name=name, status="error")
