"""Allow rules that amount to allowing everything: `python *`, `bash *`, `npx *`, `sudo *`,
`*`. Such a rule is legal, and is warned about when the config loads and by `policy list`.

A shell allow rule is matched against each plain command written in shell quoting
(shell_rules.py), so the test is direct: does the pattern fit a command that runs code of the
caller's choosing, through an interpreter, a shell or a package runner? Probes such as
`python -c payload`, `/usr/bin/env payload` or `pipx run payload` are tried against it.
"""

from __future__ import annotations

import fnmatch

# programs that run whatever code or command their arguments name
INTERPRETERS = (
    "python", "python2", "python3", "python3.8", "python3.9", "python3.10", "python3.11",
    "python3.12", "python3.13", "python3.14", "pypy", "pypy3", "node", "nodejs", "deno", "bun",
    "bash", "sh", "zsh", "dash", "ksh", "fish", "csh", "tcsh", "busybox", "perl", "ruby",
    "php", "lua", "Rscript", "osascript", "pwsh", "powershell", "tclsh", "awk", "gawk",
    "npx", "pnpx", "bunx", "uvx", "pipx", "uv", "npm", "pnpm", "yarn", "poetry", "pdm",
    "hatch", "conda", "sudo", "doas", "su", "env", "xargs", "nohup", "nice", "timeout",
    "time", "exec", "eval", "command", "builtin", "setsid", "stdbuf", "chroot", "flock",
    "strace", "watch", "parallel", "find", "ssh", "docker", "podman", "kubectl",
)  # fmt: skip
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
    return None
