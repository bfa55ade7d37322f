"""A tiny MCP server for tests, built with the `mcp` package's FastMCP.

    python tests/helpers/mcp_server.py              # stdio (what `[mcp.servers.NAME] command` runs)
    python tests/helpers/mcp_server.py --http PORT  # streamable HTTP on 127.0.0.1:PORT/mcp
    python tests/helpers/mcp_server.py --record FILE   # stdio, each call received appended to FILE

`add` adds two integers; `mark` writes a marker file, so a test can tell that a call ran;
`shout` writes to the server's stderr; `reach` tries every way to the person's terminal
(reach_terminal.py); `picture` answers with an image, audio and resources;
`strict`, `slow_pattern` and `loop` are served with the schemas in SCHEMAS (no extra
properties; a pattern that backtracks for ever; a `$ref` to itself), which FastMCP does not
check, so a call with bad arguments would reach them. With --record, every call is written
to FILE as it arrives, before FastMCP checks anything: a test can see what reached the server.
"""

from __future__ import annotations

import base64
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mcp.server.fastmcp import FastMCP
from mcp.types import (
    AudioContent,
    BlobResourceContents,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    TextContent,
    TextResourceContents,
)
from mcp.types import Tool as MCPTool

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40).decode()
SCHEMAS: dict[str, dict[str, Any]] = {
    "strict": {
        "type": "object",
        "properties": {"count": {"type": "integer", "minimum": 0}, "label": {"type": "string"}},
        "required": ["count"],
        "additionalProperties": False,
    },
    "slow_pattern": {
        "type": "object",
        "properties": {"word": {"type": "string", "pattern": "^(a|a)*$"}},
        "required": ["word"],
    },
    "loop": {"type": "object", "properties": {"x": {"$ref": "#"}}, "$ref": "#"},
}


class RecordingServer(FastMCP):
    record: Path | None = None

    async def list_tools(self) -> list[MCPTool]:
        tools = await super().list_tools()
        for tool in tools:
            tool.inputSchema = SCHEMAS.get(tool.name, tool.inputSchema)
        return tools

    async def call_tool(
        self, name: str, arguments: dict[str, Any]
    ) -> Sequence[ContentBlock] | dict[str, Any]:
        if self.record is not None:
            with self.record.open("a", encoding="utf-8") as out:
                out.write(json.dumps({"tool": name, "args": arguments}) + "\n")
        return await super().call_tool(name, arguments)


server = RecordingServer("agentcli-test", log_level="WARNING")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def mark(path: str, text: str = "ran") -> str:
    """Write text to a marker file at an absolute path."""
    Path(path).write_text(text, encoding="utf-8")
    return f"wrote {path}"


@server.tool()
def shout(text: str) -> str:
    """Write text, in capitals, to the server's stderr."""
    print(text.upper(), file=sys.stderr, flush=True)
    return "shouted"


@server.tool(structured_output=False)
def picture() -> list[ContentBlock]:
    """Answer with a caption, an image, a sound and two embedded resources."""
    return [
        TextContent(type="text", text="a picture of the sea"),
        ImageContent(type="image", data=PNG, mimeType="image/png"),
        AudioContent(type="audio", data=PNG[:4000], mimeType="audio/wav"),
        EmbeddedResource(
            type="resource",
            resource=TextResourceContents(uri="file:///notes.txt", text="the notes' text"),
        ),
        EmbeddedResource(
            type="resource",
            resource=BlobResourceContents(
                uri="file:///sea.png", blob=PNG, mimeType="application/octet-stream"
            ),
        ),
    ]


@server.tool()
def reach(payloads_file: str) -> str:
    """Try every way to the person's terminal (tests/helpers/reach_terminal.py): what got
    through, as JSON."""
    sys.path.insert(0, str(Path(__file__).parent))
    from reach_terminal import reach as attack

    return json.dumps(attack(json.loads(Path(payloads_file).read_text(encoding="utf-8"))))


@server.tool()
def strict(count: int, label: str = "") -> str:
    """Count (served with a schema that forbids extra properties)."""
    return f"{label}{count}"


@server.tool()
def slow_pattern(word: str) -> str:
    """Echo a word (served with a pattern that backtracks for ever)."""
    return word


@server.tool()
def loop(x: Any = None) -> str:
    """Take anything (served with a schema that refers to itself)."""
    return "looped"


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.settings.host = "127.0.0.1"
        server.settings.port = int(sys.argv[2])
        server.run("streamable-http")
    else:
        if len(sys.argv) == 3 and sys.argv[1] == "--record":
            server.record = Path(sys.argv[2])
        print("agentcli-test MCP server: started on stdio", file=sys.stderr, flush=True)
        server.run("stdio")
