"""search_files: a regular-expression search over the workspace's text files, like grep -rn.

The walk holds each folder open and goes down with O_NOFOLLOW relative to it (tools/paths.py),
so a folder swapped for a link mid-search is not followed out of the workspace. Linked folders
are never entered; a linked file is searched where its link leads if that is inside. Files with
several hard links and files the person's rules protect (``ToolContext.protection``) are
skipped, so a search never reads what read_file could not.

Patterns run on the ``regex`` module with a time budget for the whole search: a pattern that
backtracks without end (``(a+)+$``) stops the search with an error, as Ctrl-C does.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import regex
from pathspec import GitIgnoreSpec

from .base import Runtime, ToolError, builtin_tool, context_of
from .context import ToolContext
from .fileio import looks_binary, open_folder, open_regular, read_all
from .output import cap_output
from .paths import Located, locate, open_dir
from .plurals import counted
from .preconditions import path_inside
from .typed_paths import typed_relative

MAX_RESULTS = 200
MAX_LINE_CHARS = 300
MAX_FILE_BYTES = 5_000_000
MAX_DEPTH = 100  # folders deeper than this below the searched one are not entered
REGEX_SECONDS = 10.0  # the pattern's matching time, over the whole search, at most
_Chain = tuple[tuple[int, GitIgnoreSpec], ...]  # (depth of the folder, its .gitignore)


def _gitignore(dir_fd: int, rel: str) -> GitIgnoreSpec | None:
    """The folder's .gitignore, read through its descriptor (None if it has none)."""
    try:
        with open_regular(Located(dir_fd, ".gitignore", rel, True)) as (fd, _):
            text = read_all(fd, MAX_FILE_BYTES, rel).decode("utf-8", "replace")
    except (ToolError, OSError):
        return None
    return GitIgnoreSpec.from_lines(text.splitlines())


def _ignored(chain: _Chain, parts: Sequence[str], is_dir: bool) -> bool:
    """Whether git would ignore the path: the deepest .gitignore with a matching rule wins."""
    verdict = False
    for depth, spec in chain:
        rel = "/".join(parts[depth:]) + ("/" if is_dir else "")
        include = spec.check_file(rel).include
        if include is not None:
            verdict = include
    return verdict


def _listing(fd: int) -> list[tuple[str, int]]:
    """The folder's names and kinds (not following links), sorted; names gone meanwhile are
    left out."""
    kinds: list[tuple[str, int]] = []
    with os.scandir(fd) as entries:
        for entry in entries:
            try:
                kinds.append((entry.name, entry.stat(follow_symlinks=False).st_mode))
            except OSError:
                continue
    return sorted(kinds)


def _parts(rel: str) -> list[str]:
    return [] if rel == "." else rel.split("/")


@dataclass
class _Search:
    workspace: Path
    root_rel: str  # the searched folder, relative to the workspace
    wanted: GitIgnoreSpec | None
    context: ToolContext
    typed: str  # the searched path as the call named it

    def is_protected(self, rel: str) -> bool:
        return self.context.protection("search_files", rel, self.typed) is not None

    def ancestors(self) -> _Chain:
        """The .gitignore files of the folders above the searched one."""
        chain: list[tuple[int, GitIgnoreSpec]] = []
        parts = _parts(self.root_rel)
        for depth in range(len(parts)):
            with locate(self.workspace, "/".join(parts[:depth]) or ".") as found:
                fd = open_folder(found)
            try:
                if spec := _gitignore(fd, found.rel):
                    chain.append((depth, spec))
            finally:
                os.close(fd)
        return tuple(chain)

    def files(self, fd: int, parts: list[str], chain: _Chain) -> Iterator[Located]:
        """The searchable files under the open folder ``fd``, in a stable order."""
        if spec := _gitignore(fd, "/".join(parts) or "."):
            chain = (*chain, (len(parts), spec))
        kinds = _listing(fd)
        for name, mode in kinds:
            if stat.S_ISDIR(mode):
                continue
            here = [*parts, name]
            rel = "/".join(here)
            if _ignored(chain, here, is_dir=False) or self.is_protected(rel):
                continue
            relative_to_root = "/".join(here[len(_parts(self.root_rel)) :])
            if self.wanted is not None and not self.wanted.match_file(relative_to_root):
                continue
            if stat.S_ISREG(mode):
                yield Located(fd, name, rel, True)
            elif stat.S_ISLNK(mode):
                yield from self.linked(rel)
        if len(parts) - len(_parts(self.root_rel)) >= MAX_DEPTH:
            return
        for name, mode in kinds:
            here = [*parts, name]
            if not stat.S_ISDIR(mode) or name == ".git" or _ignored(chain, here, is_dir=True):
                continue
            if self.is_protected("/".join(here)):
                continue
            try:
                child = open_dir(name, fd)
            except OSError:
                continue  # gone, or swapped for a link since it was listed: not followed
            try:
                yield from self.files(child, here, chain)
            finally:
                os.close(child)

    def linked(self, rel: str) -> Iterator[Located]:
        """A linked file, where the link leads, if that is inside and not protected."""
        try:
            with locate(self.workspace, rel) as found:
                if found.exists and not self.is_protected(found.rel):
                    yield found
        except ToolError:
            return  # a link that leads outside the workspace is not followed

    def lines(self, found: Located) -> list[str]:
        """The file's lines, or none if it is not a searchable text file."""
        try:
            with open_regular(found) as (fd, info):
                if info.st_size > MAX_FILE_BYTES or looks_binary(fd):
                    return []
                data = read_all(fd, MAX_FILE_BYTES, found.rel)
        except (ToolError, OSError):
            return []  # gone, not regular, hard-linked, grown too big
        lines = data.decode("utf-8", "replace").split("\n")
        return lines[:-1] if lines and not lines[-1] else lines


