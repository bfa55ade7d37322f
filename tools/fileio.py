"""Reading and writing a file the walk located (tools/paths.py), through descriptors only.

Reads open the final name with O_NOFOLLOW relative to its folder's descriptor, refuse what
is not a regular file and files with more than one hard link (the other name may be outside
the workspace). Writes go to a temporary file in the same folder, are flushed to disk, then
renamed over the name: a crash leaves the old file or the new one, never half of one, and a
link planted at the name is replaced, never written through.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager

from .errors import ToolError
from .paths import Located, open_dir

_READ_FLAGS = (
    os.O_RDONLY
    | os.O_NOFOLLOW
    | os.O_NONBLOCK  # a FIFO must not block the open; regular files ignore it
    | os.O_NOCTTY
    | getattr(os, "O_CLOEXEC", 0)
)
CHUNK = 64 * 1024
SNIFF_BYTES = 8192  # how much of a file is looked at to tell text from binary
TEMP_NAME_BYTES = 100  # of the file's name kept in its temporary file's name (NAME_MAX is 255)


def hard_link_error(shown: str, links: int) -> ToolError:
    return ToolError(
        f"'{shown}' has {links} hard links: another name for it may be outside the workspace, "
        "so file tools neither read nor change it (work on a copy made with shell cp)"
    )


def _opened_error(shown: str, exc: OSError) -> ToolError:
    if exc.errno == errno.ELOOP:
        return ToolError(f"'{shown}' was replaced by a symbolic link while it was opened")
    if exc.errno == errno.ENOENT:
        return ToolError(f"'{shown}' does not exist")
    return ToolError(f"cannot open '{shown}': {exc.strerror or exc}")


@contextmanager
def open_regular(found: Located) -> Iterator[tuple[int, os.stat_result]]:
    """The located file opened for reading, with its stat; ToolError unless it is a regular
    file with a single link."""
    shown = found.rel
    if not found.exists:
        raise ToolError(f"'{shown}' does not exist")
    try:
        fd = os.open(found.name, _READ_FLAGS, dir_fd=found.dir_fd)
    except OSError as exc:
        raise _opened_error(shown, exc) from exc
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise ToolError(f"'{shown}' is not a file (use list_dir for directories)")
        if not stat.S_ISREG(info.st_mode):
            raise ToolError(f"'{shown}' is not a regular file")
        if info.st_nlink > 1:
            raise hard_link_error(shown, info.st_nlink)
        os.set_blocking(fd, True)
        yield fd, info
    finally:
        os.close(fd)


def looks_binary(fd: int) -> bool:
    """True when the file's first bytes contain a NUL byte, as git and grep decide."""
    return b"\x00" in os.pread(fd, SNIFF_BYTES, 0)


def chunks(fd: int, start: int = 0) -> Iterator[bytes]:
    """The file's bytes from ``start``, a chunk at a time."""
    offset = start
    while data := os.pread(fd, CHUNK, offset):
        offset += len(data)
        yield data


def read_all(fd: int, limit: int, shown: str) -> bytes:
    """The whole file, or ToolError if it is bigger than ``limit`` bytes."""
    parts: list[bytes] = []
    size = 0
    for data in chunks(fd):
        size += len(data)
        if size > limit:
            raise ToolError(f"'{shown}' is larger than {limit} bytes; it is too big to edit")
        parts.append(data)
    return b"".join(parts)


def existing(found: Located) -> os.stat_result | None:
    """The stat of the located name (not following a link), or None if nothing is there."""
    try:
        return os.stat(found.name, dir_fd=found.dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _prefix(name: str, size: int) -> str:
    """The longest start of ``name`` at most ``size`` bytes long in the file system's encoding."""
    while len(os.fsencode(name)) > size:
        name = name[: -max(1, (len(os.fsencode(name)) - size) // 4)]
    return name


def write_atomic(found: Located, data: bytes) -> bool:
    """Replace (or create) the located file with ``data``; True if a file was there before.

    An existing file keeps its permission bits. A folder or a hard-linked file is refused.
    """
    shown = found.rel
    if found.name == ".":
        raise ToolError(f"'{shown}' is a directory")
    before = existing(found)
    if before is not None and stat.S_ISDIR(before.st_mode):
        raise ToolError(f"'{shown}' is a directory")
    if before is not None and stat.S_ISREG(before.st_mode) and before.st_nlink > 1:
        raise hard_link_error(shown, before.st_nlink)
    temp = f".{_prefix(found.name, TEMP_NAME_BYTES)}.{secrets.token_hex(6)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(temp, flags, 0o666, dir_fd=found.dir_fd)
    except OSError as exc:
        raise ToolError(f"cannot write '{shown}': {exc.strerror or exc}") from exc
    try:
        try:
            if before is not None and stat.S_ISREG(before.st_mode):
                os.fchmod(fd, stat.S_IMODE(before.st_mode))
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(temp, found.name, src_dir_fd=found.dir_fd, dst_dir_fd=found.dir_fd)
    except OSError as exc:
        try:
            os.unlink(temp, dir_fd=found.dir_fd)
        except OSError:
            pass
        raise ToolError(f"cannot write '{shown}': {exc.strerror or exc}") from exc
    try:
        os.fsync(found.dir_fd)  # the rename itself survives a crash
    except OSError:
        pass
    return before is not None


def open_folder(found: Located) -> int:
    """The located folder opened (not following a link); ToolError if it is not one."""
    shown = found.rel
    if not found.exists:
        raise ToolError(f"'{shown}' does not exist")
    try:
        return open_dir(found.name, found.dir_fd)
    except OSError as exc:
        info = existing(found)
        if info is not None and not stat.S_ISDIR(info.st_mode):
            raise ToolError(f"'{shown}' is not a directory") from exc
        raise ToolError(f"cannot list '{shown}': {exc.strerror or exc}") from exc
