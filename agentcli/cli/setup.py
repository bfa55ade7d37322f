"""`agentcli config init|show` and `agentcli doctor`: getting set up without reading source."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from agentcli import __version__
from agentcli.cli.common import (
    Common,
    common_options,
)
from agentcli.config import FIELDS, SECRET_KEYS, Settings, default_config_path
from agentcli.dburl import database_label, mask_url
from agentcli.errors import AgentcliError, UsageError
from agentcli.ui import make_console
from agentcli.visible import dumps, line

if TYPE_CHECKING:
    from rich.console import Console

EXAMPLE = "config.example.toml"  # shipped in the package: a symlink to the repo root's file
SERVER_TIMEOUT_S = 5.0
PACKAGES = ("langgraph", "langchain-core", "langchain-openai")
SHOW_WIDTH = 60  # longer values are clipped in the table (never in --json)

app = typer.Typer(
    help="Write and inspect the configuration.", no_args_is_help=True, rich_markup_mode=None
)


def example_text() -> str:
    """The commented example config, as installed with the package."""
    from importlib.resources import files

    try:
        return files("agentcli").joinpath(EXAMPLE).read_text(encoding="utf-8")
    except OSError:
        raise AgentcliError(
            f"{EXAMPLE} is missing from this installation: reinstall agentcli"
        ) from None


def mask(secret: str) -> str:
    """Enough of a secret to tell which one it is, never the whole of it."""
    return f"{secret[:3]}…{secret[-4:]}" if len(secret) >= 16 else "(set)"


def shown(key: str, value: Any) -> Any:
    """A setting's value as `config show` prints it: secrets masked, MCP headers and env too."""
    if key in SECRET_KEYS and value:
        return mask(str(value))
    if key == "storage.db" and value:
        return mask_url(str(value))
    if key == "mcp.servers" and isinstance(value, dict):
        return {
            name: {
                field: {k: mask(str(v)) for k, v in item.items()}
                if field in ("headers", "env") and isinstance(item, dict)
                else item
                for field, item in server.items()
            }
            for name, server in value.items()
        }
    return value


def describe(settings: Settings, workspace: Path | None) -> dict[str, Any]:
    """Everything `config show` reports, JSON-ready."""
    return {
        "config_file": str(settings.config_path or default_config_path()),
        "config_file_exists": settings.config_path is not None,
        "database": database_label(settings),
        "workspace": str((workspace or Path.cwd()).resolve()),
        "settings": {
            key: {
                "value": shown(key, getattr(settings, fld.attr)),
                "source": settings.sources.get(key, "default"),
            }
            for key, fld in FIELDS.items()
        },
    }


@app.command()
def init(
    force: Annotated[
        bool, typer.Option("--force", "-f", help="Overwrite an existing file.")
    ] = False,
    path: Annotated[
        Path | None,
        typer.Option("--path", help="Where to write it (default: where agentcli looks for it)."),
    ] = None,
) -> None:
    """Write a commented config file (every key, with its default) and print its path."""
    env = os.environ.get("AGENTCLI_CONFIG")
    target = (path or (Path(env) if env else default_config_path())).expanduser()
    if target.is_dir():
        raise UsageError(f"{target} is a directory: give --path a file name")
    if target.exists() and not force:
        raise UsageError(f"{target} already exists: edit it, or pass --force to overwrite it")
    text = example_text()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # it may hold a key
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
    except OSError as exc:
        raise UsageError(f"cannot write {target}: {exc.strerror or exc}") from None
    print(target)
    print("edit it, then check the set-up with: agentcli doctor", file=sys.stderr)


@app.command()
@common_options()
def show(
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object.")] = False,
    *,
    common: Common,
) -> None:
    """Print the effective settings and where each comes from (secrets masked)."""
    report = describe(common.settings(), common.workspace)
    if as_json:
        print(dumps(report, indent=2))
        return
    file = report["config_file"]
    if not report["config_file_exists"]:
        file = f"none (agentcli config init writes {file})"
    print(line(f"config file  {file}") + "\n" + line(f"database     {report['database']}"))
    print(line(f"workspace    {report['workspace']}") + "\n")
    rows = [
        (key, _text(item["value"]), line(item["source"]))
        for key, item in report["settings"].items()
    ]
    key_width = max(len(row[0]) for row in rows)
    value_width = max(len(row[1]) for row in rows)
    for key, value, source in rows:
        print(f"{key:<{key_width}}  {value:<{value_width}}  {source}")


def _text(value: Any) -> str:
    if value is None:
        text = "(unset)"
    elif isinstance(value, str) and value.isprintable() and value.strip() == value and value:
        text = value
    else:
        text = json.dumps(value, ensure_ascii=False)
    text = text if len(text) <= SHOW_WIDTH else text[: SHOW_WIDTH - 1] + "…"
    return line(text)


@dataclass
class Check:
    ok: bool | None  # None: skipped
    name: str
    detail: str


