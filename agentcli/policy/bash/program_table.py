"""What a program does with its arguments: the one table that both a plan task's result
(which argument may hold it, program_arguments.py) and the rule `A` proposes (how wide it may
be, policy/call_scope.py; which rules allow everything, policy/allow_all.py) read.

Each program here was read (its manual, and the payloads in tests/security run against the
real program). A program that is not here is unknown: none of its arguments is data.

- `operands`: what its arguments that are not options are. DATA: files it reads or writes,
  strings it prints or matches; never code. SCRIPT: sed's; the first is a script unless an
  `-e`/`-f` comes before. NONE: code, targets, subcommands or anything not read.
- `flags`: its short options that take no value, and `words` whole option words that take
  none (`--short`, test's `-eq`): after one of these the next word is an operand. After any
  other option word, or one that is not literal, it may be that option's value (`sort -o
  FILE`, `sed -e SCRIPT`), unless no option of the program takes one (`values`: echo).
- `runs`: how some argument of it runs code or writes a file of the caller's choosing ("" if
  none does): an allow rule `prog *` allows everything, and `A` proposes the exact command.
  `probes` are such command lines (each proven in tests/security), which allow_all.py tries.
- `writes`: the files its operands name are changed (rm, touch): `A` proposes the exact
  command, but such a rule is no allow-everything rule.
- `subcommands`: git's: the program's own entry covers its global options, each subcommand's
  entry what follows it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from agentcli.policy.bash.wrapper_options import SPECS
from agentcli.policy.bash.wrappers import OPAQUE, SHELLS

DATA, SCRIPT, NONE = "data", "script", "none"
ANY = "runs any code or command its arguments name"

# programs that run whatever code or command their arguments name (interpreters, shells,
# package runners, and every wrapper wrappers.py reads)
INTERPRETERS = tuple(dict.fromkeys((
    "python", "python2", "python3", "python3.8", "python3.9", "python3.10", "python3.11",
    "python3.12", "python3.13", "python3.14", "pypy", "pypy3", "node", "nodejs", "deno", "bun",
    "bash", "sh", "zsh", "dash", "ksh", "fish", "csh", "tcsh", "busybox", "perl", "ruby",
    "php", "lua", "Rscript", "osascript", "pwsh", "powershell", "tclsh", "awk", "gawk", "mawk",
    "nawk", "npx", "pnpx", "bunx", "uvx", "pipx", "uv", "npm", "pnpm", "yarn", "poetry", "pdm",
    "hatch", "conda", "sudo", "doas", "su", "env", "xargs", "nohup", "nice", "timeout",
    "time", "exec", "eval", "command", "builtin", "setsid", "stdbuf", "chroot", "flock",
    "strace", "watch", "parallel", "find", "ssh", "docker", "podman", "kubectl", "script",
    "ionice", "taskset", "chrt", "prlimit", "setpriv", "unshare", "nsenter", "ltrace",
    "caffeinate", "ssh-agent", "toybox", "runuser", "coproc", "trap", "source", ".",
    *sorted(SPECS), *sorted(SHELLS), *sorted(OPAQUE),
)))  # fmt: skip


@dataclass(frozen=True)
class Program:
    operands: str = NONE
    flags: str = ""
    words: frozenset[str] = frozenset()
    runs: str = ""
    writes: str = ""
    values: bool = True  # some option takes its value from the next word (not echo's)
    probes: tuple[tuple[str, ...], ...] = ()
    subcommands: Mapping[str, Program] = field(default_factory=dict)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_TEST = Program(
    DATA,
    "abcdefghknoprstuwxzGLNOS",  # never -v or -R: they take a variable name, whose index
    _words("-eq -ne -lt -le -gt -ge -nt -ot -ef = != == < > ! -a -o"),  # bash evaluates
)
_VIM = Program(
    runs="runs Ex commands from +cmd and -c, which run shell commands and write files",
    probes=(("vim", "-es", "+!touch PWNED"), ("vim", "-es", "-c", "!touch PWNED", "-c", "q")),
)
_GIT_OUTPUT = "writes any file with --output"

PROGRAMS: dict[str, Program] = {
    **{name: Program(runs=ANY) for name in INTERPRETERS},
    # data: nothing in their arguments runs code or writes a file
    "echo": Program(DATA, "neE", values=False),
    "printf": Program(DATA),  # its one option, -v, takes a name (an index bash evaluates)
    "cat": Program(DATA, "AbeEnstTuv"),
    "wc": Program(DATA, "clmwL"),
    "head": Program(DATA, "qvz"),
    "tail": Program(DATA, "fFqvz"),
    "grep": Program(DATA, "EFGPiywxvcLloqsbHhnTZzrRaIUV"),
    "ls": Program(DATA, "aAbBcCdfFgGhHiklLmnNopqQrRsStuUvxXZ1"),
    "stat": Program(DATA, "Lft"),
    "basename": Program(DATA, "az"),
    "dirname": Program(DATA, "z"),
    "realpath": Program(DATA, "eLmPqsz"),
    "diff": Program(DATA, "aBbdEeiNnpqrsTtuwy"),
    "sha256sum": Program(DATA, "bctwz"),
    "md5sum": Program(DATA, "bctwz"),
    "du": Program(DATA, "abcDhHkLlmPsSx0"),
    "test": _TEST,
    "[": _TEST,
    # they change the files their operands name, and nothing else
    "rm": Program(DATA, "dfiIrRv", writes="removes the files it is given"),
    "rmdir": Program(DATA, "pv", writes="removes the folders it is given"),
    "mkdir": Program(DATA, "pv", writes="creates the folders it is given"),
    "touch": Program(DATA, "acfhm", writes="creates the files it is given"),
    # they write any file with any content: the file they are given is no place for a result
    "cp": Program(NONE, "abdfHilLnPprsTuvx", runs="writes any file it is given (a shell's "
                  "startup file too)", probes=(("cp", "notes.txt", "PWNED"),)),  # fmt: skip
    "mv": Program(NONE, "bfinTuv", runs="writes any file it is given",
                  probes=(("mv", "notes.txt", "PWNED"),)),  # fmt: skip
    "tee": Program(NONE, "aip", runs="writes any file it is given", probes=(("tee", "PWNED"),)),
    "ln": Program(NONE, "bdfFiLnPrsTv", runs="links any file it is given",
                  probes=(("ln", "-s", "notes.txt", "PWNED"),)),  # fmt: skip
    "sort": Program(
        DATA, "bcCdfghiMmnRrsuVz", runs="writes any file with -o, runs --compress-program",
        probes=(("sort", "-oPWNED", "notes.txt"), ("sort", "notes.txt", "--output=PWNED")),
    ),  # fmt: skip
    "tar": Program(
        NONE, runs="runs commands with --to-command, --checkpoint-action, -I; writes archives",
        probes=(("tar", "-xf", "a.tar", "--to-command=touch PWNED"),
                ("tar", "-cf", "x.tar", "notes.txt", "--checkpoint=1",
                 "--checkpoint-action=exec=touch PWNED"),
                ("tar", "-czf", "x.tgz", "notes.txt", "--checkpoint=1",
                 "--checkpoint-action=exec=touch PWNED")),
    ),  # fmt: skip
    # code: scripts, targets, commands
    "sed": Program(
        SCRIPT, "nrsuzE", _words("-i --in-place --quiet --silent --regexp-extended --debug "
                                 "--posix --sandbox --separate --null-data --unbuffered"),
        runs="its script runs commands (e) and writes files (w)",
        probes=(("sed", "-n", "1e touch PWNED", "notes.txt"), ("sed", "-n", "1w PWNED",
                "notes.txt"), ("sed", "s/x/y/w PWNED", "notes.txt")),
    ),  # fmt: skip
    "make": Program(runs="runs recipes, and $(shell ...) in a variable or --eval",
                    probes=(("make", "--eval=$(shell touch PWNED)"),
                            ("make", "X=$(shell touch PWNED)"))),  # fmt: skip
    "gdb": Program(runs="runs shell commands with -ex shell",
                   probes=(("gdb", "-batch", "-ex", "shell touch PWNED"),)),  # fmt: skip
    "vim": _VIM, "vi": _VIM, "nvim": _VIM, "view": _VIM, "ex": _VIM, "vimdiff": _VIM,
    "sqlite3": Program(runs="runs shell commands with .shell and .system",
                       probes=(("sqlite3", ":memory:", ".shell touch PWNED"),
                               ("sqlite3", "-cmd", ".system touch PWNED", ":memory:"))),
    "curl": Program(runs="writes any file with -o", probes=(("curl", "-sSoPWNED",
                    "file:///etc/hostname"),)),  # fmt: skip
    "wget": Program(runs="writes any file with -O", probes=(("wget", "-qOPWNED",
                    "file:///etc/hostname"),)),  # fmt: skip
    "dd": Program(runs="writes any file with of=", probes=(("dd", "if=notes.txt",
                  "of=PWNED"),)),  # fmt: skip
    "zip": Program(runs="runs --unzip-command",
                   probes=(("zip", "-q", "x.zip", "notes.txt", "-T",
                            "--unzip-command=touch PWNED"),)),  # fmt: skip
    "git": Program(
        runs="runs code through -c, aliases and pagers; writes any file with --output",
        probes=(("git", "-c", "alias.x=!touch PWNED", "x"),),
        subcommands={
            "status": Program(DATA, "sbuvz", _words("--short --branch --porcelain --long "
                              "--ignored --untracked-files --verbose")),  # fmt: skip
            "ls-files": Program(DATA, "cdmoistvz", _words("--cached --others --modified")),
            "log": Program(DATA, "p", _words("--oneline --stat --patch"), runs=_GIT_OUTPUT,
                           probes=(("git", "log", "--output=PWNED"),)),  # fmt: skip
            "show": Program(DATA, "p", _words("--stat --oneline"), runs=_GIT_OUTPUT,
                            probes=(("git", "show", "--output=PWNED"),)),  # fmt: skip
            "diff": Program(DATA, "pR", _words("--cached --staged --stat"), runs=_GIT_OUTPUT,
                            probes=(("git", "diff", "--output=PWNED"),)),  # fmt: skip
            "grep": Program(DATA, "EFGPivwnlLcIh", runs="runs -O/--open-files-in-pager",
                            probes=(("git", "grep", "-Otouch PWNED", "hi"),)),  # fmt: skip
            "add": Program(DATA, "fnvuA", writes="stages the files it is given"),
        },
    ),
}  # fmt: skip
