"""One token estimate (token_count.py): the window is kept with it, and a streamed answer
whose server sent no usage is counted with it: cl100k_base's count both times, UTF-8 bytes /
4 where the tokenizer cannot be had."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.utils.function_calling import convert_to_openai_tool

from agentcli.agent.model import token_count
from agentcli.agent.model.chat_model import make_model
from agentcli.agent.model.token_count import (
    HEURISTIC,
    TOKENIZER,
    estimate_usage,
    messages_tokens,
    method,
    text_tokens,
    tools_tokens,
)
from agentcli.config import Settings
from tests.helpers.scripted_server import ScriptedServer, text, tool_calls
from tests.helpers.server_profiles import Profile


def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression."""
    return expression


SCHEMAS = [convert_to_openai_tool(calculator)]
SENT = [SystemMessage("You are terse."), HumanMessage("Combien font 6 × 7 ? Réponds en français.")]


def test_text_is_counted_by_a_real_tokenizer() -> None:
    assert method() == TOKENIZER
    assert text_tokens("hello world") == 2  # "hello", " world"
    assert text_tokens(" world" * 50) == 50
    assert text_tokens('{"a": [1, 2, 3]}') == 12  # JSON is denser than bytes/4 says (4)
    assert text_tokens("日本語" * 4) == 16
    assert text_tokens("") == 0
    assert text_tokens("\ud800x") == 2  # a lone surrogate cannot be encoded: by its bytes


def test_without_the_tokenizer_text_is_counted_by_utf8_bytes(monkeypatch) -> None:
    monkeypatch.setattr(token_count, "_tokenizer", lambda: None)
    assert method() == HEURISTIC and "bytes" in HEURISTIC
    assert text_tokens("abcd" * 3) == 3
    assert text_tokens("é" * 8) == 4  # 16 bytes; 8 characters would say 2
    assert text_tokens("日本語" * 4) == 9  # 36 bytes, rounded up from 36/4


def test_a_tokenizer_file_that_is_not_tiktokens_is_not_used(monkeypatch, tmp_path) -> None:
    forged = tmp_path / "tiktoken_ext" / "data"
    forged.mkdir(parents=True)
    (forged / "cl100k_base.tiktoken").write_bytes(b"aGVsbG8= 0\n")  # "hello" as token 0
    monkeypatch.setattr(token_count, "files", lambda _: tmp_path / "tiktoken_ext")
    token_count._tokenizer.cache_clear()
    try:
        assert token_count._tokenizer() is None  # its hash is not cl100k_base's
    finally:
        token_count._tokenizer.cache_clear()


def test_usage_is_the_requests_estimate_plus_the_answers() -> None:
    usage = estimate_usage(SENT, SCHEMAS, "quarante-deux ✓")
    prompt = messages_tokens(SENT) + tools_tokens(SCHEMAS)
    assert usage["input_tokens"] == prompt  # what fit.py estimates before sending it
    assert usage["output_tokens"] == text_tokens("quarante-deux ✓")
    assert usage["total_tokens"] == prompt + usage["output_tokens"]


def streamed(profile: Profile, *replies) -> AIMessage:
    """The answer a model at a scripted server with `profile` streams, merged."""
    with ScriptedServer() as server:
        server.profile = profile
        server.push(*replies)
        chat = make_model(Settings(base_url=server.base_url, model="m")).bind_tools(SCHEMAS)
        chunks = list(chat.stream(SENT))
    merged = chunks[0]
    for chunk in chunks[1:]:
        merged += chunk
    return merged


def test_an_answer_streamed_without_usage_is_counted_by_the_same_estimate() -> None:
    answer = streamed(Profile(no_stream_usage=True), text("Quarante-deux, évidemment. ✓"))
    assert answer.response_metadata.get("usage_estimated") is True
    usage = answer.usage_metadata
    assert usage is not None
    assert usage["input_tokens"] == messages_tokens(SENT) + tools_tokens(SCHEMAS)
    assert usage["output_tokens"] == text_tokens("Quarante-deux, évidemment. ✓")


def test_a_name_repeated_in_every_delta_is_counted_once() -> None:
    args = '{"expression": "6 * 7 + 1 - 1 + 2 - 2"}'
    answer = streamed(
        Profile(no_stream_usage=True, repeat_names=True), tool_calls(("calculator", args))
    )
    assert answer.usage_metadata is not None
    assert answer.usage_metadata["output_tokens"] == text_tokens("calculator" + args)


def test_usage_the_server_sends_is_kept_as_it_is() -> None:
    answer = streamed(Profile(), text("42", usage=(123, 4)))
    assert answer.usage_metadata is not None
    assert answer.usage_metadata["input_tokens"] == 123
    assert "usage_estimated" not in answer.response_metadata
