"""The config keys: every key declared once, as a Field (its Settings attribute, type and
environment variable), and the tables the checks read (string lists, fixed choices, the keys
of [models."GLOB"] and [mcp.servers.NAME] tables).

Validation, `config show` and config.example.toml all speak about this one list.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentcli.config.durations import DURATION
from agentcli.policy.approval_modes import MODES as APPROVAL_MODES


@dataclass(frozen=True)
class Field:
    """One config key: the Settings attribute it sets, its type, its environment variable."""

    attr: str
    type: type
    env: str | None = None
    expect: str | None = None  # what a value looks like, for people (else said by type)


# the hook events agentcli runs (Claude Code's names) and the Settings attribute of each
HOOK_EVENTS = {
    "PreToolUse": "pre_tool_use",
    "PostToolUse": "post_tool_use",
    "UserPromptSubmit": "user_prompt_submit",
    "Notification": "notification",
    "Stop": "stop",
}
FRACTION = "a share of the context window, more than 0 and at most 1, e.g. 0.8"
FIELDS: dict[str, Field] = {
    f"{section}.{name}": fld
    for section, entries in {
        "model": {
            "name": Field("model", str, "AGENTCLI_MODEL"),
            "base_url": Field("base_url", str, "OPENAI_BASE_URL"),
            "api_key": Field("api_key", str, "OPENAI_API_KEY"),
            "timeout": Field("timeout", float, expect="a number of seconds, e.g. 60"),
            "max_retries": Field("max_retries", int, expect="a whole number, e.g. 2"),
            "retry_timeouts": Field("retry_timeouts", bool),
            "stream": Field("stream", bool),
            "temperature": Field("temperature", float, expect="a number, e.g. 0.2"),
            "max_tokens": Field(
                "max_tokens", int, expect="a whole number of tokens per answer, e.g. 1024"
            ),
            "tool_choice": Field(
                "tool_choice", str, expect='"auto", "required", "none" or a tool name'
            ),
            "prices": Field("prices", dict, expect='tables like [model.prices."NAME"]'),
            "tool_calls": Field("tool_calls", str, expect='"native", "text" or "auto"'),
            "context_window": Field(
                "context_window", int, expect="a whole number of tokens, e.g. 8192 (0: ask)"
            ),
        },
        "context": {
            "compact": Field("compact", bool),
            "threshold": Field("compact_threshold", float, expect=FRACTION),
            "keep": Field("compact_keep", float, expect=FRACTION),
            "tool_result": Field("tool_result_share", float, expect=FRACTION),
            "reserve": Field("answer_reserve", int, expect="a whole number of tokens, e.g. 1024"),
        },
        "agent": {
            "max_steps": Field("max_steps", int, expect="a whole number of model turns, e.g. 25"),
            "max_invalid_turns": Field("max_invalid_turns", int, expect="a whole number, e.g. 3"),
            "max_repeated_calls": Field(
                "max_repeated_calls", int, expect="a whole number of calls (0: off), e.g. 3"
            ),
            "system_prompt": Field("system_prompt", str),
        },
        "plan": {
            "max_replans": Field(
                "max_replans", int, expect="a whole number of new plans per message, e.g. 3"
            ),
        },
        "storage": {"db": Field("db", str, "AGENTCLI_DB")},
        "approval": {
            "allow": Field("allow", list, expect='a list of tool names, e.g. ["read_file"]'),
            "deny": Field("deny", list, expect='a list of tool names, e.g. ["shell"]'),
            "rules": Field("rules", list, expect="[[approval.rules]] tables"),
            "mode": Field(
                "approval_mode", str, expect='one of "ask", "read", "edit", "auto", "plan"'
            ),
            "read_only": Field(
                "read_only",
                list,
                expect='a list of tool names, e.g. ["docs__search"] (an MCP tool)',
            ),
            "expire_after": Field("expire_after", str, expect=DURATION),
            "on_expire": Field("on_expire", str, expect='"deny" or "keep"'),
        },
        "tools": {
            "shell_timeout": Field("shell_timeout", float, expect="a number of seconds, e.g. 120"),
            "max_output_chars": Field(
                "max_output_chars", int, expect="a whole number of characters, e.g. 30000"
            ),
            "allow_private_urls": Field("allow_private_urls", bool),
            "enabled": Field("enabled", list, expect='a list of tool names, e.g. ["read_file"]'),
            "disabled": Field("disabled", list, expect='a list of tool names, e.g. ["shell"]'),
            "modules": Field(
                "modules",
                list,
                expect='a list of module names or .py file paths, e.g. ["my_tools.py"]',
            ),
            "core": Field("core", list, expect='a list of tool names, e.g. ["read_file"]'),
            "descriptions": Field("descriptions", str, expect='"auto", "full" or "terse"'),
            "env_passthrough": Field(
                "env_passthrough",
                list,
                expect='a list of environment variable names or globs, e.g. ["GIT_*"]',
            ),
        },
        "mcp": {"servers": Field("mcp_servers", dict, expect="[mcp.servers.NAME] tables")},
        "undo": {
            "snapshots": Field("undo_snapshots", bool),
            "max_file_mb": Field(
                "undo_max_file_mb", float, expect="a number of megabytes, e.g. 10"
            ),
        },
        "sandbox": {
            "mode": Field(
                "sandbox_mode", str, expect='one of "workspace-write", "read-only", "off"'
            ),
            "network": Field(
                "sandbox_network",
                bool,
                expect='true, false, or a list of hosts, e.g. ["pypi.org", "*.npmjs.org"]',
            ),
            "writable": Field("sandbox_writable", list, expect='a list of paths, e.g. ["~/.npm"]'),
        },
        "hooks": {  # [[hooks.EVENT]] tables (config/hook_tables.py): never from the workspace
            event: Field(f"hooks_{attr}", list, expect=f"[[hooks.{event}]] tables")
            for event, attr in HOOK_EVENTS.items()
        },
        "notify": {
            "command": Field("notify_command", str, expect="a command line for sh -c"),
            "after": Field("notify_after", float, expect="a number of seconds, e.g. 60"),
            "timeout": Field("notify_timeout", float, expect="a number of seconds, e.g. 10"),
        },
    }.items()
    for name, fld in entries.items()
}

SECRET_KEYS = {"model.api_key"}

# [models."GLOB"] tables set these [model] keys for the models whose name matches the glob
# (every model.* key but the name itself and the price tables).
MODEL_TABLE_KEYS = {
    key.split(".", 1)[1]
    for key in FIELDS
    if key.startswith("model.") and key not in ("model.name", "model.prices")
}

# List keys whose items must be strings.
STRING_LISTS = {
    "approval.allow",
    "approval.deny",
    "approval.read_only",
    "tools.enabled",
    "tools.disabled",
    "tools.modules",
    "tools.core",
    "tools.env_passthrough",
    "sandbox.writable",
}
SANDBOX_MODES = ("read-only", "workspace-write", "off")  # the modes tools/sandbox.py knows
# String keys with a fixed set of values.
CHOICES = {
    "model.tool_calls": ("native", "text", "auto"),
    "tools.descriptions": ("auto", "full", "terse"),
    "sandbox.mode": SANDBOX_MODES,
    "approval.on_expire": ("deny", "keep"),
    "approval.mode": APPROVAL_MODES,
}
# each key of an [mcp.servers.NAME] table and its kind (`timeout`: checks.py checks it)
SERVER_KEYS = {"command": str, "args": list, "env": dict, "url": str, "headers": dict}
SERVER_NAME = re.compile(r"[A-Za-z0-9_-]+")
