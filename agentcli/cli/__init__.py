"""The command line: parse, call the core, render. Errors become one line here and only here."""

from __future__ import annotations

import os
import sys
import traceback
from typing import Annotated

import typer

from agentcli import __version__
from agentcli.cli import chat, gcpolicy, run, setup, threads, toollist
from agentcli.errors import AgentcliError

app = typer.Typer(
    name="agentcli",
    help="A terminal agent that calls tools only with your say-so.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help: Typer's Rich help alone costs ~60 ms at start-up
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.command()(chat.chat)
app.command()(chat.resume)
app.command()(run.run)
app.command()(run.review)
app.add_typer(threads.app, name="threads")
app.command(name="tools")(toollist.tools)
app.add_typer(setup.app, name="config")
app.command()(setup.doctor)


def _version(value: bool) -> None:
    if value:
        print(f"agentcli {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks on errors.")] = False,
) -> None:
    if debug:
        os.environ["AGENTCLI_DEBUG"] = "1"


def main() -> None:
    """Entry point. Typer handles usage errors (exit 2) and Ctrl-C (exit 130); the
    project's errors become one line on stderr with their exit code, here and only here."""
    gcpolicy.starting()
    for stream in (sys.stdout, sys.stderr):  # a locale that cannot encode a mark: never crash
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    try:
        app()
    except SystemExit as exc:
        gcpolicy.ending()
        if exc.code == 130:  # Ctrl-C: what is done is on disk; do not wait for a request in flight
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(130)
        raise
    except AgentcliError as exc:
        _fail(exc, str(exc), exc.exit_code)
    except Exception as exc:  # a bug: still one line, unless --debug
        _fail(exc, f"unexpected {type(exc).__name__}: {exc} (--debug shows where)", 1)


def _fail(exc: BaseException, message: str, code: int) -> None:
    if os.environ.get("AGENTCLI_DEBUG"):
        traceback.print_exception(exc)
    from agentcli.visible import visible

    print(f"agentcli: error: {visible(message)}", file=sys.stderr)
    sys.exit(code)
