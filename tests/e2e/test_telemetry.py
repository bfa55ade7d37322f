"""OpenTelemetry export (agentcli/telemetry/, docs/telemetry.md): the installed command, run
against the scripted model server, sends its traces and metrics by OTLP/HTTP to a receiver
on 127.0.0.1 that decodes the real protobuf messages (tests/helpers/otlp_receiver.py)."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import AGENTCLI, Agent
from tests.helpers.environment import isolated_env
from tests.helpers.langgraph_dev import DevServer
from tests.helpers.otlp_receiver import OtlpReceiver, attributes, points, receiving
from tests.helpers.scripted_server import error, text, tool_calls
from tests.helpers.terminal import CHOICE, PROMPT, leave
from tests.helpers.waiting import until

HOOKS = Path(__file__).parents[1] / "helpers" / "claude_hooks"
ROOT = "invoke_agent agentcli"


@pytest.fixture
def otlp() -> Iterator[OtlpReceiver]:
    with receiving() as receiver:
        yield receiver


def traced(agent: Agent, otlp: OtlpReceiver, *args: str, **env: str) -> subprocess.CompletedProcess:
    agent.env.update(otlp.env(), **env)
    return agent.run(*args)


def spans(otlp: OtlpReceiver) -> list[dict[str, Any]]:
    """Every span received, as a dict: name, ids, times, attributes, status."""
    return [
        {
            "name": span.name,
            "trace": span.trace_id.hex(),
            "id": span.span_id.hex(),
            "parent": span.parent_span_id.hex(),
            "start": span.start_time_unix_nano,
            "end": span.end_time_unix_nano,
            "error": span.status.code == 2,  # STATUS_CODE_ERROR
            **attributes(span.attributes),
        }
        for span in otlp.spans()
    ]


def named(found: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return sorted((s for s in found if s["name"] == name), key=lambda s: s["start"])


def totals(otlp: OtlpReceiver, metric: str, *keys: str) -> dict[tuple, float]:
    """A metric's values summed by the given attributes."""
    summed: dict[tuple, float] = {}
    for attrs, value, _ in points(otlp, metric):
        key = tuple(attrs.get(k) for k in keys)
        summed[key] = summed.get(key, 0) + value
    return summed


def decisions(otlp: OtlpReceiver) -> dict[tuple, float]:
    """agentcli.review.decisions by (decision, who)."""
    return totals(
        otlp, "agentcli.review.decisions", "agentcli.review.decision", "agentcli.review.who"
    )


def configure(agent: Agent, toml: str) -> None:
    path = Path(agent.env["XDG_CONFIG_HOME"]) / "agentcli" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(toml)


