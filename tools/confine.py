"""Confine a process before it runs a command: Linux Landlock, or bubblewrap where it is missing.

Standard library only and quick to import: tools/supervise.py loads this file by its path
(it runs as ``python -S -I``) and each call supervisor applies a plan to itself right before
posix_spawn, so the command and everything it starts inherit the confinement. Run as a
script it is the launcher of MCP stdio servers:

    python -S -I confine.py PLAN_JSON COMMAND [ARG...]

confines itself by PLAN_JSON and execs COMMAND.

A plan (made by tools.sandbox, JSON) says: ``mechanism`` ("landlock" or "bwrap"), ``abi``
(Landlock's), ``mode`` ("read-only" or "workspace-write"), ``workspace``, ``protect_git``
(writes only into the workspace's top-level entries but ``.git``), ``protected`` (paths in
the workspace that stay read-only: agentcli's data folder, when the workspace holds it),
``writable`` (extra paths: the private temp folder first), ``network`` (TCP allowed) and
``bwrap`` (its path).

Landlock is an allow-list: the rights a ruleset handles are refused everywhere but beneath
the paths a rule grants them on. Only write rights are handled (reading and executing stay
as they are); a right the running ABI does not know is never requested:

- ABI 1: writing, truncating on open is not separate, removing and making entries;
- ABI 2: REFER (moving or linking a file to another folder; without it Landlock refuses
  that everywhere, so it is granted where writing is);
- ABI 3: TRUNCATE; ABI 4: TCP bind and connect (refused when the network is off: UDP and
  unix sockets are not covered); ABI 6: scopes: no signal to a process outside the
  sandbox, and no abstract unix socket outside it when the network is off.

Rights granted on a folder hold for everything beneath it, and none can be taken away
below: ``.git`` cannot be left out of a writable workspace. So when the workspace is (in)
a git repository, the rights go on each of its top-level entries but ``.git`` (folders: all
of them; files: writing in place), and none on the workspace folder itself: no entry can
be made, removed or renamed at its top (which would let ``.git`` be moved away and
replaced, or a hook linked in). Symbolic links among the entries get nothing (a rule
would follow them). A protected path deeper in the workspace is left out the same way, one
folder level at a time: every entry of each folder on the way to it is granted but the one
that leads to it.
"""

import ctypes
import json
import os
import stat
import sys

CREATE_RULESET, ADD_RULE, RESTRICT_SELF = 444, 445, 446  # the same on every architecture
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH, PR_SET_NO_NEW_PRIVS = 1, 38

WRITE_FILE, REMOVE_DIR, REMOVE_FILE = 1 << 1, 1 << 4, 1 << 5
MAKE = sum(1 << bit for bit in range(6, 13))  # CHAR DIR REG SOCK FIFO BLOCK SYM
REFER, TRUNCATE = 1 << 13, 1 << 14
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1
# devices any command writes to (``> /dev/null`` opens it for writing, truncating)
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/random", "/dev/urandom")

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("fs", ctypes.c_uint64), ("net", ctypes.c_uint64), ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def landlock_abi() -> int:
    """The running kernel's Landlock ABI version; 0 when it has none (or it is disabled)."""
    version = _libc.syscall(CREATE_RULESET, None, ctypes.c_size_t(0), CREATE_RULESET_VERSION)
    return max(int(version), 0)


def _fail(what: str) -> OSError:
    errno = ctypes.get_errno()
    return OSError(errno, f"Landlock {what}: {os.strerror(errno)}")


def rights(abi: int) -> tuple[int, int]:
    """(all handled file-system rights, those a regular file can be granted) for ``abi``."""
    handled = WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE
    handled |= REFER if abi >= 2 else 0
    on_files = WRITE_FILE | (TRUNCATE if abi >= 3 else 0)
    return handled | (TRUNCATE if abi >= 3 else 0), on_files


