"""A scripted chat model for unit tests, plugged in where ChatOpenAI would be."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult


class FakeChatModel(BaseChatModel):
    """Answers each call with the next scripted AIMessage and records what it was sent."""

    replies: list[AIMessage]
    calls: list[list[BaseMessage]] = []

    @property
    def _llm_type(self) -> str:
        return "fake"

    def bind_tools(self, tools: Iterable[Any], **kwargs: Any) -> FakeChatModel:
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        self.calls.append(list(messages))
        if not self.replies:
            raise RuntimeError("fake model: no reply scripted")
        return ChatResult(generations=[ChatGeneration(message=self.replies.pop(0))])


def say(text: str) -> AIMessage:
    return AIMessage(content=text)


def call(*calls: tuple[str, dict[str, Any]], text: str = "") -> AIMessage:
    """An assistant turn proposing tool calls; ids are the tool name plus a counter."""
    return AIMessage(
        content=text,
        tool_calls=[
            {"name": n, "args": a, "id": f"{n}-{_next()}", "type": "tool_call"} for n, a in calls
        ],
    )


_counter = iter(range(1, 1_000_000))


def _next() -> int:
    return next(_counter)
