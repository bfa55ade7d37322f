"""The rule `A` proposes never allows a line that runs code or writes a file the approved one
did not (issue 25, item 4).

A proposal such as `git *` for `git -C sub status`, `sed *` for `sed -n 1p x` or `tar *`
lets the next `git -c alias.x='!touch PWNED' x` or `sed -n '1e touch PWNED'` run unreviewed.
Every line in PAYLOADS_ATTACKS (and every probe in bash/program_table.py) is first run with the real
program in a scratch folder, where it creates PWNED; then no rule proposed for any of
APPROVED may allow it, each proposal still fits its own command, and the allow-all warning
names the wide rules a person might write by hand. The chat's `A` is driven through the
installed command at the end.
"""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pexpect
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentcli.policy.allow_all import allows_everything, probes
from agentcli.policy.call_scope import fits, proposed_match
from tests.e2e.conftest import Agent
from tests.helpers.scripted_server import text, tool_calls
from tests.helpers.terminal import CHOICE, leave
from tests.security.test_result_arguments import scratch

# commands a person approves with `A`
APPROVED = [
    "git status", "git status --short", "git -C sub status", "git log --oneline",
    "git diff HEAD", "git show HEAD", "git grep -e hi", "git add notes.txt", "git ls-files",
    "sed -n 1p notes.txt", "sed -i s/a/b/ notes.txt", "tar -czf out.tgz src", "tar -tf a.tar",
    "make", "make test", "gdb -batch ./a.out", "vim notes.txt", "sort notes.txt",
    "sort -u -o out.txt notes.txt", "script -q /dev/null", "sqlite3 db.sqlite .tables",
    "ionice -c3 ls", "taskset 1 ls", "find . -name '*.py'", "xargs -a notes.txt echo",
    "awk '{print $1}' notes.txt", "cp notes.txt b.txt", "mv a b", "tee out.txt", "rm -f x",
    "curl -sS https://example.com", "dd if=a of=b", "zip -r x.zip src", "nice -n 5 ls",
    "env LC_ALL=C ls", "timeout 5 ls", "python3 x.py", "npm run test", "ls -la", "ls",
    "cat notes.txt", "grep -r hi .", "wc -l notes.txt", "echo hi", "/usr/bin/sed -n 1p x",
]  # fmt: skip
# lines that run code or write a file (each proven below against the real program)
PAYLOADS_ATTACKS = [
    "git -c 'alias.x=!touch PWNED' x",
    "git -C . -c 'alias.x=!touch PWNED' x",
    "git log --output=PWNED",
    "git log --oneline --output=PWNED",
    "git diff --output=PWNED",
    "git diff HEAD --output=PWNED",
    "git show --output=PWNED",
    "git grep -e hi '-Otouch PWNED'",
    "sed -n '1e touch PWNED' notes.txt",
    "sed -n '1w PWNED' notes.txt",
    "sed 's/hi/x/w PWNED' notes.txt",
    "sed -i 's/hi/hi/w PWNED' notes.txt",
    "tar -xf a.tar '--to-command=touch PWNED'",
    "tar -cf x.tar notes.txt --checkpoint=1 '--checkpoint-action=exec=touch PWNED'",
    "tar -czf out.tgz notes.txt --checkpoint=1 '--checkpoint-action=exec=touch PWNED'",
    "make '--eval=$(shell touch PWNED)'",
    "make 'X=$(shell touch PWNED)'",
    "make test 'X=$(shell touch PWNED)'",
    "gdb -batch -ex 'shell touch PWNED'",
    "vim -es '+!touch PWNED'",
    "vim -es -c '!touch PWNED' -c q",
    "sort -oPWNED notes.txt",
    "sort notes.txt --output=PWNED",
    "sort -u -o PWNED notes.txt",
    "script -qc 'touch PWNED' /dev/null",
    "sqlite3 :memory: '.shell touch PWNED'",
    "sqlite3 db.sqlite '.system touch PWNED'",
    "ionice -c3 touch PWNED",
    "taskset 1 touch PWNED",
    "find . -maxdepth 0 -fprint PWNED",
    "xargs -a notes.txt touch PWNED",
    "awk 'BEGIN{system(\"touch PWNED\")}'",
    "cp notes.txt PWNED",
    "mv notes.txt PWNED",
    "tee PWNED",
    "curl -sSoPWNED file:///etc/hostname",
    "dd if=notes.txt of=PWNED",
    "zip -q x.zip notes.txt -T '--unzip-command=touch PWNED'",
    "nice -n 5 touch PWNED",
    "env LC_ALL=C touch PWNED",
    "timeout 5 touch PWNED",
    'python3 -c \'open("PWNED", "w")\'',
    "touch PWNED",
]
PAYLOADS_WIDE = [
    "git *", "git log *", "git diff *", "git show *", "git grep *", "sed *", "sed -n *", "tar *",
    "tar -czf *", "make*", "make *", "gdb *", "vim *", "vi *", "sort *", "script *", "sqlite3 *",
    "ionice *", "taskset *", "find *", "xargs *", "awk *", "cp *", "mv *", "tee *", "curl *",
    "dd *", "zip *", "nice *", "/usr/bin/sed *", "chrt *", "prlimit *",
]  # fmt: skip