def grants(plan: dict) -> list[str]:
    """The paths to grant writing on (folders: every right, beneath; files and devices:
    writing in place), read now, right before the command runs."""
    found = [*plan["writable"], *DEVICES, "/dev/pts"]
    workspace = plan["workspace"]
    if plan["mode"] == "workspace-write":
        kept = [os.path.join(workspace, ".git")] if plan["protect_git"] else []
        kept += [p for p in plan.get("protected", []) if _beneath(p, workspace)]
        found += _all_but(workspace, kept) if kept else [workspace]
    return found


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


def apply_landlock(plan: dict) -> None:
    """Confine this process (and all it starts from now on) by ``plan``; OSError if not."""
    abi = int(plan["abi"])
    handled, on_files = rights(abi)
    attr = _RulesetAttr(fs=handled)
    size = 8
    if abi >= 4 and not plan["network"]:
        attr.net, size = NET_BIND_TCP | NET_CONNECT_TCP, 16
    if abi >= 6:
        attr.scoped = SCOPE_SIGNAL | (0 if plan["network"] else SCOPE_ABSTRACT_UNIX_SOCKET)
        size = 24
    ruleset = _libc.syscall(CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), 0)
    if ruleset < 0:
        raise _fail("cannot create a ruleset")
    try:
        for path in grants(plan):
            try:  # never through a link: the rule would hold where it leads
                fd = os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
            except OSError:
                continue  # gone, or not there yet: nothing to grant
            try:
                mode = os.fstat(fd).st_mode
                if stat.S_ISDIR(mode):
                    allowed = handled
                elif stat.S_ISREG(mode) or stat.S_ISCHR(mode):
                    allowed = on_files
                else:
                    continue
                rule = _PathBeneath(allowed=allowed, parent_fd=fd)
                if _libc.syscall(ADD_RULE, ruleset, RULE_PATH_BENEATH, ctypes.byref(rule), 0):
                    raise _fail(f"cannot grant {path}")
            finally:
                os.close(fd)
        if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise _fail("cannot set no_new_privs")
        if _libc.syscall(RESTRICT_SELF, ruleset, 0) != 0:
            raise _fail("cannot restrict the process")
    finally:
        os.close(ruleset)


def bwrap_argv(plan: dict, argv: list[str]) -> list[str]:
    """``argv`` under bubblewrap: the whole file system read-only, a private /dev, the
    writable paths bound writable (the workspace's ``.git`` bound read-only over it), no
    network unless allowed."""
    wrapped = [plan["bwrap"], "--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev"]
    paths = list(plan["writable"])
    if plan["mode"] == "workspace-write":
        paths.append(plan["workspace"])
    for path in paths:
        if os.path.exists(path):
            wrapped += ["--bind", path, path]
    git = os.path.join(plan["workspace"], ".git")
    for kept in [git, *plan.get("protected", [])]:
        if plan["mode"] == "workspace-write" and os.path.lexists(kept):
            wrapped += ["--ro-bind", kept, kept]
    if not plan["network"]:
        wrapped.append("--unshare-net")
    return [*wrapped, "--", *argv]


def confine(plan: dict | None, argv: list[str]) -> list[str]:
    """Apply ``plan`` (None: no confinement) and return the argv to run: the same one under
    Landlock (this process is now confined), bubblewrap's around it otherwise."""
    if plan is None:
        return argv
    if plan["mechanism"] == "landlock":
        apply_landlock(plan)
        return argv
    if plan["mechanism"] == "bwrap":
        return bwrap_argv(plan, argv)
    raise OSError(f"unknown confinement {plan['mechanism']!r}")


def main() -> None:
    if len(sys.argv) < 3:
        sys.exit("usage: confine.py PLAN_JSON COMMAND [ARG...]")
    try:
        argv = confine(json.loads(sys.argv[1]), sys.argv[2:])
        os.execvp(argv[0], argv)
    except OSError as exc:
        sys.stderr.write(f"agentcli: cannot start {sys.argv[2]!r} confined: {exc}\n")
        os._exit(126)


if __name__ == "__main__":
    main()
