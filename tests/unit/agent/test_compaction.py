"""Compaction: where a thread is cut, what the model is sent, how summaries are asked."""

from __future__ import annotations

import random

import httpx
import openai
import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from agentcli.agent.context.compaction import (
    CONTINUE,
    SUMMARISE,
    SUMMARY_HEADING,
    Budget,
    choose_cut,
    compact,
    outgoing,
    summarise,
)
from agentcli.agent.context.window import overflowed, probe, window_in
from agentcli.agent.model.token_count import Calibration, message_tokens, text_tokens
from agentcli.events import Compacted
from tests.helpers.fakes import call, say
from tests.helpers.scripted_server import ScriptedServer


def thread(seed: int, turns: int = 30) -> list[BaseMessage]:
    """A random thread: user turns, answers, and calls with their results."""
    rng = random.Random(seed)
    out: list[BaseMessage] = []
    for n in range(turns):
        out.append(HumanMessage(f"turn {n} " + "x" * rng.randrange(10, 400)))
        for _ in range(rng.randrange(0, 3)):
            ai = call(*[("note", {"text": "y" * rng.randrange(1, 200)})] * rng.randrange(1, 3))
            out.append(ai)
            out += [
                ToolMessage("r" * rng.randrange(1, 900), tool_call_id=c["id"], name="note")
                for c in ai.tool_calls
            ]
        out.append(say("a" * rng.randrange(1, 300)))
    return out


@pytest.mark.parametrize("seed", range(40))
def test_a_cut_never_parts_a_call_from_its_result(seed: int) -> None:
    messages = thread(seed)
    keep = random.Random(seed).randrange(0, 3000)
    cut = choose_cut(messages, 0, keep, message_tokens)
    assert cut is not None and 0 < cut < len(messages)
    kept = messages[cut:]
    assert not isinstance(kept[0], ToolMessage)
    calls = {c["id"] for m in kept if isinstance(m, AIMessage) for c in m.tool_calls}
    results = {m.tool_call_id for m in kept if isinstance(m, ToolMessage)}
    assert results == calls  # every result kept with its call, every call with its result
    tail = sum(message_tokens(m) for m in kept)
    # the kept tail fits `keep`, unless even the last call-and-results group is bigger
    last_start = max(i for i, m in enumerate(messages) if not isinstance(m, ToolMessage))
    assert tail <= keep or cut == last_start
    if cut > 1 and tail <= keep:  # and it is the longest tail that fits
        earlier = max(i for i in range(cut) if not isinstance(messages[i], ToolMessage))
        assert earlier == 0 or sum(message_tokens(m) for m in messages[earlier:]) > keep


def test_nothing_to_cut_after_the_last_cut() -> None:
    messages = [HumanMessage("a"), say("b"), HumanMessage("c")]
    assert choose_cut(messages, 2, 0, message_tokens) is None
    assert choose_cut(messages, 0, 0, message_tokens) == 2


def test_what_is_sent_after_a_compaction() -> None:
    ai = call(("note", {"text": "t"}))
    messages = [
        HumanMessage("old"),
        say("old answer"),
        ai,
        ToolMessage("z" * 5000, tool_call_id=ai.tool_calls[0]["id"], name="note"),
        say("new"),
    ]
    compaction = {"upto": 2, "summary": "they said old things"}
    sent = outgoing("SYSTEM", messages, compaction, Budget(window=1000, tool_result=0.2))
    assert sent[0].content == f"SYSTEM\n\n{SUMMARY_HEADING}\nthey said old things"
    assert sent[1].content == CONTINUE  # roles alternate: a user turn before the AI's
    assert sent[2] is ai
    assert "characters cut to fit the context window" in sent[3].text
    assert text_tokens(sent[3].text) <= 200 + 20 and sent[3].text.startswith("zzz")
    assert messages[3].text == "z" * 5000  # the thread keeps it whole
    # a compaction that does not fit this history (a cut on a tool result) is not used
    for upto in (3, 5, 99, "x"):
        wrong = outgoing("SYSTEM", messages, {"upto": upto, "summary": "s"}, None)
        assert wrong[0].content == "SYSTEM" and len(wrong) == 6


class Recorder:
    """A model for summaries: records each request, answers with a numbered summary."""

    def __init__(self) -> None:
        self.requests: list[list[BaseMessage]] = []

    def invoke(self, messages: list[BaseMessage], **kwargs: object) -> AIMessage:
        self.requests.append(messages)
        return say(f"summary {len(self.requests)}")


def test_a_long_history_is_summarised_in_requests_that_each_fit() -> None:
    budget = Budget(window=2000, reserve=200)
    words = "alpha beta " * 100  # 200 tokens
    lines = [f"User: {words}" for _ in range(20)]
    model = Recorder()
    assert summarise(model, "before", lines, budget) == f"summary {len(model.requests)}"
    assert len(model.requests) > 1
    for n, request in enumerate(model.requests, 1):
        assert request[0].content == SUMMARISE
        size = sum(message_tokens(m) for m in request)
        assert size <= budget.limit
        previous = "before" if n == 1 else f"summary {n - 1}"
        assert request[1].content.startswith(f"Summary so far:\n{previous}\n")
    assert sum(r[1].content.count(words) for r in model.requests) == 20  # all read once


