"""How a turn ends when the model does not answer as it should (issue 29, items 3 to 6): an
empty answer, a recovered server error, an answer the server cut off, a model that loops on
the same call. Driven through the installed command against the scripted server."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.e2e.conftest import Agent
from tests.helpers.scripted_server import text, tool_calls
from tests.helpers.server_profiles import Profile
from tests.helpers.terminal import CHOICE, PROMPT, leave, one_line


def events(result) -> list[dict]:
    return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


def exported(agent: Agent, thread: str) -> dict:
    result = agent.run("threads", "export", thread, "--format", "json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def error_line(result) -> str:
    """The run's error: the last line on stderr, after the tool activity of a text run."""
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("agentcli: error:") and "Traceback" not in result.stderr, last
    return last


def configured(agent: Agent, toml: str) -> None:
    path = Path(agent.env["XDG_CONFIG_HOME"]) / "agentcli" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(toml)


# 3. an empty answer


def test_an_empty_answer_is_asked_once_more(agent: Agent) -> None:
    agent.server.push(text("", usage=(1348, 0)), text("Hello!"))
    result = agent.run("run", "say hello", "-o", "jsonl")
    assert result.returncode == 0, result.stderr
    seen = events(result)
    assert seen[-1]["status"] == "done" and seen[-1]["final"] == "Hello!"
    retries = [e for e in seen if e["type"] == "retry"]
    assert len(retries) == 1 and "empty" in retries[0]["error"], retries
    assert len(agent.server.requests) == 2
    # the empty answer is not kept: the thread holds the question and the real answer
    kinds = [m["type"] for m in exported(agent, seen[-1]["thread_id"])["messages"]]
    assert kinds == ["human", "ai"]


def test_an_answer_empty_twice_fails_the_run_and_is_never_stored(agent: Agent) -> None:
    agent.server.push(text("", usage=(1348, 0)), text("", usage=(1348, 0)))
    result = agent.run("run", "say hello", "-o", "json")
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert report["status"] == "error" and "empty" in report["error"], report
    assert len(agent.server.requests) == 2
    thread = report["thread_id"]
    document = exported(agent, thread)
    assert [m["type"] for m in document["messages"]] == ["human"]  # no answer made up
    assert document["thread"]["status"] == "error"
    shown = agent.run("threads", "show", thread)
    assert shown.returncode == 0, shown.stderr
    assert re.search(r"last run failed: the model.s answer was empty", shown.stdout), shown.stdout
    # a later turn: the model sees the two questions, never an empty answer between them
    agent.server.push(text("Hello again."))
    again = agent.run("run", "--thread", thread, "hello?")
    assert again.returncode == 0, again.stderr
    sent = agent.server.requests[-1]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "user"]


def test_a_plain_run_says_the_empty_answer_in_one_line(agent: Agent) -> None:
    agent.server.push(text(""), text(""))
    result = agent.run("run", "say hello")
    assert result.returncode == 1
    retried, failed = result.stderr.splitlines()
    assert "empty" in retried and "asking once more" in retried
    assert failed.startswith("agentcli: error:") and "empty" in failed


def test_chat_says_an_empty_answer_and_comes_back_to_the_prompt(agent: Agent) -> None:
    agent.server.push(text("", usage=(1348, 0)), text("", usage=(1348, 0)), text("Hi."))
    child = agent.spawn("chat", "say hello")
    child.expect("the model's answer was empty")
    child.expect(PROMPT)
    child.sendline("/retry")
    child.expect("Hi.")
    leave(child)
    assert len(agent.server.requests) == 3


# 4. a recovered error is one calm line


def test_a_recovered_refusal_is_one_calm_line_in_chat(agent: Agent) -> None:
    agent.server.profile = Profile(refuse_null_content=True)
    agent.server.push(tool_calls(("read_file", {"path": "n.txt"})), text("It says hi."))
    (agent.workspace / "n.txt").write_text("hi\n")
    child = agent.spawn("chat", "read n.txt")
    child.expect(CHOICE)
    child.sendline("a")
    child.expect(r"([^\r\n]*)sending empty content instead of null from now on[^\r\n]*\r\n")
    retry_line = child.match.group(0)
    child.expect("It says hi.")
    shown = child.before
    leave(child)
    assert "validation error" not in retry_line and "literal_error" not in retry_line
    assert "refused" in retry_line and len(retry_line) < 160, retry_line
    assert "validation error" not in shown and "literal_error" not in shown
    # the raw text is in the log
    log = Path(agent.env["XDG_DATA_HOME"]) / "agentcli" / "logs" / "model.log"
    assert "7 validation errors" in log.read_text() and "literal_error" in log.read_text()


def test_debug_shows_the_raw_text_of_a_recovered_error(agent: Agent) -> None:
    agent.server.profile = Profile(refuse_null_content=True)
    agent.server.push(tool_calls(("read_file", {"path": "n.txt"})), text("It says hi."))
    (agent.workspace / "n.txt").write_text("hi\n")
    result = agent.run("run", "read n.txt", "-y", "--debug")
    assert result.returncode == 0, result.stderr
    assert "7 validation errors" in result.stderr and "literal_error" in result.stderr


