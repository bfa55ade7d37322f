"""Where a path the model gives leads: somewhere beneath the workspace, nowhere else.

The check and the use are one step. A path is walked one component at a time from a file
descriptor of the workspace root: each folder is opened with O_NOFOLLOW relative to the one
before (``dir_fd``), so the kernel never follows a symbolic link for us. A link met on the way
is read (``readlink``) and its target walked the same way, beneath the root, at most
``MAX_HOPS`` times; ``..`` pops the walk's own stack and never goes above the root. A folder
swapped for a link while we walk is met as a link, and its target is checked like any other.
What the walk hands back is the open folder and a final name that was not a link: callers
read, write, stat and list through that descriptor, never through the path again.

The approval policy and the tools walk with the same function, so they agree on where a path
leads. The walk never creates anything: missing folders are made only after it, once the whole
path is known to stay inside, and only by ``locate(create_dirs=True)``. A ``..`` after a name
that does not exist is refused (the walk could not know where it leads, and making the folder
first would let it lead through a link elsewhere than the policy saw). How a path is typed
(checked, absolute or relative) is tools/typed_paths.py.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from .errors import ToolError
from .typed_paths import check_typed, outside, relative_parts

MAX_HOPS = 40  # symbolic links followed in one path, as Linux's MAXSYMLINKS
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


@dataclass
class Located:
    """A path walked beneath the workspace: its folder (open), its last name, and where it is.

    ``name`` is "." for the workspace root itself. ``rel`` is the resolved path relative to the
    workspace ("." for the root). When ``exists`` is false, ``name`` is the first missing
    component (maybe a folder the path goes through), ``rel`` the whole path as it would be and
    ``missing`` the missing names from ``name`` on (plain names: no ``..``, no links).
    """

    dir_fd: int
    name: str
    rel: str
    exists: bool
    missing: tuple[str, ...] = ()


def open_dir(name: str, dir_fd: int) -> int:
    """The folder ``name`` in the open folder ``dir_fd``, opened without following a link."""
    return os.open(name, DIR_FLAGS, dir_fd=dir_fd)


def _descend(dir_fd: int, names: Sequence[str], create: bool = False) -> int:
    """The folder reached from ``dir_fd`` through ``names``, each opened without following a
    link (and made first if ``create``; one made meanwhile by someone else is used if it is a
    folder), in a new descriptor; ``dir_fd`` stays open. Raises OSError, closing what it opened."""
    fd = os.dup(dir_fd)
    try:
        for name in names:
            if create:
                with suppress(FileExistsError):
                    os.mkdir(name, 0o777, dir_fd=fd)
            new = open_dir(name, fd)
            os.close(fd)
            fd = new
    except BaseException:
        os.close(fd)
        raise
    return fd


def _kind(name: str, dir_fd: int) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


class _Walk:
    """One walk beneath an open root: a stack of folder names and the open current folder."""

    def __init__(self, root_fd: int, path: str, root: str) -> None:
        self.root_fd = root_fd
        self.path = path
        self.root = root
        self.stack: list[str] = []
        self.fd = os.dup(root_fd)
        self.hops = 0

    def _reopen(self) -> None:
        """Open the current folder again from the root (after ``..``), without links."""
        try:
            fd = _descend(self.root_fd, self.stack)
        except OSError as exc:
            raise ToolError(f"path '{self.path}' changed while it was opened: {exc}") from exc
        os.close(self.fd)
        self.fd = fd

    def up(self) -> None:
        if not self.stack:
            raise outside(self.path, self.root)
        self.stack.pop()
        self._reopen()

    def enter(self, name: str) -> None:
        new = open_dir(name, self.fd)
        os.close(self.fd)
        self.fd = new
        self.stack.append(name)

    def hop(self) -> None:
        """Count a link followed (or a name met again after it changed): at most MAX_HOPS."""
        self.hops += 1
        if self.hops > MAX_HOPS:
            raise ToolError(f"path '{self.path}' has too many levels of symbolic links")

    def link(self, name: str, workspace: Path) -> list[str]:
        """The components a link named ``name`` here stands for (from the root if absolute)."""
        self.hop()
        target = os.readlink(name, dir_fd=self.fd)
        if target.startswith("/"):
            parts = relative_parts(target, workspace, self.path)
            self.stack = []
            self._reopen()
            return parts
        return target.split("/")

    def rel(self, name: str | None = None) -> str:
        parts = [*self.stack, name] if name and name != "." else self.stack
        return "/".join(parts) or "."

    def run(self, todo: list[str], workspace: Path) -> Located:
        """Walk the components in ``todo`` (a stack: the next one last)."""
        tail: list[str] = []  # the first name that did not exist, and the names after it
        while todo:
            name = todo.pop()
            if name in ("", "."):
                continue
            if name == ".." and tail:
                raise ToolError(
                    f"'{self.rel(tail[0])}' does not exist, so '..' after it leads nowhere "
                    "known; write the path without it"
                )
            if name == "..":
                self.up()
                continue
            if tail:
                tail.append(name)
                continue
            last = not any(part not in ("", ".") for part in todo)
            info = _kind(name, self.fd)
            if info is None:
                tail.append(name)
            elif stat.S_ISLNK(info.st_mode):
                todo.extend(reversed(self.link(name, workspace)))
            elif last:
                return Located(self.fd, name, self.rel(name), True)
            else:
                try:
                    self.enter(name)
                except OSError as exc:
                    if exc.errno == errno.ENOTDIR:
                        raise ToolError(f"'{self.rel(name)}' is not a directory") from exc
                    if exc.errno == errno.ELOOP:  # became a link since the lstat: read it
                        self.hop()
                        todo.append(name)
                        continue
                    raise
        if tail:  # ``name`` is the first missing one: nothing is ever opened by a longer path
            return Located(self.fd, tail[0], self.rel("/".join(tail)), False, tuple(tail))
        return Located(self.fd, ".", self.rel(), True)


def _walk(root_fd: int, workspace: Path, path: str) -> Located:
    """Walk ``path`` beneath ``root_fd``; the caller owns (closes) the returned ``dir_fd``."""
    todo = relative_parts(path or ".", workspace, path)
    todo.reverse()  # a stack: the next component last
    walk = _Walk(root_fd, path, os.path.realpath(workspace))
    try:
        return walk.run(todo, workspace)
    except OSError as exc:
        os.close(walk.fd)
        raise ToolError(f"path '{path}' cannot be opened: {exc.strerror or exc}") from exc
    except BaseException:
        os.close(walk.fd)
        raise


def _make_dirs(found: Located) -> Located:
    """Make the missing folders of a walked path (see _descend); the located last name, in a
    new descriptor (``found``'s stays open)."""
    try:
        fd = _descend(found.dir_fd, found.missing[:-1], create=True)
    except OSError as exc:
        raise ToolError(f"cannot create the folders of '{found.rel}': {exc.strerror}") from exc
    return Located(fd, found.missing[-1], found.rel, False, found.missing[-1:])


@contextmanager
def locate(
    workspace: Path,
    path: str,
    *,
    create_dirs: bool = False,
    check: Callable[[Located], None] | None = None,
) -> Iterator[Located]:
    """Walk ``path`` beneath the workspace; the folder's descriptor lives as long as the block.

    The final name may not exist (write_file creates files). ``check`` is called with what the
    walk found (it raises to refuse); then, with ``create_dirs``, missing folders on the way
    are made: only once the whole path is known to stay inside and was checked. Raises
    ToolError for anything outside or unwalkable.
    """
    check_typed(path)
    try:
        root_fd = os.open(workspace, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise ToolError(f"the workspace {workspace} cannot be opened: {exc.strerror}") from exc
    try:
        found = _walk(root_fd, workspace, path)
    finally:
        os.close(root_fd)
    opened = [found.dir_fd]
    try:
        if check is not None:
            check(found)
        if create_dirs and len(found.missing) > 1:
            found = _make_dirs(found)
            opened.append(found.dir_fd)
        yield found
    finally:
        for fd in opened:
            os.close(fd)


def resolve_relative(workspace: Path, path: str) -> str | None:
    """Where ``path`` leads, relative to the workspace ("." for the root), or None when it
    leads outside or cannot be walked. Missing trailing names are kept as written."""
    try:
        with locate(workspace, path) as found:
            return found.rel
    except ToolError:
        return None
