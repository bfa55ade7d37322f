"""Being told in chat that a review waits: the bell and a desktop notification once it has
waited `[notify] after` seconds, and the notify command with the pending calls (each named
CALL_ID@DIGEST, as `agentcli review` names it). What the command said went wrong is shown
once the review is answered, not over it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console

from agentcli.events import ReviewRequest
from agentcli.ui.safe_text import styled

if TYPE_CHECKING:
    from agentcli.session.thread_session import ThreadSession
    from agentcli.ui.attention import Alarm


class ReviewAlarm:
    def __init__(self, console: Console) -> None:
        self.console = console
        self.problems: list[str] = []  # the notify command's failures, from its thread

    def start(self, session: ThreadSession, review: ReviewRequest) -> Alarm:
        """The alarm for this review (a context: it rings unless the review ends first).
        The document is made here: the timer's thread only runs the command."""
        from agentcli.session.call_digests import with_digests
        from agentcli.session.notify import NotifyEvent, notify, now, pending_document
        from agentcli.ui.attention import Alarm, review_text

        settings = session.settings
        also = None
        if settings.notify_command.strip() or settings.hooks_notification:
            pending = with_digests(session.thread_id, session.values(), review.action_requests)
            document = pending_document(NotifyEvent.WAITING, session, pending, now())

            def also() -> None:
                if problem := notify(settings, document):
                    self.problems.append(problem)

        body = review_text(review.action_requests)
        return Alarm(settings.notify_after, body, self.console.file, also)

    def told(self) -> None:
        """Say why the notify command failed, if it did, now that the prompt is done."""
        while self.problems:
            self.console.print(styled(("warning: ", "yellow"), self.problems.pop(0)))
