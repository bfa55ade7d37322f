"""Where a task's result may go in its arguments, so that it changes nothing a person
approved beyond the value itself.

- A shell command takes a result only inside a plain argument word of a simple command that
  its program reads as data: an operand of a program the table knows (cat, grep, sort, rm,
  git log...; policy/bash/program_table.py), never a program's name, subcommand, script or
  an option's value, nor any argument of a program it does not know
  (policy/bash/result_slots.py), checked before review. Once the result is in, a word it
  made start with `-` is refused (a person must see that value), as is one whose `..`
  leaves the folder written before it (`rm notes/$1`), and bash must find the template's
  commands, the result where the reference stood.
- A URL takes a result only after its host (`https://example.com/search?q=$1`): once in, the
  host is still the template's.
- A file tool's path keeps the folder written before the reference: `notes/$1.md` stays in
  notes/, whatever `..` the result holds.

`placement` answers before review (for the model: where a reference may not stand); `moved`
answers once the results are in (a task that fails it does not run).
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import Any

from agentcli_tools.urls import host_of

from agentcli.agent.plan.substitution import REFERENCE, SHELL, marked
from agentcli.policy.bash.result_slots import (
    leaves_folder,
    misplaced,
    option_like,
    same_commands,
)
from agentcli.policy.rule_subjects import FETCH_TOOL, FILE_TOOLS

COMMAND, URL, PATH = "command", "url", "path"
SHELL_SLOT = (
    "a task's result can go into a shell command only as (part of) an unquoted operand that"
    " the program reads as data, such as a file of cat, grep, sort, ls, rm or git log (not in"
    " quotes, a here-document, backticks, [[ ]], (( )), a redirection, the command's name, a"
    " subcommand, an option or its value, sed's script, nor any argument of a program that"
    " runs code or that agentcli does not know: make, tar, xargs, sh -c, python...); a value"
    " that must go elsewhere goes in a later call, where a person sees it"
)


def placement(tool: str, args: Mapping[str, Any], tasks: set[int]) -> str | None:
    """Why a reference stands where a result could change what the task does, or None."""
    if tool == SHELL and isinstance(command := args.get(COMMAND), str):
        text, markers = marked(command, tasks)
        if markers and (bad := misplaced(text, markers)) is not None:
            where = f"${markers[bad]}" if bad in markers else "a reference"
            return f"{where} in the command: {SHELL_SLOT}"
    if tool == FETCH_TOOL and isinstance(url := args.get(URL), str) and _refers(url, tasks):
        fixed = _before(url, tasks)
        if host_of(fixed) is None or "/" not in fixed.partition("://")[2]:
            return "a result can go into a URL only after its host and the / that ends it"
    return None


def moved(tool: str, template: Mapping[str, Any], ran: Mapping[str, Any], tasks: set[int],
          values: Mapping[int, str]) -> str | None:  # fmt: skip
    """Why the arguments with the results in go somewhere the template did not, or None."""
    if tool == SHELL and isinstance(command := template.get(COMMAND), str):
        text, markers = marked(command, tasks)
        put = {marker: values[n] for marker, n in markers.items() if n in values}
        if put and (option := option_like(text, put)) is not None:
            return (
                f"with the results in, the word {option[:60]!r} starts with '-' and may be read"
                " as an option; a person must see that value (call plan again)"
            )
        if put and (outside := leaves_folder(text, put)) is not None:
            return f"with the results in, {outside[:60]!r} leaves the folder written before it"
        if put and not same_commands(text, str(ran.get(COMMAND)), put):
            return "with the results in, bash would read other commands than the ones approved"
    if tool == FETCH_TOOL and isinstance(url := template.get(URL), str) and _refers(url, tasks):
        host = host_of(_before(url, tasks))
        if host is None or host_of(str(ran.get(URL))) != host:
            return "with the results in, the URL goes to another host than the one approved"
    if tool in FILE_TOOLS and isinstance(path := template.get(PATH), str) and _refers(path, tasks):
        folder = posixpath.dirname(_before(path, tasks))
        where = posixpath.normpath(str(ran.get(PATH)))
        if where.startswith("/") or where.split("/")[0] == ".." or not _within(where, folder):
            return f"with the results in, the path leaves the folder approved ({folder or '.'})"
    return None


def _refers(value: str, tasks: set[int]) -> bool:
    return any(int(m[1] or m[2]) in tasks for m in REFERENCE.finditer(value))


def _before(value: str, tasks: set[int]) -> str:
    """The text before the first reference to a task."""
    for match in REFERENCE.finditer(value):
        if int(match[1] or match[2]) in tasks:
            return value[: match.start()]
    return value


def _within(path: str, folder: str) -> bool:
    folder = posixpath.normpath(folder) if folder else ""
    return not folder or folder == "." or path == folder or path.startswith(folder + "/")
