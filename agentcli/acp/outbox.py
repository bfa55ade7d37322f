"""What agentcli sends an editor about one session, passed through the session's redactor.

Every update is redacted whole (each string in it: text, titles, arguments, results) just
before it is sent, as the terminal's output is; the answer's text, which comes in pieces, is
held back by the length of the longest secret form so that a secret cut between two pieces
is still found (agentcli_tools.redacted_stream).
"""

from __future__ import annotations

import contextlib
from typing import Any

from acp.helpers import update_agent_message_text, update_agent_thought_text
from agentcli_tools.redacted_stream import RedactedStream


class Outbox:
    """Sends one session's updates to the editor, redacted."""

    def __init__(self, client: Any, session_id: str, redactor: Any) -> None:
        self.client = client
        self.session_id = session_id
        self.redactor = redactor if redactor else None
        self._held: list[str] = []
        self._text = RedactedStream(self._held.append, self.redactor)

    def clean(self, model: Any) -> Any:
        """A protocol object (an update, a permission request's call or choice) with every
        string in it redacted."""
        if self.redactor is None:
            return model
        data = model.model_dump(by_alias=True, exclude_none=True)
        return type(model).model_validate(self.redactor.value(data))

    async def send(self, update: Any) -> None:
        """One session/update, every string in it redacted; nothing once the editor is
        gone (the run still ends as it would, its calls left as they are)."""
        with contextlib.suppress(ConnectionError):
            await self.client.session_update(session_id=self.session_id, update=self.clean(update))

    async def text(self, piece: str) -> None:
        """A piece of the answer, sent once no secret can straddle its end."""
        self._text.add(piece.encode("utf-8", "surrogatepass"))
        await self._drain()

    async def end_text(self) -> None:
        """The answer so far is complete: what was held back goes now."""
        self._text.flush()
        await self._drain()

    async def note(self, text: str) -> None:
        """agentcli's own words about the run (a retry, a hook's note, why it stopped),
        kept apart from the model's answer."""
        await self.end_text()
        await self.send(update_agent_thought_text(text))

    async def _drain(self) -> None:
        shown, self._held[:] = "".join(self._held), []
        if shown:
            await self.send(update_agent_message_text(shown))
