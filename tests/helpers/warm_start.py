"""A warm start for the tests' `agentcli` runs: a process that has imported what a run
imports, forking a fresh process for each command (the idea of Android's zygote).

A run of the installed `agentcli` spends nearly all its CPU importing LangChain, LangGraph,
LangSmith and the OpenAI SDK (bench/README.md, "suite_cpu.py"); the suite starts it over a
thousand times. This script imports those modules once, then serves requests on a Unix
socket: each request (the command's arguments, environment, folder, and its stdin, stdout
and stderr as file descriptors) gets a forked child that becomes what a cold start would be,
then runs the installed console script (`runpy.run_path` on `.venv/bin/agentcli`, the file
the cold start runs) at the top level, and ends as the interpreter ends (`end`). What differs
from a cold start, and why it does not matter to the tests that use it
(tests/helpers/warm_run.py says which do):

- the modules are imported before the command's environment is set: the variables any
  import reads are noted (`preload`), and a request that sets one of them differently, or
  the interpreter's own settings (PYTHON*, the locale, TZ), is run cold;
- the child is the leader of a new session with no controlling terminal (a cold run under
  `subprocess.run` inherits pytest's): commands run this way have pipes, not a terminal;
- the interpreter's last step, freeing every module and object, is skipped: the exit status,
  the threads joined, `atexit` and the streams' flush are the interpreter's, then the
  process ends. In a child forked from this server that teardown writes to every page the
  two share, and cost about 0.15 s of CPU a command (bench/README.md, "warm_start.py"); what
  it could show (a message or a crash while objects are freed) a cold run shows, and
  `AGENTCLI_TESTS_COLD=1` runs every command cold.

Run as `python tests/helpers/warm_start.py SOCKET`; it prints one line when it serves and
ends when its stdin closes (its pytest worker ended). Standard library only, before the
imports: it must not import the tests' packages into what agentcli sees.
"""

from __future__ import annotations

import array
import contextlib
import fcntl
import gc
import io
import json
import os
import select
import signal
import socket
import struct
import sys
import termios
from typing import NoReturn

# What `agentcli run` and `agentcli chat` import beyond `--help` (python -X importtime)
PRELOAD = (
    "agentcli.cli",
    "agentcli.cli.run_output",
    "agentcli.session.local",
    "agentcli.session.attachments",
    "agentcli.agent.model.compatible_chat",
    "agentcli_tools.registry",
    "langgraph.checkpoint.sqlite",
    "langchain_core.tracers.context",
    "openai.resources.chat.completions.completions",
    "httpcore2",
    "genai_prices",
    "genai_prices.data",  # the price table, read when a turn's cost is counted
    "agentcli.cli.early_prompt",
    "agentcli.agent.toolset.loading",
    # what `run`, `run -y`, `review` and `threads list` still imported in the forked child
    # (python -c: sys.modules after the command, less before)
    "agentcli.cli.thread_claim",
    "agentcli.cli.inbox_view",
    "agentcli.session.setup",
    "agentcli.session.stores",
    "agentcli.session.transcript",
    "agentcli.session.notify",
    "agentcli.session.inbox",
    "agentcli.session.call_lookup",
    "agentcli.session.thread_reading",
    "agentcli.threads.backends",
    "agentcli.threads.sqlite_backend",
    "agentcli.agent.model.http_clients",
    "agentcli.agent.model.prices",
    "agentcli.agent.toolset.async_tools",
    "agentcli.telemetry.attach",
    "agentcli.telemetry.run_trace",
    "agentcli_tools.path_globs",
    "openai.resources.chat.chat",
    "langchain_core.tracers.stdout",
    "langchain_core.messages.block_translators.langchain_v0",
    "typer._click.decorators",
    # a run with MCP servers configured: the SDK's client, a quarter of a second a run
    "agentcli.agent.toolset.mcp.servers",
    "mcp",
    "mcp.client.stdio",
)
HEADER = struct.Struct("!I")


def receive(conn: socket.socket) -> tuple[dict, list[int]]:
    """One request: a length, then that much JSON, with stdin, stdout and stderr attached."""
    fds = array.array("i")
    data, ancillary, _, _ = conn.recvmsg(HEADER.size, socket.CMSG_LEN(3 * fds.itemsize))
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
    (size,) = HEADER.unpack(data)
    body = b""
    while len(body) < size:
        chunk = conn.recv(size - len(body))
        if not chunk:
            raise EOFError("the request ended early")
        body += chunk
    return json.loads(body), list(fds)


def become(request: dict, fds: list[int], conn: socket.socket, listener: socket.socket) -> None:
    """In the forked child: the process a cold start of the command would be (on a terminal:
    the leader of its session, the terminal its controlling one, as pexpect makes it)."""
    os.setsid()
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    if request.get("terminal"):
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    conn.close()
    listener.close()
    reopen_stdio()
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    script = request["argv"][0]
    sys.argv = list(request["argv"])
    sys.path[0] = os.path.dirname(script)


def reopen_stdio() -> None:
    """sys.stdin, stdout and stderr made again over file descriptors 0-2, with the settings
    the interpreter gave this process's (the same start-up environment), as a cold start
    makes them over its own: the old objects hold the server's buffers and seek state."""
    for name, fd, mode in (("stdin", 0, "rb"), ("stdout", 1, "wb"), ("stderr", 2, "wb")):
        old = getattr(sys, name)
        unbuffered = old.write_through and name != "stdin"
        binary = open(fd, mode, buffering=0 if unbuffered else -1, closefd=False)
        new = io.TextIOWrapper(
            binary,
            encoding=old.encoding,
            errors=old.errors,
            newline="\n",
            line_buffering=old.line_buffering or (name != "stdin" and binary.isatty()),
            write_through=old.write_through,
        )
        setattr(sys, name, new)
        setattr(sys, f"__{name}__", new)


