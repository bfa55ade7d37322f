"""Linux Landlock: the rights a confined command keeps to write, make and remove files.

Standard library only, loaded by path from tools/confine.py when that runs as a script
(see there). Landlock is an allow-list: the rights a ruleset handles are refused everywhere
but beneath the paths a rule grants them on. Writing rights are handled (reading and
executing stay as they are); a right the running ABI does not know is never requested:

- ABI 1: writing, truncating on open is not separate, removing and making entries;
- ABI 2: REFER (moving or linking a file to another folder; without it Landlock refuses
  that everywhere, so it is granted where writing is);
- ABI 3: TRUNCATE; ABI 4: TCP bind and connect (refused when the network is off, but
  connecting to the egress proxy's port when the plan has one: UDP and unix sockets are not
  covered); ABI 5: IOCTL_DEV (ioctls on a device opened after this:
  granted only on a private pseudo-terminal folder, so never on the person's terminal);
  ABI 6: scopes: no signal to a process outside the sandbox, and no abstract unix socket
  outside it when the network is off.

Making a character or block device is handled and never granted: no new devices, anywhere.
Without a private /dev (no namespaces: Landlock alone), reading is handled too and granted
everywhere but /dev, where only the harmless devices are readable: no terminal's keystrokes,
console screen or disk can be read.
A Landlock domain also refuses mount, umount and pivot_root, and ptrace (so /proc/PID/fd,
environ and mem) of every process outside it: the command cannot undo a mount namespace
set up before it (tools/namespaces.py), nor reach the terminal through another process.

Rights granted on a folder hold for everything beneath it, and none can be taken away
below: ``.git`` cannot be left out of a writable workspace by Landlock alone. When no mount
namespace binds it read-only and the workspace is (in) a git repository, the rights go on
each of its top-level entries but ``.git`` (folders: all of them; files: writing in place),
and none on the workspace folder itself: no entry can be made, removed or renamed at its
top (which would let ``.git`` be moved away and replaced, or a hook linked in). Symbolic
links among the entries get nothing (a rule would follow them). A protected path deeper in
the workspace is left out the same way, one folder level at a time.
"""

import ctypes
import os
import stat

CREATE_RULESET, ADD_RULE, RESTRICT_SELF = 444, 445, 446  # the same on every architecture
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH, RULE_NET_PORT, PR_SET_NO_NEW_PRIVS = 1, 2, 38

WRITE_FILE, READ_FILE, REMOVE_DIR, REMOVE_FILE = 1 << 1, 1 << 2, 1 << 4, 1 << 5
MAKE_CHAR, MAKE_BLOCK = 1 << 6, 1 << 11
MAKE = sum(1 << bit for bit in range(6, 13))  # CHAR DIR REG SOCK FIFO BLOCK SYM
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1
# devices any command writes to (``> /dev/null`` opens it for writing, truncating); never a
# terminal: /dev/tty, /dev/pts and /dev/console get nothing
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
# what a private /dev (tools/namespaces.py) adds: its own pseudo-terminals and shared memory
PRIVATE_DEV = ("/dev/pts", "/dev/shm")

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("fs", ctypes.c_uint64), ("net", ctypes.c_uint64), ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class _NetPort(ctypes.Structure):
    _fields_ = [("allowed", ctypes.c_uint64), ("port", ctypes.c_uint64)]


def abi() -> int:
    """The running kernel's Landlock ABI version; 0 when it has none (or it is disabled)."""
    version = _libc.syscall(CREATE_RULESET, None, ctypes.c_size_t(0), CREATE_RULESET_VERSION)
    return max(int(version), 0)


def _fail(what: str) -> OSError:
    errno = ctypes.get_errno()
    return OSError(errno, f"Landlock {what}: {os.strerror(errno)}")


def rights(version: int) -> tuple[int, int]:
    """(all handled file-system rights, those a regular file can be granted) for ABI
    ``version``."""
    handled = WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE
    handled |= REFER if version >= 2 else 0
    handled |= TRUNCATE if version >= 3 else 0
    handled |= IOCTL_DEV if version >= 5 else 0
    return handled, WRITE_FILE | (TRUNCATE if version >= 3 else 0)


