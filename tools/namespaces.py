"""The file system a confined command sees: user and mount namespaces of its own, made by the
process about to start it (as bubblewrap and Codex do, without a process in between).

Standard library only, loaded by path from tools/confine.py when that runs as a script.
``enter(plan)`` unshares a user and a mount namespace (and a network namespace when the
network is off: only a loopback interface), then:

- every mount is made read-only, with the flags the kernel locks kept (nosuid, nodev,
  noexec): no file outside the writable set can be written, made, removed, or have its
  mode, owner or times changed;
- the writable set (the workspace in workspace-write mode, the private temp folder, the
  extra writable paths) is bound writable over itself;
- the workspace's ``.git`` and protected paths are bound read-only inside it, so the
  workspace's top level is writable while ``.git`` is not (a mount point can be neither
  removed nor renamed: EBUSY);
- ``/tmp`` is a new, empty tmpfs of the command's own: what it writes there is gone when it
  ends, and it sees none of the files, folders or sockets others keep in /tmp (an ssh
  agent's, a display's). What it needs of the real /tmp is bound back into it: the writable
  set writable, and read-only the plan's ``readable`` paths (the workspace, the agent's own
  Python, the folders on PATH, an MCP server's program), so programs and virtual
  environments kept in /tmp still run. Where /tmp itself is writable (a workspace at /tmp,
  or above it) it stays as it is;
- ``/dev`` is a new read-only tmpfs holding only null, zero, full, random, urandom and tty
  (the command has no controlling terminal, so tty opens only one it makes itself), its own
  devpts and shm: the person's terminal is not there, and no device can be made;
- the folders where terminal multiplexers and desktop sessions keep their sockets
  (/run/user/UID, /run/screen, /tmp/tmux-UID, /tmp/.X11-unix) are empty: no tmux, screen,
  X server or session bus by name;
- an IPC namespace: no System V shared memory, semaphores or message queues of others.

Landlock, applied after this (tools/landlock.py), refuses the command mount, umount and
pivot_root, so it cannot undo any of it even as root inside the namespace.

When the kernel refuses an unprivileged user namespace, ``enter`` changes nothing and
returns None; any failure after that raises OSError, and the command does not start.
"""

import ctypes
import errno
import os

CLONE_NEWNS, CLONE_NEWIPC = 0x00020000, 0x08000000
CLONE_NEWUSER, CLONE_NEWNET = 0x10000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
LOCKED = {"nosuid": MS_NOSUID, "nodev": MS_NODEV, "noexec": MS_NOEXEC}
PR_GET_DUMPABLE, PR_SET_DUMPABLE = 3, 4
DEV_NODES = ("null", "zero", "full", "random", "urandom", "tty")
DEV_LINKS = {
    "ptmx": "pts/ptmx",
    "fd": "/proc/self/fd",
    "stdin": "/proc/self/fd/0",
    "stdout": "/proc/self/fd/1",
    "stderr": "/proc/self/fd/2",
}
SOCKET_FOLDERS = ("/run/user/{uid}", "/run/screen", "/tmp/tmux-{uid}", "/tmp/.X11-unix")
TMP = "/tmp"
# what unshare answers where user namespaces are off, limited or unknown: not an error
REFUSED = {errno.EPERM, errno.EACCES, errno.EINVAL, errno.ENOSPC, errno.EUSERS, errno.ENOSYS}
SIOCSIFFLAGS, IFF_UP, IFF_LOOPBACK, IFF_RUNNING = 0x8914, 0x1, 0x8, 0x40

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p] * 3 + [ctypes.c_ulong, ctypes.c_char_p]


def _fail(what: str) -> OSError:
    code = ctypes.get_errno()
    return OSError(code, f"{what}: {os.strerror(code)}")


