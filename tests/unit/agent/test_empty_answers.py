"""An answer with nothing in it (agent/model/empty_answers.py): asked once more, then an error."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage

from agentcli.agent.model.empty_answers import is_empty, unless_empty
from agentcli.errors import ModelError
from agentcli.threads.stopped_answer import INTERRUPTED

CALL = {"name": "list_dir", "args": {}, "id": "c1", "type": "tool_call"}


def test_what_is_an_empty_answer() -> None:
    assert is_empty(AIMessage("")) and is_empty(AIMessage(" \n\t"))
    assert not is_empty(AIMessage("hi"))
    assert not is_empty(AIMessage("", tool_calls=[CALL]))
    bad = {"name": "x", "args": "{", "id": "c2", "error": "bad", "type": "invalid_tool_call"}
    assert not is_empty(AIMessage("", invalid_tool_calls=[bad]))
    # cut off or stopped: kept and reported as such, not asked again
    assert not is_empty(AIMessage("", response_metadata={"finish_reason": "length"}))
    assert not is_empty(AIMessage("", response_metadata={INTERRUPTED: True}))


def test_an_empty_answer_is_asked_once_more_then_fails() -> None:
    replies = [AIMessage(""), AIMessage("Hello!")]
    written: list[dict] = []
    assert unless_empty(lambda: replies.pop(0), written.append).text == "Hello!"
    assert [w["retry"]["change"] for w in written] == ["asking once more"]
    replies = [AIMessage(""), AIMessage("")]
    with pytest.raises(ModelError, match="empty .*twice"):
        unless_empty(lambda: replies.pop(0), written.append)
    assert replies == []  # two requests, no third
