"""A LangGraph server's thread as a row of `threads list --server`: any client writes its
metadata, so odd values are read, never a crash; a thread no agentcli client indexed gets its
title and count from its messages."""

from __future__ import annotations

from typing import Any

import pytest

from agentcli.threads.on_server import MAX_TITLE_CHARS, _row

THREAD = {"thread_id": "t", "status": "idle"}


@pytest.mark.parametrize("count", ["abc", "1e999", None, [1], {"a": 1}, True, -5, 1e300, "  "])
def test_counts_any_client_wrote_are_read_without_a_crash(count: Any) -> None:
    row = _row({**THREAD, "metadata": {"messages": count, "turns": count, "title": "x" * 10**6}})
    assert row.messages == row.turns == 0 or count == 1e300
    assert len(row.title) == MAX_TITLE_CHARS


@pytest.mark.parametrize(
    ("messages", "title"),
    [
        (
            [{"type": "human", "content": "  save\n my   notes "}, {"type": "ai", "content": "ok"}],
            "save my notes",
        ),
        (
            [
                {"type": "system", "content": "s"},
                {"type": "human", "content": [{"type": "text", "text": "hi"}, "there"]},
            ],
            "hi there",
        ),
        ([{"type": "human", "content": "é" * 10**6}], "é" * 60),
        ([{"type": "human", "content": ""}], "(empty)"),
        (["junk", 5, None], "(untitled)"),
        ([], "(untitled)"),
    ],
)
def test_a_thread_made_elsewhere_is_titled_and_counted_from_its_messages(
    messages: list[Any], title: str
) -> None:
    row = _row({**THREAD, "metadata": {"graph_id": "agent"}}, messages)
    assert (row.title, row.messages) == (title, len(messages))
