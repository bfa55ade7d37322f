"""A tool that fails with an exception of its own (a bug, or the machine's): the model and
the person are told its kind and its message, the path an OSError names included."""

from __future__ import annotations

from pathlib import Path

from langchain_core.tools import tool

from agentcli.config import Settings
from agentcli.events import ToolResult
from agentcli.policy.approval_policy import Policy
from agentcli.session.local import Session
from agentcli.threads.backends import open_store
from tests.helpers.fakes import FakeChatModel, call, say


@tool
def vanishing(name: str) -> str:
    """Look at a file another process removes meanwhile.

    Args:
        name: the file
    """
    raise FileNotFoundError(2, "No such file or directory", f"/tmp/gone/{name}")


def test_an_unexpected_os_error_names_its_path(tmp_path: Path) -> None:
    config = Settings(db=str(tmp_path / "threads.db"))
    model = FakeChatModel(replies=[call(("vanishing", {"name": "x"})), say("ok")], calls=[])
    policy = Policy(auto_approve=True)
    s = Session(config, open_store(config), policy, workspace=tmp_path, model=model,
                tools=[vanishing])  # fmt: skip
    [result] = [e for e in s.send("look") if isinstance(e, ToolResult)]
    assert result.status == "error"
    assert result.content.startswith("Error: FileNotFoundError: [Errno 2] No such file")
    assert "/tmp/gone/x" in result.content
    sent = model.calls[-1][-1]  # what the model read back
    assert "/tmp/gone/x" in str(sent.content)
