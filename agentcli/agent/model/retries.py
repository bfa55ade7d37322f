"""Model calls that fail: which are tried again, how often, and what the person is told.

This is the one place that retries a model request (the OpenAI client's own retries are off,
and the graph has no retry policy), so each retry is seen: the agent node writes a custom
stream part `{"retry": {...}}` that sessions turn into a `Retry` event (what failed,
attempt n of m).

- tried again, up to `Retries.attempts` in all: rate limits (429), 5xx answers that are not
  validation errors, refused or cut connections;
- a timeout only when `[model] retry_timeouts` says so: the server may still be working on
  the first request, and a second one would double its work;
- never: other 4xx answers and 5xx validation errors, which fail the same way again;
- once each, outside that count: an empty answer stream ("No generation chunks were
  returned") asked again without streaming, and that request asked once more if its
  connection fails (a server that failed the stream may close the keep-alive connection it
  was on just as the next request goes out on it: llama-cpp-python's does); a server that
  refuses `content: null` on an assistant message with tool calls asked again with `""`
  there (and from then on).

What the person is told of an error agentcli recovers from is one calm line (`calm`): a
server's message of more than CALM_CHARS (llama-cpp-python's validation dump runs to
hundreds) is named, not shown. Its whole text goes to `detail` in the stream part (shown
with --debug) and to the log `logs/model.log` (agent/log_files.py).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from agentcli.agent.log_files import MODEL_LOG, append
from agentcli.agent.outbound import current
from agentcli.errors import Interrupted

EMPTY_STREAM = "No generation chunks were returned"
# how a 5xx that is really a refused request reads (pydantic, FastAPI, llama-cpp-python ...)
VALIDATION = re.compile(
    r"validat|input should|field required|missing required|is not valid|invalid|"
    r"unprocessable|must be a string|expected string|not of type",
    re.IGNORECASE,
)
ERROR_CHARS = 200  # what failed, on one line
CALM_CHARS = 100  # a recovered error's text shown as it is, up to this
NULL_REFUSED = "the server refused `content: null` on a tool-call message"


@dataclass(frozen=True)
class Retries:
    """How often a model request is tried, and how long to wait between tries."""

    attempts: int = 1  # tries in all: [model] max_retries + 1
    retry_timeouts: bool = False
    first_wait: float = 0.5  # seconds; doubled at each retry, up to max_wait
    max_wait: float = 8.0

    @classmethod
    def of(cls, settings: Any) -> Retries:
        return cls(settings.max_retries + 1, settings.retry_timeouts)

    def wait(self, retry: int, exc: BaseException | None = None) -> float:
        """Seconds before retry number `retry` (1, 2 ...): a server's Retry-After if it
        gives one (up to 60 s), else exponential with jitter."""
        headers = getattr(getattr(exc, "response", None), "headers", None) or {}
        try:
            return min(float(headers.get("retry-after", "")), 60.0)
        except ValueError:
            pass
        base = min(self.first_wait * 2 ** (retry - 1), self.max_wait)
        return base * random.uniform(0.8, 1.2)


def verdict(exc: BaseException) -> str:
    """ "retry" (worth another try), "timeout" (only if configured) or "final"."""
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return "timeout"
    if isinstance(exc, openai.RateLimitError | openai.APIConnectionError):
        return "retry"
    if isinstance(exc, openai.InternalServerError):
        return "final" if VALIDATION.search(error_text(exc)) else "retry"
    return "final"


def describe(exc: BaseException) -> str:
    """What failed, in one line (clipped to ERROR_CHARS)."""
    text = error_text(exc)
    return text if len(text) <= ERROR_CHARS else text[: ERROR_CHARS - 1] + "…"


def calm(exc: BaseException) -> str:
    """What failed, for an error agentcli recovers from: short, or named by its kind."""
    text = error_text(exc)
    if len(text) <= CALM_CHARS:
        return text
    status = getattr(exc, "status_code", None)
    where = "its message is in logs/model.log; --debug shows it"
    return f"HTTP {status} from the model server ({where})" if status else describe(exc)


def error_text(exc: BaseException) -> str:
    """What failed, on one line and whole: what is read to judge an error (a server may
    name the field it refused only after hundreds of characters about others)."""
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return "the model server did not answer in time"
    if isinstance(exc, openai.APIConnectionError):
        while (inner := exc.__cause__ or exc.__context__) is not None:
            exc = inner
        return f"connection failed: {' '.join(str(exc).split()) or type(exc).__name__}"
    text = str(exc)
    if isinstance(exc, openai.APIStatusError):
        body = exc.body.get("error", exc.body) if isinstance(exc.body, dict) else None
        message = body.get("message") or body.get("detail") if isinstance(body, dict) else None
        text = f"HTTP {exc.status_code}: {message or exc.message}"
    return " ".join(text.split()) or type(exc).__name__


def lost_connection(exc: BaseException) -> bool:
    """The connection failed (refused, reset, closed unanswered), not a timeout."""
    import openai

    return isinstance(exc, openai.APIConnectionError) and not isinstance(
        exc, openai.APITimeoutError
    )


def refuses_null_content(exc: BaseException, messages: Sequence[BaseMessage]) -> bool:
    """A 4xx or 500 about `content`, for a request with an assistant tool-call message
    whose content went out as null."""
    import openai

    if not isinstance(exc, openai.APIStatusError) or exc.status_code not in (400, 422, 500):
        return False
    sent_null = any(
        isinstance(m, AIMessage) and (m.tool_calls or m.invalid_tool_calls) and not m.content
        for m in messages
    )
    return sent_null and "content" in error_text(exc).lower()


def chat_model(chat: Any) -> Any:
    """The model under a `bind_tools` binding."""
    return getattr(chat, "bound", chat)


def unstreamed(chat: Any, messages: Sequence[BaseMessage], write: Callable[[Any], None]) -> Any:
    """The answer asked for without streaming; its text written as one token."""
    reply = chat.invoke(list(messages), stream=False)
    if text := reply.text:
        write({"token": text})
    return reply


def answer(
    ask: Callable[[Any], BaseMessage],
    chat: Any,
    messages: Sequence[BaseMessage],
    write: Callable[[Any], None],
    cancel: Any,
    retries: Retries,
) -> BaseMessage:
    """`ask(chat)`, tried again as the module's docstring says; each retry written as a
    `{"retry": {"error", "attempt", "attempts", "change"?}}` stream part before it is made."""
    attempt, attempts = 1, retries.attempts
    streaming = True
    after_empty = False  # the request is the one asked again after an empty stream
    while True:
        try:
            return ask(chat) if streaming else unstreamed(chat, messages, write)
        except Interrupted:
            raise
        except Exception as exc:
            change = None  # a one-off retry outside the count: what it changes
            model = chat_model(chat)
            said: BaseException | None = exc  # the error, unless the line says it all
            if streaming and isinstance(exc, ValueError) and EMPTY_STREAM in str(exc):
                streaming, error, said = False, "the server sent an empty stream", None
                change, after_empty = "asking again without streaming", True
            elif after_empty and lost_connection(exc):
                after_empty, error = False, calm(exc)
                change = "asking again on a new connection"
            elif getattr(model, "empty_tool_call_content", True) is False and refuses_null_content(
                exc, messages
            ):
                model.empty_tool_call_content = True
                error, change = NULL_REFUSED, "sending empty content instead of null from now on"
            if change is not None:
                attempt, attempts = attempt + 1, attempts + 1
                write(_retry_part(said, error, attempt, attempts, change))
                continue
            kind = verdict(exc)
            if attempt >= attempts or kind == "final":
                raise
            if kind == "timeout" and not retries.retry_timeouts:
                raise
            attempt += 1
            write(_retry_part(exc, calm(exc), attempt, attempts))
            delay = retries.wait(attempt - 1, exc)
            if cancel is not None and cancel.wait(delay):
                raise Interrupted("interrupted: the answer was dropped") from None
            if cancel is None:
                import time

                time.sleep(delay)


def _retry_part(
    exc: BaseException | None, error: str, attempt: int, attempts: int, change: str = ""
) -> dict[str, Any]:
    """The `{"retry": ...}` stream part: the calm line's parts and, when the line does not
    say it all, the error's whole text as `detail` (also appended to logs/model.log)."""
    retry: dict[str, Any] = {"error": error, "attempt": attempt, "attempts": attempts}
    if change:
        retry["change"] = change
    raw = error_text(exc) if exc is not None else error
    if raw != error:
        append(MODEL_LOG, f"recovered ({change or 'trying again'}): {error}", raw)
        retry["detail"] = current()(raw)
    return {"retry": retry}
