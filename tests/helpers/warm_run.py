"""Run the installed `agentcli` to its end through a warm start (tests/helpers/warm_start.py):
what `subprocess.run(argv, input=..., capture_output=True, text=True, env=..., cwd=...,
timeout=...)` returns, for a fraction of the CPU.

Each pytest worker starts one warm-start server on first use and its end ends the server.
A command runs cold (a real `subprocess.run`) instead when its environment changes what the
interpreter does at start-up (the PYTHON* variables, the locale, TZ), or when
AGENTCLI_TESTS_COLD is set (`AGENTCLI_TESTS_COLD=1 pytest` runs the whole suite cold: what the
warm start is checked against).
"""

from __future__ import annotations

import array
import atexit
import fcntl
import json
import locale
import os
import select
import selectors
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path
from typing import Any

import pexpect
import ptyprocess

from tests.helpers.pty_spawn import ReapedPty, Spawn
from tests.helpers.waiting import WAIT_S
from tests.helpers.warm_start import HEADER

SERVER = Path(__file__).with_name("warm_start.py")
START_TIMEOUT = 300.0  # importing everything on a machine at load 20


def _read_at_start(key: str) -> bool:
    """Read by the interpreter as it starts, before any import."""
    return key.startswith(("PYTHON", "LC_")) or key in ("LANG", "LANGUAGE", "TZ")


