"""Big outputs (issue 13, item 14): a long answer or a big tool-call argument arrives intact,
in time that grows with its size, not with its square.

No timing is asserted here (bench/bigoutput.py has the figures). Instead: the installed
command delivers a 1 MB `write_file` argument and a 5 MB answer byte for byte; the streamed
answer is gathered into the message langchain's chunk addition would give, on many random
chunkings; and the work is counted, so that a return to quadratic gathering fails.
"""

from __future__ import annotations

import difflib
import functools
import json
import operator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, AIMessageChunk, message_chunk_to_message

import agentcli.agent.model.answer_stream
import agentcli.ui.call_preview
from agentcli.agent.answer_streaming import ask
from agentcli.agent.model.answer_stream import REPAIR_LIMIT, Accumulator
from agentcli.agent.state import RunContext
from agentcli.ui.call_preview import preview
from tests.helpers.scripted_server import text, tool_calls

KB = 1000
MB = 1000 * KB
LINE = 'line {:06d}: "quoted", a back\\slash, a tab\t, café, ✓, 😀 and plain words\n'


def lines(size: int) -> str:
    out, total, i = [], 0, 0
    while total < size:
        out.append(LINE.format(i))
        total += len(out[-1])
        i += 1
    return "".join(out)[:size]


# contents that must arrive byte for byte: (name, size, text maker, fragment size). JSON
# escapes (\", \\, \t, \u00e9, surrogate pairs for 😀) are cut across fragments.
PAYLOADS = [
    ("1 MB of lines", MB, lines, 64),
    ("200 KB on one line", 200 * KB, lambda n: ('é😀\\"x' * n)[:n], 37),
    ("50 KB in 4-character fragments", 50 * KB, lines, 4),
    ("200 KB of JSON-looking text", 200 * KB, lambda n: (json.dumps({"a": [1, "}"]}) * n)[:n], 100),
]
# answers that must come out whole: (size, output format, fragment size)
PAYLOADS_ANSWER = [(5 * MB, "json", 100), (MB, "jsonl", 64), (MB, "text", 64)]


