"""The model as one request asks it: the tools that request offers (all of them, or what
fits a small window: context/fixed_part.py), bound to the model or, in text mode, described
in the system prompt; one binding per set offered, made once."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.tools import BaseTool

from agentcli.agent.context.compaction import Budget
from agentcli.agent.context.fixed_part import Offer, offer, schema_of
from agentcli.agent.plan.plan_tool import plan_tool
from agentcli.agent.text_calls.prompt import describe
from agentcli.errors import ConfigError


@dataclass(frozen=True)
class Binding:
    """The model with its tools bound, alone, and the tools as text mode describes them and
    as text calls are recovered (empty: not in that mode)."""

    bound: Any
    plain: Any
    described: str
    offered: list[str]


class Offering:
    """Per compiled graph: the tools' schemas, counted once, and the bindings made so far."""

    def __init__(self, model: Callable[[], Any], tools: Sequence[BaseTool], tool_calls: str):
        self.model = model
        self.tools = list(tools)
        self.tool_calls = tool_calls
        self.textual = tool_calls == "text" and bool(tools)
        self._schemas: list[dict[str, Any]] | None = None
        self._plain: Any = None
        self._bindings: dict[tuple[Any, ...], Binding] = {}

    @property
    def schemas(self) -> list[dict[str, Any]]:
        if self._schemas is None:
            self._schemas = [schema_of(tool) for tool in self.tools]
        return self._schemas

    def choose(self, prompt: str, ctx: Any, budget: Budget | None, strict: bool = True) -> Offer:
        """What a request with system prompt `prompt` offers; ConfigError (if `strict`)
        when not even the smallest offer fits the window. Counted without the estimate's
        correction (context/fit.py), which grows as a thread goes on: the tools offered
        stay the same from one request to the next."""
        allowance = budget.fixed_tokens if budget is not None else None
        chosen = offer(
            prompt,
            self.schemas,
            allowance=allowance,
            window=budget.window if budget is not None else None,
            core=ctx.tool_core,
            descriptions=ctx.tool_descriptions,
            textual=self.textual,
        )
        if strict and not chosen.fits:
            raise ConfigError(chosen.too_small())
        return chosen

    def binding(self, plan_mode: bool, chosen: Offer | None = None) -> Binding:
        """The model bound to the plan tool (plan mode) or to the offer's tools."""
        schemas = chosen.schemas if chosen else self.schemas
        key = ("plan",) if plan_mode else tuple(_key(s) for s in schemas)
        if key not in self._bindings:
            if self._plain is None:
                self._plain = self.model()
            plain = self._plain
            offer_: list[Any] = [plan_tool(self.tools)] if plan_mode else list(schemas)
            self._bindings[key] = Binding(
                plain.bind_tools(offer_) if offer_ and not self.textual else plain,
                plain,
                describe(offer_) if self.textual and offer_ else "",
                [_name(t) for t in offer_] if self.tool_calls != "native" else [],
            )
        return self._bindings[key]


def _key(schema: dict[str, Any]) -> str:
    return json.dumps(schema, sort_keys=True)


def _name(tool: Any) -> str:
    return tool["function"]["name"] if isinstance(tool, dict) else tool.name
