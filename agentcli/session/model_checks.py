"""What a session with these settings would find of its model, for `agentcli doctor`'s checks
beyond "the server answers": the context window (or that there is none), the fixed part of
every request against it, and with `--probe` what the server does with a tool
(agent/model/tool_probe.py)."""

from __future__ import annotations

from pathlib import Path

from agentcli.config import Settings
from agentcli.errors import AgentcliError


def window_check(settings: Settings) -> tuple[bool | None, str, int | None]:
    """(ok, detail, window): the configured window, else the one the server reports."""
    if settings.context_window:
        return True, f"{settings.context_window:,} tokens (from [model] context_window)", None
    from agentcli.agent.context.window import probe

    found = (
        probe(settings.base_url, settings.model, settings.api_key) if settings.base_url else None
    )
    if found:
        return True, f"{found:,} tokens (the server says)", found
    return (
        None,
        "none found: the server does not say; set [model] context_window to the server's"
        " (llama-server -c, llama_cpp.server --n_ctx) so that agentcli fits requests to it",
        None,
    )


def fixed_part_check(settings: Settings, workspace: Path, window: int | None) -> tuple[bool, str]:
    """The system prompt and the tools' schemas against the window: what fits, what is left
    out, or the one line saying nothing fits."""
    from agentcli.agent.fixed_part_report import offer_for
    from agentcli.agent.toolset.loading import load_tools

    try:
        tools = [item.tool for item in load_tools(settings, warn=lambda _: None)]
    except AgentcliError as exc:
        return False, str(exc)
    offer = offer_for(settings, tools, workspace, window or settings.context_window or None)
    if not offer.fits:
        return False, offer.too_small()
    return True, offer.summary(len(tools))


def probe_check(settings: Settings) -> tuple[bool, str]:
    """One tiny request with a trivial tool: what the server did with it."""
    from agentcli.agent.model.chat_model import endpoint
    from agentcli.agent.model.tool_probe import describe_result, probe_tools

    result = probe_tools(
        endpoint(settings), settings.model, settings.api_key, settings.timeout,
        settings.tool_choice,
    )  # fmt: skip
    return result.ok, describe_result(result)
