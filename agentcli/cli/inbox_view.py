"""What `agentcli review` prints of the inbox: the pending calls as lines or JSON, each
named as a decision names it, CALL_ID@DIGEST (session/call_digests.py); in lines, each
thread's header once, above its calls."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentcli.session.inbox import WaitingCall


def show_inbox(calls: list[WaitingCall], as_json: bool) -> None:
    from agentcli.config.durations import say_duration
    from agentcli.terminal_text import dumps, line

    if as_json:
        print(dumps([call.as_dict() for call in calls], indent=2))
        return
    if not calls:
        print("no calls awaiting review")
    header = None
    for call in calls:
        waited = say_duration(call.waited_s) if call.waited_s is not None else "?"
        marks = "".join(
            f"  ({note})"
            for note, on in (
                (f"rerun: {call.rerun}", call.rerun),
                ("expired", call.expired),
                ("open in another process", call.busy),
            )
            if on
        )
        if header != (header := call.thread_id):  # a thread's calls come together
            print(line(f"{call.thread_id}  {call.title}  {call.workspace}"))
        name = f"{call.call_id}@{call.digest}"
        print(line(f"  {name}  {call.tool}  {call.subject}  waiting {waited}{marks}"))
