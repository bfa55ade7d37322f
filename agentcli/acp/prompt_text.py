"""The text of an editor's prompt: its text blocks, the files it links or embeds named."""

from __future__ import annotations

from typing import Any


def prompt_text(blocks: list[Any]) -> str:
    """What the thread gets as the person's message. Text blocks as they are; a linked
    file as its URI (the model may read it with its tools, under review); an embedded
    text resource with its text, fenced and named; images and audio are not sent."""
    parts: list[str] = []
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind == "text":
            parts.append(block.text)
        elif kind == "resource_link":
            parts.append(f"[file: {block.uri}]")
        elif kind == "resource" and isinstance(getattr(block.resource, "text", None), str):
            resource = block.resource
            parts.append(f'<file uri="{resource.uri}">\n{resource.text}\n</file>')
    return "\n\n".join(parts)
