"""Commands whose arguments bash reads as code, or that rename commands.

Checked on a command's words as bash passes them (quotes removed, None where not literal), so
quoting cannot hide a name: `env BASH_EN''V=./s bash -c true` has the word `BASH_ENV=./s`.

- Variable names: bash evaluates the index of `a[...]` as arithmetic, and arithmetic runs the
  `$(...)` inside it. Builtins that take a variable name (`read`, `printf -v`, `declare`,
  `test -v`, ...) do that with a name given as an argument: `read 'a[$(rm x)]'`.
- `declare -i`/`-n` and the like make later assignments evaluate; `declare -a a='(...)'`
  parses its value as an array assignment, with expansions.
- Strings run as commands: `mapfile -C`, `compgen -C/-F`, `complete -C/-F`.
- New names for commands: `hash -p /bin/rm e`, `BASH_CMDS[e]`, `BASH_ALIASES[e]`.
- Variables that make bash or the loader run other code (`BASH_ENV`, `LD_PRELOAD`,
  `BASH_FUNC_name%%` functions, ...), however they are set.
"""

from __future__ import annotations

import re

Words = tuple[str | None, ...]

CODE_VARIABLES = re.compile(
    r"(?<![A-Za-z0-9_])(BASH_ENV|ENV|SHELLOPTS|BASHOPTS|PS4|PROMPT_COMMAND|LD_PRELOAD|LD_AUDIT|"
    r"LD_LIBRARY_PATH|BASH_LOADABLES_PATH|BASH_CMDS|BASH_ALIASES|BASH_FUNC_\w*)(?![A-Za-z0-9])"
)
_DECLARE = {"declare", "typeset", "local", "readonly"}
_NAMES = {"read", "mapfile", "readarray", "unset", "getopts", "export"}
_EVALUATING_OPTIONS = set("in")  # declare -i (integer), -n (nameref)


def reason(words: Words) -> str:
    """Why bash may run code these words do not show ("" when it does not)."""
    for word in words:
        if word is not None and (found := CODE_VARIABLES.search(word)):
            return f"{found.group(1)} can make bash run other code"
    name, args = words[0], words[1:]
    if name in _DECLARE:
        return _declare(args)
    if name in _NAMES:
        return _names(name, args)
    if name == "printf":
        return _printf(args)
    if name in ("test", "["):
        return _test(args)
    if name == "wait":
        return _wait(args)
    if name in ("compgen", "complete"):
        if any(w is None or _option_has(w, "CF") for w in args):
            return f"{name} -C/-F runs a command"
    if name == "hash" and any(w is None or _option_has(w, "p") for w in args):
        return "hash -p gives a program another name"
    return ""


def _option_has(word: str, letters: str) -> bool:
    return word.startswith("-") and not word.startswith("--") and any(c in word for c in letters)


def _names_a_subscript(word: str | None) -> bool:
    return word is None or "[" in word


def _declare(args: Words) -> str:
    for word in args:
        if word is None:
            return "declare with a word that is not literal (it could be an option or an array)"
        if word.startswith(("-", "+")) and _EVALUATING_OPTIONS & set(word[1:]):
            return "declare -i/-n makes assignments and uses evaluate code"
        if "[" in word or "=(" in word:
            return "declare on an array element or with an array in a string"
    return ""


def _names(name: str, args: Words) -> str:
    if name in ("mapfile", "readarray") and any(w is None or _option_has(w, "C") for w in args):
        return f"{name} -C runs a command"
    checked = [w for w in args if name != "export" or w is None or not w.startswith("-")]
    if name == "export":  # export never evaluates an index; only a name it cannot read
        checked = [w for w in checked if w is None]
    if any(_names_a_subscript(w) for w in checked):
        return f"{name} with a variable name that may hold an array index (arithmetic)"
    return ""


def _printf(args: Words) -> str:
    """`printf -v NAME`: options come first, so only the first words can be `-v NAME`."""
    first = args[0] if args else ""
    if first is None:
        return "printf with a first word that is not literal (it could be -v)"
    if first == "-v" and _names_a_subscript(args[1] if len(args) > 1 else ""):
        return "printf -v with a variable name that may hold an array index"
    if first.startswith("-v") and "[" in first:
        return "printf -v with an array index"
    return ""


def _test(args: Words) -> str:
    """`test -v NAME`, `[ -v NAME ]`, `-R`: the name may index an array."""
    for word, following in zip(args, args[1:], strict=False):
        if word in (None, "-v", "-R") and _names_a_subscript(following):
            return "test -v on a name that may hold an array index"
    return ""


def _wait(args: Words) -> str:
    for word, following in zip(args, args[1:], strict=False):
        if (word is None or _option_has(word, "p")) and _names_a_subscript(following):
            return "wait -p with a variable name that may hold an array index"
    return ""
