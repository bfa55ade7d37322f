"""`doctor --probe`: what a model server does with a tool, found with one tiny request.

Some servers take `tools` and ignore them: llama-cpp-python's `chatml-function-calling`
makes no call unless `tool_choice` is sent, so every task ends "done" with an invented
answer. The probe offers one trivial tool (`PROBE_TOOL`) and asks the model to call it:

1. with the tool sent as usual (`tool_choice` as configured, else none): a structured call,
   a call written as text (what `tool_calls = "auto"` recovers), or none;
2. if none: with `tool_choice` naming the tool, to learn whether forcing it works;
3. if still none: the tool described in the system prompt (`tool_calls = "text"`).

Each is one non-streamed request of at most MAX_TOKENS tokens; the first that gets a call
says which settings work. The answer's text is the model's: only whether it holds a call of
the probe tool is read, never shown.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

PROBE_TOOL = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": "Get the current time.",
        "parameters": {
            "type": "object",
            "properties": {"zone": {"type": "string", "description": "A time zone, e.g. UTC"}},
            "required": ["zone"],
        },
    },
}
ASK = "What time is it in UTC? Call the get_time tool to find out."
MAX_TOKENS = 96

STRUCTURED, AS_TEXT, NONE = "a structured call", "a call written as text", "no call"


@dataclass
class Attempt:
    """One request of the probe: how it was asked and what came back."""

    how: str  # "tools", "tools + tool_choice", "described in the prompt"
    outcome: str  # STRUCTURED, AS_TEXT, NONE, or "error: ..."


@dataclass
class ProbeResult:
    attempts: list[Attempt] = field(default_factory=list)
    settings: str = ""  # the settings that work, as config lines; "" if none does

    @property
    def ok(self) -> bool:
        return bool(self.settings)


def probe_tools(
    base_url: str, model: str, api_key: str | None, timeout: float, tool_choice: str | None
) -> ProbeResult:
    """Ask the server at `base_url` to call the probe tool, in the ways the module says."""
    import httpx

    from agentcli.agent.model.http_clients import tls_for
    from agentcli.agent.text_calls.prompt import describe
    from agentcli.agent.text_calls.recovery import recover

    url = base_url.rstrip("/") + "/chat/completions"
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    name = PROBE_TOOL["function"]["name"]  # type: ignore[index]
    forced = {"type": "function", "function": {"name": name}}
    result = ProbeResult()
    user = {"role": "user", "content": ASK}
    configured = _choice(tool_choice, name)
    asks: list[tuple[str, dict[str, Any], str]] = [
        ("tools" + (f" + tool_choice {tool_choice!r}" if configured else ""),
         {"messages": [user], "tools": [PROBE_TOOL], **configured}, ""),
        ("tools + tool_choice naming the tool",
         {"messages": [user], "tools": [PROBE_TOOL], "tool_choice": forced},
         f'tool_choice = "{name}" (in [model], or "required"; naming a tool forces that tool)'),
        ("the tool described in the prompt",
         {"messages": [{"role": "system", "content": describe([PROBE_TOOL])}, user]},
         'tool_calls = "text"'),
    ]  # fmt: skip
    with httpx.Client(timeout=timeout, headers=headers, verify=tls_for(url)) as client:
        for how, body, setting in asks:
            request = {"model": model, "max_tokens": MAX_TOKENS, "temperature": 0, **body}
            outcome = _outcome(client, url, request, name, recover)
            result.attempts.append(Attempt(how, outcome))
            if outcome == STRUCTURED:
                result.settings = setting or 'tool_calls = "native" or "auto" (the default)'
            elif outcome == AS_TEXT:
                result.settings = setting or 'tool_calls = "auto" (the default) or "text"'
            if result.settings:
                break
    return result


def _choice(tool_choice: str | None, name: str) -> dict[str, Any]:
    """The configured `tool_choice` as the request carries it (a tool name: the probe's)."""
    if not tool_choice:
        return {}
    if tool_choice in ("auto", "required", "none"):
        return {"tool_choice": tool_choice}
    return {"tool_choice": {"type": "function", "function": {"name": name}}}


def _outcome(client: Any, url: str, request: dict[str, Any], name: str, recover: Any) -> str:
    import httpx

    try:
        answer = client.post(url, json=request)
    except httpx.HTTPError as exc:
        return f"error: {type(exc).__name__}"
    if answer.status_code != 200:
        return f"error: HTTP {answer.status_code}"
    try:
        message = answer.json()["choices"][0]["message"]
    except (ValueError, KeyError, IndexError, TypeError):
        return "error: not a chat completion"
    calls = message.get("tool_calls") or []
    if any((call.get("function") or {}).get("name") == name for call in calls):
        return STRUCTURED
    text = message.get("content")
    if isinstance(text, str) and recover(text, [name]) is not None:
        return AS_TEXT
    return NONE


def describe_result(result: ProbeResult) -> str:
    """One line: what each attempt got, and what to set."""
    tried = "; ".join(f"{a.how}: {a.outcome}" for a in result.attempts)
    if result.ok:
        return f"{tried}; works with {result.settings}"
    return f"{tried}; no setting made this model call a tool"