def test_compact_summarises_the_older_messages_only() -> None:
    messages = thread(1, turns=12)
    model = Recorder()
    new = compact(model, messages, None, Budget(window=4000), "threshold")
    assert new is not None and new["length"] == len(messages)
    assert new["summary"] == f"summary {len(model.requests)}"  # the last request's answer
    read = "".join(request[1].content for request in model.requests)
    users = [(i, m.text.split(" x")[0] + " ") for i, m in enumerate(messages) if m.type == "human"]
    assert all((f"User: {turn}" in read) == (i < new["upto"]) for i, turn in users)


def test_calibration_only_corrects_upwards() -> None:
    calibration = Calibration()
    calibration.learn(100, 50)
    assert calibration.apply(100) == 101
    calibration.learn(100, 180)
    assert calibration.apply(100) == 181
    calibration.learn(100, 10_000)
    assert calibration.scale == 4.0


def bad_request(message: str, code: str | None = None, **more: object) -> openai.BadRequestError:
    body = {"message": message, "code": code, **more}
    response = httpx.Response(400, request=httpx.Request("POST", "http://127.0.0.1/v1"))
    return openai.BadRequestError(message, response=response, body={"error": body})


@pytest.mark.parametrize(
    ("message", "code", "window"),
    [
        ("This model's maximum context length is 8192 tokens. However ...", None, 8192),
        ("anything", "context_length_exceeded", None),
        ("Requested tokens (5000) exceed context window of 2048", None, 2048),
        ("the request exceeds the available context size, try increasing it", None, None),
    ],
)
def test_overflow_errors_are_recognised(message: str, code: str | None, window: int) -> None:
    error = bad_request(message, code)
    assert overflowed(error) and window_in(error) == window


def test_other_errors_are_not_overflows() -> None:
    assert not overflowed(bad_request("invalid tool schema"))
    assert not overflowed(ValueError("maximum context length is 5"))
    assert window_in(bad_request("x", "exceed_context_size_error", n_ctx=4096)) == 4096


def test_the_window_is_asked_of_the_server() -> None:
    with ScriptedServer(context_window=3210) as told:
        assert probe(told.base_url, "scripted") == 3210
    with ScriptedServer(context_window=3210, announce_window=False) as silent:
        assert probe(silent.base_url, "scripted") is None
    assert probe("http://127.0.0.1:9/v1", "scripted") is None  # nobody there: unknown


def test_compact_on_demand_through_the_session(make) -> None:
    replies = [say(f"answer {n}") for n in range(6)]
    s = make([*replies[:3], say("SUMMARY"), *replies[3:]])
    for n in range(3):
        list(s.send(f"message {n} " + "m" * 400))
    done = s.compact()
    assert isinstance(done, Compacted) and done.reason == "command" and done.upto > 0
    assert s.model().calls[-1][0].content == SUMMARISE
    list(s.send("next"))
    sent = s.model().calls[-1]
    assert sent[0].content.endswith(f"{SUMMARY_HEADING}\nSUMMARY")
    assert len(sent) < len(s.state().values["messages"])  # the thread keeps them all
    assert len(s.state().values["messages"]) == 8


def test_a_thread_past_the_threshold_is_compacted_before_it_is_sent(make) -> None:
    s = make([say(f"answer {n}") for n in range(40)], context_window=1500, answer_reserve=100)
    sizes = []
    for n in range(12):
        list(s.send(f"message {n} " + "m" * 600))
        model = s.model()
        sizes.append(sum(message_tokens(m) for m in model.calls[-1]))
    summaries = [c for c in s.model().calls if c[0].content == SUMMARISE]
    assert summaries
    limit = Budget(window=1500, reserve=100).limit
    assert max(sizes) <= limit
    assert s.state().values["compaction"]["reason"] == "threshold"


def test_the_transcript_keeps_every_message_and_marks_the_summary() -> None:
    from agentcli.session.transcript import entries, speaker

    messages = [HumanMessage("one"), say("two"), HumanMessage("three"), say("four")]
    compaction = {"upto": 2, "summary": "one, two", "reason": "threshold", "at": "now"}
    shown = entries({"messages": messages, "compaction": compaction})
    assert [e["role"] for e in shown] == ["user", "assistant", "summary", "user", "assistant"]
    assert [e["text"] for e in shown] == ["one", "two", "one, two", "three", "four"]
    assert speaker(shown[2]) == "summary of the 2 messages above (sent to the model instead)"
    assert [e["role"] for e in entries({"messages": messages})].count("summary") == 0
