"""shell: run a bash command in the workspace, under a supervisor, with a timeout.

The command gets a scrubbed environment (tools.environment: a minimal set plus the
context's ``env_passthrough``), never the application's own. It runs under a supervisor
(tools.supervised) that kills whatever it leaves behind, even processes that left its
session, when it ends, times out, is cancelled, or when the application dies, confined by
the context's sandbox (tools.sandbox): a failure the sandbox may have caused gets a note.
"""

from __future__ import annotations

import contextvars
import os
import selectors
import subprocess
import time
from collections.abc import Callable
from dataclasses import asdict
from typing import IO, Any

from .base import Runtime, ToolError, ToolFailed, builtin_tool, context_of
from .context import ToolContext
from .egress import Hosts
from .egress_proxy import NOT_LISTED, EgressProxy
from .egress_questions import Answer, Question
from .environment import tool_environment
from .output import cap_output
from .redacted_stream import RedactedStream
from .sandbox import SandboxUnavailable, denied, proxy_environment
from .supervised import Supervised

MAX_TIMEOUT = 3600.0
TERM_GRACE = 0.5  # seconds between SIGTERM and SIGKILL (the supervisor's)
DRAIN_GRACE = 0.5  # seconds to collect output still in the pipe once the command is over
QUIET_ENV = {"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"}