def test_a_run_is_one_trace_of_its_model_requests_reviews_and_tool_calls(
    agent: Agent, otlp: OtlpReceiver
) -> None:
    agent.server.push(
        tool_calls(("shell", {"command": "echo hi; exit 3"}), usage=(11, 4)),
        text("done", usage=(7, 3)),
    )
    ran = traced(
        agent,
        otlp,
        "run",
        "--auto-approve",
        "go",
        OTEL_SERVICE_NAME="my-agent",
        OTEL_RESOURCE_ATTRIBUTES="deployment.environment=test",
    )
    assert ran.returncode == 0, ran.stderr
    assert not otlp.bad
    found = spans(otlp)
    assert sorted(s["name"] for s in found) == sorted(
        [ROOT, "chat scripted", "chat scripted", "review shell", "execute_tool shell"]
    )
    (root,) = named(found, ROOT)
    assert len({s["trace"] for s in found}) == 1  # one trace for the turn
    assert root["parent"] == "" and all(s["parent"] == root["id"] for s in found if s != root)
    assert root["agentcli.run.status"] == "done" and not root["error"]
    assert (root["gen_ai.usage.input_tokens"], root["gen_ai.usage.output_tokens"]) == (18, 7)
    first, second = named(found, "chat scripted")
    assert (first["gen_ai.usage.input_tokens"], first["gen_ai.usage.output_tokens"]) == (11, 4)
    assert first["gen_ai.response.finish_reasons"] == ["tool_calls"]
    assert second["gen_ai.response.finish_reasons"] == ["stop"]
    (review,) = named(found, "review shell")
    assert review["agentcli.review.decision"] == "approve"
    assert review["agentcli.review.who"] == "flag"
    assert review["agentcli.review.by"] == "flag --auto-approve"
    (tool,) = named(found, "execute_tool shell")
    assert tool["agentcli.tool.sandbox"] == "confined"
    assert tool["process.exit.code"] == 3 and tool["error"]
    assert tool["error.type"] == "exit_code" and tool["agentcli.tool.status"] == "error"
    assert tool["agentcli.tool.argument_names"] == ["command"]
    # in the order they happened, each within the turn
    order = [first, review, tool, second]
    assert all(a["end"] <= b["start"] for a, b in zip(order, order[1:], strict=False))
    assert root["start"] <= first["start"] and second["end"] <= root["end"]
    assert otlp.resources()[0]["service.name"] == "my-agent"
    assert otlp.resources()[0]["deployment.environment"] == "test"
    # the metrics, as the receiver decoded them
    tokens = totals(otlp, "gen_ai.client.token.usage", "gen_ai.token.type")
    assert tokens == {("input",): 18, ("output",): 7}
    decided = decisions(otlp)
    assert decided == {("approve", "flag"): 1}
    assert totals(otlp, "agentcli.tool.calls", "agentcli.tool.sandbox") == {("confined",): 1}
    assert not points(otlp, "agentcli.review.questions")  # nobody was asked
    assert not points(otlp, "agentcli.review.wait")


def test_a_retried_model_request_is_one_span_with_its_retry(
    agent: Agent, otlp: OtlpReceiver
) -> None:
    agent.server.push(error(500, "overloaded", type_="server_error"), text("ok"))
    ran = traced(agent, otlp, "run", "hi")
    assert ran.returncode == 0, ran.stderr
    (model,) = [span for span in otlp.spans() if span.name == "chat scripted"]
    assert [event.name for event in model.events] == ["retry"]
    assert attributes(model.events[0].attributes)["error.type"]
    assert model.start_time_unix_nano < model.events[0].time_unix_nano < model.end_time_unix_nano


def test_questions_a_person_answers_later_are_timed_from_the_question(
    agent: Agent, otlp: OtlpReceiver
) -> None:
    """`run` parks the thread (exit 3): the questions end undecided with the process;
    `agentcli review` answers them in another: edit and feedback, by the person, the wait
    counted from the question."""
    agent.server.push(
        tool_calls(
            ("write_file", {"path": "a.txt", "content": "a\n"}),
            ("write_file", {"path": "b.txt", "content": "b\n"}),
        ),
        text("done"),
    )
    parked = traced(agent, otlp, "run", "write them", "-o", "json")
    assert parked.returncode == 3, parked.stderr
    thread = json.loads(parked.stdout)["thread_id"]
    first = spans(otlp)
    asked = named(first, "review write_file")
    assert [s["agentcli.review.decision"] for s in asked] == ["none", "none"]
    assert all(s["agentcli.review.asked"] for s in asked)
    (root,) = named(first, ROOT)
    assert root["agentcli.run.status"] == "awaiting_approval" and root["agentcli.exit_code"] == 3
    assert totals(otlp, "agentcli.review.questions") == {(): 2}
    parked_at = max(s["end"] for s in first)

    edit = json.dumps({"path": "a.txt", "content": "edited\n"})
    answered = agent.run(
        "review", thread, "--edit", "call_1", "--args", edit,
        "--reject", "call_2", "--message", "not b",
    )  # fmt: skip
    assert answered.returncode == 0, answered.stderr
    later = [s for s in spans(otlp) if s["trace"] != root["trace"]]
    (root2,) = named(later, ROOT)
    reviews = {s["gen_ai.tool.call.id"]: s for s in named(later, "review write_file")}
    assert reviews["call_1"]["agentcli.review.decision"] == "edit"
    assert reviews["call_2"]["agentcli.review.decision"] == "feedback"
    assert {s["agentcli.review.who"] for s in reviews.values()} == {"person"}
    for review in reviews.values():  # waited since the thread parked, in the other process
        assert review["start"] <= parked_at and review["parent"] == root2["id"]
        assert root2["start"] <= review["start"]
    (tool,) = named(later, "execute_tool write_file")
    assert tool["agentcli.tool.sandbox"] == "none" and tool["agentcli.tool.status"] == "ok"
    decided = decisions(otlp)
    assert decided == {("edit", "person"): 1, ("feedback", "person"): 1}
    waits = {
        a["agentcli.review.decision"]: (v, n) for a, v, n in points(otlp, "agentcli.review.wait")
    }
    assert set(waits) == {"edit", "feedback"} and all(n == 1 for _, n in waits.values())
    for decision, call in (("edit", "call_1"), ("feedback", "call_2")):
        assert waits[decision][0] >= (reviews[call]["end"] - parked_at) / 1e9


