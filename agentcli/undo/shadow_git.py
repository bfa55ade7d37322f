"""A git object store of the workspace's states, kept outside the workspace and outside any
repository of the person's own (`<data folder>/snapshots/<key>.git`).

Git is run with the store as its repository and the workspace as its work tree, with no
system or global configuration (the person's filters, hooks and fsmonitor never run on
workspace files) and an index of the store's own, so the person's `.git` is never read
or written. Git's index makes a snapshot incremental: files whose size and mtime did not
change are not read again.
"""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agentcli.errors import SnapshotError
from agentcli.undo.file_modes import Modes, decode, encode, file_mode, keep_mode, modes_of
from agentcli.undo.git_own_paths import refused
from agentcli.undo.private_paths import exclude_pattern, relative

MAX_CHANGED_FILES = 100_000
# the configuration git runs under: nothing of the person's, nothing that starts a program
_SETTINGS = (
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.autocrlf=false",
    "core.symlinks=true",
    "core.quotePath=false",
    "core.untrackedCache=true",
    "core.splitIndex=false",
    "gc.auto=0",
    "diff.external=",
    "diff.noprefix=false",
    "protocol.allow=never",
)
# the attributes git reads first ($GIT_DIR/info/attributes wins over the workspace's
# .gitattributes): files are kept and put back byte for byte, never converted (line ends,
# $Id$, encodings) or passed through a filter
_ATTRIBUTES = "* -text !eol -crlf -ident -filter !working-tree-encoding !diff -merge\n"
_ARGS_BYTES = 64_000  # paths per git command line, in bytes: far below the system's limit


@dataclass
class Snapshot:
    """One state of the workspace: a tree in the store, and the files it does not hold."""

    tree: str
    # not kept: over the size cap, a repository of its own, a name git refuses (.GIT/x)
    skipped: list[str] = field(default_factory=list)
    modes: str = ""  # the blob of the files' and folders' modes (file_modes.py)


