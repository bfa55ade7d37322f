"""An answer the person stopped with Ctrl-C while it streamed: how its message is marked.

The agent node keeps the text shown so far as the assistant's message, with
`response_metadata["interrupted"] = True` (and the same in `additional_kwargs`, which
langchain-openai does not send to the API); its half-streamed tool calls are dropped.
"""

from __future__ import annotations

from typing import Any

INTERRUPTED = "interrupted"


def was_stopped(message: Any) -> bool:
    """Whether `message` is an answer the person stopped."""
    return bool(getattr(message, "response_metadata", {}).get(INTERRUPTED))