def test_in_the_chat_a_turn_is_one_trace_with_the_persons_wait(
    agent: Agent, otlp: OtlpReceiver
) -> None:
    agent.server.push(
        tool_calls(("write_file", {"path": "a.txt", "content": "hello\n"})),
        text("Wrote it."),
        text("Bye."),
    )
    agent.env.update(otlp.env())
    child = agent.spawn("chat", "write hello to a.txt")
    child.expect(CHOICE)
    child.sendline("a")
    child.expect("Wrote it.")
    child.expect(PROMPT)
    child.sendline("thanks")
    child.expect("Bye.")
    leave(child)
    found = spans(otlp)
    turns = named(found, ROOT)
    assert len(turns) == 2 and len({t["trace"] for t in turns}) == 2  # a trace a turn
    first = [s for s in found if s["trace"] == turns[0]["trace"]]
    assert sorted(s["name"] for s in first) == sorted(
        [ROOT, "chat scripted", "review write_file", "execute_tool write_file", "chat scripted"]
    )
    (review,) = named(first, "review write_file")
    assert review["agentcli.review.asked"] and review["parent"] == turns[0]["id"]
    assert (review["agentcli.review.decision"], review["agentcli.review.who"]) == (
        "approve",
        "person",
    )
    asked_after, ran_after = (
        named(first, "chat scripted")[0],
        named(first, "execute_tool write_file")[0],
    )
    assert asked_after["end"] <= review["start"] < review["end"] <= ran_after["start"]
    ((attrs, waited, count),) = points(otlp, "agentcli.review.wait")
    assert count == 1 and attrs["agentcli.review.who"] == "person"
    assert abs(waited - (review["end"] - review["start"]) / 1e9) < 0.01
    assert totals(otlp, "agentcli.review.questions") == {(): 1}
    assert turns[1]["agentcli.run.status"] == "done"


