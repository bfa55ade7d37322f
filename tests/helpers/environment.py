"""The environment agentcli runs in under test: a private home (its config and data inside),
plain output at a known width, and nothing of the developer's model, agentcli, LangSmith,
OpenTelemetry or editor settings."""

from __future__ import annotations

import os
from pathlib import Path

DROPPED = ("OPENAI_", "AGENTCLI_", "LANGSMITH_", "LANGCHAIN_", "LANGGRAPH_", "OTEL_")


def isolated_env(home: Path, **more: str) -> dict[str, str]:
    """This process's environment without those settings, with `home` as HOME and `more`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(DROPPED)}
    env.pop("VISUAL", None)
    env.pop("EDITOR", None)
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / "config"),
        XDG_DATA_HOME=str(home / "data"),
        NO_COLOR="1",
        PROMPT_TOOLKIT_NO_CPR="1",  # pexpect's terminal never answers a cursor query
        TERM="xterm",
        COLUMNS="120",
        **more,
    )
    return env