@pytest.mark.parametrize(("name", "size", "make", "piece"), PAYLOADS, ids=[p[0] for p in PAYLOADS])
def test_a_big_write_file_argument_arrives_intact(agent, name, size, make, piece) -> None:
    content = make(size)
    agent.server.push(
        tool_calls(("write_file", {"path": "big.txt", "content": content}), piece=piece),
        text("written"),
    )
    done = agent.run("run", "write it", "-o", "json", "--auto-approve", timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert result["status"] == "done" and result["final"] == "written"
    assert (agent.workspace / "big.txt").read_bytes() == content.encode()
    # the model was told it worked, with the size written
    told = agent.server.requests[1]["messages"][-1]["content"]
    assert f"{len(content.encode())} bytes" in told


@pytest.mark.parametrize(("size", "output", "piece"), PAYLOADS_ANSWER)
def test_a_big_answer_arrives_intact(agent, size, output, piece) -> None:
    answer = lines(size)
    if output == "text":  # Rich writes a tab as spaces up to its next tab stop
        answer = answer.replace("\t", " ")
    agent.server.push(text(answer, piece=piece))
    done = agent.run("run", "say a lot", "-o", output, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    if output == "json":
        assert json.loads(done.stdout)["final"] == answer
    elif output == "jsonl":
        events = [json.loads(line) for line in done.stdout.splitlines()]
        streamed = "".join(e["text"] for e in events if e["type"] == "text_delta")
        assert streamed == answer
        assert [e["final"] for e in events if e["type"] == "done"] == [answer]
    else:
        assert done.stdout.rstrip("\n") == answer.rstrip("\n")


def test_a_big_argument_that_is_not_json_is_refused_not_repaired(agent) -> None:
    """Cut off mid-string (as at the model's token limit): langchain would repair it into a
    call that writes part of the content. Over REPAIR_LIMIT it is an invalid call."""
    cut = json.dumps({"path": "cut.txt", "content": lines(300 * KB)})[: 200 * KB]
    agent.server.push(tool_calls(("write_file", cut), piece=64), text("sorry"))
    done = agent.run("run", "write it", "-o", "json", "--auto-approve", timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert not (agent.workspace / "cut.txt").exists()
    told = agent.server.requests[1]["messages"][-1]["content"]
    assert "not valid JSON" in told


# --- the accumulator against langchain's chunk addition ------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
valid_args = st.dictionaries(st.text(max_size=6), json_values, max_size=4).map(json.dumps)
# not JSON, cut off, not an object, or empty: langchain repairs some, refuses others
odd_args = st.one_of(
    valid_args.flatmap(lambda s: st.integers(0, len(s)).map(lambda i: s[:i])),
    st.text(max_size=30),
    st.sampled_from(['{"a": 1', "[1, 2]", "null", "", '{"a": "b\\', '{"a": tru', "}{", '"x"']),
)


@st.composite
def streams(draw: st.DrawFn) -> list[AIMessageChunk]:
    """Chunks as ChatOpenAI streams them, split at random points: text, several calls
    interleaved by index (each with a first fragment holding its id and name), odd
    fragments (repeated names and ids, no index), usage and metadata, langchain's run id."""
    pieces: list[list[dict[str, Any]]] = []
    ncalls = draw(st.integers(0, 4))
    for index in range(ncalls):
        args = draw(st.one_of(valid_args, odd_args))
        cuts = sorted(draw(st.lists(st.integers(0, len(args)), max_size=6)))
        parts = [args[a:b] for a, b in zip([0, *cuts], [*cuts, len(args)], strict=True)]
        name, id_ = draw(st.sampled_from(["read_file", "write_file", "x"])), f"call_{index}"
        frags = [{"index": index, "id": id_, "name": name, "args": parts[0]}]
        for part in parts[1:]:
            frag = {"index": index, "id": None, "name": None, "args": part}
            if draw(st.integers(0, 9)) == 0:  # some servers repeat the name or the id
                frag[draw(st.sampled_from(["name", "id"]))] = draw(st.sampled_from([name, id_]))
            frags.append(frag)
        pieces.append(frags)
    if draw(st.booleans()):  # a call whose fragments have no index: never merged
        pieces.append([{"index": None, "id": "loose", "name": "x", "args": draw(odd_args)}])
    words = draw(st.lists(st.text(max_size=8), max_size=8))
    # interleave: any order that keeps the text's pieces, and each call's, in their order
    queues: dict[Any, list[tuple[str, Any]]] = {"text": [("text", w) for w in words]}
    for n, frags in enumerate(pieces):
        queues[n] = [("call", f) for f in frags]
    order = draw(st.permutations([label for label, queue in queues.items() for _ in queue]))
    run_id = "lc_run--" + draw(st.sampled_from(["a", "b"]))
    chunks = [AIMessageChunk(content="", id=run_id, response_metadata={"model_provider": "openai"})]
    for label in order:
        kind, item = queues[label].pop(0)
        if kind == "text":
            chunks.append(AIMessageChunk(content=item, id=run_id))
        else:
            chunks.append(AIMessageChunk(content="", id=run_id, tool_call_chunks=[item]))
    finish = {"finish_reason": "tool_calls" if ncalls else "stop", "model_name": "m"}
    chunks.append(AIMessageChunk(content="", id=run_id, response_metadata=finish))
    if draw(st.booleans()):
        usage = {"input_tokens": 3, "output_tokens": 4, "total_tokens": 7}
        chunks.append(AIMessageChunk(content="", id=run_id, usage_metadata=usage))
    if draw(st.booleans()):  # a provider's own id wins over langchain's
        chunks.append(AIMessageChunk(content="", id="chatcmpl-1"))
    return chunks


def added(chunks: list[AIMessageChunk]) -> Any:
    """What agentcli did before: add the chunks one by one, then make a message; with the one
    deliberate difference (answer_stream.py): a fragment that repeats a call's whole name so
    far is a server's repeat, not more of the name, so it adds nothing to the name."""
    return message_chunk_to_message(functools.reduce(operator.add, _repeats_dropped(chunks)))


def _repeats_dropped(chunks: list[AIMessageChunk]) -> list[AIMessageChunk]:
    """The chunks with each whole-name repeat removed, the fragments grouped into calls as
    langchain's merge_lists groups them: a fragment joins the first call with its index and no
    other id (fragments of the first chunk, or without an index, are calls of their own)."""
    calls: dict[Any, list[list[Any]]] = {}  # index -> [[id, name so far], ...]
    out = []
    for number, chunk in enumerate(chunks):
        fragments = []
        for fragment in chunk.tool_call_chunks:
            fragment = dict(fragment)
            index, id_, name = fragment.get("index"), fragment.get("id"), fragment.get("name")
            mergeable = isinstance(index, int) or (isinstance(index, str) and index[:3] == "lc_")
            joined = None
            if number and mergeable:
                joined = next(
                    (
                        c
                        for c in calls.get(index, ())
                        if c[0] in (None, "") or id_ in (None, "") or c[0] == id_
                    ),
                    None,
                )
            if joined is None:
                calls.setdefault(index, []).append([id_, name or ""])
            else:
                if name and name == joined[1]:
                    fragment["name"] = None
                elif name:
                    joined[1] += name
                if id_ not in (None, "") and joined[0] in (None, ""):
                    joined[0] = id_
            fragments.append(fragment)
        if fragments:
            chunk = AIMessageChunk(
                content=chunk.content,
                id=chunk.id,
                tool_call_chunks=fragments,
                response_metadata=chunk.response_metadata,
                usage_metadata=chunk.usage_metadata,
            )
        out.append(chunk)
    return out


def gathered(chunks: list[AIMessageChunk]) -> AIMessage:
    acc = Accumulator()
    for chunk in chunks:
        acc.add(chunk)
    return acc.message()


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(streams())
def test_the_accumulator_builds_what_chunk_addition_builds(chunks) -> None:
    ours, theirs = gathered(chunks), added(chunks)
    assert ours == theirs
    assert ours.tool_calls == theirs.tool_calls
    assert ours.invalid_tool_calls == theirs.invalid_tool_calls


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 3),
            st.sampled_from(["a", "b", None]),
            st.sampled_from(["n", None]),
            st.text(max_size=5),
        ),
        max_size=12,
    )
)
def test_fragments_merge_as_langchain_merges_them(raw) -> None:
    """Any fragments, ids that agree or not, names or none: the same calls come out."""
    chunks = [AIMessageChunk(content="")] + [
        AIMessageChunk(
            content="",
            tool_call_chunks=[
                {"index": i, "id": id_, "name": name, "args": args, "type": "tool_call_chunk"}
            ],
        )
        for i, id_, name, args in raw
    ]
    assert gathered(chunks) == added(chunks)


