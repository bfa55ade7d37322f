"""What a command line needs from outside the sandbox's box: approval mode `auto` runs a
confined command without asking only when this finds nothing.

The sandbox (tools/sandbox.py) lets a confined command write in the workspace alone and,
with `[sandbox] network = false`, reach no network; it still lets it read most files. So a
line is said to leave the box when it:

- is not plain (parse.py `simple`: a variable, a glob, `~`, a redirection, a substitution):
  what it names cannot be known word for word;
- runs a program whose work is the network (`curl`, `ssh`, `git push`, `pip install`...),
  or one that asks for privileges (`sudo`): confined, it could only fail, and a person
  should choose how it runs;
- names a path that leads outside the workspace, where the walk that the file tools use
  (tools.paths) says it leads: an absolute path elsewhere, `..` above the root, a link in
  the workspace to `~/.ssh`. Every word is looked at, and what follows `=`, an option's
  letter (`-o/etc/x`) and any quote or bracket inside it (`open('/etc/x')`), relative to
  each folder a `cd` in the line moves to; a `cd` inside a command it runs asks. So does a
  path to a file other programs run on their own (`.envrc`, `.git/hooks/...`, `.vscode/`:
  autorun_files.py), which the box would let it write.

This is a question worth asking, not the confinement: code a command runs (a script, `python
-c` with a computed path) can still read what the sandbox lets it read.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

from agentcli.policy.autorun_files import runs_on_its_own
from agentcli.policy.bash.parse import analyse
from agentcli.policy.bash.wrappers import basename

# programs whose work is the network, whatever their arguments
NETWORK = frozenset(
    "curl wget ssh scp sftp rsync nc ncat netcat socat telnet ftp ping ping6 dig nslookup"
    " host whois aria2c http https xh lynx w3m links".split()
)
# programs whose subcommands named here reach the network
NETWORK_SUBCOMMANDS = {
    "git": {"clone", "fetch", "pull", "push", "ls-remote", "submodule", "remote", "send-email"},
    "pip": {"install", "download", "search"},
    "pip3": {"install", "download", "search"},
    "uv": {"pip", "add", "sync", "lock", "tool", "run"},
    "npm": {"install", "i", "ci", "add", "publish", "update", "exec", "view"},
    "pnpm": {"install", "i", "add", "publish", "update", "dlx"},
    "yarn": {"install", "add", "publish", "upgrade", "dlx"},
    "cargo": {"install", "publish", "fetch", "update", "search"},
    "go": {"get", "install", "mod"},
    "gem": {"install", "push", "fetch"},
    "docker": {"pull", "push", "login", "run"},
    "podman": {"pull", "push", "login", "run"},
    "apt": {"install", "update", "upgrade"},
    "apt-get": {"install", "update", "upgrade"},
    "brew": {"install", "update", "upgrade"},
    "conda": {"install", "update", "create"},
    "gh": {"api", "pr", "issue", "repo", "release", "run"},
}
PRIVILEGED = frozenset("sudo su doas pkexec runuser".split())
MOVES = frozenset(("cd", "pushd"))
MAX_BASES = 16  # folders a line's `cd`s may lead to, tried for each relative path
# where a path may start inside a word: after one of these (a quote, a bracket, `=`...)
_STARTS = re.compile(r"(?:^|(?<=[\s'\"`(\[{=:,;<>|&]))(?=[/~]|\.\.)")
_ENDS = re.compile(r"[\s'\"`)\]},;:<>|&]")


def leaves_box(line: str, workspace: Path) -> str | None:
    """Why the command line needs more than the confined box gives (for the review), or None."""
    analysis = analyse(line)
    if analysis.simple is None:
        return f"agentcli cannot read it word for word ({analysis.reason or 'not plain'})"
    for command in analysis.commands:
        if not command.known:
            return "it runs a command agentcli cannot read"
        words = [w for w in command.words if w is not None]
        if why := _needs_out(words):
            return why
    bases = ["."]
    for plain in analysis.simple:
        for word in plain[1:]:
            if found := _outside(word, bases, workspace):
                return f"it names {found!r}, outside the workspace or run on its own"
        if basename(plain[0]) in MOVES:
            bases = _moved(bases, plain[1:])
            if not bases:
                return "it changes to a folder that may be outside the workspace"
    for command in analysis.commands:  # behind `bash -c`, `timeout`, `xargs`...
        if command.via and basename(command.words[0]) in MOVES:
            return "it changes folder inside a command it runs"
        for inner in command.words[1:]:
            if inner is not None and (found := _outside(inner, bases, workspace)):
                return f"it names {found!r}, outside the workspace or run on its own"
    return None


def _needs_out(words: list[str]) -> str | None:
    name = basename(words[0])
    if name in PRIVILEGED:
        return f"{name} asks for privileges the sandbox never gives"
    if name in NETWORK:
        return f"{name} reaches the network"
    subcommands = NETWORK_SUBCOMMANDS.get(name, set())
    if any(word in subcommands for word in words[1:]):
        return f"{name} {next(w for w in words[1:] if w in subcommands)} reaches the network"
    return None


def _moved(bases: list[str], args: tuple[str, ...]) -> list[str]:
    """Where `cd ARGS` leads from each base ([]: home, `-` or an option: unknown)."""
    targets = [a for a in args if a != "--"]
    if len(targets) != 1 or targets[0].startswith("-"):
        return []
    target = targets[0]
    moved = [target if target.startswith("/") else posixpath.join(b, target) for b in bases]
    return list(dict.fromkeys(moved))[:MAX_BASES]


def _outside(word: str, bases: list[str], workspace: Path) -> str | None:
    """The first path in `word` that leads outside the workspace from one of `bases`, or to
    a file other programs run on their own (autorun_files.py)."""
    for candidate in _candidates(word):
        if candidate.startswith("~"):
            return candidate
        for base in bases:
            path = candidate if candidate.startswith("/") else posixpath.join(base, candidate)
            if _leads_out(path, workspace):
                return candidate
    return None


def _candidates(word: str) -> list[str]:
    """The word, what follows each `=`, an option's value stuck to it, and each text in it
    that starts like a path (`/`, `~`, `..`) after a quote, bracket or separator."""
    found = [word]
    found += [part for part in word.split("=")[1:] if part]
    if word.startswith("-") and not word.startswith("--") and len(word) > 2:
        found.append(word[2:])
    for start in _STARTS.finditer(word):
        rest = word[start.start() :]
        end = _ENDS.search(rest)
        found.append(rest[: end.start()] if end else rest)
    return list(dict.fromkeys(c for c in found if c))


def _leads_out(path: str, workspace: Path) -> bool:
    from agentcli_tools.paths import resolve_relative

    if "\x00" in path or len(path) > 4096:
        return True
    rel = resolve_relative(workspace, path)
    return rel is None or runs_on_its_own(rel)
