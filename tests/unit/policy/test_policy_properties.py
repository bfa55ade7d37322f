"""Property-based: what an allow rule lets through is exactly what bash runs, and deny rules
see a command behind any stack of wrappers."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentcli.policy.approval_policy import Policy
from agentcli.policy.bash.parse import analyse

ALLOW_STUB = Policy.build(rules=[{"tool": "shell", "match": "stub *", "decision": "allow"}])
SAFE = ["hi", "'a b'", '"c d"', "x\\ y", "\\;", "a=b", "-n", "--", "%", "'$X'", "\\$X", "st'ub'"]
RISKY = [
    "#", "hi#", ";", "&&", "||", "|", "&", "|&", "\n", "\r", "\t", "\\\n", "$'x'", '$"x"',
    "$(stub sub)", "`stub bq`", ">", "<", ">f", "2>&1", "<<E\nx\nE\n", "<<<w", "*", "?", "[a]",
    "~", "{a,b}", "$X", "${X}", "$((1))", "(", ")", "{", "}", "!", "X=1", "'", '"', "\\", "=",
    '"$X"', "\\'", "stub() { :; }", "eval", "exec", "\u00a0", "\\\\", "é", '"a\\"b"', "'a\\'",
]  # fmt: skip
JOINS = [";", "&&", "||", "|", "\n", " ; ", " && ", " | "]
arguments = st.one_of(st.sampled_from(SAFE), st.sampled_from(SAFE), st.sampled_from(RISKY))


@st.composite
def lines(draw: st.DrawFn) -> str:
    """Mostly plausible `stub` command lines, with a shell trap here and there."""
    commands = []
    for _ in range(draw(st.integers(1, 3))):
        name = draw(st.sampled_from(["stub", "stub", "stub", "st'ub'", "st\\ub", "touch"]))
        words = draw(st.lists(arguments, max_size=4))
        spaces = draw(st.lists(st.sampled_from([" ", " ", " ", ""]), min_size=len(words)))
        commands.append(name + "".join(s + w for s, w in zip(spaces, words, strict=False)))
    joins = draw(st.lists(st.sampled_from(JOINS), min_size=len(commands)))
    return "".join(j + c for j, c in zip(["", *joins], commands, strict=False))


STUB = """#!/bin/sh
for word in "$@"; do printf '%s\\0' "$word"; done > "$RECORD/$$"
"""


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(line=lines())
def test_an_allowed_line_runs_only_the_allowed_command_with_the_words_shown(
    line: str, tmp_path: Path
) -> None:
    """Run every allowed line under bash -x with PATH holding only a recording `stub`: bash
    must run nothing but `stub`, only with words the analysis listed, and create no file."""
    if ALLOW_STUB.decide("shell", {"command": line}).decision != "allow":
        return
    expected = analyse(line).simple
    assert expected is not None and all(words[0] == "stub" for words in expected)
    work = Path(tempfile.mkdtemp(dir=tmp_path))
    (work / "bin").mkdir(parents=True)
    (work / "cwd").mkdir()
    stub = work / "bin" / "stub"
    stub.write_text(STUB)
    stub.chmod(0o755)
    record = work / "record"  # a file per run of the stub: pipes run them side by side
    record.mkdir()
    result = subprocess.run(
        ["/bin/bash", "-xc", line],
        cwd=work / "cwd",
        env={"PATH": str(work / "bin"), "RECORD": str(record)},  # root's bash ignores PS4
        capture_output=True,
        text=True,
        timeout=10,
    )
    traced = [t for t in result.stderr.splitlines() if t.startswith("+")]
    assert all(t.startswith("+ stub") for t in traced), (line, result.stderr)
    runs = [run.read_text() for run in record.iterdir()]
    shown = {"".join(w + "\0" for w in words[1:]) for words in expected}
    assert set(runs) <= shown, (line, runs, expected)
    assert len(traced) == len(runs)
    assert os.listdir(work / "cwd") == []


WRAPPERS = [
    "command", "builtin command", "exec", "env", "env -i", "env -u HOME", "env A=1",
    "nice", "nice -n 5", "nohup", "time", "time -p", "timeout 5", "timeout -s KILL 5",
    "stdbuf -oL", "setsid", "sudo", "sudo -u root", "doas", "doas -u root", "xargs",
    "chroot /", "ionice -c 3", "taskset 1", "flock /tmp/l", "strace -f",
]  # fmt: skip
SHAPES = [
    "{}", "{{ {}; }}", "( {} )", "echo $({})", "echo `{}`", "true && {}", "false || {}",
    "echo | {}", "{} &", "f() {{ {}; }}", "if true; then {}; fi", "cat <({})",
    "sh -c '{}'", "bash -c '{}'", "eval '{}'", "for i in 1; do {}; done", "x=$({})",
]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    wrappers=st.lists(st.sampled_from(WRAPPERS), max_size=4),
    shape=st.sampled_from(SHAPES),
    name=st.sampled_from(["rm", "/bin/rm", "\\rm", "'rm'", '"rm"', "r''m"]),
    assign=st.sampled_from(["", "X=1 ", "X=$(date) "]),
)
def test_deny_rules_see_rm_behind_any_wrappers_and_syntax(
    wrappers: list[str], shape: str, name: str, assign: str
) -> None:
    command = assign + " ".join([*wrappers, name, "-rf", "victim"])
    if "'" in shape:
        command = command.replace("'", "")  # inside '...' a plain rm is the test
        if "'" in name or '"' in name:
            return
    line = shape.format(command)
    for flags in ({"auto_approve": True}, {"flag_allow": ["shell"]}):
        policy = Policy.build(
            rules=[{"tool": "shell", "match": "rm *", "decision": "deny"}],
            **flags,  # type: ignore[arg-type]
        )
        assert policy.decide("shell", {"command": line}).decision == "deny", line
