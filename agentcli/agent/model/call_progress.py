"""How far the tool calls of a streaming answer have come: a sign of life while they stream.

A big call (a 600-line `write_file`) streams for seconds with no text to show. `Progress` reads
the same chunks the Accumulator gathers and says, at most every EVERY_S seconds and when a
new call starts, which call is streaming: its tool, its target (the `path`, `command`, `url`
... among its first arguments) and the bytes of arguments so far. Linear in the answer: a
fragment costs its size once; only the first HEAD_CHARS of a call's arguments are read for
its target, and only again when a fragment has added to them.

Everything here is the model's and untrusted, and so half-written: the target is read from a
top-level key of the arguments' JSON only (a `"path"` inside a string or a nested object is
not a target), it may still change, and the screen shows it as untrusted text. It is a
sign of life, never what runs: the review shows the call as it will run.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

EVERY_S = 0.1
HEAD_CHARS = 4096  # of a call's arguments, read for its target
TARGET_CHARS = 200  # of a target, kept
TARGET_KEYS = ("path", "command", "url", "pattern", "query", "expression")
_WHITESPACE = " \t\n\r"


@dataclass
class _Streaming:
    name: str = ""
    size: int = 0  # bytes (UTF-8) of arguments so far
    head: list[str] = field(default_factory=list)
    head_size: int = 0
    target: str = ""
    settled: bool = False  # the target's string is complete: it cannot change

    def add(self, args: str) -> None:
        self.size += len(args.encode("utf-8", "surrogatepass"))
        if not self.settled and self.head_size < HEAD_CHARS and args:
            piece = args[: HEAD_CHARS - self.head_size]
            self.head.append(piece)
            self.head_size += len(piece)
            self.target, self.settled = target_of("".join(self.head))


class Progress:
    """Feed it each chunk's `tool_call_chunks`; it calls `report` with
    {"index", "name", "target", "bytes"} for the call streaming now, when one starts and
    then at most every EVERY_S seconds."""

    def __init__(self, report: Callable[[dict[str, Any]], None]) -> None:
        self.report = report
        self.calls: dict[Any, _Streaming] = {}
        self.last: Any = None  # the index of the call that fragments came for last
        self.reported_at = 0.0

    def add(self, fragments: list[Any]) -> None:
        for fragment in fragments:
            index = fragment.get("index")
            try:
                call = self.calls.get(index)
            except TypeError:  # an unhashable index: not a call anyone can follow
                continue
            new = call is None
            if call is None:
                call = self.calls[index] = _Streaming()
            if isinstance(name := fragment.get("name"), str) and name != call.name:
                call.name += name  # a name in pieces joins; one repeated whole does not
            if isinstance(args := fragment.get("args"), str):
                call.add(args)
            self.last = index
            now = time.monotonic()
            if new or now - self.reported_at >= EVERY_S:
                self.reported_at = now
                self.report(
                    {
                        "index": len(self.calls) - 1 if new else _position(self.calls, index),
                        "name": call.name,
                        "target": call.target,
                        "bytes": call.size,
                    }
                )


def _position(calls: dict[Any, _Streaming], index: Any) -> int:
    return list(calls).index(index)


def target_of(head: str) -> tuple[str, bool]:
    """The value of the first top-level member of a JSON object's start whose key is one of
    TARGET_KEYS and whose value is a string (a string cut off: as far as it has come), or
    ""; and whether that value is complete."""
    at = _skip(head, 0)
    if head[at : at + 1] != "{":
        return "", False
    at += 1
    decoder = json.JSONDecoder()
    while True:
        at = _skip(head, at)
        if head[at : at + 1] != '"':
            break
        key, at, complete = _string(head, at + 1)
        if not complete:
            break
        at = _skip(head, at)
        if head[at : at + 1] != ":":
            break
        at = _skip(head, at + 1)
        if head[at : at + 1] == '"':
            value, at, complete = _string(head, at + 1)
            if key in TARGET_KEYS:
                return value[:TARGET_CHARS], complete
            if not complete:
                break
        else:
            try:
                _, at = decoder.raw_decode(head, at)
            except ValueError:  # cut off, or not JSON: nothing after it can be read
                break
        at = _skip(head, at)
        if head[at : at + 1] != ",":
            break
        at += 1
    return "", False


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] in _WHITESPACE:
        at += 1
    return at


def _string(text: str, start: int) -> tuple[str, int, bool]:
    """The JSON string whose content starts at `start`: (its value, where it ends, whether
    it is complete). A string cut off gives what it holds so far (a cut-off escape left out)."""
    try:
        value, end = json.decoder.scanstring(text, start, False)  # type: ignore[attr-defined]
        return value, end, True
    except ValueError:
        pass
    end = start
    while end < len(text) and text[end] != '"':
        end += 2 if text[end] == "\\" else 1
    for cut in range(min(end, len(text)), max(start, min(end, len(text)) - 6) - 1, -1):
        try:
            value, _ = json.decoder.scanstring(text[start:cut] + '"', 0, False)  # type: ignore[attr-defined]
            return value, len(text), False
        except ValueError:
            continue
    return "", len(text), False
