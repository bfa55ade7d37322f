"""The scripted server the end-to-end tests run against (tests/helpers/scripted_server.py, the
`server` fixture) speaks OpenAI well enough for the real clients (openai, langchain-openai)."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys

import openai
import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_openai import ChatOpenAI

from tests.helpers.scripted_server import ScriptedServer, drop, error, hang, text, tool_calls


def read_file(path: str) -> str:
    """Read a text file."""
    return ""


def list_dir(path: str = ".") -> str:
    """List a directory."""
    return ""


def chat(server: ScriptedServer, **kwargs) -> ChatOpenAI:
    kwargs = {"api_key": "x", **kwargs}
    return ChatOpenAI(model="scripted", base_url=server.base_url, max_retries=0, **kwargs)


def collect(chunks):
    """Sum streamed AIMessageChunks; also return the list of chunks."""
    chunks = list(chunks)
    total = chunks[0]
    for c in chunks[1:]:
        total = total + c
    return total, chunks


def test_invoke_text_reports_usage_and_records_request(server):
    server.push(text("Hello there!", usage=(12, 3)))
    msg = chat(server).invoke([HumanMessage("hi")])

    assert msg.content == "Hello there!"
    assert msg.tool_calls == []
    assert msg.usage_metadata["input_tokens"] == 12
    assert msg.usage_metadata["output_tokens"] == 3
    assert msg.usage_metadata["total_tokens"] == 15
    assert msg.response_metadata["finish_reason"] == "stop"
    assert msg.response_metadata["model_name"] == "scripted"
    assert len(server.requests) == 1
    req = server.requests[0]
    assert req["model"] == "scripted"
    assert not req.get("stream")
    assert req["messages"] == [{"role": "user", "content": "hi"}]
    assert server.headers[0]["authorization"] == "Bearer x"
    assert server.pending == 0


def test_stream_text_in_several_deltas_with_usage(server):
    server.push(text("The quick brown fox jumps.", usage=(7, 9)))
    total, chunks = collect(chat(server).stream("go", stream_usage=True))

    assert total.content == "The quick brown fox jumps."
    assert len([c for c in chunks if c.content]) > 3  # really streamed, not one blob
    assert total.usage_metadata["input_tokens"] == 7
    assert total.usage_metadata["output_tokens"] == 9
    assert total.response_metadata["finish_reason"] == "stop"
    req = server.requests[0]
    assert req["stream"] is True
    assert req["stream_options"] == {"include_usage": True}


def test_stream_without_usage_option_sends_no_usage(server):
    server.push(text("abc"))
    total, _ = collect(chat(server).stream("go"))
    assert total.content == "abc"
    assert total.usage_metadata is None
    assert "stream_options" not in server.requests[0]


def test_streaming_model_invoke_aggregates_text_and_usage(server):
    server.push(text("streamed answer", usage=(20, 4)))
    msg = chat(server, streaming=True, stream_usage=True).invoke("hi")

    assert msg.content == "streamed answer"
    assert msg.usage_metadata["total_tokens"] == 24
    assert server.requests[0]["stream"] is True


def test_invoke_tool_calls_valid_and_malformed(server):
    server.push(
        tool_calls(
            ("read_file", {"path": "a.txt"}), ("list_dir", '{"path": '), content="Let me look."
        ),
        tool_calls(("list_dir", {})),
    )
    model = chat(server).bind_tools([read_file, list_dir])
    msg = model.invoke("look around")

    assert msg.content == "Let me look."
    assert msg.response_metadata["finish_reason"] == "tool_calls"
    assert [(c["name"], c["args"], c["id"]) for c in msg.tool_calls] == [
        ("read_file", {"path": "a.txt"}, "call_1")
    ]
    [bad] = msg.invalid_tool_calls
    assert (bad["name"], bad["args"], bad["id"]) == ("list_dir", '{"path": ', "call_2")
    assert {t["function"]["name"] for t in server.requests[0]["tools"]} == {"read_file", "list_dir"}

    # ids keep counting across replies for the whole server lifetime
    assert model.invoke("again").tool_calls[0]["id"] == "call_3"


def test_stream_tool_calls_in_fragments(server):
    long_path = "some/long/file/name.txt"
    server.push(tool_calls(("read_file", {"path": long_path}), ("list_dir", "not json")))
    model = chat(server, stream_usage=True).bind_tools([read_file, list_dir])
    total, chunks = collect(model.stream("look"))

    fragments = [tc for c in chunks for tc in c.tool_call_chunks]
    assert len(fragments) > 4  # header delta + several argument pieces per call
    head = fragments[0]
    assert (head["id"], head["name"], head["args"]) == ("call_1", "read_file", "")
    assert all(f["id"] is None and f["name"] is None for f in fragments[1:] if f["index"] == 0)
    assert total.tool_calls == [
        {"name": "read_file", "args": {"path": long_path}, "id": "call_1", "type": "tool_call"}
    ]
    [bad] = total.invalid_tool_calls
    assert (bad["name"], bad["args"], bad["id"]) == ("list_dir", "not json", "call_2")
    assert total.usage_metadata["total_tokens"] == 15
    assert total.response_metadata["finish_reason"] == "tool_calls"


def test_streamed_truncated_arguments_are_repaired_by_langchain(server):
    """Surprise worth knowing: when streaming, langchain parses arguments with
    parse_partial_json, so truncated JSON becomes a *valid* call with partial args.
    Only unparseable text (or a non-object) lands in invalid_tool_calls."""
    server.push(tool_calls(("read_file", '{"path": ')), tool_calls(("read_file", '{"path": ')))
    model = chat(server).bind_tools([read_file])
    streamed, _ = collect(model.stream("x"))
    assert streamed.tool_calls[0]["args"] == {} and streamed.invalid_tool_calls == []
    invoked = model.invoke("x")
    assert invoked.tool_calls == [] and invoked.invalid_tool_calls[0]["args"] == '{"path": '


def test_tool_round_trip_is_recorded(server):
    server.push(tool_calls(("read_file", {"path": "a.txt"})), text("It says hello."))
    model = chat(server).bind_tools([read_file])
    history = [HumanMessage("what is in a.txt?")]
    ai = model.invoke(history)
    history += [ai, ToolMessage("hello", tool_call_id=ai.tool_calls[0]["id"])]
    final = model.invoke(history)

    assert isinstance(ai, AIMessage) and final.content == "It says hello."
    sent = server.requests[1]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool"]
    assert sent[1]["tool_calls"][0]["id"] == "call_1"
    assert json.loads(sent[1]["tool_calls"][0]["function"]["arguments"]) == {"path": "a.txt"}
    assert sent[2] == {"role": "tool", "content": "hello", "tool_call_id": "call_1"}


def test_error_401_raises_authentication_error(server):
    server.push(error(401, "bad key", code="invalid_api_key"))
    with pytest.raises(openai.AuthenticationError) as exc:
        chat(server).invoke("hi")
    assert exc.value.status_code == 401
    assert exc.value.code == "invalid_api_key"
    assert "bad key" in str(exc.value)


def test_error_429_streamed_raises_rate_limit(server):
    server.push(error(429, "slow down", type_="rate_limit_exceeded"))
    with pytest.raises(openai.RateLimitError, match="slow down"):
        list(chat(server).stream("hi"))


def test_require_key():
    with ScriptedServer(require_key="sk-test") as server:
        server.push(text("welcome"))
        with pytest.raises(openai.AuthenticationError) as exc:
            chat(server).invoke("hi")  # api_key="x"
        assert exc.value.code == "invalid_api_key"
        assert server.pending == 1  # a rejected request consumes no reply
        assert chat(server, api_key="sk-test").invoke("hi").content == "welcome"
        assert [h["authorization"] for h in server.headers] == ["Bearer x", "Bearer sk-test"]


def test_drop_raises_connection_error(server):
    server.push(drop(), drop())
    with pytest.raises(openai.APIConnectionError):
        chat(server).invoke("hi")
    with pytest.raises(openai.APIConnectionError):
        list(chat(server).stream("hi"))


def test_drop_mid_stream_after_partial_text(server):
    server.push(drop(partial="Hello, wor"))
    seen = []
    with pytest.raises(openai.APIConnectionError):
        for chunk in chat(server).stream("hi"):
            seen.append(chunk.content)
    assert "".join(seen) == "Hello, wor"


def test_empty_queue_fails_loudly(server):
    with pytest.raises(openai.InternalServerError, match="no reply queued"):
        chat(server).invoke("hi")
    with pytest.raises(openai.InternalServerError, match="no reply queued"):
        list(chat(server).stream("hi"))
    assert len(server.requests) == 2


def test_hang_triggers_client_timeout_and_server_keeps_serving(server):
    server.push(hang(5), text("after the hang"))
    with pytest.raises(openai.APITimeoutError):
        chat(server, timeout=0.3).invoke("hi")
    assert chat(server, timeout=2).invoke("hi").content == "after the hang"


def test_keep_alive_across_many_requests(server):
    server.push(text("one"), error(400, "nope"), tool_calls(("list_dir", {})), text("two"))
    server.push(text("s1"), text("s2"), text("three"))
    model = chat(server).bind_tools([list_dir])
    assert model.invoke("a").content == "one"
    with pytest.raises(openai.BadRequestError):
        model.invoke("b")
    assert model.invoke("c").tool_calls[0]["name"] == "list_dir"
    assert model.invoke("d").content == "two"
    assert server.connections == 1  # JSON responses (errors included) keep the connection

    # The openai client closes a stream's response as soon as it sees [DONE], before
    # reading the chunked terminator, so httpx discards that connection: each stream
    # costs a fresh one.  Later requests must still work fine.
    assert collect(model.stream("e"))[0].content == "s1"
    assert collect(model.stream("f"))[0].content == "s2"
    assert model.invoke("g").content == "three"
    assert len(server.requests) == 7
    assert server.connections == 3


def test_models_endpoint(server):
    client = openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0)
    assert [m.id for m in client.models.list()] == ["scripted"]


def test_sse_wire_format(server):
    """Check the raw bytes against OpenAI's format, independent of any client's leniency."""
    server.push(tool_calls(("read_file", {"path": "x"}), content="ok"), text("plain"))
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    body = {
        "model": "m-1",
        "messages": [],
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    conn.request("POST", "/v1/chat/completions", json.dumps(body))
    resp = conn.getresponse()
    assert resp.status == 200
    assert resp.getheader("Content-Type") == "text/event-stream"
    events = [e for e in resp.read().decode().split("\n\n") if e]
    assert all(e.startswith("data: ") for e in events)
    assert events[-1] == "data: [DONE]"
    chunks = [json.loads(e[len("data: ") :]) for e in events[:-1]]
    assert {(c["object"], c["model"], c["id"]) for c in chunks} == {
        ("chat.completion.chunk", "m-1", chunks[0]["id"])
    }
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    assert chunks[-1]["choices"] == []
    assert chunks[-1]["usage"] == {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"
    deltas = [c["choices"][0]["delta"] for c in chunks[:-1]]
    calls = [tc for d in deltas for tc in d.get("tool_calls", [])]
    assert calls[0] == {
        "index": 0,
        "id": "call_1",
        "type": "function",
        "function": {"name": "read_file", "arguments": ""},
    }
    assert all(set(tc) == {"index", "function"} for tc in calls[1:])
    assert "".join(tc["function"]["arguments"] for tc in calls) == '{"path": "x"}'

    # same connection, non-streamed JSON answer with Content-Length
    conn.request("POST", "/v1/chat/completions", json.dumps({"model": "m-2", "messages": []}))
    resp = conn.getresponse()
    raw = resp.read()
    assert int(resp.getheader("Content-Length")) == len(raw)
    completion = json.loads(raw)
    assert completion["object"] == "chat.completion" and completion["model"] == "m-2"
    assert completion["choices"][0]["message"] == {"role": "assistant", "content": "plain"}
    assert server.connections == 1
    conn.close()


def test_serves_a_client_in_another_process(server):
    """How agentcli is tested: the fixture's server answers a subprocess."""
    server.push(text("from afar"))
    code = (
        "import sys, openai;"
        "c = openai.OpenAI(base_url=sys.argv[1], api_key='x', max_retries=0);"
        "msgs = [{'role': 'user', 'content': 'hi'}];"
        "r = c.chat.completions.create(model='scripted', messages=msgs);"
        "print(r.choices[0].message.content)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, server.base_url], capture_output=True, text=True, timeout=30
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "from afar"
    assert server.requests[0]["messages"] == [{"role": "user", "content": "hi"}]
