"""The sandbox tool processes run in: which mode, by which mechanism, and how a failure it
caused is told apart.

``Sandbox`` is the setting (mode, network, the hosts of the egress proxy, extra writable
paths); ``plan()`` turns it into what tools/confine.py applies in the process that runs the
command, choosing the mechanism once per process: Landlock when the kernel has it, else
bubblewrap when it is installed, else none, and then a confined command does not start
(``SandboxUnavailable``, one line saying how to proceed). Nothing ever runs unconfined
because confining it failed.

Confined commands get a private temp folder (``TMPDIR``) and, where the mechanism makes
/tmp private, the plan's ``readable`` names what of the real /tmp they must still see
(tools/private_temp.py).

For tests only: ``AGENTCLI_TEST_SANDBOX_MISSING`` (a comma-separated list of "landlock",
"bwrap", "userns") makes this process behave as if the mechanisms it names were missing, to check
the refusal and the fallback. It can only take mechanisms away: with both gone, confined
commands refuse to start.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from .landlock import abi as landlock_abi
from .private_temp import in_tmp, private_temp

DEFAULT_MODE = "workspace-write"
MISSING_VARIABLE = "AGENTCLI_TEST_SANDBOX_MISSING"
CONFINE_SCRIPT = str(Path(__file__).with_name("confine.py"))
UNAVAILABLE = (
    "cannot confine the command: this system has neither Landlock (Linux 5.13+) nor"
    " bubblewrap; install bubblewrap, or run agentcli with --sandbox off"
    ' ([sandbox] mode = "off") to run commands unconfined'
)
# what a command prints when the sandbox refused it something (heuristic: see denied())
# (a .git or protected path bound read-only cannot be moved or removed: "busy")
_DENIALS = re.compile(
    r"Permission denied|Operation not permitted|Read-only file system|Device or resource busy",
    re.I,
)
_NO_NETWORK = re.compile(r"Network is unreachable|Connection refused", re.I)  # bubblewrap's
# where the egress proxy listens in the command's own network namespace, empty but for it
PROXY_PORT = 3128
PROXY_URL = f"http://127.0.0.1:{PROXY_PORT}"
PROXY_VARIABLES = (
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
)
NO_PROXY = ("NO_PROXY", "no_proxy")  # empty: no host is reached past the proxy
NO_PROXY_HERE = (
    "[sandbox] network lists hosts, but {why}: nothing here can keep a command's connections"
    " to the egress proxy, so it does not start. Set [sandbox] network = false (or true, to"
    " allow all of the network)"
)


class SandboxUnavailable(OSError):
    """No mechanism can confine a command here: it must not start."""


def _missing() -> set[str]:
    return {m.strip() for m in os.environ.get(MISSING_VARIABLE, "").split(",") if m.strip()}


@cache
def mechanism() -> tuple[str, int, str]:
    """("landlock", ABI, bubblewrap's path or "") or ("bwrap", 0, its path) or ("", 0, "")
    when neither is there: probed once per process."""
    missing = _missing()
    abi = 0 if "landlock" in missing else landlock_abi()
    found = "" if "bwrap" in missing else shutil.which("bwrap") or ""
    if abi >= 1:
        return "landlock", abi, found
    return ("bwrap", 0, found) if found else ("", 0, "")


def _chosen(network: bool) -> tuple[str, int, str]:
    """The mechanism for a sandbox: Landlock, but bubblewrap when the network is to be off
    and this Landlock (ABI < 4) cannot refuse TCP."""
    kind, abi, bwrap = mechanism()
    if kind == "landlock" and abi < 4 and not network and bwrap:
        return "bwrap", 0, bwrap
    return kind, abi, bwrap


def _in_git(workspace: Path) -> bool:
    """Whether the workspace is a git repository's, or inside one (a `.git` there or above)."""
    return any(os.path.lexists(folder / ".git") for folder in (workspace, *workspace.parents))


@dataclass(frozen=True)
class Sandbox:
    """The confinement of the processes tools start (``[sandbox]`` in the config)."""

    mode: str = DEFAULT_MODE
    network: bool = False
    # with the network off: the hosts the egress proxy lets commands reach (tools/egress.py)
    hosts: tuple[str, ...] = field(default_factory=tuple)
    writable: tuple[str, ...] = field(default_factory=tuple)
    # paths that stay read-only even inside the workspace (the caller's own data)
    protected: tuple[str, ...] = field(default_factory=tuple)

    @property
    def confines(self) -> bool:
        return self.mode != "off"

    @property
    def proxied(self) -> bool:
        """Whether commands reach the listed hosts through the egress proxy."""
        return self.confines and not self.network and bool(self.hosts)

    def plan(
        self, workspace: Path | str, reach: Iterable[str] = (), proxy: bool = False
    ) -> dict[str, Any] | None:
        """What confine.py applies (JSON), None when the mode is off; SandboxUnavailable
        when nothing here can confine. ``reach``: files the command is started with, kept
        visible under a private /tmp. ``proxy``: the caller serves the egress proxy
        (tools/egress_proxy.py) for the listed hosts; without it they are not reached."""
        if not self.confines:
            return None
        kind, abi, bwrap = _chosen(self.network)
        if not kind:
            raise SandboxUnavailable(UNAVAILABLE)
        proxied = proxy and self.proxied
        if proxied and (why := _no_proxy(kind, abi)):
            raise SandboxUnavailable(NO_PROXY_HERE.format(why=why))
        workspace = Path(workspace).resolve()
        extra = [str(Path(p).expanduser().resolve()) for p in self.writable]
        return {
            "mechanism": kind,
            "abi": abi,
            "bwrap": bwrap,
            "mode": self.mode,
            "workspace": str(workspace),
            "protect_git": kind == "landlock" and _in_git(workspace),
            "protected": [
                str(Path(p).resolve())
                for p in self.protected
                if Path(p).resolve().is_relative_to(workspace)
            ],
            "writable": [private_temp(), *(extra if self.mode == "workspace-write" else [])],
            "network": self.network,
            "proxy_port": PROXY_PORT if proxied else 0,
            "namespaces": "userns" not in _missing(),
            "readable": in_tmp(reach),
        }

    def probe(self, workspace: Path | str) -> list[str]:
        """The layers a confined command gets here, found by starting one (``true``) as
        the shell tool does: what ``doctor`` reports. [] when the mode is off;
        SandboxUnavailable or OSError when no confined command can start."""
        plan = self.plan(workspace, proxy=True)
        if plan is None:
            return []
        from .supervised import Supervised

        env = {"PATH": os.defpath, "TMPDIR": plan["writable"][0]}
        process = Supervised(["true"], grace=0.5, cwd=workspace, env=env, sandbox=plan)
        try:
            process.stdout.read()
            if process.wait() != 0:
                raise OSError(f"a confined `true` ended with {process.returncode}")
        finally:
            process.close()
            process.stdout.close()
            if process.listener is not None:  # the egress proxy's: nothing to serve
                process.listener.close()
        return process.layers

    def label(self) -> str:
        """One line: the mode, the network, and the mechanism (or why there is none)."""
        if not self.confines:
            return "off"
        net = "network on" if self.network else "network off"
        if self.proxied:
            net = f"network only to {', '.join(self.hosts)} (egress proxy)"
        kind, abi, _ = _chosen(self.network)
        how = f"Landlock ABI {abi}" if kind == "landlock" else kind or "no mechanism: refused"
        if kind == "landlock" and abi < 4 and not self.network:
            net = "network NOT confined: Landlock ABI < 4 cannot refuse TCP"
        return f"{self.mode}, {net} ({how}){self.ignored()}"

    def ignored(self) -> str:
        """What of the setting this mode does not use ("" when nothing): read-only stays
        read-only, whatever `writable` lists."""
        if self.mode == "read-only" and self.writable:
            return f"; writable ({', '.join(self.writable)}) ignored in read-only mode"
        return ""

    def launcher(self, workspace: Path | str, command: str, args: list[str]) -> list[str]:
        """The command line that starts ``command args`` confined (an MCP stdio server):
        confine.py applies the plan, then execs it. SandboxUnavailable as plan()."""
        program = shutil.which(command) or command
        files = [os.path.dirname(os.path.abspath(a)) for a in args if os.path.isfile(a)]
        plan = self.plan(workspace, reach=[program, *args, *files])  # a script's modules too
        if plan is None:
            return [command, *args]
        import json
        import sys

        return [sys.executable, "-S", "-I", CONFINE_SCRIPT, json.dumps(plan), command, *args]


def _no_proxy(kind: str, abi: int) -> str:
    """Why the egress proxy cannot confine a command here, or "" when it can: it needs a
    network namespace of the command's own (made with the mount namespace) and Landlock's
    TCP rules (ABI 4)."""
    if kind != "landlock":
        return "this system has no Landlock (bubblewrap cannot reach the proxy)"
    if abi < 4:
        return f"this kernel's Landlock (ABI {abi}) has no TCP rules (ABI 4, Linux 6.7)"
    if "userns" in _missing():
        return "user namespaces are off"
    return ""


def proxy_environment() -> dict[str, str]:
    """The variables that send a confined command's HTTP(S) through the egress proxy."""
    return {**dict.fromkeys(PROXY_VARIABLES, PROXY_URL), **dict.fromkeys(NO_PROXY, "")}


def denied(plan: dict[str, Any] | None, returncode: int | None, output: str) -> str | None:
    """A note for the model and the person when a confined command failed in a way the
    sandbox may have caused, or None. A heuristic: the command ended non-zero and its output
    says permission was denied, the file system is read-only or the network unreachable;
    (with the network off, also that a connection was refused or the network unreachable);
    it can be wrong both ways (a command that prints such words for another reason, or one
    that hides the error)."""
    if plan is None or not returncode:
        return None
    if not _DENIALS.search(output) and (plan["network"] or not _NO_NETWORK.search(output)):
        return None
    places = [plan["workspace"]] if plan["mode"] == "workspace-write" else []
    places += ["$TMPDIR", *plan["writable"][1:]]  # the temp folder's path differs inside
    git = " (its .git stays read-only)" if plan["mode"] == "workspace-write" else ""
    net = "" if plan["network"] else "; TCP connections and listening are refused"
    if plan.get("proxy_port"):
        net = "; TCP connections go only through the egress proxy ($HTTPS_PROXY) to the hosts"
        net += " [sandbox] network lists"
    return (
        f"[sandbox] this command ran confined ({plan['mode']}): it may write only in"
        f" {', '.join(places)}{git}{net}. The error above may be the sandbox's, not the"
        " command's. If the command needs more, say so: the person can run it unconfined"
        " once."
    )