class _Server:
    def __init__(self, env: dict[str, str]) -> None:
        self.folder = tempfile.mkdtemp(prefix="agentcli-warm-")
        self.path = os.path.join(self.folder, "socket")
        self.env = env
        self.process = subprocess.Popen(
            [sys.executable, str(SERVER), self.path],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            cwd=self.folder,
        )
        assert self.process.stdout is not None
        ready = selectors.DefaultSelector()
        ready.register(self.process.stdout, selectors.EVENT_READ)
        line = self.process.stdout.readline() if ready.select(START_TIMEOUT) else b""
        if not line.startswith(b"{"):
            self.process.kill()
            raise RuntimeError(f"the warm-start server did not start ({SERVER})")
        self.process.stdout.close()
        # what the imports read: a command that sets any of these differently runs cold
        self.read_at_import: list[str] = json.loads(line)["read at import"]
        atexit.register(self.stop)

    def same_start(self, env: dict[str, str]) -> bool:
        """Whether a cold start in `env` would import what the server imported, alike."""
        keys = {*self.read_at_import, *filter(_read_at_start, {*env, *self.env})}
        return all(env.get(key) == self.env.get(key) for key in keys)

    def stop(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()  # the server's signal to end
        self.process.wait(timeout=30)


_server: _Server | None = None
cpu_used = 0.0  # by the commands started warm, which getrusage(RUSAGE_CHILDREN) does not see


def warm_run(
    argv: list[str], *, env: dict[str, str], cwd: Path, stdin: str, timeout: float
) -> subprocess.CompletedProcess[str]:
    if warm_allowed(env):
        assert _server is not None
        return _run(_server.path, argv, env, cwd, stdin, timeout)
    return subprocess.run(
        argv, input=stdin, capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout
    )


def _launch(
    path: str, argv: list[str], env: dict[str, str], cwd: Path, fds: list[int], terminal: bool
) -> socket.socket:
    """The command started by the server with `fds` as its stdin, stdout and stderr (closed
    here once sent); the connection then tells its pid, then its wait status."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
        request = {"argv": argv, "env": env, "cwd": str(cwd), "terminal": terminal}
        body = json.dumps(request).encode()
        ancillary = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))]
        conn.sendmsg([HEADER.pack(len(body))], ancillary)
        conn.sendall(body)
    except BaseException:
        conn.close()
        raise
    finally:
        for fd in set(fds):
            os.close(fd)
    return conn


def warm_popen(argv: list[str], *, env: dict[str, str], cwd: Path, session: bool = False) -> Any:
    """subprocess.Popen(argv, env=env, cwd=cwd, stdout=PIPE, stderr=PIPE, text=True,
    start_new_session=session), started warm when warm_run would start it warm (its stdin
    then /dev/null; it leads a session of its own either way): a WarmProcess, as much of
    Popen as the tests use."""
    if warm_allowed(env):
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        nothing = os.open(os.devnull, os.O_RDONLY)
        try:
            process = warm_launch(argv, env=env, cwd=cwd, fds=[nothing, out_w, err_w])
        except BaseException:
            os.close(out_r)
            os.close(err_r)
            raise
        process.take_output(out_r, err_r)
        return process
    pipe = subprocess.PIPE
    return subprocess.Popen(
        argv, env=env, cwd=cwd, stdout=pipe, stderr=pipe, text=True, start_new_session=session
    )


def warm_allowed(env: dict[str, str]) -> bool:
    """Whether a command in `env` starts warm (else it must be started cold)."""
    global _server
    if os.environ.get("AGENTCLI_TESTS_COLD"):
        return False
    if _server is None:
        _server = _Server(dict(os.environ))
    return _server.same_start(env)


def warm_launch(argv: list[str], *, env: dict[str, str], cwd: Path, fds: list[int]) -> Any:
    """The command started warm with `fds` as its stdin, stdout and stderr (closed here):
    a WarmProcess. Only where warm_allowed(env)."""
    assert _server is not None
    return WarmProcess(argv, _launch(_server.path, argv, env, cwd, fds, terminal=False))


class WarmProcess:
    """A command the warm-start server started, seen as subprocess.Popen sees its child: its
    pid comes first over the connection, its wait status once the server has reaped it."""

    def __init__(self, argv: list[str], conn: socket.socket) -> None:
        self.args = argv
        self.conn = conn
        self.told = b""
        self.returncode: int | None = None
        while b"\n" not in self.told:
            self._receive()
        self.pid = int(self.told.split()[0])

    def take_output(self, out: int, err: int) -> None:
        """The read ends of its stdout and stderr pipes, as Popen's `stdout` and `stderr`."""
        encoding = locale.getpreferredencoding(False)
        self.stdout = open(out, encoding=encoding)  # noqa: SIM115 - closed by communicate
        self.stderr = open(err, encoding=encoding)  # noqa: SIM115

    def _receive(self) -> None:
        chunk = self.conn.recv(64)
        if not chunk:
            raise RuntimeError(f"the warm-start server said only {self.told!r}")
        self.told += chunk

    def poll(self) -> int | None:
        if self.returncode is None and self.told.count(b"\n") < 2:
            self.conn.setblocking(False)
            try:
                self._receive()
            except BlockingIOError:
                pass
            finally:
                self.conn.setblocking(True)
        if self.returncode is None and self.told.count(b"\n") >= 2:
            _, status, cpu = self.told.split()
            _count_cpu(cpu)
            self.returncode = os.waitstatus_to_exitcode(int(status))
            self.conn.close()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
            select.select([self.conn], [], [], left)
        return self.returncode

    def send_signal(self, signum: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, signum)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def communicate(self, timeout: float | None = None) -> tuple[str, str]:
        """Its stdout and stderr to their ends, then its exit (as Popen.communicate)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        got: dict[int, bytearray] = {self.stdout.fileno(): bytearray()}
        got[self.stderr.fileno()] = bytearray()
        selector = selectors.DefaultSelector()
        for fd in got:
            selector.register(fd, selectors.EVENT_READ)
        try:
            while selector.get_map():
                left = None if deadline is None else deadline - time.monotonic()
                events = selector.select(left) if left is None or left > 0 else []
                if not events:
                    raise subprocess.TimeoutExpired(self.args, timeout or 0)
                for key, _ in events:
                    chunk = os.read(key.fd, 65536)
                    if chunk:
                        got[key.fd] += chunk
                    else:
                        selector.unregister(key.fd)
        finally:
            selector.close()
        out, err = (_text(data) for data in got.values())
        self.stdout.close()
        self.stderr.close()
        left = None if deadline is None else max(deadline - time.monotonic(), 0.01)
        self.wait(left)
        return out, err


def _run(
    path: str, argv: list[str], env: dict[str, str], cwd: Path, stdin: str, timeout: float
) -> subprocess.CompletedProcess[str]:
    deadline = time.monotonic() + timeout
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    conn = _launch(path, argv, env, cwd, [in_r, out_w, err_w], terminal=False)
    pending = stdin.encode(locale.getpreferredencoding(False))
    told = conn.fileno()  # the command's pid, then its exit code
    got: dict[int, bytearray] = {out_r: bytearray(), err_r: bytearray(), told: bytearray()}
    selector = selectors.DefaultSelector()
    for fd in (out_r, err_r, told):
        selector.register(fd, selectors.EVENT_READ)
    if pending:
        os.set_blocking(in_w, False)
        selector.register(in_w, selectors.EVENT_WRITE)
    else:
        os.close(in_w)
    try:
        while selector.get_map():
            left = deadline - time.monotonic()
            events = selector.select(max(left, 0)) if left > 0 else []
            if not events:
                _kill(got[told])
                raise subprocess.TimeoutExpired(
                    argv, timeout, output=_text(got[out_r]), stderr=_text(got[err_r])
                )
            for key, _ in events:
                fd = key.fd
                if fd == in_w:
                    try:
                        pending = pending[os.write(in_w, pending[:65536]) :]
                    except BrokenPipeError:
                        pending = b""
                    if not pending:
                        selector.unregister(in_w)
                        os.close(in_w)
                    continue
                chunk = os.read(fd, 65536)
                if chunk:
                    got[fd] += chunk
                else:
                    selector.unregister(fd)
    finally:
        selector.close()
        for fd in (out_r, err_r):
            os.close(fd)
        if pending:
            os.close(in_w)
        conn.close()
    lines = bytes(got[told]).split()
    if len(lines) != 3:
        raise RuntimeError(f"the warm-start server reported {lines!r} for {argv}")
    _count_cpu(lines[2])
    code = os.waitstatus_to_exitcode(int(lines[1]))
    return subprocess.CompletedProcess(argv, code, _text(got[out_r]), _text(got[err_r]))


def _count_cpu(seconds: bytes) -> None:
    global cpu_used
    cpu_used += float(seconds)


def _kill(reported: bytearray) -> None:
    """The command (and its process group) killed, as subprocess.run kills one that timed out."""
    lines = bytes(reported).split()
    if lines:
        try:
            os.killpg(int(lines[0]), signal.SIGKILL)
        except ProcessLookupError:
            pass


def _text(data: bytearray) -> str:
    """Bytes as subprocess's text mode reads them: the locale's encoding, newlines universal."""
    text = bytes(data).decode(locale.getpreferredencoding(False))
    return text.replace("\r\n", "\n").replace("\r", "\n")


def warm_spawn(argv: list[str], *, env: dict[str, str], cwd: Path, **options: Any) -> pexpect.spawn:
    """pexpect.spawn(argv[0], argv[1:], env=env, cwd=cwd, **options), started warm when
    warm_run would start it warm: on a terminal of its own, the leader of its session."""
    kind = _WarmSpawn if warm_allowed(env) else Spawn
    return kind(argv[0], argv[1:], env=env, cwd=str(cwd), **options)


class _WarmSpawn(pexpect.spawn):
    """pexpect's spawn whose pty the warm-start server's child has at its other end."""

    def _spawnpty(self, args: list[bytes | str], **kwargs: Any) -> _WarmPty:
        assert _server is not None
        argv = [a.decode() if isinstance(a, bytes) else a for a in args]
        master, slave = os.openpty()
        rows, cols = kwargs.get("dimensions") or (24, 80)
        fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        if not kwargs.get("echo", True):
            attributes = termios.tcgetattr(slave)
            attributes[3] &= ~termios.ECHO
            termios.tcsetattr(slave, termios.TCSANOW, attributes)
        conn = _launch(_server.path, argv, kwargs["env"], kwargs["cwd"], [slave] * 3, True)
        return _WarmPty(conn, master)


class _WarmPty(ReapedPty):
    """ptyprocess's view of a command the warm-start server started: this process is not
    its parent, so its wait status comes over the connection instead of from waitpid."""

    def __init__(self, conn: socket.socket, fd: int) -> None:
        self.conn = conn
        self.told = b""
        while b"\n" not in self.told:
            self._receive()
        super().__init__(int(self.told.split()[0]), fd)

    def _receive(self) -> None:
        chunk = self.conn.recv(64)
        if not chunk:
            raise ptyprocess.PtyProcessError(f"the warm-start server said only {self.told!r}")
        self.told += chunk

    def isalive(self) -> bool:
        if self.terminated:
            return False
        if self.told.count(b"\n") < 2:
            self.conn.setblocking(self.flag_eof)  # as ptyprocess waits: blocking after EOF
            try:
                self._receive()
            except BlockingIOError:
                return True
            finally:
                self.conn.setblocking(True)
            if self.told.count(b"\n") < 2:
                return True
        _, status, cpu = self.told.split()
        _count_cpu(cpu)
        self.status = int(status)
        self.exitstatus = os.waitstatus_to_exitcode(self.status)
        self.signalstatus = None
        if self.exitstatus < 0:
            self.exitstatus, self.signalstatus = None, -self.exitstatus
        self.terminated = True
        self.conn.close()
        return False

    def wait(self) -> int | None:
        while self.told.count(b"\n") < 2:
            self._receive()
        self.isalive()
        return self.exitstatus

    def wait_killed(self) -> None:
        """The status of the killed command: it comes once the server has reaped it."""
        self.conn.settimeout(WAIT_S)
        self.wait()
