"""Settings: defaults, then the config file, then the environment, then flags.

What it holds: the Settings dataclass, load_settings (which reads and checks all four),
for_model (the [models."GLOB"] tables applied for a model), reading the config file, and
where agentcli keeps its files (config_dir, data_dir).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from agentcli.config.checks import (
    BAD,
    check_prices,
    check_rules,
    check_servers,
    coerce,
    did_you_mean,
    shown_value,
)
from agentcli.config.fields import FIELDS, MODEL_TABLE_KEYS
from agentcli.config.hook_tables import hook_tables
from agentcli.errors import ConfigError

DEFAULT_MODEL = "gpt-4o-mini"
POSTGRES_SCHEMES = ("postgresql://", "postgres://")


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
    max_repeated_calls: int = 3  # the same call this often in a turn: told, then stopped
    max_replans: int = 3  # [plan]: new plans after the first, per user message
    system_prompt: str | None = None
    db: str | None = None
    allow: list[str] = field(default_factory=list)
    deny: list[str] = field(default_factory=list)
    rules: list[dict[str, str]] = field(default_factory=list)
    approval_mode: str = "ask"  # ask | read | edit | auto | plan (policy/approval_modes.py)
    read_only: list[str] = field(default_factory=list)  # tools `auto` runs unasked
    expire_after: str | None = None  # a review older than this is... (config/durations.py)
    on_expire: str = "deny"  # ... denied, or kept ("keep"); only with expire_after
    shell_timeout: float = 120.0
    max_output_chars: int = 30_000
    allow_private_urls: bool = False
    enabled: list[str] = field(default_factory=list)
    disabled: list[str] = field(default_factory=list)
    modules: list[str] = field(default_factory=list)
    # what a small context window keeps first, and how tools are described (fixed_part.py)
    core: list[str] = field(default_factory=lambda: ["read_file", "list_dir", "edit_file", "shell"])
    descriptions: str = "auto"  # auto | full | terse
    env_passthrough: list[str] = field(default_factory=list)
    prices: dict[str, dict[str, float]] = field(default_factory=dict)
    context_window: int = 0  # tokens; 0: ask the server (agent/context/window.py)
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
    undo_snapshots: bool = True
    undo_max_file_mb: float = 10.0
    sandbox_mode: str = "workspace-write"
    sandbox_network: bool | list[str] = False  # a list: hosts, through the egress proxy
    sandbox_writable: list[str] = field(default_factory=list)
    # [[hooks.EVENT]] tables, checked (config/hook_tables.py): {"matcher", "command", "timeout"}
    hooks_pre_tool_use: list[dict[str, Any]] = field(default_factory=list)
    hooks_post_tool_use: list[dict[str, Any]] = field(default_factory=list)
    hooks_user_prompt_submit: list[dict[str, Any]] = field(default_factory=list)
    hooks_notification: list[dict[str, Any]] = field(default_factory=list)
    hooks_stop: list[dict[str, Any]] = field(default_factory=list)
    notify_command: str = ""  # run with the pending calls as JSON (session/notify.py)
    notify_after: float = 60.0  # seconds a chat review waits before it rings
    notify_timeout: float = 10.0  # seconds the notify command may take
    config_path: Path | None = None
    sources: dict[str, str] = field(default_factory=dict, compare=False)
    # what is legal but likely a mistake (an allow rule that allows everything): a line each
    warnings: tuple[str, ...] = field(default=(), compare=False)

    @property
    def db_path(self) -> Path:
        """The SQLite file (meaningless when `db_url` is set)."""
        return Path(self.db).expanduser() if self.db else data_dir() / "threads.db"

    @property
    def snapshots_dir(self) -> Path:
        """Where the workspace snapshots are kept: beside the SQLite file, else in the data
        folder."""
        return (data_dir() if self.db_url else self.db_path.parent) / "snapshots"

    @property
    def db_url(self) -> str | None:
        """The postgresql:// URL, when the threads live in PostgreSQL."""
        return self.db if self.db and self.db.startswith(POSTGRES_SCHEMES) else None


def load_settings(
    config: str | Path | None = None,
    overrides: dict[str, Any] | None = None,
    more_problems: Callable[[Settings], list[str] | None] | None = None,
) -> Settings:
    """The effective settings; `overrides` are flag values keyed like FIELDS (None: unset).
    Every problem found is reported at once, in one ConfigError (a line each): with those of
    `more_problems` (checks this package cannot make, such as tool names), given the
    settings as far as they read, when there are any."""
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
            env_value = coerce(key, os.environ[fld.env], fld.env, problems, from_env=True)
            if env_value is not BAD:
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
    check_rules(settings.rules, sources.get("approval.rules", "config"), problems)
    check_servers(settings.mcp_servers, sources.get("mcp.servers", "config"), problems)
    check_prices(settings.prices, sources.get("model.prices", "config"), problems)
    settings = replace(settings, **hook_tables(settings, sources, problems))
    if problems:
        raise ConfigError(*problems, *_more(more_problems, settings))
    origin = sources.get("approval.rules", "config")
    warnings = rule_warnings(settings.rules, origin)
    if settings.sandbox_mode == "read-only" and settings.sandbox_writable:
        warnings.append(
            f"[sandbox] writable in {sources.get('sandbox.writable', 'the config')} is ignored"
            " in read-only mode: confined commands write only in their private temp folder"
        )
    return replace(settings, warnings=tuple(warnings))


def _more(check: Callable[[Settings], list[str] | None] | None, settings: Settings) -> list[str]:
    """The other problems `check` finds in settings that already have some: a value it
    cannot read there (a rule the checks above refused) leaves it to say them later."""
    try:
        return (check(settings) or []) if check else []
    except (KeyError, TypeError, AttributeError, ValueError):
        return []


def rule_warnings(rules: list[dict[str, Any]], origin: str) -> list[str]:
    """One line per allow rule that amounts to allowing everything (policy/allow_all.py)."""
    if not rules:  # the check's program table is not loaded for nothing
        return []
    from agentcli.policy.allow_all import allows_everything

    lines = []
    for number, rule in enumerate(rules, 1):
        why = allows_everything(rule["tool"], rule.get("match"), rule["decision"])
        if why:
            hint = ' (name what you mean, e.g. "python -m pytest *")' if "run" in why else ""
            lines.append(
                f"[[approval.rules]] number {number} in {origin} ({rule['tool']}"
                f" {rule.get('match') or '*'}): {why}{hint}"
            )
    return lines


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
            value = coerce(f"model.{name}", value, where, problems)
            if value is not BAD:
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
            checked = coerce(key, value, str(path), problems)
            if checked is not BAD:
                flat[key] = checked
    return flat
