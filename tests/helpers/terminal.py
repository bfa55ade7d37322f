"""What agentcli shows a person, as the end-to-end tests read it: the chat's prompts (pexpect
patterns), leaving a chat, an error's one line, a line of `doctor`'s report."""

from __future__ import annotations

import pexpect

PROMPT = "you>"  # the chat's message prompt
CHOICE = r"\[a\]pprove.*\[q\]uit >"  # the review's choice line
EDITED_CHOICE = r"\[a\]pprove edited.*\[q\]uit >"  # the choice for an edited call


def leave(child: pexpect.spawn) -> str:
    """`/exit` at the next prompt; the thread id from the resume hint."""
    child.expect(PROMPT)
    child.sendline("/exit")
    return ended(child)


def ended(child: pexpect.spawn, status: int = 0) -> str:
    """Wait for the resume hint and the exit; the thread id from the hint."""
    child.expect(r"agentcli resume ([\w-]+)")
    thread = child.match.group(1)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == status or child.signalstatus
    return thread


def one_line(stderr: str) -> str:
    """The one line an error is: no traceback, no usage block."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr and "Usage:" not in stderr
    return lines[0]


def doctor_line(output: str, check: str) -> str:
    """The one line of `agentcli doctor`'s report for a check ("model server", "API key")."""
    found = [text for text in output.splitlines() if f" {check}:" in text]
    assert len(found) == 1, output
    return found[0]
