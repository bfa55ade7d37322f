"""What a confined command may change: in a git workspace, anything but `.git`, its top level
included; outside the writable set, nothing, metadata included (mode, owner, times, extended
attributes, links), and no device anywhere. Checked through the installed command with
`stat`, not just contents: every file of `.git` and of a folder outside the workspace is
byte-, mode-, owner- and time-identical after every payload ran.

Under each mechanism this machine has: the mount namespace (with Landlock and seccomp),
Landlock alone (where user namespaces are refused: there metadata outside the workspace is
not covered, as docs/guarantees.md says, so only contents and `.git` are checked) and
bubblewrap.
"""

from __future__ import annotations

import os
import shutil
import socket
import stat
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from agentcli_tools.sandbox import mechanism

from tests.e2e.conftest import Agent
from tests.e2e.test_sandbox import configure, git_workspace, run_shell
from tests.helpers.installed import program
from tests.helpers.scripted_server import text

pytestmark = pytest.mark.skipif(not mechanism()[0], reason="neither Landlock nor bubblewrap")

PY = sys.executable
# {o}: a file outside the workspace; {d}: its folder; {l}: a link to {o} in {d}
PAYLOADS_OUTSIDE = [
    "chmod 777 {o}",
    "chmod u+s,g+s {o}",
    "chmod 700 {d}",
    "chown 65534 {o}",
    "chgrp 65534 {o}",
    "chown -h 65534 {l}",
    "touch -d 2000-01-01 {o}",
    "touch -m {o}",
    "touch -r /etc/passwd {o}",
    "touch -h -d 2000-01-01 {l}",
    "truncate -s 0 {o}",
    "echo x >> {o}",
    "rm {o}",
    "mv {o} ./stolen.txt",
    "ln {o} hard && chmod 777 hard",
    "mkdir {d}/new",
    "mkfifo {d}/fifo",
    "ln -s /etc/passwd {d}/new-link",
    f"{PY} -c \"import os; os.utime('{{o}}', (0, 0))\"",
    f"{PY} -c \"import os; os.chmod('{{o}}', 0o777)\"",
    f"{PY} -c \"import os; os.chmod(os.open('{{o}}', os.O_RDONLY), 0o777)\"",
    f"{PY} -c \"import os; os.setxattr('{{o}}', 'user.pwned', b'1')\"",
    f"{PY} -c \"import os; os.chown('{{o}}', 65534, -1)\"",
    f"{PY} -c \"import os; fd = os.open('{{o}}', os.O_PATH);"
    " os.chmod(f'/proc/self/fd/{{fd}}', 0o777)\"",
    "cat /proc/sys/kernel/core_pattern > /proc/sys/kernel/core_pattern",  # any sysctl
]
PAYLOADS_GIT = [
    "echo '[core] fsmonitor = touch PWNED' >> .git/config",
    "chmod 777 .git/config",
    "chmod -R 777 .git",
    "touch -d 2000-01-01 .git/config",
    "touch .git/hooks/pre-commit",
    "ln -s /bin/true .git/hooks/post-checkout",
    "mv .git .git-old",
    "rm -rf .git",
    "mv .git/hooks .git/hooks-old",
    f"{PY} -c \"import os; os.setxattr('.git/config', 'user.pwned', b'1')\"",
    f"{PY} -c \"import os; os.rename('.git', 'elsewhere')\"",
    "umount -l .git && echo x >> .git/config",
    "mount -o remount,rw .git && echo x >> .git/config",
    "unshare -rm sh -c 'umount -l .git; echo x >> .git/config'",
    "unshare -rm sh -c 'mount -o remount,rw /; chmod 777 .git/config'",
]
PAYLOADS_DEVICES = [
    "mknod mem c 1 1",
    "mknod kmsg c 1 11 && echo pwned > kmsg",
    "mknod sda b 8 0",
    'mknod "$TMPDIR/kmsg" c 1 11 && echo pwned > "$TMPDIR/kmsg"',
    f"{PY} -c \"import os, stat; os.mknod('k2', 0o600 | stat.S_IFCHR, os.makedev(1, 11))\"",
    "echo pwned > /dev/kmsg",
    "echo pwned > /dev/mem",
    "head -c1 /dev/sda",
]
# a setuid or setgid program, or file capabilities, left in the workspace by a command run as
# root would make any user of the machine root
PAYLOADS_SETID = [
    "cp /bin/true suid && chmod 4755 suid",
    "cp /bin/true sgid && chmod g+s sgid",
    "mkdir shared && chmod 2775 shared",
    "cp /bin/true s3 && install -m 4755 s3 s4",
    f"{PY} -c \"import os; os.close(os.open('s5', os.O_CREAT | os.O_WRONLY, 0o4755))\"",
    f"{PY} -c \"import os; open('s6', 'w').close(); os.chmod('s6', 0o6755)\"",
    f"{PY} -c \"import os; open('s7', 'w').close(); os.chmod(os.open('s7', os.O_RDONLY), 0o4755)\"",
    # a v2 security.capability granting cap_setuid (effective, permitted)
    f"{PY} -c \"import os, struct; open('c1', 'w').close(); os.setxattr('c1',"
    " 'security.capability', struct.pack('<IIIII', 0x02000001, 1 << 7, 0, 0, 0))\"",
    f"{PY} -c \"import os; open('x1', 'w').close(); os.setxattr('x1', 'user.note', b'1')\"",
]
# what must keep working: the workspace's top level, in a git workspace
AT_THE_TOP = [
    "echo hi > notes.txt && cat notes.txt",
    "mkdir made && touch made/x && rm -r made",
    "mv README.md README2.md && mv README2.md README.md",
    "ln -s README.md link && rm link",
    "cp README.md copy.md && chmod 600 copy.md && touch -d 2000-01-01 copy.md && rm copy.md",
    "touch .gitignore && rm .gitignore && rm notes.txt",
    "git status --short >/dev/null 2>&1 || true",
]


