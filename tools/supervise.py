"""The supervisor of every tool command: one per application process, started at its first
command, so that no process a command starts outlives it.

    python -S -I supervise.py CONTROL_FD APPLICATION_PID

Run by tools.supervised (standard library only, no imports from this package). It makes
itself a child subreaper (prctl PR_SET_CHILD_SUBREAPER) and keeps one spare call supervisor
forked ahead of time (a Python fork takes milliseconds: off the command's path). The spare
takes the next message on CONTROL_FD, a SOCK_SEQPACKET socket whose other end only the
application holds: it carries two file descriptors (SCM_RIGHTS), a socket for one call and
the write end of the pipe the command's output goes to. The call supervisor, a subreaper
too:

- sends ``P <pid> <start time>`` (field 22 of /proc/<pid>/stat) and waits for the request
  (one JSON line: argv, cwd, env, grace, sandbox), so that the application can record which
  process it is before anything runs; replies ``R <layers>`` once the command runs (the
  sandbox's layers in place, comma-separated, and with it, SCM_RIGHTS, the egress proxy's
  listening socket when the plan has one; ``E <why>`` if it does not run);
- confines itself by the request's sandbox plan (tools/confine.py: namespaces, Landlock and
  seccomp, inherited by the command; or bubblewrap around the command); if that fails,
  nothing runs;
- runs the command with posix_spawn in a process group of its own (so that `kill 0` spares
  the supervisor), stdin /dev/null, stdout and stderr the pipe;
- waits for the first of: the command ends (what it left behind is sent SIGTERM, then
  SIGKILL after the grace period); ``T`` on the socket, or SIGTERM/SIGINT/SIGHUP (stop:
  the same for the whole tree); EOF on the socket (the application is gone or gave up:
  SIGKILL for the whole tree at once);
- sends ``X <return code> <1 if it had leftovers, else 0>`` and exits.

This process ends, SIGKILLing everything below it, when CONTROL_FD hangs up (the
application is gone, however it died) or a stop signal arrives (PR_SET_PDEATHSIG sends
SIGTERM when the application dies). Processes re-parented to it that are no call
supervisor (a command killed its own) are killed as soon as that supervisor is reaped.
"""

import _signal as signal  # the C module: the `signal` wrapper imports enum (slow)
import array
import ctypes
import json
import os
import select
import socket
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
STOPPING = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
BWRAP_SETTLE = 0.2  # seconds
libc = ctypes.CDLL(None, use_errno=True)


