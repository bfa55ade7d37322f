"""Supervised: a tool command run under tools/supervise.py, so that it dies with its caller.

One supervisor per process, started at the first command (a thread of its own starts it
and lives as long as the process, as PR_SET_PDEATHSIG follows the thread that started
it). Each command gets a call supervisor forked by it: a child subreaper, so whatever the
command leaves behind (background jobs, ``setsid -f``, ``nohup ... &``, double forks) stays
in its tree and is killed when the command ends. Each call has a socket whose other end
only this process holds: when this process exits, however it exits (SIGKILL too), the
call supervisors and the supervisor see EOF and kill everything. ``stop_all()`` is for the
application's SIGTERM/SIGHUP handlers; ``end_tree()`` ends a call supervisor left by an
earlier process.
"""

from __future__ import annotations

import array
import contextlib
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

SUPERVISE = str(Path(__file__).with_name("supervise.py"))
CLOSE_WAIT = 2.0  # seconds for a call supervisor to clean up once its socket is closed

_running: set[Supervised] = set()
_lock = threading.Lock()
_stopping = threading.Event()  # set by stop_all: the application is exiting


class Stopped(BaseException):
    """The application is exiting and stopped this command: what it printed is no result
    (a BaseException, so that no tool node turns it into one and the call stays unfinished,
    to be offered again for review when the thread resumes)."""


class _Supervisor:
    """The process's supervisor: its control socket, and the thread that started it."""

    def __init__(self) -> None:
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.control = mine
        started: list[subprocess.Popen[bytes] | BaseException] = []
        ready = threading.Event()

        def start() -> None:  # the parent thread of the supervisor, for PR_SET_PDEATHSIG
            try:
                started.append(
                    subprocess.Popen(
                        [sys.executable, "-S", "-I", SUPERVISE, str(theirs.fileno())]
                        + [str(os.getpid())],
                        pass_fds=(theirs.fileno(),),
                        start_new_session=True,  # the terminal's Ctrl-C is for agentcli
                        env={},  # never agentcli's: each command gets its own, scrubbed
                        stdin=subprocess.DEVNULL,
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                    )
                )
            except BaseException as exc:
                started.append(exc)
            ready.set()
            threading.Event().wait()

        threading.Thread(target=start, name="agentcli-supervisor", daemon=True).start()
        ready.wait()
        theirs.close()
        if isinstance(started[0], BaseException):
            mine.close()
            raise started[0]
        self.process = started[0]
        answer = mine.recv(200)
        if answer != b"R":
            mine.close()
            why = answer[2:].decode(errors="replace") or "it exited"
            raise OSError(f"the process supervisor did not start: {why}")

    def send(self, call: socket.socket, output: int) -> None:
        fds = array.array("i", [call.fileno(), output])
        self.control.sendmsg([b"C"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])


_supervisor: _Supervisor | None = None


def _send(call: socket.socket, output: int) -> None:
    """Hand a call to the supervisor, starting it (again, if it died) as needed."""
    global _supervisor
    with _lock:
        if _stopping.is_set():
            raise Stopped("the application is exiting: no command starts")
        for attempt in (1, 2):
            if _supervisor is None:
                _supervisor = _Supervisor()
            try:
                _supervisor.send(call, output)
                return
            except OSError:
                _supervisor.control.close()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    _supervisor.process.wait(timeout=CLOSE_WAIT)
                _supervisor = None
                if attempt == 2:
                    raise


def _forget(last: bool) -> None:
    """Drop the supervisor that ended while a call waited to start, so that the next call
    starts a new one; on the ``last`` try, say so."""
    global _supervisor
    with _lock:
        if _supervisor is not None:
            _supervisor.control.close()
            _supervisor = None
    if last:
        raise OSError("the process supervisor ended before the command started")


