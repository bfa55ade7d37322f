"""StreamingChatOpenAI: argument fragments built without repair and joined, the answer unchanged.

Each test compares with plain ChatOpenAI on the same stream: the message agentcli gathers
(`ask`), and the one langchain merges for its callbacks, must be equal.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.chat_models import merge_chat_generation_chunks
from langchain_core.messages import AIMessageChunk, HumanMessage
from langchain_openai import ChatOpenAI

import agentcli.agent.model.openai_streaming as openai_streaming
from agentcli.agent.answer_streaming import ask
from agentcli.agent.model.answer_stream import Accumulator
from agentcli.agent.model.chat_model import make_model
from agentcli.agent.model.openai_streaming import StreamingChatOpenAI, _Joiner
from agentcli.agent.state import RunContext
from agentcli.config import Settings
from tests.helpers.scripted_server import ScriptedServer, text, tool_calls

ARGS = [
    {"path": "a.txt", "content": 'line "one"\n\\back\tcafé ✓ 😀\n' * 40},
    {"path": "b.txt", "content": "}" * 50 + '{"not": "json"}'},
]
NOT_JSON = '{"path": "c.txt", "content": "cut off here'  # invalid JSON, repaired by langchain


def raw_chunk(delta: dict[str, Any], finish: str | None = None, usage: Any = None) -> dict:
    """An OpenAI chunk as the client's model_dump gives it: every delta field present."""
    full = {"audio": None, "content": None, "function_call": None, "refusal": None, "role": None}
    full["tool_calls"] = None
    choice = {"index": 0, "delta": {**full, **delta}, "logprobs": None, "finish_reason": finish}
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "m",
            "choices": [choice], "usage": usage}  # fmt: skip


def call_delta(index: int, args: str, head: tuple[str, str] | None = None) -> dict[str, Any]:
    call: dict[str, Any] = {"index": index, "id": None, "type": None}
    call["function"] = {"name": None, "arguments": args}
    if head:
        call["id"], call["type"], call["function"]["name"] = head[0], "function", head[1]
    return {"tool_calls": [call]}


@st.composite
def raw_streams(draw: st.DrawFn) -> list[dict]:
    """Text, then calls whose argument fragments are interleaved by index, cut at random."""
    answer = draw(st.text(max_size=30))
    calls = [json.dumps(a) for a in ARGS] + ([NOT_JSON] if draw(st.booleans()) else [])
    out = [raw_chunk({"role": "assistant", "content": ""})]
    out += [raw_chunk({"content": answer[i : i + 3]}) for i in range(0, len(answer), 3)]
    queues: list[list[dict]] = []
    for i, args in enumerate(calls):
        cuts = sorted(draw(st.sets(st.integers(1, len(args) - 1), max_size=40)))
        parts = [args[a:b] for a, b in zip([0, *cuts], [*cuts, len(args)], strict=True)]
        head = [raw_chunk(call_delta(i, "", (f"call_{i}", "write_file")))]
        queues.append(head + [raw_chunk(call_delta(i, part)) for part in parts])
    while any(queues):
        queue = draw(st.sampled_from([q for q in queues if q]))
        out.append(queue.pop(0))
        if draw(st.integers(0, 19)) == 0:  # a text fragment between argument fragments
            out.append(raw_chunk({"content": "."}))
    out.append(raw_chunk({}, "tool_calls"))
    usage = {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}
    return [*out, {**raw_chunk({}), "choices": [], "usage": usage}]


def generation_chunks(model: ChatOpenAI, raw: list[dict], join: bool) -> list[Any]:
    """What `model._stream` yields for these raw chunks (joined or not)."""
    made = [model._convert_chunk_to_generation_chunk(c, AIMessageChunk, {}) for c in raw]
    made = [c for c in made if c is not None]
    if not join:
        return made
    joiner = _Joiner()
    return [out for c in made for out in joiner.push(c)] + list(joiner.flush())


def gathered(chunks: list[Any]) -> Any:
    whole = Accumulator()
    for c in chunks:
        whole.add(c.message)
    return whole.message()


PLAIN = ChatOpenAI(model="m", api_key="x", base_url="http://127.0.0.1:9")  # type: ignore[arg-type]
FAST = StreamingChatOpenAI(model="m", api_key="x", base_url="http://127.0.0.1:9")  # type: ignore[arg-type]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=raw_streams(), size=st.sampled_from([1, 7, 100, 64_000]))
def test_joined_fragments_give_the_same_message(raw, size) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(openai_streaming, "COALESCE_CHARS", size)
        patch.setattr(openai_streaming, "COALESCE_SECONDS", 1e9)
        before = generation_chunks(PLAIN, raw, join=False)
        after = generation_chunks(FAST, raw, join=True)
    assert gathered(after) == gathered(before)  # what ask returns
    merged, merged_before = (
        merge_chat_generation_chunks(after),
        merge_chat_generation_chunks(before),
    )
    assert merged is not None and merged_before is not None
    assert merged.message == merged_before.message  # what langchain's callbacks see
    assert merged.text == merged_before.text
    assert len(after) <= len(before)
    if size == 64_000:  # a run of one call's bare fragments becomes one chunk
        runs = [openai_streaming._fragment(c) for c in before]
        kept = [
            r is None or p is None or r[0] != p[0]
            for p, r in zip([None, *runs[:-1]], runs, strict=True)
        ]
        assert len(after) == sum(kept)


