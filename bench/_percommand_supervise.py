"""The per-command supervisor as it was before the long-lived one (tools/supervise.py at
550afac), kept unchanged below this docstring as bench/toolstart.py's baseline: one Python
start per command.

    python -S -I _percommand_supervise.py LIFELINE_FD GRACE -- PROGRAM [ARGS...]
"""

import _signal as signal  # the C module: the `signal` wrapper imports enum (slow)
import ctypes
import os
import select
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
PR_SET_PDEATHSIG = 1
STOPPING = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def descendants(root: int) -> list[int]:
    """Every live process below ``root``, read from /proc/PID/task/TID/children."""
    found: list[int] = []
    todo = [root]
    while todo:
        pid = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tasks:
            try:
                with open(f"/proc/{pid}/task/{tid}/children") as file:
                    children = [int(c) for c in file.read().split()]
            except OSError:
                continue
            found += children
            todo += children
    return found


def reap(program: int, status: list[int]) -> None:
    """Collect every ended child; PROGRAM's wait status goes into ``status``."""
    while True:
        try:
            pid, code = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        if pid == program:
            status.append(code)


def kill_tree(program: int, status: list[int], grace: float) -> bool:
    """SIGTERM every descendant, SIGKILL those left after ``grace`` s (and any that appear
    after that), until none is left. True if there was any."""
    me = os.getpid()
    deadline = time.monotonic() + grace
    termed: set[int] = set()
    any_found = False
    while True:
        reap(program, status)
        pids = descendants(me)
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


def main() -> None:
    lifeline, grace, argv = int(sys.argv[1]), float(sys.argv[2]), sys.argv[4:]
    os.set_inheritable(lifeline, False)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.stderr.write("agentcli supervisor: cannot become a subreaper; not running\n")
        os._exit(126)
    wake_read, wake_write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    signal.set_wakeup_fd(wake_write)
    stop: list[int] = []
    signal.signal(signal.SIGCHLD, lambda *_: None)  # a handler, so that it wakes the poll
    for signum in STOPPING:
        signal.signal(signum, lambda signum, _: stop.append(signum))
    program = os.fork()
    if program == 0:
        # its own process group, so that `kill 0` in the command spares the supervisor; and
        # killed if the supervisor is (kill -9 $PPID), though not what it started then
        os.setpgid(0, 0)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        signal.set_wakeup_fd(-1)
        for signum in (*STOPPING, signal.SIGCHLD):
            signal.signal(signum, signal.SIG_DFL)
        try:
            os.execvp(argv[0], argv)
        except OSError as exc:
            sys.stderr.write(f"cannot run {argv[0]}: {exc}\n")
        os._exit(127)
    null = os.open(os.devnull, os.O_RDWR)  # the output pipe ends when the command's does
    os.dup2(null, 1)
    os.dup2(null, 2)
    poll = select.poll()
    poll.register(lifeline, select.POLLIN)
    poll.register(wake_read, select.POLLIN)
    status: list[int] = []
    lost = False
    while not status and not stop and not lost:
        for fd, _ in poll.poll():
            if fd == wake_read:
                while True:
                    try:
                        if not os.read(wake_read, 512):
                            break
                    except BlockingIOError:
                        break
            elif not os.read(lifeline, 64):
                lost = True
        reap(program, status)
    leftovers = kill_tree(program, status, 0.0 if lost else grace)
    if lost:
        os._exit(137)
    if leftovers and not stop:
        try:
            os.write(lifeline, b"L")
        except OSError:
            pass
    if stop or not status:
        os._exit(128 + (stop[0] if stop else signal.SIGKILL))
    if os.WIFSIGNALED(status[0]):  # end as the command did, so the caller sees its signal
        ended_by = os.WTERMSIG(status[0])
        try:
            signal.signal(ended_by, signal.SIG_DFL)  # (SIGKILL and SIGSTOP have no handler)
        except (OSError, ValueError):
            pass
        os.kill(os.getpid(), ended_by)
        os._exit(128 + ended_by)  # a signal whose default is to be ignored
    os._exit(os.waitstatus_to_exitcode(status[0]))


if __name__ == "__main__":
    main()
