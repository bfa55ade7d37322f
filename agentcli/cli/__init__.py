"""The command line: parse, call the core, render. Errors become one line here and only here."""

from __future__ import annotations

import functools
import os
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Sequence
from types import FrameType
from typing import Annotated, Any

import typer

from agentcli import __version__
from agentcli.cli import (
    acp_command,
    audit_command,
    chat,
    config_command,
    doctor,
    gc_tuning,
    policy_command,
    review_command,
    run,
    threads,
    tools_command,
    undo_command,
)
from agentcli.errors import AgentcliError, ExitCode, SetupNeeded, exit_code_for

try:  # the Click that Typer runs: its own copy since Typer 0.24
    from typer._click import exceptions as click_errors
except ImportError:  # pragma: no cover - an older Typer on the real Click
    from click import exceptions as click_errors  # type: ignore[no-redef]

# Ctrl-D or Ctrl-C at a yes/no question (the vendored Click raises Typer's Abort)
ABORTS = (typer.Abort, getattr(click_errors, "Abort", typer.Abort))

app = typer.Typer(
    name="agentcli",
    help="A terminal agent that calls tools only with your say-so.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help: Typer's Rich help would import Rich at every start
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.command()(chat.chat)
app.command()(chat.resume)
app.command()(run.run)
app.command()(review_command.review)
app.command()(undo_command.undo)
app.command()(undo_command.diff)
app.add_typer(threads.app, name="threads")
app.add_typer(audit_command.app, name="audit")
app.command(name="tools")(tools_command.tools)
app.add_typer(policy_command.app, name="policy")
app.add_typer(config_command.app, name="config")
app.command()(doctor.doctor)
app.command()(acp_command.acp)


@functools.cache
def command() -> Callable[..., Any]:
    """`app` as the Click command Typer makes of it, made once a process: Typer makes it
    again on every call, reading every command's signature (about 20 ms of CPU)."""
    return typer.main.get_command(app)


def _version(value: bool) -> None:
    if value:
        print(f"agentcli {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
    debug: Annotated[
        bool,
        typer.Option("--debug", help="Show tracebacks on errors (anywhere on the line)."),
    ] = False,
) -> None:
    if debug:
        os.environ["AGENTCLI_DEBUG"] = "1"


def _take_debug(args: list[str]) -> list[str]:
    """`--debug` anywhere on the line (before or after the subcommand, up to a `--`):
    taken out here, so every command accepts it. `--` keeps a literal "--debug" after it."""
    end = args.index("--") if "--" in args else len(args)
    if "--debug" not in args[:end]:
        return args
    os.environ["AGENTCLI_DEBUG"] = "1"
    return [arg for arg in args[:end] if arg != "--debug"] + args[end:]


STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
STOP_GRACE_S = 10.0  # after a stop signal, the process ends by then however far it unwound


def _on_stop_signal(signum: int, frame: FrameType | None) -> None:
    """SIGTERM, or SIGHUP (the terminal closed): stop the running tool commands and every
    process they started, then leave with 128 + the signal. The run unwinds as on Ctrl-C,
    so the thread stays resumable (a call cut short is offered again for review). If the
    unwinding hangs (prompt_toolkit's tasks, cancelled on a terminal that is gone, were
    seen to wait forever), the process ends after STOP_GRACE_S all the same: it would
    otherwise ignore every signal but SIGKILL, and hold its thread."""
    for other in STOP_SIGNALS:
        signal.signal(other, signal.SIG_IGN)  # one stop is enough
    deadline = threading.Timer(STOP_GRACE_S, os._exit, args=(128 + signum,))
    deadline.daemon = True  # never what keeps the process alive
    deadline.start()
    supervised = sys.modules.get("agentcli_tools.supervised")  # not loaded: no command ever ran
    if supervised is not None:
        supervised.stop_all()
    raise SystemExit(128 + signum)


def main() -> None:
    """Entry point. Typer turns Ctrl-C into exit 130; usage errors (exit 2) and the
    project's errors become one line on stderr with their exit code, here and only here."""
    gc_tuning.starting()
    for signum in STOP_SIGNALS:
        signal.signal(signum, _on_stop_signal)
    for stream in (sys.stdout, sys.stderr):  # a locale that cannot encode a mark: never crash
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    sys.argv[1:] = _take_debug(sys.argv[1:])
    try:
        # not standalone: Click's usage errors come here, not as its four-line usage block
        result = command()(standalone_mode=False)
        sys.exit(result if isinstance(result, int) else 0)  # typer.Exit(N) returns N
    except click_errors.NoArgsIsHelpError as exc:  # `agentcli`, `agentcli threads`
        exc.show()
        gc_tuning.ending()
        sys.exit(exc.exit_code)
    except click_errors.UsageError as exc:
        where = exc.ctx.command_path if exc.ctx is not None else "agentcli"
        _fail(exc, [f"{exc.format_message()} (see {where} --help)"], code=exc.exit_code)
    except ABORTS as exc:
        _fail(exc, ["aborted"], code=ExitCode.ERROR)
    except click_errors.ClickException as exc:
        _fail(exc, [exc.format_message()], code=exc.exit_code)
    except SystemExit as exc:
        gc_tuning.ending()
        _flush_telemetry(exc.code)
        if exc.code in (ExitCode.INTERRUPTED, *(128 + s for s in STOP_SIGNALS)):
            # Ctrl-C or a stop signal: what is done is on disk; do not wait for a request in flight
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(int(exc.code))
        raise
    except SetupNeeded as exc:  # the first run: a guide, not an error line
        _fail(exc, exc.lines[:1], after=exc.lines[1:])
    except AgentcliError as exc:  # one line; a config with several problems, one each
        _fail(exc, exc.lines)
    except Exception as exc:  # a bug: still one line, unless --debug
        _fail(exc, [f"unexpected {type(exc).__name__}: {exc} (--debug shows where)"])


def _flush_telemetry(code: object) -> None:
    """Send the last spans and points, if a trace was made (a bounded wait: telemetry/)."""
    attach = sys.modules.get("agentcli.telemetry.attach")  # not loaded: nothing to send
    said = attach.finish(code if isinstance(code, int) else None) if attach else None
    if said:
        from agentcli.cli.common_options import warn

        warn(said)


def _fail(
    exc: BaseException, lines: list[str], after: Sequence[str] = (), code: int | None = None
) -> None:
    """The error's lines on stderr, then exit: with Click's own code for Click's errors,
    else the code errors.exit_code_for maps the error to."""
    from agentcli.session.redaction import current_redactor
    from agentcli.terminal_text import visible

    redact = current_redactor()  # a traceback or a message may quote the key
    if os.environ.get("AGENTCLI_DEBUG") and not isinstance(exc, SetupNeeded):
        sys.stderr.write(redact("".join(traceback.format_exception(exc))))
    for text in lines:
        one_line = " ".join(redact(text).split("\n"))  # each one line, whatever made it
        print(f"agentcli: error: {visible(one_line)}", file=sys.stderr)
    for text in after:
        print(visible(text), file=sys.stderr)
    code = exit_code_for(exc) if code is None else code
    _flush_telemetry(code)
    sys.exit(code)