def _mount(source, target: str, fstype, flags: int, data=None) -> None:  # type: ignore[no-untyped-def]
    def raw(text):  # type: ignore[no-untyped-def]
        return None if text is None else os.fsencode(text)

    if _libc.mount(raw(source), raw(target), raw(fstype), flags, raw(data)) != 0:
        raise _fail(f"cannot mount {target}")


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _beneath(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _unescape(field: bytes) -> str:
    """A path of /proc/self/mountinfo: space, tab, newline and backslash are octal escapes."""
    head, *rest = field.split(b"\\")
    out = head
    for part in rest:
        out += bytes([int(part[:3], 8)]) + part[3:]
    return os.fsdecode(out)


def _mounts() -> list[tuple[str, list[str]]]:
    """(mount point, options) of every mount, in the order they were mounted."""
    with open("/proc/self/mountinfo", "rb") as file:
        lines = file.read().splitlines()
    found = []
    for line in lines:
        fields = line.split(b" ")
        if len(fields) > 5:
            found.append((_unescape(fields[4]), fields[5].decode().split(",")))
    return found


def _options_at(path: str, mounts: list[tuple[str, list[str]]]) -> list[str]:
    """The options of the mount ``path`` is on (the last, deepest one that holds it)."""
    best, options = "", []
    for point, opts in mounts:
        if _beneath(path, point) and len(point) >= len(best):
            best, options = point, opts
    return options


def _read_only(path: str, options: list[str]) -> None:
    locked = sum(LOCKED.get(option, 0) for option in options)
    _mount(None, path, None, MS_REMOUNT | MS_BIND | MS_RDONLY | locked)


def _bind(fd: int, target: str) -> None:
    """Mount what ``fd`` (O_PATH) is at ``target``."""
    _mount(f"/proc/self/fd/{fd}", target, None, MS_BIND | MS_REC)


def _is_link(fd: int) -> bool:
    import stat

    return stat.S_ISLNK(os.fstat(fd).st_mode)


def _mount_point(path: str, fd: int) -> None:
    """Make ``path`` (and the folders on the way) in the private /tmp, a folder or an empty
    file as what ``fd`` is, unless it is there already (inside a path bound back before it)."""
    import stat

    if os.path.lexists(path):
        return
    os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
    if stat.S_ISDIR(os.fstat(fd).st_mode):
        os.mkdir(path, 0o755)
    else:
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o600))


def _bind_read_only(fd: int, path: str, mounts: list[tuple[str, list[str]]]) -> None:
    """Bind what ``fd`` is at ``path`` read-only, with every mount beneath it."""
    _bind(fd, path)
    for point, options in mounts:
        if _beneath(point, path):
            _read_only(point, options)
    if not any(point == path for point, _ in mounts):
        _read_only(path, _options_at(path, mounts))


def private_tmp_binds(plan: dict, writable: list[str]) -> list[str] | None:
    """The paths in /tmp to bind back read-only if /tmp is to be private, else None (/tmp
    is a link or missing, or it is itself writable: the workspace is /tmp or above it)."""
    if not plan.get("private_tmp", True) or os.path.islink(TMP) or not os.path.isdir(TMP):
        return None
    if any(_beneath(TMP, path) for path in writable):
        return None
    readable = [*plan.get("readable", []), plan["workspace"]]
    return sorted(
        {
            path
            for path in readable
            if _beneath(path, TMP)
            and path != TMP
            and os.path.exists(path)
            and not any(_beneath(path, w) for w in writable)
        },
        key=len,
    )


def _map_ids(uid: int, gid: int) -> None:
    """Map this process's ids to themselves (a non-dumpable process cannot write its own
    maps: it is made dumpable for as long as that takes)."""
    dumpable = _libc.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0)
    _libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)
    try:
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1")
        _write("/proc/self/gid_map", f"{gid} {gid} 1")
    finally:
        _libc.prctl(PR_SET_DUMPABLE, dumpable, 0, 0, 0)


def _private_dev(devices: dict[str, int]) -> None:
    _mount("tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k")
    for name, fd in devices.items():
        path = f"/dev/{name}"
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o600))
        _mount(f"/proc/self/fd/{fd}", path, None, MS_BIND)
    os.mkdir("/dev/shm")
    _mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777")
    os.mkdir("/dev/pts")
    flags = MS_NOSUID | MS_NOEXEC
    _mount("devpts", "/dev/pts", "devpts", flags, "newinstance,ptmxmode=0666,mode=0620")
    for name, target in DEV_LINKS.items():
        os.symlink(target, f"/dev/{name}")
    _mount(None, "/dev", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NOEXEC)


