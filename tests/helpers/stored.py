"""What agentcli keeps on disk, as a reader of its format sees it: the checkpointer's values
are compressed (agentcli/threads/compression.py), so a check for a secret in the data
folder, or for a call id in a write, reads them decompressed as well as raw."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from agentcli.threads.compression import ZLIB, Zlib

# the SQLite saver's tables and their stored values: (table, type column, value column)
VALUES = (("checkpoints", "type", "checkpoint"), ("writes", "type", "value"))


def plain(kind: str, value: bytes) -> bytes:
    """A stored value's serialized bytes (msgpack), whatever its encoding."""
    return Zlib().decrypt(ZLIB, value) if kind.endswith(f"+{ZLIB}") else value


def stored_values(db: Path | str) -> list[bytes]:
    """Every value the checkpointer saved in this SQLite database, decompressed."""
    found: list[bytes] = []
    with sqlite3.connect(db) as conn:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
        for table, kind, value in VALUES:
            if table not in tables:
                continue
            rows = conn.execute(f"SELECT {kind}, {value} FROM {table}").fetchall()
            found += [plain(k or "", v) for k, v in rows if v is not None]
    return found


def data_bytes(*folders: Path) -> bytes:
    """Every file under the folders as it is on disk and, for a SQLite database, its
    checkpointer's values decompressed."""
    blobs: list[bytes] = []
    for folder in folders:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            blobs.append(path.read_bytes())
            if blobs[-1].startswith(b"SQLite format 3"):
                blobs += stored_values(path)
    return b"".join(blobs)
