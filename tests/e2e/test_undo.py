"""Undo through the installed command: every byte the agent's calls changed comes back,
shell commands included, and the person's `.git` and edits are left alone."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest

from tests.e2e.conftest import Agent
from tests.helpers.scripted_server import text, tool_calls
from tests.helpers.terminal import CHOICE, PROMPT, leave

BINARY = bytes(range(256)) * 4


def tree_of(root: Path) -> dict[str, bytes]:
    """Every file under `root` (symlinks as their target), by relative path."""
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_symlink():
            out[str(path.relative_to(root))] = b"-> " + str(path.readlink()).encode()
        elif path.is_file():
            out[str(path.relative_to(root))] = path.read_bytes()
    return out


def digest(root: Path) -> str:
    return hashlib.sha256(repr(sorted(tree_of(root).items())).encode()).hexdigest()


def seed(workspace: Path, git: bool) -> None:
    src = workspace / "src"
    src.mkdir()
    (src / "a.txt").write_text("first line\nsecond line\n")
    (src / "b.py").write_text("def f():\n    return 1\n")
    (src / "c.txt").write_text("to be removed\n")
    (src / "d.txt").write_text("to be renamed\n")
    (src / "e.cfg").write_text("mode = x\nlevel = x\n")
    (src / "blob.bin").write_bytes(BINARY)
    if git:
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "seed"]):
            subprocess.run(
                ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
                cwd=workspace,
                check=True,
            )


def change_everything(agent: Agent, message: str = "change things") -> str:
    """One turn that writes over a file, edits one, and runs rm, mv and sed -i; its thread."""
    agent.server.push(
        tool_calls(
            ("write_file", {"path": "src/a.txt", "content": "overwritten\n"}),
            ("edit_file", {"path": "src/b.py", "old_text": "return 1", "new_text": "return 2"}),
        ),
        tool_calls(
            (
                "shell",
                {
                    "command": "rm src/c.txt && mv src/d.txt src/moved.txt"
                    " && sed -i s/x/y/g src/e.cfg && printf new > src/new.txt"
                    " && printf '\\377' >> src/blob.bin"
                },
            )
        ),
        text("Done."),
    )
    result = agent.run("run", message, "--auto-approve", "-o", "json")
    assert result.returncode == 0, result.stderr
    assert (agent.workspace / "src" / "moved.txt").exists()
    return json.loads(result.stdout)["thread_id"]


@pytest.mark.parametrize("git", [True, False], ids=["git", "not-git"])
def test_undo_restores_every_byte_and_rewinds_the_thread(agent: Agent, git: bool) -> None:
    seed(agent.workspace, git)
    before, dot_git = tree_of(agent.workspace / "src"), None
    if git:
        dot_git = digest(agent.workspace / ".git")
    thread = change_everything(agent)
    assert tree_of(agent.workspace / "src") != before

    result = agent.run("undo", thread, "--yes")
    assert result.returncode == 0, result.stderr
    assert tree_of(agent.workspace / "src") == before
    assert "files restored (8)" in result.stderr
    fork = result.stdout.strip()
    assert fork != thread
    history = agent.run("threads", "history", fork, "--json")
    assert json.loads(history.stdout) == []  # back before the only message
    if git:
        assert digest(agent.workspace / ".git") == dot_git
        status = subprocess.run(
            ["git", "status", "--porcelain"], cwd=agent.workspace, capture_output=True, text=True
        )
        assert status.stdout == ""
    # the thread undone stays whole: undo is itself undone by forking it
    assert len(json.loads(agent.run("threads", "history", thread, "--json").stdout)) == 1


def test_files_only_keeps_the_conversation_and_tells_the_model(agent: Agent) -> None:
    seed(agent.workspace, git=False)
    before = tree_of(agent.workspace / "src")
    thread = change_everything(agent)
    result = agent.run("undo", thread, "--files-only", "--yes")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == thread
    assert tree_of(agent.workspace / "src") == before
    agent.server.push(text("Noted."))
    assert agent.run("run", "--thread", thread, "and now?").returncode == 0
    said = agent.server.requests[-1]["messages"][-1]["content"]
    assert "<agentcli_note>" in said and "src/a.txt" in said and said.endswith("and now?")
    agent.server.push(text("Again."))
    agent.run("run", "--thread", thread, "once more")
    assert "agentcli_note" not in agent.server.requests[-1]["messages"][-1]["content"]


def test_conversation_only_leaves_the_files(agent: Agent) -> None:
    seed(agent.workspace, git=False)
    thread = change_everything(agent)
    after = tree_of(agent.workspace / "src")
    result = agent.run("undo", thread, "--conversation-only", "--yes")
    assert result.returncode == 0, result.stderr
    assert tree_of(agent.workspace / "src") == after
    assert result.stdout.strip() != thread
    # deleting the thread drops its snapshot records
    from agentcli.config import Settings
    from agentcli.undo.call_snapshots import WorkspaceSnapshots

    snapshots = WorkspaceSnapshots(Settings(db=agent.db).snapshots_dir)
    assert len(snapshots.changes(thread, agent.workspace)) == 3
    assert agent.run("threads", "delete", thread, "--yes").returncode == 0
    assert snapshots.changes(thread, agent.workspace) == []


def test_a_file_changed_since_is_not_overwritten_without_force(agent: Agent) -> None:
    seed(agent.workspace, git=False)
    before = tree_of(agent.workspace / "src")
    thread = change_everything(agent)
    (agent.workspace / "src" / "a.txt").write_text("the person's own edit\n")
    refused = agent.run("undo", thread, "--yes")
    assert refused.returncode == 1
    assert "changed outside agentcli since: src/a.txt;" in refused.stderr
    assert (agent.workspace / "src" / "a.txt").read_text() == "the person's own edit\n"
    assert (agent.workspace / "src" / "moved.txt").exists()  # nothing was restored
    forced = agent.run("undo", thread, "--yes", "--force")
    assert forced.returncode == 0, forced.stderr
    assert tree_of(agent.workspace / "src") == before


def test_undo_to_an_earlier_message_restores_across_turns(agent: Agent) -> None:
    seed(agent.workspace, git=False)
    before = tree_of(agent.workspace / "src")
    thread = change_everything(agent)
    agent.server.push(
        tool_calls(("write_file", {"path": "src/a.txt", "content": "second turn\n"})), text("ok")
    )
    assert agent.run("run", "--thread", thread, "more", "--auto-approve").returncode == 0
    last = agent.run("undo", thread, "--yes", "--files-only")
    assert last.returncode == 0, last.stderr
    assert (agent.workspace / "src" / "a.txt").read_text() == "overwritten\n"
    assert "files restored (1): src/a.txt" in last.stderr
    first = agent.run("undo", thread, "--to", "1", "--yes")
    assert first.returncode == 0, first.stderr
    assert tree_of(agent.workspace / "src") == before


def test_undo_asks_at_a_terminal_and_needs_yes_elsewhere(agent: Agent) -> None:
    seed(agent.workspace, git=False)
    thread = change_everything(agent)
    result = agent.run("undo", thread)
    assert result.returncode == 2
    assert "needs --yes when not at a terminal" in result.stderr
    child = agent.spawn("undo", thread)
    child.expect(r"files to restore \(8\)")
    child.expect(r"Undo\? \[y/N\]")
    child.sendline("n")
    child.expect_exact(pexpect_eof())
    child.close()
    assert child.exitstatus == 1
    assert (agent.workspace / "src" / "moved.txt").exists()


def pexpect_eof() -> object:
    import pexpect

    return pexpect.EOF


def test_diff_shows_what_the_shell_command_changed(agent: Agent) -> None:
    seed(agent.workspace, git=False)
    thread = change_everything(agent)
    # each record names the thread's checkpoint its call's step started from
    from agentcli.config import Settings
    from agentcli.undo.call_snapshots import WorkspaceSnapshots

    snapshots = WorkspaceSnapshots(Settings(db=agent.db).snapshots_dir)
    records = snapshots.changes(thread, agent.workspace)
    saver = agent.store().saver
    for record in records:
        config = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
        config["configurable"]["checkpoint_id"] = record.checkpoint
        assert record.checkpoint and saver.get_tuple(config) is not None
    result = agent.run("diff", thread)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.startswith("# message 1\n")
    assert "-mode = x\n-level = x\n+mode = y\n+level = y\n" in out  # sed -i
    assert "deleted file mode" in out and "-to be removed" in out  # rm
    assert "+++ b/src/moved.txt" in out  # mv
    assert "-    return 1\n+    return 2" in out  # edit_file
    assert agent.run("diff", thread, "--turn", "2").stderr.startswith("no file changed")
    # the patch applies back: reverse it in a copy of the workspace
    shows = agent.run("threads", "show", thread)
    assert "changed 2 files: src/a.txt" not in shows.stdout  # one line per call
    assert "changed 1 file: src/a.txt" in shows.stdout
    assert "changed 6 files" in shows.stdout  # the shell call
    calls = [
        call
        for entry in json.loads(agent.run("threads", "show", thread, "--json").stdout)["entries"]
        for call in entry.get("calls", [])
    ]
    assert [c.get("changed_files") for c in calls] == [
        ["src/a.txt"],
        ["src/b.py"],
        ["src/blob.bin", "src/c.txt", "src/d.txt", "src/e.cfg", "src/moved.txt", "src/new.txt"],
    ]


def test_fork_at_a_message_with_the_files_as_they_were(agent: Agent) -> None:
    seed(agent.workspace, git=False)
    before = tree_of(agent.workspace / "src")
    thread = change_everything(agent)
    result = agent.run("threads", "fork", thread, "--at", "1", "--restore-files")
    assert result.returncode == 0, result.stderr
    assert tree_of(agent.workspace / "src") == before
    assert "restored 8 files" in result.stderr
    assert json.loads(agent.run("threads", "history", result.stdout.strip(), "--json").stdout) == []
    needs_at = agent.run("threads", "fork", thread, "--restore-files")
    assert needs_at.returncode == 2 and "--restore-files needs --at N" in needs_at.stderr


def test_files_over_the_size_limit_and_ignored_files_are_named(agent: Agent) -> None:
    (agent.workspace / ".gitignore").write_text("build/\n")
    (agent.workspace / "big.dat").write_bytes(b"0" * 2_000_000)
    (agent.workspace / "config.toml").write_text("[undo]\nmax_file_mb = 1\n")
    config = str(agent.workspace / "config.toml")
    agent.server.push(
        tool_calls(
            ("write_file", {"path": "big.dat", "content": "small now"}),
            ("write_file", {"path": "build/out.txt", "content": "built"}),
            ("write_file", {"path": "kept.txt", "content": "kept"}),
        )
    )
    parked = agent.run("run", "write them", "--config", config, "-o", "json")
    assert parked.returncode == 3, parked.stderr
    requests = {r["args"]["path"]: r.get("undo") for r in json.loads(parked.stdout)["pending"]}
    assert requests["big.dat"] == "big.dat is over the 1 MB snapshot limit ([undo] max_file_mb)"
    assert (
        requests["build/out.txt"]
        == "build/out.txt is ignored (.gitignore), so it is not in the snapshots"
    )
    assert requests["kept.txt"] is None


def test_chat_review_says_what_cannot_be_undone_and_slash_undo_restores(agent: Agent) -> None:

    (agent.workspace / "notes.txt").write_text("mine\n")
    agent.server.push(
        tool_calls(("shell", {"command": "printf theirs > notes.txt && printf x > more.txt"})),
        text("Changed them."),
    )
    child = agent.spawn("chat", "--sandbox", "off")
    child.expect(PROMPT)
    child.sendline("change my notes")
    child.expect("cannot be undone: the sandbox is off, so files it changes outside the workspace")
    child.expect(CHOICE)
    child.sendline("a")
    child.expect("Changed them.")
    assert (agent.workspace / "notes.txt").read_text() == "theirs"
    child.expect(PROMPT)
    child.sendline("/undo")
    child.expect(r"restored 2 files: more.txt, notes.txt")
    child.expect(r"undone: now on [\w-]+, forked from")
    assert (agent.workspace / "notes.txt").read_text() == "mine\n"
    assert not (agent.workspace / "more.txt").exists()
    leave(child)


def test_a_confined_command_cannot_touch_agentclis_data_in_the_workspace(agent: Agent) -> None:
    """Workspace = the home folder, which holds the thread database and the snapshots: a
    command in the sandbox may change the person's files but not agentcli's own."""
    home = Path(agent.env["HOME"])
    home.mkdir(exist_ok=True)
    (home / "notes.txt").write_text("mine\n")
    agent.server.push(tool_calls(("write_file", {"path": "notes.txt", "content": "first\n"})))
    agent.server.push(text("ok"))
    first = agent.run("run", "write", "-w", str(home), "--auto-approve", "-o", "json")
    assert first.returncode == 0, first.stderr
    thread = json.loads(first.stdout)["thread_id"]
    data = Path(agent.env["XDG_DATA_HOME"]) / "agentcli"
    db = (data / "threads.db").read_bytes()
    attack = (
        "rm -rf data/agentcli/snapshots; printf x > data/agentcli/threads.db;"
        " printf theirs > notes.txt"
    )
    agent.server.push(tool_calls(("shell", {"command": attack})), text("done"))
    second = agent.run("run", "--thread", thread, "go", "--auto-approve", "-o", "json")
    assert second.returncode == 0, second.stderr
    assert (home / "notes.txt").read_text() == "theirs"  # the person's file: writable
    assert (data / "snapshots").is_dir()
    assert (data / "threads.db").read_bytes()[:16] == db[:16]  # still SQLite, not "x"
    undone = agent.run("undo", thread, "--to", "1", "--yes")
    assert undone.returncode == 0, undone.stderr
    assert (home / "notes.txt").read_text() == "mine\n"


def test_only_calls_that_may_change_files_say_they_cannot_be_undone(agent: Agent) -> None:
    """A command that only reads (`ls -la`) has nothing to undo: its review says nothing
    about ignored files. One that may write, or that the check cannot read word for word,
    still does."""
    (agent.workspace / ".gitignore").write_text("build/\n")
    readers = ["ls -la", "ls -la | wc -l && cat .gitignore", "grep -rn x . ; du -sh ."]
    writers = ["touch new.txt", "ls -la > list.txt", "./ls -la", "ls $(touch y)", "sort -o a b"]
    agent.server.push(tool_calls(*(("shell", {"command": c}) for c in readers + writers)))
    parked = agent.run("run", "look around", "-o", "json")
    assert parked.returncode == 3, parked.stderr
    notes = {r["args"]["command"]: r.get("undo") for r in json.loads(parked.stdout)["pending"]}
    assert {c: notes[c] for c in readers} == dict.fromkeys(readers)
    for command in writers:
        assert "changes to ignored files" in notes[command], command
