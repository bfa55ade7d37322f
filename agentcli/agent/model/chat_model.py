"""The chat model: ChatOpenAI against any OpenAI-compatible server, and its errors explained."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.config import Settings
from agentcli.errors import ConfigError, ModelError

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

OPENAI_URL = "https://api.openai.com/v1"


def endpoint(settings: Settings) -> str:
    return settings.base_url or OPENAI_URL


def make_model(settings: Settings) -> BaseChatModel:
    if not settings.base_url and not settings.api_key:
        raise ConfigError(
            "no API key: set OPENAI_API_KEY, or point --base-url at an OpenAI-compatible server"
        )
    from pydantic import SecretStr

    from agentcli.agent.model.compatible_chat import CompatibleChatOpenAI
    from agentcli.agent.model.http_clients import model_clients

    # ChatOpenAI, with big streamed tool-call arguments in time linear in their size and the
    # quirks of other OpenAI-compatible servers handled (compatible_chat.py)
    return CompatibleChatOpenAI(
        model=settings.model,
        base_url=endpoint(settings),
        # local servers need no key, but the client insists on one
        api_key=SecretStr(settings.api_key or "not-needed"),
        timeout=settings.timeout,
        max_retries=0,  # the agent node retries, visibly (model/retries.py)
        streaming=settings.stream,
        stream_usage=True,
        temperature=settings.temperature,
        max_completion_tokens=settings.max_tokens,  # sent as max_tokens but to OpenAI
        default_tool_choice=settings.tool_choice,
        **model_clients(endpoint(settings), settings.timeout),  # one TLS context a process
    )


def cost_usd(settings: Settings, model: str, usage: dict[str, int]) -> float | None:
    """What `usage` cost on `model`: by the config's price table, else by genai-prices'
    (agentcli/agent/model/prices.py); None if neither knows the model."""
    price = settings.prices.get(model)
    if price is None:
        from agentcli.agent.model.prices import library_cost

        return library_cost(model, settings.base_url, usage)
    spent = usage.get("input_tokens", 0) * price["input"]
    return (spent + usage.get("output_tokens", 0) * price["output"]) / 1_000_000


def priced_by(settings: Settings, model: str) -> str:
    """Where `model`'s price comes from: "config" or "genai-prices" (when it has one)."""
    return "config" if model in settings.prices else "genai-prices"


def explain(exc: BaseException, settings: Settings) -> ModelError | None:
    """One line for a failed model call, or None if `exc` is not an API error."""
    try:
        import openai
    except ImportError:  # pragma: no cover - langchain-openai depends on it
        return None
    url = endpoint(settings)
    if isinstance(exc, openai.AuthenticationError):
        return ModelError(
            f"the model server at {url} refused the API key (401): check OPENAI_API_KEY"
        )
    if isinstance(exc, openai.APITimeoutError):
        return ModelError(f"the model server at {url} did not answer within {settings.timeout:g} s")
    if isinstance(exc, openai.APIConnectionError):
        return ModelError(f"cannot reach the model server at {url}: {_reason(exc)}")
    if isinstance(exc, openai.NotFoundError):
        return ModelError(f"model '{settings.model}' not found at {url} (404): check --model")
    if isinstance(exc, openai.APIStatusError) and 300 <= exc.status_code < 400:
        # followed for https only: a plain-HTTP server is never left (model/http_clients.py)
        where = " ".join(str(exc.response.headers.get("location", "elsewhere")).split())
        return ModelError(
            f"the model server at {url} redirects ({exc.status_code}) to"
            f" {where[:MESSAGE_CHARS]}: set --base-url to where it leads"
        )
    if isinstance(exc, openai.APIStatusError):
        return ModelError(f"the model server at {url} answered {exc.status_code}: {_message(exc)}")
    if isinstance(exc, openai.OpenAIError):
        return ModelError(f"model call to {url} failed: {exc}")
    return None


MESSAGE_CHARS = 300  # a server's error message is clipped to this, on one line


def _message(exc: BaseException) -> str:
    """The server's own message, on one line (a validation error can be a page long)."""
    body = getattr(exc, "body", None)
    text = str(exc)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            text = str(inner["message"])
        elif isinstance(inner, dict) and inner.get("detail"):
            text = str(inner["detail"])
    text = " ".join(text.split()) or type(exc).__name__
    return text if len(text) <= MESSAGE_CHARS else text[: MESSAGE_CHARS - 1] + "…"


def _reason(exc: BaseException) -> str:
    """The innermost cause of a connection failure, in a few words."""
    while (inner := exc.__cause__ or exc.__context__) is not None:
        exc = inner
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused (is the server running?)"
    return (str(exc) or type(exc).__name__).splitlines()[0]
