"""Which thread a local session drives, shared by the session's parts (the run loop, the
review answers): its id, its index row, the folder its tools work in."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agentcli.thread_rows import ThreadRow


@dataclass
class OpenThread:
    thread_id: str
    workspace: Path
    explicit_workspace: bool  # --workspace was given: the thread's recorded one is not used
    row: ThreadRow | None = None  # None until the thread's first message
    soft_ctrl_c: bool = False  # chat: Ctrl-C stops the run and returns to the prompt
    # chat: a confined command's request to a host not listed is a question for the person
    asks_egress: bool = False

    @property
    def turn(self) -> int:
        return self.row.turns if self.row else 0