def serve(path: str, read: list[str]) -> dict | None:
    """Serve requests until the worker ends. Each gets a child forked from this process,
    which returns here with its request and becomes the command; the client is told its pid,
    then, once this process has reaped it, its wait status and the CPU it (and what it
    waited for) used."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    print(json.dumps({"serving": path, "read at import": read}), flush=True)
    running: dict[int, tuple[int, socket.socket]] = {}  # a pidfd: its command's pid, client
    while True:
        ready, _, _ = select.select([listener, sys.stdin, *running], [], [])
        if sys.stdin in ready:  # the worker closed its end: it has ended
            return None
        for ended in [fd for fd in ready if fd in running]:
            pid, conn = running.pop(ended)
            os.close(ended)
            _, status, usage = os.wait4(pid, 0)
            with contextlib.suppress(OSError):  # the client gave up on it
                conn.sendall(b"%d %.3f\n" % (status, usage.ru_utime + usage.ru_stime))
            conn.close()
        if listener not in ready:
            continue
        conn, _ = listener.accept()
        try:
            request, fds = receive(conn)
        except (OSError, EOFError, ValueError):
            conn.close()
            continue
        pid = os.fork()
        if pid == 0:
            for ended, (_, other) in running.items():
                os.close(ended)
                other.close()
            become(request, fds, conn, listener)
            return request
        for fd in fds:
            os.close(fd)
        with contextlib.suppress(OSError):
            conn.sendall(b"%d\n" % pid)
        running[os.pidfd_open(pid)] = (pid, conn)


class ReadsRecorded(os._Environ):
    """os.environ, noting each variable read and by which file (past os and posixpath)."""

    read: dict[str, str] = {}

    def __getitem__(self, key: str) -> str:
        frame = sys._getframe(1)
        while frame.f_back and frame.f_code.co_filename.endswith(STDLIB_PLUMBING):
            frame = frame.f_back
        self.read.setdefault(key, frame.f_code.co_filename)
        return super().__getitem__(key)


STDLIB_PLUMBING = ("os.py", "<frozen os>", "posixpath.py", "<frozen posixpath>", "abc.py", "abc>")


def warm_caches() -> None:
    """What every command makes first, alike for all, made once here: the command tree
    (agentcli.cli.command), and genai-prices' regular expressions, one a provider, compiled
    on a run's first price lookup (0.02 s), in `re`'s cache of every forked command."""
    import genai_prices

    import agentcli.cli

    agentcli.cli.command()
    try:
        genai_prices.calc_price(genai_prices.Usage(), "warm", provider_api_url="http://127.0.0.1/")
    except LookupError:
        pass


def preload() -> list[str]:
    """Import PRELOAD and warm the caches; the environment variables read meanwhile (but
    sysconfig's HOME, which only decides whether a user base exists at all)."""
    import importlib
    import threading

    plain = os.environ
    os.environ = ReadsRecorded(  # noqa: B003 (the same variables, their reads noted)
        plain._data, plain.encodekey, plain.decodekey, plain.encodevalue, plain.decodevalue
    )
    try:
        for name in PRELOAD:
            importlib.import_module(name)
        warm_caches()
    finally:
        os.environ = plain  # noqa: B003
    if threading.active_count() != 1:  # a fork would copy a thread's locks, not the thread
        sys.exit(f"warm_start: importing started threads: {threading.enumerate()}")
    gc.freeze()  # as agentcli freezes what its start-up made (agentcli/cli/gc_tuning.py)
    read = ReadsRecorded.read
    return sorted(k for k, where in read.items() if not where.endswith("sysconfig.py"))


def main() -> None:
    sys.path[0] = os.path.dirname(sys.executable)  # as the console script has it
    read = preload()
    request = serve(sys.argv[1], read)
    if request is None:
        return
    import runpy

    try:
        runpy.run_path(request["argv"][0], run_name="__main__")
    except BaseException as exc:  # noqa: BLE001 (what the interpreter makes of any of them)
        end(exc)
    end(None)


def end(exc: BaseException | None) -> NoReturn:
    """End as CPython's Py_RunMain and Py_FinalizeEx end a script, up to the teardown: the
    exit status of a SystemExit (its message on stderr), or a traceback and 1; then the
    threads joined, `atexit`, the streams flushed (a failed flush: 120), and an unhandled
    Ctrl-C ends by SIGINT, as the interpreter's own does."""
    import atexit
    import threading

    status = 0
    if isinstance(exc, SystemExit):
        if isinstance(exc.code, int):
            status = exc.code
        elif exc.code is not None:
            print(exc.code, file=sys.stderr)
            status = 1
    elif exc is not None:
        sys.excepthook(type(exc), exc, exc.__traceback__)
        status = 1
    threading._shutdown()  # type: ignore[attr-defined]
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            if not stream.closed:
                stream.flush()
        except Exception:  # noqa: BLE001
            status = 120
    if isinstance(exc, KeyboardInterrupt):
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    os._exit(status & 0xFF)


if __name__ == "__main__":
    main()