# words a command's arguments are drawn from: options, subcommands, files
WORDS = ["status", "log", "diff", "-C", "sub", "-c", "-n", "1p", "--short", "notes.txt",
         "-la", "src", "test", "run", "-o", "out", "--oneline", "HEAD", "x", "-e", "p"]  # fmt: skip


def run_real(line: str, where: Path) -> None:
    import subprocess

    env = {"PATH": "/usr/bin:/bin", "HOME": str(where), "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["bash", "-c", line], cwd=where, env=env, stdin=subprocess.DEVNULL,
                   capture_output=True, timeout=20)  # fmt: skip


def table_probes() -> list[str]:
    return sorted({line for _, line in probes() if not line.startswith("/")})


class TestTheProposalAllowsNothingMore:
    @pytest.mark.parametrize("line", PAYLOADS_ATTACKS + table_probes())
    def test_the_attack_runs_code_or_writes_in_the_real_program(
        self, tmp_path: Path, line: str
    ) -> None:
        if shutil.which(shlex.split(line)[0], path="/usr/bin:/bin") is None:
            pytest.skip(f"{shlex.split(line)[0]} is not installed here")
        run_real(line, scratch(tmp_path))
        assert (tmp_path / "PWNED").exists(), line

    @pytest.mark.parametrize("command", APPROVED)
    def test_the_proposal_fits_its_call_and_no_attack(self, command: str) -> None:
        match = proposed_match("shell", {"command": command}, None)
        assert match is not None
        assert fits("shell", match, "shell", {"command": command}, None), match
        assert allows_everything("shell", match, "allow") is None, match
        let_through = [
            a for a in PAYLOADS_ATTACKS if fits("shell", match, "shell", {"command": a}, None)
        ]
        assert let_through == [], (command, match)

    def test_the_issue_s_commands_get_the_narrow_rules(self) -> None:
        def proposed(command: str) -> str | None:
            return proposed_match("shell", {"command": command}, None)

        assert proposed("git -C sub status") == "git -C sub status"
        assert proposed("sed -n 1p x") == "sed -n 1p x"
        assert proposed("tar -czf a.tgz src") == "tar -czf a.tgz src"
        rule = proposed("git status --short")
        assert rule == "git status*"
        for sibling in ("git status", "git status -s", "git status --porcelain -- src"):
            assert fits("shell", rule, "shell", {"command": sibling}, None), sibling
        assert proposed("ls -la") == "ls *"
        assert not fits("shell", proposed("ls"), "shell", {"command": "lsof"}, None)

    @pytest.mark.parametrize("match", PAYLOADS_WIDE)
    def test_a_wide_rule_for_such_a_program_is_warned_about(self, match: str) -> None:
        why = allows_everything("shell", match, "allow")
        assert why is not None and match in why
        fitting = re.search(r"it fits `(.*)`\)$", why)
        assert fitting is not None
        # the line it names is one the rule really allows
        assert fits("shell", match, "shell", {"command": fitting.group(1)}, None)

    @settings(max_examples=150, deadline=None)
    @given(
        st.sampled_from(sorted({shlex.split(c)[0] for c in APPROVED + PAYLOADS_ATTACKS})),
        st.lists(st.sampled_from(WORDS), max_size=4),
    )
    def test_any_command_s_proposal_fits_it_and_lets_no_attack_through(
        self, name: str, args: list[str]
    ) -> None:
        command = " ".join(shlex.quote(w) for w in (name, *args))
        match = proposed_match("shell", {"command": command}, None)
        assert match is not None and fits("shell", match, "shell", {"command": command}, None)
        assert allows_everything("shell", match, "allow") is None, match
        for attack in PAYLOADS_ATTACKS:
            if attack != command:
                assert not fits("shell", match, "shell", {"command": attack}, None), match

    def test_every_probe_is_read_as_the_rule_reads_it(self) -> None:
        for line in table_probes():
            assert " ".join(shlex.quote(w) for w in shlex.split(line)) == line