def test_one_chunk_is_the_whole_message() -> None:
    chunk = AIMessageChunk(
        content="hi",
        id="x",
        tool_call_chunks=[{"index": 0, "id": "c", "name": "f", "args": '{"a": 1}'}],
    )
    assert gathered([chunk]) == added([chunk])


def test_arguments_over_the_repair_limit_are_not_repaired() -> None:
    small = '{"path": "a", "content": "cut'
    big = '{"path": "a", "content": "' + "x" * REPAIR_LIMIT
    for raw, repaired in ((small, True), (big, False)):
        chunks = [
            AIMessageChunk(
                content="",
                tool_call_chunks=[{"index": 0, "id": "c", "name": "write_file", "args": raw}],
            )
        ]
        message = gathered(chunks)
        assert bool(message.tool_calls) is repaired
        assert bool(message.invalid_tool_calls) is not repaired
        if not repaired:
            assert message.invalid_tool_calls[0]["args"] == raw


# --- the work is counted: linear, whatever the clock says ------------------------------------


class Streaming:
    """A chat model's stream() and nothing else: the chunks given."""

    def __init__(self, chunks: list[AIMessageChunk]) -> None:
        self.chunks = chunks

    def stream(self, messages: Any) -> Any:
        return iter(self.chunks)


def big_stream(calls: int, fragments: int) -> tuple[list[AIMessageChunk], list[str]]:
    """`calls` calls, their argument fragments interleaved, plus text between them."""
    args = [json.dumps({"content": f"{i}:" + 'é"\\x' * fragments}) for i in range(calls)]
    size = max(len(a) for a in args) // fragments + 1
    chunks = [
        AIMessageChunk(
            content="",
            tool_call_chunks=[{"index": i, "id": f"c{i}", "name": "write_file", "args": ""}],
        )
        for i in range(calls)
    ]
    for start in range(0, max(len(a) for a in args), size):
        chunks.append(AIMessageChunk(content="words "))
        chunks += [
            AIMessageChunk(
                content="",
                tool_call_chunks=[
                    {"index": i, "id": None, "name": None, "args": a[start : start + size]}
                ],
            )
            for i, a in enumerate(args)
        ]
    return chunks, args


