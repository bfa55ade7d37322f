"""The agent graph: agent -> review [-> approve] -> tools (one task per call) -> agent.

The approved calls go to the tools node in groups (executor.py): the calls of a group side
by side in one step, each group after the one before it (the agent node sends the next)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
)
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Command

from agentcli.agent.agents_md import prompt_section
from agentcli.agent.answer_streaming import ask
from agentcli.agent.context.compaction import outgoing
from agentcli.agent.context.fit import ContextFit, notice
from agentcli.agent.executor import collect, start_turn
from agentcli.agent.model.call_ids import with_call_ids
from agentcli.agent.model.cut_off_answers import cut_off_reason, without_calls
from agentcli.agent.model.empty_answers import unless_empty
from agentcli.agent.model.retries import Retries, answer
from agentcli.agent.model.storable_calls import with_storable_args
from agentcli.agent.offered_tools import Offering
from agentcli.agent.plan.plan_review import make_plan_nodes
from agentcli.agent.plan.plan_run import advance
from agentcli.agent.plan.plan_tool import INSTRUCTIONS as PLAN_INSTRUCTIONS
from agentcli.agent.plan.plan_tool import planning
from agentcli.agent.repeated_calls import repeats, stopped_by, with_note
from agentcli.agent.review.approval_seals import allowed_tools, step_of, thread_of
from agentcli.agent.review.dismissed_calls import reconcile
from agentcli.agent.review.node import make_review_nodes
from agentcli.agent.state import AgentState, RunContext
from agentcli.agent.text_calls.prompt import as_text
from agentcli.agent.tools_node import make_tools_node
from agentcli.agent.untrusted_text_fence import fence
from agentcli.audit.chain import chaining
from agentcli.errors import Interrupted
from agentcli.hooks.decision_notes import STREAM_KEY
from agentcli.hooks.turn_events import stopping
from agentcli.threads.langgraph_internals import step_checkpoint
from agentcli.threads.stopped_answer import was_stopped
from agentcli.threads.store_key import key_of

STOP_HOOK = "agentcli_stop_hook"  # marks the message a Stop hook sent the model

SYSTEM = """You are agentcli, an assistant working in a terminal on the user's machine.
Your workspace is {workspace}; file paths are relative to it and the shell runs there.
Every tool call is shown to the user, who may approve, edit or reject it, or answer with
feedback instead. A rejected call did not run: do not retry it unchanged; read any feedback
and adapt. Be brief."""


def stop_hooks(
    ctx: RunContext, messages: Sequence[BaseMessage], reply: BaseMessage, thread: str, write: Any
) -> HumanMessage | None:
    """The person's Stop hooks on a turn's answer: a block's reason, as the message the
    model reads next (marked as the hook's), or None: the turn ends."""
    blocks = 0
    for message in reversed(messages):  # Stop hooks that sent this turn on, in a row
        if not isinstance(message, HumanMessage):
            continue
        if not message.additional_kwargs.get(STOP_HOOK):
            break
        blocks += 1
    text = reply.text if isinstance(reply, AIMessage) else ""
    heard = stopping(ctx.hooks, text, blocks, thread, ctx.workspace, ctx.policy.mode)
    for said in heard.notes:
        write({"hook_note": said})
    for record in heard.decided:
        write({STREAM_KEY: record})
    if heard.blocked is None:
        return None
    said = fence("hook_feedback", f"not done yet, says {heard.blocked}")
    return HumanMessage(said, additional_kwargs={STOP_HOOK: True})


def steps_since_user(messages: Sequence[BaseMessage]) -> int:
    """Model turns since the last user message (the step count for max_steps); a Stop
    hook's message is not the person's."""
    count = 0
    for message in reversed(messages):
        if isinstance(message, HumanMessage) and not message.additional_kwargs.get(STOP_HOOK):
            break
        count += isinstance(message, AIMessage)
    return count


def system_prompt(ctx: RunContext) -> str:
    prompt = SYSTEM.format(workspace=ctx.workspace)
    if ctx.system_prompt:
        prompt += "\n\n" + ctx.system_prompt
    if project := prompt_section(ctx.workspace):  # AGENTS.md, read at each call
        prompt += "\n\n" + project
    return prompt


def build_graph(
    model: Callable[[], BaseChatModel],
    tools: Sequence[BaseTool],
    context_schema: type[RunContext] = RunContext,
    retry: Retries | None = None,
    tool_calls: str = "auto",
) -> StateGraph[Any, Any, Any, Any]:
    """The uncompiled graph; the caller compiles it with its checkpointer.

    `model` is called when the agent first needs it, so reading a thread's state never
    builds a client (nor needs an API key). A server passes a `context_schema` whose
    fields all have defaults, since its clients may send no context at all. `retry` says
    how often a failed model request is tried (model/retries.py; None: once).

    `tool_calls` ([model] tool_calls): "native" sends the tools and reads only native calls;
    "auto" also recovers calls written as text when the model makes no native one; "text"
    describes the tools in the system prompt instead of sending them (text_calls/prompt.py).
    """
    offering = Offering(model, tools, tool_calls)
    textual = offering.textual
    retries = retry or Retries()
    fit = ContextFit(tools)

    def agent(state: AgentState, runtime: Runtime[RunContext], config: RunnableConfig) -> Command:
        ctx = runtime.context
        messages = state["messages"]
        key, thread = key_of(ctx), thread_of(config)
        step, checkpoint = step_of(config), step_checkpoint(config)
        # the group of calls that ran: recorded for undo; a turn's next group sent
        collected = collect(state, ctx, key, thread, step, checkpoint)
        if collected.goto is not None:
            return Command(update=collected.update, goto=collected.goto)
        carried = collected.update  # {"batch": None} once a batch is done with
        if ctx.cancel is not None and ctx.cancel.is_set():  # Ctrl-C: no further model call
            raise Interrupted("interrupted before the model was asked again")
        allowed = allowed_tools(key, thread, state)
        if moved := advance(state, ctx, key, thread, step, allowed, checkpoint):  # a plan runs
            return Command(update={**carried, **moved["update"]}, goto=moved["goto"])
        if settled := reconcile(state):  # calls a client left undecided: told, then asked
            return Command(update={**carried, **settled}, goto="agent")
        found = repeats(messages, ctx.max_repeated_calls)  # the same call again and again
        if steps_since_user(messages) >= ctx.max_steps or stopped_by(found):
            return Command(update=carried, goto=END)
        plan_mode = planning(messages)
        prompt = system_prompt(ctx) + ("\n\n" + PLAN_INSTRUCTIONS if plan_mode else "")
        budget, compaction = fit.budget(ctx), state.get("compaction")
        # the tools this request offers: those that fit a small window (context/fixed_part.py)
        tools_offer = None if plan_mode else offering.choose(prompt, ctx, budget)
        chosen = offering.binding(plan_mode, tools_offer)
        fit.offered(tools_offer, textual)
        offered = chosen.offered
        if chosen.described:
            prompt += "\n\n" + chosen.described
        sent = _as_sent(with_note(outgoing(prompt, messages, compaction, budget), found), textual)
        update: dict[str, Any] = dict(carried)
        fresh = (compaction or {}).get("length") != len(messages)  # once per new message
        if budget and ctx.compact and fresh and fit.estimate(sent) > budget.limit:
            done = fit.compacted(chosen.plain, prompt, messages, compaction, budget, "threshold")
            if done:
                runtime.stream_writer(notice(done[0]))
                update["compaction"] = done[0]
                return Command(update=update, goto="agent")  # saved, then asked
        write = runtime.stream_writer

        def asked(request: list[BaseMessage]) -> BaseMessage:
            def once(chat: Any) -> BaseMessage:
                return ask(chat, request, write, ctx, offered)

            # an empty answer is asked for again, never stored (model/empty_answers.py)
            return unless_empty(
                lambda: answer(once, chosen.bound, request, write, ctx.cancel, retries), write
            )

        try:
            reply = asked(sent)
        except Exception as exc:  # a request too long for the server: compacted, tried once more
            if not plan_mode and fit.shrinks(exc, budget):  # it named a smaller window
                return Command(update=update, goto="agent")  # tools and thread fitted to it
            done = fit.after_overflow(chosen.plain, prompt, messages, compaction, ctx, exc)
            if not done:
                raise
            write(notice(done[0]))
            update["compaction"], sent = done[0], _as_sent(with_note(done[1], found), textual)
            reply = asked(sent)
        if budget:  # the estimate is only needed, and only paid for, with a known window
            fit.learn(sent, reply)
        if isinstance(reply, AIMessage) and (reason := cut_off_reason(reply)):
            # cut off: any call in it may be half written, so none runs; the run ends
            update["messages"] = [without_calls(reply, reason)]
            return Command(update=update, goto=END)
        reply = with_storable_args(with_call_ids(reply))  # ids of their own, args agentcli keeps
        calls = isinstance(reply, AIMessage) and (reply.tool_calls or reply.invalid_tool_calls)
        update["messages"] = [reply]
        if was_stopped(reply):  # stopped mid-answer: the turn ends
            return Command(update=update, goto=END)
        if not calls and (more := stop_hooks(ctx, messages, reply, thread, write)):
            update["messages"] = [reply, more]  # a Stop hook sends the turn on
            return Command(update=update, goto="agent")
        return Command(update=update, goto="review" if calls else END)

    builder = StateGraph(AgentState, context_schema=context_schema)
    builder.add_node("agent", chaining(agent), destinations=("review", "agent", "tools", END))
    review, approve = make_review_nodes(tools, start_turn)
    plan_review, plan_approve = make_plan_nodes(tools)
    review = _plan_first(plan_review, review)
    approve = _plan_first(plan_approve, approve)
    builder.add_node("review", chaining(review), destinations=("approve", "tools", "agent", END))
    builder.add_node("approve", chaining(approve), destinations=("tools", "agent"))
    builder.add_node("tools", make_tools_node(tools))
    builder.add_edge(START, "agent")
    builder.add_edge("tools", "agent")
    return builder


def _plan_first(plan_half: Callable[..., Any], usual: Callable[..., Any]) -> Callable[..., Any]:
    """A review node that hands a plan turn to `plan_half` and any other to `usual`."""

    def node(state: AgentState, runtime: Runtime[RunContext], config: RunnableConfig) -> Any:
        decided = plan_half(state, runtime, config)
        return decided if decided is not None else usual(state, runtime, config)

    node.__name__ = getattr(usual, "__name__", "node")
    return node


def _as_sent(request: list[BaseMessage], textual: bool) -> list[BaseMessage]:
    """The request as the server takes it: in text mode, calls and results written as text
    (text_calls/prompt.py) after the system message."""
    return [request[0], *as_text(request[1:])] if textual and request else request