def _loopback_up() -> None:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = b"lo".ljust(16, b"\0") + (IFF_UP | IFF_LOOPBACK | IFF_RUNNING).to_bytes(
            2, "little"
        )
        buffer = ctypes.create_string_buffer(request.ljust(40, b"\0"), 40)
        if _libc.ioctl(sock.fileno(), SIOCSIFFLAGS, buffer) != 0:
            raise _fail("cannot bring the loopback interface up")


def _kept(plan: dict) -> tuple[list[str], bool]:
    """(the workspace's paths to bind read-only, whether binds keep .git whole: not when
    one is a link, nor where the workspace is a repository's subfolder with no .git of its
    own, whose top level Landlock must then keep)."""
    if plan["mode"] != "workspace-write":
        return [], True
    workspace = plan["workspace"]
    wanted = [os.path.join(workspace, ".git")] if plan["protect_git"] else []
    wanted += [p for p in plan.get("protected", []) if _beneath(p, workspace) and p != workspace]
    present = [p for p in wanted if os.path.lexists(p)]
    bindable = not any(map(os.path.islink, present))
    if plan["protect_git"] and not os.path.lexists(wanted[0]):
        bindable = False  # a subfolder of a repository: a .git made at its top would be git's
    return [p for p in present if not os.path.islink(p)], bindable


def enter(plan: dict) -> dict | None:
    """Set up the command's view (see the module's docstring); None when the kernel refuses
    a user namespace. Returns {"git_bound": whether .git and the protected paths are all
    read-only mounts, "private_tmp": whether /tmp is the command's own}."""
    uid, gid = os.getuid(), os.getgid()
    writable = list(plan["writable"])
    if plan["mode"] == "workspace-write":
        writable.append(plan["workspace"])
    writable = [p for p in dict.fromkeys(writable) if os.path.exists(p)]
    kept, git_bound = _kept(plan)
    back = private_tmp_binds(plan, writable)
    flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWIPC
    flags |= 0 if plan["network"] else CLONE_NEWNET
    if _libc.unshare(flags) != 0:
        code = ctypes.get_errno()
        if code in REFUSED:
            return None
        raise OSError(code, f"cannot make the command's namespaces: {os.strerror(code)}")
    _map_ids(uid, gid)
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    mounts = _mounts()
    fds: dict[str, int] = {}
    try:  # opened in this namespace (a bind's source must be), before anything is covered
        for path in [*writable, *(back or [])]:
            fds[path] = os.open(path, os.O_PATH | os.O_CLOEXEC)
        for path in kept:  # the entry itself: a link put there since is refused
            fds[path] = os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
            if _is_link(fds[path]):
                raise OSError(f"cannot keep {path} read-only: it became a symbolic link")
        devices = {}
        for name in DEV_NODES:
            if os.path.exists(f"/dev/{name}"):
                devices[name] = fds[f"/dev/{name}"] = os.open(
                    f"/dev/{name}", os.O_PATH | os.O_CLOEXEC
                )
        covered = ["/dev", *writable]
        if back is not None:
            covered.append(TMP)
            _mount("tmpfs", TMP, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777")
            for path in back:
                _mount_point(path, fds[path])
                _bind_read_only(fds[path], path, mounts)
        for path in writable:
            if back is not None and _beneath(path, TMP):
                _mount_point(path, fds[path])
            _bind(fds[path], path)
        for point, options in mounts:
            if not any(_beneath(point, c) for c in covered):
                _read_only(point, options)
        for path in kept:
            _bind(fds[path], path)
            _read_only(path, _options_at(path, mounts))
        for folder in SOCKET_FOLDERS:
            folder = folder.format(uid=uid)
            if (
                os.path.isdir(folder)
                and not os.path.islink(folder)
                and not any(_beneath(p, folder) for p in writable)
            ):
                _mount(
                    "tmpfs",
                    folder,
                    "tmpfs",
                    MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                    "size=4k",
                )
        _private_dev(devices)
        if not plan["network"]:
            _loopback_up()
    finally:
        for fd in fds.values():
            os.close(fd)
    return {"git_bound": git_bound, "private_tmp": back is not None}
