"""Shell allow/deny rules against command lines built to fool them (issue 13, items 1 and 2).

Every payload is first run under real bash to prove it is an attack (an allow-bypass creates
PWNED; a deny-bypass deletes `victim`), then checked against the policy: all of them through
`Policy.decide` (fast), and a representative subset through the installed command with the
rules in the config file, where the file system shows whether anything ran.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from agentcli.policy.approval_policy import Policy
from agentcli.policy.bash import parse as bash_parse
from agentcli.policy.bash.wrapper_options import SPECS
from tests.e2e.conftest import Agent
from tests.helpers.scripted_server import text, tool_calls

ALLOW_RULES = [
    {"tool": "shell", "match": "echo *", "decision": "allow"},
    {"tool": "shell", "match": "git status*", "decision": "allow"},
    {"tool": "shell", "match": "ls *", "decision": "allow"},
    {"tool": "shell", "match": "cat *", "decision": "allow"},
]
DENY_RULES = [{"tool": "shell", "match": "rm *", "decision": "deny"}]

# With `echo *` allowed, each of these creates PWNED when bash runs it.
PAYLOADS_ALLOW = [
    "echo hi#;touch PWNED",
    "echo hi#&&touch PWNED",
    "echo hi # a comment\ntouch PWNED",
    "echo hi\n# a comment\ntouch PWNED",
    "echo $'\\x27';touch PWNED",
    "echo $'it\\'s';touch PWNED",
    'echo $"hi";touch PWNED',
    "echo 'hi\\';touch PWNED",
    "echo hi\\\\;touch PWNED",
    "echo hi > PWNED",
    "echo hi >PWNED",
    "echo hi >> PWNED",
    "echo hi 2>PWNED",
    "echo hi &>PWNED",
    "echo hi >| PWNED",
    "echo {a,b} > PWNED",
    "echo $((1)) > PWNED",
    "echo $(touch PWNED)",
    "echo `touch PWNED`",
    'echo "$(touch PWNED)"',
    'echo "`touch PWNED`"',
    "echo ${x:-$(touch PWNED)}",
    "echo a$(touch PWNED)b",
    "echo 'a'\"b\"$(touch PWNED)",
    "echo ~/$(touch PWNED)",
    "echo ${IFS}$(touch PWNED)",
    "echo <(touch PWNED)",
    "echo >(touch PWNED)",
    "echo hi | tee PWNED",
    "echo hi |& tee PWNED",
    "echo hi && touch PWNED",
    "echo hi ;touch PWNED",
    "echo hi & touch PWNED",
    "echo hi\ntouch PWNED",
    "echo a\\\n;touch PWNED",
    "ec\\\nho hi;touch PWNED",
    "echo hi; { touch PWNED; }",
    "echo hi; (touch PWNED)",
    "echo() { :; }; echo hi; touch PWNED",
    "X=$(touch PWNED) echo hi",
    "X=1 echo hi;touch PWNED",
    "echo hi <<EOF\n$(touch PWNED)\nEOF",
    "echo hi <<< $(touch PWNED)",
    "echo hi; if true; then touch PWNED; fi",
    "echo hi; for f in PWNED; do touch $f; done",
    "echo hi; case x in x) touch PWNED;; esac",
    "echo hi; eval 'touch PWNED'",
    "echo hi;exec touch PWNED",
    'echo "hi" ;touch PWNED #',
    "echo hi; git status; touch PWNED",
]

# With `rm *` denied and --auto-approve, each of these deletes `victim` when bash runs it.
PAYLOADS_DENY = [
    "rm -f victim",
    "X=1 rm -f victim",
    "command rm -f victim",
    "command -p rm -f victim",
    "builtin command rm -f victim",
    "{ rm -f victim; }",
    "{ rm -f victim; } 2>/dev/null",
    "(rm -f victim)",
    "echo $(rm -f victim)",
    "echo `rm -f victim`",
    'echo "$(rm -f victim)"',
    "a=$(rm -f victim)",
    "declare x=$(rm -f victim)",
    "[[ $(rm -f victim) ]]",
    "case $(rm -f victim) in *) ;; esac",
    "cat <(rm -f victim)",
    "/bin/rm -f victim",
    "/usr/bin/../bin/rm -f victim",
    "\\rm -f victim",
    "'rm' -f victim",
    'r"m" -f victim',
    "r\\\nm -f victim",
    "exec rm -f victim",
    "exec -a x rm -f victim",
    "env rm -f victim",
    "env -i PATH=/usr/bin:/bin rm -f victim",
    "env -u HOME -- rm -f victim",
    "env -S 'rm -f victim'",
    "nice -n 5 rm -f victim",
    "nohup rm -f victim",
    "time rm -f victim",
    "time -p rm -f victim",
    "timeout 5 rm -f victim",
    "timeout -s KILL -k 1 5 rm -f victim",
    "stdbuf -oL rm -f victim",
    "setsid rm -f victim",
    "sh -c 'rm -f victim'",
    'bash -c "rm -f victim"',
    "bash -ec 'rm -f victim'",
    "dash -c 'rm -f victim'",
    "bash -c 'sh -c \"rm -f victim\"'",
    "eval 'rm -f victim'",
    "eval rm -f victim",
    "echo victim | xargs rm -f",
    "xargs rm -f <<< victim",
    "find . -name victim -exec rm -f {} \\;",
    "true && rm -f victim",
    "false || rm -f victim",
    "echo hi; rm -f victim",
    "ls | rm -f victim",
    "if true; then rm -f victim; fi",
    "for f in victim; do rm -f $f; done",
    "while true; do rm -f victim; break; done",
    "f() { rm -f victim; }; f",
    "echo rm -f victim | sh",
    "bash <<< 'rm -f victim'",
    "sh <<EOF\nrm -f victim\nEOF",
    "cat <<E'X'\nEX\nrm -f victim\n",
    "cat <<-EX\n\tEX\nrm -f victim\n",
    "cat <<E;cat <<F\nE\nF\nrm -f victim\n",
    "cat <<$'E'\nE\nrm -f victim\n",
    'cat <<E""\nE\nrm -f victim\n',
    "cmd=rm; $cmd -f victim",
    '"$(echo rm)" -f victim',
    "rm${IFS}-f${IFS}victim",
    "x='a[$(rm -f victim)]'; echo $((x))",
    "x='a[$(rm -f victim)]'; [[ $x -eq 0 ]]",
    "trap 'rm -f victim' EXIT",
    "printf 'rm -f victim' > s; . ./s",
    "printf 'rm -f victim' > s; bash s",
    "printf 'rm -f victim' > s; BASH_ENV=s bash -c true",
    "shopt -s expand_aliases\nalias e=rm\ne -f victim",
]

# Round 2 (an adversarial review): the parser's tree hides code bash runs. Each must be
# unknown (ask) or seen (deny).
PAYLOADS_DENY_UNREAD = [
    # keywords the parser reads as command names after `!`, `time`, `coproc`
    "time if true; then rm -f victim; fi",
    "! if true; then rm -f victim; fi",
    "! if rm -f victim; then echo a; fi",
    "time for i in a; do rm -f victim; done",
    "time -p while true; do rm -f victim; break; done",
    "! for i in a; do rm -f victim; done",
    "! while rm -f victim; do break; done",
    "! until rm -f victim; do break; done",
    "coproc if true; then rm -f victim; fi; wait",
    "true && ! if true; then rm -f victim; fi",
    # here-doc lines the parser keeps as text
    "cat <<E\n $(rm -f victim)\nE",
    "cat <<E\n\t$(rm -f victim)\nE",
    "cat <<-E\n\t$(rm -f victim)\n\tE\n",
    "cat <<E\n`rm -f victim`\nE",
    'cat <<E\n"`rm -f victim`"\nE',
    "x=$(cat <<E\n $(rm -f victim)\nE\n)",
    # operands of ${...} (and single quotes, which do not quote inside "${...}")
    "echo ${x:-`rm -f victim`}",
    "echo ${x=`rm -f victim`}",
    "x=${y:-`rm -f victim`}",
    "x=a; echo ${x/a/`rm -f victim`}",
    "x=a; echo ${x##$(rm -f victim)}",
    "x=a; echo ${x%%$(rm -f victim)}",
    "x=a; echo ${x^^$(rm -f victim)}",
    "x=a; echo ${x,$(rm -f victim)}",
    'x=a; echo "${x#$(rm -f victim)}"',
    "echo \"${x:-'$(rm -f victim)'}\"",
    # backticks escaped inside backticks
    "echo `echo \\`rm -f victim\\``",
    # names and offsets bash evaluates as arithmetic (an index runs the $(...) in it)
    "v=abc; x='a[$(rm -f victim)]'; echo ${v:x}",
    "v=abc; x='a[$(rm -f victim)]'; echo ${v:0:x}",
    "x='a[$(rm -f victim)]'; a=([x]=1)",
    "x='a[$(rm -f victim)]'; a+=([x]=1)",
    "x='a[$(rm -f victim)]'; declare -a a=([x]=1)",
    "read 'a[$(rm -f victim)]' <<< x",
    "printf -v 'a[$(rm -f victim)]' x",
    "test -v 'a[$(rm -f victim)]'",
    "[ -v 'a[$(rm -f victim)]' ]",
    "declare 'a[$(rm -f victim)]=1'",
    "declare -a a='($(rm -f victim))'",
    "builtin declare -i x='a[$(rm -f victim)]'",
    "command declare -i x='a[$(rm -f victim)]'",
    "builtin typeset -i x='a[$(rm -f victim)]'",
    "y='($(rm -f victim))'; declare -a a=$y",
    "y='($(rm -f victim))'; a=(1); declare a=$y",
    "x='a[$(rm -f victim)]'; [[ -v $x ]]",
    "x='a[$(rm -f victim)]'; declare \"$x\"=1",
    "x='a[$(rm -f victim)]'; sleep 0 & wait -n -p \"$x\"",
    "declare -'i' x='a[$(rm -f victim)]'",
    "x='a[$(rm -f victim)]'; set -- 1 2; echo ${@:x}",
    "x='$(rm -f victim)'; echo ${x@P}",
    "builtin declare -n r='a[$(rm -f victim)]'; echo $r",
    # other names for rm
    "hash -p /bin/rm e; e -f victim",
    "printf -v 'BASH_CMDS[e]' /bin/rm; e -f victim",
    "printf -v 'BASH_ALIASES[e]' rm; shopt -s expand_aliases\ne -f victim",
    "read 'BASH_ALIASES[e]' <<< rm; shopt -s expand_aliases\ne -f victim",
    # builtins that run a string
    "mapfile -C 'rm -f victim;:' -c 1 <<< x",
    "readarray -C 'rm -f victim;:' -c 1 <<< x",
    "compgen -C 'rm -f victim' x",
    "f() { rm -f victim; }; compgen -F f x",
    # variables that run code, quoted
    "printf 'rm -f victim' > s; env BASH_EN''V=./s bash -c true",
    "printf 'rm -f victim' > s; export BASH\\_ENV=./s; bash -c true",
    "env 'BASH_FUN''C_true%%=() { rm -f victim; }' bash -c true",
    # wrapper options: abbreviations, bundles, + options
    "env --uns HOME rm -f victim",
    "mkdir d; cd d; env --ch .. rm -f victim",
    "timeout --sig KILL 5 rm -f victim",
    "timeout --kill 1 5 rm -f victim",
    "nice --adj 5 rm -f victim",
    "stdbuf --out L rm -f victim",
    "flock --time 1 l rm -f victim",
    "echo victim | xargs --max-a 1 rm -f",
    "echo victim | xargs --arg /dev/stdin rm -f",
    "env -iS'rm -f victim'",
    "env -vS'rm -f victim'",
    "bash -co posix 'rm -f victim'",
    "bash -cO extglob 'rm -f victim'",
    "bash -c +o posix 'rm -f victim'",
    "env - rm -f victim",
    # more programs that run a command
    "ssh-agent rm -f victim",
    "prlimit rm -f victim",
    "setpriv rm -f victim",
    "script -qc 'rm -f victim' /dev/null",
]

LEGITIMATE_ALLOWED = [
    "echo hi",
    "git status",
    "git status --short",
    "ls -la",
    "echo 'hello world'",
    'echo "a b" c',
    "ec'ho' quoted",
    "echo x\\ y",
    "echo 'a;b' '$(not run)'",
    "ls -la && echo done",
    "echo hi; echo ho",
    "echo hi\necho ho",
    "cat notes.txt",
    "echo a=b --flag=1 ./path/x.py",
    "git status | cat -n",
]
LEGITIMATE_UNDER_DENY = [
    "echo hi",
    "ls *.txt",
    "cat $(ls)",
    "git status",
    "echo rm",
    'echo "rm -rf /"',
    "grep -r rm .",
    "find . -name '*.py'",
    "python3 -m pytest -q",
    "echo $HOME",
    "export PATH=$HOME/.local/bin:$PATH",
    "export OUT=$(pwd)/out",
    'grep -n "end$" notes.txt',
    "cat <<'EOF' > run.sh\necho $(date) `id`\nEOF",
    "cat <<EOF\nHello $USER, it is $(date)\nEOF",
    'echo ${x:-default} ${v:1:2} ${#arr[@]} "${f%%.py}"',
    "for f in *.py; do echo $f; done",
    "timeout 60 python3 -m pytest -q",
    "env FOO=1 nice -n 10 make -j2",
    "find . -name '*.pyc' -print0 | xargs -0 ls",
    'bash -euo pipefail -c "make test"',
    'while read -r l; do echo "$l"; done < notes.txt',
    "declare -A seen; local -r x=1",
]


def bash(command: str, cwd: Path) -> None:
    subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, timeout=10)


@pytest.mark.parametrize("command", PAYLOADS_ALLOW)
def test_allow_bypass_is_real_and_never_allowed(command: str, tmp_path: Path) -> None:
    bash(command, tmp_path)
    assert (tmp_path / "PWNED").exists(), "the payload is no attack: fix it"
    verdict = Policy.build(rules=ALLOW_RULES).decide("shell", {"command": command})
    assert verdict.decision == "ask", verdict


@pytest.mark.parametrize("command", PAYLOADS_DENY + PAYLOADS_DENY_UNREAD)
def test_deny_bypass_is_real_and_never_allowed(command: str, tmp_path: Path) -> None:
    (tmp_path / "victim").write_text("keep me")
    bash(command, tmp_path)
    assert not (tmp_path / "victim").exists(), "the payload is no attack: fix it"
    for flags in ({"auto_approve": True}, {"flag_allow": ["shell"]}, {"allow": ["shell"]}):
        policy = Policy.build(rules=[*DENY_RULES, *ALLOW_RULES], **flags)  # type: ignore[arg-type]
        verdict = policy.decide("shell", {"command": command})
        assert verdict.decision in ("deny", "ask"), (flags, verdict)
        assert verdict.by.startswith("rule 1"), verdict


@pytest.mark.parametrize("command", LEGITIMATE_ALLOWED)
def test_plain_commands_are_still_allowed(command: str) -> None:
    assert Policy.build(rules=ALLOW_RULES).decide("shell", {"command": command}).decision == "allow"


@pytest.mark.parametrize("command", LEGITIMATE_UNDER_DENY)
def test_harmless_commands_still_run_under_a_deny_rule(command: str) -> None:
    policy = Policy.build(rules=DENY_RULES, auto_approve=True)
    assert policy.decide("shell", {"command": command}).decision == "allow"


def test_a_line_too_long_to_read_is_never_allowed_and_asks_under_a_deny_rule(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    parsed: list[int] = []  # the length of each line handed to the parser
    real = bash_parse._parse
    monkeypatch.setattr(
        bash_parse, "_parse", lambda source: parsed.append(len(source)) or real(source)
    )
    long = "echo " + "a" * 100_001
    assert Policy.build(rules=ALLOW_RULES).decide("shell", {"command": long}).decision == "ask"
    policy = Policy.build(rules=DENY_RULES, auto_approve=True)
    assert policy.decide("shell", {"command": long + "; rm -f victim"}).decision == "ask"
    assert all(n <= bash_parse.MAX_LENGTH for n in parsed), "a long line must be refused unparsed"
    plain = Policy.build(rules=ALLOW_RULES).decide("shell", {"command": "echo " + "a" * 5000})
    assert plain.decision == "allow"


WRAPPED = ["env", "timeout", "nice", "stdbuf", "xargs", "sudo", "setsid", "time", "prlimit"]


@st.composite
def unknown_options(draw: st.DrawFn) -> tuple[str, str]:
    """A wrapper and a long option it does not have exactly: an abbreviation of one of its
    long options (which GNU tools accept), or made-up letters."""
    name = draw(st.sampled_from(WRAPPED))
    longs = sorted(SPECS[name].long) or ["--x"]
    full = draw(st.sampled_from(longs))
    option = draw(
        st.one_of(
            st.integers(3, max(3, len(full) - 1)).map(lambda n: full[:n]),
            st.from_regex(r"--[a-zA-Z][a-zA-Z-]{0,6}", fullmatch=True),
        )
    )
    assume(option not in SPECS[name].long)
    return name, option


@settings(max_examples=300, deadline=None)
@given(case=unknown_options())
def test_an_option_a_wrapper_does_not_know_never_lets_rm_through(case: tuple[str, str]) -> None:
    """`env --uns HOME rm`: if the option takes a value, the next word is not the command. So
    after an option it does not know exactly, whatever follows is unknown: asked about."""
    name, option = case
    operand = " 5" if name == "timeout" else ""
    command = f"{name} {option}{operand} X rm -f victim"
    policy = Policy.build(rules=DENY_RULES, auto_approve=True)
    assert policy.decide("shell", {"command": command}).decision in ("deny", "ask"), command


# -- through the installed command -------------------------------------------------------------

E2E_ALLOW = PAYLOADS_ALLOW[::4]  # 13 of them, of every kind
E2E_DENY = PAYLOADS_DENY[::5] + PAYLOADS_DENY_UNREAD[::9]  # 15 + 9 of them


def tool_results(agent: Agent, request: int) -> dict[str, str]:
    messages = agent.server.requests[request]["messages"]
    return {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}


def configure(agent: Agent, rules: list[dict[str, str]]) -> None:
    folder = Path(agent.env["XDG_CONFIG_HOME"]) / "agentcli"
    folder.mkdir(parents=True, exist_ok=True)
    body = "".join(
        f'[[approval.rules]]\ntool = "{r["tool"]}"\nmatch = {json.dumps(r["match"])}\n'
        f'decision = "{r["decision"]}"\n\n'
        for r in rules
    )
    (folder / "config.toml").write_text(body)


@pytest.mark.parametrize("command", E2E_ALLOW)
def test_allow_bypass_waits_for_a_person(agent: Agent, command: str) -> None:
    configure(agent, ALLOW_RULES)
    agent.server.push(tool_calls(("shell", {"command": command})))
    result = agent.run("run", "do it", "-o", "json")
    assert result.returncode == 3, result.stderr
    report = json.loads(result.stdout)
    assert report["status"] == "awaiting_approval", report
    assert [p["args"]["command"] for p in report["pending"]] == [command]
    assert not (agent.workspace / "PWNED").exists()


@pytest.mark.parametrize("command", E2E_DENY)
def test_deny_bypass_does_not_run_under_auto_approve(agent: Agent, command: str) -> None:
    configure(agent, DENY_RULES)
    (agent.workspace / "victim").write_text("keep me")
    agent.server.push(tool_calls(("shell", {"command": command})), text("Stopped."))
    result = agent.run("run", "do it", "-o", "json", "--auto-approve")
    assert result.returncode in (0, 3), result.stderr  # denied (0) or asked (3)
    assert (agent.workspace / "victim").read_text() == "keep me"
    if result.returncode == 0:
        assert "denied by rule 1" in tool_results(agent, 1)["call_1"]
    else:
        assert json.loads(result.stdout)["pending"][0]["args"]["command"] == command


def test_legitimate_commands_run_through_the_command(agent: Agent) -> None:
    configure(agent, ALLOW_RULES)
    (agent.workspace / "notes.txt").write_text("milk\n")
    commands = ["echo hi", "ls -la", "echo 'a b' \"c d\"", "cat notes.txt && echo done"]
    agent.server.push(tool_calls(*[("shell", {"command": c}) for c in commands]), text("Done."))
    result = agent.run("run", "do it", "-o", "json")
    assert result.returncode == 0, result.stderr
    outputs = tool_results(agent, 1)
    assert "hi" in outputs["call_1"] and "notes.txt" in outputs["call_2"]
    assert "a b c d" in outputs["call_3"]
    assert "milk" in outputs["call_4"] and "done" in outputs["call_4"]


def test_harmless_commands_run_under_a_deny_rule_and_auto_approve(agent: Agent) -> None:
    configure(agent, DENY_RULES)
    (agent.workspace / "victim").write_text("keep me")
    agent.server.push(
        tool_calls(("shell", {"command": "echo rm; ls *"}), ("shell", {"command": "rm victim"})),
        text("Done."),
    )
    result = agent.run("run", "do it", "-o", "json", "-y")
    assert result.returncode == 0, result.stderr
    outputs = tool_results(agent, 1)
    assert "victim" in outputs["call_1"] and "denied by rule 1" in outputs["call_2"]
    assert (agent.workspace / "victim").exists()
