"""Output that arrives in chunks (a command's live output, an MCP server's stderr going to
its log), redacted as it goes: what is passed on is what redacting the whole would give."""

from __future__ import annotations

from collections.abc import Callable

from .redaction import Redactor


class RedactedStream:
    """A stream of output chunks, passed on redacted. A secret may be cut between two
    chunks, so the last ``longest - 1`` characters wait for the next chunk (or the end)."""

    def __init__(self, emit: Callable[[str], None], redact: Redactor | None) -> None:
        self.emit, self.redact = emit, redact
        self.hold = max(redact.longest - 1, 0) if redact else 0
        self.pending = ""

    def add(self, chunk: bytes) -> None:
        self.pending += chunk.decode("utf-8", errors="replace")
        if self.redact is None:
            self.flush()
            return
        shown, cut = self.redact.head(self.pending, len(self.pending) - self.hold)
        if cut > 0:
            self.emit(shown)
            self.pending = self.pending[cut:]

    def flush(self) -> None:
        if self.pending:
            self.emit(self.redact(self.pending) if self.redact else self.pending)
            self.pending = ""