def test_ask_parses_each_call_once_and_never_adds_chunks(monkeypatch, tmp_path: Path) -> None:
    chunks, args = big_stream(calls=3, fragments=2000)
    parsed: list[int] = []
    real_loads, real_partial = (
        agentcli.agent.model.answer_stream.json.loads,
        agentcli.agent.model.answer_stream.parse_partial_json,
    )

    def loads(s: str, **kw: Any) -> Any:
        parsed.append(len(s))
        return real_loads(s, **kw)

    def partial(s: str, **kw: Any) -> Any:
        parsed.append(len(s))
        return real_partial(s, **kw)

    def no_adding(self: Any, other: Any) -> Any:
        raise AssertionError("chunks added one by one: time in the square of the answer")

    monkeypatch.setattr(agentcli.agent.model.answer_stream.json, "loads", loads)
    monkeypatch.setattr(agentcli.agent.model.answer_stream, "parse_partial_json", partial)
    monkeypatch.setattr(AIMessageChunk, "__add__", no_adding)
    tokens: list[str] = []
    reply = ask(
        Streaming(chunks),
        [],
        lambda part: tokens.append(part["token"]) if "token" in part else None,  # not progress
        RunContext(workspace=tmp_path),
    )
    assert isinstance(reply, AIMessage)
    assert sorted(parsed) == sorted(len(a) for a in args)  # each call's JSON, once, whole
    assert [c["args"] for c in reply.tool_calls] == [json.loads(a) for a in args]
    assert reply.content == "".join(tokens) == "".join(str(c.content) for c in chunks)


def test_the_accumulator_keeps_the_pieces_until_the_end() -> None:
    """Adding a fragment must not copy what came before (that is what made streaming
    quadratic): until message() the text and each call's arguments are lists of pieces."""
    chunks, args = big_stream(calls=2, fragments=3000)
    acc = Accumulator()
    for chunk in chunks:
        acc.add(chunk)
    per_call = [
        [p for c in chunks for f in c.tool_call_chunks if f["index"] == i for p in [f["args"]]]
        for i in range(2)
    ]
    assert [call.args for call in acc.calls] == per_call  # the very pieces, not joined
    assert acc.content == [c.content for c in chunks]
    assert [c["args"] for c in acc.message().tool_calls] == [json.loads(a) for a in args]


# --- the review's preview of a big write -----------------------------------------------------


def test_a_big_overwrite_is_previewed_without_difflib(monkeypatch, tmp_path: Path) -> None:
    old = "".join(f"old {i}\n" for i in range(5000))
    new = "".join(f"new {i}\n" for i in range(5000))
    (tmp_path / "a.txt").write_text("keep\n" + old + "end\n")

    def matcher(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("difflib matched 5,000 x 5,000 lines")

    monkeypatch.setattr(agentcli.ui.call_preview.difflib, "SequenceMatcher", matcher)
    shown = preview("write_file", {"path": "a.txt", "content": "keep\n" + new + "end\n"}, tmp_path)
    assert shown.kind == "diff"
    body = shown.text.splitlines()
    assert body[:4] == ["--- a/a.txt", "+++ b/a.txt", "@@ -1,5002 +1,5002 @@", " keep"]
    assert body[4] == "-old 0" and "more lines" in body[-1]


def test_the_bounded_diff_is_a_true_diff() -> None:
    """Below the limit difflib's own; above it one hunk, which turns the old into the new."""
    import random

    rng = random.Random(7)
    for _ in range(500):
        a = [rng.choice("abc") + "\n" for _ in range(rng.randint(0, 9))]
        b = [rng.choice("abc") + "\n" for _ in range(rng.randint(0, 9))]
        if rng.random() < 0.5:
            b = a[: rng.randint(0, len(a))] + b + a[rng.randint(0, len(a)) :]
        assert agentcli.ui.call_preview._unified_diff(a, b, "x", "y") == list(
            difflib.unified_diff(a, b, "x", "y")
        )
        hunk = bounded(a, b)
        assert apply(a, hunk) == b


def bounded(a: list[str], b: list[str]) -> list[str]:
    limit = agentcli.ui.call_preview.DIFF_WORK
    agentcli.ui.call_preview.DIFF_WORK = -1
    try:
        return agentcli.ui.call_preview._unified_diff(a, b, "x", "y")
    finally:
        agentcli.ui.call_preview.DIFF_WORK = limit


def apply(a: list[str], diff: list[str]) -> list[str]:
    if not diff:
        return a
    header, body = diff[2], diff[3:]
    old_range = header.split()[1][1:].split(",")
    start, length = int(old_range[0]), int(old_range[1]) if len(old_range) > 1 else 1
    start = start - 1 if length else start
    assert a[start : start + length] == [line[1:] for line in body if line[0] in " -"]
    return a[:start] + [line[1:] for line in body if line[0] in " +"] + a[start + length :]
