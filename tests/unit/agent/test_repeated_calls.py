"""What counts as the same call again (agent/repeated_calls.py), on message lists as the
thread keeps them."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from agentcli.agent.repeated_calls import repeats, stopped_by, with_note

_ids = iter(range(1_000_000))


def step(name: str, args: dict[str, Any], result: str, status: str = "success") -> list:
    call_id = f"c{next(_ids)}"
    call = {"name": name, "args": args, "id": call_id, "type": "tool_call"}
    return [
        AIMessage("", tool_calls=[call]),
        ToolMessage(result, tool_call_id=call_id, status=status),
    ]


def turn(*steps: list) -> list[BaseMessage]:
    return [HumanMessage("say hello"), *(m for s in steps for m in s)]


LIST = ("list_dir", {"path": "."}, ".: a.txt")


def test_the_same_read_with_the_same_result_counts_until_the_limit() -> None:
    messages = turn(step(*LIST), step("search_files", {"pattern": "x"}, "none"), step(*LIST))
    assert repeats(messages, 3) == []
    messages += step(*LIST)
    (found,) = repeats(messages, 3)
    assert (found.name, found.times) == ("list_dir", 3)
    assert stopped_by([found]) is None  # told first
    assert found.said() == 'list_dir {"path": "."} 3 times'


def test_a_different_result_or_different_arguments_are_not_the_same_call() -> None:
    messages = turn(step(*LIST), step("list_dir", {"path": "."}, ".: a.txt b.txt"), step(*LIST))
    # the first and third are the same call (the folder is as it was); the second is not
    assert [(r.call_id, r.times) for r in repeats(messages, 2)] == [(messages[6].tool_call_id, 2)]
    assert repeats(messages, 3) == []
    assert repeats(turn(*(step("read_file", {"path": f"{i}"}, "x") for i in range(5))), 2) == []


def test_arguments_are_compared_whatever_their_keys_order() -> None:
    a = step("search_files", {"pattern": "x", "path": "."}, "none")
    b = step("search_files", {"path": ".", "pattern": "x"}, "none")
    assert len(repeats(turn(a, b), 2)) == 1


def test_a_failing_call_is_the_same_whatever_its_error_says() -> None:
    fails = [step("read_file", {"path": "m"}, f"Error at {i}", "error") for i in range(3)]
    assert [r.times for r in repeats(turn(*fails), 3)] == [3]


def test_a_call_that_may_change_the_workspace_starts_the_counts_again() -> None:
    test = ("shell", {"command": "pytest"}, "1 failed", "error")
    steps = []
    for i in range(5):
        steps += [step("edit_file", {"path": "f.py", "old_text": f"{i}", "new_text": "x"}, "ok")]
        steps += [step(*test)]
    assert repeats(turn(*steps), 3) == []
    # the same command with nothing in between is a loop, though a shell call may write
    assert [r.times for r in repeats(turn(*(step(*test) for _ in range(4))), 3)] == [3, 4]


def test_a_new_message_starts_a_new_count_and_zero_is_off() -> None:
    old = turn(*(step(*LIST) for _ in range(3)))
    assert len(repeats(old, 3)) == 1 and repeats(old, 0) == []
    assert repeats([*old, HumanMessage("again"), *step(*LIST)], 3) == []


def test_the_model_is_told_once_then_the_next_repeat_stops_the_turn() -> None:
    messages = turn(*(step(*LIST) for _ in range(3)))
    found = repeats(messages, 3)
    noted = with_note(messages, found)
    told = [m for m in noted if isinstance(m, ToolMessage) and "same call" in m.text]
    assert len(told) == 1 and told[0].tool_call_id == found[0].call_id
    assert all("same call" not in m.text for m in messages)  # the thread's copy is as it was
    messages += step(*LIST)
    looped = stopped_by(repeats(messages, 3))
    assert looped is not None and looped.times == 4


def test_a_call_waiting_for_its_result_is_not_counted() -> None:
    call = {"name": "list_dir", "args": {"path": "."}, "id": "w", "type": "tool_call"}
    messages = [*turn(step(*LIST), step(*LIST)), AIMessage("", tool_calls=[call])]
    assert repeats(messages, 3) == []
