"""The private temp folder of confined commands, and what of the real /tmp they still see.

Each agentcli process makes one folder for its confined commands' ``TMPDIR`` (0700, named
for its pid) and removes it at exit; a process killed before its exit leaves its folder,
which the next process of the same user removes. Where the mechanism makes /tmp private
(namespaces, bubblewrap), ``in_tmp`` names what of the real /tmp the command must still see:
the agent's own Python, the folders on PATH, and what the caller adds (an MCP server's
program and files).
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import tempfile
from collections.abc import Iterable

_temp: list[str] = []


def private_temp() -> str:
    """This process's temp folder for confined commands (0700), removed at exit; those of
    this user's processes that ended without removing theirs (killed) go first."""
    if not _temp:
        _sweep_temp()
        _temp.append(tempfile.mkdtemp(prefix=f"agentcli-tmp-{os.getpid()}-"))
        atexit.register(shutil.rmtree, _temp[0], ignore_errors=True)
    return _temp[0]


def _sweep_temp() -> None:
    """Remove the temp folders of this user's agentcli processes that are gone (the pid in
    the name no longer runs): folders, never links, owned by this user. Another agentcli
    may remove one at the same moment (its own at exit, or a sweep of its own)."""
    folder = tempfile.gettempdir()
    for entry in os.scandir(folder):
        found = re.fullmatch(r"agentcli-tmp-(\d+)-\w+", entry.name)
        if not found or not entry.is_dir(follow_symlinks=False):
            continue
        try:
            owner = entry.stat(follow_symlinks=False).st_uid
        except FileNotFoundError:  # removed since the folder was listed
            continue
        if owner != os.getuid():
            continue
        try:
            os.kill(int(found[1]), 0)
        except ProcessLookupError:
            shutil.rmtree(entry.path, ignore_errors=True)
        except (PermissionError, OverflowError):
            continue


def in_tmp(reach: Iterable[str]) -> list[str]:
    """What in /tmp a confined command must still see when /tmp is made private for it: the
    agent's own Python, the home folder, every folder on PATH (a virtual environment whole),
    and ``reach``.
    None of it comes from the model: the person's environment and configuration."""
    import sys

    home = os.path.expanduser("~")
    found = [sys.prefix, sys.exec_prefix, os.path.dirname(sys.executable), home, *reach]
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        if os.path.isabs(entry):
            venv = os.path.dirname(entry.rstrip("/"))
            found += [entry, venv] if os.path.isfile(f"{venv}/pyvenv.cfg") else [entry]
    real = {os.path.realpath(path) for path in found if path}
    return sorted(p for p in real if p.startswith("/tmp/") and os.path.exists(p))
