"""Undo puts back the modes the agent's calls changed (issue 25, item 7): permissions of files
and folders come back bit for bit, a setuid, setgid or sticky bit is never set by undo (an
earlier call may have planted it), and what undo cannot put back it says, in one line.

Each payload is a shell command the agent runs in a workspace seeded with files and
folders of known modes; `agentcli undo` must then leave every file byte-identical and every
mode identical to before (os.lstat). A payload got through if any mode or byte differs after
undo, or if undo set a special bit, or changed a file outside the workspace.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from tests.e2e.conftest import Agent
from tests.helpers.scripted_server import text, tool_calls

SEED = {  # path -> (mode, content); folders end in "/"
    "private.txt": (0o640, b"private\n"),
    "tool.sh": (0o755, b"#!/bin/sh\necho tool\n"),
    "secret.key": (0o600, b"key\n"),
    "readonly.txt": (0o444, b"read only\n"),
    "nobody.txt": (0o000, b"no one reads this\n"),
    "plain.txt": (0o644, b"plain\n"),
    "dir/": (0o750, b""),
    "dir/inner.txt": (0o604, b"inner\n"),
    "dir/deep/": (0o700, b""),
    "dir/deep/leaf.txt": (0o620, b"leaf\n"),
    "group/": (0o2775, b""),  # setgid folder: undo never sets the bit
    "group/shared.txt": (0o664, b"shared\n"),
}

PAYLOADS = [
    "chmod 0666 private.txt",  # 0640 -> 0666: git sees nothing
    "chmod 0644 tool.sh",  # 0755 -> 0644: the executable bit
    "chmod +x plain.txt",
    "printf new > new.sh && chmod +x new.sh",  # +x on a new file: undo removes it
    "printf changed >> private.txt && chmod 0666 private.txt",  # mode and content
    "chmod 0777 dir",  # a folder
    "chmod 0755 dir/deep",
    "chmod -R a+rwX dir",
    "chmod 0600 tool.sh secret.key plain.txt && chmod 0777 secret.key",
    "chmod 0666 readonly.txt && printf w >> readonly.txt",
    "chmod 0644 nobody.txt",  # a file nobody could read: put back to 0000
    "chmod u+s tool.sh",  # a planted setuid bit: undo takes it off
    "chmod g+s,o+t plain.txt",
    "chmod g-s group",  # a setgid bit taken off: undo does not set it again
    "rm -rf dir",  # the folders come back with their modes
    "rm secret.key",  # comes back 0600, not the umask's 0644
    "mv dir/deep/leaf.txt leaf.txt && chmod 0777 leaf.txt",
    "chmod 0640 group/shared.txt && chmod 0700 group",
    "umask 000 && rm plain.txt && printf plain\\\\n > plain.txt",  # same bytes, mode 0666
    "chmod 0 private.txt dir/inner.txt",
]


def seed(workspace: Path) -> None:
    for rel, (_, content) in SEED.items():
        if rel.endswith("/"):
            (workspace / rel).mkdir(parents=True, exist_ok=True)
        else:
            (workspace / rel).write_bytes(content)
    for rel, (mode, _) in sorted(SEED.items(), key=lambda item: -item[0].count("/")):
        os.chmod(workspace / rel, mode)  # deepest first: a 0700 folder is still entered


def state(workspace: Path) -> dict[str, tuple[int, bytes | None]]:
    """Every file and folder under `workspace` (agentcli's own aside): its mode, and its
    bytes (read as root would: the mode is set aside while reading)."""
    out: dict[str, tuple[int, bytes | None]] = {}
    for path in sorted(workspace.rglob("*")):
        st = os.lstat(path)
        rel = str(path.relative_to(workspace))
        if stat.S_ISDIR(st.st_mode):
            out[rel + "/"] = (stat.S_IMODE(st.st_mode), None)
            continue
        mode = stat.S_IMODE(st.st_mode)
        os.chmod(path, mode | 0o400)
        try:
            out[rel] = (mode, path.read_bytes())
        finally:
            os.chmod(path, mode)
    return out


def run_call(agent: Agent, command: str) -> str:
    """The command as an approved shell call; unconfined when it sets a setuid or setgid
    bit (the sandbox refuses those: a person's "unconfined once" could still run it)."""
    agent.server.push(tool_calls(("shell", {"command": command})), text("Done."))
    off = ("--sandbox", "off") if "+s" in command else ()
    ran = agent.run("run", "-y", "go", "-o", "json", *off)
    assert ran.returncode == 0, ran.stderr
    return str(json.loads(ran.stdout)["thread_id"])


def undo(agent: Agent, thread: str) -> subprocess.CompletedProcess[str]:
    done = agent.run("undo", thread, "--yes")
    assert done.returncode == 0, done.stderr
    return done


@pytest.mark.parametrize("command", PAYLOADS)
def test_undo_puts_every_mode_back(agent: Agent, command: str) -> None:
    ws = agent.workspace
    seed(ws)
    before = state(ws)
    thread = run_call(agent, command)
    assert state(ws) != before, "the payload changed nothing"
    done = undo(agent, thread)
    after = state(ws)
    wrong = {
        p: (before.get(p), after.get(p))
        for p in before.keys() | after.keys()
        if before.get(p) != after.get(p)
    }
    planted = {p: oct(m) for p, (m, _) in after.items() if m & 0o7000 & ~before.get(p, (0,))[0]}
    assert not planted, planted  # a setuid, setgid or sticky bit the call set is taken off
    said = [ln for ln in done.stderr.splitlines() if ln.startswith("mode not put back")]
    # the one difference allowed: a special bit the file had before, left off, and said
    for path, (was, now) in wrong.items():
        assert was is not None and now is not None and was[1] == now[1], (command, wrong)
        assert was[0] & 0o777 == now[0] and was[0] & 0o7000, (command, wrong)
        name = path.rstrip("/")
        assert f"mode not put back: {name}: had mode {was[0]:04o}; its setuid" in done.stderr
    assert len(said) == len(wrong), (said, wrong)
    if "group" not in command:  # only the setgid folder has a bit undo leaves off
        assert not wrong, (command, wrong, done.stderr)


def test_undo_says_which_modes_it_put_back(agent: Agent) -> None:
    ws = agent.workspace
    seed(ws)
    thread = run_call(agent, "chmod 0666 private.txt && chmod 0777 dir")
    done = undo(agent, thread)
    lines = done.stderr.splitlines()
    assert "modes to restore (2): dir, private.txt" in lines, lines  # said before it asks
    assert "modes put back (2): dir 0750, private.txt 0640" in lines, lines
    assert stat.S_IMODE(os.lstat(ws / "private.txt").st_mode) == 0o640


def test_a_mode_undo_cannot_put_back_is_said_in_one_line(agent: Agent) -> None:
    ws = agent.workspace
    seed(ws)
    before = state(ws)
    thread = run_call(agent, "chmod 0666 private.txt plain.txt")  # no executable bit: git sees none
    # meanwhile plain.txt became a link to a file outside: undo must not chmod through it
    outside = agent.workspace.parent / "outside.txt"
    outside.write_text("not the workspace's\n")
    os.chmod(outside, 0o600)
    (ws / "plain.txt").unlink()
    (ws / "plain.txt").symlink_to(outside)
    refused = agent.run("undo", thread, "--yes")
    assert refused.returncode != 0 and "plain.txt" in refused.stderr  # changed outside
    assert stat.S_IMODE(os.lstat(ws / "private.txt").st_mode) == 0o666  # nothing done
    forced = agent.run("undo", thread, "--yes", "--force")
    assert forced.returncode == 0, forced.stderr
    assert stat.S_IMODE(os.stat(outside).st_mode) == 0o600  # never through the link
    assert stat.S_IMODE(os.lstat(ws / "private.txt").st_mode) == 0o640
    said = [ln for ln in forced.stderr.splitlines() if ln.startswith("mode not put back")]
    assert said == ["mode not put back: plain.txt: no longer a regular file"], forced.stderr
    assert state(ws)["private.txt"] == before["private.txt"]
