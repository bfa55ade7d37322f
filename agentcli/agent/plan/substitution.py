"""`$N` and `${N}` in a task's string arguments: task N's result, put in when the task runs.

A reference counts only for a task of the plan (plan_check.py makes it a dependency), so
other dollars are left as they are. In a shell command the result goes in as one quoted
word (shlex.quote), which keeps it data where the reference may stand at all: a plain
argument word (result_targets.py). Elsewhere (a path, a URL, a file's content) it goes in as
it is; result_targets.py keeps a path in its folder and a URL on its host, the tools check
what they are given, and the policy looks again at the arguments with the results in.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping
from typing import Any

# ASCII digits only: `\d` would read `$١` or `$１` as task 1, which no person reads as `$1`
REFERENCE = re.compile(r"\$(?:\{([0-9]+)\}|([0-9]+)(?![0-9]))")
SHELL = "shell"
MARKER = "AGENTCLITASKRESULT{}X"  # letters and digits: one plain word where it stands


def references(value: Any, tasks: set[int]) -> set[int]:
    """The tasks (of `tasks`, the plan's ids) a value's strings refer to."""
    found: set[int] = set()
    for text in _strings(value):
        for match in REFERENCE.finditer(text):
            found.add(int(match[1] or match[2]))
    return found & tasks


def marked(text: str, tasks: set[int]) -> tuple[str, dict[str, int]]:
    """`text` with each reference to a task of `tasks` replaced by a marker (a plain word,
    MARKER), and which task each marker stands for: what a shell command looks like to bash
    with a result in, before there is one (plan/result_targets.py)."""
    markers: dict[str, int] = {}

    def one(match: re.Match[str]) -> str:
        task = int(match[1] or match[2])
        if task not in tasks:
            return match[0]
        marker = MARKER.format(task)
        markers[marker] = task
        return marker

    return REFERENCE.sub(one, text), markers


def substitute(tool: str, args: Mapping[str, Any], results: Mapping[int, str]) -> dict[str, Any]:
    """The arguments with each reference to a task in `results` replaced by its result."""

    def put(key: str | None) -> Callable[[re.Match[str]], str]:
        quoted = tool == SHELL and key == "command"

        def one(match: re.Match[str]) -> str:
            task = int(match[1] or match[2])
            if task not in results:
                return match[0]
            return shlex.quote(results[task]) if quoted else results[task]

        return one

    return {key: _replace(value, put(key)) for key, value in args.items()}


def _replace(value: Any, put: Callable[[re.Match[str]], str]) -> Any:
    if isinstance(value, str):
        return REFERENCE.sub(put, value)
    if isinstance(value, list):
        return [_replace(item, put) for item in value]
    if isinstance(value, dict):
        return {k: _replace(v, put) for k, v in value.items()}
    return value


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    return []
