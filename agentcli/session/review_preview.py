"""What a parked thread's review shows, kept in the thread index so that `resume` can draw it
before LangChain and LangGraph have loaded (the session takes about a second of CPU to make;
the recap and the panel need none of it).

A preview is the recap's last exchanges and the calls waiting, as JSON text: the run that
parks the thread writes it (session/run_loop.py), any new status drops it (Store.update).
It is untrusted: anyone who can write the store can write it, and it can be stale (a run
that crashed). So it is only drawn. A key pressed at a drawn preview applies only once the
session, made from the thread's own checkpoint, makes the same text from its state and asks
about the same calls (no policy decides them now); otherwise the key is dropped and the
review is drawn again from the state (cli/early_review.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from agentcli.events import ReviewRequest

EXCHANGES = 3  # the recap shows a user message and all that followed it, this many times


def recent(entries: list[dict[str, Any]]) -> tuple[int, list[dict[str, Any]]]:
    """The recap's part of a transcript (session/transcript.py entries): how many exchanges
    came before it, and its entries."""
    starts = [index for index, entry in enumerate(entries) if entry["role"] == "user"]
    first = starts[-EXCHANGES] if len(starts) > EXCHANGES else 0
    return max(len(starts) - EXCHANGES, 0), entries[first:]


@dataclass(frozen=True)
class Preview:
    """A review preview read back: what the recap and the first panel draw."""

    earlier: int
    entries: list[dict[str, Any]]
    calls: list[dict[str, Any]]

    @classmethod
    def read(cls, text: str | None) -> Preview | None:
        """The preview in `text`, or None when there is none or it is not one (written by
        another version, or by hand): then nothing is drawn early."""
        if not text:
            return None
        try:
            document = json.loads(text)
            earlier, entries, calls = document["earlier"], document["entries"], document["calls"]
        except (ValueError, TypeError, KeyError, RecursionError):
            return None
        fine = isinstance(earlier, int) and isinstance(entries, list) and isinstance(calls, list)
        if not fine or not calls or not all(isinstance(call, dict) for call in calls):
            return None
        if not all(isinstance(entry, dict) and "role" in entry for entry in entries):
            return None
        if not all(isinstance(c.get("name"), str) and "args" in c for c in calls):
            return None
        return cls(earlier, entries, calls)


def preview_text(values: dict[str, Any], review: ReviewRequest | None) -> str | None:
    """The preview of a thread whose state holds `values` and waits on `review`; None when
    there is nothing to draw early (no review, a plan's review, a value JSON cannot hold)."""
    from agentcli.session.transcript import entries  # not on resume's early path

    if review is None or review.plan is not None or not review.action_requests:
        return None
    earlier, shown = recent(entries(values))
    document = {
        "earlier": earlier,
        "entries": [_recapped(entry) for entry in shown],
        "calls": review.action_requests,
    }
    try:  # ASCII: the text is the same bytes in any database, whatever its encoding
        return json.dumps(document, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return None


def _recapped(entry: dict[str, Any]) -> dict[str, Any]:
    """What the recap reads of a transcript entry (ui/recap.py): not the calls' results."""
    calls = [
        {
            "tool": call.get("tool"),
            "args": call.get("args"),
            "status": call.get("status"),
            "decision": None
            if call.get("decision") is None
            else {"decision": call["decision"].get("decision")},
        }
        for call in entry.get("calls", [])
    ]
    return {"role": entry["role"], "text": entry.get("text", ""), "calls": calls}
