"""Settings: defaults, then the config file, then the environment, then flags.

Every key is declared once in FIELDS (with its type, default and environment variable), so
validation, `config show` and config.example.toml all speak about the same list.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from agentcli.errors import ConfigError

DEFAULT_MODEL = "gpt-4o-mini"
POSTGRES_SCHEMES = ("postgresql://", "postgres://")


@dataclass(frozen=True)
class Field:
    """One config key: the Settings attribute it sets, its type, its environment variable."""

    attr: str
    type: type
    env: str | None = None
    expect: str | None = None  # what a value looks like, for people (else said by type)


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
            "system_prompt": Field("system_prompt", str),
        },
        "storage": {"db": Field("db", str, "AGENTCLI_DB")},
        "approval": {
            "allow": Field("allow", list, expect='a list of tool names, e.g. ["read_file"]'),
            "deny": Field("deny", list, expect='a list of tool names, e.g. ["shell"]'),
            "rules": Field("rules", list, expect="[[approval.rules]] tables"),
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
            "env_passthrough": Field(
                "env_passthrough",
                list,
                expect='a list of environment variable names or globs, e.g. ["GIT_*"]',
            ),
        },
        "mcp": {"servers": Field("mcp_servers", dict, expect="[mcp.servers.NAME] tables")},
        "sandbox": {
            "mode": Field(
                "sandbox_mode", str, expect='one of "workspace-write", "read-only", "off"'
            ),
            "network": Field("sandbox_network", bool),
            "writable": Field("sandbox_writable", list, expect='a list of paths, e.g. ["~/.npm"]'),
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
    "tools.enabled",
    "tools.disabled",
    "tools.modules",
    "tools.env_passthrough",
    "sandbox.writable",
}
SANDBOX_MODES = ("read-only", "workspace-write", "off")  # tools.sandbox.MODES
# String keys with a fixed set of values.
CHOICES = {"model.tool_calls": ("native", "text", "auto"), "sandbox.mode": SANDBOX_MODES}
SERVER_KEYS = {"command": str, "args": list, "env": dict, "url": str, "headers": dict}
SERVER_NAME = re.compile(r"[A-Za-z0-9_-]+")


def config_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(base) / "agentcli"


def data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "agentcli"


def default_config_path() -> Path:
    return config_dir() / "config.toml"


@dataclass(frozen=True)
class Settings:
    model: str = DEFAULT_MODEL
    base_url: str | None = None
    api_key: str | None = None
    timeout: float = 60.0
    max_retries: int = 2
    retry_timeouts: bool = False
    stream: bool = True
    temperature: float | None = None
    max_tokens: int | None = None
    tool_choice: str | None = None
    tool_calls: str = "auto"  # native | text | auto (agentcli/agent/text_calls/recovery.py)
    max_steps: int = 25
    max_invalid_turns: int = 3
    system_prompt: str | None = None
    db: str | None = None
    allow: list[str] = field(default_factory=list)
    deny: list[str] = field(default_factory=list)
    rules: list[dict[str, str]] = field(default_factory=list)
    shell_timeout: float = 120.0
    max_output_chars: int = 30_000
    allow_private_urls: bool = False
    enabled: list[str] = field(default_factory=list)
    disabled: list[str] = field(default_factory=list)
    modules: list[str] = field(default_factory=list)
    env_passthrough: list[str] = field(default_factory=list)
    prices: dict[str, dict[str, float]] = field(default_factory=dict)
    context_window: int = 0  # tokens; 0: ask the server (agent/context_window.py)
    compact: bool = True
    compact_threshold: float = 0.8
    compact_keep: float = 0.25
    tool_result_share: float = 0.2
    answer_reserve: int = 1024
    mcp_servers: dict[str, dict[str, Any]] = field(default_factory=dict)
    # [models."GLOB"] tables in file order: (glob, {FIELDS key: value}), and what the keys
    # they set were before any table applied: {FIELDS key: (value, source or None)}
    model_tables: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    untabled: dict[str, tuple[Any, str | None]] = field(default_factory=dict, compare=False)
    sandbox_mode: str = "workspace-write"
    sandbox_network: bool = False
    sandbox_writable: list[str] = field(default_factory=list)
    config_path: Path | None = None
    sources: dict[str, str] = field(default_factory=dict, compare=False)

    @property
    def db_path(self) -> Path:
        """The SQLite file (meaningless when `db_url` is set)."""
        return Path(self.db).expanduser() if self.db else data_dir() / "threads.db"

    @property
    def db_url(self) -> str | None:
        """The postgresql:// URL, when the threads live in PostgreSQL."""
        return self.db if self.db and self.db.startswith(POSTGRES_SCHEMES) else None