def test_rules_and_hooks_are_named_as_who_decided(agent: Agent, otlp: OtlpReceiver) -> None:
    hook = f"{sys.executable} {HOOKS / 'decide.py'} allow"
    configure(
        agent,
        '[[approval.rules]]\ntool = "shell"\nmatch = "echo unconfined*"\ndecision = "allow"\n'
        'sandbox = "off"\n\n'
        '[[approval.rules]]\ntool = "shell"\nmatch = "rm *"\ndecision = "deny"\n\n'
        f'[[hooks.PreToolUse]]\nmatcher = "Write"\ncommand = {json.dumps(hook)}\n',
    )
    agent.server.push(
        tool_calls(
            ("shell", {"command": "echo unconfined"}),
            ("shell", {"command": "rm -rf x"}),
            ("write_file", {"path": "h.txt", "content": "h\n"}),
        ),
        text("ok"),
    )
    ran = traced(agent, otlp, "run", "go")
    assert ran.returncode == 0, ran.stderr
    found = spans(otlp)
    reviews = {s["gen_ai.tool.call.id"]: s for s in found if s["name"].startswith("review ")}
    who = {c: (s["agentcli.review.decision"], s["agentcli.review.who"]) for c, s in reviews.items()}
    assert who == {
        "call_1": ("approve", "rule"),
        "call_2": ("reject", "rule"),
        "call_3": ("approve", "hook"),
    }
    assert reviews["call_1"]["agentcli.review.unconfined"].startswith("off (by rule")
    assert reviews["call_2"]["agentcli.review.outcome"] == "denied"
    assert "decide.py" in reviews["call_3"]["agentcli.review.by"]
    tools = {s["gen_ai.tool.call.id"]: s for s in found if s["name"].startswith("execute_tool")}
    assert set(tools) == {"call_1", "call_3"}  # the denied call never ran
    assert tools["call_1"]["agentcli.tool.sandbox"] == "unconfined"
    assert tools["call_1"]["process.exit.code"] == 0 and not tools["call_1"]["error"]
    assert tools["call_3"]["agentcli.tool.sandbox"] == "none"
    decided = decisions(otlp)
    assert decided == {("approve", "rule"): 1, ("reject", "rule"): 1, ("approve", "hook"): 1}


def _imports_otel(result: subprocess.CompletedProcess) -> bool:
    """Whether `-X importtime` saw an opentelemetry module load."""
    return any("| opentelemetry" in line for line in result.stderr.splitlines())


def _run_importtime(agent: Agent, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-X", "importtime", AGENTCLI, *args],
        capture_output=True, text=True, env=agent.env, cwd=agent.workspace, timeout=180,
    )  # fmt: skip


@contextmanager
def _nothing_sent_without_an_endpoint(model: Any, agent: Agent, *args: str) -> Iterator[Any]:
    """`agentcli run ARGS` (one shell call, then an answer from `model`) with OTEL_*
    variables but no endpoint: the SDK's default endpoint (localhost:4318) hears nothing,
    and OpenTelemetry is not imported. Yields that endpoint's receiver, still listening."""
    with ExitStack() as stack:
        try:
            default = stack.enter_context(receiving(port=4318))
        except OSError:
            pytest.skip("the OTLP default port is taken on this machine")
        model.push(tool_calls(("shell", {"command": "echo hi"})), text("done"))
        agent.env.update(OTEL_SERVICE_NAME="my-agent", OTEL_TRACES_EXPORTER="otlp")
        ran = _run_importtime(agent, "run", *args)
        assert ran.returncode == 0, ran.stderr[-3000:]
        assert not _imports_otel(ran)
        assert default.requests == []
        yield default


def test_nothing_is_sent_or_imported_without_an_endpoint(agent: Agent) -> None:
    """The SDK's default endpoint (localhost:4318) hears nothing when no endpoint is set,
    even with other OTEL_* variables; and OpenTelemetry is not imported."""
    with _nothing_sent_without_an_endpoint(agent.server, agent, "--auto-approve", "go") as default:
        # the same check sees the import and the requests when an endpoint is set
        agent.server.push(text("done"))
        agent.env.update(default.env())
        ran = _run_importtime(agent, "run", "go")
        assert ran.returncode == 0, ran.stderr[-3000:]
        assert _imports_otel(ran) and default.requests


def test_otel_sdk_disabled_sends_nothing(agent: Agent, otlp: OtlpReceiver) -> None:
    agent.server.push(text("done"))
    agent.env.update(otlp.env(), OTEL_SDK_DISABLED="true")
    ran = _run_importtime(agent, "run", "go")
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert not _imports_otel(ran) and otlp.requests == []


BLOCK_OTEL = """
import sys
class _NoOtel:
    def find_spec(self, name, path=None, target=None):
        if name == "opentelemetry" or name.startswith("opentelemetry."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, _NoOtel())
"""


