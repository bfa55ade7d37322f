"""The agent node's side of compaction: before each request, estimate it; past the
threshold, compact first; a server that refuses a request as too long gets one retry,
compacted to fit the window its error names (or a guess below what was refused)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.tools import BaseTool

from agentcli.agent.context.compaction import Budget, compact, outgoing
from agentcli.agent.context.fixed_part import Offer
from agentcli.agent.context.window import overflowed, window_in
from agentcli.agent.model.token_count import Calibration, messages_tokens, tools_tokens


class ContextFit:
    """Per compiled graph: the tools' share of each request and the estimate's correction."""

    def __init__(self, tools: Sequence[BaseTool]) -> None:
        self.tools = tools
        self._tool_tokens: int | None = None  # counted at the first request, not at build
        self._offered: Offer | None = None  # this request's tools, when it offers fewer
        self._textual = False
        self.calibration = Calibration()
        self.learnt: int | None = None  # a smaller window a server's refusal named

    def shrinks(self, exc: BaseException, budget: Budget | None) -> bool:
        """Whether `exc` is a refusal naming a window smaller than the one this request was
        fitted to (or the first window known): kept, so that the request is made again,
        its tools offered for that window (context/fixed_part.py), and so are the next."""
        named = window_in(exc) if overflowed(exc) else None
        if not named or (budget is not None and named >= budget.window):
            return False
        self.learnt = named
        return True

    def offered(self, offer: Offer | None, textual: bool = False) -> None:
        """The tools this request carries: `offer`'s (None: all of them, as schemas), counted
        only if an estimate is made; in text mode none are sent as schemas: their
        description is in the system prompt."""
        self._offered, self._textual = offer, textual

    @property
    def tool_tokens(self) -> int:
        if self._textual:
            return 0
        if self._offered is not None:
            return self._offered.tools_tokens
        if self._tool_tokens is None:
            from langchain_core.utils.function_calling import convert_to_openai_tool

            schemas = [convert_to_openai_tool(tool) for tool in self.tools]
            self._tool_tokens = tools_tokens(schemas)
        return self._tool_tokens

    def raw(self, sent: Sequence[BaseMessage]) -> int:
        return messages_tokens(sent) + self.tool_tokens

    def estimate(self, sent: Sequence[BaseMessage]) -> int:
        """The tokens a request carrying `sent` (and the tools) is expected to take."""
        return self.calibration.apply(self.raw(sent))

    def learn(self, sent: Sequence[BaseMessage], reply: BaseMessage) -> None:
        usage = reply.usage_metadata if isinstance(reply, AIMessage) else None
        self.calibration.learn(self.raw(sent), usage["input_tokens"] if usage else None)

    def budget(self, ctx: Any, window: int | None = None) -> Budget | None:
        window = window or ctx.context_window
        if self.learnt:
            window = min(window or self.learnt, self.learnt)
        if not window:
            return None
        return Budget(
            window=window,
            threshold=ctx.compact_threshold,
            reserve=ctx.answer_reserve,
            keep=ctx.compact_keep,
            tool_result=ctx.tool_result_share,
        )

    def compacted(
        self,
        chat: Any,
        prompt: str,
        messages: Sequence[BaseMessage],
        compaction: dict[str, Any] | None,
        budget: Budget,
        reason: str,
        keep: int | None = None,
    ) -> tuple[dict[str, Any], list[BaseMessage]] | None:
        """A new compaction and the request it leaves, or None if nothing can be cut."""
        before = outgoing(prompt, messages, compaction, budget)
        if keep is None:  # what the fixed part and a summary leave, so that the request fits
            fixed = self.estimate([SystemMessage(prompt)])
            keep = max(0, min(budget.keep_tokens, budget.limit - fixed - budget.summary_tokens))
        new = compact(chat, messages, compaction, budget, reason, keep)
        if new is None:
            return None
        sent = outgoing(prompt, messages, new, budget)
        new.update(tokens_before=self.estimate(before), tokens_after=self.estimate(sent))
        return new, sent

    def after_overflow(
        self,
        chat: Any,
        prompt: str,
        messages: Sequence[BaseMessage],
        compaction: dict[str, Any] | None,
        ctx: Any,
        exc: BaseException,
    ) -> tuple[dict[str, Any], list[BaseMessage]] | None:
        """When `exc` is a server refusing a request as too long: a compaction to fit the
        window its error names, else the known one, else a guess of three quarters of what
        was refused. None for any other error, or when compaction is off."""
        if not ctx.compact or not overflowed(exc):
            return None
        refused = self.estimate(outgoing(prompt, messages, compaction, None))
        known = ctx.context_window
        window = window_in(exc) or (min(known, refused) if known else refused * 3 // 4)
        budget = self.budget(ctx, max(window, 256))
        assert budget is not None
        return self.compacted(chat, prompt, messages, compaction, budget, "overflow")


def notice(new: dict[str, Any]) -> dict[str, Any]:
    """The stream part that tells a client a compaction happened."""
    keys = ("upto", "reason", "tokens_before", "tokens_after", "window")
    return {"compacted": {key: new.get(key) for key in keys}}


def on_demand(
    chat: Any,
    prompt: str,
    messages: Sequence[BaseMessage],
    compaction: dict[str, Any] | None,
    ctx: Any,
    tools: Sequence[BaseTool],
) -> dict[str, Any] | None:
    """A compaction asked for by a person (/compact): a quarter of the request (`keep`)
    stays word for word, at most `keep` of the window when the window is known."""
    fit = ContextFit(tools)
    current = fit.estimate(outgoing(prompt, messages, compaction, None))
    budget = fit.budget(ctx, ctx.context_window or max(current, 256))
    assert budget is not None
    keep = min(budget.keep_tokens, current // 4)
    done = fit.compacted(chat, prompt, messages, compaction, budget, "command", keep)
    return done[0] if done else None
