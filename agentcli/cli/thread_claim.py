"""`run` takes its thread before LangChain loads (which takes seconds): a new thread is
indexed as running at once, so `threads list` in another process shows it from the run's
first moment, and a thread named with --thread or --last is held at once, so a second run
on it, or `threads delete`, is refused in one line while this one starts and runs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agentcli.cli.common_options import Common
from agentcli.cli.session_opening import one_of
from agentcli.config import Settings

if TYPE_CHECKING:
    from agentcli.session.stores import Store
    from agentcli.thread_rows import ThreadRow


@dataclass
class Claim:
    store: Store
    thread_id: str
    new: bool  # claimed for this run: removed again if it ends before its first message
    row: ThreadRow | None = None  # the thread named, as its index row was when held

    def unclaim(self) -> None:
        if self.new:
            self.store.unclaim(self.thread_id)


def claim(common: Common, settings: Settings, thread: str | None, last: bool) -> Claim:
    """Hold the thread named (ThreadBusy at once if another process has it), or claim a
    new one, indexed as running."""
    from agentcli.thread_rows import new_thread_id

    one_of(thread, last)
    store = common.store(settings)
    workspace = (common.checked_workspace() or Path.cwd()).resolve()
    if thread or last:
        row = store.resolve(thread) if thread else store.latest(str(workspace))
        store.hold(row.thread_id)
        return Claim(store, row.thread_id, new=False, row=row)
    thread_id = new_thread_id()
    store.claim(thread_id, str(workspace), settings.model)
    return Claim(store, thread_id, new=True)
