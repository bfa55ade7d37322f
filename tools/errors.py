"""The built-in tools' errors, free of LangChain: the file walk that the review's diff reads
through (tools/paths.py, fileio.py) raises them too, and a review can be drawn before
LangChain has loaded. The tool wrapper (base.py) hands them to LangChain as tool errors."""

from __future__ import annotations


class ToolError(Exception):
    """A failure the model caused or can fix; its message is written for the model."""


class ToolFailed(ToolError):
    """The tool ran and what it ran failed (a command's non-zero exit, a timeout, a signal):
    its message is the whole result, whose first line already says how it ended, so it is
    not prefixed with "Error:". Raised, not returned, so that the tool message's status is
    "error" and every reader of the thread (the chat, `threads show`, the audit, a plan)
    sees the failure the same way."""