def test_an_endpoint_without_the_extra_is_one_line_and_the_run_goes_on(
    agent: Agent, otlp: OtlpReceiver, tmp_path: Path
) -> None:
    site = tmp_path / "no_otel"
    site.mkdir()
    (site / "sitecustomize.py").write_text(BLOCK_OTEL)
    agent.server.push(text("done"))
    ran = traced(agent, otlp, "run", "go", PYTHONPATH=str(site))
    assert ran.returncode == 0, ran.stderr
    said = [line for line in ran.stderr.splitlines() if "OpenTelemetry" in line]
    assert len(said) == 1 and "pip install 'agentcli[otel]'" in said[0], ran.stderr
    assert otlp.requests == []


def _silent_collector() -> socket.socket:
    """A port that takes connections and never answers (a collector that hangs)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    return listener


@pytest.mark.parametrize("collector", ["hangs", "refuses"])
def test_an_unreachable_collector_holds_the_exit_two_seconds_at_most(
    agent: Agent, collector: str
) -> None:
    """The exporter alone would wait 60 s (OTEL_EXPORTER_OTLP_TIMEOUT); the exit waits
    for it about 2 s (telemetry/attach.py FLUSH_S), whatever the collector does."""
    listener = _silent_collector()
    port = listener.getsockname()[1]
    if collector == "refuses":
        listener.close()
    agent.server.push(tool_calls(("shell", {"command": "echo hi"})), text("done"))
    agent.env.update(
        OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{port}", OTEL_EXPORTER_OTLP_TIMEOUT="60"
    )
    process = agent.start("run", "--auto-approve", "-o", "jsonl", "go")
    try:
        assert process.stdout is not None
        for line in process.stdout:  # the run's work is done at its done event
            if json.loads(line)["type"] == "done":
                break
        done_at = time.monotonic()
        process.wait(timeout=120)
        took = time.monotonic() - done_at
        assert process.stderr is not None
        said = process.stderr.read()
    finally:
        process.kill()
        listener.close()
    assert process.returncode == 0
    assert took < 30, f"the exit waited {took:.1f} s for an unreachable collector"
    # one line says so; the SDK's own retries and tracebacks stay off the terminal
    told = [line for line in said.splitlines() if "OpenTelemetry collector" in line]
    assert len(told) == 1 and told[0].startswith("agentcli: warning: telemetry:"), said
    assert "Transient error" not in said and "Traceback" not in said, said


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_a_run_stopped_mid_call_still_sends_its_trace(
    agent: Agent, otlp: OtlpReceiver, stop: signal.Signals
) -> None:
    agent.server.push(tool_calls(("shell", {"command": "touch started; sleep 300"})))
    agent.env.update(otlp.env())
    process = agent.start("run", "--auto-approve", "go")
    try:
        until(
            lambda: (agent.workspace / "started").exists(),
            what="the command starts",
            process=process,
        )
        process.send_signal(stop)
        process.wait(timeout=120)
    finally:
        process.kill()
    assert process.returncode in (130, 128 + stop), process.stderr
    found = spans(otlp)
    (tool,) = named(found, "execute_tool shell")
    assert tool["error"] and tool["error.type"] == "interrupted"
    (root,) = named(found, ROOT)
    assert root["error"] and root["agentcli.run.status"] == "interrupted"
    assert tool["parent"] == root["id"]
    assert totals(otlp, "gen_ai.client.token.usage", "gen_ai.token.type") == {
        ("input",): 10,
        ("output",): 5,
    }


# -- runs on a LangGraph server (`--server URL`): traced on the client, from the stream ---


@pytest.fixture
def client(dev: DevServer, tmp_path: Path) -> Agent:
    """The installed agentcli on the person's machine, with no model settings of its own."""
    local = tmp_path / "client"
    local.mkdir()
    return Agent(dev.model, local, isolated_env(tmp_path / "home"))