@common_options()
def doctor(
    *,
    common: Common,
) -> None:
    """Check the set-up: config, API key, model server, thread database; print versions.

    Exits 0 if every check passes, 1 if any fails.
    """

    console = make_console(soft_wrap=True)
    failed = False

    def report(check: Check) -> None:
        nonlocal failed
        failed = failed or check.ok is False
        _print(console, check)

    try:
        settings: Settings | None = common.settings()
    except AgentcliError as exc:
        settings = None
        report(Check(False, "config", str(exc)))
    if settings is not None:
        report(_config_check(settings))
        key = _key_check(settings)
        report(key)
        report(_server_check(settings) if key.ok else Check(None, "model server", "not tried"))
        report(_database_check(settings))
        for check in _mcp_log_checks(settings):
            report(check)
    else:
        for name in ("API key", "model server", "database"):
            report(Check(None, name, "skipped: the config did not load"))
    where = (common.workspace or Path.cwd()).resolve()
    is_dir = where.is_dir()
    report(Check(is_dir, "workspace", f"{where}" + ("" if is_dir else " is not a directory")))
    report(_versions_check())
    if failed:
        raise typer.Exit(1)


def _print(console: Console, check: Check) -> None:
    from agentcli.ui.safe import styled

    mark, style = {True: ("✓", "green"), False: ("✗", "bold red"), None: ("-", "dim")}[check.ok]
    console.print(styled((mark, style), " ", (f"{check.name}:", "bold"), " ", check.detail))


def _config_check(settings: Settings) -> Check:
    if settings.config_path is not None:
        return Check(True, "config", str(settings.config_path))
    hint = f"no file at {default_config_path()} (agentcli config init writes one)"
    return Check(True, "config", f"defaults and environment only; {hint}")


def _key_check(settings: Settings) -> Check:
    source = settings.sources.get("model.api_key", "default")
    if settings.api_key:
        return Check(True, "API key", f"{mask(settings.api_key)} from {source}")
    if settings.base_url:
        return Check(
            True, "API key", f"none (fine for servers that need none: {settings.base_url})"
        )
    return Check(
        False,
        "API key",
        "none for the OpenAI API: set OPENAI_API_KEY, or point --base-url at an "
        "OpenAI-compatible server",
    )


def _server_check(settings: Settings) -> Check:
    """GET {base_url}/models: the cheapest request that proves the server is there."""
    import httpx

    from agentcli.model import endpoint

    url = endpoint(settings).rstrip("/") + "/models"
    headers = {"Authorization": f"Bearer {settings.api_key}"} if settings.api_key else {}
    timeout = min(settings.timeout, SERVER_TIMEOUT_S)
    try:
        response = httpx.get(url, headers=headers, timeout=timeout)
    except httpx.TimeoutException:
        return Check(False, "model server", f"GET {url}: no answer within {timeout:g} s")
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        return Check(False, "model server", f"cannot reach {url}: {exc or type(exc).__name__}")
    status = f"GET {url}: {response.status_code} {response.reason_phrase}".rstrip()
    if response.status_code == 401:
        return Check(False, "model server", f"{status}: the API key was refused (OPENAI_API_KEY)")
    if response.status_code == 404:
        return Check(False, "model server", f"{status}: is the base URL right? (often ends in /v1)")
    if not response.is_success:
        return Check(False, "model server", status)
    return Check(True, "model server", status + _models_note(response, settings.model))


def _models_note(response: Any, model: str) -> str:
    try:
        ids = [item["id"] for item in response.json()["data"]]
    except (ValueError, KeyError, TypeError):
        return ""
    among = "among them" if model in ids else "not listed"
    return f" ({len(ids)} model{'s' * (len(ids) != 1)}; '{model}' {among})"


def _database_check(settings: Settings) -> Check:
    """Open the store (as every command does), then write a row and roll it back."""
    from agentcli.store import open_store

    try:
        store = open_store(settings)
    except AgentcliError as exc:
        return Check(False, "database", str(exc))
    try:
        threads = store.check()
    except AgentcliError as exc:
        return Check(False, "database", str(exc))
    finally:
        store.close()
    where = store.location
    return Check(True, "database", f"{where} is writable ({threads} thread{'s' * (threads != 1)})")


def _mcp_log_checks(settings: Settings) -> list[Check]:
    """Where each stdio MCP server's stderr goes (it never reaches the terminal)."""
    from agentcli.mcplog import log_path

    checks = []
    for name, server in settings.mcp_servers.items():
        if "command" not in server:
            continue
        path = log_path(name)
        size = f"{path.stat().st_size:,} bytes" if path.is_file() else "not written yet"
        checks.append(Check(True, f"MCP server '{name}' log", f"stderr goes to {path} ({size})"))
    return checks


def _versions_check() -> Check:
    import platform
    from importlib.metadata import PackageNotFoundError, version

    parts = [f"agentcli {__version__}", f"Python {platform.python_version()}"]
    missing = []
    for name in PACKAGES:
        try:
            parts.append(f"{name} {version(name)}")
        except PackageNotFoundError:
            missing.append(name)
    if missing:
        return Check(False, "versions", f"not installed: {', '.join(missing)}; " + ", ".join(parts))
    return Check(True, "versions", ", ".join(parts))
