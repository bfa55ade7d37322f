"""The model's context window: asked of the server, and read from its overflow errors.

Servers that say how big their window is, each in its own place:
- llama.cpp's `llama-server`: GET /props, `default_generation_settings.n_ctx` (or `n_ctx`);
- vLLM: GET /v1/models, `max_model_len` of the model;
- Ollama: POST /api/show, the model's `num_ctx` parameter if it sets one, else Ollama's
  default of 4096 tokens (capped by the model's trained `context_length`).
Others (OpenAI, llama-cpp-python's server, LM Studio) say nothing: the window is then
unknown and nothing is compacted unless `[model] context_window` is set, or the server
answers that a request was too long (see `overflowed`).

The probe is a few short requests with a short timeout, made once per session; any failure
is "unknown", never an error.
"""

from __future__ import annotations

import re
from typing import Any

PROBE_TIMEOUT = 2.0
OLLAMA_DEFAULT = 4096

# How servers word "the request does not fit": OpenAI and vLLM ("maximum context length is
# N tokens"), llama.cpp ("exceeds the available context size"), llama-cpp-python
# ("Requested tokens (N) exceed context window of M"), LM Studio and others ("context length
# ... exceeded", "context overflow").
_OVERFLOW = re.compile(
    r"context[_ ]length[_ ]exceeded|maximum context length|exceeds? (?:the )?(?:available )?"
    r"context (?:size|window)|context window of \d+|context overflow|too many tokens"
    r"|prompt is too long|exceed_context_size",
    re.IGNORECASE,
)
_WINDOW = re.compile(
    r"maximum context length is (\d+)|context window of (\d+)|context size \((\d+)",
    re.IGNORECASE,
)


def probe(base_url: str, model: str, api_key: str | None = None) -> int | None:
    """The window the server at `base_url` reports for `model`, or None."""
    import httpx

    from agentcli.agent.model.http_clients import tls_for

    root = base_url.rstrip("/").removesuffix("/v1")
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    timeout = httpx.Timeout(PROBE_TIMEOUT, connect=1.0)
    with httpx.Client(timeout=timeout, headers=headers, verify=tls_for(root)) as client:
        for ask in (_vllm, _llama_cpp, _ollama):
            try:
                found = ask(client, base_url.rstrip("/"), root, model)
            except (httpx.HTTPError, ValueError, TypeError, KeyError, AttributeError):
                continue
            if isinstance(found, int) and not isinstance(found, bool) and found > 0:
                return found
    return None


def _vllm(client: Any, base: str, root: str, model: str) -> int | None:
    answer = client.get(f"{base}/models")
    if answer.status_code != 200:
        return None
    models = answer.json().get("data") or []
    for entry in models:
        if isinstance(entry, dict) and entry.get("id") == model and "max_model_len" in entry:
            return int(entry["max_model_len"])
    lengths = [e["max_model_len"] for e in models if isinstance(e, dict) and "max_model_len" in e]
    return int(lengths[0]) if len(lengths) == 1 else None


def _llama_cpp(client: Any, base: str, root: str, model: str) -> int | None:
    answer = client.get(f"{root}/props")
    if answer.status_code != 200:
        return None
    props = answer.json()
    settings = props.get("default_generation_settings") or {}
    n_ctx = settings.get("n_ctx") or props.get("n_ctx")
    return int(n_ctx) if n_ctx else None


def _ollama(client: Any, base: str, root: str, model: str) -> int | None:
    answer = client.post(f"{root}/api/show", json={"model": model})
    if answer.status_code != 200:
        return None
    shown = answer.json()
    for line in str(shown.get("parameters") or "").splitlines():
        name, _, value = line.strip().partition(" ")
        if name == "num_ctx" and value.strip().isdigit():
            return int(value.strip())
    info = shown.get("model_info") or {}
    trained = [int(v) for k, v in info.items() if k.endswith(".context_length")]
    if not trained and "model_info" not in shown:
        return None
    return min([OLLAMA_DEFAULT, *trained])


def overflowed(exc: BaseException) -> bool:
    """Whether a failed model call was the server refusing a request too long for it."""
    try:
        import openai
    except ImportError:  # pragma: no cover - langchain-openai depends on it
        return False
    if not isinstance(exc, openai.APIStatusError) or exc.status_code not in (400, 413, 500):
        return False
    body = getattr(exc, "body", None)
    inner = body.get("error", body) if isinstance(body, dict) else None
    if isinstance(inner, dict) and inner.get("code") == "context_length_exceeded":
        return True
    return bool(_OVERFLOW.search(_text(exc)))


def window_in(exc: BaseException) -> int | None:
    """The window an overflow error names, if it names one."""
    body = getattr(exc, "body", None)
    inner = body.get("error", body) if isinstance(body, dict) else None
    if isinstance(inner, dict) and isinstance(inner.get("n_ctx"), int):  # llama.cpp's
        return int(inner["n_ctx"])
    found = _WINDOW.search(_text(exc))
    return int(next(group for group in found.groups() if group)) if found else None


def _text(exc: BaseException) -> str:
    body = getattr(exc, "body", None)
    inner = body.get("error", body) if isinstance(body, dict) else body
    message = inner.get("message") if isinstance(inner, dict) else None
    return f"{message or ''} {exc}"
