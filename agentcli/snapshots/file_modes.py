"""The permissions of files written back from a snapshot, which git does not keep.

Git keeps only a file's executable bit and writes a file anew with the umask's mode: a
0600 file would come back 0644, readable by all. Restore reads each mode before git
writes and puts it back after.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


def file_mode(path: Path) -> int | None:
    """The permissions of a regular file about to be written back: git keeps only the
    executable bit and writes the file anew with the umask's (a 0600 file would come back
    0644, readable by all), so they are put back after it."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return stat.S_IMODE(st.st_mode) if stat.S_ISREG(st.st_mode) else None


def keep_mode(path: Path, mode: int) -> None:
    """Give the file written back its former permissions (the executable bit as git wrote
    it), through a descriptor: never a link's target."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return
    try:
        st = os.fstat(fd)
        if stat.S_ISREG(st.st_mode):
            os.fchmod(fd, (mode & ~0o111) | (stat.S_IMODE(st.st_mode) & 0o111))
    finally:
        os.close(fd)
