"""How far a streaming tool call has come (agent/model/call_progress.py): fed the chunks a
fake chat model streams, through the public `Progress`."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentcli.agent.model import call_progress
from agentcli.agent.model.call_progress import Progress, target_of


def streamed(args: str, piece: int = 3, name: str = "write_file") -> list[dict[str, Any]]:
    """The reports for one call streamed in `piece`-character fragments, one per fragment."""
    reports: list[dict[str, Any]] = []
    progress = Progress(reports.append)
    progress.add([{"index": 0, "id": "call_1", "name": name, "args": ""}])
    for at in range(0, len(args), piece):
        progress.reported_at = 0.0  # each fragment reported: what a slow stream shows
        progress.add([{"index": 0, "args": args[at : at + piece]}])
    return reports


def test_the_tool_its_target_and_the_bytes_so_far() -> None:
    args = json.dumps({"path": "notes/big.txt", "content": "é" * 500})
    reports = streamed(args)
    assert reports[0] == {"index": 0, "name": "write_file", "target": "", "bytes": 0}
    assert reports[-1]["target"] == "notes/big.txt"
    assert reports[-1]["bytes"] == len(args.encode())
    # the target as it comes, never more than what came
    partial = [r["target"] for r in reports if r["target"] != "notes/big.txt"]
    assert all("notes/big.txt".startswith(t) for t in partial)


@pytest.mark.parametrize(
    ("head", "target"),
    [
        # a "path" inside the content's string is text, not a key
        ('{"content": "\\"path\\": \\"/etc/passwd\\"", "path": "a.txt"}', "a.txt"),
        # nor is one in a nested object
        ('{"options": {"path": "/etc/passwd"}, "command": "ls"}', "ls"),
        # escapes decoded as JSON decodes them: the screen marks the control it gives
        ('{"command": "echo \\u001b[2J"}', "echo \x1b[2J"),
        ('{"path": "a\\', "a"),  # cut inside an escape: what came before it
        ('{"path": 7, "url": "http://x"}', "http://x"),  # not a string: not a target
        ("[1, 2]", ""),
        ('{"path" "a"}', ""),  # not JSON: nothing read past the fault
    ],
)
def test_the_target_is_a_top_level_string_member(head: str, target: str) -> None:
    assert target_of(head)[0] == target


def test_reports_are_spaced_and_cost_the_head_only(monkeypatch: pytest.MonkeyPatch) -> None:
    reports: list[dict[str, Any]] = []
    progress = Progress(reports.append)
    now = [100.0]
    monkeypatch.setattr(call_progress.time, "monotonic", lambda: now[0])
    progress.add([{"index": 0, "name": "write_file", "args": '{"content": "'}])
    for _ in range(1000):  # within one EVERY_S: no report
        progress.add([{"index": 0, "args": "x" * 100}])
    assert len(reports) == 1
    now[0] += call_progress.EVERY_S * 1.5
    progress.add([{"index": 0, "args": "x"}])
    assert len(reports) == 2 and reports[-1]["bytes"] == len('{"content": "') + 100_001
    head = progress.calls[0]
    assert head.head_size == call_progress.HEAD_CHARS  # the rest was counted, not kept


def test_a_second_call_is_reported_at_once_with_its_index() -> None:
    reports: list[dict[str, Any]] = []
    progress = Progress(reports.append)
    progress.add([{"index": 0, "name": "read_file", "args": '{"path": "a"}'}])
    progress.add([{"index": 1, "name": "shell", "args": '{"command": "ls"}'}])
    assert [(r["index"], r["name"], r["target"]) for r in reports] == [
        (0, "read_file", "a"),
        (1, "shell", "ls"),
    ]