# -- the chat's `A`, through the installed command -------------------------------------


def keep_a_rule(agent: Agent, commands: list[str], match: str) -> pexpect.spawn:
    """A chat whose model proposes `commands` as shell calls in turn (then says
    "Understood."): the first is approved with `A`, whose proposed rule must be `match`,
    kept for the thread with `t`."""
    scratch(agent.workspace)
    calls = [tool_calls(("shell", {"command": c})) for c in commands]
    agent.server.push(*calls, text("Understood."))
    child = agent.spawn("chat", "--sandbox", "off", "go")
    child.expect(CHOICE)
    child.sendline("A")
    child.expect(re.escape(f'match = "{match}"'))
    child.expect(r"\[t\]his thread.*\[b\]ack >")
    child.sendline("t")
    return child


def test_e2e_a_rule_kept_for_sed_does_not_let_sed_run_code(agent: Agent) -> None:
    child = keep_a_rule(
        agent, ["sed -n 1p notes.txt", "sed -n '1e touch PWNED' notes.txt"], "sed -n 1p notes.txt"
    )
    child.expect(CHOICE)  # the next sed line is not the approved one: a person decides
    assert not (agent.workspace / "PWNED").exists()
    child.sendline("r")
    child.expect("Understood.")
    leave(child)
    assert not (agent.workspace / "PWNED").exists()


def test_e2e_git_status_rule_fits_the_bare_command_and_not_an_alias(agent: Agent) -> None:
    commands = ["git status --short", "git status", "git -c 'alias.x=!touch PWNED' x"]
    child = keep_a_rule(agent, commands, "git status*")
    child.expect(re.escape('shell {"command": "git status"}'))
    child.expect(r"(On branch)|(\[a\]pprove)")
    assert child.match.group(1), "the bare `git status` fits the rule: it runs unasked"
    child.expect(re.escape("alias.x=!touch PWNED"))
    child.expect(CHOICE)  # the alias does not fit it
    child.sendline("r")
    child.expect("Understood.")
    leave(child)
    assert not (agent.workspace / "PWNED").exists()


def test_e2e_the_warning_comes_before_w_writes_a_wide_rule(agent: Agent) -> None:
    scratch(agent.workspace)
    path = agent.workspace / "c.toml"
    path.write_text("[approval]\nallow = []\n")
    agent.server.push(tool_calls(("shell", {"command": "sort notes.txt"})), text("Sorted."))
    child = agent.spawn("chat", "--config", str(path), "--sandbox", "off", "sort")
    child.expect(CHOICE)
    child.sendline("A")
    child.expect(re.escape('match = "sort notes.txt"'))
    child.expect(r"\[t\]his thread.*\[b\]ack >")
    assert "warning:" not in (child.before or "")  # the proposal itself is not wide
    child.sendline("e")
    child.expect("match >")
    child.sendline("\x15sort *")
    child.expect(re.escape('match = "sort *"'))
    child.expect(r"warning: match 'sort \*' lets sort run code or write any file")
    child.expect(r"\[t\]his thread.*\[b\]ack >")
    assert path.read_text() == "[approval]\nallow = []\n"  # shown before anything is written
    child.sendline("w")
    child.expect("written to")
    child.expect("Sorted.")
    leave(child)
    assert 'match = "sort *"' in path.read_text()
