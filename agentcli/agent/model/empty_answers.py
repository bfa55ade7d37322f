"""Answers with nothing in them: no text (or only blanks) and no tool call.

A server may answer with nothing at all (seen: llama-cpp-python with a forced tool_choice,
`1,348 in · 0 out`). Such an answer is never stored: it would read as the model's word in
the transcript and in every later request. The agent node asks once more (a `retry` stream
part says so, as retries.py's do) and, if that answer is empty too, the run fails with a
ModelError: the thread keeps the person's message with no answer after it, its index says
why (`last_error`, which `threads show` prints), and /retry, `run --thread ID` or the next
message asks again.

Not empty: an answer the server cut off, or one the person stopped, even with no text (each
is marked and kept: cut_off_answers.py, threads/stopped_answer.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from agentcli.agent.model.cut_off_answers import cut_off_reason
from agentcli.errors import ModelError
from agentcli.threads.stopped_answer import was_stopped

EMPTY = "the model's answer was empty (no text, no tool call)"


def is_empty(message: BaseMessage) -> bool:
    """An answer that says nothing and calls nothing (and was neither cut off nor stopped)."""
    return (
        isinstance(message, AIMessage)
        and not message.tool_calls
        and not message.invalid_tool_calls
        and not message.text.strip()
        and cut_off_reason(message) is None
        and not was_stopped(message)
    )


def unless_empty(ask: Callable[[], BaseMessage], write: Callable[[Any], None]) -> BaseMessage:
    """`ask()`'s answer; asked once more if it is empty; a ModelError if empty again."""
    reply = ask()
    if not is_empty(reply):
        return reply
    write({"retry": {"error": EMPTY, "attempt": 2, "attempts": 2, "change": "asking once more"}})
    reply = ask()
    if is_empty(reply):
        raise ModelError(
            f"{EMPTY}, twice; nothing was kept as its answer: ask again, or check the"
            " model's settings (a forced tool_choice, max_tokens) with agentcli doctor"
        )
    return reply