def test_every_fragment_chunk_equals_langchains_but_for_the_repair() -> None:
    for c in [call_delta(0, '"x\\'), call_delta(3, ""), call_delta(1, "{")]:
        plain = PLAIN._convert_chunk_to_generation_chunk(raw_chunk(c), AIMessageChunk, {})
        fast = FAST._convert_chunk_to_generation_chunk(raw_chunk(c), AIMessageChunk, {})
        assert plain is not None and fast is not None
        assert fast.message.tool_call_chunks == plain.message.tool_call_chunks
        assert fast.message.response_metadata == plain.message.response_metadata
        assert fast.generation_info == plain.generation_info and fast.text == plain.text
        assert not fast.message.tool_calls  # the per-fragment repair is what is skipped


@pytest.mark.parametrize(
    "delta",
    [
        call_delta(0, "x", ("call_0", "f")),  # a head: id and name
        {**call_delta(0, "x"), "content": "hi"},  # text with it
        {"tool_calls": [call_delta(0, "a")["tool_calls"][0], call_delta(1, "b")["tool_calls"][0]]},
        {"content": "just text"},
        {**call_delta(0, "x"), "audio": {"id": "a"}},  # something langchain-openai may read
    ],
)
def test_anything_but_a_bare_fragment_goes_through_langchain(delta) -> None:
    plain = PLAIN._convert_chunk_to_generation_chunk(raw_chunk(delta), AIMessageChunk, {})
    fast = FAST._convert_chunk_to_generation_chunk(raw_chunk(delta), AIMessageChunk, {})
    assert fast == plain


def test_a_fragment_with_a_finish_reason_or_usage_goes_through_langchain() -> None:
    usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    finished = raw_chunk(call_delta(0, "x"), "tool_calls")
    for raw in [finished, raw_chunk(call_delta(0, "x"), None, usage)]:
        plain = PLAIN._convert_chunk_to_generation_chunk(raw, AIMessageChunk, {})
        assert FAST._convert_chunk_to_generation_chunk(raw, AIMessageChunk, {}) == plain


# --- through HTTP: the scripted server, ask(), and the callbacks' merge ------------------------


class Ended(BaseCallbackHandler):
    def __init__(self) -> None:
        self.messages: list[Any] = []

    def on_llm_end(self, response: Any, **kwargs: Any) -> None:
        self.messages.append(response.generations[0][0].message)


def run(model: ChatOpenAI) -> tuple[Any, Any, list[str]]:
    ended, tokens = Ended(), []

    def write(part: dict[str, Any]) -> None:  # the text's parts (calls' progress goes too)
        if "token" in part:
            tokens.append(part["token"])

    bound = model.bind_tools([]).with_config(callbacks=[ended])
    answer = ask(bound, [HumanMessage("go")], write, ctx())
    return answer, ended.messages[0], tokens


def same(message: Any) -> str:
    """The message with what differs between two requests (its id, the calls' ids) left out."""
    ids = [c["id"] for c in message.tool_calls + message.invalid_tool_calls]
    dumped = json.dumps(message.model_dump(exclude={"id"}), sort_keys=True)
    for n, id_ in enumerate(ids):
        dumped = dumped.replace(json.dumps(id_), f'"call {n}"')
    return dumped


def ctx() -> RunContext:
    return RunContext(workspace=Path("."))


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(piece=st.integers(8, 300), size=st.sampled_from([5, 300, 64_000]))
def test_ask_gets_the_same_answer_through_the_server(piece, size) -> None:
    reply = [("write_file", ARGS[0]), ("write_file", NOT_JSON), ("read_file", {"path": "x"})]
    with ScriptedServer(piece=piece) as server, pytest.MonkeyPatch.context() as patch:
        patch.setattr(openai_streaming, "COALESCE_CHARS", size)
        answers = []
        for model in (ChatOpenAI, StreamingChatOpenAI):
            server.push(tool_calls(*reply, content="let me write"))
            chat = model(model="m", api_key="x", base_url=server.base_url, max_retries=0)  # type: ignore[arg-type]
            answers.append(run(chat))
    (before, merged_before, tokens_before), (after, merged_after, tokens_after) = answers
    assert same(after) == same(before) and same(merged_after) == same(merged_before)
    assert tokens_after == tokens_before  # text goes out as it comes
    cut = {"path": "c.txt", "content": "cut off here"}  # short: repaired, as langchain does
    assert [c["args"] for c in after.tool_calls] == [ARGS[0], cut, {"path": "x"}]


def test_make_model_streams_with_this_class_and_keeps_its_settings() -> None:
    base = Settings(base_url="http://127.0.0.1:9/v1", model="m", temperature=0.25)
    model = make_model(base)
    assert isinstance(model, StreamingChatOpenAI)
    assert model.model_name == "m" and model.temperature == 0.25 and model.max_retries == 0
    assert model.streaming == base.stream and model.stream_usage


def test_a_text_answer_streams_token_by_token() -> None:
    with ScriptedServer(piece=3) as server:
        server.push(text("hello there"))
        chat = make_model(Settings(base_url=server.base_url, model="m"))
        answer, _, tokens = run(chat)
    assert answer.content == "hello there" and tokens == ["hel", "lo ", "the", "re"]


def test_the_servers_argument_fragments_take_the_fast_path(monkeypatch) -> None:
    """Real chunks (the OpenAI client's, with all their empty fields) skip the repair."""
    made: list[str] = []
    original = openai_streaming._fragment_chunk
    monkeypatch.setattr(
        openai_streaming, "_fragment_chunk", lambda i, a: made.append(a) or original(i, a)
    )
    args = json.dumps(ARGS[0])
    with ScriptedServer(piece=10) as server:
        server.push(tool_calls(("write_file", ARGS[0])))
        chat = make_model(Settings(base_url=server.base_url, model="m"))
        answer, _, _ = run(chat)
    assert answer.tool_calls[0]["args"] == ARGS[0]
    fragments = -(-len(args) // 10)
    assert len(made) >= fragments  # each fragment built without repair, then the joined ones
