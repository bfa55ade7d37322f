"""The tools' prechecks (tools/preconditions.py): a path leading out of the workspace, an
address or URL fetch_url would refuse, each said with its reason before anyone is asked; no
name is looked up."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest
from agentcli_tools.context import ToolContext
from agentcli_tools.preconditions import path_inside, precheck_of, url_reachable
from agentcli_tools.registry import BUILTIN_TOOLS

from tests.helpers.tooling import linked_workspace

SETTING = "[tools] allow_private_urls"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return linked_workspace(tmp_path)


@pytest.mark.parametrize(
    "path",
    ["../x", "/etc/passwd", "~/x", "away/new.txt", "sub/../../x", "a\x00b", "near/../../x"],
)
def test_a_path_leading_outside_is_refused_with_the_full_reason(workspace: Path, path: str) -> None:
    problem = path_inside({"path": path}, ToolContext(workspace=workspace))
    assert problem is not None
    if "\x00" not in path:
        assert "outside the workspace" in problem and "--workspace" in problem
    assert not (workspace.parent / "x").exists()


@pytest.mark.parametrize("path", ["sub/a.txt", "near/a.txt", "new/deeper/file.txt", ".", "sub"])
def test_a_path_inside_passes_and_nothing_is_made(workspace: Path, path: str) -> None:
    before = sorted(str(p) for p in workspace.rglob("*"))
    assert path_inside({"path": path}, ToolContext(workspace=workspace)) is None
    assert sorted(str(p) for p in workspace.rglob("*")) == before  # a pure read


def test_every_file_tool_and_fetch_url_carry_their_precheck() -> None:
    for name in ("read_file", "write_file", "edit_file", "list_dir", "search_files"):
        assert precheck_of(BUILTIN_TOOLS[name]) is path_inside, name
    assert precheck_of(BUILTIN_TOOLS["fetch_url"]) is url_reachable
    assert precheck_of(BUILTIN_TOOLS["shell"]) is None


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        ("http://127.0.0.1:8080/admin", "loopback"),
        ("http://[::1]/", "loopback"),
        ("http://10.1.2.3/", "private"),
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://0x7f.1/", "loopback"),  # another spelling of 127.0.0.1
        ("http://[::ffff:192.168.0.1]/", "private"),
        ("http://localhost:9/", "loopback"),
    ],
)
def test_a_private_address_is_refused_naming_the_setting(url: str, kind: str) -> None:
    problem = url_reachable({"url": url}, ToolContext(workspace=Path(".")))
    assert problem is not None and f"a {kind} address" in problem
    assert SETTING in problem and problem.startswith("refusing to fetch")
    allowed = ToolContext(workspace=Path("."), allow_private_urls=True)
    assert url_reachable({"url": url}, allowed) is None


@pytest.mark.parametrize(
    "url", ["ftp://example.com/", "http://user@example.com/", "http://exa mple.com/", "x"]
)
def test_a_url_fetch_url_would_not_read_is_refused(url: str) -> None:
    problem = url_reachable({"url": url}, ToolContext(workspace=Path(".")))
    assert problem is not None and problem.startswith(f"refusing to fetch {url!r}: ")


def test_a_name_is_never_looked_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """A lookup would tell the name's DNS server about the call before anyone approved it."""
    asked: list[Any] = []
    monkeypatch.setattr(socket, "getaddrinfo", lambda *a, **k: asked.append(a) or [])
    context = ToolContext(workspace=Path("."))
    assert url_reachable({"url": "https://secret.attacker.example/"}, context) is None
    assert url_reachable({"url": "http://93.184.216.34/"}, context) is None  # public
    assert asked == []