def test_a_run_on_a_server_is_one_trace_on_the_client(
    dev: DevServer, client: Agent, otlp: OtlpReceiver
) -> None:
    dev.model.push(
        tool_calls(("shell", {"command": "echo hi; exit 3"}), usage=(11, 4)),
        text("done", usage=(7, 3)),
    )
    ran = traced(client, otlp, "run", "--server", dev.url, "-y", "go")
    assert ran.returncode == 0, ran.stderr
    assert "not traced" not in ran.stderr and not otlp.bad
    found = spans(otlp)
    assert sorted(s["name"] for s in found) == sorted(
        [ROOT, "chat", "chat", "review shell", "execute_tool shell"]
    )  # a new thread's model is the server's: named by its answers, not asked here
    (root,) = named(found, ROOT)
    assert len({s["trace"] for s in found}) == 1
    assert root["parent"] == "" and all(s["parent"] == root["id"] for s in found if s != root)
    assert root["agentcli.run.status"] == "done" and not root["error"]
    assert (root["gen_ai.usage.input_tokens"], root["gen_ai.usage.output_tokens"]) == (18, 7)
    first, second = named(found, "chat")
    assert (first["gen_ai.usage.input_tokens"], first["gen_ai.usage.output_tokens"]) == (11, 4)
    assert first["gen_ai.response.finish_reasons"] == ["tool_calls"]
    assert first["gen_ai.response.model"] == "scripted"
    assert "gen_ai.request.model" not in first
    (review,) = named(found, "review shell")
    assert review["agentcli.review.decision"] == "approve"
    assert review["agentcli.review.who"] == "flag"
    (tool,) = named(found, "execute_tool shell")
    assert tool["process.exit.code"] == 3 and tool["error"]
    assert tool["error.type"] == "exit_code" and tool["agentcli.tool.status"] == "error"
    assert tool["agentcli.tool.sandbox"] != "none"  # the server's label came through
    order = [first, review, tool, second]
    assert all(a["end"] <= b["start"] for a, b in zip(order, order[1:], strict=False))
    assert root["start"] <= first["start"] and second["end"] <= root["end"]
    tokens = totals(otlp, "gen_ai.client.token.usage", "gen_ai.token.type")
    assert tokens == {("input",): 18, ("output",): 7}
    assert decisions(otlp) == {("approve", "flag"): 1}


def test_a_review_on_a_server_answered_later_is_timed_from_the_question(
    dev: DevServer, client: Agent, otlp: OtlpReceiver
) -> None:
    dev.model.push(tool_calls(("shell", {"command": "echo parked"})))
    parked = traced(client, otlp, "run", "--server", dev.url, "park it")
    assert parked.returncode == 3, parked.stderr
    line = next(line for line in parked.stderr.splitlines() if "waiting for review" in line)
    thread_id = line.rsplit(" ", 1)[-1]
    (asked,) = named(spans(otlp), "review shell")
    assert asked["agentcli.review.decision"] == "none" and asked["agentcli.review.asked"]

    dev.model.push(text("done"))
    args = ("run", "--server", dev.url, "--thread", thread_id, "--auto-approve")
    done = traced(client, otlp, *args)
    assert done.returncode == 0, done.stderr
    reviews = named(spans(otlp), "review shell")
    assert len(reviews) == 2, reviews
    (answered,) = [r for r in reviews if r["id"] != asked["id"]]
    assert answered["agentcli.review.decision"] == "approve"
    assert answered["agentcli.review.who"] == "client", answered  # the server's record of it
    assert answered["agentcli.review.asked"]  # waited since the server asked
    # from when the server asked (before the first command exited) to the answer
    assert answered["start"] < asked["end"] < answered["end"]
    (tool,) = named(spans(otlp), "execute_tool shell")
    assert tool["agentcli.tool.status"] == "ok" and tool["process.exit.code"] == 0


def test_nothing_is_sent_from_a_server_run_without_an_endpoint(
    dev: DevServer, client: Agent
) -> None:
    with _nothing_sent_without_an_endpoint(dev.model, client, "--server", dev.url, "-y", "go"):
        pass
