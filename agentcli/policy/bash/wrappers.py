"""Commands that run their arguments as a command: `sudo rm x` runs `rm x`.

`inner(words)` tells what a wrapper runs: other commands (their words), strings that bash (or
a shell) runs as a command line, or that it cannot tell (`unknown`). It knows each wrapper's
options that take a value, so `timeout -s KILL 5 rm x` and `env -u HOME X=1 rm x` both reach
`rm x`. A word that is not literal before the wrapped command makes the command unknown: its
value could be an option, an operand or the command itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agentcli.policy.bash.wrapper_options import (
    SPECS,
    Read,
    after_options,
    has,
    read_options,
    spec,
    value_of,
)

Words = tuple[str | None, ...]


@dataclass(frozen=True)
class Inner:
    commands: tuple[Words, ...] = ()
    scripts: tuple[str, ...] = ()  # strings run as bash command lines
    unknown: str = ""  # why what it runs cannot be known


SHELLS = {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh", "rbash", "fish"}
# bash's own options (dash and the others have fewer); `-o NAME` and `-O NAME` take a value.
SHELL = spec(
    "abcefhiklmnprstuvxBCDEHPT",
    "oO",
    long="--debugger --dump-po-strings --dump-strings --help --login --noediting --noprofile "
    "--norc --posix --protected --restricted --verbose --version --wordexp --init-file= "
    "--rcfile=",
)
# These run code this module cannot see: a file, or a string bash evaluates as arithmetic.
OPAQUE = {
    "source": "runs a file",
    ".": "runs a file",
    "let": "evaluates arithmetic that can run code a variable holds",
    "enable": "can load a builtin from a shared library",
    "fc": "runs commands from the history",
    "ssh": "runs a command on another machine",
    "bind": "can bind a key to a command",
    "parallel": "builds the commands it runs from its input",
}


def basename(word: str | None) -> str:
    return (word or "").rstrip("/").rsplit("/", 1)[-1]


def inner(words: Words) -> Inner | None:
    """What the command `words` runs besides itself, or None when it is no wrapper."""
    name = basename(words[0])
    args = words[1:]
    if name in OPAQUE:
        return Inner(unknown=OPAQUE[name])
    if name in SHELLS:
        return _shell(args)
    if name in ("su", "runuser"):
        return _su(args)
    if name == "eval":
        return _script(args, "evaluates a string that is not literal")
    if name == "trap":
        return _trap(args)
    if name == "alias" and any(w is None or "=" in w for w in args):
        return Inner(unknown="an alias can give any command another name")
    if name == "find":
        return _find(args)
    if name == "watch":
        rest = after_options(args, spec("bcCeghptwx", "n", long="--interval= --differences=?"))
        if isinstance(rest, str):
            return Inner(unknown=rest)
        return _script(rest, "runs words that are not literal") if rest else None
    if name == "flock":
        return _flock(args)
    if name == "coproc":  # `coproc NAME command` or `coproc command`: both are possible
        return Inner(commands=tuple(args[i:] for i in (0, 1) if len(args) > i))
    if name == "script":
        return _typescript(args)
    if name == "env" and args[:1] == ("-",):  # `env -` is `env -i`
        args = ("-i", *args[1:])
    table = SPECS.get(name)
    if table is None:
        return None
    read = read_options(args, table)
    if isinstance(read, str):
        return Inner(unknown=read)
    if (why := _no_command(name, read)) is not None:
        return Inner(unknown=why) if why else None
    if name == "env" and (split := value_of(read, "-S", "--split-string")) is not None:
        return _script((split, *args[read.rest :]), "splits a string that is not literal")
    rest = after_options(args, table)
    if isinstance(rest, str):
        return Inner(unknown=rest)
    if name == "xargs":
        rest = _xargs(read, rest or table.default or ())
    if not rest:
        return None
    if name == "busybox" and rest[0] is not None and rest[0].startswith("-"):
        return Inner(unknown="an option it does not know exactly")
    return Inner(commands=(rest,))


# Options after which the wrapper runs no command of the line ("") or one it cannot see.
_MODES: dict[str, dict[str, str]] = {
    "command": {"-v": "", "-V": ""},
    "sudo": {"-s": "runs a shell", "-i": "runs a login shell", "-e": "runs an editor",
             "-l": "", "-v": "", "-k": "", "-K": "", "-V": ""},
    "chrt": {"-p": ""},
    "taskset": {"-p": ""},
    "ssh-agent": {"-k": "", "-D": "", "-d": ""},
}  # fmt: skip


def _no_command(name: str, read: Read) -> str | None:
    modes = _MODES.get(name, {})
    if found := [modes[o] for o, _ in read.options if o in modes]:
        return next((why for why in found if why), "")
    if any(o in ("--help", "--version", "-h", "-V") for o, _ in read.options) and name != "sudo":
        return ""
    return None


def _xargs(read: Read, words: Words) -> Words:
    """xargs adds words from its input; with -I/-i it puts them into the words themselves."""
    replace = value_of(read, "-I", "--replace", "-i")
    if has(read, "-I", "-i", "--replace"):
        mark = replace or "{}"
        return tuple(None if w is None or mark in w else w for w in words)
    return (*words, None)


def _script(words: Sequence[str | None], why: str) -> Inner:
    if any(w is None for w in words):
        return Inner(unknown=why)
    return Inner(scripts=(" ".join(w for w in words if w is not None),))


def _shell(args: Words) -> Inner:
    """`bash [options] -c STRING [NAME [ARGS]]`: options may be bundled, `-o`/`-O` (also as
    `+o`/`+O`) take a value, and the string is the first word after the options."""
    plus = tuple(
        "-" + w[1:] if w is not None and w.startswith("+") and w != "+" else w for w in args
    )
    read = read_options(plus, SHELL)
    if isinstance(read, str):
        return Inner(unknown=read)
    if not has(read, "-c"):
        return Inner(unknown="runs a script file or its standard input")
    if read.rest >= len(args) or args[read.rest] is None:
        return Inner(unknown="runs a command string that is not literal")
    return Inner(scripts=(str(args[read.rest]),))


def _su(args: Words) -> Inner:
    for at, word in enumerate(args):
        if word is None:
            return Inner(unknown="a word that is not literal")
        if word in ("-c", "--command", "--session-command") and at + 1 < len(args):
            value = args[at + 1]
            return Inner(scripts=(value,)) if value else Inner(unknown="a string not literal")
        if word.startswith(("--command=", "--session-command=")):
            return Inner(scripts=(word.split("=", 1)[1],))
    return Inner(unknown="runs a login shell")


def _trap(args: Words) -> Inner | None:
    rest = [w for w in args if w not in ("-p", "-l", "--")]
    if not rest or rest[0] == "-":
        return None
    return _script(rest[:1], "sets a trap that is not literal")


def _find(args: Words) -> Inner | None:
    commands: list[Words] = []
    for at, word in enumerate(args):
        if word in ("-exec", "-execdir", "-ok", "-okdir"):
            end = next((j for j in range(at + 1, len(args)) if args[j] in (";", "+")), len(args))
            commands.append(args[at + 1 : end] or (None,))
    return Inner(commands=tuple(commands)) if commands else None


def _flock(args: Words) -> Inner:
    """`flock [options] FILE command [args]` or `flock [options] FILE -c STRING`."""
    table = spec("sexunoFhV", "wE", long="--shared --exclusive --unlock --nonblock --nb --close "
                 "--no-fork --verbose --timeout= --wait= --conflict-exit-code= --help --version",
                 operands=1)  # fmt: skip
    read = read_options(args, table)
    if isinstance(read, str):
        return Inner(unknown=read)
    rest = after_options(args, table)
    if isinstance(rest, str):
        return Inner(unknown=rest)
    if rest[:1] in (("-c",), ("--command",)):
        return _script(rest[1:2], "a command string that is not literal")
    return Inner(commands=(rest,)) if rest else Inner()


def _typescript(args: Words) -> Inner | None:
    """`script [options] [FILE]`: `-c STRING` runs the string with a shell (options and the
    file may come in any order)."""
    table = spec("aeEfqwhV", "cBIOTm", "t", long="--append --command= --echo= --return "
                 "--flush --force --quiet --log-in= --log-out= --log-io= --log-timing= "
                 "--logging-format= --timing=? --output-limit= --help --version")  # fmt: skip
    strings: list[str | None] = []
    i = 0
    while i < len(args):
        read = read_options(args[i:], table)
        if isinstance(read, str):
            return Inner(unknown=read)
        strings += [v for o, v in read.options if o in ("-c", "--command")]
        i += max(read.rest, 1)
    if not strings:
        return Inner(unknown="runs a shell")
    if any(s is None for s in strings):
        return Inner(unknown="a command string that is not literal")
    return Inner(scripts=tuple(str(s) for s in strings))