def load(name: str):  # type: ignore[no-untyped-def]
    """tools/NAME, next to this file (``-I`` leaves this folder off sys.path)."""
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), name)
    spec = importlib.util.spec_from_file_location(f"agentcli_{name[:-3]}", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


confine = load("confine.py")
process_tree = load("process_tree.py")
children, descendants = process_tree.children, process_tree.descendants


def reap(status: dict[int, int]) -> None:
    """Collect every ended child, its wait status into ``status``."""
    while True:
        try:
            pid, code = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        status[pid] = code


def kill_below(grace: float, spare: set[int] | None = None) -> bool:
    """SIGTERM every process below this one (but the trees of the children in ``spare``),
    SIGKILL those left after ``grace`` s and any that appear after that, until none is
    left. True if there was any."""
    me, spare = os.getpid(), spare or set()
    deadline = time.monotonic() + grace
    termed: set[int] = set()
    any_found = False
    while True:
        reap({})
        pids = [p for c in children(me) if c not in spare for p in (c, *descendants(c))]
        if not pids:
            return any_found
        any_found = True
        late = time.monotonic() >= deadline
        for pid in pids:
            if late or pid not in termed:
                try:
                    os.kill(pid, signal.SIGKILL if late else signal.SIGTERM)
                except ProcessLookupError:
                    pass
                termed.add(pid)
        time.sleep(0.005 if late else 0.02)


def settle(wait: float) -> None:
    """Give the processes below this one up to ``wait`` s to end by themselves: bubblewrap
    reports its command's exit before the PID namespace's init it made has ended."""
    deadline = time.monotonic() + wait
    while children(os.getpid()) and time.monotonic() < deadline:
        reap({})
        time.sleep(0.002)


def program_path(name: str, path: str) -> str:
    """Where ``name`` is on ``path``, as execvp finds it (os.execvpe imports a module:
    too slow between fork and exec)."""
    if "/" in name:
        return name
    for folder in path.split(os.pathsep):
        candidate = os.path.join(folder or ".", name)
        if os.access(candidate, os.X_OK) and not os.path.isdir(candidate):
            return candidate
    return name


def watch_signals() -> tuple[int, list[int]]:
    """Signals wake the poll through a pipe (its read end is returned); a stop signal is
    noted in the list."""
    wake_read, wake_write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    signal.set_wakeup_fd(wake_write)
    stop: list[int] = []
    signal.signal(signal.SIGCHLD, lambda *_: None)  # a handler, so that it wakes the poll
    for signum in STOPPING:
        signal.signal(signum, lambda signum, _: stop.append(signum))
    return wake_read, stop


def drain(fd: int) -> None:
    try:
        while os.read(fd, 512):
            pass
    except BlockingIOError:
        pass


def take_call(control: socket.socket, taken: int) -> None:
    """A spare call supervisor, forked ahead of time (a Python fork is slow: it is off the
    command's path): it becomes a subreaper, takes the next call from CONTROL_FD, tells
    the supervisor (which forks the next spare) and runs it."""
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        return
    wake_read, stop = watch_signals()
    me = f"{os.getpid()} {process_tree.start_time(os.getpid())}"
    room = socket.CMSG_SPACE(2 * array.array("i").itemsize)
    data, ancillary, _, _ = control.recvmsg(1, room, socket.MSG_CMSG_CLOEXEC)
    try:
        os.write(taken, f"{os.getpid()}\n".encode())
    except OSError:  # the supervisor was killed: still run the call, under this subreaper
        pass
    control.close()
    os.close(taken)
    fds = array.array("i")
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
    if data and len(fds) == 2:
        call = socket.socket(fileno=fds[0])
        call.sendall(f"P {me}\n".encode())
        run_call(call, fds[1], wake_read, stop)


def run_call(call: socket.socket, output: int, wake_read: int, stop: list[int]) -> None:
    """One command, from its request to its exit status (see the module's docstring)."""
    request = b""
    while not request.endswith(b"\n"):
        if not (chunk := call.recv(65536)):
            return  # the application gave up before the command started
        request += chunk
    order = json.loads(request)
    argv, env, grace = order["argv"], order["env"], float(order["grace"])
    try:
        os.chdir(order["cwd"])
        argv, env, layers, listener = confine.confine(order.get("sandbox"), argv, env)
        os.chdir(order["cwd"])  # again: a namespace may have put a mount over it
        # posix_spawn (vfork): no second Python fork. Its own process group, so that `kill
        # 0` spares this supervisor; stdin /dev/null; stdout and stderr the pipe. If this
        # supervisor is killed, the one above it kills the command, re-parented to it.
        program = os.posix_spawn(
            program_path(argv[0], env.get("PATH", os.defpath)),
            argv,
            env,
            file_actions=[
                (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                (os.POSIX_SPAWN_DUP2, output, 1),
                (os.POSIX_SPAWN_DUP2, output, 2),
            ],
            setpgroup=0,
            setsigdef=(*STOPPING, signal.SIGCHLD),
        )
    except OSError as exc:
        call.sendall(f"E {exc}\n".encode())
        return
    os.close(output)  # the pipe ends when the command's copies do
    ready = [f"R {','.join(layers)}\n".encode()]
    if listener is None:
        call.sendall(ready[0])
    else:  # the egress proxy's socket goes with the line, to the application that serves it
        fds = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [listener.fileno()]))]
        call.sendmsg(ready, fds)
        listener.close()
    poll = select.poll()
    poll.register(call.fileno(), select.POLLIN)
    poll.register(wake_read, select.POLLIN)
    status: dict[int, int] = {}
    lost = False
    while program not in status and not stop and not lost:
        for fd, _ in poll.poll():
            if fd == wake_read:
                drain(wake_read)
            else:
                order = call.recv(64)
                lost = not order
                stop += [signal.SIGTERM] if b"T" in order else []
        reap(status)
    if not lost and not stop and layers[:1] == ["bubblewrap"]:
        settle(BWRAP_SETTLE)
    leftovers = kill_below(0.0 if lost else grace)
    reap(status)
    if lost:
        return
    code = status.get(program)
    if code is None:
        returncode = -signal.SIGKILL
    elif os.WIFSIGNALED(code):
        returncode = -os.WTERMSIG(code)
    else:
        returncode = os.WEXITSTATUS(code)
    call.sendall(f"X {returncode} {int(leftovers and not stop)}\n".encode())


def serve(control: socket.socket) -> None:
    """Keep one spare call supervisor ready until the application is gone (POLLHUP on
    CONTROL_FD) or a stop signal comes; kill what a killed call supervisor leaves."""
    wake_read, stop = watch_signals()
    taken_read, taken_write = os.pipe2(os.O_CLOEXEC)

    def fork_spare() -> int:
        pid = os.fork()
        if pid == 0:
            os.close(wake_read)
            os.close(taken_read)
            try:
                take_call(control, taken_write)
            finally:
                os._exit(0)
        return pid

    poll = select.poll()
    poll.register(control.fileno(), 0)  # POLLHUP only: the spare reads the calls
    poll.register(wake_read, select.POLLIN)
    poll.register(taken_read, select.POLLIN)
    calls: set[int] = set()
    spare = fork_spare()
    while not stop:
        for fd, _ in poll.poll():
            if fd == control.fileno():
                return
            if fd == wake_read:
                drain(wake_read)
            elif fd == taken_read:
                for line in os.read(taken_read, 4096).split():
                    if int(line) == spare:
                        calls.add(spare)
                        spare = fork_spare()
        ended: dict[int, int] = {}
        reap(ended)
        if spare in ended and not stop:
            spare = fork_spare()
        if ended:  # what a killed call supervisor left is re-parented here
            calls -= ended.keys()
            kill_below(0.0, spare={*calls, spare})


def main() -> None:
    control = socket.socket(fileno=int(sys.argv[1]))
    application = int(sys.argv[2])
    os.set_inheritable(control.fileno(), False)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    # no process of the same user may read this one's memory, environment or descriptors
    # (/proc/PID/mem, environ, fd), nor those of the call supervisors it forks
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    if os.getppid() != application:  # it died before PR_SET_PDEATHSIG
        os._exit(0)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        control.send(b"E cannot become a subreaper")
        os._exit(126)
    control.send(b"R")
    try:
        serve(control)
    finally:
        kill_below(0.0)
        os._exit(0)


if __name__ == "__main__":
    main()
