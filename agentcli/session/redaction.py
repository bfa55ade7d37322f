"""What a front end prints that may quote a secret (an error, a --debug traceback) passes
the redactor of the latest session, as what a session sends and stores does; before any
session, one of the environment's credentials (agent/outbound.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentcli_tools.redaction import Redactor


def current_redactor() -> Redactor:
    from agentcli.agent.outbound import current

    return current()
