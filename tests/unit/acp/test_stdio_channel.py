"""The protocol owns stdout: once `agentcli acp` has taken its channel, what else prints
(a library's print, a child process that inherits descriptor 1) goes to stderr, and a
child reading stdin reads nothing of the editor's messages."""

from __future__ import annotations

import json
import subprocess
import sys

SCRIPT = """
import asyncio, os, subprocess, sys
from agentcli.acp.stdio_channel import ProtocolChannel

channel = ProtocolChannel.take()
print("stray print")
os.system("echo stray child; cat")  # cat would read the editor's messages from stdin
subprocess.run(["sh", "-c", "echo stray subprocess >&1"])

async def main():
    reader, writer = await channel.streams()
    line = await reader.readline()
    writer.write(line.replace(b"ping", b"pong"))
    await writer.drain()

asyncio.run(main())
"""


def test_nothing_but_the_protocol_reaches_stdout() -> None:
    frame = json.dumps({"jsonrpc": "2.0", "method": "ping"}) + "\n"
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], input=frame, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == frame.replace("ping", "pong")  # the frame, read whole by the protocol
    for stray in ("stray print", "stray child", "stray subprocess"):
        assert stray in done.stderr
