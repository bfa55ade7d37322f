"""What agentcli stores in the checkpointer's tables, compressed with zlib.

A thread's checkpoints and writes are mostly text (messages, tool results) and the same
msgpack framing again and again; a DeltaChannel's full copy holds every message so far.
Compressed, a 300-turn tool-calling thread takes about half the bytes (bench/README.md,
"Storage: issue 26").

`Zlib` is a cipher in LangGraph's sense (CipherProtocol: encrypt, decrypt): LangGraph's
EncryptedSerializer wraps the serializer with it (threads/langgraph_internals.py
`checkpoint_serializer`), so a value is stored with the type "msgpack+zlib", or
"msgpack+plain" when it is too small to gain; a value saved before (plain "msgpack") is
read as it was. What the type names never changes meaning: another encoding gets
another name.
"""

from __future__ import annotations

import zlib

ZLIB = "zlib"
PLAIN = "plain"
SMALLEST = 128  # bytes: below this, zlib's frame and tables cost about what they save
LEVEL = 6  # zlib's default: level 9 saves under 1% more here, for twice the time


class Zlib:
    """Compresses a serialized value when that makes it smaller."""

    def encrypt(self, plaintext: bytes) -> tuple[str, bytes]:
        if len(plaintext) >= SMALLEST:
            packed = zlib.compress(plaintext, LEVEL)
            if len(packed) < len(plaintext):
                return ZLIB, packed
        return PLAIN, plaintext

    def decrypt(self, ciphername: str, ciphertext: bytes) -> bytes:
        if ciphername == ZLIB:
            return zlib.decompress(ciphertext)
        if ciphername == PLAIN:
            return ciphertext
        raise ValueError(f"a stored value in an unknown encoding: {ciphername!r}")
