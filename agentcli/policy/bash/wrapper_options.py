"""The options of the programs that run a command, and a getopt that reads them exactly.

A wrapper's options decide where the command it runs starts: `timeout -s KILL 5 rm x` runs
`rm x` only because `-s` takes a value. So each wrapper's options are listed here as the real
tool has them, and `read_options` reads a command line the way getopt does: short options may
be bundled (`-iS'rm x'`: `-i`, then `-S` with the rest as its value), a long option is matched
exactly. Whatever it does not know exactly fails closed: an unknown option, a GNU long-option
abbreviation (`--uns` for `--unset`, which the tools accept), a word that is not literal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

Words = tuple[str | None, ...]
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


@dataclass(frozen=True)
class Spec:
    """A wrapper's grammar: `[options] [NAME=VALUE...] [operands] command [args]`."""

    flags: str = ""  # short options without a value
    values: str = ""  # short options that take a value (attached or the next word)
    optional: str = ""  # short options whose value can only be attached (`-i{}`)
    long: dict[str, str] = field(default_factory=dict)  # "--unset": "value" / "flag" / "optional"
    assignments: bool = False  # NAME=VALUE words may follow the options (env, sudo)
    operands: int = 0  # words between the options and the command (timeout's DURATION)
    default: tuple[str, ...] | None = None  # what runs when no command is given (xargs: echo)
    numeric: bool = False  # `-5` is an option (nice's old adjustment form)


def spec(
    flags: str = "", values: str = "", optional: str = "", long: str = "", **kwargs: object
) -> Spec:
    """`long` is names separated by spaces: `--unset=` takes a value, `--null` does not,
    `--replace=?` takes one only when attached with `=`."""
    table = {}
    for name in long.split():
        kind = "optional" if name.endswith("=?") else "value" if name.endswith("=") else "flag"
        table[name.rstrip("=?")] = kind
    return Spec(flags, values, optional, table, **kwargs)  # type: ignore[arg-type]


_GNU = "--help --version"
SPECS: dict[str, Spec] = {
    "command": spec("pvV"),
    "builtin": spec(),
    "exec": spec("cl", "a"),
    "nohup": spec(long=_GNU),
    "setsid": spec("cfwhV", long=f"--ctty --fork --wait {_GNU}"),
    "time": spec("apqvV", "fo", long=f"--append --format= --output= --portability --quiet "
                 f"--verbose {_GNU}"),  # fmt: skip
    "nice": spec("", "n", long=f"--adjustment= {_GNU}", numeric=True),
    "ionice": spec("thV", "cn", long=f"--class= --classdata= --ignore {_GNU}"),
    "timeout": spec("v", "ks", long=f"--foreground --kill-after= --preserve-status --signal= "
                    f"--verbose {_GNU}", operands=1),  # fmt: skip
    "stdbuf": spec("", "ioe", long=f"--input= --output= --error= {_GNU}"),
    "env": spec("0iv", "uCS", long=f"--null --ignore-environment --unset= --chdir= "
                f"--split-string= --debug --block-signal=? --default-signal=? "
                f"--ignore-signal=? --list-signal-handling {_GNU}", assignments=True),
    "sudo": spec("AbBEHkKnNPSvV", "CDgpRrtTuU", "h", long="--askpass --background --bell "
                 "--close-from= --chdir= --preserve-env=? --group= --set-home --host= "
                 "--remove-timestamp --reset-timestamp --non-interactive --preserve-groups "
                 "--prompt= --chroot= --role= --stdin --type= --command-timeout= "
                 "--other-user= --user=", assignments=True),  # fmt: skip
    "doas": spec("n", "u"),
    "chroot": spec(long=f"--userspec= --groups= --skip-chdir {_GNU}", operands=1),
    "chrt": spec("abdfiorRv", "TPD", long="--all-tasks --batch --deadline --fifo --idle "
                 "--other --rr --reset-on-fork --verbose --sched-runtime= --sched-period= "
                 "--sched-deadline=", operands=1),  # fmt: skip
    "taskset": spec("ac", long="--all-tasks --cpu-list", operands=1),
    "xargs": spec("0prtxo", "adEILnPs", "eil", long="--null --arg-file= --delimiter= --eof=? "
                  "--replace=? --max-lines=? --max-args= --open-tty --interactive "
                  "--max-procs= --no-run-if-empty --max-chars= --verbose --exit "
                  "--process-slot-var=", default=("echo",)),  # fmt: skip
    "strace": spec("AcCdDfFhiknNqrtTvVwxyzZ", "abeEIoOpPsSuUX", long="--output="),
    "ltrace": spec("bcCfhiLrStTV", "aAeDFlnopsuwx", long="--output= --demangle --indent="),
    "unshare": spec("muinpUCTfrc", "SGRw", long="--fork --map-root-user --map-current-user "
                    "--kill-child=? --setuid= --setgid= --root= --wd="),  # fmt: skip
    "nsenter": spec("FZ", "tSGrw", "muinpUCT", long="--target= --setuid= --setgid= --root= "
                    "--wd= --no-fork --preserve-credentials --all"),  # fmt: skip
    "caffeinate": spec("dimsu", "tw"),
    "busybox": spec(),
    "toybox": spec(),
    "ssh-agent": spec("cdDsk", "aEOPt"),
    "prlimit": spec("v", "p", "cdefilmnqrstuxy", long="--pid= --verbose --noheadings --raw "
                    "--core=? --data=? --nice=? --fsize=? --sigpending=? --memlock=? --rss=? "
                    "--nofile=? --msgqueue=? --rtprio=? --stack=? --cpu=? --nproc=? --as=? "
                    "--locks=? --rttime=?"),  # fmt: skip
    "setpriv": spec("d", long="--dump --nnp --no-new-privs --reuid= --regid= --clear-groups "
                    "--keep-groups --init-groups --groups= --inh-caps= --ambient-caps= "
                    "--bounding-set= --securebits= --pdeathsig= --selinux-label= "
                    "--apparmor-profile= --landlock-access= --landlock-rule= --reset-env"),
}  # fmt: skip