# 5. a cut-off answer is marked in the transcript


def test_show_and_export_mark_an_answer_the_server_cut_off(agent: Agent) -> None:
    agent.server.profile = Profile(finish_length=True)
    agent.server.push(tool_calls(("shell", '{"command": "touch x"}'), content="Let me run"))
    result = agent.run("run", "go", "-y", "-o", "json")
    assert result.returncode == 1 and json.loads(result.stdout)["status"] == "incomplete"
    thread = json.loads(result.stdout)["thread_id"]

    shown = agent.run("threads", "show", thread).stdout
    assert re.search(r"assistant \(cut off: [^)]*max_tokens[^)]*\): Let me run", shown), shown
    assert "shell (cut off, not run)" in shown, shown
    as_json = json.loads(agent.run("threads", "show", thread, "--json").stdout)
    answer = as_json["entries"][1]
    assert answer["cut_off"] == {"reason": "length", "dropped_calls": ["shell"]}

    markdown = agent.run("threads", "export", thread).stdout
    assert "**Assistant (cut off: " in markdown and "shell" in markdown, markdown
    document = exported(agent, thread)
    assert document["cut_off"] == [{"message": 1, "reason": "length", "dropped_calls": ["shell"]}]


# 6. a model looping on the same call


def test_a_model_repeating_its_calls_is_told_then_stopped_before_max_steps(agent: Agent) -> None:
    (agent.workspace / "a.txt").write_text("a\n")
    loop = [("list_dir", {"path": "."}), ("search_files", {"pattern": "hello"})] * 4
    agent.server.push(*(tool_calls(call) for call in loop))
    result = agent.run("run", "say hello", "-y", "-o", "jsonl")
    assert result.returncode == 1
    # the third list_dir got the note: the model was told once, and the next repeat stopped it
    assert len(agent.server.requests) == 6, len(agent.server.requests)
    told = [m for m in agent.server.requests[5]["messages"] if m["role"] == "tool"]
    assert "same call" in told[-1]["content"] and "list_dir" in told[-1]["content"]
    assert all("same call" not in m["content"] for m in told[:-1])
    error = one_line(result.stderr)
    assert "search_files" in error and "3 times" in error and "max_steps" not in error, error


def test_a_warned_model_may_change_course(agent: Agent) -> None:
    agent.server.push(
        *(tool_calls(("list_dir", {"path": "."})) for _ in range(3)),
        tool_calls(("read_file", {"path": "a.txt"})),
        text("Hello!"),
    )
    (agent.workspace / "a.txt").write_text("a\n")
    result = agent.run("run", "say hello", "-y", "-o", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["final"] == "Hello!"


def test_the_same_failing_command_between_edits_is_no_loop(agent: Agent) -> None:
    """Re-running the tests after each edit is work, not a loop, even when they fail the
    same way each time: the file changed in between."""
    steps = []
    for attempt in range(6):
        steps.append(tool_calls(("write_file", {"path": "f.py", "content": f"x = {attempt}\n"})))
        steps.append(tool_calls(("shell", {"command": "echo failed; exit 1"})))
    agent.server.push(*steps, text("Gave up."))
    result = agent.run("run", "fix the tests", "-y", "-o", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["final"] == "Gave up."
    sent = agent.server.requests[-1]["messages"]
    assert all("same call" not in str(m.get("content")) for m in sent)


def test_the_same_failing_call_is_a_loop(agent: Agent) -> None:
    agent.server.push(*(tool_calls(("read_file", {"path": "missing.txt"})) for _ in range(5)))
    result = agent.run("run", "read it", "-y")
    assert result.returncode == 1
    assert len(agent.server.requests) == 4
    assert "read_file" in error_line(result)


def test_the_threshold_is_a_setting_and_zero_turns_it_off(agent: Agent) -> None:
    configured(agent, "[agent]\nmax_steps = 6\nmax_repeated_calls = 0\n")
    agent.server.push(*(tool_calls(("list_dir", {"path": "."})) for _ in range(6)))
    result = agent.run("run", "say hello", "-y")
    assert result.returncode == 1 and "max_steps" in error_line(result)
    assert len(agent.server.requests) == 6
    configured(agent, "[agent]\nmax_repeated_calls = 2\n")
    agent.server.requests.clear()
    agent.server.push(*(tool_calls(("list_dir", {"path": "."})) for _ in range(3)))
    result = agent.run("run", "say hello", "-y")
    assert result.returncode == 1 and "3 times" in error_line(result)
    assert len(agent.server.requests) == 3


def test_chat_stops_a_loop_with_one_line_and_comes_back(agent: Agent) -> None:
    agent.server.push(*(tool_calls(("list_dir", {"path": "."})) for _ in range(4)), text("Hi."))
    child = agent.spawn("chat", "-y", "say hello")
    child.expect(r"list_dir[^\r\n]*4 times")
    child.expect(PROMPT)
    child.sendline("hello")
    child.expect("Hi.")
    leave(child)