class Supervised:
    """One command under a call supervisor; its output (stdout and stderr) in ``stdout``.

    ``on_process(pid, start_time)`` is told which process supervises it before the command
    starts; if it raises, the command does not start. ``sandbox`` is a plan of
    tools.sandbox (None: unconfined): the call supervisor confines itself by it before it
    starts the command, or starts nothing (OSError). ``returncode`` is as Popen's: -N if
    a signal N ended the command."""

    def __init__(
        self,
        argv: list[str],
        *,
        grace: float,
        cwd: str | os.PathLike[str],
        env: dict[str, str],
        on_process: Callable[[int, str], None] | None = None,
        sandbox: dict[str, object] | None = None,
    ) -> None:
        self.returncode: int | None = None
        self.layers: list[str] = []  # the sandbox's, as the call supervisor applied them
        # the egress proxy's listening socket, in the command's network namespace: the
        # caller serves it (tools/egress_proxy.py) and closes it
        self.listener: socket.socket | None = None
        self._leftovers = False
        for attempt in (1, 2):
            self._buffer = b""
            self._sock, theirs = socket.socketpair()
            read_end, write_end = os.pipe()
            self.stdout: IO[bytes] = os.fdopen(read_end, "rb", buffering=0)
            try:
                _send(theirs, write_end)
            finally:
                theirs.close()
                os.close(write_end)
            try:
                head = self._line()
                break
            except EOFError:  # a dying supervisor took the call: nothing of it started
                self._sock.close()
                self.stdout.close()
                _forget(attempt == 2)
        try:
            _, pid, started = head.split()
            self.pid, self.start_time = int(pid), started
            if on_process is not None:
                on_process(self.pid, self.start_time)
            order = {
                "argv": argv,
                "cwd": os.fspath(cwd),
                "env": env,
                "grace": grace,
                "sandbox": sandbox,
            }
            self._sock.sendall(json.dumps(order).encode() + b"\n")
            if not (answer := self._line(fds=True)).startswith("R"):
                raise OSError(answer[2:])
            self.layers = answer[2:].split(",") if answer[2:] else []
            if sandbox is not None and sandbox.get("proxy_port") and self.listener is None:
                raise OSError("the confined command's egress proxy socket did not come")
        except EOFError:
            self._sock.close()
            self.stdout.close()
            raise OSError("the process supervisor ended before the command started") from None
        except BaseException:
            self._sock.close()
            self.stdout.close()
            if self.listener is not None:
                self.listener.close()
            raise
        with _lock:
            _running.add(self)

    def _line(self, timeout: float | None = None, fds: bool = False) -> str:
        """The call supervisor's next line ("" at EOF); TimeoutError after ``timeout`` s.
        ``fds``: a socket may come with it (SCM_RIGHTS): kept as ``listener``."""
        self._sock.settimeout(timeout)
        room = socket.CMSG_SPACE(array.array("i").itemsize) if fds else 0
        while b"\n" not in self._buffer:
            chunk, ancillary, _, _ = self._sock.recvmsg(4096, room, socket.MSG_CMSG_CLOEXEC)
            for level, kind, payload in ancillary:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    self._take(payload)
            if not chunk:
                raise EOFError
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line.decode()

    def _take(self, payload: bytes) -> None:
        """Keep the first socket passed, close any other (none is expected)."""
        received = array.array("i")
        received.frombytes(payload[: len(payload) - len(payload) % received.itemsize])
        for fd in received:
            if self.listener is None:
                self.listener = socket.socket(fileno=fd)
            else:
                os.close(fd)

    def wait(self, timeout: float | None = None) -> int:
        """The command's return code, once it and all it started are over; raises
        subprocess.TimeoutExpired after ``timeout`` s."""
        if self.returncode is None:
            try:
                _, code, leftovers = self._line(timeout).split()
                self.returncode, self._leftovers = int(code), leftovers == "1"
            except (TimeoutError, BlockingIOError):
                raise subprocess.TimeoutExpired("supervised command", timeout or 0) from None
            except (EOFError, OSError, ValueError):  # its supervisor was killed
                self.returncode = -signal.SIGKILL
        return self.returncode

    def poll(self) -> int | None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            return self.wait(0)
        return None

    def stop(self) -> None:
        """Ask the call supervisor to end the command and everything it started (SIGTERM,
        then SIGKILL after the grace period)."""
        with contextlib.suppress(OSError):
            self._sock.sendall(b"T")

    def check_stopped(self) -> None:
        """Raise Stopped if the application stopped every command (stop_all)."""
        if _stopping.is_set():
            raise Stopped("the application is exiting: the command was stopped")

    def had_leftovers(self) -> bool:
        """True if, after the command ended, the supervisor had processes left to stop."""
        return self._leftovers

    def close(self) -> None:
        """Make sure nothing is left: the socket's EOF makes the call supervisor, if still
        there, kill its tree at once and exit; if it does not within CLOSE_WAIT s, it gets
        SIGKILL (its supervisor then kills what it leaves)."""
        with _lock:
            _running.discard(self)
        if not _gone(self._sock, CLOSE_WAIT):
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
        self._sock.close()


def _gone(sock: socket.socket, wait: float) -> bool:
    """Shut our side down and wait up to ``wait`` s for the other side to close (POLLHUP)."""
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_WR)
    poll = select.poll()
    poll.register(sock.fileno(), select.POLLHUP)
    deadline = time.monotonic() + wait
    while (left := deadline - time.monotonic()) > 0:
        if poll.poll(left * 1000):  # only POLLHUP, POLLERR or POLLNVAL
            return True
    return False


def stop_all(wait: float = 1.0) -> None:
    """Close every running command's socket, so each call supervisor kills its tree, and
    the supervisor's, and wait up to ``wait`` seconds for them to be done: for signal
    handlers before exiting."""
    _stopping.set()
    with _lock:
        running = list(_running)
        supervisor = _supervisor
    deadline = time.monotonic() + wait
    for item in running:
        _gone(item._sock, max(deadline - time.monotonic(), 0))
    if supervisor is not None:
        with contextlib.suppress(OSError):
            supervisor.control.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(subprocess.TimeoutExpired):
            supervisor.process.wait(timeout=max(deadline - time.monotonic(), 0))