class _Matcher:
    """The compiled pattern, searched line by line within REGEX_SECONDS in all."""

    def __init__(self, pattern: str) -> None:
        try:
            self.regex = regex.compile(pattern)
        except regex.error as exc:
            raise ToolError(f"invalid regular expression {pattern!r}: {exc}") from exc
        self.pattern = pattern
        self.left = REGEX_SECONDS

    def search(self, line: str) -> bool:
        start = time.monotonic()
        try:
            found = self.regex.search(line, timeout=max(self.left, 0.001)) is not None
        except TimeoutError:
            found = False
        self.left -= time.monotonic() - start
        if self.left <= 0:
            raise ToolError(
                f"search stopped: the regular expression {self.pattern!r} took more than "
                f"{REGEX_SECONDS:.0f} s (nested repeats such as (a+)+ backtrack without end); "
                "simplify it, or narrow the path or glob"
            )
        return found


@builtin_tool(precheck=path_inside)
def search_files(pattern: str, runtime: Runtime, path: str = ".", glob: str | None = None) -> str:
    """Search the text files under a path for a regular expression, like grep -rn.

    Skips .git, files that .gitignore files ignore, and binary files. Each match is shown as
    path:line: text. Only the first matches are shown; the total is always reported.

    Args:
        pattern: A Python regular expression, searched in each line; (?i) makes it ignore case.
        path: File or directory to search, relative to the workspace root.
        glob: Only search files matching this glob, e.g. '*.py'; a glob with a '/' matches the
            path relative to `path`, e.g. 'src/**/*.ts'.
    """
    context = context_of(runtime)
    matcher = _Matcher(pattern)
    results: list[str] = []
    total = 0
    with locate(context.workspace, path) as top:
        where = top.rel
        if not top.exists:
            raise ToolError(f"'{where}' does not exist")
        info = os.stat(top.name, dir_fd=top.dir_fd, follow_symlinks=False)
        wanted = GitIgnoreSpec.from_lines([glob]) if glob else None
        typed = typed_relative(context.workspace, path)
        search = _Search(context.workspace, where, wanted, context, typed)
        if not stat.S_ISDIR(info.st_mode):
            files: Iterator[Located] = iter(() if search.is_protected(where) else [top])
            folder = None
        else:
            folder = open_folder(top)
            files = search.files(folder, _parts(where), search.ancestors())
        try:
            for found in files:
                if context.cancelled():
                    raise ToolError("search_files stopped: the person interrupted the run")
                for number, line in enumerate(search.lines(found), start=1):
                    if matcher.search(line):
                        total += 1
                        if len(results) < MAX_RESULTS:
                            text = line.rstrip()[:MAX_LINE_CHARS]
                            results.append(f"{found.rel}:{number}: {text}")
        finally:
            if folder is not None:
                os.close(folder)
    hint = "narrow the pattern, path or glob"
    if not total:
        return f"no matches for {pattern!r} in '{where}'" + (f" (glob {glob!r})" if glob else "")
    if total > len(results):
        results.append(f"[{len(results)} of {total} matches shown; {hint}]")
    else:
        results.append(f"[{counted(total, 'match')}]")
    return cap_output("\n".join(results), context.max_output_chars, hint=hint)