def run_all(agent: Agent, commands: list[str], flags: tuple[str, ...] = ()) -> list[str]:
    """Each command as an approved shell call, 20 to a run (max_steps is 25)."""
    return [
        result
        for at in range(0, len(commands), 20)
        for result in run_shell(agent, *commands[at : at + 20], flags=flags)
    ]


def snapshot(root: Path) -> dict[str, tuple[object, ...]]:
    """Every entry beneath ``root``: its type and mode, owner, size, times, attributes and
    content (a link's target)."""
    found: dict[str, tuple[object, ...]] = {}
    for path in [root, *sorted(root.rglob("*"))]:
        info = path.lstat()
        if stat.S_ISLNK(info.st_mode):
            body: object = os.readlink(path)
        elif stat.S_ISREG(info.st_mode):
            body = path.read_bytes()
        else:
            body = None
        attrs = sorted(os.listxattr(path, follow_symlinks=False)) if not path.is_symlink() else []
        found[str(path.relative_to(root))] = (
            info.st_mode,
            info.st_uid,
            info.st_gid,
            info.st_size,
            info.st_mtime_ns,
            info.st_nlink,
            body,
            attrs,
        )
    return found


def contents(root: Path) -> dict[str, object]:
    """What Landlock alone keeps: each entry beneath ``root`` and its content."""
    return {name: entry[6] for name, entry in snapshot(root).items() if name != "."}


@pytest.fixture
def outside() -> Iterator[Path]:
    """A folder outside the workspace and /tmp, holding a file (0644) and a link to it."""
    folder = Path(tempfile.mkdtemp(prefix="agentcli-test-", dir="/var/tmp"))
    (folder / "o.txt").write_text("outside\n")
    (folder / "o.txt").chmod(0o644)
    (folder / "l").symlink_to(folder / "o.txt")
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


# the default where the kernel allows it; the fallbacks with -m slow (`bash .ci/slow`)
MECHANISMS = [
    pytest.param("", id="namespaces"),
    pytest.param("userns", id="landlock-only", marks=pytest.mark.slow),
    pytest.param("landlock", id="bubblewrap", marks=pytest.mark.slow),
]


def use(agent: Agent, missing: str) -> None:
    if missing == "landlock":
        program("bwrap", "bubblewrap")
    if missing != "landlock" and mechanism()[0] != "landlock":
        pytest.skip("no Landlock here")
    agent.env["AGENTCLI_TEST_SANDBOX_MISSING"] = missing


