"""Tool names the config and the flags mention, checked against the tools a session has.

A policy matches tool names exactly, so `deny = ["shel"]` would deny nothing: every name in
`[approval] allow/deny`, in `[[approval.rules]]` and in `--approve/--deny` must name a tool
the session would have (a built-in the config keeps, a custom module's tool, an MCP tool
`SERVER__tool`), or it is a problem, said with the closest name. The one exception: a name
`SERVER__...` of a configured MCP server that offered no tools this time (it failed to
start: a warning said so) cannot be checked, and is let through.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from agentcli.config import Settings, did_you_mean, shown_value

MCP_SEPARATOR = "__"


def _unknown(name: str, known: Collection[str], unchecked: Collection[str]) -> bool:
    server, sep, _ = name.partition(MCP_SEPARATOR)
    return name not in known and not (sep and server in unchecked)


def _no_tool(name: str, known: Collection[str]) -> str:
    return f"no tool is named '{name}'{did_you_mean(name, known)}"


def config_name_problems(
    settings: Settings, known: Collection[str], unchecked: Collection[str] = ()
) -> list[str]:
    """A line for each tool name in the approval config that names no tool in `known`;
    `unchecked`: MCP servers whose tools could not be listed."""
    problems = []
    lists = (
        ("approval.allow", settings.allow),
        ("approval.deny", settings.deny),
        ("approval.read_only", settings.read_only),
    )
    for key, names in lists:
        origin = settings.sources.get(key, "config")
        for name in names:
            if _unknown(name, known, unchecked):
                where = f"{key} = {shown_value(names)} in {origin}"
                problems.append(f"{where}: {_no_tool(name, known)}")
    origin = settings.sources.get("approval.rules", "config")
    for i, rule in enumerate(settings.rules, 1):
        name = rule["tool"]
        if _unknown(name, known, unchecked):
            where = f"[[approval.rules]] number {i} in {origin}: tool = {shown_value(name)}"
            problems.append(f"{where}: {_no_tool(name, known)}")
    return problems


def flag_problems(
    known: Collection[str],
    approve: Iterable[str] | None,
    deny: Iterable[str] | None,
    unchecked: Collection[str] = (),
) -> list[str]:
    """A line for each --approve/--deny TOOL that names no tool in `known`."""
    problems = []
    for flag, names in (("--approve", approve), ("--deny", deny)):
        for name in dict.fromkeys(names or ()):
            if _unknown(name, known, unchecked):
                hint = did_you_mean(name, known) or " (agentcli tools lists them)"
                problems.append(f"{flag} {name}: no tool is named '{name}'{hint}")
    return problems


def unlisted_servers(settings: Settings, sources: Iterable[str]) -> set[str]:
    """The configured MCP servers that gave no tools (`sources` as LoadedTool.source)."""
    listed = {source.removeprefix("mcp:") for source in sources if source.startswith("mcp:")}
    return set(settings.mcp_servers) - listed


def unknown_tool(name: str, known: Collection[str], unchecked: Collection[str] = ()) -> str | None:
    """The problem with a tool name a command names (`policy check TOOL`), or None."""
    if not _unknown(name, known, unchecked):
        return None
    hint = "" if did_you_mean(name, known) else " (agentcli tools lists them)"
    return _no_tool(name, known) + hint


def enabled_problems(settings: Settings, builtins: Collection[str]) -> list[str]:
    """A line for each name in `[tools] enabled` that is no built-in tool."""
    origin = settings.sources.get("tools.enabled") or str(settings.config_path or "config")
    where = f"tools.enabled = {shown_value(settings.enabled)} in {origin}"
    return [
        f"{where}: no built-in tool is named '{name}'{did_you_mean(name, builtins)}"
        for name in settings.enabled
        if name not in builtins
    ]


def settings_problems(
    settings: Settings, approve: Iterable[str] | None = None, deny: Iterable[str] | None = None
) -> list[str] | None:
    """Every problem with the tool names in the config (and the flags) that the settings
    alone show, when the tools are built-ins only: their names are known without loading
    anything. None when tool modules or MCP servers must be loaded to know the names (the
    session checks them then, agent/toolset/loading.py)."""
    from agentcli_tools.catalogue import BUILTINS  # names only: no LangChain

    if settings.modules or settings.mcp_servers:
        return None
    problems = enabled_problems(settings, BUILTINS)
    offered = [n for n in settings.enabled if n in BUILTINS] if settings.enabled else [*BUILTINS]
    kept = [name for name in offered if name not in settings.disabled]
    return problems + config_name_problems(settings, offered) + flag_problems(kept, approve, deny)
