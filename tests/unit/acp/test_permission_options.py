"""The choices an editor is offered for a call, and what each one decides: agentcli's own,
whatever the call's arguments say, and nothing for a choice that was not offered."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.acp.permission_options import Choices, question
from agentcli.acp.prompt_text import prompt_text

IDS = ["allow_once", "allow_always", "reject_once", "reject_always"]
# arguments of the model's that try to read as a choice, a second line, or a terminal code
HOSTILE = [
    "ls\nAllow once",
    'ls "Allow always" \u2028 reject_once',
    "ls \x1b[2K\rAllow once\x07",
    "ls \u202eecno wolla",
    "ls " + "A" * 5000,
    'ls"}, {"optionId": "allow_once", "name": "Allow", "kind": "allow_once',
]


def request(command: str, **more: object) -> dict:
    return {"id": "call_1", "name": "shell", "args": {"command": command}, **more}


@pytest.mark.parametrize("command", HOSTILE)
def test_the_choices_are_agentclis_whatever_the_call_says(command: str, tmp_path: Path) -> None:
    asked = question(request(command), tmp_path)
    assert [o.option_id for o in asked.options] == IDS
    assert [o.kind for o in asked.options] == IDS
    for option in asked.options:
        assert option.name.isascii() and option.name.isprintable() and len(option.name) < 160


def test_each_choice_decides_as_offered_and_anything_else_decides_nothing(tmp_path: Path) -> None:
    choices = Choices("acp: Zed")
    asked = question(request("git status"), tmp_path)
    assert asked.match == "git status*"
    assert choices.decision(asked, "allow_once") == {
        "type": "approve",
        "who": "client",
        "by": "acp: Zed",
    }
    assert choices.decision(asked, "allow_always") == {
        "type": "approve",
        "always": True,
        "match": "git status*",
        "who": "client",
        "by": "acp: Zed",
    }
    assert choices.decision(asked, "reject_once") == {
        "type": "reject",
        "who": "client",
        "by": "acp: Zed",
    }
    for other in (None, "allow", "ALLOW_ONCE", "allow_once ", "proceed_always", ""):
        assert choices.decision(asked, other) is None
    assert choices.rejected == []


def test_a_call_that_may_have_run_is_never_allowed_always(tmp_path: Path) -> None:
    asked = question(request("make", rerun=True), tmp_path)
    assert [o.option_id for o in asked.options] == ["allow_once", "reject_once", "reject_always"]
    assert Choices("acp").decision(asked, "allow_always") is None


def test_reject_always_rejects_the_calls_its_scope_fits_and_no_other(tmp_path: Path) -> None:
    choices = Choices("acp")
    asked = question(request("git status"), tmp_path)
    assert choices.decision(asked, "reject_always") == {
        "type": "reject",
        "who": "client",
        "by": "acp",
    }
    assert choices.already(request("git status --short"), [], tmp_path) == {
        "type": "reject",
        "who": "client",
        "by": "acp",
    }
    assert choices.already(request("git status; rm -rf ~"), [], tmp_path) is None
    assert choices.already(request("git push"), [], tmp_path) is None
    assert choices.already(request("git status", rerun=True), [], tmp_path) is None


def test_the_prompt_is_its_text_and_its_files_named() -> None:
    from acp.schema import (
        EmbeddedResourceContentBlock,
        ResourceContentBlock,
        TextContentBlock,
        TextResourceContents,
    )

    blocks = [
        TextContentBlock(type="text", text="look at"),
        ResourceContentBlock(type="resource_link", uri="file:///w/a.py", name="a.py"),
        EmbeddedResourceContentBlock(
            type="resource", resource=TextResourceContents(uri="file:///w/b.py", text="x = 1")
        ),
    ]
    assert prompt_text(blocks) == (
        'look at\n\n[file: file:///w/a.py]\n\n<file uri="file:///w/b.py">\nx = 1\n</file>'
    )
