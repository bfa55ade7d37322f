"""Allow rules that amount to allowing everything: `python *`, `bash *`, `npx *`, `sudo *`,
`*`. Such a rule is legal, and is warned about when the config loads and by `policy list`.

A shell allow rule is matched against each plain command written in shell quoting
(shell_rules.py), so the test is direct: does the pattern fit a command that runs code of the
caller's choosing, or writes a file of its choosing? The programs are those of
bash/program_table.py with a `runs`: for an interpreter, a shell, a package runner or a
wrapper, probes such as `python -c payload`, `/usr/bin/env payload` or `pipx run payload`;
for the others their own probes (`sed -n '1e touch PWNED' notes.txt`, `git -c
'alias.x=!touch PWNED' x`, `sort -oPWNED notes.txt`), each proven in tests/security.
"""

from __future__ import annotations

import fnmatch
import shlex
from collections.abc import Iterator

from agentcli.policy.bash.program_table import INTERPRETERS, PROGRAMS, Program

# what may stand between the program and the code: its options, or a runner's subcommand
LEADS = ("", "-c ", "-e ", "-m ", "run ", "exec ", "x ", "dlx ", "tool run ", "-i ")
PAYLOADS = ("payload", "'payload; rm -rf ~'")


def allows_everything(tool: str, match: str | None, decision: str) -> str | None:
    """Why an allow rule amounts to allowing everything (for a warning), or None."""
    if decision != "allow":
        return None
    for_shell = fnmatch.fnmatchcase("shell", tool)
    if match is None:
        return "allows every shell command" if for_shell else None
    if match.strip() in ("*", "**"):
        return f"match {match!r} allows every call of {tool}"
    if not for_shell:
        return None
    for program in INTERPRETERS:
        for name in (program, f"/usr/bin/{program}", f"/usr/local/bin/{program}"):
            for lead in LEADS:
                for payload in PAYLOADS:
                    if fnmatch.fnmatchcase(f"{name} {lead}{payload}", match):
                        return (
                            f"match {match!r} allows {program} to run any code or command"
                            f" (it fits `{name} {lead}{payload}`)"
                        )
    for runs, line in probes():
        if fnmatch.fnmatchcase(line, match):
            name = line.split(" ", 1)[0]
            return (
                f"match {match!r} lets {name} run code or write any file: {runs} (it fits `{line}`)"
            )
    return None


def probes() -> Iterator[tuple[str, str]]:
    """(why, line) for each proven probe of program_table.py, as an allow rule reads a
    command (words in shell quoting), under its name and full paths."""
    entries: list[tuple[str, Program]] = []
    for program, entry in PROGRAMS.items():  # `vi` and `vim` share theirs
        entries += [(program, entry), *((program, sub) for sub in entry.subcommands.values())]
    for program, entry in entries:
        for words in entry.probes:
            for name in (program, f"/usr/bin/{program}", f"/usr/local/bin/{program}"):
                yield entry.runs, " ".join(shlex.quote(w) for w in (name, *words[1:]))
