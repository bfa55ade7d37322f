"""The command line: parse, call the core, render. Errors become one line here and only here."""

from __future__ import annotations

import os
import signal
import sys
import traceback
from types import FrameType
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


STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def _on_stop_signal(signum: int, frame: FrameType | None) -> None:
    """SIGTERM, or SIGHUP (the terminal closed): stop the running tool commands and every
    process they started, then leave with 128 + the signal. The run unwinds as on Ctrl-C,
    so the thread stays resumable (a call cut short is offered again for review)."""
    for other in STOP_SIGNALS:
        signal.signal(other, signal.SIG_IGN)  # one stop is enough
    supervised = sys.modules.get("tools.supervised")  # not loaded: no command ever ran
    if supervised is not None:
        supervised.stop_all()
    raise SystemExit(128 + signum)


def main() -> None:
    """Entry point. Typer handles usage errors (exit 2) and Ctrl-C (exit 130); the
    project's errors become one line on stderr with their exit code, here and only here."""
    gcpolicy.starting()
    for signum in STOP_SIGNALS:
        signal.signal(signum, _on_stop_signal)
    for stream in (sys.stdout, sys.stderr):  # a locale that cannot encode a mark: never crash
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    try:
        app()
    except SystemExit as exc:
        gcpolicy.ending()
        if exc.code in (130, *(128 + s for s in STOP_SIGNALS)):
            # Ctrl-C or a stop signal: what is done is on disk; do not wait for a request in flight
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(int(exc.code))
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
