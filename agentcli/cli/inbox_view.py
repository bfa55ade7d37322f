"""What `agentcli review` prints of the inbox: the pending calls as lines or JSON, and for
a call named that is no longer pending, how it was decided (the same way: one line, exit 0;
otherwise a usage error), so that a decision sent twice changes nothing."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from agentcli.cli.common_options import OutputFormat, warn
from agentcli.errors import UsageError

if TYPE_CHECKING:
    from agentcli.session.inbox import WaitingCall
    from agentcli.session.local import Session


def show_inbox(calls: list[WaitingCall], as_json: bool) -> None:
    from agentcli.config.durations import say_duration
    from agentcli.terminal_text import dumps, line

    if as_json:
        print(dumps([call.as_dict() for call in calls], indent=2))
        return
    if not calls:
        print("no calls awaiting review")
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
        print(line(f"{call.thread_id}  {call.title}  {call.workspace}"))
        print(line(f"  {call.call_id}  {call.tool}  {call.subject}  waiting {waited}{marks}"))


RAN = {"approved", "allowed", "edited", "approved again"}
DONE = {"marked done"}


def already_decided(
    session: Session,
    named: list[tuple[str, str]],
    gone: Sequence[str],
    output: OutputFormat,
    pending: list[str],
    thread_id: str | None,
) -> bool:
    """For calls named that are not pending: each already decided as asked is said in one
    line (nothing changes); any other is a usage error. True when calls named remain."""
    from agentcli.session.inbox import decided

    kinds = dict(named)
    asked = list(dict.fromkeys(call_id for call_id, _ in named))
    notes: list[dict[str, Any]] = []
    for call_id in gone:
        records = decided(session, call_id, thread_id)
        where = f" in thread {thread_id}" if thread_id else " in any thread"
        if not records:
            waiting = f" (pending: {', '.join(pending)})" if pending else ""
            raise UsageError(f"no pending call '{call_id}'{where}{waiting}; nothing changed")
        if len(records) > 1:
            names = ", ".join(r["thread_id"] for r in records)
            raise UsageError(
                f"call {call_id} was decided in several threads ({names}): name one with"
                " --thread ID; nothing changed"
            )
        record = records[0]
        was = f"{record.get('decision')} by {record.get('who')} ({record.get('by')})"
        said = f"call {call_id} of thread {record['thread_id']} was already decided: {was}"
        if _kind_of(str(record.get("decision"))) != kinds[call_id]:
            raise UsageError(f"{said}; nothing changed")
        notes.append({"call_id": call_id, "thread_id": record["thread_id"], "decision": was})
        warn(f"{said}; nothing changed")
    if output is OutputFormat.json and len(notes) == len(asked):
        from agentcli.terminal_text import dumps

        print(dumps({"status": "already_decided", "calls": notes}, indent=2))
    return len(notes) < len(asked)


def _kind_of(decision: str) -> str:
    """The option that asks for what an audit decision did: approve (and edit: it ran),
    done, or reject (it did not run)."""
    return "approve" if decision in RAN else "done" if decision in DONE else "reject"
