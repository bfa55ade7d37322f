"""`agentcli doctor`: each part of the set-up checked (config, key, model server, model,
tools, AGENTS.md, database, MCP logs, the sandbox's layers, versions), one line each, and
the guide when no model server is configured."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from agentcli_tools.plurals import counted

from agentcli import __version__
from agentcli.cli.common_options import Common, common_options
from agentcli.cli.config_command import mask
from agentcli.cli.setup_guide import STEPS, needs_setup
from agentcli.config import Settings, default_config_path, did_you_mean
from agentcli.errors import AgentcliError, ExitCode
from agentcli.session.model_checks import fixed_part_check, probe_check, window_check
from agentcli.ui import make_console

if TYPE_CHECKING:
    from rich.console import Console

SERVER_TIMEOUT_S = 5.0
PACKAGES = ("langgraph", "langchain-core", "langchain-openai")


@dataclass
class Check:
    ok: bool | None  # None: skipped
    name: str
    detail: str


@common_options()
def doctor(
    *,
    common: Common,
    probe: Annotated[
        bool,
        typer.Option(
            "--probe",
            help="Also send the model one tiny request with a trivial tool, and say what the"
            " server did with it and which settings work.",
        ),
    ] = False,
) -> None:
    """Check the set-up: config, tools, API key, model server and model, the context window
    and the fixed part of each request against it, thread database, AGENTS.md, the
    sandbox's layers (a confined command is started); print versions. With no API key and
    no base URL, print the set-up guide.

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
        for problem in exc.lines:
            report(Check(False, "config", problem))
    if settings is not None:
        report(_config_check(settings))
        for check in _tools_checks(settings):
            report(check)
        key = _key_check(settings)
        report(key)
        if key.ok:
            server, models = _server_check(settings)
            report(server)
            tried = server.ok
            report(
                _model_check(settings.model, models) if tried else Check(None, "model", "not tried")
            )
            window = None
            if tried:
                ok, detail, window = window_check(settings)
                report(Check(ok, "context window", detail))
            ok, detail = fixed_part_check(
                settings, (common.workspace or Path.cwd()).resolve(), window
            )
            report(Check(ok, "fixed part", detail))
            if probe and tried:
                ok, detail = probe_check(settings)
                report(Check(ok, "tool calls", detail))
        else:
            report(Check(None, "model server", "not tried"))
        report(_database_check(settings))
        for check in _mcp_log_checks(settings):
            report(check)
    else:
        for name in ("API key", "model server", "database"):
            report(Check(None, name, "skipped: the config did not load"))
    where = (common.workspace or Path.cwd()).resolve()
    is_dir = where.is_dir()
    report(Check(is_dir, "workspace", f"{where}" + ("" if is_dir else " is not a directory")))
    if is_dir:
        report(_agents_md_check(where))
        if settings is not None:
            report(_sandbox_check(settings, where))
    report(_versions_check())
    if settings is not None and needs_setup(settings):
        from agentcli.ui.safe_text import safe

        console.print()
        console.print(safe(STEPS))
    if failed:
        raise typer.Exit(ExitCode.ERROR)


def _print(console: Console, check: Check) -> None:
    from agentcli.ui.safe_text import styled

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


def _server_check(settings: Settings) -> tuple[Check, list[str] | None]:
    """GET {base_url}/models: the cheapest request that proves the server is there; and the
    models it lists (None: it did not say)."""
    import httpx

    from agentcli.session.inspection import model_endpoint

    url = model_endpoint(settings).rstrip("/") + "/models"
    headers = {"Authorization": f"Bearer {settings.api_key}"} if settings.api_key else {}
    timeout = min(settings.timeout, SERVER_TIMEOUT_S)
    try:
        response = httpx.get(url, headers=headers, timeout=timeout)
    except httpx.TimeoutException:
        return Check(False, "model server", f"GET {url}: no answer within {timeout:g} s"), None
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        reason = f"cannot reach {url}: {exc or type(exc).__name__}"
        return Check(False, "model server", reason), None
    status = f"GET {url}: {response.status_code} {response.reason_phrase}".rstrip()
    if response.status_code == 401:
        refused = f"{status}: the API key was refused (OPENAI_API_KEY)"
        return Check(False, "model server", refused), None
    if response.status_code == 404:
        wrong = f"{status}: is the base URL right? (often ends in /v1)"
        return Check(False, "model server", wrong), None
    if not response.is_success:
        return Check(False, "model server", status), None
    models = _model_ids(response)
    count = "" if models is None else f" ({len(models)} model{'s' * (len(models) != 1)})"
    return Check(True, "model server", status + count), models


