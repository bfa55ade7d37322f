"""Counted nouns: the one helper every count in a message goes through."""

from __future__ import annotations

from agentcli_tools.plurals import counted, plural


def test_one_is_singular_and_every_other_count_plural() -> None:
    assert [counted(n, "line") for n in (0, 1, 2)] == ["0 lines", "1 line", "2 lines"]
    assert counted(1, "entry") == "1 entry" and counted(3, "entry") == "3 entries"
    assert counted(2, "match") == "2 matches" and plural("call", 1) == "call"
    assert counted(1204, "byte", grouped=True) == "1,204 bytes"