def grants(
    plan: dict, private_dev: bool = False, git_bound: bool = False, private_tmp: bool = False
) -> list[str]:
    """The paths to grant writing on (folders: every right but making devices, beneath;
    files and devices: writing in place), read now, right before the command runs.
    ``private_dev``: /dev is the namespace's own (its pseudo-terminals are the command's);
    ``git_bound``: the workspace's .git is a read-only mount, so Landlock need not keep it;
    ``private_tmp``: /tmp is the namespace's own tmpfs (what is bound back into it read-only
    stays so).
    A folder that holds a kept path (.git, a protected path) is granted entry by entry,
    around it, and the folders on the way to it not at all: their entries can be neither
    made, removed nor renamed (so no folder holding a kept path can be moved away and
    replaced), whether the folder is the workspace or an extra writable path."""
    folders = list(plan["writable"])
    if plan["mode"] == "workspace-write":
        folders.append(plan["workspace"])
    if private_tmp:
        folders.append("/tmp")
    kept = [p for p in plan.get("protected", []) if _beneath(p, plan["workspace"])]
    if plan["mode"] == "workspace-write" and plan["protect_git"] and not git_bound:
        kept.append(os.path.join(plan["workspace"], ".git"))
    found = [*DEVICES, *(PRIVATE_DEV if private_dev else ())]
    for folder in folders:
        under = [k for k in kept if _beneath(k, folder)]
        found += _all_but(folder, under) if under and os.path.isdir(folder) else [folder]
    return found


def readable() -> list[str]:
    """Where a command may open files for reading when Landlock alone confines it (no
    private /dev): everywhere but /dev, and there only the harmless devices: no terminal,
    console, screen memory (vcs) or disk."""
    return [*_all_but("/", ["/dev"]), *DEVICES, "/dev/shm"]


def _beneath(path: str, folder: str) -> bool:
    return path != folder and path.startswith(folder.rstrip("/") + "/")


def _all_but(folder: str, kept: list[str]) -> list[str]:
    """The entries of ``folder`` to grant so that nothing in ``kept`` is granted: those on
    the way to a kept path are opened up in turn (``folder`` itself is never granted)."""
    found = []
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if path in kept:
            continue
        under = [k for k in kept if _beneath(k, path)]
        if under and os.path.isdir(path) and not os.path.islink(path):
            found += _all_but(path, under)
        else:
            found.append(path)
    return found


def _grant(ruleset: int, path: str, on_folders: int, on_files: int) -> None:
    """Add the rule granting ``path`` its rights (a folder's hold beneath it)."""
    try:  # never through a link: the rule would hold where it leads
        fd = os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return  # gone, or not there yet: nothing to grant
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            allowed = on_folders
        elif stat.S_ISREG(mode) or stat.S_ISCHR(mode):
            allowed = on_files
        else:
            return
        rule = _PathBeneath(allowed=allowed, parent_fd=fd)
        if _libc.syscall(ADD_RULE, ruleset, RULE_PATH_BENEATH, ctypes.byref(rule), 0):
            raise _fail(f"cannot grant {path}")
    finally:
        os.close(fd)


def restrict(
    plan: dict, private_dev: bool = False, git_bound: bool = False, private_tmp: bool = False
) -> None:
    """Confine this process (and all it starts from now on) by ``plan``; OSError if not.
    The flags are grants()'s."""
    version = int(plan["abi"])
    handled, on_files = rights(version)
    reads = [] if private_dev else readable()
    attr = _RulesetAttr(fs=handled | (READ_FILE if reads else 0))
    size = 8
    proxy = plan.get("proxy_port")
    if proxy and version < 4:
        raise OSError("Landlock ABI 4 or later is needed to confine TCP to the egress proxy")
    if version >= 4 and not plan["network"]:
        attr.net, size = NET_BIND_TCP | NET_CONNECT_TCP, 16
    if version >= 6:  # abstract sockets are no network: an X server's among them
        attr.scoped, size = SCOPE_SIGNAL | SCOPE_ABSTRACT_UNIX_SOCKET, 24
    ruleset = _libc.syscall(CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), 0)
    if ruleset < 0:
        raise _fail("cannot create a ruleset")
    on_folders = handled & ~(MAKE_CHAR | MAKE_BLOCK | IOCTL_DEV)
    try:
        for path in grants(plan, private_dev, git_bound, private_tmp):
            ioctl = handled & IOCTL_DEV if path == "/dev/pts" else 0
            _grant(ruleset, path, on_folders | ioctl, on_files)
        for path in reads:
            _grant(ruleset, path, READ_FILE, READ_FILE)
        if proxy:  # the egress proxy's port: the one TCP connection allowed
            rule = _NetPort(allowed=NET_CONNECT_TCP, port=int(proxy))
            if _libc.syscall(ADD_RULE, ruleset, RULE_NET_PORT, ctypes.byref(rule), 0):
                raise _fail(f"cannot allow TCP port {proxy}")
        if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise _fail("cannot set no_new_privs")
        if _libc.syscall(RESTRICT_SELF, ruleset, 0) != 0:
            raise _fail("cannot restrict the process")
    finally:
        os.close(ruleset)
