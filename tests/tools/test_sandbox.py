"""The sandbox's mechanism (tools/sandbox.py, tools/confine.py): the rights asked of each
Landlock ABI, no mechanism refusing rather than running unconfined, and the note a refusal
gets."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from agentcli_tools import landlock as confine
from agentcli_tools import private_temp as temp_folder
from agentcli_tools.sandbox import Sandbox, SandboxUnavailable, denied, mechanism


def test_each_abi_is_asked_only_the_rights_it_knows() -> None:
    one, on_files_one = confine.rights(1)
    assert not one & (confine.REFER | confine.TRUNCATE) and on_files_one == confine.WRITE_FILE
    two, _ = confine.rights(2)
    assert two & confine.REFER and not two & confine.TRUNCATE
    seven, on_files = confine.rights(7)
    assert seven & confine.TRUNCATE and on_files == confine.WRITE_FILE | confine.TRUNCATE
    assert not seven & 1  # EXECUTE, READ_FILE and READ_DIR are never handled: reads stay
    assert not seven & (1 << 2 | 1 << 3)
    assert seven & confine.IOCTL_DEV and not confine.rights(4)[0] & confine.IOCTL_DEV


def test_no_mechanism_refuses_and_never_plans_unconfined(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("AGENTCLI_TEST_SANDBOX_MISSING", "landlock,bwrap")
    mechanism.cache_clear()
    try:
        with pytest.raises(SandboxUnavailable, match="install bubblewrap, or run agentcli"):
            Sandbox().plan(tmp_path)
        assert Sandbox(mode="off").plan(tmp_path) is None
        assert "refused" in Sandbox().label()
    finally:
        mechanism.cache_clear()


def test_the_note_comes_only_for_a_confined_failure_that_reads_as_a_refusal(tmp_path) -> None:
    plan = {"mode": "workspace-write", "workspace": str(tmp_path), "writable": ["/t"]}
    plan["network"] = False
    assert denied(plan, 1, "touch: cannot touch '/etc/x': Permission denied")
    assert denied(plan, 1, "connect: Connection refused")
    assert denied(plan, 0, "Permission denied") is None
    assert denied(None, 1, "Permission denied") is None
    assert denied(plan, 2, "error: no such file") is None
    assert denied({**plan, "network": True}, 1, "Connection refused") is None


def test_the_temp_folders_of_killed_processes_are_swept(monkeypatch, tmp_path) -> None:
    """A process killed before its exit handler leaves its temp folder: the next one
    removes it, and never a running process's, a link, or another name."""
    monkeypatch.setattr(temp_folder.tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(temp_folder, "_temp", [])
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    gone = tmp_path / f"agentcli-tmp-{dead}-abc"
    (gone / "sub").mkdir(parents=True)
    live = tmp_path / f"agentcli-tmp-{os.getppid()}-abc"
    live.mkdir()
    other = tmp_path / "agentcli-tmp-old"
    other.mkdir()
    target = tmp_path / "target"
    target.mkdir()
    link = tmp_path / f"agentcli-tmp-{dead}-link"
    link.symlink_to(target)
    made = temp_folder.private_temp()
    assert made.startswith(str(tmp_path / f"agentcli-tmp-{os.getpid()}-"))
    assert not gone.exists()
    assert live.exists() and other.exists() and link.is_symlink() and target.exists()


def test_a_temp_folder_another_agentcli_removes_meanwhile_is_passed_over(
    monkeypatch, tmp_path
) -> None:
    """Two agentcli processes sweep at once, or one removes its own folder at exit, between
    this one's listing and its look at a folder: the first confined command still starts
    (it failed with a bare FileNotFoundError, under parallel test runs)."""
    monkeypatch.setattr(temp_folder.tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(temp_folder, "_temp", [])
    going = tmp_path / "agentcli-tmp-1-abc"
    going.mkdir()
    listed = list(os.scandir(tmp_path))
    going.rmdir()  # by the other process, after this one listed the folder
    monkeypatch.setattr(temp_folder.os, "scandir", lambda folder: iter(listed))
    made = temp_folder.private_temp()
    assert made.startswith(str(tmp_path / f"agentcli-tmp-{os.getpid()}-"))


def test_listed_hosts_get_the_proxy_only_where_it_confines(monkeypatch, tmp_path) -> None:
    """The proxy's port goes in the plan of a caller that serves it (the shell), never in an
    MCP server's launcher (no one serves it: no network); where there is no network namespace
    or no Landlock TCP rules, a command with listed hosts is refused, never given the network."""
    listed = Sandbox(hosts=("pypi.org",))
    if mechanism()[0] == "landlock" and mechanism()[1] >= 4:
        plan = listed.plan(tmp_path, proxy=True)
        assert plan is not None and plan["proxy_port"] == 3128 and plan["network"] is False
        assert "network only to pypi.org (egress proxy)" in listed.label()
    plan = listed.plan(tmp_path)
    assert plan is not None and plan["proxy_port"] == 0 and plan["network"] is False
    for missing in ("userns", "landlock"):
        monkeypatch.setenv("AGENTCLI_TEST_SANDBOX_MISSING", missing)
        mechanism.cache_clear()
        try:
            if mechanism()[0]:
                with pytest.raises(SandboxUnavailable, match="network lists hosts, but"):
                    listed.plan(tmp_path, proxy=True)
        finally:
            mechanism.cache_clear()


@pytest.mark.skipif(
    mechanism()[0] != "landlock" or mechanism()[1] < 4, reason="needs Landlock ABI 4"
)
def test_the_proxy_socket_is_handed_back_never_to_the_command_and_never_without_a_namespace(
    tmp_path,
) -> None:
    """The call supervisor binds the proxy's socket in the command's network namespace and
    hands it to this process; the command holds no socket (it cannot accept in the proxy's
    place). A plan with a proxy port that gets no namespace, or bubblewrap, does not run."""
    from agentcli_tools.supervised import Supervised

    plan = Sandbox(hosts=("pypi.org",)).plan(tmp_path, proxy=True)
    assert plan is not None
    env = {"PATH": "/usr/bin:/bin"}
    process = Supervised(
        ["ls", "-l", "/proc/self/fd/"], grace=0.5, cwd=tmp_path, env=env, sandbox=plan
    )
    try:
        listing = process.stdout.read().decode()
        assert process.wait() == 0
    finally:
        process.close()
        process.stdout.close()
    assert process.listener is not None
    assert process.listener.getsockname() == ("127.0.0.1", 3128)
    process.listener.close()
    assert "socket:" not in listing and "pipe:" in listing, listing
    for changed in ({"namespaces": False}, {"mechanism": "bwrap", "bwrap": "/usr/bin/bwrap"}):
        with pytest.raises(OSError, match="network namespace of its own|only Landlock"):
            Supervised(["true"], grace=0.5, cwd=tmp_path, env=env, sandbox={**plan, **changed})
