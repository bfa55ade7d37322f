"""The permissions of the workspace's files and folders, which git does not keep.

Git keeps only a file's executable bit, and writes a file anew with the umask's mode: a
0600 file would come back 0644, readable by all, and a call that ran `chmod 666` (or
`chmod 700` on a folder) would change nothing git sees. So each snapshot also keeps the
mode of every file it holds and of every folder above one (a `Modes` map, stored as a blob
beside the tree), and undo puts back the modes the files and folders had.

Only the permission bits (0777) are ever put back. A setuid, setgid or sticky bit is never
set by undo: the mode it comes from may itself be the work of an earlier call (a planted
setuid program), so undo leaves it off and says so. Undo never changes a file through a
symbolic link: each folder on the way is opened without following links.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

PERMISSIONS = 0o777
SPECIAL = stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX
_PATH_FLAG = getattr(os, "O_PATH", 0)  # Linux: a handle on the entry itself, never its data
_PROC_FD = Path("/proc/self/fd")

Modes = dict[str, int]  # "path" (a file) or "path/" (a folder) -> its mode bits


def modes_of(workspace: Path, files: Iterable[str]) -> Modes:
    """The mode bits of `files` (paths in the workspace) that are regular files, and of
    every folder above one (as "folder/"): one lstat a file, one a folder."""
    out: Modes = {}
    root, lstat, regular, bits = f"{workspace}/", os.lstat, stat.S_ISREG, stat.S_IMODE
    for rel in files:
        try:
            mode = lstat(root + rel).st_mode
        except OSError:
            continue
        if not regular(mode):
            continue
        out[rel] = bits(mode)
        parent = rel.rpartition("/")[0]
        while parent and f"{parent}/" not in out:
            try:
                out[f"{parent}/"] = bits(lstat(root + parent).st_mode)
            except OSError:
                break
            parent = parent.rpartition("/")[0]
    return out


def modes_now(workspace: Path, paths: Iterable[str]) -> Modes:
    """The mode bits of `paths` ("path" a file, "folder/" a folder) that are still what
    their key says."""
    out: Modes = {}
    for key in paths:
        try:
            st = os.lstat(workspace / key.rstrip("/"))
        except OSError:
            continue
        if (stat.S_ISDIR if key.endswith("/") else stat.S_ISREG)(st.st_mode):
            out[key] = stat.S_IMODE(st.st_mode)
    return out


def encode(modes: Mapping[str, int]) -> bytes:
    return b"".join(
        b"%o %s\0" % (mode, path.encode("utf-8", "surrogateescape"))
        for path, mode in sorted(modes.items())
    )


def decode(data: bytes) -> Modes:
    out: Modes = {}
    for entry in data.split(b"\0"):
        mode, _, path = entry.partition(b" ")
        if path:
            out[path.decode("utf-8", "surrogateescape")] = int(mode, 8)
    return out


def changed_modes(before: Mapping[str, int], after: Mapping[str, int]) -> list[str]:
    """The files and folders both maps hold whose mode differs (those one map lacks were
    made or removed: their content changed, which git sees)."""
    return sorted(p for p, mode in before.items() if p in after and after[p] != mode)


def shown(mode: int) -> str:
    return f"{mode:04o}"


@dataclass
class ModesPutBack:
    """What undo did with the modes: put back, or why not (a line each)."""

    put_back: list[str] = field(default_factory=list)  # "path 0640"
    refused: list[str] = field(default_factory=list)


def put_back(workspace: Path, modes: Mapping[str, int]) -> ModesPutBack:
    """Give each file and folder of `modes` its permission bits; never a setuid, setgid or
    sticky bit, never through a link, never to what is no longer a file (or folder)."""
    done = ModesPutBack()
    # the deepest first: a folder made 0500 or 0000 is not in the way of what is in it
    for rel, mode in sorted(modes.items(), key=lambda item: -item[0].rstrip("/").count("/")):
        name = rel.rstrip("/")
        why = _chmod(workspace, name, mode & PERMISSIONS, folder=rel.endswith("/"))
        if why:
            done.refused.append(f"{name}: {why}")
            continue
        if why is None:
            done.put_back.append(f"{name} {shown(mode & PERMISSIONS)}")
        if mode & SPECIAL:
            done.refused.append(
                f"{name}: had mode {shown(mode)}; its setuid, setgid and sticky bits are never"
                f" put back (a call may have set them), it is {shown(mode & PERMISSIONS)}"
            )
    done.put_back.sort()
    done.refused.sort()
    return done


def _chmod(workspace: Path, rel: str, mode: int, folder: bool) -> str | None:
    """Set `rel`'s mode, each folder on the way opened without following a link; None if
    done, "" if it had that mode already, else why not."""
    fds: list[int] = []
    try:
        fds.append(os.open(workspace, os.O_RDONLY | os.O_DIRECTORY | _PATH_FLAG))
        parts = rel.split("/")
        for part in parts[:-1]:
            flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | _PATH_FLAG
            fds.append(os.open(part, flags, dir_fd=fds[-1]))
        st = os.stat(parts[-1], dir_fd=fds[-1], follow_symlinks=False)
        if not (stat.S_ISDIR if folder else stat.S_ISREG)(st.st_mode):
            return "no longer a folder" if folder else "no longer a regular file"
        if stat.S_IMODE(st.st_mode) == mode:
            return ""
        by_path = bool(_PATH_FLAG) and _PROC_FD.is_dir()  # the entry, whatever its permissions
        flags = os.O_NOFOLLOW | (_PATH_FLAG if by_path else os.O_RDONLY | os.O_NONBLOCK)
        fds.append(os.open(parts[-1], flags, dir_fd=fds[-1]))
        again = os.fstat(fds[-1])
        if (again.st_dev, again.st_ino) != (st.st_dev, st.st_ino):
            return "replaced while undo ran"
        if by_path:
            os.chmod(_PROC_FD / str(fds[-1]), mode)
        else:  # opened for reading: a file nobody may read cannot be
            os.fchmod(fds[-1], mode)
    except OSError as exc:
        return f"mode not put back ({exc.strerror or exc})"
    finally:
        for fd in reversed(fds):
            os.close(fd)
    return None


def file_mode(path: Path) -> int | None:
    """The permissions of a regular file about to be written back, for a record made before
    snapshots kept modes: they are put back after git wrote it (as `keep_mode`)."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return stat.S_IMODE(st.st_mode) if stat.S_ISREG(st.st_mode) else None


def keep_mode(path: Path, mode: int) -> None:
    """Give the file written back its permissions before (the executable bit as git wrote
    it), through a descriptor: never a link's target. Never a setuid, setgid or sticky bit."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return
    try:
        st = os.fstat(fd)
        if stat.S_ISREG(st.st_mode):
            os.fchmod(fd, (mode & 0o666) | (stat.S_IMODE(st.st_mode) & 0o111))
    finally:
        os.close(fd)
