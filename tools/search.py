"""search_files: a regular-expression search over the workspace's text files, like grep -rn."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

from pathspec import GitIgnoreSpec

from tools.base import Runtime, ToolError, builtin_tool, context_of
from tools.output import cap_output
from tools.paths import display_path, looks_binary, resolve_in_workspace

MAX_RESULTS = 200
MAX_LINE_CHARS = 300
MAX_FILE_BYTES = 5_000_000


class _GitIgnores:
    """The .gitignore files of the workspace, read once each, applied as git applies them."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self._specs: dict[Path, GitIgnoreSpec | None] = {}

    def _spec(self, directory: Path) -> GitIgnoreSpec | None:
        if directory not in self._specs:
            try:
                lines = (directory / ".gitignore").read_text(errors="replace").splitlines()
                self._specs[directory] = GitIgnoreSpec.from_lines(lines)
            except OSError:
                self._specs[directory] = None
        return self._specs[directory]

    def ignored(self, path: Path, is_dir: bool) -> bool:
        """Whether git would ignore ``path``: the deepest .gitignore with a matching rule wins."""
        verdict = False
        relative = path.relative_to(self.workspace)
        for depth, directory in enumerate(reversed(relative.parents)):
            spec = self._spec(self.workspace / directory)
            if spec is None:
                continue
            rel = Path(*relative.parts[depth:]).as_posix() + ("/" if is_dir else "")
            include = spec.check_file(rel).include
            if include is not None:
                verdict = include
        return verdict


def _files(root: Path, workspace: Path, glob: str | None) -> Iterator[Path]:
    """Files under ``root`` that are not ignored and match ``glob``, in a stable order."""
    if root.is_file():
        yield root
        return
    ignores = _GitIgnores(workspace)
    wanted = GitIgnoreSpec.from_lines([glob]) if glob else None
    for current, dirnames, filenames in os.walk(root):
        here = Path(current)
        dirnames[:] = sorted(
            d for d in dirnames if d != ".git" and not ignores.ignored(here / d, is_dir=True)
        )
        for name in sorted(filenames):
            path = here / name
            if ignores.ignored(path, is_dir=False):
                continue
            if wanted is not None and not wanted.match_file(path.relative_to(root).as_posix()):
                continue
            if path.is_symlink():
                try:
                    path = resolve_in_workspace(workspace, str(path))
                except ToolError:
                    continue  # a link that leads outside the workspace is not followed
            yield path


def _searchable(path: Path) -> bool:
    try:
        return path.is_file() and path.stat().st_size <= MAX_FILE_BYTES and not looks_binary(path)
    except OSError:
        return False


@builtin_tool
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
    try:
        regex = re.compile(pattern)
    except re.error as exc:
        raise ToolError(f"invalid regular expression {pattern!r}: {exc}") from exc
    context = context_of(runtime)
    workspace = context.workspace.resolve()
    root = resolve_in_workspace(workspace, path)
    if not root.exists():
        raise ToolError(f"'{display_path(workspace, root)}' does not exist")
    results: list[str] = []
    total = 0
    for file in _files(root, workspace, glob):
        if not _searchable(file):
            continue
        shown = display_path(workspace, file)
        with file.open(encoding="utf-8", errors="replace") as handle:
            for number, line in enumerate(handle, start=1):
                if regex.search(line):
                    total += 1
                    if len(results) < MAX_RESULTS:
                        results.append(f"{shown}:{number}: {line.rstrip()[:MAX_LINE_CHARS]}")
    where = display_path(workspace, root)
    hint = "narrow the pattern, path or glob"
    if not total:
        return f"no matches for {pattern!r} in '{where}'" + (f" (glob {glob!r})" if glob else "")
    if total > len(results):
        results.append(f"[{len(results)} of {total} matches shown; {hint}]")
    else:
        results.append(f"[{total} matches]")
    return cap_output("\n".join(results), context.max_output_chars, hint=hint)