@pytest.mark.parametrize("missing", MECHANISMS)
def test_nothing_outside_the_workspace_changes_not_even_its_metadata(
    agent: Agent, outside: Path, missing: str
) -> None:
    use(agent, missing)
    git_workspace(agent)
    before, before_contents = snapshot(outside), contents(outside)
    commands = [p.format(o=outside / "o.txt", d=outside, l=outside / "l") for p in PAYLOADS_OUTSIDE]
    got = run_all(agent, commands)
    after = snapshot(outside)
    if missing == "userns":  # Landlock has no right for metadata: contents only
        assert contents(outside) == before_contents
    else:
        assert after == before
    through = [c for c, r in zip(commands, got, strict=True) if r.startswith("exit code 0")]
    if missing != "userns":
        assert through == [], through


@pytest.mark.parametrize("missing", MECHANISMS)
def test_git_stays_whole_while_the_top_level_is_writable(agent: Agent, missing: str) -> None:
    use(agent, missing)
    git_workspace(agent)
    git = agent.workspace / ".git"
    before = contents(git) if missing == "userns" else snapshot(git)
    got = run_shell(agent, *PAYLOADS_GIT)
    assert (contents(git) if missing == "userns" else snapshot(git)) == before
    through = [c for c, r in zip(PAYLOADS_GIT, got, strict=True) if r.startswith("exit code 0")]
    if missing == "userns":  # metadata gets through Landlock alone
        through = [
            c for c in through if c.split()[0] not in ("chmod", "touch") and "xattr" not in c
        ]
    assert through == [], through
    assert not (agent.workspace / ".git-old").exists() and not (agent.workspace / "PWNED").exists()
    at_top = run_shell(agent, *AT_THE_TOP)
    if missing == "userns":  # Landlock alone cannot keep .git out of a writable top level
        assert at_top[0].startswith("exit code 1") and "[sandbox]" in at_top[0], at_top[0]
    else:
        assert at_top[0] == "exit code 0\nhi\n"
        assert all(r.startswith("exit code 0") for r in at_top), at_top
        assert sorted(p.name for p in agent.workspace.iterdir()) == [".git", "README.md", "src"]
    assert (contents(git) if missing == "userns" else snapshot(git)) == before


@pytest.mark.parametrize("missing", MECHANISMS)
def test_no_device_can_be_made_or_reached(agent: Agent, missing: str) -> None:
    use(agent, missing)
    got = run_shell(agent, *PAYLOADS_DEVICES)
    through = [c for c, r in zip(PAYLOADS_DEVICES, got, strict=True) if r.startswith("exit code 0")]
    assert through == [], through
    for path in agent.workspace.rglob("*"):
        kind = path.lstat().st_mode
        assert not (stat.S_ISCHR(kind) or stat.S_ISBLK(kind)), path


@pytest.mark.slow  # some 40 agentcli starts: the proof of the payloads, not of agentcli
@pytest.mark.skipif(os.geteuid() != 0, reason="chown needs root")
def test_each_payload_changes_something_when_unconfined(agent: Agent, outside: Path) -> None:
    """The payloads are real: with `--sandbox off` each one changes its own fresh copy of
    the outside folder, and each .git payload but those that only undo a mount changes .git."""
    payloads = [p for p in PAYLOADS_OUTSIDE if "/proc/sys" not in p]  # a sysctl: same value
    folders = []
    for index in range(len(payloads)):
        folder = outside / str(index)
        folder.mkdir()
        (folder / "o.txt").write_text("outside\n")
        (folder / "o.txt").chmod(0o644)
        (folder / "l").symlink_to(folder / "o.txt")
        folders.append(folder)
    before = [snapshot(f) for f in folders]
    commands = [
        p.format(o=f / "o.txt", d=f, l=f / "l") for p, f in zip(payloads, folders, strict=True)
    ]
    run_all(agent, commands, flags=("--sandbox", "off"))
    unchanged = [c for c, f, b in zip(commands, folders, before, strict=True) if snapshot(f) == b]
    assert unchanged == [], unchanged
    mounts_only = [p for p in PAYLOADS_GIT if "mount" in p or "unshare" in p]
    for payload in [p for p in PAYLOADS_GIT if p not in mounts_only]:
        shutil.rmtree(agent.workspace)
        agent.workspace.mkdir()
        git_workspace(agent)
        git = snapshot(agent.workspace / ".git") if (agent.workspace / ".git").exists() else {}
        run_shell(agent, payload, flags=("--sandbox", "off"))
        now = snapshot(agent.workspace / ".git") if (agent.workspace / ".git").exists() else {}
        assert now != git, payload


