"""The chat's line after each turn: the tokens it used and what it cost, and the thread's
totals so far."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentcli.session.thread_session import ThreadSession


def usage_line(session: ThreadSession, usage: dict[str, Any]) -> str | None:
    """`1,234 in · 56 out · $0.0012  (thread: 5,678 tokens · $0.0100)`; None when the
    turn used no tokens."""
    if not usage.get("total_tokens"):
        return None
    # here, not at the top: the token counter loads LangChain, which the prompt must not
    # wait for (the session, made in the background, has loaded it by now)
    from agentcli.session.spending import estimated_by, spent

    row = session.store.resolve(session.thread_id)
    thread = spent(session.settings, row)
    line = f"{usage['input_tokens']:,} in · {usage['output_tokens']:,} out"
    if usage.get("estimated"):  # the server sent no usage: counted by agentcli's heuristic
        line += f" (estimated: {estimated_by()})"
    if "cost_usd" in usage:
        line += f" · ${usage['cost_usd']:.4f}"
    line += f"  (thread: {thread.input_tokens + thread.output_tokens:,} tokens"
    return line + (f" · ${thread.cost_usd:.4f})" if thread.cost_usd is not None else ")")
