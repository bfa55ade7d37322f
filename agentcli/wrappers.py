"""Commands that run their arguments as a command: `sudo rm x` runs `rm x`.

`inner(words)` tells what a wrapper runs: other commands (their words), strings that bash (or
a shell) runs as a command line, or that it cannot tell (`unknown`). It knows each wrapper's
options that take a value, so `timeout -s KILL 5 rm x` and `env -u HOME X=1 rm x` both reach
`rm x`. A word that is not literal before the wrapped command makes the command unknown: its
value could be an option, an operand or the command itself.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

Words = tuple[str | None, ...]
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


@dataclass(frozen=True)
class Inner:
    commands: tuple[Words, ...] = ()
    scripts: tuple[str, ...] = ()  # strings run as bash command lines
    unknown: str = ""  # why what it runs cannot be known


@dataclass(frozen=True)
class Spec:
    """A wrapper's grammar: `[options] [NAME=VALUE...] [operands] command [args]`."""

    takes_value: frozenset[str] = field(default_factory=frozenset)  # "u", "--user"
    assignments: bool = False
    operands: int = 0  # e.g. timeout's DURATION, chroot's NEWROOT
    default: tuple[str, ...] | None = None  # xargs runs echo when given no command


def _spec(values: str = "", **kwargs: object) -> Spec:
    return Spec(frozenset(values.split()), **kwargs)  # type: ignore[arg-type]


SPECS: dict[str, Spec] = {
    "command": _spec(),
    "builtin": _spec(),
    "exec": _spec("a"),
    "nohup": _spec(),
    "setsid": _spec(),
    "time": _spec("f o --format --output"),
    "nice": _spec("n --adjustment"),
    "ionice": _spec("c n p P u --class --classdata --pid --pgid --uid"),
    "timeout": _spec("s k --signal --kill-after", operands=1),
    "stdbuf": _spec("i o e --input --output --error"),
    "env": _spec("u C P --unset --chdir", assignments=True),
    "sudo": _spec(
        "u g h p r t C D R T U --user --group --host --prompt --role --type --close-from "
        "--chdir --chroot --command-timeout --other-user",
        assignments=True,
    ),
    "doas": _spec("u C"),
    "chroot": _spec("--userspec --groups", operands=1),
    "chrt": _spec(operands=1),
    "taskset": _spec(operands=1),
    "xargs": _spec(
        "a d E I L n P s --arg-file --delimiter --eof --replace --max-lines --max-args "
        "--max-procs --max-chars --process-slot-var",
        default=("echo",),
    ),
    "strace": _spec("o e p s u E a P I b X --output --signal --trace"),
    "ltrace": _spec("o e p s u n a --output"),
    "unshare": _spec("S G R w --setuid --setgid --root --wd"),
    "nsenter": _spec("t S G r w --target --setuid --setgid --root --wd"),
    "caffeinate": _spec("t w"),
    "busybox": _spec(),
    "toybox": _spec(),
    "parallel": _spec("j S --jobs"),
}
SHELLS = {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh", "rbash", "fish"}
SHELL_VALUES = frozenset({"o", "O", "--rcfile", "--init-file"})
# These run code this module cannot see: a file, or a string bash evaluates as arithmetic.
OPAQUE = {
    "source": "runs a file",
    ".": "runs a file",
    "let": "evaluates arithmetic that can run code a variable holds",
    "enable": "can load a builtin from a shared library",
    "fc": "runs commands from the history",
    "ssh": "runs a command on another machine",
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
        rest = _after_options(args, _spec("n d q --interval --differences"))
        if rest is None:
            return Inner(unknown="a word that is not literal among its options")
        return _script(rest, "runs words that are not literal") if rest else None
    if name == "flock":
        return _flock(args)
    if name == "coproc":  # `coproc NAME command` or `coproc command`: both are possible
        return Inner(commands=tuple(args[i:] for i in (0, 1) if len(args) > i))
    if name == "env" and (split := _split_string(args)) is not None:
        return split
    spec = SPECS.get(name)
    if spec is None:
        return None
    rest = _after_options(args, spec)
    if rest is None:
        return Inner(unknown="a word that is not literal before the command it runs")
    if not rest:
        return Inner(commands=(_more(name, spec.default),)) if spec.default else None
    return Inner(commands=(_more(name, rest),))


def _more(name: str, words: Words) -> Words:
    """xargs and parallel add words from their input to the command they run."""
    return (*words, None) if name in ("xargs", "parallel") else words


def _after_options(args: Words, spec: Spec) -> Words | None:
    """The words after the options, assignments and operands; None when that is unclear."""
    i = 0
    while i < len(args):
        word = args[i]
        if word is None:
            return None
        if word == "--":
            i += 1
            break
        if word.startswith("--") and len(word) > 2:
            takes = word in spec.takes_value and "=" not in word
            i += 2 if takes else 1
        elif word.startswith("-") and len(word) > 1:
            i += 1
            for at, letter in enumerate(word[1:], 1):
                if letter in spec.takes_value:
                    i += 0 if at < len(word) - 1 else 1  # value attached, or the next word
                    break
        elif spec.assignments and _NAME.match(word):
            i += 1
        else:
            break
    rest = args[i:]
    if spec.operands:
        if len(rest) < spec.operands or any(w is None for w in rest[: spec.operands]):
            return None if len(rest) >= spec.operands else ()
        rest = rest[spec.operands :]
    return rest


def _script(words: Sequence[str | None], why: str) -> Inner:
    if any(w is None for w in words):
        return Inner(unknown=why)
    return Inner(scripts=(" ".join(w for w in words if w is not None),))


def _split_string(args: Words) -> Inner | None:
    """`env -S 'rm -f x'` splits the string into the command: read it as a command line."""
    for at, word in enumerate(args):
        if word is not None and word.startswith(("-S", "--split-string")):
            value = word.split("=", 1)[1] if word.startswith("--") and "=" in word else word[2:]
            rest = args[at + 1 :] if value else args[at + 2 :]
            head: tuple[str | None, ...] = (value,) if value else args[at + 1 : at + 2]
            return _script((*head, *rest), "splits a string that is not literal")
    return None


def _shell(args: Words) -> Inner:
    i, command_string = 0, False
    while i < len(args):
        word = args[i]
        if word is None:
            return Inner(unknown="a word that is not literal among its options")
        if word == "--":
            i += 1
            break
        if not word.startswith(("-", "+")) or word in ("-", "+"):
            break
        if word in SHELL_VALUES or word[1:] in SHELL_VALUES:
            i += 1
        elif not word.startswith("--") and "c" in word[1:]:
            command_string = True
        i += 1
    if not command_string:
        return Inner(unknown="runs a script file or its standard input")
    if i >= len(args) or args[i] is None:
        return Inner(unknown="runs a command string that is not literal")
    return Inner(scripts=(str(args[i]),))


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
    rest = _after_options(args, _spec("w E --timeout --conflict-exit-code", operands=1))
    if rest is None:
        return Inner(unknown="a word that is not literal")
    if rest[:1] in (("-c",), ("--command",)):
        return _script(rest[1:2], "a command string that is not literal")
    return Inner(commands=(rest,)) if rest else Inner()
