"""Settings: defaults, then the config file, then the environment, then flags.

Every key is declared once in FIELDS (with its type, default and environment variable), so
validation, `config show` and config.example.toml all speak about the same list.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field
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


FIELDS: dict[str, Field] = {
    f"{section}.{name}": fld
    for section, entries in {
        "model": {
            "name": Field("model", str, "AGENTCLI_MODEL"),
            "base_url": Field("base_url", str, "OPENAI_BASE_URL"),
            "api_key": Field("api_key", str, "OPENAI_API_KEY"),
            "timeout": Field("timeout", float),
            "max_retries": Field("max_retries", int),
            "stream": Field("stream", bool),
            "temperature": Field("temperature", float),
            "prices": Field("prices", dict),
        },
        "agent": {
            "max_steps": Field("max_steps", int),
            "max_invalid_turns": Field("max_invalid_turns", int),
            "system_prompt": Field("system_prompt", str),
        },
        "storage": {"db": Field("db", str, "AGENTCLI_DB")},
        "approval": {
            "allow": Field("allow", list),
            "deny": Field("deny", list),
            "rules": Field("rules", list),
        },
        "tools": {
            "shell_timeout": Field("shell_timeout", float),
            "max_output_chars": Field("max_output_chars", int),
            "allow_private_urls": Field("allow_private_urls", bool),
            "enabled": Field("enabled", list),
            "disabled": Field("disabled", list),
            "modules": Field("modules", list),
            "env_passthrough": Field("env_passthrough", list),
        },
        "mcp": {"servers": Field("mcp_servers", dict)},
    }.items()
    for name, fld in entries.items()
}

SECRET_KEYS = {"model.api_key"}

# List keys whose items must be strings, and what the items are.
STRING_LISTS = {
    "approval.allow": "tool names",
    "approval.deny": "tool names",
    "tools.enabled": "tool names",
    "tools.disabled": "tool names",
    "tools.modules": "module names or .py file paths",
    "tools.env_passthrough": "environment variable names or globs",
}
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
    stream: bool = True
    temperature: float | None = None
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
    mcp_servers: dict[str, dict[str, Any]] = field(default_factory=dict)
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
    """The effective settings; `overrides` are flag values keyed like FIELDS (None: unset)."""
    explicit = config or os.environ.get("AGENTCLI_CONFIG")
    path = Path(explicit).expanduser() if explicit else default_config_path()
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    if path.exists() or explicit:
        for key, value in _read_file(path).items():
            values[key], sources[key] = value, str(path)
    for key, fld in FIELDS.items():
        if fld.env and os.environ.get(fld.env):
            values[key] = _coerce(key, os.environ[fld.env], fld.env, from_env=True)
            sources[key] = fld.env
    for key, value in (overrides or {}).items():
        if value is not None:
            values[key], sources[key] = value, "flag"
    kwargs = {FIELDS[key].attr: value for key, value in values.items()}
    settings = Settings(config_path=path if path.exists() else None, sources=sources, **kwargs)
    _check_rules(settings.rules, sources.get("approval.rules", "config"))
    _check_servers(settings.mcp_servers, sources.get("mcp.servers", "config"))
    _check_prices(settings.prices, sources.get("model.prices", "config"))
    return settings


def _read_file(path: Path) -> dict[str, Any]:
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
        if not isinstance(table, dict):
            raise ConfigError(f"config file {path}: '{section}' must be a [section]")
        for name, value in table.items():
            key = f"{section}.{name}"
            if key not in FIELDS:
                raise ConfigError(
                    f"config file {path}: unknown key '{key}' (see config.example.toml)"
                )
            flat[key] = _coerce(key, value, str(path))
    return flat


def _coerce(key: str, value: Any, origin: str, from_env: bool = False) -> Any:
    """Check one value against its declared type; environment strings are converted."""
    want = FIELDS[key].type
    if from_env and want is not str:
        try:
            value = {"true": True, "false": False}[value.lower()] if want is bool else want(value)
        except (KeyError, ValueError):
            raise ConfigError(f"{origin}: {value!r} is not a valid {want.__name__}") from None
    ok = isinstance(value, want) or (want is float and isinstance(value, int))
    if not ok or (want is int and isinstance(value, bool)):
        raise ConfigError(f"{origin}: '{key}' must be a {want.__name__}, not {value!r}")
    if key in STRING_LISTS and not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{origin}: '{key}' must be a list of {STRING_LISTS[key]}")
    if want in (int, float) and value < (1 if key.startswith("agent.") else 0):
        raise ConfigError(f"{origin}: '{key}' is out of range: {value!r}")
    return float(value) if want is float else value


def _check_rules(rules: list[Any], origin: str) -> None:
    for i, rule in enumerate(rules, 1):
        if not isinstance(rule, dict) or not isinstance(rule.get("tool"), str):
            raise ConfigError(f"{origin}: approval rule {i} needs a 'tool' name")
        if rule.get("decision") not in ("allow", "ask", "deny"):
            raise ConfigError(f"{origin}: approval rule {i}: decision must be allow, ask or deny")
        unknown = set(rule) - {"tool", "match", "decision"}
        if unknown or not isinstance(rule.get("match", ""), str):
            raise ConfigError(f"{origin}: approval rule {i}: only tool, match and decision")
        if "match" in rule:
            from agentcli.policy import rule_problem

            if problem := rule_problem(rule["tool"], rule["match"]):
                raise ConfigError(f"{origin}: approval rule {i} ({rule['tool']}): {problem}")


def _check_servers(servers: dict[str, Any], origin: str) -> None:
    """Each [mcp.servers.NAME] table: `command` (+ `args`, `env`) or `url` (+ `headers`)."""
    for name, server in servers.items():
        where = f"{origin}: mcp server '{name}'"
        if not SERVER_NAME.fullmatch(name):
            raise ConfigError(f"{where}: the name may only use letters, digits, '_' and '-'")
        if not isinstance(server, dict):
            raise ConfigError(f"{where} must be a [mcp.servers.{name}] table")
        if ("command" in server) == ("url" in server):
            raise ConfigError(f"{where} needs either 'command' (stdio) or 'url' (HTTP)")
        allowed = ("command", "args", "env") if "command" in server else ("url", "headers")
        for key, value in server.items():
            if key not in allowed:
                raise ConfigError(f"{where}: unknown key '{key}' (allowed: {', '.join(allowed)})")
            if not _server_value_ok(value, SERVER_KEYS[key]):
                kind = {str: "a non-empty string", list: "a list of strings"}
                raise ConfigError(
                    f"{where}: '{key}' must be {kind.get(SERVER_KEYS[key], 'a table of strings')}"
                )
        if not server.get("url", "http://").startswith(("http://", "https://")):
            raise ConfigError(f"{where}: 'url' must start with http:// or https://")


def _server_value_ok(value: Any, want: type) -> bool:
    """A non-empty string, a list of strings or a table of strings, as `want` says."""
    if isinstance(value, str):
        return want is str and bool(value)
    if isinstance(value, dict):
        return want is dict and all(isinstance(item, str) for item in value.values())
    return want is list and isinstance(value, list) and all(isinstance(i, str) for i in value)


def _check_prices(prices: dict[str, Any], origin: str) -> None:
    """Each [model.prices."NAME"] table: `input` and `output` in USD per million tokens."""
    for name, price in prices.items():
        ok = isinstance(price, dict) and set(price) == {"input", "output"}
        if not ok or not all(isinstance(v, int | float) and v >= 0 for v in price.values()):
            raise ConfigError(
                f'{origin}: [model.prices."{name}"] needs input and output prices'
                " (USD per million tokens)"
            )
