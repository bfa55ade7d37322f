"""An MCP tool result as the text of a tool message, which every provider accepts.

Providers refuse images (and audio, and files) in tool messages, and a base64 blob in the
conversation costs tokens and tells the model nothing. So text blocks and embedded text
resources are kept as text; every other block becomes one line that says what it was and
how big, and its data is dropped. The whole is capped like any tool's output.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agentcli_tools.output import cap_output
from agentcli_tools.plurals import counted

LABEL_CHARS = 200  # a server-given MIME type, URI or name shown in a placeholder


def result_text(blocks: Iterable[Any], max_chars: int) -> str:
    """The blocks of an MCP CallToolResult (mcp.types content) as one capped string."""
    return cap_output("\n".join(_block_text(block) for block in blocks), max_chars)


def _block_text(block: Any) -> str:
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(getattr(block, "text", ""))
    if kind in ("image", "audio"):
        size = _decoded_size(getattr(block, "data", ""))
        mime = _label(block, "mimeType")
        return f"[{kind}: {mime}, {counted(size, 'byte')}, not shown to the model]"
    if kind == "resource_link":
        uri, name = _label(block, "uri"), _label(block, "name")
        return f"[resource link: {name} {uri} ({_label(block, 'mimeType')})]"
    if kind == "resource":
        resource = getattr(block, "resource", None)
        text = getattr(resource, "text", None)
        if isinstance(text, str):
            return text
        size = _decoded_size(getattr(resource, "blob", ""))
        uri, mime = _label(resource, "uri"), _label(resource, "mimeType")
        return f"[resource: {uri}, {mime}, {counted(size, 'byte')}, not shown to the model]"
    return f"[{_clip(str(kind))} content, not shown to the model]"


def _label(item: Any, attribute: str) -> str:
    value = getattr(item, attribute, None)
    return "unknown type" if value is None and attribute == "mimeType" else _clip(str(value))


def _clip(text: str) -> str:
    """A server-given label on one line, at most LABEL_CHARS long."""
    text = " ".join(text.split())
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"


def _decoded_size(data: Any) -> int:
    """The size of base64 `data` once decoded, without decoding it."""
    if not isinstance(data, str):
        return 0
    length = len(data.rstrip("="))
    return length * 3 // 4
