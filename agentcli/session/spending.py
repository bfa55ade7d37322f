"""What a thread has spent: its tokens, as the index counts them, and their price in
dollars (the config's prices, else the bundled table: agent/model/prices.py)."""

from __future__ import annotations

from dataclasses import dataclass

from agentcli.config import Settings
from agentcli.thread_rows import ThreadRow


@dataclass(frozen=True)
class Spent:
    input_tokens: int
    output_tokens: int
    cost_usd: float | None  # None: no price known for the model
    prices_from: str | None  # where the price came from, when one is known


def spent(settings: Settings, row: ThreadRow) -> Spent:
    """A thread's tokens and their cost at the settings' model's price."""
    from agentcli.agent.model.chat_model import cost_usd, priced_by

    usage = {"input_tokens": row.input_tokens, "output_tokens": row.output_tokens}
    cost = cost_usd(settings, settings.model, usage)
    where = priced_by(settings, settings.model) if cost is not None else None
    return Spent(row.input_tokens, row.output_tokens, cost, where)


def estimated_by() -> str:
    """How agentcli counts tokens when the server sends no usage."""
    from agentcli.agent.model.token_count import method

    return method()