def _model_ids(response: Any) -> list[str] | None:
    try:
        return [str(item["id"]) for item in response.json()["data"]]
    except (ValueError, KeyError, TypeError):
        return None


def _model_check(model: str, models: list[str] | None) -> Check:
    """Is the configured model among those the server lists?"""
    if models is None:
        return Check(None, "model", f"'{model}': the server did not list the models it serves")
    if model in models:
        return Check(True, "model", f"'{model}' is served")
    hint = did_you_mean(model, models)
    if not hint and models:
        shown = ", ".join(f"'{name}'" for name in models[:5])
        hint = f" (it lists {shown}{', ...' if len(models) > 5 else ''})"
    return Check(
        False, "model", f"'{model}' is not among the models the server lists{hint}: set --model"
    )


def _tools_checks(settings: Settings) -> list[Check]:
    """The tools a session would have, and the tool names the approval config gives."""
    from agentcli.session.inspection import tools as session_tools

    warnings: list[str] = []
    try:
        tools = session_tools(settings, warnings.append)
    except AgentcliError as exc:
        return [Check(False, "tools", problem) for problem in exc.lines]
    names = ", ".join(tool.name for tool in tools)
    found = Check(True, "tools", f"{len(tools)}: {names}")
    return [found, *(Check(None, "tools", warning) for warning in warnings)]


def _sandbox_check(settings: Settings, workspace: Path) -> Check:
    """The layers a confined command really gets here: one is started to find out."""
    from agentcli.session.inspection import sandbox as session_sandbox

    sandbox = session_sandbox(settings)
    if not sandbox.confines:
        return Check(None, "sandbox", "off: commands run unconfined")
    try:
        layers = sandbox.probe(workspace)
    except OSError as exc:
        return Check(False, "sandbox", f"{sandbox.label()}: a confined command cannot start: {exc}")
    missing = [] if "namespaces" in layers or "bubblewrap" in layers else [NO_NAMESPACES]
    return Check(
        True, "sandbox", f"{sandbox.label()}; layers: {' + '.join(layers)}{''.join(missing)}"
    )


NO_NAMESPACES = (
    " (no mount namespace: the kernel refused an unprivileged user namespace, so metadata"
    " outside the workspace is not protected and new entries cannot be made at the top of a"
    " git workspace)"
)


def _agents_md_check(workspace: Path) -> Check:
    """The workspace's AGENTS.md, which the system prompt gets."""
    from agentcli.session.inspection import project_instructions

    path, found, problem, most = project_instructions(workspace)
    if problem is not None:
        return Check(False, path.name, f"{path}: not used: {problem}")
    if found is None:
        return Check(None, path.name, f"none at {path} (project instructions for the model)")
    cut = f"; only the first {most:,} go to the model" if found.cut else ""
    return Check(True, path.name, f"{path} ({found.size:,} bytes{cut}): in the system prompt")


def _database_check(settings: Settings) -> Check:
    """Open the store (as every command does), then write a row and roll it back."""
    from agentcli.session.stores import open_store

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
    return Check(True, "database", f"{where} is writable ({counted(threads, 'thread')})")


def _mcp_log_checks(settings: Settings) -> list[Check]:
    """Where each stdio MCP server's stderr goes (it never reaches the terminal)."""
    from agentcli.session.inspection import mcp_log

    checks = []
    for name, server in settings.mcp_servers.items():
        if "command" not in server:
            continue
        path = mcp_log(name)
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