def load_settings(
    config: str | Path | None = None, overrides: dict[str, Any] | None = None
) -> Settings:
    """The effective settings; `overrides` are flag values keyed like FIELDS (None: unset).
    Every problem found is reported at once, in one ConfigError (a line each)."""
    explicit = config or os.environ.get("AGENTCLI_CONFIG")
    path = Path(explicit).expanduser() if explicit else default_config_path()
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    problems: list[str] = []
    tables: list[tuple[str, dict[str, Any]]] = []
    if path.exists() or explicit:
        for key, value in _read_file(path, problems, tables).items():
            values[key], sources[key] = value, str(path)
    for key, fld in FIELDS.items():
        if fld.env and os.environ.get(fld.env):
            env_value = _coerce(key, os.environ[fld.env], fld.env, problems, from_env=True)
            if env_value is not _BAD:
                values[key], sources[key] = env_value, fld.env
    for key, value in (overrides or {}).items():
        if value is not None:
            values[key], sources[key] = value, "flag"
    kwargs = {FIELDS[key].attr: value for key, value in values.items()}
    settings = Settings(config_path=path if path.exists() else None, sources=sources, **kwargs)
    if tables:
        untabled = {
            key: (getattr(settings, FIELDS[key].attr), sources.get(key))
            for _, table in tables
            for key in table
        }
        settings = for_model(
            replace(settings, model_tables=tables, untabled=untabled), settings.model
        )
    _check_rules(settings.rules, sources.get("approval.rules", "config"), problems)
    _check_servers(settings.mcp_servers, sources.get("mcp.servers", "config"), problems)
    _check_prices(settings.prices, sources.get("model.prices", "config"), problems)
    if problems:
        raise ConfigError(*problems)
    return settings


_BAD = object()  # a value that failed its check (the problem is recorded)


def for_model(settings: Settings, name: str) -> Settings:
    """`settings` for the model `name`: the [model] values, then those of every
    [models."GLOB"] table whose glob matches the name (fnmatch, case-sensitive), in the
    file's order: where several match, the last one written wins, key by key. A key set by
    the environment or a flag is never changed by a table."""
    changes: dict[str, Any] = {"model": name}
    sources = dict(settings.sources)
    for key, (value, source) in settings.untabled.items():
        changes[FIELDS[key].attr] = value
        if source is None:
            sources.pop(key, None)
        else:
            sources[key] = source
    for glob, table in settings.model_tables:
        if not fnmatchcase(name, glob):
            continue
        for key, value in table.items():
            source = sources.get(key)
            if source == "flag" or (source is not None and source == FIELDS[key].env):
                continue
            changes[FIELDS[key].attr] = value
            sources[key] = f'[models."{glob}"] in {settings.config_path}'
    return replace(settings, sources=sources, **changes)


