"""MCP calls and the edit flow, through the installed command.

- A model's arguments that do not fit an MCP tool's JSON schema (wrong types, missing,
  forbidden extras, a hostile schema) never reach the server: they go back to the model.
- An edited "5" for an integer reaches the server as 5 (and shows as 5 in the history).
- A stdio server's stderr never reaches the terminal: it is in the server's log file.
- An image (audio, blob) in a result reaches the model as a line of text, no base64.
- Leaving the editor without a change, an empty text or a failing editor approves nothing:
  the choice is shown again, and the call runs only after `a`. `review --edit` with the
  call's own arguments is refused.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Agent
from tests.helpers import MCP_SERVER as SERVER
from tests.helpers.mcp_server import PNG
from tests.helpers.scripted_server import text, tool_calls
from tests.helpers.terminal import CHOICE, EDITED_CHOICE, leave

STARTED = "agentcli-test MCP server: started"  # what the server writes to stderr at start

# (tool, the model's arguments, what the model is told): none may reach the server
PAYLOADS_BAD_ARGS: list[tuple[str, dict[str, Any], str]] = [
    ("calc__add", {"a": "2", "b": 3}, "'a': '2' is not of type 'integer'"),
    ("calc__add", {"a": 2.5, "b": 3}, "'a': 2.5 is not of type 'integer'"),
    ("calc__add", {"a": True, "b": 3}, "'a': True is not of type 'integer'"),
    ("calc__add", {"a": None, "b": 3}, "'a': None is not of type 'integer'"),
    ("calc__add", {"a": [1], "b": 3}, "'a': [1] is not of type 'integer'"),
    ("calc__add", {"a": {"$ref": "#"}, "b": 3}, "is not of type 'integer'"),
    ("calc__add", {"a": 2}, "'b' is a required property"),
    ("calc__add", {}, "'a' is a required property"),
    ("calc__strict", {"count": 1, "extra": 2}, "('extra' unexpected)"),
    ("calc__strict", {"count": 1, "__proto__": {}}, "('__proto__' unexpected)"),
    ("calc__strict", {"count": -1}, "-1 is less than the minimum of 0"),
    ("calc__strict", {"count": "1"}, "'count': '1' is not of type 'integer'"),
    ("calc__strict", {"count": 1, "label": 5}, "'label': 5 is not of type 'string'"),
    ("calc__mark", {"path": 123}, "'path': 123 is not of type 'string'"),
    ("calc__mark", {"path": "/tmp/x", "text": ["a"]}, "is not of type 'string'"),
    ("calc__slow_pattern", {"word": "a" * 40 + "!"}, "could not be checked within"),
    ("calc__slow_pattern", {"word": 5}, "'word': 5 is not of type 'string'"),
    ("calc__loop", {"x": 1}, "the tool's schema cannot be checked"),
]

# $EDITOR scripts (python source) that leave no change to decide on, and what is then said
PAYLOADS_NO_EDIT: list[tuple[str, str]] = [
    ("pass", "no change"),  # vim's :q
    ("p.write_bytes(p.read_bytes())", "no change"),  # :wq without a change
    ("p.write_text(json.dumps(json.loads(p.read_text()), indent=None))", "no change"),
    (  # the same JSON value, keys reordered and spaced differently
        "a = json.loads(p.read_text()); p.write_text(json.dumps(dict(reversed(a.items()))))",
        "no change",
    ),
    ("p.write_text('')", "empty arguments"),
    ("p.write_text(' \\n\\t\\n')", "empty arguments"),
    ("sys.exit(1)", "editor exited with status 1"),
    (  # a real edit, but the editor failed: nothing is taken from it
        "a = json.loads(p.read_text()); a['content'] = 'evil'; p.write_text(json.dumps(a));"
        " sys.exit(2)",
        "editor exited with status 2",
    ),
    ("p.unlink()", "cannot run editor"),  # the file is gone
]
# typed at "new arguments as JSON >" when no editor is set
PAYLOADS_NO_EDIT_INLINE: list[tuple[str, str]] = [
    ("", "empty arguments"),
    ("   ", "empty arguments"),
    ('{"content": "x", "path": "e.txt"}', "no change"),
    ('{ "path" : "e.txt" , "content" : "x" }', "no change"),
]


def configure(agent: Agent, record: Path) -> None:
    path = Path(agent.env["XDG_CONFIG_HOME"]) / "agentcli" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "[mcp.servers.calc]\n"
        f"command = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(SERVER)}, '--record', {json.dumps(str(record))}]\n"
        # the server confined (the sandbox) may still keep its record, outside the workspace
        f"[sandbox]\nwritable = [{json.dumps(str(record.parent))}]\n"
    )


def received(record: Path) -> list[dict[str, Any]]:
    """The calls the MCP server received, as it recorded them."""
    if not record.exists():
        return []
    return [json.loads(line) for line in record.read_text().splitlines()]


def tool_messages(agent: Agent, request: int) -> dict[str, str]:
    messages = agent.server.requests[request]["messages"]
    return {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}


@pytest.fixture
def record(agent: Agent, tmp_path: Path) -> Path:
    path = tmp_path / "received.jsonl"
    configure(agent, path)
    return path


def test_bad_arguments_from_the_model_never_reach_the_server(agent: Agent, record: Path) -> None:
    """All payloads in one model turn (each MCP server start costs seconds), with one good
    call beside them that must still run: no over-blocking."""
    calls = [(tool, args) for tool, args, _ in PAYLOADS_BAD_ARGS]
    agent.server.push(tool_calls(*calls, ("calc__add", {"a": 2, "b": 3})), text("Understood."))
    result = agent.run("run", "do it all", "--auto-approve", "-o", "json", timeout=180)
    assert result.returncode == 0, result.stderr
    assert received(record) == [{"tool": "add", "args": {"a": 2, "b": 3}}]
    told = tool_messages(agent, 1)
    for index, (tool, args, fragment) in enumerate(PAYLOADS_BAD_ARGS, 1):
        reply = told[f"call_{index}"]
        assert reply.startswith("Error: "), (tool, args, reply)
        assert fragment in reply and "not run" in reply, (tool, args, reply)
    assert told[f"call_{len(PAYLOADS_BAD_ARGS) + 1}"] == "5"
    assert STARTED not in result.stdout + result.stderr


def test_an_edited_string_reaches_the_server_as_the_integer_it_spells(
    agent: Agent, record: Path
) -> None:
    agent.server.push(tool_calls(("calc__add", {"a": 2, "b": 3})))
    parked = agent.run("run", "add", "-o", "json", timeout=120)
    assert parked.returncode == 3, parked.stderr
    thread = json.loads(parked.stdout)["thread_id"]

    same = agent.run("review", thread, "--edit", "call_1", "--args", '{"b": "3", "a": "2"}')
    assert same.returncode == 2 and "use --approve call_1" in same.stderr  # "2" is 2: no edit
    assert received(record) == []

    agent.server.push(text("8."))
    edited = agent.run("review", thread, "--edit", "call_1", "--args", '{"a": "5", "b": "3"}')
    assert edited.returncode == 0, edited.stderr
    assert received(record) == [{"tool": "add", "args": {"a": 5, "b": 3}}]
    assert tool_messages(agent, 1) == {"call_1": "8"}
    history = next(m for m in agent.server.requests[1]["messages"] if m["role"] == "assistant")
    assert json.loads(history["tool_calls"][0]["function"]["arguments"]) == {"a": 5, "b": 3}
    shown = agent.run("threads", "show", thread).stdout
    assert 'ran with {"a": 5, "b": 3}' in shown


def test_an_edit_the_schema_still_refuses_never_reaches_the_server(
    agent: Agent, record: Path
) -> None:
    agent.server.push(tool_calls(("calc__strict", {"count": 1})))
    parked = agent.run("run", "count", "-o", "json", timeout=120)
    thread = json.loads(parked.stdout)["thread_id"]
    for bad in ('{"count": "one"}', '{"count": "1", "x": 1}', '{"count": "-1"}', "{}"):
        refused = agent.run("review", thread, "--edit", "call_1", "--args", bad)
        assert refused.returncode == 2 and "invalid arguments" in refused.stderr, bad
    assert received(record) == []


def test_a_servers_stderr_is_in_its_log_never_on_the_review_screen(
    agent: Agent, record: Path
) -> None:
    agent.server.push(tool_calls(("calc__shout", {"text": "shouted-on-stderr"})), text("Done."))
    child = agent.spawn("chat", "shout")
    screen = io.StringIO()
    child.logfile_read = screen
    child.expect(CHOICE, timeout=120)
    child.sendline("a")
    child.expect("Done.", timeout=120)
    leave(child)
    assert received(record) == [{"tool": "shout", "args": {"text": "shouted-on-stderr"}}]
    assert "SHOUTED-ON-STDERR" not in screen.getvalue() and STARTED not in screen.getvalue()
    log = Path(agent.env["XDG_DATA_HOME"]) / "agentcli" / "logs" / "mcp-calc.log"
    assert "SHOUTED-ON-STDERR" in log.read_text() and STARTED in log.read_text()
    doctor = agent.run("doctor")
    assert f"MCP server 'calc' log: stderr goes to {log}" in doctor.stdout


def test_an_image_result_reaches_the_model_as_text_without_its_data(
    agent: Agent, record: Path
) -> None:
    agent.server.push(tool_calls(("calc__picture", {})), text("A picture of the sea."))
    result = agent.run("run", "draw", "--approve", "calc__picture", "-o", "json", timeout=120)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["final"] == "A picture of the sea."
    told = tool_messages(agent, 1)["call_1"]
    assert isinstance(told, str)
    assert "[image: image/png, 10248 bytes, not shown to the model]" in told
    assert "[audio: audio/wav, 3000 bytes, not shown to the model]" in told
    sent = json.dumps(agent.server.requests[1])
    assert PNG[:64] not in sent and PNG[1000:1064] not in sent and "base64" not in sent


def editor_script(tmp_path: Path, body: str) -> str:
    script = tmp_path / "editor.py"
    script.write_text(
        f"import json, pathlib, sys\np = pathlib.Path(sys.argv[1])\n{body}\n", encoding="utf-8"
    )
    return f"{sys.executable} {script}"


def review_then_approve(agent: Agent, env: dict[str, str], answer: str | None, said: str) -> None:
    """`e` (answered by the editor, or by `answer` typed inline) must say `said`, show the
    choice again and run nothing; then `a` runs the call, recorded as approved."""
    agent.server.push(tool_calls(("write_file", {"path": "e.txt", "content": "x"})), text("Ok."))
    child = agent.spawn("chat", "write e.txt", env=env)
    child.expect(CHOICE)
    child.sendline("e")
    if answer is not None:
        child.expect("new arguments as JSON >")
        child.send("\x15" + answer + "\r")  # Ctrl-U: the prefilled arguments cleared
    child.expect(said)
    child.expect(CHOICE)
    assert not (agent.workspace / "e.txt").exists()  # nothing ran
    child.sendline("a")
    child.expect("Ok.")
    thread = leave(child)
    assert (agent.workspace / "e.txt").read_text() == "x"
    shown = agent.run("threads", "show", thread).stdout
    assert "approved by person: terminal" in shown and "edited" not in shown


@pytest.mark.parametrize(("body", "said"), PAYLOADS_NO_EDIT)
def test_an_editor_that_changes_nothing_approves_nothing(
    agent: Agent, tmp_path: Path, body: str, said: str
) -> None:
    review_then_approve(agent, {"EDITOR": editor_script(tmp_path, body)}, None, said)


@pytest.mark.parametrize(("answer", "said"), PAYLOADS_NO_EDIT_INLINE)
def test_an_inline_answer_that_changes_nothing_approves_nothing(
    agent: Agent, answer: str, said: str
) -> None:
    review_then_approve(agent, {}, answer, said)


def test_a_real_edit_in_the_editor_still_runs_as_edited(agent: Agent, tmp_path: Path) -> None:
    body = "a = json.loads(p.read_text()); a['content'] = 'edited'; p.write_text(json.dumps(a))"
    agent.server.push(tool_calls(("write_file", {"path": "e.txt", "content": "x"})), text("Ok."))
    child = agent.spawn("chat", "write e.txt", env={"EDITOR": editor_script(tmp_path, body)})
    child.expect(CHOICE)
    child.sendline("e")
    child.expect(EDITED_CHOICE)
    assert not (agent.workspace / "e.txt").exists()  # shown, not run
    child.send("a")
    child.expect("Ok.")
    leave(child)
    assert (agent.workspace / "e.txt").read_text() == "edited"


def test_review_edit_with_the_calls_own_arguments_is_refused(agent: Agent) -> None:
    agent.server.push(tool_calls(("write_file", {"path": "r.txt", "content": "x"})))
    parked = agent.run("run", "write r.txt", "-o", "json")
    thread = json.loads(parked.stdout)["thread_id"]
    for same in ('{"path": "r.txt", "content": "x"}', '{"content":"x",   "path":"r.txt"}'):
        refused = agent.run("review", thread, "--edit", "call_1", "--args", same)
        assert refused.returncode == 2, refused.stderr
        assert refused.stderr.strip().count("\n") == 0  # one line
        assert "unchanged" in refused.stderr and "use --approve call_1" in refused.stderr
    assert not (agent.workspace / "r.txt").exists()
    pending = json.loads(agent.run("review", thread, "--json").stdout)
    assert [call["call_id"] for call in pending] == ["call_1"]
    agent.server.push(text("Written."))
    changed = agent.run(
        "review", thread, "--edit", "call_1", "--args", '{"path": "r.txt", "content": "y"}'
    )
    assert changed.returncode == 0, changed.stderr
    assert (agent.workspace / "r.txt").read_text() == "y"