@pytest.mark.parametrize("missing", MECHANISMS)
def test_no_setuid_setgid_or_capability_is_left_in_the_workspace(
    agent: Agent, missing: str
) -> None:
    use(agent, missing)
    got = run_shell(agent, *PAYLOADS_SETID)
    for path in agent.workspace.rglob("*"):
        info = path.lstat()
        assert not info.st_mode & (stat.S_ISUID | stat.S_ISGID), (path, oct(info.st_mode))
        assert os.listxattr(path, follow_symlinks=False) == [], path
    failed = [c for c, r in zip(PAYLOADS_SETID, got, strict=True) if r.startswith("exit code 0")]
    assert failed == [], failed


@pytest.mark.parametrize("missing", MECHANISMS)
def test_git_stays_whole_when_a_writable_path_holds_the_workspace(
    agent: Agent, missing: str
) -> None:
    use(agent, missing)
    git_workspace(agent)
    config = Path(agent.env["XDG_CONFIG_HOME"]) / "agentcli" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'[sandbox]\nwritable = ["{agent.workspace.parent}"]\n')
    git = agent.workspace / ".git"
    before = contents(git) if missing == "userns" else snapshot(git)
    got = run_shell(agent, *PAYLOADS_GIT[:10])
    assert (contents(git) if missing == "userns" else snapshot(git)) == before
    through = [c for c, r in zip(PAYLOADS_GIT, got, strict=False) if r.startswith("exit code 0")]
    if missing == "userns":
        through = [
            c for c in through if c.split()[0] not in ("chmod", "touch") and "xattr" not in c
        ]
    assert through == [], through


@pytest.mark.parametrize("missing", MECHANISMS)
def test_a_repository_subfolder_cannot_get_a_git_of_its_own(agent: Agent, missing: str) -> None:
    """A workspace inside a repository, with no .git of its own: a `.git` made at its top
    (with an fsmonitor) would run for the person's next `git status` there."""
    if missing == "landlock":
        pytest.skip("bubblewrap cannot refuse a .git made at the top (guarantees.md)")
    use(agent, missing)
    git_workspace(agent)
    inner = agent.workspace / "src"
    got = run_shell(
        agent,
        "git init -q . && git config core.fsmonitor 'touch PWNED'",
        "mkdir .git",
        "ln -s .. .git",
        flags=("--workspace", str(inner)),
    )
    assert all(r.startswith("exit code 1") for r in got), got
    assert not (inner / ".git").exists() and not (inner / ".git").is_symlink()


def test_the_data_folder_in_the_workspace_cannot_be_moved_away_or_joined(agent: Agent) -> None:
    """A workspace that holds agentcli's data (the home folder): the thread database and
    the snapshots are kept, and so are the folders on the way to them (moving one away and
    making a forged database in its place), and no journal can be planted beside it."""
    home = Path(agent.env["HOME"])
    agent.server.push(text("first"))
    assert agent.run("run", "hi", "-w", str(home)).returncode == 0  # the database exists
    data = Path(agent.env["XDG_DATA_HOME"]) / "agentcli"
    got = run_shell(
        agent,
        "mv data data-moved",
        "mv data/agentcli data/agentcli-moved",
        f"mkdir -p {data}/x; echo forged > {data}/threads.db",
        f"echo forged > {data}/threads.db-wal",
        f"echo forged > {data}/threads.db-journal",
        f"rm -rf {data}/snapshots",
        flags=("--workspace", str(home)),
    )
    assert all(r.startswith("exit code 1") for r in got), got
    assert not (home / "data-moved").exists() and not (data.parent / "agentcli-moved").exists()
    assert not (data / "x").exists() and (data / "snapshots").is_dir()
    assert (data / "threads.db").read_bytes().startswith(b"SQLite format 3")
    for journal in ("threads.db-wal", "threads.db-journal"):  # a WAL begins 377f068x
        path = data / journal
        assert not path.exists() or not path.read_bytes().startswith(b"forged")
    assert agent.run("threads", "list").returncode == 0


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="x86-64's call numbers")
def test_no_key_of_the_users_keyring_can_be_read(agent: Agent) -> None:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    secret = b"KEYRING-" + os.urandom(6).hex().encode()
    serial = libc.syscall(248, b"user", b"agentcli-test", secret, len(secret), -4)  # @u
    if serial < 0:
        pytest.skip("no keyring here")
    try:
        lookup = (
            f'{PY} -c "import ctypes; l = ctypes.CDLL(None); k = l.syscall(250, 10, -4,'
            " b'user', b'agentcli-test', 0); b = ctypes.create_string_buffer(64);"
            ' n = l.syscall(250, 11, k, b, 64); print(k, n, b.raw[:max(n, 0)])"'
        )
        got = run_shell(agent, lookup, "cat /proc/keys")
        assert secret.decode() not in "".join(got), got
    finally:
        libc.syscall(250, 3, serial)  # KEYCTL_REVOKE


