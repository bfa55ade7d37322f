"""`resume` of a parked thread draws its recap and first review panel at once, from the preview
the thread index keeps (session/review_preview.py), while the session (LangChain, LangGraph,
the tools: about a second of CPU) is made in the background. The key pressed meanwhile is
held, unechoed (ui/review_keys.HeldChoice).

The preview is untrusted and may be stale, so what was drawn is checked before the key is
used: once the session is made, its own state must give the same preview text and no policy
may decide the calls now. If not, the key is discarded, a line says why, and the recap and
the review are drawn again from the thread's state: a key pressed at one panel is never
applied to another.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.text import Text

from agentcli.session.review_preview import Preview, preview_text

if TYPE_CHECKING:
    from agentcli.cli.early_prompt import Starting
    from agentcli.events import ReviewRequest
    from agentcli.session.thread_session import ThreadSession
    from agentcli.ui.review_keys import HeldChoice

NOT_HELD = (
    "what was drawn above is not what the thread waits on now (it changed since it was"
    " saved, or a policy decides it): the thread as it stands follows; no key pressed above"
    " is used"
)


@dataclass
class EarlyReview:
    text: str  # the preview as the index keeps it: what the session's state must give
    preview: Preview
    held: HeldChoice | None = None  # the first panel's choice, once drawn
    workspace: Path | None = None  # what the first panel's diff was read from

    def recap(self, console: Console, thread_id: str) -> bool:
        """Draw the recap; False if the preview cannot be drawn (it is not what agentcli
        writes: the thread is then drawn from its state)."""
        from agentcli.ui.recap import recap_of

        markdown = console.is_terminal and not console.no_color  # as the chat's answers show
        try:
            lines = recap_of(self.preview.earlier, self.preview.entries, thread_id, markdown)
            for line in lines:
                console.print(line)
        except Exception:  # a forged preview of the wrong shape: drawn from the state instead
            return False
        return True

    def panel(self, console: Console, workspace: Path) -> bool:
        """Draw the first panel and hold its choice; False as for `recap`."""
        from agentcli.ui.review_prompt import draw_first

        self.workspace = workspace.resolve()
        try:
            self.held = draw_first(console, self.preview.calls, workspace)
        except Exception:  # as in recap
            return False
        return True

    def holds(self, session: ThreadSession, review: ReviewRequest | None) -> bool:
        """Whether the session, from the thread's own state, would draw what was drawn and
        ask the person about it: the same text, the diff read from the same workspace (the
        index's row is read again to make the session: it may have changed since)."""
        if review is None or preview_text(session.values(), review) != self.text:
            return False
        if session.workspace is None or session.workspace.resolve() != self.workspace:
            return False
        return session.policy_decisions(review) is None

    def drop(self, console: Console) -> None:
        """It did not hold: the key pressed at it is discarded, and the person told."""
        self.release()
        console.print(Text(NOT_HELD, style="yellow"))

    def release(self) -> None:
        """The terminal as it was, unless the first choice was read (it then was)."""
        if self.held is not None:
            self.held.drop()
            self.held = None


def early_review(starting: Starting, message: str | None) -> EarlyReview | None:
    """The review to draw before the session is made, if there is one to draw: a preview
    kept for the thread, at a terminal, with no first message (it would decide the review)
    and no flag that decides calls (--approve, --deny, -y: the policy answers, no panel)."""
    from agentcli.ui.review_keys import at_terminal

    if starting.preview is None or message is not None or not at_terminal():
        return None
    preview = Preview.read(starting.preview)
    return None if preview is None else EarlyReview(starting.preview, preview)
