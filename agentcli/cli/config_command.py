"""`agentcli config init|show`: a commented config file to start from, and the settings in
force with where each came from."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from agentcli.cli.common_options import Common, common_options
from agentcli.config import FIELDS, SECRET_KEYS, Settings, default_config_path
from agentcli.config.database_url import database_label, mask_url
from agentcli.errors import AgentcliError, UsageError
from agentcli.terminal_text import dumps, line

if TYPE_CHECKING:
    pass

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
    from agentcli.session.inspection import sandbox

    return {
        "config_file": str(settings.config_path or default_config_path()),
        "config_file_exists": settings.config_path is not None,
        "database": database_label(settings),
        "workspace": str((workspace or Path.cwd()).resolve()),
        "sandbox": sandbox(settings).label(),
        "settings": {
            key: {
                "value": shown(key, getattr(settings, fld.attr)),
                "source": settings.sources.get(key, "default"),
            }
            for key, fld in FIELDS.items()
        },
    }


def written_text(example: str, target: Path) -> str:
    """The example config as `config init` writes it to `target`: its opening comment says
    where the file is and what reads it, not to copy it (it is where agentcli looks already,
    or where --path, AGENTCLI_CONFIG or --config say)."""
    _, _, body = example.partition("\n\n")  # the example's opening comment ends at a blank
    where = line(str(target))  # a path is one comment line, whatever it holds
    header = [
        f"# agentcli configuration, written by `agentcli config init` to {where}.",
        f"# {_who_reads(target)}",
        '# Every key is optional; the values below are the defaults unless marked "example".',
        "# Precedence: flags > environment > this file > defaults. Unknown keys are an error,",
        "# so a typo never passes silently; every problem is reported at once.",
    ]
    return "\n".join(header) + "\n\n" + body


def _reads_it(target: Path) -> bool:
    """Whether agentcli, run as now, reads the file at `target` with no --config."""
    env = os.environ.get("AGENTCLI_CONFIG")
    return target == (Path(env).expanduser() if env else default_config_path())


def _who_reads(target: Path) -> str:
    """When agentcli reads a file at `target`: always (where it looks), or when named."""
    env = os.environ.get("AGENTCLI_CONFIG")
    if env and Path(env).expanduser() == target:
        return "agentcli reads it while AGENTCLI_CONFIG names it (--config names another)."
    if target == default_config_path():
        return "agentcli reads it from here unless --config or AGENTCLI_CONFIG names another."
    where = line(str(default_config_path()))
    return f"agentcli reads it when --config or AGENTCLI_CONFIG names it (else {where})."


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
    text = written_text(example_text(), target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # it may hold a key
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
    except OSError as exc:
        raise UsageError(f"cannot write {target}: {exc.strerror or exc}") from None
    print(target)
    named = "" if _reads_it(target) else f" --config {shlex.quote(str(target))}"
    print(line(f"edit it, then check the set-up with: agentcli doctor{named}"), file=sys.stderr)


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
    print(line(f"workspace    {report['workspace']}"))
    print(line(f"sandbox      {report['sandbox']}") + "\n")
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