@pytest.fixture
def in_tmp() -> Iterator[tuple[Path, Path]]:
    """Two folders in the real /tmp: one holding what others keep there (a file, a folder
    with an agent's socket, as ssh-agent makes one), one a program's folder for PATH."""
    folder = Path(tempfile.mkdtemp(prefix="agentcli-test-", dir="/tmp"))
    (folder / "secret.txt").write_text("someone else's\n")
    (folder / "ssh-agent").mkdir(mode=0o700)
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(folder / "ssh-agent" / "agent.1"))
    server.listen()
    programs = Path(tempfile.mkdtemp(prefix="agentcli-test-bin-", dir="/tmp"))
    (programs / "hello-from-tmp").write_text("#!/bin/sh\necho hello\n")
    (programs / "hello-from-tmp").chmod(0o755)
    yield folder, programs
    server.close()
    shutil.rmtree(folder, ignore_errors=True)
    shutil.rmtree(programs, ignore_errors=True)


@pytest.mark.parametrize("missing", [MECHANISMS[0], MECHANISMS[2]])
def test_tmp_is_the_commands_own(agent: Agent, in_tmp: tuple[Path, Path], missing: str) -> None:
    """/tmp is private: nothing others keep there is visible (files, sockets, with the network
    on too), what a command writes there never reaches it, and programs on PATH kept in /tmp
    still run."""
    use(agent, missing)
    configure(agent, "[sandbox]\nnetwork = true\n")
    in_tmp, programs = in_tmp
    agent.env["PATH"] = f"{programs}:{agent.env['PATH']}"
    sock = in_tmp / "ssh-agent" / "agent.1"
    hidden = [
        f"cat {in_tmp / 'secret.txt'}",
        f"ls {in_tmp}",
        f"ls /tmp | grep -x {in_tmp.name}",
        f"{PY} -c \"import socket; socket.socket(socket.AF_UNIX).connect('{sock}')\"",
        f"find /tmp -name {in_tmp.name} | grep .",
        f"echo x > {in_tmp / 'planted'}",
    ]
    works = [
        "echo mine > /tmp/written && cat /tmp/written",
        "mkdir -p /tmp/a/b && touch /tmp/a/b/c && ls /tmp/a/b",
        "hello-from-tmp",
        f"{PY} -c 'print(1)'",
    ]
    got = run_shell(agent, *hidden, *works)
    through = [
        c for c, r in zip(hidden, got[: len(hidden)], strict=True) if r[:11] == "exit code 0"
    ]
    assert through == [], through
    assert [r.split("\n")[0] for r in got[len(hidden) :]] == ["exit code 0"] * len(works), got
    assert got[len(hidden)].endswith("mine\n") and got[len(hidden) + 2].endswith("hello\n")
    assert not Path("/tmp/written").exists() and not (in_tmp / "planted").exists()
    assert not Path("/tmp/a/b/c").exists()
    unconfined = run_shell(agent, *hidden, flags=("--sandbox", "off"))
    assert all(r.startswith("exit code 0") for r in unconfined), unconfined  # the proof