def _read_models(
    tables: Any, path: Path, problems: list[str], into: list[tuple[str, dict[str, Any]]]
) -> None:
    """The [models."GLOB"] tables: each sets [model] keys for the models it matches."""
    for glob, table in tables.items():
        where = f'[models."{glob}"] in {path}'
        if not isinstance(table, dict):
            problems.append(f"{where}: expected a table of [model] keys")
            continue
        checked: dict[str, Any] = {}
        for name, value in table.items():
            if name not in MODEL_TABLE_KEYS:
                hint = did_you_mean(name, MODEL_TABLE_KEYS) or " (see config.example.toml)"
                problems.append(f"unknown key '{name}' in {where}{hint}")
                continue
            value = _coerce(f"model.{name}", value, where, problems)
            if value is not _BAD:
                checked[f"model.{name}"] = value
        into.append((glob, checked))


def _read_file(
    path: Path, problems: list[str], tables: list[tuple[str, dict[str, Any]]] | None = None
) -> dict[str, Any]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"config file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path} is not valid TOML: {exc}") from None
    flat: dict[str, Any] = {}
    for section, table in data.items():
        if section == "models" and isinstance(table, dict):
            _read_models(table, path, problems, tables if tables is not None else [])
            continue
        if not isinstance(table, dict):
            hint = did_you_mean(section, {key.split(".")[0] for key in FIELDS}, "[{}]")
            problems.append(
                f"{section} = {shown_value(table)} in {path}: expected a [section]{hint}"
            )
            continue
        for name, value in table.items():
            key = f"{section}.{name}"
            if key not in FIELDS:
                hint = did_you_mean(key, FIELDS) or " (see config.example.toml)"
                problems.append(f"unknown key '{key}' in config file {path}{hint}")
                continue
            checked = _coerce(key, value, str(path), problems)
            if checked is not _BAD:
                flat[key] = checked
    return flat


def did_you_mean(name: str, known: Iterable[str], form: str = "'{}'") -> str:
    """` (did you mean 'shell'?)` when a known name is close to `name`, else nothing."""
    import difflib

    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f" (did you mean {form.format(close[0])}?)" if close else ""


def shown_value(value: Any) -> str:
    """A value as it would be written in TOML (near enough), clipped for one line."""
    import json

    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    if isinstance(value, bool):
        text = "true" if value else "false"
    return text if len(text) <= 60 else text[:59] + "…"


# What each kind of value should look like, for the messages (a key's own hint comes first).
EXPECTED_KIND = {
    str: 'a string in quotes, e.g. "text"',
    int: "a whole number, e.g. 3",
    float: "a number, e.g. 1.5",
    bool: "true or false",
    list: 'a list, e.g. ["a", "b"]',
    dict: "a table",
}


def _coerce(key: str, value: Any, origin: str, problems: list[str], from_env: bool = False) -> Any:
    """Check one value against its declared type; environment strings are converted.
    A problem is recorded and _BAD returned when it does not fit."""
    fld = FIELDS[key]
    want = fld.type
    where = (
        f"{origin} = {shown_value(value)}"
        if from_env
        else (f"{key} = {shown_value(value)} in {origin}")
    )
    expected = fld.expect or EXPECTED_KIND[want]
    if from_env and want is not str:
        try:
            value = {"true": True, "false": False}[value.lower()] if want is bool else want(value)
        except (KeyError, ValueError):
            problems.append(f"{where}: expected {expected}")
            return _BAD
    ok = isinstance(value, want) or (want is float and isinstance(value, int))
    if not ok or (want in (int, float) and isinstance(value, bool)):
        problems.append(f"{where}: expected {expected}")
        return _BAD
    if key in STRING_LISTS and not all(isinstance(item, str) for item in value):
        problems.append(f"{where}: expected {expected}")
        return _BAD
    if key == "model.tool_choice" and not re.fullmatch(r"[A-Za-z0-9_.:-]{1,128}", value):
        problems.append(f"{where}: expected {expected}")
        return _BAD
    if key in CHOICES and value not in CHOICES[key]:
        problems.append(f"{where}: expected {expected}")
        return _BAD
    least = 1 if key.startswith("agent.") or key == "model.max_tokens" else 0
    if fld.expect == FRACTION and not 0 < value <= 1:
        problems.append(f"{where}: expected {expected}")
        return _BAD
    if want in (int, float) and value < least:
        problems.append(f"{where}: expected {expected} (at least {least})")
        return _BAD
    return float(value) if want is float else value


