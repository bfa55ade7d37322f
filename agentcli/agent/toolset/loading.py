"""The tools a session has: the built-ins the config keeps, custom modules' tools, MCP tools.

Config `[tools]`: `enabled` (only these built-ins, if non-empty), `disabled` (names removed,
whatever their source) and `modules` (Python modules, or .py files relative to the config
file's folder); `[mcp.servers.NAME]` tables add MCP servers' tools as `NAME__tool`.
A module that fails to import, or two tools with one name, is a ConfigError; an MCP server
that fails is a warning and the other tools still load.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Protocol, TypeVar

from agentcli_tools.catalogue import BUILTINS, select

from agentcli.agent.toolset.tool_names import (
    config_name_problems,
    enabled_problems,
    unlisted_servers,
)
from agentcli.config import Settings, did_you_mean
from agentcli.errors import ConfigError

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

Warn = Callable[[str], None]


class _Named(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def source(self) -> str: ...


Item = TypeVar("Item", bound=_Named)


@dataclass(frozen=True)
class ToolEntry:
    """A line of `agentcli tools`: a tool's name, where it comes from, what it does."""

    name: str
    source: str
    summary: str


def list_tools(settings: Settings, *, warn: Warn) -> list[ToolEntry]:
    """The tools `load_tools` would give, described. Built-ins come from the catalogue, so
    with no modules or MCP servers configured this imports no LangChain."""
    if settings.modules or settings.mcp_servers:
        return [
            ToolEntry(
                item.name,
                item.source,
                BUILTINS.get(item.name, "")
                if item.source == "builtin"
                else _first_line(item.tool.description),
            )
            for item in load_tools(settings, warn=warn)
        ]
    entries = [ToolEntry(name, "builtin", BUILTINS[name]) for name in _builtin_names(settings)]
    return _checked(entries, settings, warn)


def _first_line(text: str | None) -> str:
    lines = (text or "").strip().splitlines()
    return lines[0] if lines else ""


def _builtin_names(settings: Settings) -> list[str]:
    try:
        return select(settings.enabled or None)
    except ValueError:
        raise ConfigError(*enabled_problems(settings, BUILTINS)) from None


@dataclass(frozen=True)
class LoadedTool:
    """A tool and where it came from: "builtin", "module:ENTRY" or "mcp:SERVER"."""

    tool: BaseTool
    source: str

    @property
    def name(self) -> str:
        return self.tool.name


def load_tools(settings: Settings, *, warn: Warn) -> list[LoadedTool]:
    """Every tool a session with these settings offers the model, in a stable order."""
    from agentcli_tools.registry import BUILTIN_TOOLS

    from agentcli.agent.toolset.async_tools import sync_tool

    found = [(BUILTIN_TOOLS[name], "builtin") for name in _builtin_names(settings)]
    for entry in settings.modules:
        module = _import(entry, settings)
        tools = _tools_of(module, entry, settings)
        if not tools:
            warn(f"tools.modules: {entry!r} defines no LangChain tools")
        found += [(tool, f"module:{entry}") for tool in tools]
    if settings.mcp_servers:
        from agentcli.agent.secrets import tools_environment
        from agentcli.agent.toolset.mcp.servers import load_servers
        from agentcli.agent.toolset.sandboxing import sandbox_of

        env = tools_environment(settings)
        sandbox = sandbox_of(settings)
        servers = load_servers(settings.mcp_servers, settings.max_output_chars, warn, env, sandbox)
        found += [(tool, f"mcp:{server}") for server, tool in servers]
    seen: set[int] = set()  # a module may re-export a tool already loaded: the same object
    loaded = []
    for tool, source in found:
        if id(tool) not in seen:
            seen.add(id(tool))
            loaded.append(LoadedTool(sync_tool(tool), source))
    return _checked(loaded, settings, warn)


def _checked(loaded: list[Item], settings: Settings, warn: Warn) -> list[Item]:
    """The tools not disabled; two with one name, or a tool name in the approval config
    that names none of them, are a ConfigError."""
    names = {item.name for item in loaded}
    unchecked = unlisted_servers(settings, (item.source for item in loaded))
    if problems := config_name_problems(settings, names, unchecked):
        raise ConfigError(*problems)
    for name in settings.disabled:
        if name not in names and name.split("__")[0] not in settings.mcp_servers:
            warn(f"tools.disabled: no tool is named {name!r}{did_you_mean(name, names)}")
    kept: dict[str, Item] = {}
    for item in loaded:
        if item.name in settings.disabled:
            continue
        if first := kept.get(item.name):
            builtin = first.source == "builtin"
            hint = " or leave the built-in out of 'tools.enabled'" if builtin else ""
            raise ConfigError(
                f"{_origin(settings, 'tools.modules')}: two tools are named {item.name!r}"
                f" ({first.source} and {item.source}): rename one{hint}"
            )
        kept[item.name] = item
    return list(kept.values())


def _import(entry: str, settings: Settings) -> ModuleType:
    """The module `entry` names: an importable module name, or a .py file's path."""
    is_path = entry.endswith(".py") or "/" in entry or os.sep in entry
    try:
        if not is_path:
            return importlib.import_module(entry)
        base = settings.config_path.parent if settings.config_path else Path.cwd()
        path = (base / Path(entry).expanduser()).resolve()
        if not path.is_file():
            raise FileNotFoundError(f"no such file {path}")
        import hashlib

        digest = hashlib.sha1(str(path).encode()).hexdigest()[:8]
        name = f"_agentcli_tools_{path.stem}_{digest}"
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {path} as a Python module")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # what dataclasses and pickling expect of a module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
        return module
    except Exception as exc:
        reason = " ".join(str(exc).split()) or "no message"
        raise ConfigError(
            f"{_origin(settings, 'tools.modules')}: 'tools.modules': cannot import {entry!r}:"
            f" {type(exc).__name__}: {reason}"
        ) from exc


def _tools_of(module: ModuleType, entry: str, settings: Settings) -> list[BaseTool]:
    """The module's TOOLS list if it has one, else every module-level LangChain tool."""
    from langchain_core.tools import BaseTool

    listed = getattr(module, "TOOLS", None)
    if listed is None:
        return [value for value in vars(module).values() if isinstance(value, BaseTool)]
    if not isinstance(listed, list | tuple) or not all(isinstance(t, BaseTool) for t in listed):
        raise ConfigError(
            f"{_origin(settings, 'tools.modules')}: 'tools.modules': {entry!r} has a TOOLS"
            " that is not a list of LangChain tools"
        )
    return list(listed)


def _origin(settings: Settings, key: str) -> str:
    """Where a key's value came from, for error messages: the config file, usually."""
    return settings.sources.get(key) or str(settings.config_path or "config")
