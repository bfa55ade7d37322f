"""An edit is a change of the values the tool will run with: adding a default, or a key the
schema drops, is no edit (only an approval approves); and the edit prompt never crashes on
arguments a terminal or a file cannot hold as they are (a lone surrogate)."""

from __future__ import annotations

import io
import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import StructuredTool
from rich.console import Console

from agentcli.agent.review.answers import checked, unchanged
from agentcli.decisions import UNCHANGED
from agentcli.errors import UsageError
from agentcli.events import ReviewRequest
from agentcli.ui.review_prompt import ask_decisions
from tests.helpers.fakes import call
from tests.unit.conftest import RAN, note

SCHEMA = {
    "type": "object",
    "properties": {"text": {"type": "string"}, "times": {"type": "integer", "default": 1}},
    "required": ["text"],
}
mcp_like = StructuredTool(
    name="rep", description="Repeat.", args_schema=SCHEMA, func=lambda **k: ""
)

# (original, edit, the same values?)
PAYLOADS_VALUES: list[tuple[dict[str, Any], dict[str, Any], bool]] = [
    ({"text": "benign"}, {"text": "benign", "times": 1}, True),  # the default, spelt out
    ({"text": "benign", "times": 1}, {"text": "benign"}, True),
    ({"times": 1, "text": "benign"}, {"text": "benign", "times": 1}, True),  # key order
    ({"text": "benign"}, {"text": "benign", "times": 2}, False),
    ({"text": "benign"}, {"text": "evil"}, False),
    ({"text": "benign"}, {"text": "benign "}, False),
    ({"text": "benign", "times": 2}, {"text": "benign"}, False),  # back to the default
]


@pytest.mark.parametrize("tool", [note, mcp_like], ids=["pydantic", "json-schema"])
@pytest.mark.parametrize("original,edit,same", PAYLOADS_VALUES)
def test_an_edit_is_compared_by_the_values_that_run(tool, original, edit, same: bool) -> None:
    assert unchanged(tool, original, edit) is same
    decision = {"type": "edit", "edited_action": {"name": tool.name, "args": dict(edit)}}
    calls = [{"id": "c1", "name": tool.name, "args": original, "type": "tool_call"}]
    if same:
        with pytest.raises(ValueError, match=UNCHANGED):
            checked({"decisions": [decision]}, calls, {tool.name: tool})
    else:
        assert checked({"decisions": [decision]}, calls, {tool.name: tool}) == [decision]


def test_true_is_not_1_and_unreadable_values_are_compared_as_json() -> None:
    assert unchanged(None, {"x": 1}, {"x": True}) is False
    assert unchanged(None, {"x": 1}, {"x": 1}) is True
    assert unchanged(mcp_like, {"text": "a"}, ["not", "an", "object"]) is False


def test_a_default_only_edit_through_a_client_runs_nothing(make) -> None:
    """As Agent Chat UI would send it: the approve node refuses it and asks again."""
    s = make([call(("note", {"text": "benign"}))])
    list(s.send("note"))
    edit = {
        "type": "edit",
        "edited_action": {"name": "note", "args": {"text": "benign", "times": 1}},
    }
    with pytest.raises(UsageError, match=UNCHANGED):  # refused as the graph would refuse it
        list(s.decide([edit]))
    assert RAN == [] and s.pending() is not None  # still waiting for a decision
    assert s.check_edit("note", {"text": "benign", "times": 1}, {"text": "benign"}) == UNCHANGED
    assert s.check_edit("note", {"text": "benign", "times": 2}, {"text": "benign"}) is None


def editor(tmp_path: Path, body: str) -> str:
    script = tmp_path / "editor.py"
    script.write_text("import json, sys\nfrom pathlib import Path\np = Path(sys.argv[1])\n" + body)
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"


def review_of(args: dict[str, Any]) -> ReviewRequest:
    request = {"id": "c1", "name": "note", "args": args, "description": ""}
    return ReviewRequest("t1", [request])


def play(
    monkeypatch, tmp_path: Path, args: dict[str, Any], body: str, answers: list[str]
) -> tuple[Any, str]:
    monkeypatch.setenv("VISUAL", editor(tmp_path, body))
    out = io.StringIO()
    console = Console(file=out, width=200, color_system=None)
    typed = iter(answers)
    monkeypatch.setattr(console, "input", lambda *a, **k: next(typed))
    tools = {"note": note}

    def check(name: str, edited: Any, original: Any) -> str | None:
        return UNCHANGED if unchanged(tools[name], original, edited) else None

    return ask_decisions(console, review_of(args), check, None), out.getvalue()


LONE = {"text": "half \ud800 a surrogate"}
# editor bodies, and what the prompt then decides
PAYLOADS_EDIT = [
    ("pass", "no change"),  # the file as written: its JSON must be writable at all
    ("a = json.loads(p.read_text()); a['times'] = 1; p.write_text(json.dumps(a))", "no change"),
    ("a = json.loads(p.read_text()); a['times'] = 3; p.write_text(json.dumps(a))", "edit"),
]


@pytest.mark.parametrize("body,outcome", PAYLOADS_EDIT, ids=["same", "default", "real"])
@pytest.mark.parametrize("args", [{"text": "benign"}, LONE], ids=["plain", "surrogate"])
def test_the_edit_prompt_never_crashes_and_a_default_is_no_edit(
    monkeypatch, tmp_path: Path, args: dict[str, Any], body: str, outcome: str
) -> None:
    decisions, shown = play(monkeypatch, tmp_path, args, body, ["e", "a"])
    if outcome == "no change":
        assert "no change" in shown and decisions == [{"type": "approve"}]
    else:
        assert decisions == [
            {"type": "edit", "edited_action": {"name": "note", "args": {**args, "times": 3}}}
        ]
    assert not list(tmp_path.glob("tmp*.json"))  # the temporary file is gone


def test_the_file_the_editor_opens_is_valid_json_with_the_same_value(
    monkeypatch, tmp_path: Path
) -> None:
    body = "Path(sys.argv[1] + '.seen').write_bytes(p.read_bytes())\n"
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    play(monkeypatch, tmp_path, LONE, body, ["e", "a"])
    (seen,) = tmp_path.glob("*.seen")
    assert json.loads(seen.read_bytes().decode("utf-8")) == LONE
