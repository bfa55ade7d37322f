"""Preconditions: why a call cannot succeed, known before anyone is asked to approve it.

A tool may carry a precheck in its metadata (``metadata={"precheck": check}``, see
``builtin_tool(precheck=...)``): ``check(args, context)`` returns why the call with these
arguments will be refused when it runs (the full reason, naming the setting that controls
it), or None. An application calls it (``precheck_of``) before it shows the call for
approval and sends such a call back to the model instead.

A precheck is a courtesy, never the guard: the tool checks again when it runs, as what it
read may have changed since (a link, a file). It must be a pure read, with no side effect
and nothing sent anywhere: an application may run it again and again (a LangGraph review
node re-runs on every resume), and before a person said yes. So fetch_url's precheck looks
no name up in DNS (a lookup of ``secret.attacker.example`` would tell that server the
secret): it refuses only what it can see in the URL itself.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from langchain_core.tools import BaseTool

from .addresses import non_public, private_refusal
from .context import ToolContext
from .errors import ToolError
from .paths import locate
from .urls import UnsafeURL, parse_url

PRECHECK = "precheck"  # the key of a tool's metadata that holds its precheck
Precheck = Callable[[Mapping[str, Any], ToolContext], "str | None"]
# names that resolve to a loopback address without any DNS server being asked (RFC 6761)
LOOPBACK_NAMES = ("localhost",)


def precheck_of(tool: BaseTool | None) -> Precheck | None:
    """The precheck a tool carries, or None."""
    found = (tool.metadata or {}).get(PRECHECK) if tool is not None else None
    return found if callable(found) else None


def path_inside(args: Mapping[str, Any], context: ToolContext) -> str | None:
    """File tools: the path must lead beneath the workspace (walked as the tool walks it,
    links included, creating nothing), and be a name a file can have."""
    path = args.get("path", ".")
    if not isinstance(path, str):
        return None  # the schema's business
    try:
        with locate(context.workspace, path):
            return None
    except ToolError as exc:
        return str(exc)


def url_reachable(args: Mapping[str, Any], context: ToolContext) -> str | None:
    """fetch_url: the URL must be one fetch_url reads, and its host, when it is an address
    or a loopback name, a public one (unless private addresses are allowed)."""
    url = args.get("url")
    if not isinstance(url, str):
        return None
    try:
        target = parse_url(url)
    except UnsafeURL as exc:
        return f"refusing to fetch {url!r}: {exc}"
    if context.allow_private_urls:
        return None
    address = target.address
    if address is not None:
        kind = non_public(address)
        return private_refusal(target, str(address), kind) if kind else None
    if target.host in LOOPBACK_NAMES:
        return private_refusal(target, "127.0.0.1", "loopback")
    return None
