"""The agent graph: agent -> review [-> approve] -> tools (one task per call) -> agent."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
)
from langchain_core.tools import BaseTool
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Command, RetryPolicy

from agentcli.dismissed import reconcile
from agentcli.errors import Interrupted
from agentcli.review import make_review_nodes
from agentcli.state import AgentState, RunContext
from agentcli.streaming import Accumulator
from agentcli.toolnode import make_tools_node

SYSTEM = """You are agentcli, an assistant working in a terminal on the user's machine.
Your workspace is {workspace}; file paths are relative to it and the shell runs there.
Every tool call is shown to the user, who may approve, edit or reject it, or answer with
feedback instead. A rejected call did not run: do not retry it unchanged; read any feedback
and adapt. Be brief."""


def steps_since_user(messages: Sequence[BaseMessage]) -> int:
    """Model turns since the last user message (the step count for max_steps)."""
    count = 0
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            break
        count += isinstance(message, AIMessage)
    return count


def ask(
    chat: Any, messages: list[BaseMessage], write: Callable[[Any], None], ctx: RunContext
) -> BaseMessage:
    """The model's answer; its text goes out token by token as custom stream parts
    (`{"token": ...}`). Not LangGraph's "messages" mode: that one scans the whole history
    at every node of every step, which made a long thread's turns slower.

    The chunks are gathered by an Accumulator, not added up: adding chunks costs the size of
    the answer so far at every chunk (time in the square of the answer's size)."""
    whole = Accumulator()
    answer: BaseMessage | None = None  # what a model that does not stream yields: all of it
    for chunk in chat.stream(messages):
        if ctx.cancel is not None and ctx.cancel.is_set():  # Ctrl-C while it answered
            raise Interrupted("interrupted: the answer was dropped")
        if text := chunk.text:
            write({"token": text})
        if isinstance(chunk, AIMessageChunk):
            whole.add(chunk)
        else:
            answer = chunk
    if ctx.cancel is not None and ctx.cancel.is_set():
        raise Interrupted("interrupted: the answer was dropped")
    if answer is not None:
        return answer
    return whole.message() if whole.chunks else AIMessage("")


def build_graph(
    model: Callable[[], BaseChatModel],
    tools: Sequence[BaseTool],
    context_schema: type[RunContext] = RunContext,
    retry: RetryPolicy | None = None,
) -> StateGraph[Any, Any, Any, Any]:
    """The uncompiled graph; the caller compiles it with its checkpointer.

    `model` is called when the agent first needs it, so reading a thread's state never
    builds a client (nor needs an API key). A server passes a `context_schema` whose
    fields all have defaults, since its clients may send no context at all.
    """
    bound: list[Any] = []

    def agent(state: AgentState, runtime: Runtime[RunContext]) -> Command:
        ctx = runtime.context
        messages = state["messages"]
        if ctx.cancel is not None and ctx.cancel.is_set():  # Ctrl-C: no further model call
            raise Interrupted("interrupted before the model was asked again")
        if settled := reconcile(state):  # calls a client left undecided: told, then asked
            return Command(update=settled, goto="agent")
        if steps_since_user(messages) >= ctx.max_steps:
            return Command(goto=END)
        prompt = SYSTEM.format(workspace=ctx.workspace)
        if ctx.system_prompt:
            prompt += "\n\n" + ctx.system_prompt
        if not bound:
            chat = model()
            bound.append(chat.bind_tools(list(tools)) if tools else chat)
        reply = ask(bound[0], [SystemMessage(prompt), *messages], runtime.stream_writer, ctx)
        calls = isinstance(reply, AIMessage) and (reply.tool_calls or reply.invalid_tool_calls)
        return Command(update={"messages": [reply]}, goto="review" if calls else END)

    builder = StateGraph(AgentState, context_schema=context_schema)
    builder.add_node("agent", agent, destinations=("review", "agent", END), retry_policy=retry)
    review, approve = make_review_nodes(tools)
    builder.add_node("review", review, destinations=("approve", "tools", "agent", END))
    builder.add_node("approve", approve, destinations=("tools", "agent"))
    builder.add_node("tools", make_tools_node(tools))
    builder.add_edge(START, "agent")
    builder.add_edge("tools", "agent")
    return builder