class ShadowRepo:
    """The store for one workspace."""

    def __init__(
        self, root: Path, workspace: Path, max_file_bytes: int, private: Sequence[Path] = ()
    ) -> None:
        self.workspace = workspace.resolve()
        # agentcli's own files (the store, the thread database) when they lie in the
        # workspace (a workspace that is the home folder): never snapshotted, never restored
        self._private = [exclude_pattern(p, self.workspace) for p in (root, *private)]
        self._private_rel = {r for p in (root, *private) if (r := relative(p, self.workspace))}
        key = hashlib.sha256(str(self.workspace).encode()).hexdigest()[:16]
        self.git_dir = root / f"{key}.git"
        self.max_file_bytes = max_file_bytes
        exclude = self.workspace / ".git" / "info" / "exclude"  # read, never written
        self._settings = [*_SETTINGS]
        if exclude.is_file():
            self._settings.append(f"core.excludesFile={exclude}")
        self._env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.git_dir),
            "LC_ALL": "C",
            "GIT_DIR": str(self.git_dir),
            "GIT_WORK_TREE": str(self.workspace),
            "GIT_INDEX_FILE": str(self.git_dir / "agentcli-index"),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_LITERAL_PATHSPECS": "1",  # a path is a path, never a pattern
            "GIT_AUTHOR_NAME": "agentcli",
            "GIT_AUTHOR_EMAIL": "agentcli@localhost",
            "GIT_COMMITTER_NAME": "agentcli",
            "GIT_COMMITTER_EMAIL": "agentcli@localhost",
        }

    def git(self, *args: str, stdin: bytes | None = None, check: bool = True) -> bytes:
        done = self._run(args, stdin)
        if check and done.returncode != 0:
            why = done.stderr.decode(errors="replace").strip().splitlines()
            raise SnapshotError(f"git {args[0]} failed: {why[-1] if why else done.returncode}")
        return done.stdout

    def _run(
        self, args: tuple[str, ...], stdin: bytes | None, literal: bool = True
    ) -> subprocess.CompletedProcess:
        command = ["git"]
        for setting in self._settings:
            command += ["-c", setting]
        try:
            return subprocess.run(
                [*command, *args],
                input=stdin,
                capture_output=True,
                env=self._env if literal else {**self._env, "GIT_LITERAL_PATHSPECS": "0"},
                cwd=self.workspace,
                check=False,
            )
        except FileNotFoundError as exc:
            raise SnapshotError("undo needs git installed (snapshots are kept with it)") from exc

    def ignored(self, rel: str) -> bool:
        """Whether the workspace's ignore files leave `rel` out of the snapshots."""
        # check-ignore takes paths, never patterns, and refuses the literal pathspec setting
        done = self._run(("check-ignore", "-q", "--no-index", "--", rel), None, literal=False)
        return done.returncode == 0

    def ignored_entries(self) -> list[str]:
        """The files and folders (`build/`) the workspace's ignore files leave out of the
        snapshots, as they are now. An ignored folder is one entry: what is in it is not
        read. agentcli's own files (the store, the database) are not among them, nor a
        folder that holds them (git names the folder when all it holds is ignored)."""
        self.ensure()
        listed = self.git("ls-files", "-z", "-o", "-i", "--exclude-standard", "--directory")
        found = sorted({p for p in listed.decode("utf-8", "surrogateescape").split("\0") if p})
        folders = tuple(p for p in found if p.endswith("/"))
        ours = tuple(f"{p}/" for p in self._private_rel)
        return [
            _readable(p)  # for messages only: a name that is not UTF-8 shown with "?"
            for p in found
            if not any(f"{p.rstrip('/')}/".startswith(mine) or mine.startswith(p) for mine in ours)
            and not any(p != f and p.startswith(f) for f in folders)
        ]

    def ensure(self) -> None:
        if not (self.git_dir / "HEAD").is_file():
            self.git_dir.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            try:
                subprocess.run(
                    ["git", "init", "-q", "--bare", str(self.git_dir)],
                    env={
                        k: v for k, v in self._env.items() if not k.startswith(("GIT_D", "GIT_W"))
                    },
                    capture_output=True,
                    check=True,
                )
            except (OSError, subprocess.CalledProcessError) as exc:
                raise SnapshotError(
                    f"cannot make the snapshot store {self.git_dir}: {exc}"
                ) from exc
            (self.git_dir / "agentcli-workspace").write_text(str(self.workspace) + "\n")
        info = self.git_dir / "info"
        own = "".join(f"{p}\n" for p in self._private if p)
        for name, text in (("attributes", _ATTRIBUTES), ("exclude", own)):
            if not (info / name).is_file() or (info / name).read_text() != text:
                info.mkdir(exist_ok=True)
                (info / name).write_text(text)

    def snapshot(self) -> Snapshot:
        """The workspace as it is now (ignored files left out, files over the cap too)."""
        self.ensure()
        listed = self.git("ls-files", "-z", "-m", "-o", "-d", "--exclude-standard")
        changed = sorted({p for p in listed.decode("utf-8", "surrogateescape").split("\0") if p})
        # a folder listed as such is a repository of its own (a .git in it): git keeps none
        # of its files, only a pointer to its commit (and refuses one without commits)
        nested = [p for p in changed if p.endswith("/")]
        changed = [p for p in changed if not p.endswith("/")]
        if len(changed) > MAX_CHANGED_FILES:  # a home folder, say: hashing it all takes minutes
            raise SnapshotError(
                f"{len(changed):,} files changed or new since the last snapshot (more than"
                f" {MAX_CHANGED_FILES:,}; .gitignore the big folders): no snapshot taken"
            )
        # a path git refuses (.GIT/x, git~1/x) would make it refuse the whole snapshot
        skipped = [p for p in changed if refused(p, self.workspace) or self._too_big(p)]
        if skipped:  # not kept: the store forgets them rather than keep an older version
            self.git(
                "rm", "-q", "-f", "--cached", "--ignore-unmatch", "--pathspec-from-file=-",
                "--pathspec-file-nul", stdin=_nul(skipped),
            )  # fmt: skip
        # a file under a folder that became a symlink is taken as part of the link's change
        keep = list(dict.fromkeys(self._below_links(p) for p in changed if p not in skipped))
        if keep:
            self.git("add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul", stdin=_nul(keep))
        tree = self.git("write-tree").decode().strip()
        held = self.git("ls-files", "-z").decode("utf-8", "surrogateescape").split("\0")
        modes = encode(modes_of(self.workspace, [p for p in held if p]))
        blob = self.git("hash-object", "-w", "--stdin", stdin=modes).decode().strip()
        return Snapshot(tree, skipped + self._big_unchanged(skipped) + nested, blob)

    def modes(self, blob: str) -> Modes | None:
        """The modes a snapshot kept (None: a record made before snapshots kept them)."""
        if not blob:
            return None
        return decode(self.git("cat-file", "blob", blob))

    def _below_links(self, rel: str) -> str:
        """`rel`, or its first parent folder that is now a symlink (or no folder at all)."""
        parts = rel.split("/")
        for depth in range(1, len(parts)):
            parent = "/".join(parts[:depth])
            try:
                if not stat.S_ISDIR(os.lstat(self.workspace / parent).st_mode):
                    return parent
            except OSError:
                return rel  # gone: the deletion is recorded as it is
        return rel

    def _too_big(self, rel: str) -> bool:
        try:
            return os.lstat(self.workspace / rel).st_size > self.max_file_bytes
        except OSError:
            return False  # gone: recorded as deleted

    def known_big(self) -> list[str]:
        """The files over the size cap the last snapshot found (none before the first)."""
        known = self.git_dir / "agentcli-skipped"
        try:
            return [p for p in known.read_text().split("\0") if p]
        except OSError:
            return []

    def _big_unchanged(self, skipped: list[str]) -> list[str]:
        """Files skipped by an earlier snapshot and still there unchanged: git lists them as
        untracked only while they change, so the store remembers them in a file."""
        known = self.git_dir / "agentcli-skipped"
        before = known.read_text().split("\0") if known.is_file() else []
        still = sorted({p for p in [*before, *skipped] if p and self._too_big(p)})
        known.write_text("\0".join(still))
        return [p for p in still if p not in skipped]

    def commit(self, tree: str, parent: str | None, message: str) -> str:
        args = ["commit-tree", tree, "-F", "-"] + (["-p", parent] if parent else [])
        return self.git(*args, stdin=message.encode()).decode().strip()

    def ref(self, name: str) -> str | None:
        out = self.git("rev-parse", "-q", "--verify", f"{name}^{{commit}}", check=False)
        return out.decode().strip() or None

    def set_ref(self, name: str, commit: str) -> None:
        self.git("update-ref", name, commit)

    def _each(self, args: list[str], paths: list[str]) -> bytes:
        """`git *args -- paths`, run as often as the paths need to stay under the system's
        limit on a command line's length (a call may change tens of thousands of files)."""
        out, batch, size = b"", [], 0
        for path in paths:
            batch.append(path)
            size += len(path.encode("utf-8", "surrogateescape")) + 1
            if size >= _ARGS_BYTES:
                out += self.git(*args, "--", *batch)
                batch, size = [], 0
        return out + (self.git(*args, "--", *batch) if batch else b"")

    def changed(self, a: str, b: str, paths: list[str] | None = None) -> list[str]:
        """The paths whose content or mode differs between two trees (among `paths`)."""
        if paths is not None and not paths:
            return []
        args = ["diff-tree", "-r", "-z", "--no-renames", "--name-only", a, b]
        out = self._each(args, paths) if paths else self.git(*args)
        return [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]

    def diff(self, a: str, b: str, paths: list[str]) -> str:
        if not paths:
            return ""
        args = ["diff-tree", "-p", "-r", "--no-color", "--no-ext-diff", "--no-textconv"]
        out = self._each([*args, "--no-renames", a, b], paths)
        return out.decode("utf-8", "replace")

    def restore(self, tree: str, paths: list[str]) -> None:
        """Put `paths` back as `tree` holds them: written from the store, or removed where
        the tree has no such file. The index must hold the workspace as it is (a snapshot
        just before); git then never writes or removes through a symlinked folder (it
        replaces the link with the folder). Each file keeps the permissions it has now
        (those the snapshot kept are put back after: rewind.restore)."""
        present = set(self.present(tree, paths))
        gone = [p for p in paths if p not in present]
        back = [p for p in paths if p in present]
        if gone:  # first: a link the call put where a folder was goes before the folder's files
            self.git(
                "rm", "-q", "-f", "--ignore-unmatch", "--pathspec-from-file=-",
                "--pathspec-file-nul", stdin=_nul(gone),
            )  # fmt: skip
        if back:
            modes = {p: m for p in back if (m := file_mode(self.workspace / p)) is not None}
            self.git(
                "checkout", tree, "--pathspec-from-file=-", "--pathspec-file-nul",
                stdin=_nul(back),
            )  # fmt: skip
            for path, mode in modes.items():
                keep_mode(self.workspace / path, mode)

    def present(self, tree: str, paths: list[str]) -> list[str]:
        if not paths:
            return []
        out = self._each(["ls-tree", "-r", "-z", "--name-only", tree], paths)
        return [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]


def _readable(path: str) -> str:
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _nul(paths: list[str]) -> bytes:
    return "\0".join(paths).encode("utf-8", "surrogateescape") + b"\0"