@dataclass
class Read:
    """What `read_options` found: the options (name, value) and where the rest starts."""

    options: list[tuple[str, str | None]]
    rest: int


def read_options(args: Words, table: Spec) -> Read | str:
    """Read the options at the start of `args` as getopt does; a reason string when unsure."""
    found: list[tuple[str, str | None]] = []
    i = 0
    while i < len(args):
        word = args[i]
        if word is None:
            return "a word that is not literal among its options"
        if word == "--":
            return Read(found, i + 1)
        if word.startswith("--"):
            name, eq, given = word.partition("=")
            kind = table.long.get(name)
            if kind is None or (kind == "flag" and eq):
                return f"an option it does not know exactly ({name})"
            if kind == "value" and not eq:
                if i + 1 >= len(args) or args[i + 1] is None:
                    return f"the value of {name} is not literal"
                given, i = str(args[i + 1]), i + 1
            found.append((name, given if eq or kind == "value" else None))
            i += 1
            continue
        if not word.startswith("-") or word == "-":
            break
        if table.numeric and word[1:].isdigit():
            found.append(("-n", word[1:]))
            i += 1
            continue
        at = 1
        while at < len(word):
            letter = word[at]
            if letter in table.values or letter in table.optional:
                value = word[at + 1 :] or None
                if not value and letter in table.values:
                    if i + 1 >= len(args) or args[i + 1] is None:
                        return f"the value of -{letter} is not literal"
                    value, i = args[i + 1], i + 1
                found.append((f"-{letter}", value))
                break
            if letter not in table.flags:
                return f"an option it does not know exactly (-{letter})"
            found.append((f"-{letter}", None))
            at += 1
        i += 1
    return Read(found, i)


def after_options(args: Words, table: Spec) -> Words | str:
    """The words after the options, assignments and operands; a reason string when unsure."""
    read = read_options(args, table)
    if isinstance(read, str):
        return read
    i = read.rest
    while table.assignments and i < len(args) and args[i] is not None:
        if not _NAME.match(str(args[i])):
            break
        i += 1
    rest = args[i:]
    if table.operands:
        if any(w is None for w in rest[: table.operands + 1]):
            return "a word that is not literal before the command it runs"
        rest = rest[table.operands :]
    elif rest[:1] == (None,):
        return "a word that is not literal before the command it runs"
    return rest


def has(read: Read, *names: str) -> bool:
    return any(name in names for name, _ in read.options)


def value_of(read: Read, *names: str) -> str | None:
    return next((value for name, value in read.options if name in names), None)