def _check_rules(rules: list[Any], origin: str, problems: list[str]) -> None:
    for i, rule in enumerate(rules, 1):
        where = f"[[approval.rules]] number {i} in {origin}"
        if not isinstance(rule, dict) or not isinstance(rule.get("tool"), str):
            problems.append(f'{where}: needs a tool name, e.g. tool = "shell"')
            continue
        if rule.get("decision") not in ("allow", "ask", "deny"):
            got = shown_value(rule.get("decision"))
            problems.append(f"{where}: decision = {got}: expected allow, ask or deny")
        unknown = set(rule) - {"tool", "match", "decision", "sandbox"}
        if unknown:
            names = ", ".join(sorted(unknown))
            problems.append(
                f"{where}: unknown key {names} (a rule has tool, match, decision and sandbox)"
            )
        if "sandbox" in rule and (
            rule["sandbox"] != "off"
            or rule["tool"] != "shell"
            or rule.get("decision") != "allow"
            or not rule.get("match")
        ):
            problems.append(
                f'{where}: sandbox = "off" goes only on a shell allow rule with a match'
                " (it runs the matched commands unconfined)"
            )
        if not isinstance(rule.get("match", ""), str):
            got = shown_value(rule["match"])
            problems.append(f'{where}: match = {got}: expected a string, e.g. "git *"')
        elif "match" in rule:
            from agentcli.policy.rule_subjects import rule_problem

            if problem := rule_problem(rule["tool"], rule["match"]):
                problems.append(f"{where} ({rule['tool']}): {problem}")


def _check_servers(servers: dict[str, Any], origin: str, problems: list[str]) -> None:
    """Each [mcp.servers.NAME] table: `command` (+ `args`, `env`) or `url` (+ `headers`)."""
    for name, server in servers.items():
        where = f"[mcp.servers.{name}] in {origin}"
        if not SERVER_NAME.fullmatch(name):
            problems.append(f"{where}: the name may only use letters, digits, '_' and '-'")
        if not isinstance(server, dict):
            problems.append(f"{where}: expected a [mcp.servers.{name}] table")
            continue
        if ("command" in server) == ("url" in server):
            problems.append(f"{where}: needs either 'command' (stdio) or 'url' (HTTP)")
            continue
        allowed = ("command", "args", "env") if "command" in server else ("url", "headers")
        for key, value in server.items():
            if key not in allowed:
                problems.append(f"{where}: unknown key '{key}' (allowed: {', '.join(allowed)})")
            elif not _server_value_ok(value, SERVER_KEYS[key]):
                kind = {str: "a non-empty string", list: "a list of strings"}
                expected = kind.get(SERVER_KEYS[key], "a table of strings")
                problems.append(f"{where}: {key} = {shown_value(value)}: expected {expected}")
        if not server.get("url", "http://").startswith(("http://", "https://")):
            problems.append(f"{where}: 'url' must start with http:// or https://")


def _server_value_ok(value: Any, want: type) -> bool:
    """A non-empty string, a list of strings or a table of strings, as `want` says."""
    if isinstance(value, str):
        return want is str and bool(value)
    if isinstance(value, dict):
        return want is dict and all(isinstance(item, str) for item in value.values())
    return want is list and isinstance(value, list) and all(isinstance(i, str) for i in value)


def _check_prices(prices: dict[str, Any], origin: str, problems: list[str]) -> None:
    """Each [model.prices."NAME"] table: `input` and `output` in USD per million tokens."""
    for name, price in prices.items():
        ok = isinstance(price, dict) and set(price) == {"input", "output"}
        if not ok or not all(isinstance(v, int | float) and v >= 0 for v in price.values()):
            problems.append(
                f'[model.prices."{name}"] in {origin}: needs input and output prices'
                " (USD per million tokens), e.g. input = 0.15, output = 0.6"
            )