class _Capture:
    """Keeps the first and the last ``keep`` bytes of a stream and counts the rest."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        room = self.keep - len(self.head)
        self.head += chunk[:room]
        self.tail += chunk[room:] if room > 0 else chunk
        if len(self.tail) > self.keep:
            excess = len(self.tail) - self.keep
            self.dropped += excess
            del self.tail[:excess]

    def text(self) -> str:
        return (self.head + self.tail).decode("utf-8", errors="replace")


def _pump(
    stream: IO[bytes],
    capture: _Capture,
    until: float,
    stop_on_exit: Supervised | None,
    on_chunk: Callable[[bytes], None] | None = None,
    stop: Callable[[], bool] = lambda: False,
) -> None:
    """Read ``stream`` into ``capture`` until EOF, the deadline, ``stop()``, or (if given) the
    process ends."""
    with selectors.DefaultSelector() as selector:
        selector.register(stream, selectors.EVENT_READ)
        while (left := until - time.monotonic()) > 0 and not stop():
            if stop_on_exit is not None and stop_on_exit.poll() is not None:
                return
            if selector.select(timeout=min(left, 0.05)):
                chunk = os.read(stream.fileno(), 65536)
                if not chunk:
                    return
                capture.add(chunk)
                if on_chunk is not None:
                    on_chunk(chunk)


def _proxy(
    process: Supervised, sandbox: Any, context: ToolContext, runtime: Runtime
) -> EgressProxy:
    """The egress proxy for this command's listed hosts, serving the socket its call
    supervisor made in the command's network namespace; each decision told to
    ``context.on_egress``; a host not listed asked of the person through
    ``context.egress_ask``, each question a stream event (``egress_question``)."""
    assert process.listener is not None
    hosts = Hosts.parse(sandbox.hosts)
    told, asking = context.on_egress, context.egress_ask
    ask = None
    if asking is not None:
        # the stream writer reads the run's config from context variables: the proxy's
        # connection threads write through a copy of this thread's (one at a time)
        here = contextvars.copy_context()

        def tell(question: Question) -> None:
            here.run(runtime.stream_writer, {"egress_question": asdict(question)})

        def ask(how: str, host: str, port: int, gone: Callable[[], bool]) -> Answer | None:
            return asking.decide(str(runtime.tool_call_id), how, host, port, tell, gone)

    proxy = EgressProxy(process.listener, hosts, context.allow_private_urls, told, ask)
    return proxy.start()


def _refused(proxy: EgressProxy | None) -> list[str]:
    """One line per host and port the proxy refused the command."""
    if proxy is None:
        return []
    hint = ". If the command needs it, ask the person to list it there."
    return [
        f"[sandbox] {d.line}{hint if d.why == NOT_LISTED else '.'}"
        for d in proxy.decisions
        if not d.allowed
    ]


@builtin_tool
def shell(command: str, runtime: Runtime, timeout: float | None = None) -> str:
    """Run a bash command in the workspace and return its exit code and output.

    stdout and stderr are merged; stdin is empty, so nothing may wait for input. When the
    command ends, processes it left in the background are stopped. Long output is cut in the
    middle.

    Args:
        command: The bash command line to run, e.g. 'pytest -q tests/'.
        timeout: Seconds to wait before the command and its children are killed; the
            default is set by the application.
    """
    context = context_of(runtime)
    limit = context.shell_timeout if timeout is None else timeout
    if not 0 < limit <= MAX_TIMEOUT:
        raise ToolError(f"timeout must be more than 0 and at most {MAX_TIMEOUT:g} seconds")
    capture = _Capture(keep=context.max_output_chars)
    cancel = context.cancel

    def cancelled() -> bool:
        return cancel is not None and cancel.is_set()

    def emit(text: str) -> None:  # the latest output, for a live view of the run
        runtime.stream_writer({"tool_output": text, "tool_call_id": runtime.tool_call_id})

    live = RedactedStream(emit, context.redactor or None)
    hidden = context.redactor.protected if context.redactor is not None else ()
    passed = tool_environment(context.env_passthrough, never=context.env_never, never_values=hidden)
    env = {**passed, **QUIET_ENV}
    sandbox = context.sandbox
    try:
        plan = sandbox.plan(context.workspace, proxy=True) if sandbox is not None else None
    except SandboxUnavailable as exc:
        raise ToolError(str(exc)) from None
    if plan is not None:
        env["TMPDIR"] = plan["writable"][0]  # the private temp folder
    if plan is not None and plan["proxy_port"]:
        env.update(proxy_environment())  # over any the person passes through

    deadline = time.monotonic() + limit
    try:
        process = Supervised(
            ["bash", "-c", command],
            grace=TERM_GRACE,
            cwd=context.workspace,
            env=env,
            on_process=context.on_process,
            sandbox=plan,
        )
    except OSError as exc:
        raise ToolError(f"cannot start bash in the workspace: {exc}") from exc
    proxy = _proxy(process, sandbox, context, runtime) if process.listener is not None else None
    try:
        _pump(process.stdout, capture, deadline, process, on_chunk=live.add, stop=cancelled)
        timed_out = False
        while not cancelled():  # the output may end (EOF) before the process does
            try:
                process.wait(timeout=min(max(deadline - time.monotonic(), 0), 0.05))
                break
            except subprocess.TimeoutExpired:
                if time.monotonic() >= deadline:
                    timed_out = True
                    break
        stopped = cancelled()
        if stopped or timed_out:
            process.stop()  # the supervisor stops the command and all it started
        process.wait()
        process.check_stopped()
        leftovers = process.had_leftovers()
        _pump(process.stdout, capture, time.monotonic() + DRAIN_GRACE, stop_on_exit=None)
        live.add(b"")
        live.flush()
    finally:  # also when interrupted: never leave the command running
        process.close()
        process.stdout.close()
        if proxy is not None:
            proxy.close()
    if stopped:
        status = "interrupted by the user (Ctrl-C): the command and its children were stopped"
    elif timed_out:
        status = f"timed out after {limit:g}s: the command and its child processes were killed"
    else:
        status = f"exit code {process.returncode}"
        if leftovers:
            status += " (background processes it left running were stopped)"
    output = context.redactor(capture.text()) if context.redactor else capture.text()
    body = cap_output(
        output or "(no output)",
        context.max_output_chars,
        keep="ends",
        hint="to see all of it, redirect the output to a file and search that",
        already_cut=capture.dropped,
    )
    note = denied(plan, None if stopped or timed_out else process.returncode, output)
    notes = [*_refused(proxy), *([note] if note else [])]
    result = f"{status}\n{body}" + "".join(f"\n{line}" for line in notes)
    if stopped or timed_out or process.returncode:  # a signal's is negative
        raise ToolFailed(result)  # the same text, with the status "error"
    return result
