"""The store's key: what seals the review's approvals (agent/review/approval_seals.py) and
chains the audit (audit/chain.py), an HMAC key that belongs to the store the threads live in.

The key is the store's (Store.secret: 32 random bytes in its `agentcli_secrets` table, made
once by whichever process asks first), so every process that can write the threads seals
and checks with it, on any machine. It never enters the state or the context a client can
read or write. An installation's former key file (`approval.key` in the data folder, from
before the key moved into the store) still verifies what it sealed, and never seals
anything new. A RunContext without a key (unit tests, reading a thread) uses a key made for
this process.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from agentcli.config.settings import data_dir
from agentcli.errors import ConfigError

KEY_FILE = "approval.key"  # the installation's key before it moved into the store
KEY_NAME = "approval key"  # the store's secret (Store.secret)
KEY_BYTES = 32


class KeyStore(Protocol):
    """Where the key lives: threads.store.Store."""

    def secret(self, name: str) -> bytes: ...


class ApprovalKey:
    """Seals with one secret key; checks with it, and with the keys it replaced (`older`)."""

    def __init__(self, secret: bytes, older: Sequence[bytes] = ()) -> None:
        if len(secret) < KEY_BYTES or any(len(key) < KEY_BYTES for key in older):
            raise ValueError("an approval key has at least 32 bytes")
        self._secret = secret
        self._older = tuple(older)

    def __repr__(self) -> str:  # never the secret, in a traceback or a log
        return "ApprovalKey(...)"

    @classmethod
    def of_store(cls, store: KeyStore, folder: Path | None = None) -> ApprovalKey:
        """The key of `store`; the installation's former key file in `folder` (default: the
        data folder), if there is one, still verifies what it sealed."""
        return cls(store.secret(KEY_NAME), [k for k in [_former(folder or data_dir())] if k])

    def seal(self, *parts: Any) -> str:
        return _hmac(self._secret, parts)

    def check(self, seal: Any, *parts: Any) -> bool:
        if not isinstance(seal, str):
            return False
        try:
            return any(
                hmac.compare_digest(seal, _hmac(key, parts)) for key in (self._secret, *self._older)
            )
        except (TypeError, ValueError):  # arguments that are not JSON: never sealed
            return False


def _hmac(secret: bytes, parts: tuple[Any, ...]) -> str:
    return hmac.new(secret, canonical(parts), hashlib.sha256).hexdigest()


def _former(folder: Path) -> bytes | None:
    """The installation's key file from before the key moved into the store, if any (never
    made now). One that others can read, or a damaged one, is refused as it was then."""
    path = folder / KEY_FILE
    try:
        if path.stat().st_mode & 0o077:
            raise ConfigError(f"{path} can be read by others: chmod 600 it, or delete it")
        secret = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"cannot read the former approval key {path}: {exc}") from exc
    if len(secret) < KEY_BYTES:
        raise ConfigError(f"the former approval key {path} is damaged: delete it")
    return secret


PROCESS_KEY = ApprovalKey(secrets.token_bytes(KEY_BYTES))


def canonical(value: Any) -> bytes:
    """One byte string per JSON value (keys sorted, no spaces); TypeError if not JSON."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode()


def key_of(context: Any) -> ApprovalKey:
    key = getattr(context, "approval_key", None)
    return key if isinstance(key, ApprovalKey) else PROCESS_KEY
