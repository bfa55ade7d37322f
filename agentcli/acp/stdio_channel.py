"""The protocol's own copies of stdin and stdout, taken before anything else can use them.

ACP frames are JSON lines on stdout: one stray line there (a library's print, a warning, a
child process that inherits the descriptor) would be read by the editor as a message, or
break its reader. So the process's descriptors 0 and 1 are handed over here: the protocol
keeps private duplicates, descriptor 0 becomes /dev/null and descriptor 1 becomes stderr,
where anything else that prints, and every child process, writes instead.
"""

from __future__ import annotations

import asyncio
import os
import sys
from dataclasses import dataclass

# the biggest frame read: a prompt with files attached; the SDK's own default is 50 MB
FRAME_LIMIT = 16 * 1024 * 1024


@dataclass
class ProtocolChannel:
    """The duplicated descriptors the protocol reads and writes."""

    read_fd: int
    write_fd: int

    @classmethod
    def take(cls) -> ProtocolChannel:
        sys.stdout.flush()
        read_fd, write_fd = os.dup(0), os.dup(1)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        os.dup2(2, 1)
        sys.stdout = sys.stderr  # print() goes where descriptor 1 now goes
        return cls(read_fd, write_fd)

    async def streams(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """The reader of the editor's messages and the writer of agentcli's."""
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=FRAME_LIMIT)
        reading = asyncio.StreamReaderProtocol(reader)
        await loop.connect_read_pipe(lambda: reading, os.fdopen(self.read_fd, "rb", 0))
        transport, writing = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(self.write_fd, "wb", 0)
        )
        return reader, asyncio.StreamWriter(transport, writing, None, loop)
